"""A target that will not give a transactional producer its id: the refused premise, whichever client asked.

A check whose scene needs a transactional producer judges nothing when the target answers
InitProducerId with an error: Nisshi 0.8.1 answers every request with a TransactionalId
TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53) whatever its settings, because it has no transactions
(nisshi-storage 0.8.1, src/service/init_producer_id.rs, "Nisshi does not support transactions").
That answer is the target's refusal of the premise (`TargetRefused`, the answer as evidence), never
an ERROR nor a FAIL, for every client the harness starts a transaction with: the raw client
(`check_answer`), librdkafka in the harness's process (`init_transactions`), the workload's
generator and processor processes, which report an `init_refused` event (`from_event`) that their
parent raises as the refusal, and the Java, librdkafka and franz-go drivers run through the
protocol proxy, whose recording holds the answer (`from_recorded`). A client's own failure (a
timeout, a lost connection: librdkafka's negative codes) and an error the client itself calls
retriable (asked again by `retry_retriable` where the caller retries) are no refusal of the target
and stay what they were.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer

from harness.errors import TargetRefused
from harness.protocol import errors

EVENT = "init_refused"  # the event a driver or workload process reports the refusal with


@dataclass(frozen=True)
class InitRefused:
    """InitProducerId answered with error `code` for `transactional_id`; `answer` is the decoded
    exchange or the client's own words for it."""

    client: str
    transactional_id: str
    code: int
    answer: str

    def __str__(self) -> str:
        return (f"the target refused {self.client}'s transactional producer {self.transactional_id!r}: InitProducerId "
                f"answered {errors.describe(self.code)}, so no transaction of the scene could start; the answer: "
                f"{self.answer}")

    def error(self) -> TransactionRefused:
        return TransactionRefused(self)

    def fields(self) -> dict[str, Any]:
        """The refusal's fields in the `EVENT` a driver process reports it with (a JSON line)."""
        return {"client": self.client, "transactional_id": self.transactional_id, "code": self.code,
                "answer": self.answer}

    def event(self) -> dict[str, Any]:
        return {"event": EVENT, **self.fields()}


class TransactionRefused(TargetRefused):
    """The refusal as the verdict it is, with the answer it came from (`refusal`)."""

    def __init__(self, refusal: InitRefused) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


def from_event(msg: dict[str, Any]) -> InitRefused | None:
    """The refusal a driver process reported in `msg`, or None for any other event."""
    if msg.get("event") != EVENT:
        return None
    return InitRefused(str(msg.get("client", "a driver")), str(msg.get("transactional_id", "")),
                       int(msg["code"]), str(msg.get("answer", "")))


class ProxiedExchangeLike(Protocol):
    """An exchange as the protocol proxy recorded it (harness.proxy.recorder.ProxiedExchange)."""

    api: str
    version: int
    rules: list[str]

    @property
    def request(self) -> dict[str, Any] | None: ...

    @property
    def response(self) -> dict[str, Any] | None: ...


def from_recorded(exchanges: Iterable[ProxiedExchangeLike], client: str) -> InitRefused | None:
    """The refusal in what a client driven through the proxy exchanged with the target: an
    InitProducerId with a TransactionalId answered with an error that asking again does not mend
    (by the target: no proxy rule altered it) where none was granted. Any client's (Java,
    librdkafka, franz-go): read on the wire."""
    asked = [e for e in exchanges if e.api == "InitProducerId" and (e.request or {}).get("TransactionalId")
             and e.response is not None and not e.rules]
    if any(e.response and e.response.get("ErrorCode") == 0 for e in asked):
        return None
    refused = [e for e in asked if e.response and not errors.is_retriable(int(e.response.get("ErrorCode", 0)))]
    if not refused:
        return None
    e = refused[-1]
    assert e.request is not None and e.response is not None
    return InitRefused(client, str(e.request["TransactionalId"]), int(e.response["ErrorCode"]),
                       f"InitProducerId v{e.version} {e.request} answered {e.response}")


def check_answer(response: dict[str, Any], transactional_id: str, dump: str, client: str = "the raw client") -> None:
    """Raise the refusal where a decoded InitProducerId `response` (its exchange `dump`) is an error."""
    code = int(response["ErrorCode"])
    if code:
        raise InitRefused(client, transactional_id, code, dump).error()


def broker_code(exc: KafkaException) -> int | None:
    """The broker's error code of a librdkafka failure that asking again will not mend, or None
    where librdkafka failed on its own (its local errors are negative: a timeout, a transport
    failure) or calls the error retriable (a coordinator loading, a transaction still completing)."""
    err = exc.args[0] if exc.args else None
    if isinstance(err, KafkaError) and err.code() > 0 and not err.retriable():
        return int(err.code())
    return None


def librdkafka_refusal(exc: KafkaException, transactional_id: str, client: str = "librdkafka") -> InitRefused | None:
    """The refusal an `init_transactions` failure stands for, or None where it is no answer of the target."""
    code = broker_code(exc)
    return None if code is None else InitRefused(client, transactional_id, code, str(exc.args[0]))


def init_transactions(producer: Producer, transactional_id: str, timeout: float, client: str = "librdkafka") -> None:
    """`producer.init_transactions(timeout)`; an error the target answered is its refusal (TargetRefused)."""
    try:
        producer.init_transactions(timeout)
    except KafkaException as exc:
        refused = librdkafka_refusal(exc, transactional_id, client)
        if refused is None:
            raise
        raise refused.error() from exc
