"""kafka-python (PyPI `kafka-python`, the pure-Python client): kcts's drivers
(harness/clients/python_drivers/kafka_python_*.py) under the interpreter of a cached virtualenv that
holds the release pinned here (harness.clients.pypi_env), on a plaintext listener."""

from __future__ import annotations

import os

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.pypi_env import PypiClient, interpreter
from harness.clients.stacks.base import ClientStack, DriverRequest

VERSION = "3.0.12"
CLIENT = PypiClient("kafka-python", (f"kafka-python=={VERSION}",), "import kafka; print(kafka.__version__)", VERSION)
MODULES = {role: f"harness.clients.python_drivers.kafka_python_{role}"
           for role in ("consumers", "producer", "copier")}


class KafkaPython(ClientStack):
    name = "kafka-python"
    no_reset = "none"  # any auto_offset_reset but earliest and latest (SubscriptionState: OffsetResetStrategy.NONE)
    producer_prefix = 14

    def roles(self) -> tuple[str, ...]:
        return tuple(MODULES)

    def version(self) -> str:
        return f"kafka-python {VERSION}"

    def start(self, request: DriverRequest) -> ClientDriver:
        return python_driver(self.name, interpreter(CLIENT), MODULES[request.role], request)


def python_driver(stack: str, python: os.PathLike[str], module: str, request: DriverRequest) -> ClientDriver:
    """`python -m MODULE MARKER ARGS` of a Python client stack: the marker first, as every kcts driver,
    so that the session's reaper finds it; PYTHONPATH cleared, the virtualenv's own packages first."""
    env = {**os.environ, "PYTHONPATH": ""}
    return ClientDriver(f"{stack} {request.role}", [os.fspath(python), "-X", "faulthandler", "-m", module,
                                                    session.current().marker, *request.args], request.log, env=env)
