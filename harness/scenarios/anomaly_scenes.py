"""Scenes in which a real broker, through the protocol proxy, makes a real client's history show one of
Jepsen's anomaly classes (harness.integrity.anomaly_checks); each also runs without its rule, on a
topic of its own, where the same client calls must show nothing.

Every scene writes partition 0 of its topic with a confluent-kafka producer that sends one record at a
time (each its own batch; values v0, v1, ...) and reads it with confluent-kafka consumers assigned at
an offset; each client is a process of the history (harness.clients.recorded), named
`<topic>.<role>`, so that the histories of every scene share one folder and one Spark query. The
fault of each scene, and what it must show:

- duplicate: the first answer to the Produce of v3 refused (NOT_LEADER_OR_FOLLOWER) after the broker
  appended it (RefusePartitions); the producer, not idempotent, sends it again: v3 at two offsets.
- inconsistent-offsets: a second reader is served offset 4 with another value (ReplaceValue), as a
  diverged replica would; the first reader and the acknowledgement say v4.
- G1a: a read_committed reader is served an aborted transaction's record without its abort entry
  (HideAbortedTransactions).
- lost-write: the log serves no record at offset 5 (DropRecords); a reader of 0-4 hands over to one
  assigned at 5, which reads 6-9: v5 acknowledged below what was read, never read (and unseen).
- unseen: the log serves no record at the last offset: acknowledged, never read, above all that was.
- poll-skip: a reader is served 0-9 without offset 5, which another reader read; int-poll-skip the
  same in one client call (`consume` of the nine records).
- nonmonotonic-poll: a reader at offset 5 is answered OFFSET_OUT_OF_RANGE (OutOfRangeFrom); reset to
  the earliest offset, it reads 0 after 4.
- int-nonmonotonic-poll: the batch of offset 4 served twice in one answer (RepeatBatch); one client
  call returns v4 twice in a row.
- nonmonotonic-send: the producer's Produce of a is sent on for a partition that does not exist
  (MisdirectProduce: refused, nothing appended) and held until the request of b arrived
  (HoldProduce), then both sent on: b is appended, a, sent again after its refusal, lands after b.
- int-nonmonotonic-send: in one transaction, the requests of a and b sent on in the other order,
  their sequences exchanged (HoldProduce swap): b acknowledged below a, both truly, in one transaction.
- precommitted-read: a read_committed reader is served an open transaction's record (ServeUncommitted)
  and polls it before the transaction commits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.clients.recorded import RecordingConsumer, RecordingProducer, recording_consumer, recording_producer
from harness.cluster.base import Cluster
from harness.histories.history import Polled
from harness.integrity.timeline_plot import NemesisEvent
from harness.protocol.errors import NOT_LEADER_OR_FOLLOWER
from harness.proxy.record_faults import (
    DropRecords,
    HoldProduce,
    MisdirectProduce,
    OutOfRangeFrom,
    RepeatBatch,
    ReplaceValue,
    ServeUncommitted,
)
from harness.proxy.rules import HideAbortedTransactions, RefusePartitions, Rule
from harness.proxy.server import Proxy
from harness.waiting import Owed, wait_until

RECORDS = 10  # v0 .. v9 at offsets 0 .. 9, in the scenes without transactions
PHANTOM = b"phantom"  # the value a diverged replica serves in inconsistent-offsets
# One record a request, acknowledged by every replica; a refused Produce is sent again as a new write.
PRODUCER = {"acks": "all", "enable.idempotence": False, "linger.ms": 0, "compression.type": "none",
            "retry.backoff.ms": 50}
TXN_PRODUCER = {"acks": "all", "linger.ms": 0, "compression.type": "none"}  # idempotent, as transactions must be


@dataclass(frozen=True)
class SceneRun:
    """One run of a scene: on which topic, with its rule or without, what the rule did (its own
    account, with how often it acted), and what the clients reported besides their records."""

    scene: str
    topic: str
    ruled: bool
    rule: str
    fired: int  # of the rule that acted least
    client_errors: tuple[str, ...] = ()
    # Each rule in force, from when it was put on the proxy to when the proxy closed (ruled runs only),
    # on the histories' clock: the nemesis of the scene's timeline.
    faults: tuple[NemesisEvent, ...] = ()


@dataclass
class Stage:
    """What a scene works with: the cluster, its topic, the history folder, a transactional id, and
    whether its rule is in force (`ruled`); the proxy it opened, if any."""

    cluster: Cluster
    topic: str
    folder: Path
    ruled: bool
    transactional_id: str
    proxy: Proxy | None = None
    rules: list[Rule] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    in_force: list[tuple[Rule, int]] = field(default_factory=list)  # each rule put on the proxy, and when

    def process(self, role: str) -> str:
        return f"{self.topic}.{role}"

    def add(self, rule: Rule) -> Rule:
        """Put `rule` in force on the proxy when the scene is ruled; kept as one of the scene's rules either way."""
        assert self.proxy is not None
        self.rules.append(rule)
        if self.ruled:
            self.in_force.append((rule, time.monotonic_ns()))
            self.proxy.add(rule)
        return rule

    def direct(self) -> dict[str, object]:
        return dict(self.cluster.client_config())

    def proxied(self) -> dict[str, object]:
        assert self.proxy is not None
        return dict(self.proxy.client_config())

    def send_all(self, config: dict[str, object], values: list[str], role: str = "producer") -> list[int]:
        """Each value sent and acknowledged in turn; their offsets."""
        with recording_producer(config, self.folder, self.process(role), self.topic) as p:
            offsets = []
            for v in values:
                op = p.send(v)
                assert op.sent is not None
                if op.sent.offset is None:
                    raise AssertionError(f"{self.topic}: {v} was not acknowledged: {op.sent.error}")
                offsets.append(op.sent.offset)
            return offsets

    def read(self, config: dict[str, object], role: str, offset: int, through: int,
             done: Callable[[RecordingConsumer], bool] | None = None, batch: int = 1,
             timeout: float = 0.2) -> tuple[Polled, ...]:
        """A consumer assigned at `offset` reads until it returned `through` (or `done` holds)."""
        with recording_consumer(config, self.folder, self.process(role), self.topic, offset) as c:
            until = done or (lambda c: any(p.offset >= through for p in c.read))
            c.read_until(until, f"reading {self.topic} from {offset} through {through}", 60, batch, timeout)
            self.errors += c.errors
            return tuple(c.read)


def values(n: int = RECORDS, start: int = 0) -> list[str]:
    return [f"v{i}" for i in range(start, start + n)]


def duplicate(s: Stage) -> None:
    with recording_producer({**s.proxied(), **PRODUCER}, s.folder, s.process("producer"), s.topic) as p:
        sent = [p.send(v).sent for v in values(3)]
        s.add(RefusePartitions("Produce", error=NOT_LEADER_OR_FOLLOWER, count=1))
        sent += [p.send(v).sent for v in values(RECORDS - 3, 3)]
    acked = [x.offset for x in sent if x is not None and x.offset is not None]
    if len(acked) != RECORDS:
        raise AssertionError(f"{s.topic}: not every send was acknowledged: {sent}")
    s.read(s.direct(), "reader", 0, max(acked))


def inconsistent_offsets(s: Stage) -> None:
    last = s.send_all({**s.direct(), **PRODUCER}, values())[-1]
    s.read(s.direct(), "reader", 0, last)
    s.add(ReplaceValue(offset=4, value=PHANTOM))
    s.read(s.proxied(), "second-reader", 0, last)


def aborted_read(s: Stage) -> None:
    with recording_producer({**s.direct(), **TXN_PRODUCER}, s.folder, s.process("producer"), s.topic,
                            s.transactional_id) as p:
        p.begin()
        p.send("v0")
        p.send("v1")
        p.commit()
        p.begin()
        p.send("aborted")
        p.abort()
        p.begin()
        last = p.send("v2").sent
        p.commit()
    assert last is not None and last.offset is not None
    s.add(HideAbortedTransactions())
    s.read({**s.proxied(), "isolation.level": "read_committed"}, "reader", 0, last.offset)


def lost_write(s: Stage) -> None:
    last = s.send_all({**s.direct(), **PRODUCER}, values())[-1]
    s.add(DropRecords(offsets=frozenset({5})))
    s.read(s.proxied(), "reader", 0, 4)
    s.read(s.proxied(), "next-reader", 5, last)


def unseen(s: Stage) -> None:
    last = s.send_all({**s.direct(), **PRODUCER}, values())[-1]
    rule = s.add(DropRecords(offsets=frozenset({last})))
    assert isinstance(rule, DropRecords)

    def done(c: RecordingConsumer) -> bool:
        # Through the last record, or to the one before it and refused the last when it asked for it.
        read = {p.offset for p in c.read}
        return last in read or (last - 1 in read and rule.left_out_at(last))

    s.read(s.proxied(), "reader", 0, last, done)


def poll_skip(s: Stage, batch: int = 1) -> None:
    last = s.send_all({**s.direct(), **PRODUCER}, values())[-1]
    s.read(s.direct(), "reader", 0, last)
    s.add(DropRecords(offsets=frozenset({5})))
    # In one call (`batch`): every record the answer holds, at once (the rule leaves RECORDS - 1).
    s.read(s.proxied(), "skipping-reader", 0, last, batch=batch, timeout=0.2 if batch == 1 else 20)


def int_poll_skip(s: Stage) -> None:
    poll_skip(s, batch=RECORDS - 1)


def int_nonmonotonic_poll(s: Stage) -> None:
    last = s.send_all({**s.direct(), **PRODUCER}, values())[-1]
    s.add(RepeatBatch(offset=4))
    # One call takes RECORDS records: ruled, v0-v4, v4 again, v5-v8 (then v9 in the next call).
    s.read(s.proxied(), "reader", 0, last, batch=RECORDS, timeout=20)


def _send_pair(s: Stage, p: RecordingProducer) -> None:
    """`p` sends a, then b as soon as a's request reached the proxy, without waiting for a's answer:
    two Produce requests in flight on one connection."""
    assert s.proxy is not None
    proxy = s.proxy
    asked = len(proxy.recording.exchanges("Produce"))

    def a_left() -> None:
        wait_until(lambda: len(proxy.recording.exchanges("Produce")) > asked, 30,
                   lambda: f"the Produce of a never reached the proxy ({proxy.recording.summary('Produce')})",
                   owed=Owed.HARNESS)

    p.send_many(["a", "b"], a_left)


def nonmonotonic_send(s: Stage) -> None:
    with recording_producer({**s.proxied(), **PRODUCER}, s.folder, s.process("producer"), s.topic) as p:
        for v in values(3):
            p.send(v)
        s.add(MisdirectProduce())
        # a's request held until b's arrives, then both sent on in order: a's refusal reaches the
        # producer only after b's request reached the broker, so a, sent again, lands after b
        # (a timer on a's answer, as before, was a sleep standing for that order).
        s.add(HoldProduce())
        _send_pair(s, p)
        last = p.send("v3").sent
    assert last is not None and last.offset is not None
    s.read(s.direct(), "reader", 0, last.offset)


def int_nonmonotonic_send(s: Stage) -> None:
    """One transaction sends v0-v2, then a and b pipelined, then v3. Ruled, the broker takes b's
    request before a's, their sequences exchanged (HoldProduce swap): b is appended and
    acknowledged at 3, a at 4, each answer given in the order the producer asked. Read committed."""
    with recording_producer({**s.proxied(), **TXN_PRODUCER}, s.folder, s.process("producer"), s.topic,
                            s.transactional_id) as p:
        p.begin()
        for v in values(3):
            p.send(v)
        s.add(HoldProduce(swap=True))
        _send_pair(s, p)
        last = p.send("v3").sent
        p.commit()
    assert last is not None and last.offset is not None
    s.read({**s.direct(), "isolation.level": "read_committed"}, "reader", 0, last.offset)


def nonmonotonic_poll(s: Stage) -> None:
    with recording_consumer(s.proxied(), s.folder, s.process("reader"), s.topic, 0) as c:
        first = s.send_all({**s.direct(), **PRODUCER}, values(5))
        c.read_through(first[-1])
        s.add(OutOfRangeFrom(offset=first[-1] + 1))
        last = s.send_all({**s.direct(), **PRODUCER}, values(5, 5), role="second-producer")[-1]
        c.read_through(last)
        s.errors += c.errors


def precommitted_read(s: Stage) -> None:
    with recording_producer({**s.direct(), **TXN_PRODUCER}, s.folder, s.process("producer"), s.topic,
                            s.transactional_id) as p:
        p.begin()
        sent = p.send("v0").sent
        assert sent is not None and sent.offset is not None
        s.add(ServeUncommitted())
        config = {**s.proxied(), "isolation.level": "read_committed"}
        with recording_consumer(config, s.folder, s.process("reader"), s.topic, 0) as c:
            # Ruled, the reader polls the open transaction's record; without the rule the broker
            # answers its Fetch at that offset (the record is below the high watermark) with nothing.
            assert s.proxy is not None
            proxy, offset = s.proxy, sent.offset

            def answered() -> bool:
                c.poll()
                return _fetch_answered_beyond(proxy, offset)

            if s.ruled:
                c.read_through(offset)
            else:
                # These scenes test kcts's own anomaly checker, not the target: a scene that does not
                # come about is the harness's to explain (an ERROR), never a refusal to skip past.
                wait_until(answered, 60, lambda: f"no Fetch of {s.topic} answered with a high watermark above {offset}",
                           interval=0, owed=Owed.HARNESS)
            p.commit()
            c.read_through(sent.offset)
            s.errors += c.errors


def _read_partitions(s: Stage, through: dict[int, int]) -> None:
    """A read_committed reader of each partition, from 0 through its offset."""
    for partition, last in through.items():
        with recording_consumer({**s.direct(), "isolation.level": "read_committed"}, s.folder,
                                s.process(f"reader-{partition}"), s.topic, 0, partition) as c:
            c.read_through(last)
            s.errors += c.errors


def g0(s: Stage) -> None:
    """Two transactions write partitions 0 and 1, interleaved (`ruled`): t1 before t2 in partition 0,
    t2 before t1 in partition 1. Kafka does not isolate writes (Jepsen allows G0 for Kafka); without
    interleaving, t1 writes both before t2 begins."""
    config = {**s.direct(), **TXN_PRODUCER}
    with recording_producer(config, s.folder, s.process("p1"), s.topic, f"{s.transactional_id}-1") as p1, \
            recording_producer(config, s.folder, s.process("p2"), s.topic, f"{s.transactional_id}-2") as p2:
        if s.ruled:
            p1.begin()
            p2.begin()
            p1.send("x1", 0)
            p2.send("y1", 1)
            p2.send("x2", 0)
            p1.send("y2", 1)
            p1.commit()
            p2.commit()
        else:
            p1.begin()
            p1.send("x1", 0)
            p1.send("y2", 1)
            p1.commit()
            p2.begin()
            p2.send("x2", 0)
            p2.send("y1", 1)
            p2.commit()
    _read_partitions(s, {0: 1, 1: 1})


def g1c(s: Stage) -> None:
    """t1 writes partition 0 and, inside its transaction, polls what t2 wrote to partition 1 after
    t2 committed: t2 <wr t1. `ruled`: t1 wrote partition 0 before t2 did (t1 <ww t2), a cycle
    through a wr edge, with no uncommitted read; without it, t2 writes partition 0 first."""
    config = {**s.direct(), **TXN_PRODUCER}
    with recording_producer(config, s.folder, s.process("p1"), s.topic, f"{s.transactional_id}-1") as p1, \
            recording_producer(config, s.folder, s.process("p2"), s.topic, f"{s.transactional_id}-2") as p2:
        if not s.ruled:
            p2.begin()
            p2.send("x2", 0)
        t1 = p1.begin()
        p1.send("x1", 0)
        if s.ruled:
            p2.begin()
            p2.send("x2", 0)
        y = p2.send("y", 1).sent
        p2.commit()
        assert y is not None and y.offset is not None
        with recording_consumer({**s.direct(), "isolation.level": "read_committed"}, s.folder,
                                s.process("p1-reader"), s.topic, 0, 1) as c:
            c.txn = t1
            c.read_through(y.offset)
            s.errors += c.errors
        p1.commit()
    _read_partitions(s, {0: 1})


SCENES: dict[str, Callable[[Stage], None]] = {
    "duplicate": duplicate,
    "inconsistent-offsets": inconsistent_offsets,
    "G1a": aborted_read,
    "lost-write": lost_write,
    "unseen": unseen,
    "poll-skip": poll_skip,
    "int-poll-skip": int_poll_skip,
    "nonmonotonic-poll": nonmonotonic_poll,
    "int-nonmonotonic-poll": int_nonmonotonic_poll,
    "nonmonotonic-send": nonmonotonic_send,
    "int-nonmonotonic-send": int_nonmonotonic_send,
    "precommitted-read": precommitted_read,
}
# Cycles over transactions, which a correct Kafka makes (its writes are not isolated): the ruled run
# interleaves the transactions, the other does not. Judged with the cycle search (`with_cycles`).
CYCLE_SCENES: dict[str, Callable[[Stage], None]] = {"G0": g0, "G1c": g1c}
PARTITIONS = {"G0": 2, "G1c": 2}


def run_scene(cluster: Cluster, scene: str, topic: str, folder: Path, ruled: bool, transactional_id: str) -> SceneRun:
    """`scene` on `topic` (one partition), its clients' histories written to `folder`; with its rule in
    force when `ruled`. The proxy is the scene's own and is closed on return."""
    with Proxy.for_cluster(cluster) as proxy:
        stage = Stage(cluster, topic, folder, ruled, transactional_id, proxy)
        {**SCENES, **CYCLE_SCENES}[scene](stage)
        proxy.check()
        rules = stage.rules
        lifted = time.monotonic_ns()
        faults = tuple(NemesisEvent(at, f"proxy: {r.describe()}", lifted) for r, at in stage.in_force)
        # `fired`: how often the least used rule acted (a scene's rules must all have).
        return SceneRun(scene, topic, ruled, "; ".join(r.describe() for r in rules) or "none",
                        min((r.fired for r in rules), default=0), tuple(stage.errors), faults)


def _fetch_answered_beyond(proxy: Proxy, offset: int) -> bool:
    """Whether the proxy passed on a Fetch answer naming a high watermark above `offset`."""
    for e in proxy.recording.exchanges("Fetch"):
        body = e.response
        if body is None:
            continue
        if any(p.get("HighWatermark", -1) > offset for t in body.get("Responses") or ()
               for p in t.get("Partitions") or ()):
            return True
    return False
