"""librdkafka, through a confluent-kafka release (`--librdkafka`): kcts's Python drivers
(harness/clients/drivers/) under that release's interpreter. The harness itself always drives the
cluster with the pinned confluent-kafka; only the client under test is of the release asked for."""

from __future__ import annotations

import json
import os
import sys

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.stacks.base import ClientStack, DriverRequest
from harness.clients.stacks.choice import LIBRDKAFKA, PINNED_CONFLUENT_KAFKA, current

# The producer's settings in every producer scene: what the Java producer does by default.
PRODUCER = {
    "acks": "all", "enable.idempotence": True, "linger.ms": 5,
    "queue.buffering.max.messages": 200,  # keeps the in-flight window small and steady
    # A paused leader answers nothing: give up on it after 5 s, as the Java producer does, rather than
    # the 60 s socket default, and retry on the new leader, which the 3 s broker session timeout has
    # elected by then. A longer wait only lengthens the failover scene: its in-flight requests may
    # wait out two timeouts, and while they wait its broker thread keeps a core busy.
    "socket.timeout.ms": 5000, "request.timeout.ms": 5000,
    # Its idempotence state changes in its log: an epoch bump after skipped sequence numbers is the
    # signature of a duplicate it is known to write (harness/client_gaps.toml).
    "debug": "eos",
}


class Librdkafka(ClientStack):
    name = LIBRDKAFKA
    no_reset = "error"
    producer_prefix = 8

    def roles(self) -> tuple[str, ...]:
        return ("consumers", "producer", "txn_commit")

    def version(self) -> str:
        return f"librdkafka via confluent-kafka {current().librdkafka}"

    def speaks_security(self) -> bool:
        return True

    def start(self, request: DriverRequest) -> ClientDriver:
        module = {"consumers": "kip320_consumers"}.get(request.role, request.role)
        config = {**request.config, **PRODUCER} if request.role == "producer" else request.config
        return driver(module, request.args, config, request)


def driver(module: str, args: list[str], config: dict[str, object], request: DriverRequest) -> ClientDriver:
    """`python -m harness.clients.drivers.<module> MARKER ARGS` under the interpreter of the run's
    confluent-kafka release; `config` (librdkafka settings, bootstrap aside) in $KCTS_CLIENT_CONFIG."""
    version = current().librdkafka
    if version == PINNED_CONFLUENT_KAFKA:
        python = sys.executable
    else:
        from harness.clients.versions import interpreter

        python = str(interpreter(version))
    settings = {k: v for k, v in config.items() if k != "bootstrap.servers"}
    env = {**os.environ, "KCTS_CLIENT_CONFIG": json.dumps(settings), "PYTHONPATH": ""}
    return ClientDriver(f"librdkafka-{version} {module}", [python, "-X", "faulthandler", "-m",
                                                           f"harness.clients.drivers.{module}",
                                                           session.current().marker, *args], request.log, env=env)
