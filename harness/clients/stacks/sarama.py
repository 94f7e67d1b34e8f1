"""sarama (github.com/IBM/sarama): kcts's drivers (harness/clients/sarama/, one binary `kcts-sarama`
with a subcommand per role) built against the sarama release harness/clients/sarama/go.mod pins, on a
plaintext listener. What sarama has no API for is said by its consumers driver, command by command
(`seekepoch`: command_failed with `lacks`; records and lookups by time without a leader epoch: null),
so every role has a driver and the checks name what is missing (docs/clients/sarama.md)."""

from __future__ import annotations

from pathlib import Path

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.stacks.base import ClientStack, DriverRequest
from harness.kafka.dist import cache_root
from harness.process.gobuild import go_binary

SOURCE = Path(__file__).resolve().parents[1] / "sarama"
MODULE = "github.com/IBM/sarama"


class Sarama(ClientStack):
    name = "sarama"
    # A group member with Consumer.Group.ResetInvalidOffsets off: an out-of-range committed offset is
    # an error, not a reset to Consumer.Offsets.Initial (consumer_group_session.go newConsumerGroupClaim).
    no_reset = "none"
    producer_prefix = 10

    def roles(self) -> tuple[str, ...]:
        return ("consumers", "producer", "copier")

    def version(self) -> str:
        return f"sarama {module_version(SOURCE, MODULE)}"

    def start(self, request: DriverRequest) -> ClientDriver:
        return ClientDriver(f"sarama {request.role}", [str(binary()), f"-tag={session.current().marker}",
                                                       request.role, *request.args], request.log)


def module_version(source: Path, module: str) -> str:
    """The version of `module` that the go.mod of `source` requires."""
    for line in (source / "go.mod").read_text().splitlines():
        words = line.split()
        if module in words:
            return words[words.index(module) + 1]
    return "unknown"


def binary() -> Path:
    return go_binary(SOURCE, "kcts-sarama", "the sarama client drivers", cache_root() / "go-sarama")
