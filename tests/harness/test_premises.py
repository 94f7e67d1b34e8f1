"""What a scene asks of the target before it starts (harness/scenarios/premises.py): a target without
InitProducerId gets "not supported" for a scene whose producer is idempotent, not a FAIL of writes that
never left the client. The broker here is a stand-in answering ApiVersions: what is tested is the
reading of its answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.errors import NotSupported
from harness.protocol.spec import load_specs
from harness.scenarios import premises

SPECS = load_specs("4.4.0")
INIT_PRODUCER_ID = SPECS.api("InitProducerId").key


@dataclass
class Broker:
    broker_versions: dict[int, tuple[int, int]]
    host: str = "127.0.0.1"
    port: int = 9092
    specs: Any = field(default=SPECS)

    def negotiate(self) -> None:
        pass


def _against(monkeypatch: pytest.MonkeyPatch, versions: dict[int, tuple[int, int]]) -> Any:
    class Connector:
        def __init__(self, cluster: object) -> None:
            pass

        def __enter__(self) -> Any:
            return lambda _broker: Broker(versions)

        def __exit__(self, *exc: object) -> None:
            pass

    class State:
        def running_brokers(self) -> list[int]:
            return [1]

    class Target:
        apache_release = False
        version = ""
        image = None

    class Cluster:
        state = State()
        target = Target()

    monkeypatch.setattr(premises.rr, "RawConnector", Connector)
    return Cluster()


def test_a_target_without_init_producer_id_does_not_support_the_idempotent_producer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = _against(monkeypatch, {0: (0, 13), 1: (4, 18)})
    with pytest.raises(NotSupported, match=r"127\.0\.0\.1:9092 advertises no InitProducerId"):
        premises.require_idempotence(cluster)


def test_a_target_with_init_producer_id_meets_the_premise(monkeypatch: pytest.MonkeyPatch) -> None:
    premises.require_idempotence(_against(monkeypatch, {0: (0, 13), INIT_PRODUCER_ID: (0, 6)}))
