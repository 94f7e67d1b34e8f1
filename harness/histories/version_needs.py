"""Which broker API versions each KIP-320 promise needs, in one place, and what a broker advertised.

A broker may advertise any version range: the protocol guide, "Versioning and Compatibility": "When
communicating with a particular broker, a given client should use the highest API version supported
by both". A promise that rides on a field only later versions carry (CurrentLeaderEpoch in Fetch from
v9) cannot be asked of a broker that advertises none of them: the check ends "not supported by this
target", what the broker advertised its evidence (`require_offered`), never FAIL or ERROR.

- `VersionNeed`: one API from one version on (and, for a client that sends only some versions, up to
  one); `met_by` reads one broker's `Offered` range against it.
- `Offered`: the range one broker advertised for one API in its ApiVersions answer, as a scene
  recorded it (a history field: the evidence is kept with what it explains).
- the needs of the broker checks (the first version of each field, from the message schemas), and
  `TRUNCATION_DETECTION`: the OffsetForLeaderEpoch versions each client stack validates a position
  with, read in its source. A client that skips validation against an older broker is allowed to by
  KIP-320 (the check is the consumer's); its truncation checks then have nothing to judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import NotSupported, SceneUnmet


@dataclass(frozen=True)
class Offered:
    """The versions broker `broker` advertised for `api` in its ApiVersions answer (None: not the API)."""

    broker: int
    api: str
    versions: tuple[int, int] | None

    def describe(self) -> str:
        if self.versions is None:
            return f"broker {self.broker} advertises no {self.api}"
        return f"broker {self.broker} advertises {self.api} v{self.versions[0]}-v{self.versions[1]}"


@dataclass(frozen=True)
class VersionNeed:
    """What a promise needs of one API: a version from `first` on (up to `last` where the asker sends
    no other) that the broker advertises. `what` names it as a verdict does; `source` says where the
    version is written."""

    api: str
    first: int
    what: str
    source: str
    last: int | None = None

    def met_by(self, offered: Offered) -> bool:
        if offered.api != self.api:
            raise ValueError(f"{self.label()} is read against {self.api}'s range, not {offered.api}'s")
        if offered.versions is None:
            return False
        low, high = offered.versions
        top = high if self.last is None else min(high, self.last)
        return max(low, self.first) <= top

    def label(self) -> str:
        versions = f"v{self.first}+" if self.last is None else (
            f"v{self.first}" if self.last == self.first else f"v{self.first}-v{self.last}")
        return f"{self.what} ({self.api} {versions}; {self.source})"


def require_offered(need: VersionNeed, offered: Sequence[Offered]) -> None:
    """`NotSupported` unless every broker in `offered` that advertised `need.api` meets `need`; the
    evidence is every range in `offered` (the need's API and those beside it the scene kept). A scene
    that recorded no range of `need.api` is the harness's (`SceneUnmet`): nothing to read it against."""
    ranges = [o for o in offered if o.api == need.api]
    if not ranges:
        raise SceneUnmet(f"the scene recorded no ApiVersions range of {need.api} to read {need.label()} against: "
                         f"{[o.describe() for o in offered]}")
    if all(need.met_by(o) for o in ranges):
        return
    raise NotSupported(need.label(), "; ".join(o.describe() for o in offered))


# -- the broker checks: the first version of each field (the message schemas' "versions") ----------

FETCH_CURRENT_LEADER_EPOCH = VersionNeed(
    "Fetch", 9, "CurrentLeaderEpoch in Fetch",
    "KIP-320 \"Protocol Changes / Fetch\"; FetchRequest.json: CurrentLeaderEpoch versions 9+")
FETCH_FROM_FOLLOWER = VersionNeed(
    "Fetch", 11, "a consumer's Fetch served by a follower",
    "KIP-392; FetchRequest.json: version 11 adds RackId, and a follower serves consumers from it on")
LIST_OFFSETS_CURRENT_LEADER_EPOCH = VersionNeed(
    "ListOffsets", 4, "CurrentLeaderEpoch in ListOffsets",
    "KIP-320 \"Protocol Changes / ListOffsets\"; ListOffsetsRequest.json: CurrentLeaderEpoch versions 4+")
LIST_OFFSETS_LEADER_EPOCH = VersionNeed(
    "ListOffsets", 4, "the leader epoch of the offset ListOffsets returns",
    "KIP-320 \"Protocol Changes / ListOffsets\"; ListOffsetsResponse.json: LeaderEpoch versions 4+")
OFFSET_FOR_LEADER_EPOCH_CURRENT_LEADER_EPOCH = VersionNeed(
    "OffsetForLeaderEpoch", 2, "CurrentLeaderEpoch in OffsetForLeaderEpoch",
    "KIP-320 \"Protocol Changes / OffsetsForLeaderEpoch\"; OffsetForLeaderEpochRequest.json: \"Version 2 adds "
    "the current leader epoch to support fencing\"")
OFFSET_COMMIT_LEADER_EPOCH = VersionNeed(
    "OffsetCommit", 6, "CommittedLeaderEpoch in OffsetCommit",
    "KIP-320 \"Protocol Changes / OffsetCommit\"; OffsetCommitRequest.json: CommittedLeaderEpoch versions 6+")

# The field each epoch-validation probe sets, by API (KIP-320: "validate it similarly" for all three).
CURRENT_LEADER_EPOCH: dict[str, VersionNeed] = {
    "Fetch": FETCH_CURRENT_LEADER_EPOCH,
    "ListOffsets": LIST_OFFSETS_CURRENT_LEADER_EPOCH,
    "OffsetForLeaderEpoch": OFFSET_FOR_LEADER_EPOCH_CURRENT_LEADER_EPOCH,
}

# -- the consumers: the OffsetForLeaderEpoch versions each stack validates a position with ------------

TRUNCATION_DETECTION: dict[str, VersionNeed] = {
    # OffsetFetcherUtils.hasUsableOffsetForLeaderEpochVersion: OffsetsForLeaderEpochRequest.
    # supportsTopicPermission(the leader's max version), true from v3; below it SubscriptionState.
    # maybeValidatePositionForCurrentLeader takes the new leader "without validation" (kafka-clients 4.4.0's
    # jar, javap; the same in Apache Kafka's trunk).
    "java": VersionNeed(
        "OffsetForLeaderEpoch", 3, "kafka-clients' validation of a consumer's position (truncation detection)",
        "kafka-clients validates only where the leader's OffsetForLeaderEpoch reaches v3: "
        "OffsetFetcherUtils.hasUsableOffsetForLeaderEpochVersion"),
    # rd_kafka_OffsetForLeaderEpochRequest: rd_kafka_broker_ApiVersion_supported(rkb,
    # RD_KAFKAP_OffsetForLeaderEpoch, 2, 2, NULL), v2 only (src/rdkafka_request.c).
    "librdkafka": VersionNeed(
        "OffsetForLeaderEpoch", 2, "librdkafka's validation of a consumer's position (truncation detection)",
        "rd_kafka_OffsetForLeaderEpochRequest sends v2 only", last=2),
    # kgo Client.supportsOffsetForLeaderEpoch: supportsKeyVersion(OffsetForLeaderEpoch, 2) (pkg/kgo/client.go).
    "franz-go": VersionNeed(
        "OffsetForLeaderEpoch", 2, "franz-go's validation of a consumer's position (truncation detection)",
        "kgo validates only where OffsetForLeaderEpoch reaches v2: Client.supportsOffsetForLeaderEpoch"),
    # sarama sends OffsetForLeaderEpoch nowhere in its consumer (v1.61.1: no OffsetForLeaderEpochRequest
    # type, consumer.go validates no position): it is judged wherever the leader advertises KIP-320's
    # consumer version (v2, CurrentLeaderEpoch), as a client that could validate and does not.
    "sarama": VersionNeed(
        "OffsetForLeaderEpoch", 2, "a consumer's validation of its position (truncation detection)",
        "KIP-320 \"Consumer Handling\"; sarama never sends OffsetForLeaderEpoch (no request type in v1.61.1)"),
    # kafka-go's Reader never validates a position (v0.4.51: protocol.go names OffsetForLeaderEpoch, no
    # request of it exists): judged as sarama is.
    "kafka-go": VersionNeed(
        "OffsetForLeaderEpoch", 2, "a consumer's validation of its position (truncation detection)",
        "KIP-320 \"Consumer Handling\"; kafka-go never sends OffsetForLeaderEpoch (no request type in v0.4.51)"),
    # kafka-python 3.x builds OffsetForLeaderEpochRequest from its schema (kafka/protocol/schemas/resources/
    # OffsetForLeaderEpochRequest.json, "validVersions": "2-4") at the highest version both sides speak.
    "kafka-python": VersionNeed(
        "OffsetForLeaderEpoch", 2, "kafka-python's validation of a consumer's position (truncation detection)",
        "kafka-python sends OffsetForLeaderEpoch v2-v4 only: OffsetForLeaderEpochRequest.json validVersions",
        last=4),
    # aiokafka has no OffsetForLeaderEpoch request (aiokafka/protocol/ has none): judged wherever the leader
    # offers the version KIP-320's consumer validates with.
    "aiokafka": VersionNeed(
        "OffsetForLeaderEpoch", 2, "a consumer's validation of its position (truncation detection)",
        "KIP-320 \"Consumer Handling\"; aiokafka never sends OffsetForLeaderEpoch (no request type in 0.14.0)"),
    # KafkaJS 2.x has no OffsetForLeaderEpoch request at all (src/protocol/requests/ has none, and
    # its Fetch sends CurrentLeaderEpoch -1): no version of the leader's stops it validating, so it is
    # judged wherever the leader offers the API, and its missing validation is the verdict.
    "kafkajs": VersionNeed(
        "OffsetForLeaderEpoch", 0, "KafkaJS's validation of a consumer's position (truncation detection)",
        "KafkaJS sends no OffsetForLeaderEpoch at any version: src/protocol/requests/ has no such request"),
    # @platformatic/kafka 2.12.1 has the request (dist/apis/consumer/offset-for-leader-epoch-v*.js) but no
    # client calls it: dist/clients/ never sends it. Judged wherever the leader offers the API.
    "platformatic-kafka": VersionNeed(
        "OffsetForLeaderEpoch", 0, "@platformatic/kafka's validation of a consumer's position (truncation detection)",
        "@platformatic/kafka's consumer sends no OffsetForLeaderEpoch: dist/clients/ never calls the API"),
}

# What a scene that watches consumers validate records of the leader's ApiVersions: the API they
# validate with, and Fetch beside it (the versions their reads went out at), as the evidence.
VALIDATION_APIS = ("OffsetForLeaderEpoch", "Fetch")


def truncation_detection(client: str) -> VersionNeed:
    """The OffsetForLeaderEpoch versions `client` (a stack: java, librdkafka, franz-go) validates with."""
    try:
        return TRUNCATION_DETECTION[client]
    except KeyError:
        known = sorted(TRUNCATION_DETECTION)
        raise KeyError(f"no truncation-detection need for client {client!r}; known: {known}") from None
