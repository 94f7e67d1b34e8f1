"""The target's command-line options, declared once: `kcts run` (argparse) and the pytest plugin
(`pytest --help`, group "kcts") both add them with `declare`, so an option's flag, default,
environment variable and help are written here only. `harness.cluster.target.target_from` reads them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.cluster.registry import backends, default_kind, spellings
from harness.kafka.dist import DEFAULT_VERSION


@dataclass(frozen=True)
class TargetOption:
    """One option: its flag, help, and where its default comes from (`env` first, then `default`)."""

    flag: str
    help: str
    env: str | None = None
    default: Any = None
    type: Callable[[str], Any] | None = None
    choices: Callable[[], tuple[str, ...]] | None = None  # asked when declared (a test may add a kind)

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")

    def declare(self, add: Callable[..., object]) -> None:
        """Add it through argparse's `add_argument` or pytest's `addoption` (the same signature)."""
        extra: dict[str, Any] = {}
        if self.type is not None:
            extra["type"] = self.type
        if self.choices is not None:
            extra["choices"] = self.choices()
        default = os.environ.get(self.env, self.default) if self.env else self.default
        add(self.flag, default=default, help=self.help, **extra)


# The options of an external target's security, in `Security`'s field order.
SECURITY_OPTIONS: tuple[TargetOption, ...] = (
    TargetOption("--security-protocol", "external target: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
    TargetOption("--sasl-mechanism", "external target: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"),
    TargetOption("--sasl-username", "external target user", env="KCTS_SASL_USERNAME"),
    TargetOption("--sasl-password", "external target password (better: KCTS_SASL_PASSWORD)", env="KCTS_SASL_PASSWORD"),
    TargetOption("--ssl-ca-location", "external target: PEM file of the CA that signed the brokers' certificates"),
    TargetOption("--ssl-certificate-location", "external target: PEM client certificate (mTLS)"),
    TargetOption("--ssl-key-location", "external target: PEM client key (mTLS)"),
    TargetOption("--ssl-key-password", "the client key's password (better: KCTS_SSL_KEY_PASSWORD)",
                 env="KCTS_SSL_KEY_PASSWORD"),
    TargetOption("--ssl-endpoint-identification",
                 "https (default: the broker's certificate must name its host) or none"),
)

TARGET_OPTIONS: tuple[TargetOption, ...] = (
    TargetOption("--target", "the target in one word, as `kcts matrix --targets` spells it:\n" + spellings()),
    TargetOption("--target-profile", "a TOML file with a [target] table (see harness/cluster/target.py)"),
    TargetOption("--backend", "local (default): start an Apache Kafka cluster here; docker: start it in "
                 "containers; external: use --bootstrap-servers; any other: that kind of target, started or held "
                 "here (harness/cluster/kinds/)", default=default_kind().backend, choices=backends),
    TargetOption("--kafka-version", f"the broker version of a local Apache Kafka cluster (default {DEFAULT_VERSION})",
                 env="KCTS_KAFKA_VERSION"),
    TargetOption("--brokers", "brokers of a local cluster (default 3)", default=3, type=int),
    TargetOption("--bootstrap-servers", "host:port[,...] of an external target"),
    *SECURITY_OPTIONS,
    TargetOption("--java-clients", "kafka-clients version of the Java drivers (default: the broker's on a local "
                 f"cluster, {DEFAULT_VERSION} on other targets)", env="KCTS_JAVA_CLIENTS"),
    TargetOption("--image", "docker backend: the Apache Kafka image to run (default: one kcts builds offline)",
                 env="KCTS_IMAGE"),
    TargetOption("--publish-from", "docker backend: publish the brokers' client ports on 127.0.0.1 from this port "
                 "on (default: free ports)", type=int),
)


def declare(add: Callable[..., object]) -> None:
    """Every target option, through `add` (argparse's add_argument, pytest's addoption)."""
    for option in TARGET_OPTIONS:
        option.declare(add)
