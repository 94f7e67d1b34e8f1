"""Every confluent-kafka client the harness makes in its own process, made here and closed where made.

A client left to the garbage collector is destroyed wherever the collector happens to run, which
can be one of librdkafka's own threads; destroying it there aborts or crashes the process
(confluent-kafka-python #1761, #2129). So each factory is a context manager that closes its client
on exit, and every client open right now is in `open_clients()`: the pytest plugin fails a check
that leaves one open, naming where it was made.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition, libversion
from confluent_kafka.admin import AdminClient

from harness.closing import closed_on_exit

LIBRDKAFKA_VERSION: str = libversion()[0]  # of the librdkafka this interpreter loaded
T = TypeVar("T")

QUIET = {"log_level": 3}  # librdkafka logs only errors; checks read state, not log lines

_ids = itertools.count(1)
_lock = threading.Lock()
_open: dict[int, OpenClient] = {}
_activity = itertools.count()  # ticks when a client is made and when it is closed
_last_activity = 0
_beside = threading.local()  # .on: this thread's clients belong to no check (see beside_the_checks)


@dataclass(frozen=True)
class OpenClient:
    key: int
    kind: str
    made_at: str  # the caller's frame, for the error that names a leaked client
    lasting: bool  # a session's or module's client, made on purpose to outlive one check

    def __str__(self) -> str:
        return f"{self.kind} made at {self.made_at}"


def open_clients() -> list[OpenClient]:
    with _lock:
        return list(_open.values())


def open_keys() -> frozenset[int]:
    """A mark to compare `left_open` against: the clients open now."""
    with _lock:
        return frozenset(_open)


def activity() -> int:
    """A mark that changes whenever a client is made or closed (the plugin collects garbage only then)."""
    with _lock:
        return _last_activity


def left_open(since: frozenset[int]) -> list[OpenClient]:
    """Clients made after the `open_keys()` mark `since` that are still open, other than lasting ones."""
    with _lock:
        return [c for k, c in _open.items() if k not in since and not c.lasting]


@contextmanager
def beside_the_checks() -> Iterator[None]:
    """The clients this thread makes in the block belong to no check: the harness makes them on a thread
    of its own while checks run on the main one (a side cluster started ahead), so a check that
    happens to be running then has not left them open. They are kept as lasting ones."""
    _beside.on = True
    try:
        yield
    finally:
        _beside.on = False


@contextmanager
def _tracked(kind: str, lasting: bool) -> Iterator[None]:
    """Keep a client in the registry of open ones while the block runs, with where it was made."""
    frame = next(f for f in reversed(traceback.extract_stack()[:-1])
                 if f.filename not in (__file__, contextlib.__file__))
    global _last_activity
    key = next(_ids)
    with _lock:
        _open[key] = OpenClient(key, kind, f"{frame.filename}:{frame.lineno} ({frame.name})",
                                lasting or getattr(_beside, "on", False))
        _last_activity = next(_activity)
    try:
        yield
    finally:
        with _lock:
            _open.pop(key, None)
            _last_activity = next(_activity)


def close_producer(producer: Producer, timeout: float = 10.0) -> int:
    """Flush for up to `timeout`, purge what is still queued (close() would wait for it as long as
    message.timeout.ms), and destroy the client now, even where flushing raised. Returns how many
    messages were purged. A producer in a fatal state (librdkafka's fatal error, such as a
    transactional id the target refused) raises that error again from flush."""
    try:
        left = producer.flush(timeout)
        if left:
            producer.purge()
            producer.flush(1)
    finally:
        producer.close()
    return left


@contextmanager
def producer(config: dict[str, object], flush_timeout: float = 10.0, lasting: bool = False) -> Iterator[Producer]:
    """A producer, flushed (up to `flush_timeout`), purged and destroyed on exit. Where the block
    raised, that exception is what leaves: closing a producer that the block's failure left in a
    fatal state raises the fatal error again, and it must not stand for the block's (a target's
    refusal of the transactional id would read as an ERROR); it becomes a note of the block's."""
    p = Producer({**QUIET, **config})
    with _tracked("Producer", lasting), closed_on_exit(lambda: close_producer(p, flush_timeout), "the producer",
                                                       noted=(KafkaException,)):
        yield p


@contextmanager
def consumer(config: dict[str, object], lasting: bool = False) -> Iterator[Consumer]:
    """A consumer, closed (leaving its group) on exit."""
    c = Consumer({**QUIET, **config})
    with _tracked("Consumer", lasting):
        try:
            yield c
        finally:
            c.close()


@contextmanager
def admin(config: dict[str, object], lasting: bool = False) -> Iterator[AdminClient]:
    """An admin client, destroyed on exit. `lasting`: a session's client, shared by many checks."""
    with AdminClient({**QUIET, **config}) as a, _tracked("AdminClient", lasting):
        yield a


# How long an admin request waits for its answer before the client is asked for metadata (admin_result).
LOOKUP_EVERY = 1.0


def admin_result(admin: AdminClient, future: concurrent.futures.Future[T], timeout: float) -> T:
    """The answer to one of `admin`'s requests, within `timeout` (TimeoutError without one), asking the
    client for metadata each `LOOKUP_EVERY` s it waits.

    librdkafka sends most admin requests (CreateTopics, DeleteTopics, the ACLs, ElectLeaders, SCRAM
    credentials) to the controller its cached Metadata names. Apache Kafka names only unfenced brokers,
    so a Metadata answered while every broker is fenced (a one-broker cluster's broker that missed its
    session timeout on a loaded machine) names no controller; librdkafka looks it up again only when a
    broker's state changes (rd_kafka_broker_controller_async), and the request waits, unsent, for its
    whole timeout, though the broker is unfenced a second later. A Metadata request of the client's
    own ends that wait, as a new client would. tests/harness/test_admin_controller_lookup.py."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return future.result(timeout=max(0.0, min(LOOKUP_EVERY, left)))
        except concurrent.futures.TimeoutError:
            if left <= LOOKUP_EVERY:
                raise
        with contextlib.suppress(KafkaException):  # unanswered too: the next wait asks again
            admin.list_topics(timeout=max(0.1, min(5.0, deadline - time.monotonic())))


def admin_results(admin: AdminClient, futures: Iterable[concurrent.futures.Future[T]], timeout: float) -> list[T]:
    """admin_result of each of `futures` (one request's, one per item), all within `timeout`."""
    deadline = time.monotonic() + timeout
    return [admin_result(admin, f, max(0.0, deadline - time.monotonic())) for f in futures]


def delete_records(admin: AdminClient, head: TopicPartition, timeout: float = 20.0, tries: int = 3) -> None:
    """DeleteRecords of `head`'s partition before `head.offset`, asked again while it times out:
    under load one request can outlast its timeout, and asking again is safe (the log start offset
    only rises; a partition already past it answers at once). Any other error, and the last
    timeout, raise (KafkaException, or TimeoutError where no answer came at all)."""
    for attempt in range(1, tries + 1):
        try:
            admin.delete_records([head], request_timeout=timeout)[head].result(timeout * 2)
            return
        except KafkaException as exc:
            if attempt == tries or exc.args[0].code() != KafkaError._TIMED_OUT:
                raise
        except TimeoutError:
            if attempt == tries:
                raise
