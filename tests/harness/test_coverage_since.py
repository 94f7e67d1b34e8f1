"""The 'since' of a promise: the oldest Apache Kafka release among the targets that passes it, read from
the verdicts (never written by hand), in `kcts coverage` and on the matrix page."""

from __future__ import annotations

import re

import pytest

from harness.promises import Promise, catalogue
from harness.reporting import coverage
from harness.reporting.matrix import Target, build, to_html, to_markdown

CHECK = "suites/kip320/test_epoch_validation.py::test_fetch_on_the_leader_fences_an_older_epoch"
PROMISE = "kip320.fetch.older-epoch-fenced"


def results(target: str, cell: str) -> dict:
    outcome = {"pass": "passed", "fail": "failed"}.get(cell, "skipped")
    return {"target": target, "environment": {"backend": "local"}, "checks": [{
        "nodeid": CHECK, "area": "kip320", "promise": "An older epoch is fenced.", "outcome": outcome, "cell": cell,
        "reason": "", "duration_s": 0.1, "evidence": None, "wire_evidence": None, "promises": [PROMISE],
        "apis": ["Fetch v13"]}]}


def one_promise() -> dict[str, Promise]:
    return {PROMISE: catalogue()[PROMISE]}


@pytest.mark.parametrize(("cells", "since"), [
    # Columns in any order: the oldest release that passes, not the first column.
    ({"4.4.0": "pass", "3.3.2": "fail", "3.9.2": "pass", "4.0.2": "pass"}, "3.9.2"),
    ({"4.4.0": "pass", "3.10.0": "pass", "3.9.2": "not-supported"}, "3.10.0"),  # numeric, not text, order
    ({"4.4.0": "pass", "kfake": "pass", "3.3.2": "not-supported"}, "4.4.0"),  # only releases count
    ({"4.4.0": "error", "4.3.1": "target-refused"}, None),
])
def test_since_is_the_oldest_release_that_passes(cells: dict[str, str], since: str | None) -> None:
    runs = {t: results(t, c) for t, c in cells.items()}
    (cov,) = coverage.build(runs, one_promise(), {PROMISE: [CHECK]})
    assert cov.since == since
    if since is None:
        assert cov.since_text() == "none of 4.3.1..4.4.0 (error, target-refused)"


def test_a_known_client_gap_beside_a_passing_client_does_not_move_since() -> None:
    """librdkafka's named gap on every release, Java passing the same promise: the release keeps it,
    and the promise's verdict still shows the gap."""
    def two_clients(target: str) -> dict:
        run = results(target, "pass")
        gap = dict(run["checks"][0], nodeid=CHECK + "[librdkafka]", cell="client-gap", outcome="xfailed")
        run["checks"].append(gap)
        return run

    runs = {"3.3.2": two_clients("3.3.2"), "4.4.0": two_clients("4.4.0")}
    (cov,) = coverage.build(runs, one_promise(), {PROMISE: [CHECK]})
    assert cov.targets == {"3.3.2": "client-gap", "4.4.0": "client-gap"}
    assert cov.since == "3.3.2"
    # Only the gapped client judged it: nothing shows the release keeps it.
    only_gap = {"4.4.0": results("4.4.0", "client-gap")}
    (cov,) = coverage.build(only_gap, one_promise(), {PROMISE: [CHECK]})
    assert cov.since is None and cov.since_text() == "none of 4.4.0..4.4.0 (client-gap)"


def test_a_promise_no_release_judged_still_says_why() -> None:
    (cov,) = coverage.build({"kfake": results("kfake", "pass")}, one_promise(), {PROMISE: [CHECK]})
    assert cov.since is None and cov.since_text() == "-"


def test_since_is_in_the_coverage_text_the_json_and_the_matrix_page() -> None:
    targets = [(Target(v, f"targets/{v}"), results(v, c)) for v, c in (("3.3.2", "fail"), ("3.4.1", "pass"))]
    matrix = build(targets)
    row = next(p for p in matrix["coverage"]["promises"] if p["id"] == PROMISE)
    assert row["since"] == "3.4.1" and row["since_text"] == "3.4.1"
    assert re.search(rf"data-promise='{re.escape(PROMISE)}'>.*?<td class='since'>3\.4\.1</td>", to_html(matrix))
    assert re.search(rf"\| `{re.escape(PROMISE)}` \| judged \| Fetch 13 \| 3\.4\.1 \| FAIL \| pass \|",
                     to_markdown(matrix))
    text = coverage.render(coverage.build({t.name: r for t, r in targets}), ["3.3.2", "3.4.1"])
    assert "since: 3.4.1" in text


def test_the_releases_env_runs_every_line_of_the_release_line_up() -> None:
    """`tox -e releases` judges exactly harness.kafka.dist.RELEASE_LINE_UP, oldest first."""
    from harness import layout
    from harness.kafka.dist import RELEASE_LINE_UP

    env = (layout.ROOT / "tox.ini").read_text().split("[testenv:releases]", 1)[1].split("\n[", 1)[0]
    listed = re.search(r"KCTS_RELEASES_TARGETS:([\d.,]+)\}", env)
    assert listed is not None and tuple(listed.group(1).split(",")) == RELEASE_LINE_UP
    keys = [coverage.release_key(v) for v in RELEASE_LINE_UP]
    assert keys == sorted(keys)
