"""The client stacks a run judges, and the driver process of each for a scenario.

Three stacks: librdkafka (a confluent-kafka release, `--librdkafka`), the Java clients (a
kafka-clients release, `--java-clients`) and franz-go (`--go-client`, the kgo this checkout's
harness/clients/go/go.mod pins). The harness itself always drives the cluster with the pinned
confluent-kafka; only the client under test is of the version asked for, in a process of its own.

A client-only run (`--client-stack S`, one column of `kcts matrix`'s client axis) judges only the
checks of stack S; the others are deselected.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import confluent_kafka

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.jvm import JavaClient
from harness.errors import DriverUnavailable, SetupError
from harness.kafka.dist import cache_root, resolve
from harness.process.gobuild import go_binary

LIBRDKAFKA, JAVA, GO = "librdkafka", "java", "franz-go"
STACKS = (LIBRDKAFKA, JAVA, GO)
PINNED_CONFLUENT_KAFKA: str = confluent_kafka.__version__
NO_RESET = {LIBRDKAFKA: "error", JAVA: "none", GO: "none"}  # each stack's "no auto reset policy"
RESETS = {stack: ("earliest", "latest", NO_RESET[stack]) for stack in STACKS}
GO_SOURCE = Path(__file__).resolve().parent / "go"


@dataclass(frozen=True)
class ClientChoice:
    """Which client versions a run uses, and which stacks it judges."""

    librdkafka: str = PINNED_CONFLUENT_KAFKA  # the confluent-kafka release of the librdkafka drivers
    go: bool = False  # judge franz-go too
    only: str | None = None  # a client-only run: the one stack judged

    def judged(self) -> tuple[str, ...]:
        stacks = (LIBRDKAFKA, JAVA, GO) if self.go or self.only == GO else (LIBRDKAFKA, JAVA)
        return (self.only,) if self.only else stacks

    def label(self) -> str:
        parts = [f"librdkafka via confluent-kafka {self.librdkafka}"] + (["franz-go"] if GO in self.judged() else [])
        return ", ".join(parts) + (f"; only {self.only}" if self.only else "")


_choice = ClientChoice()


def configure(choice: ClientChoice) -> None:
    if choice.only is not None and choice.only not in STACKS:
        raise SetupError(f"--client-stack {choice.only!r}: give one of {', '.join(STACKS)}")
    global _choice
    _choice = choice


def current() -> ClientChoice:
    return _choice


def go_module_version() -> str:
    """The franz-go version harness/clients/go/go.mod pins."""
    for line in (GO_SOURCE / "go.mod").read_text().splitlines():
        if "github.com/twmb/franz-go " in line:
            return line.split()[-1]
    return "unknown"


def go_driver_binary() -> Path:
    return go_binary(GO_SOURCE, "kcts-clients", "the franz-go client drivers", cache_root() / "go-clients")


def require_go(config: dict[str, object]) -> None:
    """Refuse, as a skip that says why, a listener kcts's franz-go drivers cannot speak."""
    protocol = str(config.get("security.protocol", "plaintext")).lower()
    if protocol != "plaintext":
        raise DriverUnavailable("kcts's franz-go driver speaks PLAINTEXT only; this target's listener is "
                                f"{protocol}: judge franz-go on a plaintext listener")


def librdkafka_driver(module: str, args: list[str], config: dict[str, object], log: Path) -> ClientDriver:
    """`python -m harness.clients.drivers.<module> MARKER ARGS` under the interpreter of the run's
    confluent-kafka release; `config` (librdkafka settings, bootstrap aside) in $KCTS_CLIENT_CONFIG."""
    version = _choice.librdkafka
    if version == PINNED_CONFLUENT_KAFKA:
        python = sys.executable
    else:
        from harness.clients.versions import interpreter

        python = str(interpreter(version))
    settings = {k: v for k, v in config.items() if k != "bootstrap.servers"}
    env = {**os.environ, "KCTS_CLIENT_CONFIG": json.dumps(settings), "PYTHONPATH": ""}
    return ClientDriver(f"librdkafka-{version} {module}", [python, "-X", "faulthandler", "-m",
                                                           f"harness.clients.drivers.{module}",
                                                           session.current().marker, *args], log, env=env)


def go_driver(subcommand: str, args: list[str], config: dict[str, object], log: Path) -> ClientDriver:
    """`kcts-clients SUBCOMMAND ARGS`, the franz-go drivers (harness/clients/go/), on a plaintext listener."""
    require_go(config)
    return ClientDriver(f"franz-go {subcommand}", [str(go_driver_binary()), f"-tag={session.current().marker}",
                                                   subcommand, *args], log)


def consumers_driver(stack: str, java_clients: str, config: dict[str, object], topic: str,
                     partition: int = 0) -> ClientDriver:
    """The KIP-320 consumers driver of `stack` (not started): the same commands on every stack
    (harness/clients/java/Kip320Consumers.java names them)."""
    bootstrap = str(config["bootstrap.servers"])
    args = [bootstrap, topic, str(partition)]
    log = session.current().scratch("clients") / f"{stack}-consumers-{topic}.log"
    if stack == JAVA:
        return JavaClient.driver(resolve(java_clients), "Kip320Consumers", args, config=config)  # type: ignore[arg-type]
    if stack == LIBRDKAFKA:
        return librdkafka_driver("kip320_consumers", args, config, log)
    if stack == GO:
        return go_driver("consumers", args, config, log)
    raise SetupError(f"no client stack {stack!r}: {', '.join(STACKS)}")


def client_version(driver: ClientDriver) -> str | None:
    """The client and version the driver's ready event named, e.g. "confluent-kafka 2.6.1 (librdkafka
    2.6.1)" (None before it, or for a driver that names none)."""
    ready = next((e for e in driver.events if e.get("event") == "ready"), None)
    if not ready or not ready.get("client"):
        return None
    return str(ready["client"]) + (f" (librdkafka {ready['librdkafka']})" if ready.get("librdkafka") else "")


def gap_version(stack: str, client: str | None) -> str | None:
    """The version the known-gap table ranges over, from `client_version`'s text: librdkafka's own
    version for librdkafka, the last word (without a leading v) for the others."""
    if not client:
        return None
    if stack == LIBRDKAFKA and "(librdkafka " in client:
        return client.rsplit("(librdkafka ", 1)[1].rstrip(")")
    return client.split()[-1].lstrip("v")
