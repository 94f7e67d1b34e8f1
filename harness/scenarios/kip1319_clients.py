"""KIP-1319 situations on the client side: one function per situation, each driving the stack asked for.

A situation is what the client is asked to do and what the protocol proxy in front of the cluster
does to it: commit consumed offsets (`copy`), with TxnOffsetCommit capped at v5 in ApiVersions
(`capped`), with Metadata answering a topic without its ID (`without_topic_id`; with a small
max.block.ms, `bounded_wait`), with v6 commits
answered UNKNOWN_TOPIC_ID (`retrying`), with one topic of two answered UNKNOWN_TOPIC_ID (`mixed`),
with v6 answered a group error (`group_error`). The proxy records every TxnOffsetCommit and applies
the fault. After the run, OffsetFetch reads what the group committed and a read_committed consumer
reads the output partition. Everything lands in a `ClientRun` (harness.histories.kip1319).

The stacks: the Java producer (small drivers, harness/clients/java/Kip1319Txn.java: one transaction
with sendOffsetsToTransaction on offsets chosen here; Kip1319Copier.java: a consume-transform-produce
loop as a group member), franz-go (harness/clients/go/copier.go, a GroupTransactSession: franz-go
commits offsets in a transaction only from one) and librdkafka (harness/clients/drivers/
txn_commit.py, one transaction). A run says which kind of driver made it (`ClientRun.copier`), for
the checks whose judgement depends on it: a copier redoes an aborted transaction.

Which stack can be driven through which situation is data (`STACKS`): librdkafka never sends v6
(its known gap `librdkafka-txn-offset-commit-v3`), so it is in the first situation only, where the
check says so.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from confluent_kafka import IsolationLevel, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from packaging.version import Version

from harness import confluent, session
from harness.clients import stacks, txn_refusal
from harness.clients import transactions as tx
from harness.clients.driver import ClientDriver
from harness.clients.jvm import JavaClient
from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.errors import ClientLacks, NotSupported, PromiseUnkept, SetupError
from harness.histories.kip1319 import ClientRun, Injected
from harness.histories.observations import Body, ClientEvent, FetchedOffset, ObservedExchange, OffsetCommit
from harness.kafka.dist import resolve
from harness.protocol import errors
from harness.proxy import CapVersion, ProxiedExchange, Proxy, ReplaceErrors, ReplaceTopicErrors, Rule, StripTopicIds
from harness.scenarios.kip1319 import (
    COORDINATOR,
    FIRST_KIP1319_CLIENT,
    KIP_VERSION,
    TXN_OFFSET_COMMIT,
    advertised,
    fetch_committed,
    side_topic,
)
from harness.waiting import Owed, wait_until

TXN_RECORDS = 3  # values one Kip1319Txn transaction writes: txn-value-0 .. txn-value-2
LIBRDKAFKA, JAVA = stacks.LIBRDKAFKA, stacks.JAVA

# The stacks each situation drives. librdkafka sends TxnOffsetCommit v3 at most (known gap
# librdkafka-txn-offset-commit-v3): the situations that fault, retry or fall back from v6 have
# nothing of it to judge, and the sends-v6 check (`copy`) is where that gap is stated.
# Every other stack is driven through its `copier` role (harness/clients/stacks/base.py), as franz-go
# is: a stack whose client has no transactions says so there ("not supported by this client").
COPIERS = tuple(name for name in stacks.STACKS if name not in (LIBRDKAFKA, JAVA))
STACKS: dict[str, tuple[str, ...]] = {
    "copy": (LIBRDKAFKA, JAVA, *COPIERS),
    "capped": (JAVA, *COPIERS),
    "without_topic_id": (JAVA, *COPIERS),
    "retrying": (JAVA, *COPIERS),
    "mixed": (JAVA, *COPIERS),
    "group_error": (JAVA, *COPIERS),
    # max.block.ms is the Java producer's: franz-go has no such bound to hold it to.
    "bounded_wait": (JAVA,),
}
# The known client gaps a check of a situation may meet, by stack (harness/client_gaps.toml).
GAPS = {LIBRDKAFKA: "librdkafka-txn-offset-commit-v3", "kafka-python": "kafka-python-txn-offset-commit-v3",
        "aiokafka": "aiokafka-txn-offset-commit-v0", "kafkajs": "kafkajs-txn-offset-commit-v1",
        "platformatic-kafka": "platformatic-kafka-txn-offset-commit-v4"}
# The copier stacks whose client has no TxnOffsetCommit v6 (no KIP-1319), with the source that shows
# it: the sends-v6 check (`copy`) judges that; every other situation is about how a KIP-1319 client
# negotiates, falls back from or handles errors of v6, "not supported by this client".
WITHOUT_V6 = {
    "kafka-python": "kafka/producer/transaction_manager.py, TxnOffsetCommitHandler._build_request: max_version=3 "
                    "(\"max_version is the highest version this client knows how to drive: v4/v5 belong to KIP-890\")",
    "aiokafka": "aiokafka/protocol/transaction.py: TxnOffsetCommitRequest has one version, TxnOffsetCommitRequest_v0 "
                "(no KIP-447 member fields, no KIP-1319 v6)",
    "kafkajs": "src/protocol/requests/txnOffsetCommit/index.js: TxnOffsetCommit versions 0 and 1 only (no KIP-1319 v6)",
    "platformatic-kafka": "dist/apis/producer/: txn-offset-commit-v0.js to v4.js only (no KIP-1319 v6), the highest "
                          "both sides have chosen by Base#kGetApi (dist/clients/base/base.js)",
}

NewTopic = Callable[[], str]  # `new_topic()` -> a fresh, ready topic of this check


@dataclass(frozen=True)
class Offset:
    """An offset handed to sendOffsetsToTransaction (leader epoch None: the driver gives none)."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int | None = None

    def arg(self) -> str:
        epoch = "" if self.leader_epoch is None else f":{self.leader_epoch}"
        return f"{self.topic}:{self.partition}:{self.offset}{epoch}"


def proxy_exchange(e: ProxiedExchange, role: str | None = None) -> ObservedExchange:
    """An exchange the proxy recorded, as the histories keep it (`role`: what the broker was to it)."""
    return ObservedExchange(e.api, e.version, e.request or {}, e.response, e.upstream, role, e.outcome, tuple(e.rules))


def _injected(rule: Rule | None, topic_id: uuid.UUID | None = None) -> Injected | None:
    if rule is None:
        return None
    return Injected(rule.describe(), getattr(rule, "error", None), rule.fired, rule.count, topic_id)


def read_committed(config: dict[str, str], topic: str, partition: int = 0, timeout: float = 30.0) -> list[bytes]:
    """Values visible to read_committed, read until the consumer's position reaches the log end.

    The position passes the log end's last offset only once the last stable offset got there, i.e.
    once every transaction on the partition has its commit or abort marker. The log end is asked
    with READ_UNCOMMITTED: a read_committed watermark query answers the last stable offset, which is
    0 while the coordinator has yet to write the first transaction's marker (EndTxn returns before
    the markers are written), and would end the read before it began.
    """
    settings = {
        **config, "group.id": f"kcts-read-committed-{uuid.uuid4().hex[:8]}",
        "isolation.level": "read_committed", "enable.auto.commit": False, "auto.offset.reset": "earliest",
        # The last fetch before the end waits this long for data that will not come.
        "fetch.wait.max.ms": 50,
    }
    values: list[bytes] = []
    state: dict[str, object] = {}
    with confluent.consumer(settings) as consumer, confluent.admin(config) as admin:
        consumer.assign([TopicPartition(topic, partition, 0)])

        def caught_up() -> bool:
            batch = consumer.consume(1000, 0.2)
            for msg in batch:
                err = msg.error()
                if err is None:
                    values.append(msg.value())
                elif err.code() != KafkaError._PARTITION_EOF:
                    raise AssertionError(f"read_committed consumer error on {topic}-{partition}: {err}")
            if batch:
                return False  # drain first: the watermark query queues behind the consumer's long-poll fetch
            high = log_end(admin, topic, partition)
            position = consumer.position([TopicPartition(topic, partition)])[0].offset
            state.update(log_end=high, position=position, values=len(values))
            return position >= high

        # The last stable offset reaching the log end (every transaction marked) is the scene's end;
        # the checks judge what read_committed saw, not how long the markers took.
        wait_until(caught_up, timeout, lambda: f"read_committed of {topic}-{partition}: {state}", interval=0,
                   owed=Owed.PREMISE)
    return values


def log_end(admin: AdminClient, topic: str, partition: int) -> int:
    """The partition's high watermark, whatever transactions are open on it."""
    tp = TopicPartition(topic, partition)
    answer = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=IsolationLevel.READ_UNCOMMITTED)
    return int(answer[tp].result(timeout=10).offset)


def _asked(cluster: Cluster, offsets: Sequence[Offset]) -> tuple[OffsetCommit, ...]:
    with RawConnector(cluster) as raw:
        ids = tx.topic_ids(raw(), sorted({o.topic for o in offsets}))
    return tuple(OffsetCommit(o.topic, ids[o.topic], o.partition, o.offset, o.leader_epoch) for o in offsets)


def _run_java(
    cluster: Cluster, driver: str, args: list[str], group: str, sink: str, asked: tuple[OffsetCommit, ...],
    written: list[bytes], rule: Rule | None = None, timeout: float = 120.0, failed: uuid.UUID | None = None,
) -> ClientRun:
    """Run the Java `driver` (its `--bootstrap-server` the proxy's) to its end, then read back what it
    left. A kafka-clients release before KIP-1319 that sent no v6 lacks the KIP: the check ends as
    "not supported by this client", with the versions it sent."""
    dist = resolve(java_release(cluster))
    if "--group-protocol" in args and args[args.index("--group-protocol") + 1] == "consumer":
        _require_consumer_protocol(cluster, driver)

    def java(proxy: Proxy) -> ClientDriver:
        return JavaClient.driver(dist, driver, ["--bootstrap-server", proxy.bootstrap_servers, *args],
                                 config=proxy.client_config())

    run = _run_driver(cluster, f"Java {dist.version} {driver}", java, group, sink, asked, written, rule, timeout,
                      copier=driver == "Kip1319Copier", failed=failed)
    sent = sorted({c.version for c in run.commits})
    if Version(dist.version) < Version(FIRST_KIP1319_CLIENT) and KIP_VERSION not in sent:
        what = f"TxnOffsetCommit v6 and its negotiation (KIP-1319, first in kafka-clients {FIRST_KIP1319_CLIENT})"
        raise ClientLacks(f"kafka-clients {dist.version}", what,
                          f"sendOffsetsToTransaction sent TxnOffsetCommit {sent}; {run.broker.describe()}")
    return run


CONSUMER_GROUP_HEARTBEAT = 68  # KIP-848's API key: a broker without it has no consumer group protocol


def _require_consumer_protocol(cluster: Cluster, driver: str) -> None:
    """The Java group member of `driver` speaks KIP-848's consumer protocol: a target that does not serve
    it (Apache Kafka before 4.0) lacks it, instead of a copy that never starts."""
    with RawConnector(cluster) as raw:
        client = raw()
        versions = client.broker_versions.get(CONSUMER_GROUP_HEARTBEAT)
        probe = (None if versions is None
                 else tx.consumer_protocol_probe(client, f"kcts-probe-{uuid.uuid4().hex[:10]}").response)
        lacking = consumer_protocol_lacking(f"{client.host}:{client.port}", versions, probe)
    if lacking is not None:
        raise NotSupported(f"the consumer group protocol (KIP-848 ConsumerGroupHeartbeat), which the {driver} "
                           "group member speaks", lacking, capability="consumer-group-protocol")


def consumer_protocol_lacking(where: str, versions: tuple[int, int] | None,
                              probe: Body | None) -> str | None:
    """Why the broker at `where` does not serve the consumer protocol, from the ConsumerGroupHeartbeat
    versions it advertises and its answer to `tx.consumer_protocol_probe`; None when it serves it.
    Listing the API is not enough: 3.7 to 3.9 list it and answer UNSUPPORTED_VERSION while their new
    group coordinator is off (KIP-848 early access, off by default)."""
    if versions is None:
        return f"{where} advertises no ConsumerGroupHeartbeat"
    if probe is not None and probe["ErrorCode"] == errors.UNSUPPORTED_VERSION:
        return (f"{where} advertises ConsumerGroupHeartbeat v{versions[0]}-{versions[1]} but answers a leave of a "
                f"member it never had {errors.describe(probe['ErrorCode'])} ({probe.get('ErrorMessage')!r}): its "
                "group coordinator does not serve the consumer protocol")
    return None


def java_release(cluster: Cluster) -> str:
    """The kafka-clients release the Java KIP-1319 checks drive: in a Java client-only column the
    run's own (the client axis judges it), else the first KIP-1319 release (the checks then judge
    the broker through a client known to speak v6)."""
    return cluster.java_clients if stacks.current().only == stacks.JAVA else FIRST_KIP1319_CLIENT


def _run_driver(
    cluster: Cluster, client: str, make: Callable[[Proxy], ClientDriver], group: str, sink: str,
    asked: tuple[OffsetCommit, ...], written: list[bytes], rule: Rule | None = None, timeout: float = 120.0,
    copier: bool = False, failed: uuid.UUID | None = None,
) -> ClientRun:
    """Run the driver `make(proxy)` builds, through the proxy, to its end; then read back what it left.
    `copier`: the driver is a consume-transform-produce loop; `failed`: the topic the fault answers."""
    broker = advertised(cluster)
    with Proxy.for_cluster(cluster) as proxy:
        if rule is not None:
            proxy.add(rule)
        with make(proxy) as driver:
            code = driver.wait_exit(timeout)
    proxy.check()
    refused = txn_refusal.from_recorded(proxy.recording.exchanges("InitProducerId"), client)
    if refused is not None:
        raise refused.error()
    commits = tuple(proxy_exchange(e, COORDINATOR) for e in proxy.recording.exchanges(TXN_OFFSET_COMMIT))
    used = tuple(sorted({(e.api, e.version) for e in proxy.recording.exchanges()}))
    fetched: tuple[FetchedOffset, ...] = ()
    unsettled = ""
    with RawConnector(cluster) as raw:
        try:
            fetched = fetch_committed(raw, group, asked)
        except PromiseUnkept as exc:
            # Judged by the checks, which first ask whether the target accepted the client's commits at all.
            unsettled = str(exc)
    visible = read_committed(cluster.client_config(), sink)
    return ClientRun(client, broker, group, code, copier, tuple(ClientEvent.of(e) for e in driver.events), commits,
                     _injected(rule, failed), asked, fetched, tuple(written), tuple(visible), used, proxy.describe(),
                     driver.describe(), unsettled)


def java_transaction(
    cluster: Cluster, sink: str, group: str, offsets: Sequence[Offset], rule: Rule | None = None,
    failed: uuid.UUID | None = None, config: dict[str, str] | None = None,
) -> ClientRun:
    """One Kip1319Txn transaction: write txn-value-0..2 to partition 0 of `sink`, then
    sendOffsetsToTransaction(offsets, group), then commit (or abort if that fails). `config`: producer
    settings of the situation (max.block.ms)."""
    args = ["--transactional-id", f"kcts-java-txn-{uuid.uuid4().hex[:10]}", "--group", group,
            "--output-topic", sink, "--records", str(TXN_RECORDS)]
    for o in offsets:
        args += ["--offset", o.arg()]
    for key, value in (config or {}).items():
        args += ["--config", f"{key}={value}"]
    written = [f"txn-value-{i}".encode() for i in range(TXN_RECORDS)]
    return _run_java(cluster, "Kip1319Txn", args, group, sink, _asked(cluster, offsets), written, rule,
                     failed=failed)


def java_copy(
    cluster: Cluster, source: str, sink: str, group: str, values: list[bytes], transaction_size: int = 5,
    timeout: float = 120.0,
) -> ClientRun:
    """Write `values` to partition 0 of `source`, then copy them to `sink` with Kip1319Copier, a
    consumer-protocol group member, in transactions of `transaction_size`."""
    _produce(cluster.client_config(), [source], values)
    args = [
        "--input-topic", source, "--output-topic", sink, "--group", group,
        "--transactional-id", f"kcts-java-copier-{uuid.uuid4().hex[:10]}", "--messages", str(len(values)),
        "--transaction-size", str(transaction_size), "--group-protocol", "consumer",
        "--timeout-ms", str(int(timeout * 1000) - 10_000),
    ]
    asked = _asked(cluster, [Offset(source, 0, len(values))])
    return _run_java(cluster, "Kip1319Copier", args, group, sink, asked, list(values), timeout=timeout)


def _produce(config: dict[str, str], topics: Sequence[str], values: list[bytes]) -> None:
    """`values` written to partition 0 of each topic, all acknowledged."""
    with confluent.producer(config) as producer:
        for topic in topics:
            for v in values:
                producer.produce(topic, v, partition=0)
        left = producer.flush(30)
    assert left == 0, f"{left} of {len(values) * len(topics)} input records to {list(topics)} not delivered"


def stack_copy(cluster: Cluster, client: str, sources: Sequence[str], sink: str, group: str, values: list[bytes],
               transaction_size: int = 5, timeout: float = 120.0, rule: Rule | None = None,
               failed: uuid.UUID | None = None) -> ClientRun:
    """Write `values` to partition 0 of each source topic, then copy them to `sink` with the `copier`
    driver of `client` (franz-go's: harness/clients/go/copier.go, a GroupTransactSession, classic
    group protocol) in transactions of at most `transaction_size`."""
    config = cluster.client_config()
    stack = stacks.get(client)
    stack.require(config)
    written = [v for _ in sources for v in values]  # what the copy writes, every source's values
    _produce(config, sources, values)

    def copier(proxy: Proxy) -> ClientDriver:
        # The copier role's arguments, the same for every stack (harness/clients/stacks/base.py).
        args = [proxy.bootstrap_servers, ",".join(sources), sink, group,
                f"kcts-{client}-copier-{uuid.uuid4().hex[:10]}", str(len(written)),
                str(transaction_size), str(int(timeout * 1000) - 10_000)]
        return stacks.driver(client, "copier", args, proxy.client_config(),
                             session.current().scratch("clients") / f"{client}-copier-{sink}.log")

    asked = _asked(cluster, [Offset(topic, 0, len(values)) for topic in sources])
    return _run_driver(cluster, f"{stack.version()} copier", copier, group, sink, asked,
                       written, rule, timeout, copier=True, failed=failed)


def v6_sent(client: str, run: ClientRun) -> ClientRun:
    """`run`, of a situation that faults v6 commits (`retrying`, `mixed`, `group_error`): a copier that
    sent TxnOffsetCommits, none of them v6, to a broker advertising v6 (the checks' require_v6) has no
    KIP-1319 to judge there, as a kafka-clients release before it (`_run_java`): "not supported by this
    client", with the versions it sent. The sends-v6 check (`copy`) is where not sending v6 is judged."""
    sent = sorted({c.version for c in run.commits})
    if sent and KIP_VERSION not in sent:
        raise ClientLacks(stacks.get(client).version(), f"TxnOffsetCommit v{KIP_VERSION} and its error handling "
                          "(KIP-1319)", f"its copier sent TxnOffsetCommit {sent}; {run.broker.describe()}")
    return run


def librdkafka_commit(cluster: Cluster, source: str, sink: str, group: str) -> ClientRun:
    """A transactional librdkafka producer of the run's confluent-kafka release (a driver process,
    harness/clients/drivers/txn_commit.py, through the proxy) writes one record to `sink`, calls
    send_offsets_to_transaction((source-0, 3), the group metadata of a consumer of `group`) and commits."""
    asked = _asked(cluster, [Offset(source, 0, 3)])
    client = f"librdkafka via confluent-kafka {stacks.current().librdkafka}"

    def librdkafka(proxy: Proxy) -> ClientDriver:
        args = [proxy.bootstrap_servers, f"kcts-rdkafka-{sink}", group, sink, f"{source}:0:3"]
        return stacks.driver(LIBRDKAFKA, "txn_commit", args, proxy.client_config(),
                             session.current().scratch("clients") / f"librdkafka-txn-{sink}.log")

    return _run_driver(cluster, client, librdkafka, group, sink, asked, [b"rdkafka-txn"], timeout=90)


def java_copy_existing(cluster: Cluster, source: str, values: list[bytes], sink: str, group: str) -> ClientRun:
    """Copy the records already in `source`-0 (`values`, from offset 0) to `sink` with Kip1319Copier,
    in transactions of 5: each sendOffsetsToTransaction carries the offset after, and the leader epoch
    of, the last record it consumed."""
    args = [
        "--input-topic", source, "--output-topic", sink, "--group", group,
        "--transactional-id", f"kcts-java-copier-{uuid.uuid4().hex[:10]}", "--messages", str(len(values)),
        "--transaction-size", "5", "--group-protocol", "consumer", "--timeout-ms", "110000",
    ]
    return _run_java(cluster, "Kip1319Copier", args, group, sink, _asked(cluster, [Offset(source, 0, len(values))]),
                     list(values))


# -- the situations of the checks: one function each, for every stack of STACKS[situation] ---------

def _values(hint: str, count: int) -> list[bytes]:
    return [f"{hint}-{i:02d}".encode() for i in range(count)]


def _stack(situation: str, client: str) -> None:
    if client not in STACKS[situation]:
        raise SetupError(f"the KIP-1319 situation {situation!r} drives {', '.join(STACKS[situation])}, not {client!r}")
    if situation != "copy" and client in WITHOUT_V6:
        raise ClientLacks(stacks.get(client).version(), f"TxnOffsetCommit v{KIP_VERSION} (KIP-1319)",
                          WITHOUT_V6[client])


def _topic_id(cluster: Cluster, topic: str) -> uuid.UUID:
    with RawConnector(cluster) as raw:
        return tx.topic_ids(raw(), [topic])[topic]


def copy(cluster: Cluster, client: str, new_topic: NewTopic, group: str) -> ClientRun:
    """The client commits the offsets it consumed in a transaction, nothing injected: the Java copier
    and franz-go copy 20 records in transactions of (at most) 5; librdkafka commits (source-0, 3)
    with one record written."""
    _stack("copy", client)
    source, sink = new_topic(), new_topic()
    if client in COPIERS:
        return stack_copy(cluster, client, [source], sink, group, _values("go-copy", 20))
    if client == LIBRDKAFKA:
        return librdkafka_commit(cluster, source, sink, group)
    return java_copy(cluster, source, sink, group, _values("copy", 20))


def capped(cluster: Cluster, client: str, new_topic: NewTopic, group: str) -> ClientRun:
    """The proxy caps TxnOffsetCommit at v5 in ApiVersions; Java commits (source-0, 11, epoch 0) in one
    transaction, franz-go copies 10 records."""
    _stack("capped", client)
    rule = CapVersion(TXN_OFFSET_COMMIT, max_version=5)
    source, sink = new_topic(), new_topic()
    if client in COPIERS:
        return stack_copy(cluster, client, [source], sink, group, _values("go-capped", 10), rule=rule)
    return java_transaction(cluster, sink, group, [Offset(source, 0, 11, 0)], rule)


def without_topic_id(cluster: Cluster, client: str, new_topic: NewTopic, group: str) -> ClientRun:
    """The proxy answers Metadata with the zero topic ID for one input topic: Java commits
    (with_id-0, 5, epoch 0) and (without_id-0, 7) in one transaction; franz-go copies 10 records of
    the topic without an ID."""
    _stack("without_topic_id", client)
    if client in COPIERS:
        source, sink = new_topic(), new_topic()
        return stack_copy(cluster, client, [source], sink, group, _values("go-no-id", 10),
                       rule=StripTopicIds(topics=frozenset({source})))
    with_id, without_id, sink = new_topic(), new_topic(), new_topic()
    rule = StripTopicIds(topics=frozenset({without_id}))
    return java_transaction(cluster, sink, group, [Offset(with_id, 0, 5, 0), Offset(without_id, 0, 7)], rule)


# The producer's max.block.ms in `bounded_wait`: small, so that a wait past it stands out, yet room
# for initTransactions and the first send through the proxy on a loaded machine.
BOUNDED_WAIT_MAX_BLOCK_MS = 5000


def bounded_wait(cluster: Cluster, client: str, new_topic: NewTopic, group: str) -> ClientRun:
    """The Java producer, max.block.ms = BOUNDED_WAIT_MAX_BLOCK_MS, writes to a sink topic, then
    commits (source-0, 5, epoch 0) of a topic it has no metadata for, while the proxy answers every
    Metadata of that topic with the zero topic ID: the topic ID it waits for never comes."""
    _stack("bounded_wait", client)
    source, sink = new_topic(), new_topic()
    rule = StripTopicIds(topics=frozenset({source}))
    return java_transaction(cluster, sink, group, [Offset(source, 0, 5, 0)], rule,
                            config={"max.block.ms": str(BOUNDED_WAIT_MAX_BLOCK_MS)})


def retrying(cluster: Cluster, client: str, new_topic: NewTopic, group: str) -> ClientRun:
    """The proxy answers the first two v6 TxnOffsetCommits with UNKNOWN_TOPIC_ID for every partition:
    Java commits (first-0, 5, epoch 0) and (second-0, 9, epoch 0) in one transaction; franz-go copies
    10 records."""
    _stack("retrying", client)
    rule = ReplaceErrors(TXN_OFFSET_COMMIT, error=errors.UNKNOWN_TOPIC_ID, count=2, versions=(6, 6))
    if client in COPIERS:
        source, sink = new_topic(), new_topic()
        return v6_sent(client, stack_copy(cluster, client, [source], sink, group, _values("go-retry", 10), rule=rule))
    first, second, sink = new_topic(), new_topic(), new_topic()
    return java_transaction(cluster, sink, group, [Offset(first, 0, 5, 0), Offset(second, 0, 9, 0)], rule)


def mixed(cluster: Cluster, client: str, new_topic: NewTopic, group: str) -> ClientRun:
    """Offsets of two topics in one transaction, and the proxy answers v6 TxnOffsetCommit with
    UNKNOWN_TOPIC_ID for the second topic's partition only, the first's as the broker did: Java
    commits (first-0, 5, epoch 0) and (second-0, 9, epoch 0), answered so twice; franz-go copies 5
    records of each topic in one transaction, answered so once (it ends the transaction on it)."""
    _stack("mixed", client)
    first, second, sink = new_topic(), new_topic(), new_topic()
    second_id = _topic_id(cluster, second)
    count = 2 if client == JAVA else 1  # a copier ends its transaction on the first
    rule = ReplaceTopicErrors(TXN_OFFSET_COMMIT, topic_id=second_id, error=errors.UNKNOWN_TOPIC_ID, count=count,
                              versions=(6, 6))
    if client in COPIERS:
        return v6_sent(client, stack_copy(cluster, client, [first, second], sink, group, _values("go-mixed", 5),
                                          transaction_size=10, rule=rule, failed=second_id))
    return java_transaction(cluster, sink, group, [Offset(first, 0, 5, 0), Offset(second, 0, 9, 0)], rule,
                            failed=second_id)


def group_error(cluster: Cluster, client: str, new_topic: NewTopic, group: str, error: str) -> ClientRun:
    """The proxy answers the first v6 TxnOffsetCommit with `error` (a name): Java commits
    (source-0, 5, epoch 0) in one transaction; franz-go copies 10 records."""
    _stack("group_error", client)
    rule = ReplaceErrors(TXN_OFFSET_COMMIT, error=errors.error_code(error), count=1, versions=(6, 6))
    source, sink = new_topic(), new_topic()
    if client in COPIERS:
        return v6_sent(client, stack_copy(cluster, client, [source], sink, group, _values("go-abort", 10), rule=rule))
    return java_transaction(cluster, sink, group, [Offset(source, 0, 5, 0)], rule)


def pre_kip_java_copy(cluster: Cluster) -> ClientRun:
    """On a broker without KIP-1319 (topics made here): 10 records copied in transactions of 5."""
    source, sink = side_topic(cluster, "pre-kip-source"), side_topic(cluster, "pre-kip-sink")
    group = f"kcts-pre-kip-copier-{uuid.uuid4().hex[:10]}"
    return java_copy(cluster, source, sink, group, [f"old-{i}".encode() for i in range(10)])


def tv1_java_commit(cluster: Cluster) -> ClientRun:
    """On a transaction.version=1 cluster (topics made here): one transaction committing (source-0, 4, epoch 0)."""
    source, sink = side_topic(cluster, "tv1-source"), side_topic(cluster, "tv1-sink")
    group = f"kcts-tv1-group-{uuid.uuid4().hex[:10]}"
    return java_transaction(cluster, sink, group, [Offset(source, 0, 4, 0)])


def gap_version(client: str, run: ClientRun) -> str | None:
    """The version the known-gap table ranges over: librdkafka's, as its driver's ready event named it;
    another stack's, from the client its copier's ready event named (harness.clients.stacks.gap_version)."""
    ready = next((e for e in run.events if e.event == "ready"), None)
    if ready is None:
        return None
    if client != LIBRDKAFKA:
        return stacks.gap_version(client, str(ready.get("client") or "")) if ready.get("client") else None
    return str(ready.get("librdkafka")) if ready.get("librdkafka") else None


def client_matrix(run: ClientRun, client: str) -> dict[str, str]:
    """What the client matrix shows of a run: the TxnOffsetCommit versions sent, every API version used."""
    prefix = client.replace("-", "_")
    return {
        f"{prefix}_txn_offset_commit_versions": ",".join(map(str, sorted({c.version for c in run.commits}))),
        f"{prefix}_api_versions": " ".join(f"{api}:v{v}" for api, v in run.api_versions),
    }


def error_label(name: str) -> str:
    """`GROUP_ID_NOT_FOUND(69)` for "GROUP_ID_NOT_FOUND"."""
    return errors.describe(errors.error_code(name))
