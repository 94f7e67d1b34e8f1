"""The Java clients: kcts's drivers (harness/clients/java/) on the target's kafka-clients release."""

from __future__ import annotations

from harness.clients.driver import ClientDriver
from harness.clients.jvm import JavaClient
from harness.clients.stacks.base import ClientStack, DriverRequest
from harness.clients.stacks.choice import JAVA
from harness.kafka.dist import resolve

# The KIP-1319 copier and transaction drivers run on a kafka-clients release of their own choosing
# (harness/scenarios/kip1319_clients.py), not the target's: they are not roles of this stack.
MAIN_CLASS = {"consumers": "Kip320Consumers", "producer": "KctsProducer"}


class Java(ClientStack):
    name = JAVA
    no_reset = "none"
    producer_prefix = 7

    def roles(self) -> tuple[str, ...]:
        return tuple(MAIN_CLASS)

    def version(self) -> str:
        return "kafka-clients (the target's release)"

    def speaks_security(self) -> bool:
        return True

    def start(self, request: DriverRequest) -> ClientDriver:
        return JavaClient.driver(resolve(request.java_clients), MAIN_CLASS[request.role], request.args,
                                 log_path=request.log, config=request.config)
