"""The kcts command-line options (`pytest --help`, group "kcts"): the target's, declared once in
harness/cluster/target_options.py, and the run's own; the environment gives their defaults."""

from __future__ import annotations

import os

import pytest

from harness.cluster.target_options import declare


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts", "Kafka conformance target")
    declare(group.addoption)
    group.addoption("--librdkafka", default=os.environ.get("KCTS_LIBRDKAFKA"),
                    help="the confluent-kafka release (librdkafka bundled) of the client-axis checks' librdkafka "
                    "driver, from PyPI into a cached virtualenv (default: the one kcts is installed with)")
    group.addoption("--go-client", action="store_true", default=bool(os.environ.get("KCTS_GO_CLIENT")),
                    help="judge franz-go too (its driver is built through the Go module proxy)")
    group.addoption("--client-stack", default=os.environ.get("KCTS_CLIENT_STACK"), metavar="STACK[@VERSION]",
                    help="a client-only run: judge only this stack's checks (a column of kcts matrix's client axis); "
                    "STACK is one of harness.clients.stacks.registry's names, VERSION a release where it has "
                    "version choice")
    group.addoption("--spark-master", default=None,
                    help="Spark master of the integrity checker (default $KCTS_SPARK_MASTER or local[2])")
    group.addoption("--reports-dir", default=os.environ.get("KCTS_REPORTS", "reports"),
                    help="where reports/<run-id>/ is written (default ./reports)")
    group.addoption("--run-id", default=os.environ.get("KCTS_RUN_ID"), help="name of this run's report folder")
