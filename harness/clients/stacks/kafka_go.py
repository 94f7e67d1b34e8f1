"""kafka-go (github.com/segmentio/kafka-go): kcts's consumers driver (harness/clients/kafka-go/, the
binary `kcts-kafka-go`) built against the kafka-go release harness/clients/kafka-go/go.mod pins, on a
plaintext listener. kafka-go has no idempotent and no transactional producer: the producer and copier
roles are lacking, with its source as the evidence (docs/clients/kafka-go.md)."""

from __future__ import annotations

from pathlib import Path

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.stacks.base import ClientStack, DriverRequest
from harness.clients.stacks.sarama import module_version
from harness.kafka.dist import cache_root
from harness.process.gobuild import go_binary

SOURCE = Path(__file__).resolve().parents[1] / "kafka-go"
MODULE = "github.com/segmentio/kafka-go"


class KafkaGo(ClientStack):
    name = "kafka-go"
    # kafka-go has no "no reset" policy; `none` sets ReaderConfig.OffsetOutOfRangeError, its one knob
    # that turns an out-of-range offset into an error (reader.go) instead of a wait or a skip.
    no_reset = "none"
    producer_prefix = 11
    lacks = {
        "producer": (
            "kafka-go v0.4.51 has no idempotent producer: its Writer (writer.go) has no idempotence setting, never "
            "sends InitProducerId and writes every batch without a producer id or sequence numbers; the KIP-359 "
            "checks judge an idempotent producer"),
        "copier": (
            "kafka-go v0.4.51 has no transactional producer: Writer (writer.go) has no transactional id, and "
            "Client's InitProducerID, AddOffsetsToTxn, TxnOffsetCommit and EndTxn (initproducerid.go, "
            "addoffsetstotxn.go, txnoffsetcommit.go, endtxn.go) are single protocol requests with no "
            "transaction manager behind them (no sendOffsetsToTransaction)"),
    }

    def roles(self) -> tuple[str, ...]:
        return ("consumers",)

    def version(self) -> str:
        return f"kafka-go {module_version(SOURCE, MODULE)}"

    def start(self, request: DriverRequest) -> ClientDriver:
        return ClientDriver(f"kafka-go {request.role}", [str(binary()), f"-tag={session.current().marker}",
                                                         request.role, *request.args], request.log)


def binary() -> Path:
    return go_binary(SOURCE, "kcts-kafka-go", "the kafka-go client drivers", cache_root() / "go-kafka-go")
