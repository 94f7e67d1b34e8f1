"""The checker's reader on a target that Spark's Java kafka-clients cannot talk to (librdkafka's mock
cluster answers an ApiVersions above its v2 in a layout the Java client reads as a 19.7-minute throttle):
the check ends at once, "not supported" with that answer, before Spark is asked to read anything,
instead of an ERROR after Spark's admin times out ("Timed out waiting for a node assignment", run
h30mock-1)."""

from __future__ import annotations

import pytest

from harness.clients import jvm
from harness.errors import NotSupported
from harness.integrity import run
from harness.integrity.model import Expectation, Findings

BOOTSTRAP = "127.0.0.1:39735"
EXPECT = Expectation(("in",), ("out",), ())
# The preflight's evidence on this bootstrap, as java_reaches records it for librdkafka's mock.
MOCK = (f"{BOOTSTRAP} advertises ApiVersions v0-2; its answer to ApiVersions v5, the Java client's first request, "
        "is an error whose bytes, read at v5 as the Java client reads them, carry ThrottleTimeMs 1179648 (19.7 min)")


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


def test_a_target_the_java_client_cannot_use_is_not_supported_before_spark_reads(
    reads: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(jvm._reaches, BOOTSTRAP, MOCK)

    with pytest.raises(NotSupported) as ended:
        run.check_topics(None, {"bootstrap.servers": BOOTSTRAP}, EXPECT)  # type: ignore[arg-type]

    assert reads == [], "Spark was asked to read a target its client cannot use"
    assert ended.value.what.startswith("Java kafka-clients 3.9.2 (Spark's Kafka source")
    assert "advertises ApiVersions v0-2" in ended.value.evidence
    assert "ThrottleTimeMs 1179648" in ended.value.evidence


def test_a_target_the_java_client_can_use_is_read(reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(jvm._reaches, BOOTSTRAP, None)

    findings = run.check_topics(None, {"bootstrap.servers": BOOTSTRAP}, EXPECT)  # type: ignore[arg-type]

    assert findings.ok and reads == [BOOTSTRAP]
