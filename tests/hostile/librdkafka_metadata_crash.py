"""Reproduces a crash of librdkafka met while building the hostile-target tests (not a test itself).

    PYTHONPATH=. python tests/hostile/librdkafka_metadata_crash.py

confluent-kafka 2.16.1 (librdkafka 2.16.0): an AdminClient's list_topics against a broker that answers
ApiVersions well and Metadata v12 with a body encoded at Metadata v0 kills the process with SIGSEGV
(exit 139) instead of raising. This is why the external backend asks a target with kcts's own raw
client before librdkafka talks to it (harness/cluster/external.py). Observed, not traced in
librdkafka's source.
"""

from __future__ import annotations

import confluent_kafka
from confluent_kafka.admin import AdminClient

from harness.protocol.spec import load_specs
from tests.hostile.broker import HostileBroker

if __name__ == "__main__":
    print(confluent_kafka.version(), confluent_kafka.libversion(), flush=True)
    with HostileBroker(load_specs("4.4.0"), "wrong-version") as broker:
        admin = AdminClient({"bootstrap.servers": "{}:{}".format(*broker.address), "log_level": 0})
        try:
            print(admin.list_topics(timeout=6))
        except Exception as exc:  # noqa: BLE001 - what a client that survives says
            print("raised", exc)
