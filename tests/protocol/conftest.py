"""Shared setup of the protocol tests: raw connections to the session cluster's brokers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from harness.protocol.client import RawClient

RawClientFactory = Callable[..., RawClient]


def pytest_configure(config: pytest.Config) -> None:
    # The kcts plugin registers `live` too; registering it twice is harmless, and keeps
    # --strict-markers happy when these tests run without the plugin.
    config.addinivalue_line("markers", "live: needs a running Kafka cluster (the `cluster` fixture)")


@pytest.fixture
def raw_client(cluster: Any) -> Iterator[RawClientFactory]:
    """`raw_client(broker_id=None)`: a RawClient to that broker (the first one by default), closed afterwards."""
    made: list[RawClient] = []

    def connect(broker_id: int | None = None, **kwargs: Any) -> RawClient:
        bid = cluster.broker_ids[0] if broker_id is None else broker_id
        host, port = cluster.broker_address(bid)
        kwargs.setdefault("timeout", 20.0)
        client = RawClient.connect(host, port, spec=cluster.target.protocol_specs, **kwargs)
        made.append(client)
        return client

    yield connect
    for c in made:
        c.close()
