"""One forced unclean election, watched by every consumer the KIP-320 truncation checks judge.

Before the election each consumer reads past the divergence point: 20 replicated records, then 30
that only the old leader holds (acks=1). The election truncates those 30; the new leader then
writes 60, so every consumer's position (50) is valid again in the new log and only epoch
validation can tell that records 20..49 changed under it (KIP-320, "Motivation").

Watching consumers, per client stack judged (harness.clients.stacks: librdkafka of the run's
confluent-kafka release, the Java clients of its kafka-clients release, franz-go), each stack's
consumers in one driver process of its own that takes the same commands:
- `<client>/earliest`, `<client>/latest`: positioned by assign(), they read through the divergent
  records and pause; they resume once the new leader has written its records. Paused, no client
  meets the new leader's log while it ends short of their position: a client without KIP-320 then
  reads on from 50, where a reset on OFFSET_OUT_OF_RANGE to the log end could land on the
  divergence offset by chance;
- `<client>/<no reset>`: the same with no reset policy (librdkafka `error`, Java and franz-go `none`);
- `<client>/group-restart`: a group member read to 50 and committed (offset, epoch) before the
  election; after it, a new member of the group, with no reset policy, starts from that commit;
- `<client>/seek`: after the election, a consumer with no reset policy positioned at (50, the old
  epoch) by seek with an offset and epoch (librdkafka: an assignment carrying the leader epoch).
Everything each one read or reported after the election is recorded; the checks judge it, with what
the new leader advertised for OffsetForLeaderEpoch and Fetch: a client validates a position only with
the OffsetForLeaderEpoch versions it speaks (harness.histories.version_needs.TRUNCATION_DETECTION).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TypeVar

from harness import attach, confluent
from harness.clients import raw as rr
from harness.clients import stacks
from harness.clients.driver import READ_THROUGH_S, ClientDriver, stop_driver, stopped_on_exit
from harness.clients.produce_read import ProduceHistory, produce
from harness.clients.stacks import NO_RESET, RESETS, STACKS, client_version, consumers_driver, gap_version
from harness.cluster.base import Cluster
from harness.errors import ClusterError, PromiseUnkept
from harness.histories import json_codec
from harness.histories.client_reactions import ClientRecord
from harness.histories.history import Operation, OpType, Outcome, Polled, Sent
from harness.histories.text_records import LogRecord
from harness.histories.truncation import (
    CommitFailed,
    ConsumerError,
    ConsumerSeen,
    GroupCommit,
    Refusal,
    TruncatedConsumer,
)
from harness.histories.version_needs import VALIDATION_APIS, Offered
from harness.nemesis.unclean import UncleanElection, force_unclean_election
from harness.process.events import Message
from harness.scenarios.advertised import leader_offers
from harness.waiting import Owed, asked_again, wait_until

REPLICATED, DIVERGENT, REWRITTEN = 20, 30, 60
COMMIT_RETRY_S = 30.0  # how long a failed group commit before the election is asked again
AFTER_ERROR_S = 3.0  # how long a consumer that reported an error is watched for reading on
__all__ = ["NO_RESET", "RESETS", "STACKS", "gap_version", "stop_driver"]  # the suites' names for them
T = TypeVar("T")


def judged_stacks() -> tuple[str, ...]:
    """The client stacks this run judges (harness.clients.stacks)."""
    return stacks.current().judged()


@dataclass
class Watched:
    """What one consumer read and reported so far while it is watched (frozen by `seen`)."""

    reads: list[ClientRecord] = field(default_factory=list)
    errors: list[ConsumerError] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def seen(self) -> ConsumerSeen:
        return ConsumerSeen(tuple(self.reads), tuple(self.errors), tuple(self.refused))


@dataclass(frozen=True)
class TruncationHistory:
    topic: str
    election: UncleanElection
    position_before: int
    new_leader_writes: tuple[LogRecord, ...]
    committed_before: dict[str, GroupCommit | CommitFailed]
    observed: dict[str, ConsumerSeen]
    incomplete: str | None = None
    clients: dict[str, str] = field(default_factory=dict)  # each stack's client and version, as its driver named it
    # (offset, PartitionLeaderEpoch of its batch) of each new-leader write, as the leader serves its log:
    # the epoch it was written in, the election's or a later one (a controller may move the lead on)
    new_leader_epochs: tuple[tuple[int, int | None], ...] = ()
    # What the new leader, which every consumer validates against, advertised for VALIDATION_APIS.
    leader_offers: tuple[Offered, ...] = ()
    # The scene in the one history format (harness.histories.history): every record the harness's
    # writers sent (processes `writer`, `divergent-writer`) and every record each consumer's driver
    # reported (process `<stack>/<role>`), before the election and after it.
    operations: tuple[Operation, ...] = ()
    election_ns: tuple[int, int] = (0, 0)  # when the election was forced, from the first stop to the new leader

    def written_epoch(self, offset: int) -> int:
        """The epoch the record at `offset` was written in: its batch's, else the election's."""
        epoch = dict(self.new_leader_epochs).get(offset)
        return self.election.epoch_after if epoch is None else epoch

    def stamped_before_the_election(self) -> list[tuple[int, int]]:
        """(offset, batch epoch) of new-leader writes whose batch carries an epoch older than the
        election's: written after it, so by a leader at its epoch or a later one."""
        after = self.election.epoch_after
        return [(o, e) for o, e in self.new_leader_epochs if e is not None and e < after]

    def batch_epochs(self) -> list[int | None]:
        """The distinct epochs the new-leader writes' batches carry (evidence for a check's message)."""
        return sorted({e for _, e in self.new_leader_epochs}, key=lambda e: -1 if e is None else e)

    @property
    def divergence(self) -> int:
        return self.election.divergence_offset

    def consumer(self, name: str) -> TruncatedConsumer:
        """The consumer `name` (`<stack>/<role>`) as its checks judge it and its recording keeps it."""
        o = self.observed[name]
        return TruncatedConsumer(o.reads, o.errors, self.divergence, self.position_before, self.new_leader_writes,
                                 self.clients.get(name.split("/")[0]), o.refused)

    def evidence(self) -> str:
        e = self.election
        return (
            f"unclean election {e.old_leader}@{e.epoch_before} -> {e.new_leader}@{e.epoch_after}, divergence at "
            f"{e.divergence_offset}, truncated {e.truncated}; consumers were at {self.position_before}"
            + (f"; collection incomplete: {self.incomplete}" if self.incomplete else "")
        )


Elect = Callable[[Cluster, str, Callable[[], None]], UncleanElection]


def _stopping_nodes(cluster: Cluster, topic: str, write_divergent: Callable[[], None]) -> UncleanElection:
    return force_unclean_election(cluster, topic, write_divergent=write_divergent)


def unclean_election_watched(
    cluster: Cluster, topic: str, groups: dict[str, str], elect: Elect = _stopping_nodes
) -> TruncationHistory:
    """Run the scenario on `topic` (2 replicas, unclean election enabled); `groups` names the group
    of each client stack judged. `elect(cluster, topic, write_divergent)` forces the election: by
    default by stopping nodes; `harness.nemesis.network_splits` makes it by cutting links instead."""
    config = cluster.client_config()
    with ExitStack() as clients:
        drivers: dict[str, ClientDriver] = {}
        for stack in groups:
            drivers[stack] = consumers_driver(stack, cluster.java_clients, config, topic)
            clients.enter_context(stopped_on_exit(drivers[stack]))
            drivers[stack].start()
        writer = clients.enter_context(confluent.producer({**config, "acks": "all"}))
        sends: list[Operation] = []
        sent_by(sends, "writer", topic, lambda: produce(writer, topic, [f"replicated-{i}".encode()
                                                                       for i in range(REPLICATED)]))
        for stack, d in drivers.items():
            d.wait_ready()
            for reset in RESETS[stack]:
                d.send_line(f"assign {stack}/{reset} {reset} 0")
            d.send_line(f"subscribe {stack}/group earliest {groups[stack]}")
        committed: dict[str, GroupCommit | CommitFailed] = {}
        marks: dict[str, int] = {}
        # The consumers a driver refused to set up (a reset policy its client has not: KafkaJS has no
        # "none"), with the refusal: judged as such, never waited on.
        refused: dict[str, Message] = {}

        def diverge() -> None:
            with confluent.producer({**config, "acks": "1", "enable.idempotence": False}) as divergent:
                written = sent_by(sends, "divergent-writer", topic, lambda: produce(
                    divergent, topic, [f"divergent-{i}".encode() for i in range(DIVERGENT)]))
            # The election may have put records of its own before these (the partition nemesis does).
            last = max(w.offset for w in written.acked)
            for stack, d in drivers.items():
                for name in [*(f"{stack}/{r}" for r in RESETS[stack]), f"{stack}/group"]:
                    event = d.wait_for(lambda e, n=name: (e.get("event") == "record" and e["consumer"] == n
                                                          and e["offset"] == last) or _refusal_of(e, n),
                                       READ_THROUGH_S, f"{name} reads through {last}")
                    if event["event"] == "command_failed":
                        refused[name] = event
            for stack, d in drivers.items():
                for reset in RESETS[stack]:
                    if f"{stack}/{reset}" not in refused:
                        command(d, f"pause {stack}/{reset}")
            for stack, d in drivers.items():
                # The commit is made while the unclean recipe has brokers down, so its coordinator may be
                # moving: a failed commit is asked again, as an application would, within COMMIT_RETRY_S
                # (a client that gives up after a few quick tries, @platformatic/kafka's four, then still
                # commits); one that fails throughout is the last failure, the earlier ones named in it.
                event, replaced = asked_again(lambda d=d, stack=stack: d.ask(f"commit {stack}/group", "committed"),
                                              lambda e: e["event"] == "command_failed" and not e.get("lacks"),
                                              COMMIT_RETRY_S, backoff=0.5)
                if replaced:  # the failures a later try replaced are evidence too, as committed()'s are
                    attach.text(f"{stack}/group commit asked again", "\n".join(str(e.get("message")) for e in replaced))
                committed[stack] = (GroupCommit(event["offset"], event["epoch"]) if event["event"] == "committed"
                                    else CommitFailed(str(event.get("message")) + _after_failures(replaced)))
                # The member leaves before the restarted one joins: closed only once the group has it.
                d.send_line(f"close {stack}/group")
                d.wait_for(lambda e, n=f"{stack}/group": e.get("event") == "closed" and e["consumer"] == n,
                           30, f"close {stack}/group")
                marks[stack] = len(d.events)

        forced = time.monotonic_ns()
        election = elect(cluster, topic, diverge)
        elected = (forced, time.monotonic_ns())
        rewritten = sent_by(sends, "writer", topic, lambda: produce(writer, topic, [f"new-leader-{i}".encode()
                                                                                    for i in range(REWRITTEN)]))
        new_writes = tuple(LogRecord(w.offset, w.value.decode()) for w in rewritten.acked)
        written_epochs = batch_epochs(cluster, topic, [w.offset for w in new_writes])
        offers = leader_offers(cluster, topic, *VALIDATION_APIS)
        for stack, d in drivers.items():
            for reset in RESETS[stack]:
                if f"{stack}/{reset}" not in refused:
                    d.send_line(f"resume {stack}/{reset}")

        # KIP-320 "Consumer Handling", extension 3: a position restored from outside (the offset the
        # consumers had reached, with the epoch of the record before it) is validated on the next poll.
        seek = {"offset": election.old_leader_leo_before, "epoch": election.epoch_before}
        for stack, d in drivers.items():
            d.send_line(f"seekepoch {stack}/seek {NO_RESET[stack]} {seek['offset']} {seek['epoch']}")
            d.send_line(f"subscribe {stack}/group-restart {NO_RESET[stack]} {groups[stack]}")

        watched = {f"{stack}/{n}": Watched() for stack in drivers
                   for n in [*RESETS[stack], "group-restart", "seek"]}
        for name, event in refused.items():
            watched[name].refused.append(_as(Refusal, event))
        last_new = new_writes[-1].offset if new_writes else -1
        incomplete = watch_until_settled(drivers, marks, watched, last_new)
        observed = {name: w.seen() for name, w in watched.items()}
        versions = {stack: client_version(d) or f"{stack} {cluster.java_clients}" for stack, d in drivers.items()}
        return TruncationHistory(
            topic, election, election.old_leader_leo_before, new_writes, committed, observed, incomplete, versions,
            written_epochs, offers, (*sends, *(op for d in drivers.values() for op in polled(d, topic))), elected,
        )


def sent_by(ops: list[Operation], process: str, topic: str, send: Callable[[], ProduceHistory]) -> ProduceHistory:
    """Run `send` (one `produce` call, which waits for every delivery report) and write each record it
    sent into `ops` as a send of `process`: ok at its acknowledged offset, else info (not known whether
    it was kept). The call's bounds are each send's start and end: the records are sent together."""
    start = time.monotonic_ns()
    written = send()
    end = time.monotonic_ns()
    for w in written.writes:
        outcome, offset = (Outcome.OK, w.offset) if w.acked else (Outcome.INFO, None)
        ops.append(Operation(process, OpType.SEND, outcome, start, end,
                             sent=Sent(topic, w.partition, w.value.decode(), offset, w.error)))
    return written


def polled(driver: ClientDriver, topic: str) -> list[Operation]:
    """Every record a consumers driver reported, each a poll of its consumer ending when it arrived (a
    driver prints a record as its client hands it over), on the partition the scene reads (0)."""
    return [Operation(str(e["consumer"]), OpType.POLL, Outcome.OK, at, at,
                      polled=(Polled(topic, 0, int(e["offset"]), str(e["value"]), e.get("epoch")),))
            for e, at in zip(list(driver.events), list(driver.arrived_ns), strict=False) if e.get("event") == "record"]


def batch_epochs(cluster: Cluster, topic: str, offsets: list[int]) -> tuple[tuple[int, int | None], ...]:
    """(offset, PartitionLeaderEpoch of the batch holding it) for each offset, from the partition's
    leader's log over a raw Fetch; None for an offset no batch holds."""
    if not offsets:
        return ()
    raw = rr.RawConnector(cluster)
    try:
        leader = raw(cluster.state.partition_state(topic).leader)
        batches, _ = rr.read_log(leader, topic, rr.topic_id(leader, topic), start=min(offsets))
    finally:
        raw.close()

    def epoch(offset: int) -> int | None:
        return next((b.partition_leader_epoch for b in batches if b.base_offset <= offset <= b.last_offset), None)

    return tuple((o, epoch(o)) for o in offsets)


def command(driver: ClientDriver, line: str, timeout: float = 30.0) -> None:
    """Send one command and wait for the driver to have done it; a refusal is an error with its answer."""
    driver.send_line(line)
    event = driver.wait_for(lambda e: e.get("event") in ("done", "command_failed") and e.get("command") == line,
                            timeout, line)
    if event["event"] != "done":
        raise ClusterError(f"{driver.main_class} could not `{line}`: {event.get('exception')}: {event.get('message')}")


def watch_until_settled(
    drivers: dict[str, ClientDriver], marks: dict[str, int], observed: dict[str, Watched], last: int,
    timeout: float = 45.0,
) -> str | None:
    """Read each driver's events from its mark on into `observed` (by consumer name) until each
    consumer read through offset `last`, could not be set up, or reported an error and was watched
    `AFTER_ERROR_S` more; None, or why not (kept as evidence: the checks of the consumers that did
    not settle fail on it). Whether a client reads on after reporting a truncation is what the
    no-reset checks judge, and its records, when it does, come at once (the new leader holds them)."""
    seen = dict(marks)
    errored_at: dict[str, float] = {}

    def settled(name: str) -> bool:
        o = observed[name]
        if o.refused or (o.reads and o.reads[-1].offset >= last):
            return True
        return name in errored_at and time.monotonic() - errored_at[name] >= AFTER_ERROR_S

    def everyone_settled() -> bool:
        for stack, d in drivers.items():
            for e in d.events[seen.get(stack, 0):]:
                seen[stack] = seen.get(stack, 0) + 1
                if e.get("event") == "command_failed":
                    words = str(e.get("command", "")).split()
                    o = observed.get(words[1] if len(words) > 1 else "")
                    if o is not None:
                        o.refused.append(_as(Refusal, e))
                    continue
                o = observed.get(e.get("consumer", ""))
                if o is None:
                    continue
                if e["event"] == "record":
                    o.reads.append(ClientRecord(e["offset"], e["value"], e["epoch"]))
                elif e["event"] == "error":
                    o.errors.append(_as(ConsumerError, e))
                    errored_at.setdefault(e["consumer"], time.monotonic())
        return all(settled(name) for name in observed)

    # What each consumer does after the truncation is what the checks judge: one that does not settle
    # is their evidence, returned, not the end of the scene.
    try:
        wait_until(everyone_settled, timeout, lambda: "; ".join(
            f"{n}: {len(o.reads)} reads, errors {json_codec.encode(o.errors[:1])}" for n, o in observed.items()
            if not settled(n)
        ), interval=0.02, owed=Owed.PROMISE)
    except PromiseUnkept as exc:
        return str(exc)
    return None


def _refusal_of(event: Message, name: str) -> bool:
    """Whether `event` is the driver's refusal of a command for consumer `name`."""
    words = str(event.get("command", "")).split()
    return event.get("event") == "command_failed" and len(words) > 1 and words[1] == name


def _as(kind: type[T], event: Message) -> T:
    """A driver event read into `kind` through the codec, which checks its fields' types; the fields
    `kind` does not keep (the event's name, the consumer's) are left behind."""
    known = {f.name for f in dataclasses.fields(kind)}  # type: ignore[arg-type]
    return json_codec.decode(kind, {k: v for k, v in event.items() if k in known})


def _after_failures(replaced: tuple[dict[str, object], ...]) -> str:
    """The earlier failed tries of a commit, for the message of the one that persisted."""
    if not replaced:
        return ""
    return f" (and {len(replaced)} earlier tries failed, the first: {replaced[0].get('message')})"

