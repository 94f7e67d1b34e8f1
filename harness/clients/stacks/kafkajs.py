"""KafkaJS (npm `kafkajs`): kcts's drivers (harness/clients/kafkajs/, `node main.js MARKER ROLE ARGS`)
on the release that folder's package-lock.json pins, installed with npm ci into the kcts cache, on a
plaintext listener."""

from __future__ import annotations

from pathlib import Path

from harness.clients.driver import ClientDriver
from harness.clients.node_drivers import node_driver, pinned_version
from harness.clients.stacks.base import ClientStack, DriverRequest

SOURCE = Path(__file__).resolve().parents[1] / "kafkajs"
PACKAGE = "kafkajs"


class KafkaJS(ClientStack):
    name = "kafkajs"
    # KafkaJS has no "no reset" policy (subscribe's fromBeginning is a boolean): the consumers driver
    # refuses `none` as an API the client lacks, so the checks that need one end "not supported".
    no_reset = "none"
    producer_prefix = 15

    def roles(self) -> tuple[str, ...]:
        return ("consumers", "producer", "copier")

    def version(self) -> str:
        return f"kafkajs {pinned_version(SOURCE, PACKAGE)}"

    def start(self, request: DriverRequest) -> ClientDriver:
        return node_driver(self.name, SOURCE, PACKAGE, "main.js", request)
