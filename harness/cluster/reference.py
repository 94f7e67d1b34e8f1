"""Reference profiles: what a released Apache Kafka is known to support, as far as the checks ask.

On a target that is one of those releases (a local cluster, or the docker backend's image of it), a
capability the release has and the target lacks is a regression, so the check FAILs with the
profile's line as its premise, where any other target would end "not supported by this target".
A capability Apache Kafka never had (KIP-359's CurrentLeaderEpoch in Produce) stays "not supported".
A release before the one that brought a capability is "not supported", and says so (`predates`): on
the release line-up (`tox -e releases`, 3.3 to 4.4) every "not supported" of a release carries that line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.cluster.target import TargetSpec
from harness.errors import KctsError


@dataclass(frozen=True)
class Capability:
    what: str
    since: tuple[int, int] | None  # the first Apache Kafka release (major, minor) with it; None: none has it
    source: str  # where that is written


CAPABILITIES: dict[str, Capability] = {
    "txn-offset-commit-v6": Capability(
        "TxnOffsetCommit v6 (KIP-1319)", (4, 4),
        "KIP-1319 shipped in Apache Kafka 4.4: its ApiVersions lists TxnOffsetCommit 0-6; 4.0-4.3 list 0-5"),
    "transaction-version-2": Capability(
        "the transaction.version feature up to level 2 (KIP-890 Transaction V2)", (4, 0),
        "KIP-890 part 2 shipped in Apache Kafka 4.0: brokers support transaction.version 0-2"),
    "idempotence": Capability(
        "the idempotent producer (KIP-98 InitProducerId)", (0, 11), "KIP-98 shipped in Apache Kafka 0.11"),
    "transactions": Capability(
        "transactions (InitProducerId, AddPartitionsToTxn, EndTxn, TxnOffsetCommit)", (0, 11),
        "KIP-98 shipped in Apache Kafka 0.11"),
    "produce-current-leader-hint": Capability(
        "the KIP-951 CurrentLeader hint in Produce (v10 and later)", (3, 7),
        "KIP-951 shipped in Apache Kafka 3.7 (KAFKA-15661): Produce v10 and Fetch v16 carry CurrentLeader and "
        "NodeEndpoints; 3.6 speaks Produce up to v9"),
    "consumer-group-protocol": Capability(
        "the consumer group protocol (KIP-848 ConsumerGroupHeartbeat)", (4, 0),
        "KIP-848's consumer rebalance protocol is generally available from Apache Kafka 4.0 (early access, off by "
        "default, in 3.7-3.9)"),
    "consumer-next-offsets": Capability(
        "ConsumerRecords.nextOffsets() (KIP-1094)", (4, 0),
        "KIP-1094 shipped in Apache Kafka 4.0: kafka-clients 4.0.0 adds ConsumerRecords.nextOffsets(), 3.9 has none"),
    "produce-current-leader-epoch": Capability(
        "KIP-359 CurrentLeaderEpoch in Produce", None,
        "Apache Kafka has not implemented KIP-359: no Produce version through 4.4 carries CurrentLeaderEpoch"),
}


def release(target: TargetSpec) -> tuple[int, int] | None:
    """(major, minor) of the Apache Kafka release the target is, or None where it is none known."""
    if not target.apache_release or not target.version or target.image:
        return None
    parts = target.version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def expected(target: TargetSpec, capability: str) -> str | None:
    """The reference profile's line when `target` is a release known to have `capability`; else None."""
    try:
        cap = CAPABILITIES[capability]
    except KeyError:
        raise KctsError(f"no reference capability {capability!r}; known: {sorted(CAPABILITIES)}") from None
    found = release(target)
    if found is None or cap.since is None or found < cap.since:
        return None
    return (f"reference profile: Apache Kafka {target.version} has {cap.what} ({cap.source}); "
            f"a target that is that release and lacks it has regressed")


def predates(target: TargetSpec, capability: str) -> str | None:
    """The reference profile's line when `target` is a release older than the first with `capability`
    (its "not supported" is expected); else None."""
    cap = CAPABILITIES.get(capability)
    found = release(target)
    if cap is None or found is None:
        return None
    if cap.since is None:
        return f"reference profile: no Apache Kafka release has {cap.what} ({cap.source})"
    if found >= cap.since:
        return None
    return (f"reference profile: Apache Kafka {target.version} predates {cap.what}, "
            f"first in {cap.since[0]}.{cap.since[1]} ({cap.source})")


# The client APIs the Java drivers call that some kafka-clients releases lack (harness.clients.jvm names
# the missing one), and the capability each is.
CLIENT_APIS: dict[str, str] = {"ConsumerRecords.nextOffsets()": "consumer-next-offsets"}


def client_predates(client: str, what: str) -> str | None:
    """The reference profile's line when `client` is a kafka-clients release older than the first with the
    API `what` begins with (its "not supported by this client" is expected); else None."""
    found = re.fullmatch(r"kafka-clients (\d+)\.(\d+)\.\d+", client)
    api = next((a for a in CLIENT_APIS if what.startswith(a)), None)
    if found is None or api is None:
        return None
    cap = CAPABILITIES[CLIENT_APIS[api]]
    if cap.since is None or (int(found.group(1)), int(found.group(2))) >= cap.since:
        return None
    return f"reference profile: {client} predates {cap.what}, first in {cap.since[0]}.{cap.since[1]} ({cap.source})"
