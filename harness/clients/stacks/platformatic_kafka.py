"""@platformatic/kafka (npm): kcts's drivers (harness/clients/platformatic_kafka/, ES modules, `node
main.mjs MARKER ROLE ARGS`) on the release that folder's package-lock.json pins, installed with npm ci
into the kcts cache, on a plaintext listener. Its engines ask for Node.js >= 22.22 (it calls
Promise.withResolvers, which Node.js 20 lacks): the drivers run on the Node.js that
harness/clients/node_runtime/ pins, installed from the npm registry (harness.clients.pinned_node), or
on $KCTS_NODE; one its engines refuse is a SetupError naming the fix."""

from __future__ import annotations

from pathlib import Path

from harness.clients.driver import ClientDriver
from harness.clients.node_drivers import node_driver, pinned_version
from harness.clients.pinned_node import pinned_node
from harness.clients.stacks.base import ClientStack, DriverRequest

SOURCE = Path(__file__).resolve().parents[1] / "platformatic_kafka"
PACKAGE = "@platformatic/kafka"


class PlatformaticKafka(ClientStack):
    name = "platformatic-kafka"
    no_reset = "none"  # consume()'s fallbackMode 'fail' (MessagesStreamFallbackModes.FAIL)
    producer_prefix = 16

    def roles(self) -> tuple[str, ...]:
        return ("consumers", "producer", "copier")

    def version(self) -> str:
        return f"@platformatic/kafka {pinned_version(SOURCE, PACKAGE)}"

    def start(self, request: DriverRequest) -> ClientDriver:
        return node_driver(self.name, SOURCE, PACKAGE, "main.mjs", request, node=pinned_node)
