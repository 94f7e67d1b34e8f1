"""KIP-1094 situations: two logs with a past, the consumers that commit from them, and a zombie leader.

- `two_epochs`: 20 records appended in one epoch, 20 in the next (the leader moved between).
- `transactions`: three committed transactions over three epochs; the last one's data is
  appended in one epoch and its COMMIT marker in the next (the leader moved between the two).
- `aborted_last`: a committed transaction, then an aborted one whose ABORT marker ends the log,
  appended in a later epoch than every data record (the leader moved between its data and its abort).
- `last_epoch_commits`: a consumer (librdkafka, or the Java client through the Kip1094NextOffsets
  driver) reads `two_epochs` and commits after the 20th and the 40th record; each commit read
  back, and what OffsetsForLeaderEpoch says of its epoch.
- `marker_commit`: a read_committed consumer reads `transactions` (or `aborted_last`) to the end
  and commits; its position, its commit, and what OffsetsForLeaderEpoch says of the commit's epoch
  and of the data's.
- `zombie_leader`: a leader frozen until replaced, then thawed while the controller sleeps, asked
  about a group's commit from the new leader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from harness import attach, confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients import txn_refusal
from harness.clients.driver import READ_THROUGH_S, ClientDriver, stopped_on_exit
from harness.clients.jvm import JavaClient
from harness.clients.produce_read import produce
from harness.clients.stacks import client_version, consumers_driver
from harness.cluster.base import Cluster
from harness.cluster.state import PartitionState
from harness.errors import PromiseUnkept, TargetRefused, require_target
from harness.histories.epoch_validation import EpochProbe
from harness.histories.kip1094 import (
    CommitAfterRead,
    CommittedOffset,
    EpochEnd,
    FetchAnswer,
    LastEpochCommits,
    LeaderView,
    MarkerCommit,
)
from harness.histories.observations import ClientEvent
from harness.kafka.dist import resolve
from harness.nemesis.faults import Pause
from harness.nemesis.leadership import move_leader
from harness.protocol.errors import OFFSET_OUT_OF_RANGE, describe, is_retriable
from harness.protocol.exceptions import CorruptRecordError
from harness.protocol.records import RecordBatch, committed_data, describe_log
from harness.waiting import Owed, WaitTimeout, asked_again, wait_until

# A frozen broker accepts connections and answers nothing: clients give up on it after 10 s, not 60.
PAUSED_PEER = {"socket.timeout.ms": 10000}


# -- logs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Log:
    """A topic, its batches as read from the leader, and its end offset."""

    topic: str
    batches: list[RecordBatch]
    end: int

    def blob(self) -> bytes:
        """The batches re-encoded, as the recorded answers keep them."""
        return b"".join(b.encode() for b in self.batches)


def read_log(cluster: Cluster, raw: rr.RawConnector, topic: str) -> Log:
    leader = raw(cluster.state.partition_state(topic).leader)
    batches, end = rr.read_log(leader, topic, rr.topic_id(leader, topic))
    return Log(topic, batches, end)


def two_epochs(cluster: Cluster, topic: str) -> Log:
    """20 records in the partition's first epoch, a leader move, 20 in the next (`topic`: 3 replicas)."""
    raw = rr.RawConnector(cluster)
    try:
        with (confluent.producer({**cluster.client_config(), "acks": "all"}) as writer,
              confluent.admin(cluster.client_config()) as admin):
            produce(writer, topic, [f"first-epoch-{i}".encode() for i in range(20)])
            move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
            produce(writer, topic, [f"second-epoch-{i}".encode() for i in range(20)])
        return read_log(cluster, raw, topic)
    finally:
        raw.close()


def transactions(cluster: Cluster, topic: str, transactional_id: str) -> Log:
    """Three committed transactions of 10 records; the leader moves after the first, and between the
    last one's data and its commit (`topic`: 3 replicas). Returned once all three COMMIT markers are in."""
    raw = rr.RawConnector(cluster)
    try:
        mover = raw(cluster.state.running_brokers()[0])
        tx.require_transactions(mover)
        with (confluent.producer({**cluster.client_config(), "transactional.id": transactional_id}) as txn,
              confluent.admin(cluster.client_config()) as admin):
            txn_refusal.init_transactions(txn, transactional_id, 30)
            for i, move_before_commit in enumerate((False, False, True)):
                txn.begin_transaction()
                produce(txn, topic, [f"txn{i}-{n}".encode() for n in range(10)])
                if move_before_commit:
                    move_leader(cluster, mover, admin, topic)
                txn.commit_transaction(30)
                if i == 0:
                    move_leader(cluster, mover, admin, topic)

        return _with_markers(cluster, raw, topic, ("COMMIT", "COMMIT", "COMMIT"))
    finally:
        raw.close()


def aborted_last(cluster: Cluster, topic: str, transactional_id: str) -> Log:
    """A committed transaction of 10 records, then an aborted one of 10 whose ABORT marker ends the log;
    the leader moves between the aborted data and its abort, so the marker carries a later epoch than
    every data record (`topic`: 3 replicas). Returned once both markers are in."""
    raw = rr.RawConnector(cluster)
    try:
        mover = raw(cluster.state.running_brokers()[0])
        tx.require_transactions(mover)
        with (confluent.producer({**cluster.client_config(), "transactional.id": transactional_id}) as txn,
              confluent.admin(cluster.client_config()) as admin):
            txn_refusal.init_transactions(txn, transactional_id, 30)
            txn.begin_transaction()
            produce(txn, topic, [f"committed-{n}".encode() for n in range(10)])
            txn.commit_transaction(30)
            txn.begin_transaction()
            produce(txn, topic, [f"aborted-{n}".encode() for n in range(10)])
            move_leader(cluster, mover, admin, topic)
            txn.abort_transaction(30)
        return _with_markers(cluster, raw, topic, ("COMMIT", "ABORT"))
    finally:
        raw.close()


def _with_markers(cluster: Cluster, raw: rr.RawConnector, topic: str, markers: tuple[str, ...]) -> Log:
    """`topic`'s log once its control records are `markers`, in order: the coordinator writes them after
    commit_transaction or abort_transaction returns."""

    def written() -> Log | None:
        try:
            log = read_log(cluster, raw, topic)
        except CorruptRecordError as exc:
            # A batch that fails its own CRC will not mend: the scene's log is the target's to
            # write right (librdkafka's mock writes its COMMIT markers with CRC 0).
            raise TargetRefused(f"the target wrote {topic}'s log with a batch kcts cannot read: {exc}") from exc
        return log if tuple(b.control_type() for b in log.batches if b.is_control) == markers else None

    return wait_until(
        written, 30, lambda: f"the markers {list(markers)} in {topic}: "
                             f"{describe_log(read_log(cluster, raw, topic).batches)}",
        owed=Owed.PREMISE,
    )


# -- consumers committing from a log ---------------------------------------------------------


def _java(cluster: Cluster, log: Log, group: str, isolation: str, max_poll_records: int) -> list[ClientEvent]:
    """Run the KIP-1094 driver (commit nextOffsets() after each poll) to the log end; its events."""
    args = [cluster.bootstrap_servers, log.topic, "0", group, isolation, str(max_poll_records), str(log.end)]
    with JavaClient.driver(resolve(cluster.java_clients), "Kip1094NextOffsets", args,
                           config=cluster.client_config()) as driver:
        code = driver.wait_exit(90)
    assert code == 0, f"Kip1094NextOffsets exited {code}: {driver.describe()}"
    return [ClientEvent.of(e) for e in driver.events]


# How long an application asks committed() again while its error is retriable: the raw reads' bound
# (harness.clients.raw.READ_RETRY_S).
COMMITTED_RETRY_S = 30.0


def _retriable(err: KafkaError) -> bool:
    """An error an application asks again after: librdkafka's own flag, or the protocol guide's
    (confluent-kafka raises committed()'s NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE, both
    retriable there, with retriable() False: it builds the error from the code alone)."""
    return err.retriable() or is_retriable(err.code())


def _committed(consumer: Consumer, topic: str) -> tuple[CommittedOffset, tuple[str, ...]]:
    """The group's commit for `topic`-0 as committed() reads it back, asked again while it raises a
    retriable error (the coordinator moved, or is loading), as an application does, within
    COMMITTED_RETRY_S; and the errors those answers were (the evidence). One that persists is raised."""

    def ask() -> TopicPartition | KafkaError:
        try:
            (tp,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
        except KafkaException as exc:
            return exc.args[0]
        return tp

    answer, replaced = asked_again(ask, lambda a: isinstance(a, KafkaError) and _retriable(a), COMMITTED_RETRY_S,
                                   backoff=0.5)
    errors = tuple(str(e) for e in replaced)
    if errors:
        attach.text("committed() asked again", "\n".join(errors))
    if isinstance(answer, KafkaError) and _retriable(answer):
        raise TargetRefused(f"the group's coordinator kept answering committed() with a retriable error for "
                            f"{COMMITTED_RETRY_S:.0f}s: {answer}, after {len(errors)} such answers {list(errors[-3:])}")
    if isinstance(answer, KafkaError):
        raise KafkaException(answer)
    return CommittedOffset(answer.offset, answer.leader_epoch), errors


def _validates(raw: rr.RawConnector, cluster: Cluster, topic: str, committed: CommittedOffset) -> EpochEnd:
    """OffsetsForLeaderEpoch(committed epoch) from the leader, at its top version."""
    leader = raw(cluster.state.partition_state(topic).leader)
    version = leader.max_version("OffsetForLeaderEpoch")
    answer = rr.offsets_for_leader_epoch(leader, version, topic, 0, committed.epoch)
    return EpochEnd(answer["ErrorCode"], answer["LeaderEpoch"], answer["EndOffset"])


def _int(value: object) -> int:
    assert isinstance(value, int), f"a driver's offset or epoch is not an integer: {value!r}"
    return value


def _epoch(value: object) -> int | None:
    return None if value is None else _int(value)


def _records(e: ClientEvent) -> list[list[int]]:
    """A poll event's records, each [offset, epoch]."""
    records = e.get("records") or []
    assert isinstance(records, list), f"a poll event's records are not a list: {e}"
    return records


def last_epoch_commits(cluster: Cluster, log: Log, group: str, client: str) -> LastEpochCommits:
    """`client` (a client stack) reads `log` in `group` and commits what it consumed: Java commits
    ConsumerRecords.nextOffsets() after each poll (20 records per poll); librdkafka and franz-go,
    in their consumer driver, what they consumed after the 20th and the last record."""
    commits: list[CommitAfterRead] = []
    if client == "java":
        for e in _java(cluster, log, group, "read_uncommitted", 20):
            records = _records(e)
            if e.event == "poll" and records:
                last_offset, last_epoch = records[-1]
                committed = e.get("committed")
                assert isinstance(committed, dict), f"a poll event without its commit: {e}"
                commits.append(CommitAfterRead(_int(committed["offset"]), _epoch(committed["epoch"]),
                                               _int(last_offset), _epoch(last_epoch)))
        version = None
    else:
        commits, version = _commits_after(cluster, log, group, client, [19, log.end - 1])
    current = cluster.state.partition_state(log.topic).leader_epoch
    raw = rr.RawConnector(cluster)
    try:
        # A commit without an epoch (a client before KIP-320) has nothing to validate.
        validations = tuple(_validates(raw, cluster, log.topic, c) if c.epoch is not None else None for c in commits)
    finally:
        raw.close()
    return LastEpochCommits(client, tuple(commits), current, validations, version)


class NotReadThrough(WaitTimeout):
    """A consumer driver's client did not read through a record within READ_THROUGH_S: the harness's
    ERROR (a WaitTimeout) unless its suite finds in `events` (that consumer's, in order) a known
    client gap's stall (harness.checks.client_reactions.require_committed_offsets_fetched). `client`:
    what its driver named."""

    def __init__(self, timeout: WaitTimeout, client: str | None, events: tuple[ClientEvent, ...]) -> None:
        super().__init__(str(timeout))
        self.client = client
        self.events = events

    @property
    def read(self) -> int:
        """How many records the consumer was handed."""
        return sum(e.event == "record" for e in self.events)


def _read_through(driver: ClientDriver, client: str, name: str, last: int,
                  reached: Callable[[dict[str, object]], bool]) -> dict[str, object]:
    """The first event of `driver` that `reached` holds for: consumer `name` read through offset
    `last`. A wait for the client's own progress on a log the target has served: where it never
    comes, `NotReadThrough` with that consumer's events, for the suite to tell a known client gap's
    stall from the harness's own trouble."""
    try:
        return driver.wait_for(reached, READ_THROUGH_S, f"{name} reads through {last}")
    except WaitTimeout as exc:
        mine = tuple(ClientEvent.of(e) for e in driver.events if e.get("consumer") == name)
        raise NotReadThrough(exc, client_version(driver) or client, mine) from exc


def _commits_after(
    cluster: Cluster, log: Log, group: str, client: str, lasts: list[int]
) -> tuple[list[CommitAfterRead], str | None]:
    """`client`'s consumer driver (harness.clients.stacks) joins `group` on `log` and, for each offset
    of `lasts`, reads up to that record, holds there, commits and reads the commit back; the commits,
    and the client and version its driver named."""
    name = f"{client}/commit"
    commits: list[CommitAfterRead] = []
    driver = consumers_driver(client, cluster.java_clients, cluster.client_config(), log.topic)
    with driver, stopped_on_exit(driver):
        driver.wait_ready()
        for i, last in enumerate(lasts):
            driver.send_line(f"until {name} {last}")
            if i == 0:
                driver.send_line(f"subscribe {name} earliest {group}")
            held = _read_through(driver, client, name, last,
                                 lambda e, last=last: e.get("event") == "held" and e["consumer"] == name
                                 and e["offset"] >= last)
            record = next(e for e in reversed(driver.events) if e.get("event") == "record"
                          and e["consumer"] == name and e["offset"] == held["offset"])
            answer = driver.ask(f"commit {name}", "committed")
            assert answer["event"] == "committed", f"{client} could not commit: {answer}"
            commits.append(CommitAfterRead(answer["offset"], answer["epoch"], record["offset"], record["epoch"]))
    return commits, client_version(driver)


# How long a client may take to step its position over trailing markers after the last data
# record: librdkafka does so on a later poll that returns nothing.
PAST_MARKERS_S = 15


def marker_commit(cluster: Cluster, log: Log, group: str, client: str) -> MarkerCommit:
    """`client` (a client stack) reads `log` (read_committed) in `group` to its end, then commits:
    Java through Kip1094NextOffsets (nextOffsets()), librdkafka and franz-go in their consumer driver.
    The last record it is handed is the last of a committed transaction (`committed_data`)."""
    data = committed_data(log.batches)
    version, position_of = None, "position()"
    if client == "java":
        events = _java(cluster, log, group, "read_committed", 500)
        read = [_int(r[0]) for e in events if e.event == "poll" for r in _records(e)]
        end = next(e for e in events if e.event == "end")
        committed = end.get("committed")
        assert isinstance(committed, dict), f"the driver's end event has no commit: {end}"
        position, committed_offset = _int(end.get("position")), CommittedOffset(_int(committed["offset"]),
                                                                                _epoch(committed["epoch"]))
    else:
        read, position, position_of, committed_offset, version = _marker_commit_driver(
            cluster, log, group, client, data[-1].last_offset)
    # Why the marker's epoch and not the data's: the data's epoch ends where the marker's begins.
    data_epoch = CommittedOffset(log.end, data[-1].partition_leader_epoch)
    raw = rr.RawConnector(cluster)
    try:
        data_epoch_answer = _validates(raw, cluster, log.topic, data_epoch)
        validation = (_validates(raw, cluster, log.topic, committed_offset)
                      if committed_offset.epoch is not None else None)
    finally:
        raw.close()
    return MarkerCommit(client, position, committed_offset, validation, data_epoch, data_epoch_answer, tuple(read),
                        position_of, version)


def _marker_commit_driver(
    cluster: Cluster, log: Log, group: str, client: str, last_data: int
) -> tuple[list[int], int, str, CommittedOffset, str | None]:
    """The consumer driver of `client` joins `group` (read_committed), reads through the last data
    record, is given PAST_MARKERS_S to report a position at the log end, then commits; the offsets
    it read, its last position (and what it reports it from), the commit read back, its version."""
    name = f"{client}/markers"
    driver = consumers_driver(client, cluster.java_clients, cluster.client_config(), log.topic)
    with driver, stopped_on_exit(driver):
        driver.wait_ready()
        driver.send_line(f"subscribe {name} earliest {group} read_committed")
        _read_through(driver, client, name, last_data,
                      lambda e: e.get("event") == "record" and e["consumer"] == name and e["offset"] >= last_data)
        last: list[ClientEvent] = []  # the driver's last position answer

        def position_at_end() -> bool:
            answer = driver.ask(f"position {name}", "position", 10)
            assert answer["event"] == "position", f"{client} reports no position: {answer}"
            last[:] = [ClientEvent.of(answer)]
            return answer["offset"] >= log.end

        # The position past the markers is what the checks judge: where it never gets there, they
        # report the position it stayed at.
        try:
            wait_until(position_at_end, PAST_MARKERS_S,
                       lambda: f"{name}'s position {last[0].get('offset') if last else None} reaching the log "
                               f"end {log.end}", owed=Owed.PROMISE)
        except PromiseUnkept:
            pass
        answer = driver.ask(f"commit {name}", "committed")
        assert answer["event"] == "committed", f"{client} could not commit: {answer}"
        committed = CommittedOffset(answer["offset"], answer["epoch"])
        read = [e["offset"] for e in driver.events if e.get("event") == "record" and e["consumer"] == name]
    return read, _int(last[0].get("offset")), str(last[0].get("of", "position()")), committed, client_version(driver)


# -- the zombie leader -----------------------------------------------------------------------


@dataclass(frozen=True)
class ThawedLeaderAnswers:
    """What the thawed former leader (the zombie) answered about the group's commit from the new leader.

    `answers`: Fetch, OffsetForLeaderEpoch and ListOffsets with the committed epoch, the zombie's
    own epoch as the current one.
    """

    topic: str
    before: PartitionState
    after: PartitionState
    committed: CommittedOffset
    seen: LeaderView  # the partition in the zombie's own Metadata
    without_epoch: FetchAnswer  # the zombie's answer to a Fetch of the commit without an epoch
    answers: list[EpochProbe]
    committed_retried: tuple[str, ...] = ()  # the retriable errors committed() raised before the commit read

    @property
    def zombie_epoch(self) -> int:
        return self.seen.epoch


def _commit_through(cluster: Cluster, topic: str, group: str, last: int) -> tuple[CommittedOffset, tuple[str, ...]]:
    """A group member reads through offset `last` and commits; the committed (offset, epoch) read back,
    and the retriable errors committed() raised before it (`_committed`)."""
    with confluent.consumer({**cluster.client_config(), "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", **PAUSED_PEER}) as consumer:
        consumer.assign([TopicPartition(topic, 0, 0)])
        offsets: list[int] = []
        while not offsets or offsets[-1] < last:
            msg = consumer.poll(30)
            assert msg is not None, f"no record from {topic} within 30 s after offset {offsets[-1:]}"
            if msg.error() is None:
                offsets.append(msg.offset())
        consumer.commit(asynchronous=False)
        return _committed(consumer, topic)


def zombie_leader(cluster: Cluster, topic: str, group: str) -> ThawedLeaderAnswers:
    """KIP-1094's "Committing Leader Epoch", phases 1-3, on `topic` (3 replicas): 20 records; the
    leader paused until replaced; 30 more on the new leader, read and committed by `group` (offset
    50, the new epoch); with the controller paused, the old leader thawed (it cannot learn it was
    replaced) and asked about that commit.
    A thawed broker that no longer sees itself leading took no part in the scene (`TargetRefused`);
    the commit and the zombie's answer without an epoch are promises of their own (AssertionError,
    naming them)."""
    config = cluster.client_config()
    raw = rr.RawConnector(cluster)
    try:
        with confluent.producer({**config, "acks": "all"}) as writer:
            produce(writer, topic, [f"phase1-{i}".encode() for i in range(20)])
            before = cluster.state.partition_state(topic)
            zombie = raw(before.leader)  # connected now: the zombie will not accept new work from the controller
            tid = rr.topic_id(zombie, topic)
            Pause(cluster, before.leader, topic).inject()
            after = cluster.state.wait_for_partition(
                topic, 0, lambda s: s.leader not in (-1, before.leader) and s.leader_epoch > before.leader_epoch,
                f"a new leader replacing the paused {before.leader}",
            )
            # A new producer: the first one still waits on requests the frozen leader will never answer.
            with confluent.producer({**config, "acks": "all", **PAUSED_PEER}) as second:
                produce(second, topic, [f"phase2-{i}".encode() for i in range(30)])
            committed, replaced = _commit_through(cluster, topic, group, 49)
            expected = CommittedOffset(50, after.leader_epoch)
            assert committed == expected, (
                f"KIP-320 \"Protocol Changes / OffsetCommit\" (the commit carries \"the epoch of the previously "
                f"fetched record\"): the group read through offset 49, written at epoch {after.leader_epoch}, and "
                f"committed {committed} read back, expected {expected}"
                + (f" (after committed() raised {list(replaced)})" if replaced else ""))
            epoch = after.leader_epoch  # the committed epoch, as read back

            # While the controller sleeps, the thawed broker cannot learn that it was replaced.
            cluster.pause_controller()
            try:
                cluster.resume_node(before.leader)
                view = rr.partition_metadata(zombie, topic)
                seen = LeaderView(view["LeaderId"], view["LeaderEpoch"])
                fetch = rr.fetch(zombie, zombie.max_version("Fetch"), topic, tid, 0, committed.offset,
                                 current_epoch=epoch)
                plain = rr.fetch(zombie, zombie.max_version("Fetch"), topic, tid, 0, committed.offset)
                without_epoch = FetchAnswer(plain["ErrorCode"], plain["HighWatermark"])
                ofle = rr.offsets_for_leader_epoch(zombie, zombie.max_version("OffsetForLeaderEpoch"), topic, 0,
                                                   epoch, current_epoch=epoch)
                listed = rr.list_offsets(zombie, zombie.max_version("ListOffsets"), topic, 0, -1,
                                         current_epoch=epoch)
            finally:
                cluster.resume_controller()
            answers = [
                EpochProbe(api, zombie.max_version(api), before.leader, "leader", epoch, seen.epoch, p)
                for api, p in (("Fetch", fetch), ("OffsetForLeaderEpoch", ofle), ("ListOffsets", listed))
            ]
    finally:
        raw.close()

    require_target((seen.leader, seen.epoch) == (before.leader, before.leader_epoch),
                   f"the thawed broker {before.leader} did not stay a zombie: it no longer sees itself leading at "
                   f"epoch {before.leader_epoch}; it sees {seen}")
    assert without_epoch.error == OFFSET_OUT_OF_RANGE, (
        f"KIP-320 \"Leader Fetch Handling\" (the sentinel epoch -1 bypasses validation) and the KIP-1094 guide, "
        f"\"Committing Leader Epoch\", Phase 3: the zombie accepts a fetch without an epoch and answers an offset "
        f"past its log end with OFFSET_OUT_OF_RANGE; asked for {committed.offset}, written only on the new "
        f"leader, it answered {describe(without_epoch.error)}"
    )
    return ThawedLeaderAnswers(topic, before, after, committed, seen, without_epoch, answers, replaced)
