"""Which checks a run judges on the client axis (harness.pytest_plugin, harness.clients.stacks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.clients import stacks
from harness.clients.driver import ClientDriver

pytest_plugins = ["pytester"]

CHECKS = '''
import pytest

@pytest.mark.parametrize("client", ["librdkafka", "java", "franz-go"])
@pytest.mark.client_axis
def test_on_the_axis(client):
    pass

@pytest.mark.parametrize("client", ["librdkafka", "java"])
def test_in_process(client):
    pass

@pytest.mark.client_stack("java")
def test_java_only():
    pass

def test_of_the_broker():
    pass
'''


def _run(pytester: pytest.Pytester, *args: str) -> dict[str, tuple[str, str]]:
    pytester.makepyfile(test_axis=CHECKS)
    reports = pytester.path / "reports"
    pytester.runpytest_subprocess("--reports-dir", str(reports), "--run-id", "r", "-p", "no:cacheprovider", *args)
    run = json.loads((reports / "r" / "results.json").read_text())
    return {c["nodeid"].rsplit("::", 1)[1]: (c["cell"], c["reason"]) for c in run["checks"]}


def test_a_whole_run_judges_librdkafka_and_java_and_franz_go_only_when_asked(pytester: pytest.Pytester) -> None:
    assert sorted(_run(pytester)) == [
        "test_in_process[java]", "test_in_process[librdkafka]", "test_java_only",
        "test_of_the_broker", "test_on_the_axis[java]", "test_on_the_axis[librdkafka]"]


def test_a_client_only_run_judges_that_stack_alone(pytester: pytest.Pytester) -> None:
    assert sorted(_run(pytester, "--client-stack", "java")) == [
        "test_in_process[java]", "test_java_only", "test_on_the_axis[java]"]
    assert sorted(_run(pytester, "--client-stack", "franz-go")) == ["test_on_the_axis[franz-go]"]


def test_another_librdkafka_release_skips_the_checks_that_would_run_the_pinned_one(pytester: pytest.Pytester) -> None:
    got = _run(pytester, "--client-stack", "librdkafka", "--librdkafka", "2.6.1")
    assert got["test_on_the_axis[librdkafka]"][0] == "pass"
    cell, reason = got["test_in_process[librdkafka]"]
    assert cell == "skipped" and f"pinned confluent-kafka {stacks.PINNED_CONFLUENT_KAFKA}, not the 2.6.1" in reason


def test_a_client_stack_kcts_has_no_driver_for_is_refused() -> None:
    from harness.errors import SetupError

    with pytest.raises(SetupError, match="no client stack 'rust'"):
        stacks.configure(stacks.ClientChoice(only="rust"))


def test_a_stack_without_version_choice_refuses_a_version() -> None:
    from harness.errors import SetupError

    with pytest.raises(SetupError, match="kcts runs one release of java"):
        stacks.configure(stacks.ClientChoice.parse(None, False, "java@3.9.0"))


def test_a_role_a_client_lacks_is_not_supported_by_that_client(tmp_path: Path) -> None:
    """A stack that says it has no driver of a role (the client has no API for it) ends the check as
    "not supported by this client", its evidence given; a role kcts just has no driver of is a skip."""
    from harness.clients.stacks.base import ClientStack, DriverRequest
    from harness.errors import ClientLacks, DriverUnavailable

    class Lacking(ClientStack):
        name, no_reset, producer_prefix = "lacking", "none", 1
        lacks = {"copier": "its README: no transactions"}

        def roles(self) -> tuple[str, ...]:
            return ("consumers",)

        def start(self, request: DriverRequest) -> ClientDriver:
            raise AssertionError("not started")

        def version(self) -> str:
            return "lacking 1.0"

    with pytest.raises(ClientLacks, match="its README: no transactions"):
        Lacking().driver(DriverRequest("copier", [], {}, tmp_path / "log", ""))
    with pytest.raises(DriverUnavailable, match="no producer driver for lacking"):
        Lacking().driver(DriverRequest("producer", [], {}, tmp_path / "log", ""))


def test_the_gap_table_ranges_over_librdkafkas_own_version_and_franz_gos_without_its_v() -> None:
    assert stacks.gap_version("librdkafka", "confluent-kafka 2.16.1 (librdkafka 2.16.0)") == "2.16.0"
    assert stacks.gap_version("franz-go", "franz-go v1.22.2") == "1.22.2"
    assert stacks.gap_version("java", None) is None


@pytest.mark.live  # the Go module proxy, or its cache
def test_the_franz_go_drivers_build_with_the_pinned_kgo() -> None:
    import subprocess

    from harness.clients.stacks import franz_go

    binary = franz_go.binary()
    out = subprocess.run([str(binary), "version"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == franz_go.module_version() == "v1.22.2", out.stderr
    assert franz_go.binary() == binary  # cached by source
