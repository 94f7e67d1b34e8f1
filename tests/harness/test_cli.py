"""`kcts` exits non-zero with one clear line on bad input, and never hangs."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from harness import layout


def kcts(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_unknown_kafka_version_fails_before_any_test() -> None:
    proc = kcts("run", "--kafka-version", "4.4")
    assert proc.returncode == 2, proc
    assert "kcts: error: '4.4' is not a Kafka version; pass --kafka-version like 4.4.0" in proc.stderr


def test_unknown_bench_is_a_usage_error() -> None:
    proc = kcts("bench", "nosuch")
    assert proc.returncode == 2 and "invalid choice: 'nosuch'" in proc.stderr


def test_unknown_command_names_the_commands() -> None:
    from harness.cli import COMMANDS

    proc = kcts("frobnicate")
    assert proc.returncode == 2 and "invalid choice: 'frobnicate'" in proc.stderr
    assert all(f"'{name}'" in proc.stderr for name in COMMANDS), proc.stderr


def test_version_is_the_projects() -> None:
    project = tomllib.loads((layout.ROOT / "pyproject.toml").read_text())["project"]
    proc = kcts("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"kcts {project['version']}", proc


def test_help_lists_every_command_with_its_line() -> None:
    from harness.cli import COMMANDS

    proc = kcts("--help")
    assert proc.returncode == 0, proc
    for name, (summary, _) in COMMANDS.items():
        assert re.search(rf"^    {name} +{re.escape(summary.split()[0])}", proc.stdout, re.M), (name, proc.stdout)


def test_every_command_has_its_help() -> None:
    """In one process (a child per command would cost the gate seconds): each help exits 0 naming its command."""
    from harness.cli import COMMANDS, main

    for name in COMMANDS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as ended:
            code = main([name, "--help"])
            raise SystemExit(code)
        assert ended.value.code in (0, None), (name, out.getvalue())
        assert out.getvalue().startswith(f"usage: kcts {name} "), (name, out.getvalue()[:300])


def test_run_help_needs_no_target() -> None:
    """`kcts run --help` answers at once: no broker is resolved, no Maven Central asked."""
    proc = kcts("run", "--kafka-version", "4.4", "--help", timeout=30)
    assert proc.returncode == 0 and "[pytest arguments ...]" in proc.stdout, proc


def test_suite_paths_are_found_in_the_suite_root_from_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed kcts, run from an empty folder, still takes the README's `kcts run suites/smoke`."""
    from harness.cli import _suite_paths

    monkeypatch.chdir(tmp_path)
    smoke = str(layout.ROOT / "suites" / "smoke")
    assert _suite_paths(["suites/smoke", "-m", "smoke", "--ignore=suites/smoke", "--run-id", "x"]) == [
        smoke, "-m", "smoke", f"--ignore={smoke}", "--run-id", "x"]
    assert _suite_paths(["suites/nosuch", "smoke"]) == ["suites/nosuch", "smoke"]
    (tmp_path / "suites" / "smoke").mkdir(parents=True)
    assert _suite_paths(["suites/smoke"]) == ["suites/smoke"]  # the caller's own folder wins


def test_external_backend_without_bootstrap_is_a_usage_error() -> None:
    proc = kcts("run", "--backend", "external", "-m", "smoke")
    assert proc.returncode == 2, proc.stdout[-500:] + proc.stderr[-500:]
    assert "an external target needs a bootstrap address: --bootstrap-servers host:port" in proc.stderr


def test_kafka_version_is_the_broker_version_only() -> None:
    """--kafka-version names a local Apache Kafka cluster's broker; on kfake it is an error, not the Java clients."""
    proc = kcts("run", "--backend", "kfake", "--kafka-version", "4.3.1", "-m", "smoke")
    assert proc.returncode == 2, proc.stdout[-500:] + proc.stderr[-500:]
    assert "--kafka-version names the broker version of a local Apache Kafka cluster" in proc.stderr
    assert "--java-clients" in proc.stderr


def test_option_values_that_are_folders_do_not_replace_the_suites(tmp_path: object) -> None:
    from harness.cli import _selects_tests

    assert not _selects_tests(str(layout.ROOT / "reports"))
    assert _selects_tests(str(layout.ROOT / "suites" / "smoke"))
    assert _selects_tests("suites/smoke/test_smoke.py::test_every_acknowledged_record_is_read_back_in_order")
    assert not _selects_tests("smoke")



def test_java_client_versions_are_columns_of_their_own() -> None:
    from harness.reporting.matrix_run import ClientAxis

    assert ClientAxis(["4.4.0", "3.9.2"]).columns("4.4.0") == [
        ("4.4.0 · java 4.4.0", ["--java-clients", "4.4.0", "--client-stack", "java"]),
        ("4.4.0 · java 3.9.2", ["--java-clients", "3.9.2", "--client-stack", "java"]),
    ]
    assert ClientAxis().columns("kfake") == [("kfake", [])]


def test_every_client_stack_is_a_client_only_column_in_stack_order() -> None:
    from harness.clients.stacks.franz_go import module_version as go_module_version
    from harness.reporting.matrix_run import ClientAxis

    axis = ClientAxis(java=["3.9.2"], librdkafka=["2.16.1", "2.0.2"], go=True)
    assert axis.columns("4.4.0") == [
        ("4.4.0 · librdkafka 2.16.1", ["--librdkafka", "2.16.1", "--client-stack", "librdkafka"]),
        ("4.4.0 · librdkafka 2.0.2", ["--librdkafka", "2.0.2", "--client-stack", "librdkafka"]),
        ("4.4.0 · java 3.9.2", ["--java-clients", "3.9.2", "--client-stack", "java"]),
        (f"4.4.0 · franz-go {go_module_version()}", ["--go-client", "--client-stack", "franz-go"]),
    ]
