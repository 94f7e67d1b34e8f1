"""Defects wherever FAILs are counted: results.json (schema 4, and its published schema), the end of
`kcts run`'s output, the matrix (its column heads, its table of targets, its list of defects citing their
documents) and `kcts diff` (new and fixed defects); older results.json files still load."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as kcts
from harness.reporting.defects import Failure, group
from harness.reporting.diff import diff, to_json, to_markdown
from harness.reporting.matrix import Target, build, column_line, to_html
from harness.reporting.matrix import to_markdown as matrix_markdown
from harness.reporting.schema import problems

RECORDED = Path(__file__).with_name("data") / "results-4.4.0-smoke.json"  # schema 1, from a real run
EPOCH = ("AssertionError: 4 of 4 committed leader epochs are not kept:\n"
         "  OffsetCommit v6 of (offset 106, epoch 16) read back by OffsetCommit v6's own answer as "
         "UNKNOWN_LEADER_EPOCH(75) (offset None, epoch None)")
METADATA = ("AssertionError: {client}: 4 of 4 committed metadata strings are not kept:\n"
            "  OffsetCommit v7 of metadata 'kcts OffsetCommit v7' read back by OffsetCommit v7's own answer as None "
            "(UNKNOWN_LEADER_EPOCH(75))")
FETCH = ("AssertionError: 9 of 27 answers break the KIP-320 epoch rule on kcts{pid}-moves-5:\n"
         "  Fetch v9 to leader 1 with CurrentLeaderEpoch 1 (partition epoch 0): NONE(0), expected UNKNOWN_LEADER_EPOCH")
SENTINEL = ("AssertionError: OffsetsForLeaderEpoch, LeaderEpoch -1, leader 0 at epoch 3:\n"
            "  v3 LeaderEpoch -1: got NONE(0) (LeaderEpoch, EndOffset) (-1, 0), expected NONE (-1, -1)")
PROMISES = {"epoch": "kip320.offset-commit.epoch-kept", "metadata": "kip320.committed-metadata-kept",
            "fetch": "kip320.fetch.newer-epoch-unknown", "sentinel": "kip320.ofle.no-epoch-undefined"}


def check(nodeid: str, cell: str, reason: str = "", promise: str = "") -> dict[str, Any]:
    return {"nodeid": nodeid, "area": "kip320", "promise": "A promise.", "outcome": "failed" if cell == "fail" else
            "passed", "cell": cell, "reason": reason, "duration_s": 0.1,
            "evidence": None if cell == "pass" else "evidence/x.txt", "wire_evidence": None,
            "promises": [promise] if promise else [], "apis": []}


def results(target: str, checks: list[dict[str, Any]], schema: int = 4) -> dict[str, Any]:
    """A results.json as `kcts run` writes it; from schema 4 with its defects recorded, as the run groups them."""
    data: dict[str, Any] = {"schema_version": schema, "kcts": {"version": "1", "commit": None, "dirty": None},
                            "target": target, "environment": {"backend": target}, "fingerprint": None,
                            "summary": {}, "checks": checks}
    if schema >= 4:
        found = group(Failure.from_json(c) for c in checks if c["cell"] == "fail")
        keys = {n: d.key for d in found for n in d.checks}
        for c in checks:
            c["defect"] = keys.get(c["nodeid"])
        data["defects"] = [d.to_json() for d in found]
    return data


def mock_column(schema: int = 4) -> dict[str, Any]:
    """Three FAILs of two causes: the refused epoch (two checks) and a Fetch that ignores a newer epoch."""
    return results("librdkafka-mock", [
        check("s/test_c.py::test_epoch", "fail", EPOCH, PROMISES["epoch"]),
        check("s/test_c.py::test_metadata[java]", "fail", METADATA.format(client="java"), PROMISES["metadata"]),
        check("s/test_v.py::test_fetch", "fail", FETCH.format(pid=7), PROMISES["fetch"]),
        check("s/test_v.py::test_round_trip", "pass"),
    ], schema)


# -- results.json -----------------------------------------------------------------------------------


TINY = '''
import pytest

@pytest.mark.promise("kip320.offset-commit.epoch-kept")
def test_epoch():
    """A commit's epoch is kept."""
    raise AssertionError({epoch!r})

@pytest.mark.promise("kip320.committed-metadata-kept")
@pytest.mark.parametrize("client", ["java", "librdkafka"])
def test_metadata(client):
    """Metadata is kept."""
    raise AssertionError({metadata!r}.format(client=client))

@pytest.mark.promise("kip320.fetch.newer-epoch-unknown")
@pytest.mark.same_defect_as("kip320.offset-commit.epoch-kept")
def test_consequence():
    """Fails because the commit was refused."""
    assert 1 == 2, "the consumer read nothing after its commit"

@pytest.mark.promise("kip320.ofle.no-epoch-undefined")
@pytest.mark.same_defect_as("kip320.list-offsets.max-timestamp-epoch")
def test_declared_but_its_cause_did_not_fail():
    """A consequence of a promise no check here failed."""
    raise AssertionError({sentinel!r})

def test_passes():
    """A promise kept."""
'''


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    """results.json and the output of a session of the plugin's own, with no cluster."""
    folder = tmp_path_factory.mktemp("tiny")
    (folder / "test_tiny.py").write_text(TINY.format(epoch=EPOCH, metadata=METADATA, sentinel=SENTINEL))
    cmd = [sys.executable, "-m", "pytest", "-p", "harness.pytest_plugin", "-p", "no:cacheprovider", "-q",
           "--strict-markers", "--reports-dir", str(folder / "reports"), "--run-id", "tiny",
           str(folder / "test_tiny.py")]
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    return json.loads((folder / "reports" / "tiny" / "results.json").read_text()), done.stdout


def test_a_run_records_each_fails_defect_and_the_defects(tiny_run: tuple[dict[str, Any], str]) -> None:
    data, _ = tiny_run
    assert problems(data) == []
    assert data["schema_version"] == 4
    assert data["summary"]["counts"]["fail"] == 5 and data["summary"]["defects"] == 2
    cells = {c["nodeid"].split("::")[1]: c for c in data["checks"]}
    refused = "OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"
    assert {n: c["defect"] for n, c in cells.items()} == {
        "test_epoch": refused, "test_metadata[java]": refused, "test_metadata[librdkafka]": refused,
        "test_consequence": refused,  # declared, and its cause FAILed
        "test_declared_but_its_cause_did_not_fail": "OffsetForLeaderEpoch: got NONE(0) (-1, 0), expected NONE (-1, -1)",
        "test_passes": None}
    first, second = data["defects"]
    assert first["key"] == refused and len(first["checks"]) == 4
    assert [n.split("::")[1] for n in first["consequences"]] == ["test_consequence"]
    assert first["documents"][0] == {"kip": "KIP-320", "section": "Protocol Changes / OffsetCommit"}
    assert second["promises"] == ["kip320.ofle.no-epoch-undefined"] and second["consequences"] == []


def test_the_run_ends_with_its_defects_citing_their_documents(tiny_run: tuple[dict[str, Any], str]) -> None:
    _, out = tiny_run
    assert "kcts: 2 defects (5 FAILs)" in out
    # The consequence's promise is cited too: its document's section after the cause's.
    assert ("D1 OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75) (KIP-320, Protocol Changes / OffsetCommit · "
            "Leader Fetch Handling): 4 FAILs\n") in out
    assert "5 failed, 1 passed" in out  # same_defect_as is a registered marker: --strict-markers took it


@pytest.mark.parametrize(("alter", "complaint"), [
    (lambda d: d.pop("defects"), "'defects' is a required property"),
    (lambda d: d["summary"].pop("defects"), "'defects' is a required property"),
    (lambda d: d["checks"][0].update(defect=3), "3 is not of type"),
    (lambda d: d["defects"][0].update(checks=[]), "should be non-empty"),
    (lambda d: d["defects"][0]["documents"].append({"kip": "KIP-320"}), "'section' is a required property"),
])
def test_the_schema_refuses_a_version_4_file_without_its_defects(
    tiny_run: tuple[dict[str, Any], str], alter: Any, complaint: str
) -> None:
    data = copy.deepcopy(tiny_run[0])
    alter(data)
    found = problems(data)
    assert any(complaint in p for p in found), found


def test_older_results_files_still_validate_and_load() -> None:
    old = json.loads(RECORDED.read_text())
    assert old["schema_version"] == 1 and problems(old) == []
    three = results("4.4.0", [check("s::t", "fail", EPOCH, PROMISES["epoch"])], schema=3)
    three["summary"] = {"total": 1, "judged": 1, "judged_fraction": 1.0, "counts": {
        "pass": 0, "fail": 1, "error": 0, "not-supported": 0, "target-refused": 0, "client-gap": 0, "skipped": 0}}
    for c in three["checks"]:
        c["evidence"] = None
    assert problems(three) == []
    m = build([(Target("old", "targets/old"), old), (Target("three", "targets/three"), three)])
    assert m["defects"]["old"] == [] and [d["key"] for d in m["defects"]["three"]] == [
        "OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)"]


# -- the matrix -------------------------------------------------------------------------------------


def sample_matrix() -> dict[str, Any]:
    return build([(Target("mock", "targets/mock"), mock_column()),
                  (Target("old", "targets/old"), mock_column(schema=2))])


def test_each_column_shows_its_fails_as_defects() -> None:
    m = sample_matrix()
    for name in ("mock", "old"):  # recorded, and grouped again from an older file's reasons: alike
        assert [len(d["checks"]) for d in m["defects"][name]] == [2, 1]
        assert column_line(m, name).endswith("; 2 defects (3 FAILs)")
    page = to_html(m)
    head = re.search(r"<th data-target='mock'>(.*?)</th>", page, re.S)
    assert head is not None and "<div class='defects'>2 defects (3 FAILs)</div>" in head[1]
    summary_row = re.search(r"<tr><td class='name'>mock</td>.*?</tr>", page, re.S)
    assert summary_row is not None and "<td class='defects'>2</td>" in summary_row[0]
    md = matrix_markdown(m)
    assert "| 2 (3 FAILs) |" in md.split("| target | environment |")[1]


def test_the_matrix_lists_each_defect_with_the_document_it_breaks() -> None:
    m = sample_matrix()
    page = to_html(m)
    row = re.search(r"<tr id='defect-mock-1'[^>]*>(.*?)</tr>", page, re.S)
    assert row is not None
    assert "D1 OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)" in row[1]
    assert "<td class='cites'>KIP-320, Protocol Changes / OffsetCommit</td>" in row[1]  # both its promises' section
    assert "2 FAILs" in row[1]
    # Each FAIL cell names its defect and links to it.
    cell = re.search(r"<tr data-nodeid='s/test_c.py::test_metadata\[java\]'>.*?data-target='mock'[^>]*>(.*?)</td>",
                     page, re.S)
    assert cell is not None and "href='#defect-mock-1'" in cell[1] and ">D1<" in cell[1]
    md = matrix_markdown(m)
    assert "## Defects" in md
    assert re.search(r"^\| mock \| D2 Fetch: NONE\(0\), expected UNKNOWN_LEADER_EPOCH \| KIP-320, Leader Fetch Handling"
                     r".* \| 1: `s/test_v.py::test_fetch` \|$", md, re.M), md
    assert "D1: [FAIL](targets/mock/evidence/x.txt)" in md


def test_a_matrix_json_from_before_defects_renders_without_them() -> None:
    m = sample_matrix()
    del m["defects"]
    for row in m["rows"]:
        for c in row["cells"].values():
            c.pop("defect", None)
    page, md = to_html(m), matrix_markdown(m)
    assert "id='defects'" not in page and "## Defects" not in md
    assert "<td class='none'>-</td>" in page
    assert not column_line(m, "mock").endswith("FAILs)")


# -- kcts diff --------------------------------------------------------------------------------------


def folder(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    (tmp_path / name).mkdir()
    (tmp_path / name / "results.json").write_text(json.dumps(data))
    return tmp_path / name


def test_diff_names_new_and_fixed_defects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = folder(tmp_path, "old", results("mock", [
        check("s::test_epoch", "fail", EPOCH, PROMISES["epoch"]),
        check("s::test_sentinel", "fail", SENTINEL, PROMISES["sentinel"]),
        check("s::test_fetch", "pass")]))
    new = folder(tmp_path, "new", results("mock", [
        check("s::test_epoch", "fail", EPOCH, PROMISES["epoch"]),
        check("s::test_sentinel", "pass"),
        check("s::test_fetch", "fail", FETCH.format(pid=9), PROMISES["fetch"])]))
    (d,) = diff(old, new)
    assert [x.key for x in d.new_defects] == ["Fetch: NONE(0), expected UNKNOWN_LEADER_EPOCH"]
    assert [x.key for x in d.fixed_defects] == ["OffsetForLeaderEpoch: got NONE(0) (-1, 0), expected NONE (-1, -1)"]
    md = to_markdown([d])
    assert "Defects: 2 defects (2 FAILs), was 2 defects (2 FAILs): 1 new, 1 fixed." in md
    assert ("New defects:\n\n- **Fetch: NONE(0), expected UNKNOWN_LEADER_EPOCH** (KIP-320, Leader Fetch Handling): "
            "1 FAIL: `s::test_fetch`") in md
    assert "Fixed defects:\n\n- **OffsetForLeaderEpoch: got NONE(0) (-1, 0), expected NONE (-1, -1)** (KIP-320, " in md
    assert to_json([d])["targets"][0]["new_defects"] == ["Fetch: NONE(0), expected UNKNOWN_LEADER_EPOCH"]
    assert kcts(["diff", str(old), str(new)]) == 1  # the gate is still a check gone from pass to FAIL
    assert "New defects:" in capsys.readouterr().out


def test_diff_against_a_file_from_before_defects_groups_both_sides_alike(tmp_path: Path) -> None:
    """A schema-4 key is read from the whole failure, an older file's from its reason: the same FAIL
    on both sides is no new defect."""
    same = check("s::test_epoch", "fail", EPOCH, PROMISES["epoch"])
    newer = results("mock", [copy.deepcopy(same)])
    newer["defects"][0]["key"] = "a key read from more than the reason"
    newer["checks"][0]["defect"] = newer["defects"][0]["key"]
    (d,) = diff(folder(tmp_path, "old", results("mock", [same], schema=3)), folder(tmp_path, "new", newer))
    assert d.new_defects == [] and d.fixed_defects == [] and len(d.defects_after) == 1


def test_diff_of_two_matrices_compares_each_columns_defects(tmp_path: Path) -> None:
    from harness.reporting.matrix import write_all

    def matrix(name: str, data: dict[str, Any]) -> Path:
        out = tmp_path / name
        out.mkdir()
        write_all(build([(Target("mock", "targets/mock"), data)]), out)  # no targets/ kept: read from matrix.json
        return out

    fixed = mock_column()
    fixed["checks"][2].update(cell="pass", reason="", defect=None)
    fixed["defects"] = [d for d in fixed["defects"] if not d["key"].startswith("Fetch")]
    (d,) = diff(matrix("a", mock_column()), matrix("b", fixed))
    assert [x.key for x in d.fixed_defects] == ["Fetch: NONE(0), expected UNKNOWN_LEADER_EPOCH"]
    assert d.new_defects == []
