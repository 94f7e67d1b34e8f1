"""kafka-python consumers for the KIP-320 client checks, as a driver process: the commands and events of
harness/clients/java/Kip320Consumers.java, so that one scene drives every client stack alike.

    python -m harness.clients.python_drivers.kafka_python_consumers MARKER BOOTSTRAP TOPIC PARTITION

run by the interpreter of kafka-python's cached virtualenv (harness.clients.stacks.kafka_python).

Commands, one per line (RESET is auto_offset_reset: earliest, latest, none):
  assign NAME RESET OFFSET            a KafkaConsumer without a group: assign() then seek(OFFSET)
  seekepoch NAME RESET OFFSET EPOCH   seek with an offset and a leader epoch: kafka-python's seek()
                                      takes an int offset only, so the driver answers command_failed
                                      with "lacks" and the client's own words (not supported)
  subscribe NAME RESET GROUP [ISOLATION]
                                      a member of GROUP, from the group's committed offset and epoch
  position NAME                       answers "position" with position() of the partition
  commit NAME                         commit() of what was consumed; answers "committed" with what
                                      committed(metadata=True) reads back (offset, leader_epoch)
  pause NAME / resume NAME            stop and restart fetching its partition (the position stays)
  until NAME OFFSET                   stop polling once the record at OFFSET was delivered; "held"
  offsetsfortimes NAME TIMESTAMP      a consumer of its own asks offsets_for_times(); answers
                                      offset_for_time {offset, epoch, found_timestamp, error}
                                      (-1, null, -1 where it found none, as the Java driver)
  close NAME
  exit
Events: ready, record {consumer, offset, epoch, value}, error {consumer, code, exception, message,
divergent}, committed {consumer, offset, epoch, retried}, position {consumer, offset, of}, held,
offset_for_time, closed, done {command}, command_failed {command, exception, message, lacks}, exited;
and assigned {consumer, partitions: ["TOPIC-N"]} each time the group hands a subscribed member its
partitions (ConsumerRebalanceListener.on_partitions_assigned).

Epochs are the client's own values: kafka-python's ConsumerRecord.leader_epoch and OffsetAndMetadata.
leader_epoch are -1 where it has none, as Java's driver prints an absent epoch. poll() raises, as
Java's does; a consumer that raised is polled no more (its error is the answer), as in the Java
driver: kafka-python completes the validation of a truncated position with no reset policy
(Fetcher._handle_offset_for_leader_epoch_response), so a poll after the error would read on from it.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import kafka
from kafka import ConsumerRebalanceListener, KafkaConsumer, TopicPartition
from kafka.errors import KafkaError, LogTruncationError
from kafka.structs import OffsetAndMetadata

from harness.clients.python_drivers.lines import client_logs, commands, emit, failed, qualified

# How long commit() and committed() are called again while they raise an error kafka-python marks
# retriable (a coordinator moving, loading): the Java client's request.timeout.ms, as the librdkafka driver.
RETRY_S = 30.0
RETRY_BACKOFF_S = 0.1  # retry_backoff_ms's default
POLL_MS = 50


class KafkaPythonLacks(Exception):
    """The client has no API for a command: answered command_failed with "lacks"."""


def code_of(exc: BaseException) -> str:
    """The protocol error name of a broker error (NOT_COORDINATOR...), else the exception's class name."""
    message = getattr(type(exc), "message", None)
    return message if isinstance(message, str) else type(exc).__name__


def retried_call(call: Any) -> tuple[Any, list[str]]:
    """`call()`, made again while it raises an error kafka-python marks retriable, within RETRY_S and at
    least once (as harness.waiting.asked_again); its result and the errors replaced (reported with the answer)."""
    deadline = time.monotonic() + RETRY_S
    retried: list[str] = []
    while True:
        try:
            return call(), retried
        except KafkaError as exc:
            if not exc.retriable or (retried and time.monotonic() >= deadline):
                raise
            retried.append(str(exc))
        time.sleep(RETRY_BACKOFF_S)  # an application's backoff before it asks again


class Assignments(ConsumerRebalanceListener):
    """Reports each assignment the group gives a member ("assigned" {consumer, partitions}): a member
    that never reads can then be told apart from one that was never given the partition."""

    def __init__(self, name: str) -> None:
        self.name = name

    def on_partitions_revoked(self, revoked: Any) -> None:
        pass

    def on_partitions_assigned(self, assigned: Any) -> None:
        emit({"event": "assigned", "consumer": self.name,
              "partitions": sorted(f"{tp.topic}-{tp.partition}" for tp in assigned)})


class KafkaPythonConsumers:
    def __init__(self, bootstrap: str, topic: str, partition: int) -> None:
        self.bootstrap, self.tp = bootstrap.split(","), TopicPartition(topic, partition)
        self.polling: dict[str, KafkaConsumer] = {}
        self.stopped: dict[str, KafkaConsumer] = {}  # raised in poll: kept open, polled no more
        self.until: dict[str, int] = {}
        self.held: set[str] = set()

    def consumer(self, name: str, reset: str, group: str | None, isolation: str = "read_uncommitted") -> KafkaConsumer:
        return KafkaConsumer(
            bootstrap_servers=self.bootstrap, client_id=name, group_id=group, enable_auto_commit=False,
            auto_offset_reset=reset, isolation_level=isolation,
            # Leader changes are noticed through metadata; the default age (5 min) would hide them.
            metadata_max_age_ms=1000, reconnect_backoff_max_ms=500)

    def run(self, line: str) -> None:
        cmd = line.split()
        op, name = cmd[0], cmd[1]
        if op == "assign":
            c = self.consumer(name, cmd[2], None)
            c.assign([self.tp])
            c.seek(self.tp, int(cmd[3]))
            self.polling[name] = c
        elif op == "seekepoch":
            c = self.consumer(name, cmd[2], None)
            c.assign([self.tp])
            try:
                c.seek(self.tp, OffsetAndMetadata(int(cmd[3]), "", int(cmd[4])))  # type: ignore[arg-type]
            except (TypeError, ValueError) as exc:
                c.close(autocommit=False)
                raise KafkaPythonLacks(f"kafka-python {kafka.__version__} "
                                       f"KafkaConsumer.seek(partition, offset) takes an int "
                                       f"offset and no leader epoch (kafka/consumer/group.py, seek): seek with "
                                       f"OffsetAndMetadata({cmd[3]}, '', {cmd[4]}) raised "
                                       f"{type(exc).__name__}: {exc}") from exc
            self.polling[name] = c
        elif op == "subscribe":
            c = self.consumer(name, cmd[2], cmd[3], *cmd[4:5])
            c.subscribe([self.tp.topic], listener=Assignments(name))
            self.polling[name] = c
        elif op == "position":
            offset = self.live(name).position(self.tp, timeout_ms=10_000)
            if offset is None:
                raise RuntimeError(f"{name} has no position of {self.tp} within 10 s")
            emit({"event": "position", "consumer": name, "offset": offset, "of": "position()"})
        elif op == "commit":
            c = self.live(name)
            _, retried = retried_call(lambda: c.commit(timeout_ms=10_000))
            got, read_retried = retried_call(lambda: c.committed(self.tp, metadata=True, timeout_ms=10_000))
            if got is None:
                raise RuntimeError(f"committed() read back no commit of {self.tp} after commit()")
            emit({"event": "committed", "consumer": name, "offset": got.offset, "epoch": got.leader_epoch,
                  "retried": retried + read_retried})
        elif op == "offsetsfortimes":
            self.offset_for_time(name, int(cmd[2]))
        elif op == "until":
            self.until[name] = int(cmd[2])
            self.held.discard(name)
        elif op in ("pause", "resume"):
            # A consumer that raised stays stopped: its error is the answer (as the Java driver).
            c = self.polling.get(name)
            if c is not None:
                (c.pause if op == "pause" else c.resume)(*c.assignment())
        elif op == "close":
            c = self.polling.pop(name, None) or self.stopped.pop(name, None)
            if c is not None:
                c.close(autocommit=False)
            emit({"event": "closed", "consumer": name})
        else:
            raise ValueError(f"unknown command {op}")

    def live(self, name: str) -> KafkaConsumer:
        c = self.polling.get(name) or self.stopped.get(name)
        if c is None:
            raise KeyError(f"no consumer {name}")
        return c

    def offset_for_time(self, name: str, timestamp: int) -> None:
        c = self.consumer(name, "none", None)
        try:
            found = c.offsets_for_times({self.tp: timestamp}, timeout_ms=15_000).get(self.tp)
        finally:
            c.close(autocommit=False)
        emit({"event": "offset_for_time", "consumer": name, "timestamp": timestamp,
              "offset": -1 if found is None else found.offset,
              "epoch": None if found is None else found.leader_epoch,
              "found_timestamp": -1 if found is None else found.timestamp, "error": None})

    def poll(self, name: str) -> None:
        if name in self.held:
            return
        c = self.polling[name]
        try:
            batches = c.poll(timeout_ms=POLL_MS, max_records=1 if name in self.until else 500)
        except Exception as exc:  # noqa: BLE001 - what poll raises is the consumer's answer
            self.stopped[name] = self.polling.pop(name)
            emit({"event": "error", "consumer": name, **describe(exc)})
            return
        for record in batches.get(self.tp, []):
            value = record.value
            emit({"event": "record", "consumer": name, "offset": record.offset, "epoch": record.leader_epoch,
                  "value": value.decode() if value is not None else None})
            if name in self.until and record.offset >= self.until[name]:
                self.held.add(name)
                emit({"event": "held", "consumer": name, "offset": record.offset})

    def close_all(self) -> None:
        for c in [*self.polling.values(), *self.stopped.values()]:
            c.close(autocommit=False)


def describe(exc: BaseException) -> dict[str, Any]:
    """An error event's fields; a LogTruncationError lists the divergent offsets it names (a partition
    whose divergence the leader could not locate, UNDEFINED_EPOCH, is named in the message only)."""
    event: dict[str, Any] = {"code": code_of(exc), "exception": qualified(exc), "message": str(exc)}
    if isinstance(exc, LogTruncationError):
        event["divergent"] = [{"partition": tp.partition, "offset": om.offset, "epoch": om.leader_epoch}
                              for tp, om in exc.divergent_offsets.items() if om is not None]
    return event


def main(argv: list[str]) -> int:
    _marker, bootstrap, topic, partition = argv[:4]
    client_logs("kafka.consumer.fetcher")
    consumers = KafkaPythonConsumers(bootstrap, topic, int(partition))
    lines = commands()
    emit({"event": "ready", "client": f"kafka-python {kafka.__version__}"})
    while True:
        while not lines.empty():
            line = lines.get()
            if line == "exit":
                consumers.close_all()
                emit({"event": "exited"})
                return 0
            if not line:
                continue
            try:
                consumers.run(line)
                emit({"event": "done", "command": line})
            except KafkaPythonLacks as exc:
                failed(line, exc, lacks=True)
            except Exception as exc:  # noqa: BLE001 - every failure is an answer to the command
                failed(line, exc)
        if not consumers.polling:
            time.sleep(0.02)  # idle until the next command: nothing to poll
            continue
        for name in list(consumers.polling):
            consumers.poll(name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
