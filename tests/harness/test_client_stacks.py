"""Which checks a run judges on the client axis (harness.pytest_plugin, harness.clients.stacks)."""

from __future__ import annotations

import json

import pytest

from harness.clients import stacks

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

    with pytest.raises(SetupError, match="--client-stack 'rust'"):
        stacks.configure(stacks.ClientChoice(only="rust"))


def test_the_gap_table_ranges_over_librdkafkas_own_version_and_franz_gos_without_its_v() -> None:
    assert stacks.gap_version("librdkafka", "confluent-kafka 2.16.1 (librdkafka 2.16.0)") == "2.16.0"
    assert stacks.gap_version("franz-go", "franz-go v1.22.2") == "1.22.2"
    assert stacks.gap_version("java", None) is None


@pytest.mark.live  # the Go module proxy, or its cache
def test_the_franz_go_drivers_build_with_the_pinned_kgo() -> None:
    import subprocess

    binary = stacks.go_driver_binary()
    out = subprocess.run([str(binary), "version"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == stacks.go_module_version() == "v1.22.2", out.stderr
    assert stacks.go_driver_binary() == binary  # cached by source
