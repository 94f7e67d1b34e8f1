"""aiokafka consumers for the KIP-320 client checks, as a driver process: the commands and events of
harness/clients/java/Kip320Consumers.java, so that one scene drives every client stack alike.

    python -m harness.clients.python_drivers.aiokafka_consumers MARKER BOOTSTRAP TOPIC PARTITION

run by the interpreter of aiokafka's cached virtualenv (harness.clients.stacks.aiokafka). One asyncio
loop owns every AIOKafkaConsumer and polls them in turn (getmany, 50 ms each).

Commands, one per line (RESET is auto_offset_reset: earliest, latest, none):
  assign NAME RESET OFFSET            a consumer without a group: assign() then seek(OFFSET)
  seekepoch NAME RESET OFFSET EPOCH   seek with an offset and a leader epoch: aiokafka's seek() takes
                                      an int offset only, so the driver answers command_failed with
                                      "lacks" and the client's own words (not supported)
  subscribe NAME RESET GROUP [ISOLATION]
                                      a member of GROUP, from the group's committed offset
  position NAME                       answers "position" with position() of the partition
  commit NAME                         commit() of what was consumed; answers "committed" with what
                                      committed() reads back
  pause NAME / resume NAME            stop and restart fetching its partition (the position stays)
  until NAME OFFSET                   stop polling once the record at OFFSET was delivered; "held"
  offsetsfortimes NAME TIMESTAMP      a consumer of its own asks offsets_for_times(); answers
                                      offset_for_time {offset, epoch, found_timestamp, error}
  close NAME
  exit
Events as the kafka-python driver's (harness/clients/python_drivers/kafka_python_consumers.py).

aiokafka exposes no leader epoch: ConsumerRecord, OffsetAndTimestamp and committed() carry none
(aiokafka/structs.py), so every epoch this driver reports is null, never a number of its making. A
consumer whose getmany() raised is polled no more (its error is the answer), as in the Java driver.
"""

from __future__ import annotations

import asyncio
import sys
import threading

import aiokafka
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from harness.clients.python_drivers.lines import client_logs, emit, failed, qualified

POLL_MS = 50


class AiokafkaLacks(Exception):
    """The client has no API for a command: answered command_failed with "lacks"."""


def code_of(exc: BaseException) -> str:
    """The protocol error name of a broker error (NOT_COORDINATOR...), else the exception's class name."""
    message = getattr(type(exc), "message", None)
    return message if isinstance(message, str) else type(exc).__name__


class AiokafkaConsumers:
    def __init__(self, bootstrap: str, topic: str, partition: int) -> None:
        self.bootstrap, self.tp = bootstrap, TopicPartition(topic, partition)
        self.polling: dict[str, AIOKafkaConsumer] = {}
        self.stopped: dict[str, AIOKafkaConsumer] = {}  # raised in getmany: kept open, polled no more
        self.until: dict[str, int] = {}
        self.held: set[str] = set()

    async def consumer(self, name: str, reset: str, group: str | None,
                       isolation: str = "read_uncommitted") -> AIOKafkaConsumer:
        c = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, client_id=name, group_id=group, enable_auto_commit=False,
            auto_offset_reset=reset, isolation_level=isolation,
            # Leader changes are noticed through metadata; the default age (5 min) would hide them.
            metadata_max_age_ms=1000)
        await c.start()
        return c

    async def run(self, line: str) -> None:
        cmd = line.split()
        op, name = cmd[0], cmd[1]
        if op == "assign":
            c = await self.consumer(name, cmd[2], None)
            c.assign([self.tp])
            c.seek(self.tp, int(cmd[3]))
            self.polling[name] = c
        elif op == "seekepoch":
            # seek() checks its offset before it touches the fetcher, so the refusal needs no started
            # consumer (and no connection a refused command would leave behind).
            unstarted = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, client_id=name, enable_auto_commit=False)
            try:
                unstarted.seek(self.tp, OffsetAndMetadata(int(cmd[3]), ""))  # type: ignore[arg-type]
            except (TypeError, ValueError) as exc:
                await unstarted.stop()  # never started: nothing to close but its closed flag
                raise AiokafkaLacks(f"aiokafka {aiokafka.__version__} "
                                    f"AIOKafkaConsumer.seek(partition, offset) takes an int "
                                    f"offset, and no structure of aiokafka carries a leader epoch (aiokafka/consumer/"
                                    f"consumer.py seek, aiokafka/structs.py OffsetAndMetadata(offset, metadata)): seek "
                                    f"with OffsetAndMetadata({cmd[3]}, '') raised {type(exc).__name__}: {exc}") from exc
            raise RuntimeError(f"aiokafka {aiokafka.__version__} seek() took OffsetAndMetadata({cmd[3]}, ''): "
                               f"the driver has no epoch to give it and refuses to guess")
        elif op == "subscribe":
            c = await self.consumer(name, cmd[2], cmd[3], *cmd[4:5])
            c.subscribe([self.tp.topic])
            self.polling[name] = c
        elif op == "position":
            offset = await asyncio.wait_for(self.live(name).position(self.tp), 10)
            emit({"event": "position", "consumer": name, "offset": offset, "of": "position()"})
        elif op == "commit":
            c = self.live(name)
            await asyncio.wait_for(c.commit(), 30)
            got = await asyncio.wait_for(c.committed(self.tp), 30)
            if got is None:
                raise RuntimeError(f"committed() read back no commit of {self.tp} after commit()")
            emit({"event": "committed", "consumer": name, "offset": got, "epoch": None, "retried": []})
        elif op == "offsetsfortimes":
            await self.offset_for_time(name, int(cmd[2]))
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
                await c.stop()
            emit({"event": "closed", "consumer": name})
        else:
            raise ValueError(f"unknown command {op}")

    def live(self, name: str) -> AIOKafkaConsumer:
        c = self.polling.get(name) or self.stopped.get(name)
        if c is None:
            raise KeyError(f"no consumer {name}")
        return c

    async def offset_for_time(self, name: str, timestamp: int) -> None:
        c = await self.consumer(name, "none", None)
        try:
            found = (await asyncio.wait_for(c.offsets_for_times({self.tp: timestamp}), 15)).get(self.tp)
        finally:
            await c.stop()
        emit({"event": "offset_for_time", "consumer": name, "timestamp": timestamp,
              "offset": -1 if found is None else found.offset, "epoch": None,
              "found_timestamp": -1 if found is None else found.timestamp, "error": None})

    async def poll(self, name: str) -> None:
        if name in self.held:
            return
        c = self.polling[name]
        try:
            batches = await c.getmany(self.tp, timeout_ms=POLL_MS, max_records=1 if name in self.until else 500)
        except Exception as exc:  # noqa: BLE001 - what getmany raises is the consumer's answer
            self.stopped[name] = self.polling.pop(name)
            emit({"event": "error", "consumer": name, "code": code_of(exc), "exception": qualified(exc),
                  "message": str(exc)})
            return
        for record in batches.get(self.tp, []):
            value = record.value
            emit({"event": "record", "consumer": name, "offset": record.offset, "epoch": None,
                  "value": value.decode() if value is not None else None})
            if name in self.until and record.offset >= self.until[name]:
                self.held.add(name)
                emit({"event": "held", "consumer": name, "offset": record.offset})

    async def close_all(self) -> None:
        for c in [*self.polling.values(), *self.stopped.values()]:
            await c.stop()


async def serve(bootstrap: str, topic: str, partition: int) -> int:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str] = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line.strip())
        loop.call_soon_threadsafe(lines.put_nowait, "exit")

    threading.Thread(target=read, name="commands", daemon=True).start()
    consumers = AiokafkaConsumers(bootstrap, topic, partition)

    async def handle(line: str) -> bool:
        """Run one command line; True when it was exit."""
        if line == "exit":
            await consumers.close_all()
            emit({"event": "exited"})
            return True
        if line:
            try:
                await consumers.run(line)
                emit({"event": "done", "command": line})
            except AiokafkaLacks as exc:
                failed(line, exc, lacks=True)
            except Exception as exc:  # noqa: BLE001 - every failure is an answer to the command
                failed(line, exc)
        return False

    emit({"event": "ready", "client": f"aiokafka {aiokafka.__version__}"})
    while True:
        while not lines.empty():
            if await handle(lines.get_nowait()):
                return 0
        if not consumers.polling:
            try:  # idle until the next command: nothing to poll
                line = await asyncio.wait_for(lines.get(), 0.02)
            except TimeoutError:
                continue
            if await handle(line):
                return 0
            continue
        polled = [name for name in consumers.polling if name not in consumers.held]
        if not polled:
            try:  # every consumer is held: nothing awaits the client, so wait for the next command here
                line = await asyncio.wait_for(lines.get(), 0.02)
            except TimeoutError:
                continue
            if await handle(line):
                return 0
            continue
        for name in polled:
            await consumers.poll(name)


def main(argv: list[str]) -> int:
    _marker, bootstrap, topic, partition = argv[:4]
    client_logs("aiokafka.consumer.fetcher")
    return asyncio.run(serve(bootstrap, topic, int(partition)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
