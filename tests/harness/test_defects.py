"""Defects, not FAILs: FAILs of one normalised cause are one defect, different causes are not, a
declared consequence joins its cause only when the cause FAILed, and each defect cites the document its
promises come from (harness/reporting/defects.py)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from harness.errors import PromiseUnkept
from harness.layout import ROOT
from harness.reporting.defects import Citation, Defect, Failure, cause, count_line, from_reasons, group, of_results

FINDINGS = ROOT / "reports" / "findings"

# The words kfake answered OffsetForLeaderEpoch's LeaderEpoch -1 with, as two checks put them
# (reports/findings/kfake-*), each with its own topic, port, UUID and timestamp.
KFAKE_SENTINEL_LINEAGE = (
    "AssertionError: OffsetsForLeaderEpoch v3 (after a move without a write): OffsetsForLeaderEpoch disagrees with the "
    "log's epoch lineage (current epoch 3, log [0, 15), epochs the leader knows (epoch: start) {0: 0, 1: 5, 3: 10}) "
    "on kcts1234-test_epoch_end_offsets-moves-7 at 127.0.0.1:39001:\n"
    "  epoch -1: got NONE(0) (-1, 0), expected NONE (-1, -1)\n"
    "  log: [0..4]@0 [5..9]@1 [10..14]@3")
KFAKE_SENTINEL_UNDEFINED = (
    "AssertionError: OffsetsForLeaderEpoch, LeaderEpoch -1 (owed: UNDEFINED_EPOCH -1, UNDEFINED_EPOCH_OFFSET -1), "
    "leader 0 at epoch 3, log [0, 15) on kcts98765-test_epoch_end_offsets-moves-12 "
    "(TopicId 146affcd-091d-6b37-35f6-33c515a00248, at 1795743894452):\n"
    "  v3 LeaderEpoch -1: got NONE(0) (LeaderEpoch, EndOffset) (-1, 0), expected NONE (-1, -1)\n"
    "  v4 LeaderEpoch -1: got NONE(0) (LeaderEpoch, EndOffset) (-1, 0), expected NONE (-1, -1)")
# librdkafka's mock refusing a commit's epoch, as the epoch check and the metadata check put it.
MOCK_EPOCH = (
    "AssertionError: 4 of 4 committed leader epochs are not kept:\n"
    "  OffsetCommit v6 of (offset 106, epoch 16) read back by OffsetCommit v6's own answer as "
    "UNKNOWN_LEADER_EPOCH(75) (offset None, epoch None)")
MOCK_METADATA = (
    "AssertionError: 4 of 4 committed metadata strings are not kept:\n"
    "  OffsetCommit v7 of metadata 'kcts OffsetCommit v7' read back by OffsetCommit v7's own answer as None "
    "(UNKNOWN_LEADER_EPOCH(75))")


def fail(nodeid: str, message: str, *promises: str, apis: tuple[str, ...] = (),
         same_defect_as: tuple[str, ...] = ()) -> Failure:
    return Failure(nodeid, message, promises, apis, same_defect_as)


def test_two_fails_with_one_normalised_cause_are_one_defect() -> None:
    found = group([
        fail("suites/kip320/test_epoch_end_offsets.py::test_every_epoch", KFAKE_SENTINEL_LINEAGE,
             "kip320.ofle.epoch-end-offsets"),
        fail("suites/kip320/test_epoch_end_offsets.py::test_no_epoch", KFAKE_SENTINEL_UNDEFINED,
             "kip320.ofle.no-epoch-undefined"),
    ])
    (defect,) = found
    assert defect.key == "OffsetForLeaderEpoch: got NONE(0) (-1, 0), expected NONE (-1, -1)"
    assert defect.promises == ("kip320.ofle.epoch-end-offsets", "kip320.ofle.no-epoch-undefined")
    assert len(defect.checks) == 2
    assert count_line(found) == "1 defect (2 FAILs)"


def test_the_same_fail_in_two_runs_has_one_key() -> None:
    """What each run makes its own (topics, ports, UUIDs, timestamps, offsets used as ids) is not the
    defect: `kcts diff` of two runs must not see it fixed and found again."""
    text = ("AssertionError: ListOffsets MAX_TIMESTAMP does not return the epoch of the record with the largest "
            "timestamp on {topic} ({uuid}) at 127.0.0.1:{port}:\n"
            "  v7: got NONE(0) offset {offset} epoch -1 timestamp {ts}, expected NONE offset {offset} epoch 1 "
            "timestamp {ts}")
    one = text.format(topic="kcts1-t-1", uuid="146affcd-091d-6b37-35f6-33c515a00248", port=39001, offset=1008,
                      ts=1795743894452)
    two = text.format(topic="kcts22-t-9", uuid="31fc3791-d455-462b-9203-2217d871a858", port=41234, offset=2008,
                      ts=1795749999999)
    key = cause(fail("t::test_max", one, "kip320.list-offsets.max-timestamp-epoch")).key
    assert key == cause(fail("t::test_max", two, "kip320.list-offsets.max-timestamp-epoch")).key
    assert key == ("ListOffsets: got NONE(0) offset <n> epoch -1 timestamp <n>, "
                   "expected NONE offset <n> epoch 1 timestamp <n>")
    hint = ("AssertionError: a Produce to a former leader is not refused with the current leader's hint:\n"
            "  Produce v10 to former leader 2: got NONE(0) from the broker at {addr}, expected NOT_LEADER_OR_FOLLOWER")
    keys = {cause(fail("t::test_hint", hint.format(addr=a), "kip359.p")).key
            for a in ("127.0.0.1:39001", "[::1]:41234", "broker-2.kafka.local:9092")}
    assert keys == {"Produce: got NONE(0) from the broker at <addr>, expected NOT_LEADER_OR_FOLLOWER"}


def test_the_refusal_of_a_commits_epoch_and_the_metadata_it_then_loses_are_one_defect() -> None:
    (defect,) = group([fail("t::test_epoch", MOCK_EPOCH, "kip320.offset-commit.epoch-kept"),
                       fail("t::test_metadata[OffsetCommit]", MOCK_METADATA, "kip320.committed-metadata-kept")])
    assert defect.key == "OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"


def test_different_causes_are_different_defects() -> None:
    newer_epoch = ("AssertionError: 9 of 27 answers break the KIP-320 epoch rule on kcts1-moves-5:\n"
                   "  {api} v9 to leader 111 with CurrentLeaderEpoch 1 (partition epoch 0): NONE(0), "
                   "expected UNKNOWN_LEADER_EPOCH")
    found = group([
        fail("t::test_fetch", newer_epoch.format(api="Fetch"), "kip320.fetch.newer-epoch-unknown"),
        fail("t::test_list_offsets", newer_epoch.format(api="ListOffsets"), "kip320.list-offsets.epoch-validated"),
        fail("t::test_epoch", MOCK_EPOCH, "kip320.offset-commit.epoch-kept"),
        fail("t::test_every_epoch", KFAKE_SENTINEL_LINEAGE, "kip320.ofle.epoch-end-offsets"),
        # the same API and check, another wrong answer: the epoch of a gap echoed, not the sentinel
        fail("t::test_gap", KFAKE_SENTINEL_LINEAGE.replace("-1: got NONE(0) (-1, 0)", "2: got NONE(0) (2, -1)"),
             "kip320.ofle.epoch-end-offsets"),
    ])
    assert sorted(d.key for d in found) == [
        "Fetch: NONE(0), expected UNKNOWN_LEADER_EPOCH",
        "ListOffsets: NONE(0), expected UNKNOWN_LEADER_EPOCH",
        "OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)",
        "OffsetForLeaderEpoch: got NONE(0) (-1, 0), expected NONE (-1, -1)",
        "OffsetForLeaderEpoch: got NONE(0) (2, -1), expected NONE (-1, -1)",
    ]


def test_one_check_parametrized_by_client_failing_alike_is_one_defect() -> None:
    text = ("AssertionError: {client}: committed offset 32 leaves lag 1 on kcts{pid}-t-3; committed epoch 1, the last "
            "record (offset 32) is in epoch 2")
    java, librdkafka = (f"suites/kip1094/test_c.py::test_position[{c}]" for c in ("java", "librdkafka"))
    found = group([fail(java, text.format(client="java", pid=11), "kip1094.p"),
                   fail(librdkafka, text.format(client="librdkafka", pid=12), "kip1094.p")])
    assert [len(d.checks) for d in found] == [2]
    assert found[0].key == "[kip1094.p] committed offset <n> leaves lag <n> on <name>"
    # Another failure of one variant is a defect of its own.
    other = text.format(client="java", pid=13).replace("leaves lag 1", "was never made")
    found = group([fail(java, other, "kip1094.p"),
                   fail(librdkafka, text.format(client="librdkafka", pid=12), "kip1094.p")])
    assert [len(d.checks) for d in found] == [1, 1]


def test_an_api_variant_keeps_its_api() -> None:
    """`[TxnOffsetCommit]` names what the check is about: it is not stripped as a client's name is."""
    txn = MOCK_METADATA.replace("OffsetCommit v7", "TxnOffsetCommit v3")
    key = cause(fail("t::test_metadata[TxnOffsetCommit]", txn)).key
    assert key == "TxnOffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"


def test_a_promise_unkept_is_keyed_by_its_promise_whatever_its_scene_saw() -> None:
    def unkept(topic: str, seconds: float, promise: str) -> str:
        inner = PromiseUnkept(f"the target did not keep it within {seconds}s; last state: OffsetFetch of {topic} "
                              f"answered offset -1", promise)
        return f"harness.errors.PromiseUnkept: while its scene was built: {inner}"

    found = group([fail("t::test_a", unkept("kcts1-a-1", 30.0, "kip1094.commit.lands"), "kip1094.a"),
                   fail("t::test_b", unkept("kcts2-b-9", 31.5, "kip1094.commit.lands"), "kip1094.b"),
                   fail("t::test_c", unkept("kcts3-c-2", 30.0, "kip320.offset-commit.epoch-kept"), "kip320.c")])
    assert [(d.key, len(d.checks)) for d in found] == [("unkept kip1094.commit.lands: OffsetFetch", 2),
                                                       ("unkept kip320.offset-commit.epoch-kept: OffsetFetch", 1)]


def test_a_version_hung_up_on_is_one_defect_of_the_api_across_checks() -> None:
    closed = ("harness.errors.PromiseUnkept: 127.0.0.1:{port}: connection closed during Produce v5; it advertised "
              "Produce v3-11 in ApiVersions, which promises every advertised version is served\n"
              "  (promise: protocol.api-versions.advertised-served)")
    (defect,) = group([fail("t::test_a", closed.format(port=33073), "kip359.a"),
                       fail("t::test_b", closed.format(port=34529), "kip359.b")])
    assert defect.key == "unkept protocol.api-versions.advertised-served: Produce"
    assert defect.promises == ("kip359.a", "kip359.b")


def test_same_defect_as_folds_a_consequence_into_its_cause_only_when_the_cause_failed() -> None:
    cause_fail = fail("t::test_epoch", MOCK_EPOCH, "kip320.offset-commit.epoch-kept")
    consequence = fail("t::test_later", "AssertionError: OffsetFetch read back nothing at all", "kip320.later",
                       same_defect_as=("kip320.offset-commit.epoch-kept",))
    (defect,) = group([cause_fail, consequence])
    assert defect.key == "OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"
    assert defect.checks == ("t::test_epoch", "t::test_later")  # the cause first
    assert defect.consequences == ("t::test_later",)
    assert defect.promises == ("kip320.offset-commit.epoch-kept", "kip320.later")
    # The cause passed: the declaration does nothing, the FAIL is a defect of its own.
    (alone,) = group([consequence])
    assert alone.key == "[kip320.later] OffsetFetch read back nothing at all"
    assert alone.consequences == ()


def test_declarations_in_a_cycle_end_with_one_key_whatever_the_order() -> None:
    a = fail("t::test_a", "AssertionError: the first thing went wrong", "p.a", same_defect_as=("p.b",))
    b = fail("t::test_b", "AssertionError: the second thing went wrong", "p.b", same_defect_as=("p.a",))
    assert [d.key for d in group([a, b])] == [d.key for d in group([b, a])]
    (defect,) = group([a, b])
    assert defect.key == "[p.a] the first thing went wrong" == min(cause(a).key, cause(b).key)


def test_each_defect_cites_the_documents_of_its_promises() -> None:
    found = group([fail("t::test_epoch", MOCK_EPOCH, "kip320.offset-commit.epoch-kept"),
                   fail("t::test_closed", "PromiseUnkept: closed\n  (promise: protocol.api-versions.advertised-served)",
                        "protocol.api-versions.advertised-served")])
    cited = {d.key: d.cites() for d in found}
    assert cited["OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"] == "KIP-320, Protocol Changes / OffsetCommit"
    assert cited["unkept protocol.api-versions.advertised-served"] == "KIP-35, Proposed Changes (ApiVersionsRequest)"
    two = Defect("k", "k", ("a", "b", "c"), (Citation("KIP-320", "Consumer Handling"),
                                             Citation("KIP-320", "Protocol Changes / Fetch"),
                                             Citation("KIP-279", "Proposed Changes")), ("t",))
    assert two.cites() == "KIP-320, Consumer Handling · Protocol Changes / Fetch; KIP-279, Proposed Changes"


def test_a_defect_survives_its_json() -> None:
    (defect,) = group([fail("t::test_epoch", MOCK_EPOCH, "kip320.offset-commit.epoch-kept")])
    assert Defect.from_json(defect.to_json()) == defect


def test_an_old_results_file_is_grouped_from_its_reasons() -> None:
    """Schema 1 has no promises or apis and keeps the first lines of each failure joined on one line."""
    old = {"schema_version": 1, "checks": [
        {"nodeid": "s::test_every_epoch", "cell": "fail", "reason": " ".join(KFAKE_SENTINEL_LINEAGE.split("\n")[:3])},
        {"nodeid": "s::test_no_epoch", "cell": "fail", "reason": " ".join(KFAKE_SENTINEL_UNDEFINED.split("\n")[:3])},
        {"nodeid": "s::test_passes", "cell": "pass", "reason": ""},
        {"nodeid": "s::test_broke", "cell": "error", "reason": "StopIteration"},
    ]}
    found = of_results(old)
    assert [(d.key, len(d.checks)) for d in found] == [
        ("OffsetForLeaderEpoch: got NONE(0) (-1, 0), expected NONE (-1, -1)", 2)]
    # A file that records its defects is taken at its word.
    recorded = {**old, "defects": [{**found[0].to_json(), "key": "as recorded"}]}
    assert [d.key for d in of_results(recorded)] == ["as recorded"]


def _recorded_message(path: Path) -> str:
    """The failure a findings file kept: its `E` lines, as pytest reported them."""
    lines = [ln[1:] for ln in path.read_text().splitlines() if ln.startswith("E ")]
    return textwrap.dedent("\n".join(lines))


def _recorded(target: str) -> list[Failure]:
    return [Failure(path.read_text().splitlines()[0], _recorded_message(path))
            for path in sorted(FINDINGS.glob(f"{target}-suites_*.txt"))]


@pytest.mark.skipif(not FINDINGS.is_dir(), reason="reports/findings is not in an installed kcts")
def test_the_recorded_findings_group_as_read_against_the_kip() -> None:
    """The FAILs of reports/findings, as their targets' runs recorded them."""
    kfake = group(_recorded("kfake"))
    # The sentinel's answer fails two checks; the mixed TxnOffsetCommit and the unwritten epoch one each.
    assert [len(d.checks) for d in kfake] == [2, 1, 1]
    mock = {d.key: d.checks for d in group(_recorded("librdkafka-mock"))}
    assert len(mock["OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"]) == 2
    assert len(mock["TxnOffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"]) == 2
    assert len(mock["Produce: answered what is not a Produce response"]) == 2  # Produce v5 without LogStartOffset
    assert sum(map(len, mock.values())) == len(_recorded("librdkafka-mock")) > len(mock)
    keys = " ".join(mock)
    assert not re.search(r"kcts\d|\d{4,}|127\.0\.0\.1", keys), keys  # names, timestamps, ports normalised away


def test_the_fails_of_a_results_file_are_counted_whatever_their_schema() -> None:
    data = {"checks": [{"nodeid": "a", "cell": "fail", "reason": MOCK_EPOCH},
                       {"nodeid": "b", "cell": "fail", "reason": MOCK_METADATA}]}
    assert count_line(from_reasons(data)) == "1 defect (2 FAILs)"
    assert count_line([]) == "0 defects"
