"""One client stack: a client library kcts judges, and the driver programs it runs for the scenes.

A stack is named once (`name`), says which scene roles it has a driver for, and starts one. Every
stack's driver of a role takes the same arguments and speaks the same commands and events, so a
scene drives them alike and judges their histories alike:

- `consumers` BOOTSTRAP TOPIC PARTITION: KIP-320 consumers by command (harness/clients/java/
  Kip320Consumers.java names the commands and events);
- `producer` BOOTSTRAP TOPIC PREFIX: an idempotent producer writing "PREFIX.N" (KctsProducer.java);
- `copier`: a transactional consume-transform-produce loop committing with sendOffsetsToTransaction
  (each stack's own arguments: its module says which);
- `txn_commit`: one transaction that commits offsets (librdkafka only).

A role a stack has no driver for is the client lacking it (`ClientLacks`: "not supported by this
client", with what the client offers instead as the evidence), never a skip without a reason.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from harness.clients.driver import ClientDriver
from harness.errors import ClientLacks, DriverUnavailable, SetupError

ROLES = ("consumers", "producer", "copier", "txn_commit")


@dataclass(frozen=True)
class DriverRequest:
    """What a scene asks of a stack: one driver process of `role`."""

    role: str
    args: list[str]
    config: dict[str, object]  # librdkafka-style settings, bootstrap.servers included
    log: Path
    java_clients: str  # the kafka-clients release of the target (the Java stack's version)


class ClientStack(ABC):
    """A client library under judgement. Subclasses are small: a name, the roles, how to start one."""

    name: ClassVar[str]
    no_reset: ClassVar[str]  # the client's auto.offset.reset value for "no automatic reset"
    producer_prefix: ClassVar[int]  # the prefix of the values its producer writes ("PREFIX.N")
    lacks: ClassVar[dict[str, str]] = {}  # role -> the client's source or docs saying why it has none

    @property
    def resets(self) -> tuple[str, str, str]:
        return ("earliest", "latest", self.no_reset)

    def driver(self, request: DriverRequest) -> ClientDriver:
        """The driver process of `request.role` (not started)."""
        if request.role in self.lacks:
            raise ClientLacks(self.version(), f"a {request.role} driver", self.lacks[request.role])
        if request.role not in self.roles():
            raise DriverUnavailable(f"kcts has no {request.role} driver for {self.name} (its drivers: "
                                    f"{', '.join(self.roles())})")
        self.require(request.config)
        return self.start(request)

    @abstractmethod
    def roles(self) -> tuple[str, ...]:
        """The roles kcts has a driver of this stack for."""

    @abstractmethod
    def start(self, request: DriverRequest) -> ClientDriver:
        """The driver of a role this stack has."""

    @abstractmethod
    def version(self) -> str:
        """The client and release a run of this stack judges, e.g. "franz-go v1.22.2"."""

    def choose(self, version: str) -> None:
        """Judge `version` of the client in this run (`--client-stack NAME@VERSION`)."""
        raise SetupError(f"--client-stack {self.name}@{version}: kcts runs one release of {self.name}, "
                         f"{self.version()}; give --client-stack {self.name}")

    def require(self, config: dict[str, object]) -> None:
        """Refuse (DriverUnavailable, a skip that says why) a listener this stack's drivers cannot speak."""
        protocol = str(config.get("security.protocol", "plaintext")).lower()
        if protocol != "plaintext" and not self.speaks_security():
            raise DriverUnavailable(f"kcts's {self.name} driver speaks PLAINTEXT only; this target's listener is "
                                    f"{protocol}: judge {self.name} on a plaintext listener")

    def speaks_security(self) -> bool:
        """Whether the drivers take the clients' TLS and SASL settings."""
        return False
