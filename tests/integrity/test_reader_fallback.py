"""The checker's reader on a target whose DescribeTopicPartitions answers EligibleLeaderReplicas = null
(kfake): Spark's admin offset reader fails in kafka-clients, and the check reads again with the
consumer offset reader instead of ending without a verdict; the report says which reader it used."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import KnownClientGap
from harness.integrity import run
from harness.integrity.model import Expectation, Findings, ReportMeta

NPE = RuntimeError(
    "An error occurred while calling o206.persist.\n: java.util.concurrent.ExecutionException: "
    'java.lang.NullPointerException: Cannot invoke "java.util.List.stream()" because the return value of '
    '"org.apache.kafka.common.message.DescribeTopicPartitionsResponseData$DescribeTopicPartitionsResponsePartition'
    '.eligibleLeaderReplicas()" is null'
)


class Conf:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class Context:
    master = "local[1]"


class Spark:
    def __init__(self) -> None:
        self.conf = Conf()
        self.sparkContext = Context()


class Anomalies:
    def unpersist(self) -> None:
        return None


EXPECT = Expectation(("in",), ("out",), ())


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The consumer-offsets setting each read saw; the first read fails as kafka-clients does on kfake."""
    seen: list[str | None] = []

    def read_and_check(spark: Spark, *args: object) -> tuple[Findings, Anomalies, set[str]]:
        seen.append(spark.conf.get(run.CONSUMER_OFFSETS))
        if len(seen) == 1:
            raise NPE
        return Findings({}, {}, []), Anomalies(), set()

    monkeypatch.setattr(run, "_read_and_check", read_and_check)
    monkeypatch.setattr(run, "connector_client_version", lambda: "3.9.2")
    return seen


def test_the_admin_reader_failing_on_a_null_elr_list_is_read_again_with_the_consumer_reader(
    reads: list[str | None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    written: list[dict[str, object]] = []
    monkeypatch.setattr(run.report, "write", lambda f, a, out, meta: written.append(meta))
    spark = Spark()

    findings = run.check_topics(spark, {}, EXPECT, out_dir=tmp_path, meta=ReportMeta("s"))  # type: ignore[arg-type]

    assert findings.ok and reads == [None, "true"]
    assert run.CONSUMER_OFFSETS not in spark.conf.values, "the session's setting is restored"
    (meta,) = written
    assert str(meta["offset_reader"]).startswith("consumer (Spark's admin offset reader: kafka-clients 3.9.2 cannot")
    assert "eligibleLeaderReplicas()" in str(meta["offset_reader"]) and meta["scenario"] == "s"


def test_a_session_setting_of_its_own_is_restored(reads: list[str | None]) -> None:
    spark = Spark()
    spark.conf.set(run.CONSUMER_OFFSETS, "false")
    run.check_topics(spark, {}, EXPECT, read_uncommitted=False)  # type: ignore[arg-type]
    assert reads == ["false", "true"] and spark.conf.values[run.CONSUMER_OFFSETS] == "false"


def test_the_consumer_reader_failing_too_is_the_known_client_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    def always(*args: object) -> None:
        raise NPE

    monkeypatch.setattr(run, "_read_and_check", always)
    monkeypatch.setattr(run, "connector_client_version", lambda: "3.9.2")
    with pytest.raises(KnownClientGap, match="EligibleLeaderReplicas = null"):
        run.check_topics(Spark(), {}, EXPECT)  # type: ignore[arg-type]


def test_any_other_reader_failure_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def fails(*args: object) -> None:
        calls.append(1)
        raise RuntimeError("java.lang.NullPointerException somewhere else")

    monkeypatch.setattr(run, "_read_and_check", fails)
    with pytest.raises(RuntimeError, match="somewhere else"):
        run.check_topics(Spark(), {}, EXPECT)  # type: ignore[arg-type]
    assert calls == [1]
    assert run.reader_gap_summary(RuntimeError("java.lang.NullPointerException somewhere else")) is None
