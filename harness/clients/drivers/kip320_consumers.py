"""librdkafka consumers for the KIP-320 truncation checks, as a driver process: the same commands and
events as the Java driver (harness/clients/java/Kip320Consumers.java), so that one scenario drives both.

Run as `python -m harness.clients.drivers.kip320_consumers MARKER BOOTSTRAP TOPIC PARTITION` under
the interpreter whose confluent-kafka is the version tested (harness.clients.versions); the
librdkafka settings of the cluster (TLS, SASL) come as JSON in $KCTS_CLIENT_CONFIG. It imports
nothing of the harness: it runs under releases whose API the harness does not load under.

Commands, one per line (RESET is auto.offset.reset: earliest, latest, error):
  assign NAME RESET OFFSET            a consumer without a group, positioned at OFFSET
  seekepoch NAME RESET OFFSET EPOCH   the same, with the leader epoch in the assignment
                                      (KIP-320's seek with an epoch; confluent-kafka 2.1.0 on)
  subscribe NAME RESET GROUP [ISOLATION]
                                      a member of GROUP, from the group's committed offset and epoch
                                      (ISOLATION: read_uncommitted, the default, or read_committed)
  position NAME                       answers "position" with position() of its partition
  commit NAME                         a synchronous commit; answers with what committed() reads back
                                      (each call made again while it raises a coordinator error or
                                      another retriable one, within RETRY_S; `retried`: those errors)
  pause NAME / resume NAME            stop and restart fetching its partition (the position stays)
  until NAME OFFSET                   the consumer stops polling once it delivered the record at OFFSET
                                      (given before or after it starts); answers "held" then
  offsetsfortimes NAME TIMESTAMP      a consumer of its own looks TIMESTAMP up (offsets_for_times) and
                                      answers "offset_for_time" {offset, epoch, timestamp, error, retried};
                                      a leader-moving error is asked again as an application does
                                      (`retried`: the errors replaced), within RETRY_S
  close NAME
  exit
Events: ready, record {consumer, offset, epoch, value}, error {consumer, code, message},
committed {consumer, offset, epoch, retried}, position {consumer, offset, of}, offset_for_time {consumer,
timestamp, offset, epoch, found_timestamp, error}, closed, done {command},
command_failed {command, exception, message}, exited. Unlike Java's poll, librdkafka's keeps going
after an error: later records are reported too, so the checks see whether it read on.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

# How long a lookup is asked again while librdkafka returns an error an application retries: the
# harness's READ_RETRY_S (harness.clients.raw), the Java client's request.timeout.ms. librdkafka hands
# offsets_for_times' NOT_LEADER_FOR_PARTITION and LEADER_NOT_AVAILABLE to the application (raised, or
# on the partition) and confluent-kafka builds that KafkaError from the code alone, so retriable() says
# False; the protocol guide's Error Codes table says both are retriable ("refresh the metadata and try
# again", Partitioning and bootstrapping), and librdkafka refreshes its metadata on them itself.
RETRY_S = 30.0
RETRY_BACKOFF_S = 0.1  # retry.backoff.ms's default
LEADER_MOVING = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)
T = TypeVar("T")


def asked_again(err: Any) -> bool:
    """Whether an application asks again after `err` (a KafkaError, or None)."""
    if err is None:
        return False
    retriable = getattr(err, "retriable", None)  # KafkaError.retriable() came with confluent-kafka 1.4
    return err.code() in LEADER_MOVING or bool(retriable and retriable())


# The group's coordinator errors, retriable in the protocol guide's Error Codes (COORDINATOR_LOAD_IN_PROGRESS,
# COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR): an application commits, or reads its commit, again after
# them. confluent-kafka raises committed()'s with retriable() False too (built from the code alone).
COORDINATOR_ERRORS = (14, 15, 16)


def called_again(call: Callable[[], T]) -> tuple[T, list[str]]:
    """`call()`, made again while it raises a coordinator error or another an application retries
    (`asked_again`), within RETRY_S and at least once (as harness.waiting.asked_again); its result and
    the errors it raised before (reported with the answer). One that persists, or any other, is raised."""
    deadline = time.monotonic() + RETRY_S
    retried: list[str] = []
    while True:
        try:
            return call(), retried
        except KafkaException as exc:
            err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
            if err is None or not (asked_again(err) or err.code() in COORDINATOR_ERRORS) \
                    or (retried and time.monotonic() >= deadline):
                raise
            retried.append(f"{err.name()}: {err.str()}")
        time.sleep(RETRY_BACKOFF_S)  # an application's backoff before it asks again


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def release(version: Any) -> str:
    """confluent_kafka.version(): a (text, number) tuple, a plain string from 2.16 on."""
    return version if isinstance(version, str) else str(version[0])


def epoch_of(message: Any) -> int | None:
    # Message.leader_epoch() came with KIP-320 (confluent-kafka 2.1.0); older ones report no epoch.
    return message.leader_epoch() if hasattr(message, "leader_epoch") else None


class ConfluentConsumers:
    def __init__(self, bootstrap: str, topic: str, partition: int, config: dict[str, Any]) -> None:
        self.bootstrap, self.topic, self.partition, self.config = bootstrap, topic, partition, config
        self.polling: dict[str, Consumer] = {}
        self.until: dict[str, int] = {}
        self.held: set[str] = set()

    def consumer(self, name: str, reset: str, group: str | None, isolation: str = "read_uncommitted") -> Consumer:
        return Consumer({
            # librdkafka validates a position only when metadata shows a new leader epoch; a scene that
            # judges the refresh an error causes sets its own interval in $KCTS_CLIENT_CONFIG.
            "topic.metadata.refresh.interval.ms": 1000, **self.config,
            "bootstrap.servers": self.bootstrap, "client.id": name, "group.id": group or f"kcts-unused-{name}",
            "enable.auto.commit": False, "auto.offset.reset": reset, "enable.partition.eof": False,
            "isolation.level": isolation,
        })

    def run(self, cmd: list[str]) -> None:
        op, name = cmd[0], cmd[1]
        if op == "assign":
            c = self.consumer(name, cmd[2], None)
            c.assign([TopicPartition(self.topic, self.partition, int(cmd[3]))])
            self.polling[name] = c
        elif op == "seekepoch":
            tp = TopicPartition(self.topic, self.partition, int(cmd[3]), leader_epoch=int(cmd[4]))
            c = self.consumer(name, cmd[2], None)
            c.assign([tp])
            self.polling[name] = c
        elif op == "subscribe":
            c = self.consumer(name, cmd[2], cmd[3], *cmd[4:5])
            c.subscribe([self.topic])
            self.polling[name] = c
        elif op == "position":
            (tp,) = self.polling[name].position([TopicPartition(self.topic, self.partition)])
            emit({"event": "position", "consumer": name, "offset": tp.offset, "of": "position()"})
        elif op == "commit":
            c = self.polling[name]
            _, retried = called_again(lambda: c.commit(asynchronous=False))
            (got,), read_retried = called_again(
                lambda: c.committed([TopicPartition(self.topic, self.partition)], timeout=10))
            emit({"event": "committed", "consumer": name, "offset": got.offset,
                  "epoch": getattr(got, "leader_epoch", None), "retried": retried + read_retried})
        elif op == "offsetsfortimes":
            self.offset_for_time(name, int(cmd[2]))
        elif op == "until":
            self.until[name] = int(cmd[2])
            self.held.discard(name)
        elif op == "pause":
            self.polling[name].pause(self.polling[name].assignment())
        elif op == "resume":
            self.polling[name].resume(self.polling[name].assignment())
        elif op == "close":
            c = self.polling.pop(name, None)
            if c is not None:
                c.close()
            emit({"event": "closed", "consumer": name})
        else:
            raise ValueError(f"unknown command {op}")

    def offset_for_time(self, name: str, timestamp: int) -> None:
        """offsets_for_times of the partition with a consumer of its own (assigned nothing), closed after;
        asked again, on the same consumer, while the error (raised or on the partition) is one an
        application retries (`asked_again`), within RETRY_S and at least once. What persists is the answer: raised (the
        driver's command_failed, the replaced errors in its message) or reported on the partition."""
        c = self.consumer(name, "error", None)
        retried: list[str] = []
        deadline = time.monotonic() + RETRY_S
        try:
            while True:
                try:
                    (tp,) = c.offsets_for_times([TopicPartition(self.topic, self.partition, timestamp)], timeout=15)
                    err = tp.error
                except KafkaException as e:
                    err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
                    if not asked_again(err) or (retried and time.monotonic() >= deadline):
                        if retried:  # the errors it replaced, kept in what the application is told
                            raise KafkaException(KafkaError(err.code(), f"{err.str()}, still after asking again "
                                                            f"{len(retried)} times: {retried}")) from e
                        raise
                else:
                    if not asked_again(err) or (retried and time.monotonic() >= deadline):
                        break
                retried.append(str(err))
                time.sleep(RETRY_BACKOFF_S)  # an application's backoff before it asks again
        finally:
            c.close()
        # TopicPartition.leader_epoch came with KIP-320 (confluent-kafka 2.1.0): None before it, and for none.
        emit({"event": "offset_for_time", "consumer": name, "timestamp": timestamp, "offset": tp.offset,
              "epoch": getattr(tp, "leader_epoch", None), "found_timestamp": None,
              "error": tp.error.str() if tp.error else None, "retried": retried})

    def poll(self, name: str) -> None:
        if name in self.held:
            return
        msg = self.polling[name].poll(0.05)
        if msg is None:
            return
        err = msg.error()
        if err is not None:
            emit({"event": "error", "consumer": name, "code": err.name(), "message": err.str()})
        else:
            value = msg.value()
            emit({"event": "record", "consumer": name, "offset": msg.offset(), "epoch": epoch_of(msg),
                  "value": value.decode() if value is not None else None})
            if name in self.until and msg.offset() >= self.until[name]:
                self.held.add(name)
                emit({"event": "held", "consumer": name, "offset": msg.offset()})

    def close_all(self) -> None:
        for c in self.polling.values():
            c.close()


def main(argv: list[str]) -> int:
    _marker, bootstrap, topic, partition = argv[:4]
    config = json.loads(os.environ.get("KCTS_CLIENT_CONFIG", "{}"))
    consumers = ConfluentConsumers(bootstrap, topic, int(partition), config)
    commands: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            commands.put(line.strip())
        commands.put("exit")

    threading.Thread(target=read, daemon=True).start()
    import confluent_kafka

    emit({"event": "ready", "client": f"confluent-kafka {release(confluent_kafka.version())}",
          "librdkafka": confluent_kafka.libversion()[0]})
    while True:
        while not commands.empty():
            line = commands.get()
            if line == "exit":
                consumers.close_all()
                emit({"event": "exited"})
                return 0
            if not line:
                continue
            try:
                consumers.run(line.split())
                emit({"event": "done", "command": line})
            except Exception as e:  # noqa: BLE001 - every failure is an answer to the command
                # A TypeError or AttributeError is an API this confluent-kafka release lacks
                # (TopicPartition's leader_epoch came in 2.1.0).
                emit({"event": "command_failed", "command": line, "exception": type(e).__name__, "message": str(e),
                      "lacks": isinstance(e, (TypeError, AttributeError))})
        if not consumers.polling:
            time.sleep(0.02)  # idle until the next command: nothing to poll
            continue
        for name in list(consumers.polling):
            consumers.poll(name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
