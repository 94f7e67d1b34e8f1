"""A log of committed and aborted transactions, read by each client stack at an isolation level.

- `interleaved`: one transactional producer writes five transactions of three records, committed,
  aborted, committed, aborted, committed, each marker written before the next begins; the log ends in
  the last COMMIT marker, so its last data record is committed and visible at either level.
- `read_at`: a client stack's consumer, a member of a new group, reads that log from its start at
  read_uncommitted or read_committed until it hands the application the last data record (records
  come in offset order, so by then every earlier one was handed or skipped); where READ_THROUGH_S
  pass first, `ReadNotThrough` holds what it handed by then (a client that took a committed record
  for an aborted one never hands it). librdkafka and franz-go in their consumers driver
  (harness/clients/stacks); Java in Kip1094NextOffsets, which takes the isolation level.

One producer id writes every transaction: a client that trusts the order of a Fetch answer's aborted
transactions per producer (franz-go before v1.21.4) meets several of that producer's in one answer.
"""

from __future__ import annotations

from harness import confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients import txn_refusal
from harness.clients.driver import READ_THROUGH_S, stopped_on_exit
from harness.clients.jvm import JavaClient
from harness.clients.produce_read import produce
from harness.clients.stacks import JAVA, client_version, consumers_driver
from harness.cluster.base import Cluster
from harness.errors import DriverUnavailable, TargetRefused
from harness.histories.client_reads import IsolationRead
from harness.histories.observations import ClientEvent
from harness.kafka.dist import resolve
from harness.protocol.exceptions import CorruptRecordError
from harness.protocol.records import describe_log
from harness.scenarios.kip1094 import Log, NotReadThrough, read_log
from harness.waiting import Owed, WaitTimeout, wait_until

OUTCOMES = ("COMMIT", "ABORT", "COMMIT", "ABORT", "COMMIT")
RECORDS = 3  # each transaction's
ISOLATIONS = ("read_uncommitted", "read_committed")


def interleaved(cluster: Cluster, topic: str, transactional_id: str) -> Log:
    """`OUTCOMES` written to partition 0 of `topic` by one transactional producer; returned once every
    marker is in the log."""
    raw = rr.RawConnector(cluster)
    try:
        tx.require_transactions(raw(cluster.state.running_brokers()[0]))
        with confluent.producer({**cluster.client_config(), "transactional.id": transactional_id}) as txn:
            txn_refusal.init_transactions(txn, transactional_id, 30)
            for i, outcome in enumerate(OUTCOMES):
                txn.begin_transaction()
                produce(txn, topic, [f"txn{i}-{outcome.lower()}-{n}".encode() for n in range(RECORDS)])
                if outcome == "COMMIT":
                    txn.commit_transaction(30)
                else:
                    txn.abort_transaction(30)

        def written() -> Log | None:
            try:
                log = read_log(cluster, raw, topic)
            except CorruptRecordError as exc:
                raise TargetRefused(f"the target wrote {topic}'s log with a batch kcts cannot read: {exc}") from exc
            return log if tuple(b.control_type() for b in log.batches if b.is_control) == OUTCOMES else None

        # The coordinator writes the markers after commit_transaction or abort_transaction returns.
        return wait_until(written, 30, lambda: f"the markers {list(OUTCOMES)} in {topic}: "
                                               f"{describe_log(read_log(cluster, raw, topic).batches)}",
                          owed=Owed.PREMISE)
    finally:
        raw.close()


def last_data(log: Log) -> int:
    return max(b.last_offset for b in log.batches if not b.is_control)


def read_at(cluster: Cluster, log: Log, group: str, client: str, isolation: str) -> IsolationRead:
    """`client` reads `log` from its start at `isolation` in `group` through its last data record."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation {isolation!r}: one of {ISOLATIONS}")
    if client == JAVA:
        return _java(cluster, log, group, isolation)
    name = f"{client}/{isolation}"
    last = last_data(log)
    driver = consumers_driver(client, cluster.java_clients, cluster.client_config(), log.topic)
    with driver, stopped_on_exit(driver):
        driver.wait_ready()
        line = f"subscribe {name} earliest {group} {isolation}"
        driver.send_line(line)
        took = driver.wait_for(lambda e: e.get("event") in ("done", "command_failed") and e.get("command") == line,
                               30, line)
        if took["event"] == "command_failed":
            raise DriverUnavailable(f"kcts's {client} consumers driver takes no isolation level: {took}")

        stalled: WaitTimeout | None = None
        try:
            driver.wait_for(lambda e: e.get("event") == "record" and e["consumer"] == name and e["offset"] >= last,
                            READ_THROUGH_S, f"{name} reads through {last}")
        except WaitTimeout as exc:
            stalled = exc
        events = tuple(ClientEvent.of(e) for e in driver.events if e.get("consumer") == name)
        version = client_version(driver) or client
    read = IsolationRead(version, isolation, tuple(int(e.get("offset")) for e in events if e.event == "record"),
                         tuple(e for e in events if e.event == "error"), stalled is None, READ_THROUGH_S)
    if stalled is not None:
        raise ReadNotThrough(stalled, read, events)
    return read


class ReadNotThrough(NotReadThrough):
    """A consumer that did not hand the log's last data record within READ_THROUGH_S: `partial` is what it
    handed by then, for the suite to judge where it handed what it must not (a client that took a
    committed record for an aborted one never hands it) and to leave to NotReadThrough's reading
    otherwise."""

    def __init__(self, timeout: WaitTimeout, partial: IsolationRead, events: tuple[ClientEvent, ...]) -> None:
        super().__init__(timeout, partial.client, events)
        self.partial = partial


def _java(cluster: Cluster, log: Log, group: str, isolation: str) -> IsolationRead:
    """Kip1094NextOffsets at `isolation` until its position reaches the log end (or its 30 s pass)."""
    args = [cluster.bootstrap_servers, log.topic, "0", group, isolation, "500", str(log.end)]
    with JavaClient.driver(resolve(cluster.java_clients), "Kip1094NextOffsets", args,
                           config=cluster.client_config()) as driver:
        code = driver.wait_exit(90)
    assert code == 0, f"Kip1094NextOffsets exited {code}: {driver.describe()}"
    read: list[int] = []
    for e in driver.events:
        if e.get("event") == "poll":
            read += [int(r[0]) for r in e.get("records") or ()]
    return IsolationRead(f"java (kafka-clients {cluster.java_clients})", isolation, tuple(read), (),
                         last_data(log) in read, 30.0)
