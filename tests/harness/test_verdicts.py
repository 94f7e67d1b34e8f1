"""Verdict classification: each outcome lands in exactly one matrix cell; an ERROR (no verdict
reached) is told apart from a FAIL (a failed assertion)."""

from __future__ import annotations

import json

import pytest

from harness.protocol.exceptions import ProtocolError
from harness.verdicts import CELLS, KNOWN_CLIENT_GAP, NOT_SUPPORTED, TARGET_REFUSED, classify, is_verdict
from harness.waiting import WaitTimeout

pytest_plugins = ["pytester"]


@pytest.mark.parametrize(
    ("outcome", "reason", "raised", "cell"),
    [
        ("passed", None, None, "pass"),
        ("failed", "assert 0 == 74", AssertionError, "fail"),
        ("failed", "Failed: the broker answered twice", pytest.fail.Exception, "fail"),
        ("failed", "[XPASS(strict)] KNOWN_CLIENT_GAP: librdkafka #5158", None, "fail"),
        ("failed", "StopIteration", StopIteration, "error"),
        ("failed", "KeyError: 'Topics'", KeyError, "error"),
        ("failed", "ProtocolError: no overlap", ProtocolError, "error"),
        ("failed", "WaitTimeout: no leader within 30s", WaitTimeout, "error"),
        ("error", "fixture 'cluster' failed", None, "error"),
        ("skipped", f"{NOT_SUPPORTED}: TxnOffsetCommit v6 (max 5)", None, "not-supported"),
        ("xfailed", f"{KNOWN_CLIENT_GAP}: librdkafka #5158", None, "client-gap"),
        ("skipped", f"{TARGET_REFUSED}: the target refused to create topic t", None, "target-refused"),
        ("skipped", "needs fault control; the target is external", None, "skipped"),
    ],
)
def test_outcomes_map_to_one_cell(outcome: str, reason: str | None, raised: type[BaseException] | None,
                                  cell: str) -> None:
    assert classify(outcome, reason, raised) == cell
    assert cell in CELLS


def test_only_assertions_are_verdicts_and_a_timed_out_wait_is_not_one() -> None:
    class OlderVersionSent(AssertionError):
        pass

    assert is_verdict(AssertionError) and is_verdict(OlderVersionSent) and is_verdict(pytest.fail.Exception)
    assert not is_verdict(WaitTimeout)  # an AssertionError by type, but an unmet premise of the scene
    assert not any(map(is_verdict, (StopIteration, KeyError, ProtocolError, TimeoutError)))


CHECKS = '''
import pytest
from harness.errors import require_scene, require_target
from harness.protocol.exceptions import ProtocolError
from harness.waiting import WaitTimeout


@pytest.fixture
def broken_setup():
    raise RuntimeError("cannot build the scene")


@pytest.fixture
def broken_teardown():
    yield
    raise KeyError("teardown")


def test_assertion():
    assert 0 == 74, "the broker answered error 0, the promise is 74"


def test_assertion_subclass():
    class OlderVersionSent(AssertionError):
        pass
    raise OlderVersionSent("v5 sent")


def test_pytest_fail():
    pytest.fail("deliberately")


def test_stop_iteration():
    next(iter([]))


def test_protocol_error():
    raise ProtocolError("Metadata v12 has no overlap")


def test_key_error():
    {}["Topics"]


def test_wait_timeout():
    raise WaitTimeout("no new leader within 30s")


def test_scene_unmet():
    require_scene([], "the harness sent no Fetch")


def test_target_refused():
    require_target(False, "java never sent Fetch to the target: ApiVersions v5: connection-lost")


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    pass


def test_passes():
    pass


def test_skipped():
    pytest.skip("NOT_SUPPORTED: Metadata v13 is not supported by this target (max 12)")


@pytest.fixture(scope="module")
def commit_never_lands():
    from harness.waiting import Owed, wait_until
    wait_until(lambda: False, 0.05, lambda: "OffsetFetch: offset -1", interval=0.01, owed=Owed.PROMISE,
               promise="kip1319.client.unknown-topic-id-retried")


def test_promise_unkept_in_the_scene(commit_never_lands):
    pass


def test_promise_unkept_in_the_same_scene_again(commit_never_lands):
    pass


def test_premise_wait_timed_out():
    from harness.waiting import Owed, wait_until
    wait_until(lambda: False, 0.05, lambda: "leader -1", interval=0.01, owed=Owed.PREMISE)


def _closed():
    from harness.errors import Unrecoverable
    from harness.protocol.exceptions import AdvertisedVersionNotServed
    try:
        raise AdvertisedVersionNotServed("broker closed the connection while answering Metadata v0; it advertised "
                                         "Metadata v0-13", "Metadata", 0, (0, 13))
    except AdvertisedVersionNotServed as exc:
        raise Unrecoverable(f"Metadata v0: {exc}") from exc


@pytest.fixture
def scene_on_a_closed_version():
    _closed()


def test_advertised_version_closed_in_the_body():
    _closed()


def test_advertised_version_closed_in_the_scene(scene_on_a_closed_version):
    pass
'''

EXPECTED = {
    "test_assertion": ("failed", "fail"),
    "test_assertion_subclass": ("failed", "fail"),
    "test_pytest_fail": ("failed", "fail"),
    "test_stop_iteration": ("failed", "error"),
    "test_protocol_error": ("failed", "error"),
    "test_key_error": ("failed", "error"),
    "test_wait_timeout": ("failed", "error"),
    "test_scene_unmet": ("failed", "error"),
    "test_target_refused": ("skipped", "target-refused"),
    "test_setup_error": ("error", "error"),
    "test_teardown_error": ("error", "error"),
    "test_passes": ("passed", "pass"),
    "test_skipped": ("skipped", "not-supported"),
    "test_promise_unkept_in_the_scene": ("failed", "fail"),
    "test_promise_unkept_in_the_same_scene_again": ("failed", "fail"),
    "test_premise_wait_timed_out": ("skipped", "target-refused"),
    "test_advertised_version_closed_in_the_body": ("failed", "fail"),
    "test_advertised_version_closed_in_the_scene": ("skipped", "target-refused"),
}


def test_plugin_tells_errors_from_failures_and_sums_them_up_in_results_json(pytester: pytest.Pytester) -> None:
    """The checks above, run by the kcts plugin in a pytest of their own: their cells in results.json
    and its summary (a check whose call passed but whose teardown failed is an ERROR, not a pass)."""
    pytester.makepyfile(test_kinds=CHECKS)
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess("--reports-dir", str(reports), "--run-id", "r", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=11, errors=2, skipped=4)
    run = json.loads((reports / "r" / "results.json").read_text())
    got = {c["nodeid"].rsplit("::", 1)[1]: (c["outcome"], c["cell"]) for c in run["checks"]}
    assert got == EXPECTED
    assert run["summary"] == {
        "total": 18, "judged": 8, "judged_fraction": round(8 / 18, 4),
        "counts": {"pass": 1, "fail": 6, "error": 7, "not-supported": 1, "target-refused": 3, "client-gap": 0,
                   "skipped": 0},
        # The two checks of one scene's unkept promise are one defect; the other four FAILs one each.
        "defects": 5,
    }
    # A promise the scene's target never kept fails each check that needed the scene, naming it.
    unkept = (reports / "r" / next(c["evidence"] for c in run["checks"]
                                   if c["nodeid"].endswith("::test_promise_unkept_in_the_scene"))).read_text()
    assert "OffsetFetch: offset -1" in unkept and "kip1319.client.unknown-topic-id-retried" in unkept, unkept
    closed = next(c for c in run["checks"] if c["nodeid"].endswith("::test_advertised_version_closed_in_the_scene"))
    assert "protocol.api-versions.advertised-served" in closed["reason"], closed
    for check in run["checks"]:
        if check["cell"] != "pass":
            assert check["evidence"].endswith(".txt") and check["wire_evidence"].endswith(".wire.json"), check
            assert (reports / "r" / check["wire_evidence"]).is_file()


def test_a_client_gap_ends_the_check_as_that_gap_with_what_was_seen() -> None:
    """A check calls `found` only for the exception its gap names; the verdict carries the evidence's first line."""
    from harness.verdicts import ClientGap

    gap = ClientGap("librdkafka", "https://github.com/confluentinc/librdkafka/issues/5158", "skips truncation")
    with pytest.raises(pytest.xfail.Exception, match=r"KNOWN_CLIENT_GAP: librdkafka: skips truncation; seen: read "
                                                     r"30 records \(https://github.com/confluentinc/librdkafka"):
        gap.found(AssertionError("read 30 records\n  more detail"))


def test_a_client_gaps_evidence_keeps_all_it_saw_and_the_assertion_it_came_from() -> None:
    """Only the verdict's reason is one line: the evidence file shows the whole failure the check
    built (the failover scene adds its faults and the client's epoch bumps to the assertion's message),
    and the assertion it was built from, as the gap's cause."""
    from harness.verdicts import ClientGap

    gap = ClientGap("librdkafka", "https://github.com/confluentinc/librdkafka/issues/4953", "writes a batch twice")
    try:
        try:
            raise AssertionError("duplicate x1")
        except AssertionError as exc:
            gap.found(AssertionError(f"{exc}\n  faults: [stop of 2]\n  epoch bumps: ['skipped sequence numbers']"))
    except pytest.xfail.Exception as ended:
        assert ended.msg.endswith("seen: duplicate x1 (https://github.com/confluentinc/librdkafka/issues/4953)")
        assert "epoch bumps: ['skipped sequence numbers']" in str(ended.__cause__)
        assert str(ended.__cause__.__cause__) == "duplicate x1"
    else:
        pytest.fail("found did not end the check")
    with pytest.raises(pytest.xfail.Exception) as plain:
        gap.found("duplicate x2\n  faults: [pause of 1]")
    assert str(plain.value.__cause__) == "duplicate x2\n  faults: [pause of 1]"


# -- the known client gaps table (harness/client_gaps.toml) --------------------------------------


def test_a_gap_holds_inside_its_affected_versions() -> None:
    from harness.verdicts import known_gap

    gap = known_gap("librdkafka-restart-skips-truncation", "2.16.0")
    with pytest.raises(pytest.xfail.Exception, match=r"KNOWN_CLIENT_GAP: librdkafka 2\.16\.0: .*seen: no reset"):
        gap.found("no reset at 20")


def test_outside_its_affected_versions_a_gap_is_judged_as_a_failure() -> None:
    from harness.verdicts import ClientGap

    gap = ClientGap("librdkafka", "https://example.invalid/1", "skips truncation", affected=">=1.5,<2.17",
                    version="2.17.0")
    with pytest.raises(AssertionError, match=r"librdkafka 2\.17\.0 is outside the versions known to have this gap"):
        gap.found("no reset at 20")


def test_every_gap_in_the_table_names_its_client_range_and_upstream() -> None:
    from packaging.specifiers import SpecifierSet

    from harness.verdicts import _gap_table, known_gap

    for gap_id, row in _gap_table().items():
        assert {"client", "affected", "upstream", "summary"} <= set(row), gap_id
        SpecifierSet(row["affected"])
        assert known_gap(gap_id, None).applies


def test_an_unknown_gap_is_named() -> None:
    from harness.verdicts import known_gap

    with pytest.raises(KeyError, match="no client gap 'nope'"):
        known_gap("nope", "1.0")
