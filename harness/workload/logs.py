"""librdkafka logs of the workload's clients go to Python logging, not straight to stderr.

Under pytest they are captured with the test that caused them (evidence when it fails); outside a
test they are dropped, so a client that outlives its cluster by a moment does not flood the output.
"""

from __future__ import annotations

import logging

LOGGER = logging.getLogger("kcts.workload.librdkafka")
LOGGER.addHandler(logging.NullHandler())


def client_logging() -> dict[str, object]:
    return {"log_level": 3, "logger": LOGGER}
