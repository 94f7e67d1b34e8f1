"""The checker's reader on a target that Spark's Java kafka-clients cannot talk to (librdkafka's mock
cluster answers an ApiVersions above its v2 in a layout the Java client reads as a 19.7-minute throttle):
the check is refused at once with that answer, before Spark is asked to read anything, instead of an
ERROR after Spark's admin times out ("Timed out waiting for a node assignment", run h30mock-1)."""

from __future__ import annotations

import pytest

from harness.clients import jvm
from harness.errors import TargetRefused
from harness.integrity import run
from harness.integrity.model import Expectation, Findings

BOOTSTRAP = "127.0.0.1:39735"
EXPECT = Expectation(("in",), ("out",), ())


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every read Spark was asked for; Spark's kafka-clients version as the connector's jars name it."""
    seen: list[str] = []

    def read_and_check(
        spark: object, client_config: dict[str, str], *args: object,
    ) -> tuple[Findings, object, set[str]]:
        seen.append(client_config["bootstrap.servers"])
        return Findings({}, {}, []), None, set()

    monkeypatch.setattr(run, "_read_and_check", read_and_check)
    monkeypatch.setattr(run, "_finish", lambda findings, *args: findings)
    monkeypatch.setattr(run, "connector_client_version", lambda: "3.9.2")
    return seen


def test_a_target_the_java_client_cannot_use_is_refused_before_spark_reads(
    reads: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The preflight's verdict on this bootstrap, as java_reaches records it for librdkafka's mock.
    monkeypatch.setitem(jvm._reaches, BOOTSTRAP, (
        "Java kafka-clients {version} cannot use the target at " + BOOTSTRAP + ": its answer to ApiVersions v5 "
        "is an error whose bytes, read at v5 as the Java client reads them, carry ThrottleTimeMs 1179648 (19.7 min)"))

    with pytest.raises(TargetRefused) as refused:
        run.check_topics(None, {"bootstrap.servers": BOOTSTRAP}, EXPECT)  # type: ignore[arg-type]

    assert reads == [], "Spark was asked to read a target its client cannot use"
    assert "Java kafka-clients 3.9.2 (Spark's Kafka source" in str(refused.value)
    assert "ThrottleTimeMs 1179648" in str(refused.value)


def test_a_target_the_java_client_can_use_is_read(reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(jvm._reaches, BOOTSTRAP, None)

    findings = run.check_topics(None, {"bootstrap.servers": BOOTSTRAP}, EXPECT)  # type: ignore[arg-type]

    assert findings.ok and reads == [BOOTSTRAP]
