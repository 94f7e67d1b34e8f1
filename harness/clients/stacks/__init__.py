"""The client stacks a run judges, and the driver process of each for a scene.

One module per stack (`librdkafka`, `java`, `franz_go`), each a small `ClientStack`
(harness/clients/stacks/base.py), found through `registry` only. Scenes ask for a driver by stack and
role (`driver`); which stacks a run judges is `current().judged()` (`choice`).
"""

from __future__ import annotations

from pathlib import Path

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.stacks.base import DriverRequest
from harness.clients.stacks.choice import GO, JAVA, LIBRDKAFKA, PINNED_CONFLUENT_KAFKA, ClientChoice, current
from harness.clients.stacks.registry import BY_NAME, NAMES, configure, get

STACKS = NAMES
NO_RESET = {name: stack.no_reset for name, stack in BY_NAME.items()}  # each stack's "no auto reset policy"
RESETS = {name: stack.resets for name, stack in BY_NAME.items()}

__all__ = ["GO", "JAVA", "LIBRDKAFKA", "NO_RESET", "PINNED_CONFLUENT_KAFKA", "RESETS", "STACKS", "ClientChoice",
           "client_version", "configure", "consumers_driver", "current", "driver", "gap_version", "get",
           "producer_driver"]


def driver(stack: str, role: str, args: list[str], config: dict[str, object], log: Path,
           java_clients: str = "") -> ClientDriver:
    """The `role` driver of `stack` (not started); `config` holds bootstrap.servers."""
    return get(stack).driver(DriverRequest(role, args, config, log, java_clients))


def consumers_driver(stack: str, java_clients: str, config: dict[str, object], topic: str,
                     partition: int = 0) -> ClientDriver:
    """The KIP-320 consumers driver of `stack` (not started): the same commands on every stack
    (harness/clients/java/Kip320Consumers.java names them)."""
    log = session.current().scratch("clients") / f"{stack}-consumers-{topic}.log"
    return driver(stack, "consumers", [str(config["bootstrap.servers"]), topic, str(partition)], config, log,
                  java_clients)


def producer_driver(stack: str, java_clients: str, config: dict[str, object], topic: str, log: Path) -> ClientDriver:
    """The idempotent producer driver of `stack` (not started), writing "PREFIX.N" with the stack's
    own prefix: the same commands and events on every stack (harness/clients/java/KctsProducer.java)."""
    args = [str(config["bootstrap.servers"]), topic, str(get(stack).producer_prefix)]
    return driver(stack, "producer", args, config, log, java_clients)


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
