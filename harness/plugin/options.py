"""The kcts command-line options (`pytest --help`, group "kcts"); the environment gives their defaults."""

from __future__ import annotations

import os

import pytest

from harness.cluster.target import SECURITY_OPTIONS, backends, spellings
from harness.kafka.dist import DEFAULT_VERSION


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts", "Kafka conformance target")
    group.addoption("--kafka-version", default=os.environ.get("KCTS_KAFKA_VERSION"),
                    help=f"broker version of the local Apache Kafka cluster (default {DEFAULT_VERSION})")
    group.addoption("--java-clients", default=os.environ.get("KCTS_JAVA_CLIENTS"),
                    help="kafka-clients version of the Java drivers (default: the broker's on a local "
                    f"cluster, {DEFAULT_VERSION} on other targets)")
    group.addoption("--librdkafka", default=os.environ.get("KCTS_LIBRDKAFKA"),
                    help="the confluent-kafka release (librdkafka bundled) of the client-axis checks' librdkafka "
                    "driver, from PyPI into a cached virtualenv (default: the one kcts is installed with)")
    group.addoption("--go-client", action="store_true", default=bool(os.environ.get("KCTS_GO_CLIENT")),
                    help="judge franz-go too (its driver is built through the Go module proxy)")
    group.addoption("--client-stack", default=None, choices=("librdkafka", "java", "franz-go"),
                    help="a client-only run: judge only this stack's checks (a column of kcts matrix's client axis)")
    group.addoption("--target", default=None, help="the target in one word, as `kcts matrix --targets` "
                    "spells it:\n" + spellings())
    group.addoption("--target-profile", default=None,
                    help="a TOML file with a [target] table (see harness/cluster/target.py)")
    group.addoption("--brokers", type=int, default=3, help="broker processes in the local cluster (default 3)")
    group.addoption("--backend", choices=backends(), default="local",
                    help="local: start a Kafka cluster here; docker: start it in containers; external: use "
                    "--bootstrap-servers; any other: that kind of target, started or held here "
                    "(harness/cluster/kinds/)")
    group.addoption("--image", default=os.environ.get("KCTS_IMAGE"),
                    help="docker backend: the Apache Kafka image to run (default: one kcts builds offline)")
    group.addoption("--publish-from", type=int, default=None,
                    help="docker backend: publish the brokers' client ports on 127.0.0.1 from this port on "
                    "(default: free ports)")
    group.addoption("--bootstrap-servers", default=None, help="host:port[,...] of an external target")
    for flag, env, text in SECURITY_OPTIONS:
        group.addoption(flag, default=os.environ.get(env) if env else None, help=text)
    group.addoption("--spark-master", default=None,
                    help="Spark master of the integrity checker (default $KCTS_SPARK_MASTER or local[2])")
    group.addoption("--reports-dir", default=os.environ.get("KCTS_REPORTS", "reports"),
                    help="where reports/<run-id>/ is written (default ./reports)")
    group.addoption("--run-id", default=os.environ.get("KCTS_RUN_ID"), help="name of this run's report folder")
