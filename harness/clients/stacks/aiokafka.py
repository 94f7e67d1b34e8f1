"""aiokafka (PyPI `aiokafka`, the asyncio client): kcts's drivers
(harness/clients/python_drivers/aiokafka_*.py) under the interpreter of a cached virtualenv that holds
the release pinned here and the releases of its dependencies (harness.clients.pypi_env), on a
plaintext listener."""

from __future__ import annotations

from harness.clients.driver import ClientDriver
from harness.clients.pypi_env import PypiClient, interpreter
from harness.clients.stacks.base import ClientStack, DriverRequest
from harness.clients.stacks.kafka_python import python_driver

VERSION = "0.14.0"
# aiokafka's Requires-Dist (async-timeout, packaging, typing_extensions>=4.10.0), each pinned.
CLIENT = PypiClient("aiokafka", (f"aiokafka=={VERSION}", "async-timeout==5.0.1", "packaging==26.4",
                                 "typing_extensions==4.16.0"),
                    "import aiokafka; print(aiokafka.__version__)", VERSION)
MODULES = {role: f"harness.clients.python_drivers.aiokafka_{role}" for role in ("consumers", "producer", "copier")}


class Aiokafka(ClientStack):
    name = "aiokafka"
    no_reset = "none"  # auto_offset_reset "none": OffsetOutOfRangeError is raised (AIOKafkaConsumer's docstring)
    producer_prefix = 15

    def roles(self) -> tuple[str, ...]:
        return tuple(MODULES)

    def version(self) -> str:
        return f"aiokafka {VERSION}"

    def start(self, request: DriverRequest) -> ClientDriver:
        return python_driver(self.name, interpreter(CLIENT), MODULES[request.role], request)
