"""Reference profiles: a feature missing from a release known to have it is a FAIL, not "not supported"."""

from __future__ import annotations

import pytest

from harness import verdicts
from harness.cluster.kinds.docker import docker_target
from harness.cluster.reference import CAPABILITIES, expected
from harness.cluster.target import TargetSpec, parse
from harness.errors import KctsError, NotSupported


@pytest.mark.parametrize(("version", "capability", "known"), [
    ("4.4.0", "txn-offset-commit-v6", True),
    ("4.3.1", "txn-offset-commit-v6", False),
    ("4.0.2", "transaction-version-2", True),
    ("3.9.1", "transaction-version-2", False),
    ("3.9.1", "transactions", True),
    ("4.4.0", "produce-current-leader-epoch", False),
])
def test_a_release_is_expected_to_have_what_it_shipped(version: str, capability: str, known: bool) -> None:
    line = expected(parse(version), capability)
    assert (line is not None) is known, line
    if known:
        assert f"Apache Kafka {version} has {CAPABILITIES[capability].what}" in line


@pytest.mark.parametrize("target", [parse("kfake"), parse("external:127.0.0.1:9092"),
                                    docker_target("example/broker:1", None)])
def test_no_expectation_of_a_target_that_is_not_a_known_release(target: TargetSpec) -> None:
    assert expected(target, "txn-offset-commit-v6") is None


def test_the_docker_backends_own_image_of_a_release_is_that_release() -> None:
    assert expected(docker_target("4.4.0", None), "txn-offset-commit-v6") is not None


def test_an_unknown_capability_is_an_error() -> None:
    with pytest.raises(KctsError, match="no reference capability 'v7'"):
        expected(parse("4.4.0"), "v7")


def test_v6_missing_from_4_4_0_fails_and_from_kfake_is_not_supported() -> None:
    """What a 4.4.0 regression that dropped TxnOffsetCommit v6 from ApiVersions would get: a FAIL."""
    with pytest.raises(AssertionError, match=r"TxnOffsetCommit v6 \(KIP-1319\) is missing \(advertises 0-5\); "
                                             r"reference profile: Apache Kafka 4.4.0 has"):
        verdicts.not_supported("TxnOffsetCommit v6 (KIP-1319)", "advertises 0-5", target=parse("4.4.0"),
                               capability="txn-offset-commit-v6")
    with pytest.raises(pytest.skip.Exception, match="NOT_SUPPORTED: TxnOffsetCommit v6"):
        verdicts.not_supported("TxnOffsetCommit v6 (KIP-1319)", "advertises 0-5", target=parse("kfake"),
                               capability="txn-offset-commit-v6")
    with pytest.raises(pytest.skip.Exception, match="NOT_SUPPORTED"):
        verdicts.not_supported("TxnOffsetCommit v6 (KIP-1319)", "advertises 0-5", target=parse("4.3.1"),
                               capability="txn-offset-commit-v6")


def test_a_refusal_raised_below_pytest_keeps_its_reference() -> None:
    with pytest.raises(AssertionError, match="reference profile"):
        verdicts.from_exception(NotSupported("transactions", "no EndTxn", "reference profile: Apache Kafka 4.4.0 ..."))


@pytest.mark.parametrize(("version", "capability", "line"), [
    ("3.6.2", "produce-current-leader-hint", "Apache Kafka 3.6.2 predates the KIP-951 CurrentLeader hint"),
    ("3.7.2", "produce-current-leader-hint", None),
    ("3.9.2", "transaction-version-2", "Apache Kafka 3.9.2 predates the transaction.version feature"),
    ("4.3.1", "txn-offset-commit-v6", "first in 4.4"),
    ("3.9.2", "consumer-group-protocol", "Apache Kafka 3.9.2 predates the consumer group protocol"),
    ("4.0.2", "consumer-group-protocol", None),
    ("4.4.0", "produce-current-leader-epoch", "no Apache Kafka release has KIP-359 CurrentLeaderEpoch"),
])
def test_a_release_older_than_a_capability_says_so(version: str, capability: str, line: str | None) -> None:
    """On the release line-up, a "not supported" of a release is expected by its profile, and says so."""
    from harness.cluster.reference import predates

    found = predates(parse(version), capability)
    assert (found is None) if line is None else (line in (found or "")), found
    assert predates(parse("kfake"), capability) is None


def test_a_refusal_raised_below_pytest_is_read_against_the_runs_target() -> None:
    """A NotSupported naming its capability: a FAIL on a release that has it, an expected "not
    supported" on one that predates it, a plain one on another kind of target."""
    exc = NotSupported("the KIP-951 CurrentLeader hint", "Produce v0-9", capability="produce-current-leader-hint")
    with pytest.raises(AssertionError, match=r"reference profile: Apache Kafka 3\.7\.2 has"):
        verdicts.from_exception(exc, parse("3.7.2"))
    with pytest.raises(pytest.skip.Exception, match=(r"NOT_SUPPORTED: .*; reference profile: Apache Kafka 3\.6\.2 "
                                                               r"predates")):
        verdicts.from_exception(exc, parse("3.6.2"))
    with pytest.raises(pytest.skip.Exception, match=r"\(Produce v0-9\)$"):
        verdicts.from_exception(exc, parse("kfake"))


def test_a_kafka_clients_release_older_than_an_api_says_so() -> None:
    """KIP-1094's nextOffsets() is missing from kafka-clients 3.3.2 as expected (first in 4.0)."""
    what = "ConsumerRecords.nextOffsets(), which the Kip1094NextOffsets driver calls"
    with pytest.raises(pytest.skip.Exception, match=r"reference profile: kafka-clients 3\.3\.2 predates "
                                                    r"ConsumerRecords\.nextOffsets\(\) \(KIP-1094\), first in 4\.0"):
        verdicts.not_supported_by_client("kafka-clients 3.3.2", what, "javac: cannot find symbol")
    with pytest.raises(pytest.skip.Exception, match=r"\(javac: cannot find symbol\)$"):
        verdicts.not_supported_by_client("kafka-clients 4.1.2", what, "javac: cannot find symbol")
