"""KIP-320 "Consumer Handling": what a consumer does when its position was truncated away.

After an unclean election the new leader's log diverges from what a consumer already read. A
consumer positioned beyond the divergence point must find it (OffsetsForLeaderEpoch with the epoch
of its last record) and then either, with an auto reset policy, resume exactly at the divergence
offset, reading everything the new leader wrote from there; or, without one, surface the
truncation to the application: LogTruncationException in Java, an _AUTO_OFFSET_RESET error saying
"truncation" in librdkafka, an ErrDataLoss in franz-go (kgo). What a client did is its recorded
reads and errors after the election (harness.histories.truncation).

franz-go reports every truncation it locates as an ErrDataLoss, reset policy or not: with one, that
is its "log a message to indicate that the truncation was detected" (KIP-320) and not a failure;
kgo documents it as informational (pkg/kgo/record_and_fetch.go, "an injected *ErrDataLoss").

Finding the divergence takes an OffsetsForLeaderEpoch the client speaks: kafka-clients validates a
position only where the leader advertises v3+, librdkafka sends v2 only, kgo needs v2+
(harness.histories.version_needs.TRUNCATION_DETECTION). Against a leader that advertises none of
them the client skips validation, as KIP-320 lets it ("Consumer Handling" is the consumer's), so
there is no detection to judge: `require_truncation_detectable` ends those checks "not supported by
this target", the leader's ranges the evidence; with a version the client speaks, a miss FAILs.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import require_scene
from harness.histories import json_codec
from harness.histories.client_reactions import ClientRecord
from harness.histories.text_records import LogRecord
from harness.histories.truncation import ConsumerError, RepeatedUncleanConsumer
from harness.histories.version_needs import Offered, require_offered, truncation_detection

JAVA_TRUNCATION = "org.apache.kafka.clients.consumer.LogTruncationException"
# The clients whose poll raises the truncation as an exception naming the divergent offsets, by stack:
# Java's LogTruncationException, kafka-python's LogTruncationError (kafka/errors.py, divergent_offsets).
RAISED_TRUNCATION = {"java": JAVA_TRUNCATION, "kafka-python": "kafka.errors.LogTruncationError"}
LIBRDKAFKA_RESET = "_AUTO_OFFSET_RESET"
GO_DATA_LOSS = "ErrDataLoss"


def require_truncation_detectable(client: str, leader_offers: Sequence[Offered]) -> None:
    """KIP-320 "Consumer Handling": the consumer finds a truncation with OffsetsForLeaderEpoch. `NotSupported`
    where the leader the consumer validates against (`leader_offers`, its ApiVersions ranges as the scene
    recorded them) advertises no OffsetForLeaderEpoch version `client` validates with; nothing otherwise,
    so a client that could validate and missed the truncation is judged (and FAILs)."""
    require_offered(truncation_detection(client), leader_offers)


def _reported_at(errors: Sequence[ConsumerError], offset: int) -> list[ConsumerError]:
    """The errors whose divergent offsets (Java's LogTruncationException, kgo's ErrDataLoss) name `offset`."""
    return [e for e in errors if any(d.offset == offset for d in e.divergent)]


def informational(client: str, errors: Sequence[ConsumerError], reset_to: int) -> list[ConsumerError]:
    """The errors that are failures: all of them, but for franz-go's ErrDataLoss that names the
    offset it reset to (`reset_to`), its notice of a truncation it handled."""
    if client != "franz-go":
        return list(errors)
    notices = _reported_at([e for e in errors if e.code == GO_DATA_LOSS], reset_to)
    return [e for e in errors if e not in notices]


def _reads(reads: Sequence[ClientRecord], n: int = 4) -> str:
    if not reads:
        return "nothing"
    head = ", ".join(f"{r.offset}@{r.epoch}={r.value}" for r in reads[:n])
    return f"{len(reads)} records, first {head}, last {reads[-1].offset}"


def _errors(errors: Sequence[ConsumerError]) -> str:
    # As the driver printed them (the fields each client reports), not as dataclass reprs.
    return str(json_codec.encode(list(errors)[:3]))


def assert_resumed_at_divergence(
    client: str,
    reads: Sequence[ClientRecord],
    errors: Sequence[ConsumerError],
    divergence: int,
    position_before: int,
    new_leader_writes: Sequence[LogRecord],
) -> None:
    """The first record read after the election is at the divergence offset, and the reads are
    exactly the new leader's writes (offset, value) in order: neither the log start, nor the
    position it had (`position_before`), nor the log end."""
    expected = [(w.offset, w.value) for w in new_leader_writes]
    require_scene(expected and expected[0][0] == divergence < position_before,
                  f"the harness's scene needs the new leader's first write at the divergence offset {divergence} and "
                  f"the consumer beyond it: the first write is at {expected[0][0] if expected else None}, the "
                  f"consumer was at {position_before}")
    got = [(r.offset, r.value) for r in reads]
    where = "nothing" if not reads else f"offset {reads[0].offset}"
    assert got == expected, (
        f"{client} positioned at {position_before}, beyond the divergence offset {divergence}, resumed at {where}; "
        f"read {_reads(reads)}; expected the {len(expected)} records the new leader wrote from offset "
        f"{expected[0][0]}; errors {_errors(errors)}"
    )


def assert_resumed_at_next_epoch_start(client: str, consumer: RepeatedUncleanConsumer) -> None:
    """After two unclean elections in a row, the leader does not know the epoch the consumer last read:
    the consumer resumes at the start offset of the next larger epoch the leader knows (`e2_start`),
    and reads the leader's records from there in order: not the log start, not its old position, not
    the log end, and with no error."""
    reads, errors = consumer.reads, consumer.errors
    e1_start, e2_start, position = consumer.e1_start, consumer.e2_start, consumer.position_before
    expected = [(w.offset, w.value) for w in consumer.leader_writes]
    require_scene(expected and e1_start < e2_start == expected[0][0] < position,
                  f"the second leader's epoch starts at {e2_start} (its first write at "
                  f"{expected[0][0] if expected else None}), the first unclean leader's at {e1_start}, and the "
                  f"consumer was at {position}: the harness's scene needs {e1_start} < {e2_start} < {position}")
    got = [(r.offset, r.value) for r in reads]
    where = "nothing" if not reads else f"offset {reads[0].offset}"
    failures = informational(client, errors, e2_start)
    assert got == expected and not failures, (
        f"{client} positioned at {position} after reading epoch {consumer.epochs[1]}, which the leader never saw, "
        f"resumed at {where}; read {_reads(reads)}; expected the {len(expected)} records from {e2_start}, where "
        f"the leader's next epoch {consumer.epochs[2]} starts; errors {_errors(errors)}"
    )


class TruncationNotSurfaced(AssertionError):
    """A client reported nothing where it owed the application the truncation: a failure a known
    client gap may excuse (a broken premise is another AssertionError)."""


class ReadOnAfterSurfacing(AssertionError):
    """A client reported the truncation but read on past it without the application's say: a failure
    a known client gap may excuse."""


def assert_truncation_surfaced(
    client: str, reads: Sequence[ClientRecord], errors: Sequence[ConsumerError], divergence: int
) -> None:
    """With no reset policy the client reports the truncation, and reads nothing past it.

    librdkafka: an error with code _AUTO_OFFSET_RESET whose text names the truncation. Java (and
    kafka-python, its LogTruncationError): a LogTruncationException whose divergent offset is the
    divergence offset. franz-go: an
    ErrDataLoss that reset to the divergence offset.
    """
    if client in RAISED_TRUNCATION:
        raised = RAISED_TRUNCATION[client]
        surfaced = bool(_reported_at([e for e in errors if e.exception == raised], divergence))
        want = f"{raised} with divergent offset {divergence}"
    elif client == "franz-go":
        surfaced = bool(_reported_at([e for e in errors if e.code == GO_DATA_LOSS], divergence))
        want = f"{GO_DATA_LOSS} resetting to {divergence}"
    else:
        named = [e for e in errors if e.code == LIBRDKAFKA_RESET and "truncat" in str(e.message).lower()]
        surfaced = bool(named)
        want = f"{LIBRDKAFKA_RESET} naming the truncation"
    if not surfaced:
        raise TruncationNotSurfaced(
            f"{client} did not surface the truncation at {divergence}: expected {want}; errors {_errors(errors)}; "
            f"read {_reads(reads)}"
        )
    if reads:
        raise ReadOnAfterSurfacing(f"{client} surfaced the truncation at {divergence} but, with no reset policy, "
                                   f"also read on: {_reads(reads)}")
