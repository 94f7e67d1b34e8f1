"""A target that refuses InitProducerId gets the premise verdict ("target refused"), never an ERROR nor a
FAIL, whichever client asked: the raw client, librdkafka in the harness's process, the generator and
processor processes of the integrity workload, and the drivers run through the proxy. Fed with what
Nisshi 0.8.1 answered (tests/harness/data/nisshi-0.8.1-refusals.json); each test also shows that a
granted id, or a failure that is no answer of the target, is not taken for a refusal."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from harness import confluent, verdicts
from harness.clients import transactions as tx
from harness.clients import txn_refusal
from harness.errors import TargetRefused
from harness.protocol import errors
from harness.protocol.client import Exchange
from harness.protocol.spec import load_specs
from harness.workload.generator_process import GeneratorDied, GeneratorProcess
from harness.workload.processor_group import Instance, ProcessorGroup

RECORDED = json.loads((Path(__file__).parent / "data" / "nisshi-0.8.1-refusals.json").read_text())
SPECS = load_specs("4.4.0")
INIT = RECORDED["init_producer_id"]
TXN_ID = INIT["request"]["TransactionalId"]


def _exchange(recorded: dict[str, Any], api: str) -> Exchange:
    return Exchange(SPECS.api(api), recorded["version"], 1, recorded["request"], b"\x00", response=recorded["response"],
                    response_bytes=b"\x00" * 20)


def _granted() -> dict[str, Any]:
    return {**INIT, "response": {**INIT["response"], "ErrorCode": 0, "ProducerId": 7, "ProducerEpoch": 0}}


class Coordinator:
    """A raw client that answers FindCoordinator and InitProducerId as recorded."""

    def __init__(self, init: dict[str, Any]) -> None:
        self.init = init

    def max_version(self, api: str) -> int:
        return {"FindCoordinator": 6, "InitProducerId": 5}[api]

    def exchange(self, api: str, version: int, body: dict[str, Any]) -> Exchange:
        return _exchange(RECORDED["find_coordinator"] if api == "FindCoordinator" else self.init, api)


def test_raw_init_producer_id_answered_with_an_error_is_the_targets_refusal() -> None:
    c = Coordinator(INIT)
    with pytest.raises(txn_refusal.TransactionRefused) as refused:
        tx.begin(lambda *a, **k: c, TXN_ID)  # type: ignore[arg-type,misc]
    assert refused.value.refusal.code == errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in str(refused.value) and TXN_ID in str(refused.value)
    assert "InitProducerIdRequest v5" in str(refused.value), "the decoded exchange is the evidence"


def test_raw_init_producer_id_granted_begins_the_transaction() -> None:
    c = Coordinator(_granted())
    txn = tx.begin(lambda *a, **k: c, TXN_ID)  # type: ignore[arg-type,misc]
    assert (txn.producer_id, txn.producer_epoch) == (7, 0)


def test_the_refusal_ends_the_check_as_target_refused() -> None:
    refusal = txn_refusal.InitRefused("the raw client", TXN_ID, 53, "recorded")
    with pytest.raises(pytest.skip.Exception) as ended:
        verdicts.from_exception(refusal.error())
    assert str(ended.value).startswith(verdicts.TARGET_REFUSED)
    assert verdicts.classify("skipped", str(ended.value)) == "target-refused"


@dataclass
class Producer:
    """A librdkafka producer whose init_transactions fails with `error` (or succeeds)."""

    error: KafkaError | None
    calls: list[float] = field(default_factory=list)

    def init_transactions(self, timeout: float) -> None:
        self.calls.append(timeout)
        if self.error is not None:
            raise KafkaException(self.error)


def _librdkafka_error() -> KafkaError:
    said = re.search(r'str="([^"]+)"', RECORDED["librdkafka_init_transactions"])
    assert said is not None
    return KafkaError(53, said.group(1), fatal=True)


def test_librdkafka_init_transactions_refused_by_the_target() -> None:
    with pytest.raises(txn_refusal.TransactionRefused) as refused:
        txn_refusal.init_transactions(Producer(_librdkafka_error()), TXN_ID, 30)  # type: ignore[arg-type]
    assert refused.value.refusal.code == 53
    assert "Transactional Id authorization failed" in str(refused.value)


@pytest.mark.parametrize("error", [
    pytest.param(KafkaError(KafkaError._TIMED_OUT), id="timed-out"),
    pytest.param(KafkaError(KafkaError._TRANSPORT), id="transport"),
    pytest.param(KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS, retriable=True), id="retriable"),
])
def test_librdkafka_failing_on_its_own_or_retriably_is_no_refusal(error: KafkaError) -> None:
    with pytest.raises(KafkaException) as raised:
        txn_refusal.init_transactions(Producer(error), TXN_ID, 30)  # type: ignore[arg-type]
    assert not isinstance(raised.value, TargetRefused)


class FatalProducer:
    """A stand-in for the producer that librdkafka leaves fatal after the refusal: flush raises the
    fatal error again (as it did on Nisshi 0.8.1, masking the refusal as an ERROR), close works."""

    def __init__(self, config: dict[str, object]) -> None:
        self.closed = False

    def init_transactions(self, timeout: float) -> None:
        raise KafkaException(_librdkafka_error())

    def flush(self, timeout: float) -> int:
        raise KafkaException(_librdkafka_error())

    def close(self) -> None:
        self.closed = True


def test_the_refusal_outlives_closing_the_fatal_producer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confluent, "Producer", FatalProducer)
    mark = confluent.open_keys()  # clients other tests of the session hold (lasting fixtures) are not this test's
    with pytest.raises(txn_refusal.TransactionRefused) as refused, \
            confluent.producer({"transactional.id": TXN_ID}) as p:
        txn_refusal.init_transactions(p, TXN_ID, 30)
    assert refused.value.refusal.code == 53
    assert p.closed
    assert any("closing the producer then raised too" in n for n in refused.value.__notes__)
    assert not [c for c in confluent.open_clients() if c.key not in mark], confluent.open_clients()


def test_closing_a_fatal_producer_after_a_clean_block_still_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confluent, "Producer", FatalProducer)
    with pytest.raises(KafkaException) as raised, confluent.producer({}) as p:
        pass
    assert not isinstance(raised.value, TargetRefused)
    assert p.closed


def test_librdkafka_init_transactions_granted() -> None:
    p = Producer(None)
    txn_refusal.init_transactions(p, TXN_ID, 30)  # type: ignore[arg-type]
    assert p.calls == [30]


def test_the_generator_process_raises_the_refusal_its_child_reported() -> None:
    refusal = txn_refusal.librdkafka_refusal(KafkaException(_librdkafka_error()), TXN_ID, "the generator")
    assert refusal is not None
    gen = object.__new__(GeneratorProcess)
    gen._refused = None
    gen._receive(refusal.event())
    assert gen._refused == refusal
    with pytest.raises(txn_refusal.TransactionRefused):
        gen._died("init_transactions")


def test_a_generator_process_that_died_otherwise_stays_an_error() -> None:
    gen = object.__new__(GeneratorProcess)
    gen._refused = None

    class Worker:
        def describe(self) -> str:
            return "generator (exit code 1)"

        def last_words(self) -> list[str]:
            return ["Traceback ..."]

    gen.worker = Worker()  # type: ignore[assignment]
    with pytest.raises(GeneratorDied):
        gen._died("init_transactions")


def test_a_processor_refused_ends_the_group_as_refused() -> None:
    group = object.__new__(ProcessorGroup)
    group.error, group.refused = None, None
    inst = Instance("py0", None, {})  # type: ignore[arg-type]
    refusal = txn_refusal.InitRefused("processor py0", "g-py0", 53, "KafkaError{FATAL,code=...}")
    group._receiver(inst)(refusal.event())
    with pytest.raises(txn_refusal.TransactionRefused):
        group.check()
    assert inst.error == str(refusal)


@dataclass
class Recorded:
    """An exchange as the proxy recorded it."""

    api: str
    version: int
    request: dict[str, Any] | None
    response: dict[str, Any] | None
    rules: list[str] = field(default_factory=list)


def _through_proxy(init: dict[str, Any], rules: list[str] | None = None) -> Recorded:
    return Recorded("InitProducerId", init["version"], init["request"], init["response"], rules or [])


def test_a_driver_refused_through_the_proxy() -> None:
    refusal = txn_refusal.from_recorded([_through_proxy(INIT)], "Java 4.3.1 Kip1319Txn")
    assert refusal is not None and refusal.code == 53 and refusal.transactional_id == TXN_ID


@pytest.mark.parametrize("exchanges", [
    pytest.param([_through_proxy(INIT), _through_proxy(_granted())], id="granted-after-a-refusal"),
    pytest.param([_through_proxy(INIT, ["InjectError"])], id="made-by-a-proxy-rule"),
    pytest.param([_through_proxy({**INIT, "request": {**INIT["request"], "TransactionalId": None}})],
                 id="idempotent-producer"),
    pytest.param([], id="never-asked"),
    pytest.param([_through_proxy({**INIT, "response": {**INIT["response"],
                                                       "ErrorCode": errors.COORDINATOR_LOAD_IN_PROGRESS}})],
                 id="retriable"),
])
def test_no_driver_refusal(exchanges: list[Recorded]) -> None:
    assert txn_refusal.from_recorded(exchanges, "a driver") is None
