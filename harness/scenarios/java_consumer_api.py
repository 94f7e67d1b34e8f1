"""The Java consumer's KIP-320 API, driven through the protocol proxy (harness/clients/java/Kip320ConsumerApi.java).

`two_epoch_log`: a 3-replica partition with BEFORE records at its first epoch, a leader move, AFTER
more; the leader then answers OffsetsForLeaderEpoch for the first epoch with the offset where the
second starts (`moved_at`), so a position set by seek(tp, OffsetAndMetadata(offset, first epoch))
beyond `moved_at` is a truncation to the client's validation: the log it claims to have read in that
epoch ended earlier (KIP-320 "Consumer Handling"; what an unclean election leaves, without one).

- `seek_past_the_epoch_end`: a consumer with auto.offset.reset `reset` seeks to (moved_at + PAST,
  first epoch) and is polled until it read the log's last record, raised, or POLL_MS passed. kafka-clients
  validates a position only where the leader advertises OffsetForLeaderEpoch v3+ (harness.histories.
  version_needs.TRUNCATION_DETECTION): against a leader without it there is no truncation to find,
  and the scene ends "not supported by this target" before any client runs, the leader's ranges the
  evidence.
- `seek_while_idle`: a consumer reads the partition, is left alone until it has sent nothing for
  QUIET_S, is told to seek to (an offset of the first epoch, that epoch), and left alone SETTLE_S more;
  then it is polled again. Every request it sent through the proxy is recorded with when.
- `commits_by_constructor`: a member of a fresh group reads the partition to its end (the second
  epoch), then commits three offsets of the first epoch, built by OffsetAndMetadata(offset),
  OffsetAndMetadata(offset, metadata) and OffsetAndMetadata(offset, Optional.of(first epoch), metadata).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness import confluent, session
from harness.clients import raw as rr
from harness.clients.driver import ClientDriver, stopped_on_exit
from harness.clients.jvm import JavaClient
from harness.clients.produce_read import produce
from harness.clients.stacks import JAVA
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.histories.client_reactions import ClientRecord
from harness.histories.java_consumer_api import (
    CommitMade,
    OldConstructorCommits,
    RaisedError,
    SeekTruncation,
    SeekWindow,
    SentAt,
    TwoEpochLog,
)
from harness.histories.truncation import Divergence
from harness.histories.version_needs import VALIDATION_APIS, require_offered, truncation_detection
from harness.kafka.dist import resolve
from harness.nemesis.leadership import move_leader
from harness.proxy.server import Proxy
from harness.scenarios.advertised import leader_offers
from harness.scenarios.client_validation import partition_asks
from harness.waiting import Owed, wait_until

BEFORE, AFTER = 20, 10
PAST = 5  # how far past the first epoch's end the truncation scene seeks
POLL_MS = 15_000
QUIET_S, SETTLE_S = 1.5, 1.5
DRIVER = "Kip320ConsumerApi"


def two_epoch_log(cluster: Cluster, topic: str) -> TwoEpochLog:
    """See the module."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        before = cluster.state.partition_state(topic)
        first = produce(producer, topic, [f"before-{i}".encode() for i in range(BEFORE)])
        moved = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        second = produce(producer, topic, [f"after-{i}".encode() for i in range(AFTER)])
    written = sorted((ClientRecord(w.offset, w.value.decode()) for w in first.acked + second.acked),
                     key=lambda r: r.offset)
    offsets = [r.offset for r in written]
    require_target(not first.failed and not second.failed and offsets == list(range(BEFORE + AFTER)),
                   f"{topic}-0 took the writes at {offsets}, not 0..{BEFORE + AFTER - 1}")
    return TwoEpochLog(topic, before.leader_epoch, moved.leader_epoch, BEFORE, tuple(written))


@contextmanager
def _driver(cluster: Cluster, proxy: Proxy, topic: str, scene: str) -> Iterator[tuple[ClientDriver, Path]]:
    """The driver, started through `proxy`, and the path of its client log."""
    log = session.current().scratch("clients") / f"java-consumer-api-{scene}-{topic}.log"
    config = proxy.client_config()
    driver = JavaClient.driver(resolve(cluster.java_clients), DRIVER, [str(config["bootstrap.servers"]), topic, "0",
                                                                      str(log)], config=config)
    with driver, stopped_on_exit(driver):
        driver.wait_ready()
        yield driver, log


def _command(driver: ClientDriver, line: str, timeout: float = 30) -> None:
    """Send `line`; return once its "done" or "command_failed" event came (the events are read later)."""
    mark = len(driver.events)
    driver.send_line(line)
    driver.wait_for(lambda e: e.get("event") in ("done", "command_failed") and e.get("command") == line,
                           timeout, line, since=mark)


def _refused(driver: ClientDriver) -> tuple[str, ...]:
    return tuple(f"{e.get('command')}: {e.get('exception')}: {e.get('message')}" for e in driver.events
                 if e.get("event") == "command_failed")


def _reads(driver: ClientDriver, name: str, since: int = 0) -> tuple[ClientRecord, ...]:
    return tuple(ClientRecord(int(e["offset"]), str(e["value"]), e.get("epoch")) for e in driver.events[since:]
                 if e.get("event") == "record" and e.get("consumer") == name)


def _errors(driver: ClientDriver, name: str) -> tuple[RaisedError, ...]:
    return tuple(RaisedError(str(e["exception"]), str(e.get("message")), str(e["caught_as"]), bool(e["out_of_range"]),
                             tuple(e.get("types") or ()),
                             tuple(Divergence(int(d["partition"]), int(d["offset"]), int(d["epoch"]))
                                   for d in e.get("divergent") or ()))
                 for e in driver.events if e.get("event") == "error" and e.get("consumer") == name)


def _version(cluster: Cluster) -> str:
    return f"kafka-clients {cluster.java_clients}"


def seek_past_the_epoch_end(cluster: Cluster, log: TwoEpochLog, reset: str) -> SeekTruncation:
    """See the module."""
    name = f"seek-past-{reset}"  # no "truncat" in it: the check looks for that word in the client log
    sought, epoch = log.moved_at + PAST, log.epoch_before
    require_offered(truncation_detection(JAVA), leader_offers(cluster, log.topic, *VALIDATION_APIS))
    with Proxy.for_cluster(cluster) as proxy:
        with rr.RawConnector(cluster) as raw:
            tid = rr.topic_id(raw(), log.topic)
        with _driver(cluster, proxy, log.topic, name) as (driver, path):
            _command(driver, f"open {name} {reset} -")
            _command(driver, f"seek {name} {sought} {epoch}")
            _command(driver, f"poll {name} {POLL_MS} {log.written[-1].offset}", timeout=POLL_MS / 1000 + 30)
            reads, errors, refused = _reads(driver, name), _errors(driver, name), _refused(driver)
            _command(driver, f"close {name}")
        asks = tuple(a for a in partition_asks(proxy, log.topic, tid) if a.client_id == name)
    lines = tuple(path.read_text().splitlines()) if path.exists() else ()
    return SeekTruncation(_version(cluster), reset, log, sought, epoch, asks, reads, errors, lines, refused)


def seek_while_idle(cluster: Cluster, log: TwoEpochLog) -> SeekWindow:
    """See the module."""
    name = "idle-seek"
    sought, epoch = 5, log.epoch_before
    with Proxy.for_cluster(cluster) as proxy:
        t0 = time.monotonic()

        def sent() -> list[SentAt]:
            return [SentAt(round(e.started - t0, 4), e.api, e.version)
                    for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started) if e.client_id == name]

        with _driver(cluster, proxy, log.topic, name) as (driver, _):
            _command(driver, f"open {name} earliest -")
            _command(driver, f"poll {name} {POLL_MS} {log.written[-1].offset}", timeout=POLL_MS / 1000 + 30)

            def quiet() -> bool:
                last = max((s.at for s in sent()), default=0.0)
                return time.monotonic() - t0 - last >= QUIET_S

            wait_until(quiet, 30, lambda: f"{name} sending nothing for {QUIET_S}s: its last requests "
                                          f"{[(s.at, s.api) for s in sent()[-5:]]}", owed=Owed.PREMISE)
            last = max((s.at for s in sent()), default=0.0)
            opened = round(time.monotonic() - t0, 4)
            mark = len(driver.events)
            _command(driver, f"seek {name} {sought} {epoch}")
            answer = next((e for e in driver.events[mark:] if e.get("event") == "sought"), {})
            answered = round(time.monotonic() - t0, 4)
            time.sleep(SETTLE_S)
            closed = round(time.monotonic() - t0, 4)
            _command(driver, f"poll {name} 3000 {log.written[-1].offset}", timeout=40)
            refused = _refused(driver)
            _command(driver, f"close {name}")
        seen = tuple(sent())
    return SeekWindow(_version(cluster), log, sought, epoch, round(opened - last, 4), (opened, closed),
                      answered, int(answer.get("nanos", -1)), seen, refused)


def _offset_commits(proxy: Proxy, topic: str, tid: uuid.UUID | None, offset: int) -> tuple[tuple[int, int], ...]:
    return tuple((e.version, p.get("CommittedLeaderEpoch", -1))
                 for e in sorted(proxy.recording.exchanges("OffsetCommit"), key=lambda e: e.started)
                 if e.request is not None
                 for t in e.request.get("Topics") or () if t.get("Name") == topic or t.get("TopicId") == tid
                 for p in t.get("Partitions") or ()
                 if p.get("PartitionIndex") == 0 and p.get("CommittedOffset") == offset)


def commits_by_constructor(cluster: Cluster, log: TwoEpochLog, group: str) -> OldConstructorCommits:
    """See the module."""
    name = "committer"
    modes = [("offset", 5), ("metadata", 6), (f"epoch:{log.epoch_before}", 7)]
    with Proxy.for_cluster(cluster) as proxy:
        with rr.RawConnector(cluster) as raw:
            tid = rr.topic_id(raw(), log.topic)
        with _driver(cluster, proxy, log.topic, name) as (driver, _):
            _command(driver, f"open {name} earliest {group}")
            _command(driver, f"poll {name} {POLL_MS} {log.written[-1].offset}", timeout=POLL_MS / 1000 + 30)
            reads = _reads(driver, name)
            answers = []
            for mode, offset in modes:
                mark = len(driver.events)
                _command(driver, f"commit {name} {offset} {mode}")
                answers.append((mode, offset, next((e for e in driver.events[mark:] if e.get("event") == "committed"),
                                                   None)))
            refused = _refused(driver)
            _command(driver, f"close {name}")
        commits = tuple(CommitMade(mode, offset, int(a["built_epoch"]), int(a["read_offset"]), int(a["read_epoch"]),
                                   _offset_commits(proxy, log.topic, tid, offset))
                        for mode, offset, a in answers if a is not None)
    consumed = reads[-1].epoch if reads and reads[-1].epoch is not None else -1
    return OldConstructorCommits(_version(cluster), log, consumed, reads, commits, refused)
