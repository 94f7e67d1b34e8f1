"""`kcts` exits non-zero with one clear line on bad input, and never hangs."""

from __future__ import annotations

import subprocess
import sys


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
    proc = kcts("frobnicate")
    commands = "use run, matrix, bench, image, compare, diff, report, cluster, coverage or soak"
    assert proc.returncode == 2 and commands in proc.stderr


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
    from harness.cli import REPO, _selects_tests

    assert not _selects_tests(str(REPO / "reports"))
    assert _selects_tests(str(REPO / "suites" / "smoke"))
    assert _selects_tests("suites/smoke/test_smoke.py::test_every_acknowledged_record_is_read_back_in_order")
    assert not _selects_tests("smoke")



def test_java_client_versions_are_columns_of_their_own() -> None:
    from harness.reports.matrix_run import ClientAxis

    assert ClientAxis(["4.4.0", "3.9.2"]).columns("4.4.0") == [
        ("4.4.0 · java 4.4.0", ["--java-clients", "4.4.0", "--client-stack", "java"]),
        ("4.4.0 · java 3.9.2", ["--java-clients", "3.9.2", "--client-stack", "java"]),
    ]
    assert ClientAxis().columns("kfake") == [("kfake", [])]


def test_every_client_stack_is_a_client_only_column_in_stack_order() -> None:
    from harness.clients.stacks import go_module_version
    from harness.reports.matrix_run import ClientAxis

    axis = ClientAxis(java=["3.9.2"], librdkafka=["2.16.1", "2.0.2"], go=True)
    assert axis.columns("4.4.0") == [
        ("4.4.0 · librdkafka 2.16.1", ["--librdkafka", "2.16.1", "--client-stack", "librdkafka"]),
        ("4.4.0 · librdkafka 2.0.2", ["--librdkafka", "2.0.2", "--client-stack", "librdkafka"]),
        ("4.4.0 · java 3.9.2", ["--java-clients", "3.9.2", "--client-stack", "java"]),
        (f"4.4.0 · franz-go {go_module_version()}", ["--go-client", "--client-stack", "franz-go"]),
    ]
