"""The Java clients under test, run through the proxy: one transaction (Kip1319Txn) or a copier (Kip1319Copier).

Both are drivers in harness/clients/java/, compiled against the client's jars; each prints JSON
events that `JavaClient` keeps. These helpers run one to its end and fail with its history.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from harness.clients.jvm import JavaClient
from harness.kafka.dist import KafkaDistribution


@dataclass(frozen=True)
class Offset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int | None = None

    def arg(self) -> str:
        epoch = "" if self.leader_epoch is None else f":{self.leader_epoch}"
        return f"{self.topic}:{self.partition}:{self.offset}{epoch}"


def run_transaction(
    dist: KafkaDistribution,
    bootstrap: str,
    output_topic: str,
    group: str,
    offsets: list[Offset],
    records: int = 3,
    timeout: float = 120.0,
) -> JavaClient:
    """One transaction: produce `records` values to partition 0 of `output_topic`, then
    sendOffsetsToTransaction(offsets, group), then commit (or abort if that fails)."""
    args = [
        "--bootstrap-server", bootstrap, "--transactional-id", f"kcts-java-txn-{uuid.uuid4().hex[:10]}",
        "--group", group, "--output-topic", output_topic, "--records", str(records),
    ]
    for o in offsets:
        args += ["--offset", o.arg()]
    driver = JavaClient.driver(dist, "Kip1319Txn", args)
    with driver:
        code = driver.wait_exit(timeout)
    assert code == 0 and outcome(driver) is not None, f"Kip1319Txn did not finish: {driver.describe()}"
    return driver


def run_copier(
    dist: KafkaDistribution,
    bootstrap: str,
    input_topic: str,
    output_topic: str,
    group: str,
    messages: int,
    transaction_size: int = 5,
    group_protocol: str = "consumer",
    timeout: float = 120.0,
) -> JavaClient:
    """Copy `messages` records from input to output in transactions of `transaction_size`, as a group member."""
    args = [
        "--bootstrap-server", bootstrap, "--input-topic", input_topic, "--output-topic", output_topic,
        "--group", group, "--transactional-id", f"kcts-java-copier-{uuid.uuid4().hex[:10]}",
        "--messages", str(messages), "--transaction-size", str(transaction_size),
        "--group-protocol", group_protocol, "--timeout-ms", str(int(timeout * 1000) - 10_000),
    ]
    copier = JavaClient.driver(dist, "Kip1319Copier", args)
    with copier:
        code = copier.wait_exit(timeout)
    assert code == 0 and outcome(copier) == "copied", f"Kip1319Copier did not copy {messages}: {copier.describe()}"
    return copier


def outcome(client: JavaClient) -> str | None:
    done = [e for e in client.events if e.get("name") == "done"]
    return done[-1].get("outcome") if done else None


def events(client: JavaClient, name: str) -> list[dict[str, object]]:
    return [e for e in client.events if e.get("name") == name]
