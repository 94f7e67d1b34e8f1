"""The matrix page reads well for someone who never saw the code: it fits a 1400 px screen with six
targets, folds fingerprints, environments and long reasons into short lines that expand, names the
variant of a parametrized check in its row, and cites KIPs, not this repository's file names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harness.plugin.run_folder import RUN_DIR_KEY
from harness.reporting.fingerprint import with_digest
from harness.reporting.matrix import Target, build, to_html, to_markdown, write_all
from harness.reporting.results import promise_of
from tests.harness import source_tree
from tests.harness.browser import render

REPO = Path(__file__).resolve().parents[2]
TARGETS = ["4.4.0", "4.3.1", "docker:4.4.0", "kfake", "tansu", "tansu-docker"]
REASON = ("NOT_SUPPORTED: TxnOffsetCommit v6 authorization checks (TxnOffsetCommit v6, KIP-1319) is not supported "
          "by this target (127.0.0.1:35479 advertises TxnOffsetCommit v0-5)")
FAILED = ("AssertionError: OffsetFetch v8 returned (106, epoch -1) for a commit of (106, epoch 16): the committed "
          "leader epoch is dropped")


def suite_promises() -> list[tuple[str, str]]:
    """(test, promise) for every check in suites/, the promise as results.json states it."""
    out = []
    for path in sorted((REPO / "suites").rglob("test_*.py")):
        for node in source_tree.tree(path).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                fake = type("Item", (), {"function": type("F", (), {"__doc__": ast.get_docstring(node)}),
                                         "name": node.name})
                out.append((f"{path.relative_to(REPO)}::{node.name}", promise_of(fake)))  # type: ignore[arg-type]
    return out


def six_targets() -> dict:
    promises = suite_promises()
    runs = []
    for i, name in enumerate(TARGETS):
        checks = []
        for j, (nodeid, promise) in enumerate(promises):
            for v in (["[leader-moves]", "[nemesis]"] if "epoch_lineage" in nodeid else [""]):
                cell = ["pass", "not-supported", "fail", "target-refused", "skipped", "client-gap"][(i + j) % 6]
                reason = {"pass": "", "fail": FAILED}.get(cell, REASON)
                checks.append({"nodeid": nodeid + v, "area": nodeid.split("/")[1], "promise": promise,
                               "outcome": "passed", "cell": cell, "reason": reason,
                               "duration_s": 1.0, "evidence": f"evidence/{j}.txt", "wire_evidence": None})
        fp = with_digest({"version": name, "brokers": 3, "features": {"supported": {}, "finalized": {}},
                          "api_versions": {f"Api{k}": [0, k] for k in range(80)}})
        env = {"target": name, "target_kind": "apache", "broker_version": name, "java_clients": "4.4.0",
               **{f"api_{k}": f"v0-{k}" for k in range(60)}}  # an environment as wordy as a vendor's
        runs.append((Target(name, f"targets/{name}"), {"environment": env, "fingerprint": fp, "checks": checks}))
    return build(runs)


def test_no_promise_cites_this_repositorys_seed_numbers_or_notes() -> None:
    promises = suite_promises()
    assert len(promises) > 40
    cited = [(n, p) for n, p in promises if re.search(r"[Ss]eed \d|KAFKA-NOTES", p)]
    assert not cited, cited


def test_variants_are_named_in_their_rows_and_long_text_is_folded() -> None:
    m = six_targets()
    page = to_html(m)
    rows = [r for r in m["rows"] if r["variant"]]
    assert {r["variant"] for r in rows} == {"leader-moves", "nemesis"}
    assert "<span class='variant'>variant: leader-moves</span>" in page
    md = to_markdown(m)
    assert "*[nemesis]*" in md
    # the markdown names each column's fingerprint in its head and its summary row
    assert re.search(r"\| 4\.4\.0<br>judged [^|]*<br>fp [0-9a-f]{12} \|", md)
    assert "| kfake | apache · broker kfake · Java clients 4.4.0 | kfake · 3 brokers · 80 APIs · fp " in md
    # fingerprints: a short line that expands to the API ranges
    assert re.search(r"<details><summary>4\.4\.0 · 3 brokers · 80 APIs · fp [0-9a-f]{12}</summary>", page)
    # a long reason: its first clause shown, the whole on expand; no reason cut with "..." alone
    assert "<summary>TxnOffsetCommit v6 authorization checks</summary><div class='full'>NOT_SUPPORTED: " in page
    # a FAIL's summary is what the assertion found, not "AssertionError"
    assert "<summary>OffsetFetch v8 returned (106, epoch -1) for a commit of...</summary>" in page
    assert "api_59=v0-59" in page and "<summary>apache · broker 4.4.0 · Java clients 4.4.0</summary>" in page


def test_the_page_fits_1400_pixels_with_six_targets(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    write_all(six_targets(), tmp_path)
    measure = ("<script>const w=innerWidth,out=[];for(const e of document.querySelectorAll('#matrix th,#summary'))"
               "{const r=e.getBoundingClientRect();out.push((e.dataset.target||e.id)+'='+Math.round(r.right));}"
               "document.body.insertAdjacentHTML('beforeend','<pre id=result>'+w+' '+out.join(' ')+'</pre>');</script>")
    page = tmp_path / "measured.html"
    page.write_text((tmp_path / "matrix.html").read_text().replace("</body>", measure + "</body>"))
    shot = None
    if RUN_DIR_KEY in request.config.stash:
        shots = request.config.stash[RUN_DIR_KEY] / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        shot = shots / "matrix-six-targets.png"
    dom = render(page.as_uri(), screenshot=shot, window=(1400, 1000))
    found = re.search(r"<pre id=\"result\">(\d+) (.*?)</pre>", dom)
    assert found, dom[-2000:]
    width, edges = int(found[1]), dict(e.split("=") for e in found[2].split())
    assert set(TARGETS) <= set(edges), edges
    beyond = {k: v for k, v in edges.items() if int(v) > width}
    assert not beyond, f"cut off at the right of a {width} px window: {beyond}"
