"""Progress of long work: nothing for a check that ends within 10 s; past that, a live line on a
terminal and rate-limited plain lines elsewhere; `kcts matrix` tells how far each run is and how long
is left, from the last matrix's durations."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness import progress
from harness.reporting.matrix_run import RunProgress, describe, previous_durations, read_progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_a_check_that_ends_within_ten_seconds_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    clock, out = Clock(), Stream(tty=False)
    progress.begin(out, "test_quick", clock)
    clock.now += 9.5
    progress.status("pipeline: 100 records written")
    progress.step("nemesis: crash the leader")
    progress.end()
    assert out.getvalue() == ""


def test_plain_lines_show_every_step_and_the_status_at_most_every_five_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    clock, out = Clock(), Stream(tty=False)
    progress.begin(out, "test_long", clock)
    progress.step("nemesis: crash the leader of t-0 (broker 2)")  # early: held until the check is long
    clock.now += 11
    progress.status("pipeline: 900 records written")
    clock.now += 1
    progress.status("pipeline: 1000 records written")  # within 5 s of the last: not shown
    progress.step("nemesis: broker 3 leads t-0 at epoch 2")
    clock.now += 5
    progress.status("pipeline: 1500 records written")
    progress.end()
    assert out.getvalue().splitlines() == [
        "  [test_long 11 s] nemesis: crash the leader of t-0 (broker 2)",
        "  [test_long 11 s] pipeline: 900 records written",
        "  [test_long 12 s] nemesis: broker 3 leads t-0 at epoch 2",
        "  [test_long 17 s] pipeline: 1500 records written",
    ]


def test_a_terminal_gets_one_live_line_cleared_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    clock, out = Clock(), Stream(tty=True)
    progress.begin(out, "test_long", clock, column=lambda: 47)
    clock.now += 12
    progress.status("checker (Spark): reading every output record")
    clock.now += 1
    progress.status("checker (Spark): finding lost records")
    progress.end()
    assert out.getvalue() == (
        "\n\r\x1b[2K  [test_long 12 s] checker (Spark): reading every output record"
        "\r\x1b[2K  [test_long 13 s] checker (Spark): finding lost records"
        "\r\x1b[2K\x1b[1A\x1b[47C"  # cleared, the cursor back at the end of pytest's line
    )


def test_ci_gets_plain_lines_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    clock, out = Clock(), Stream(tty=True)
    progress.begin(out, "test_long", clock)
    clock.now += 30
    progress.status("pipeline: waiting for the processors")
    progress.end()
    assert out.getvalue() == "  [test_long 30 s] pipeline: waiting for the processors\n"


def test_outside_a_check_reporting_does_nothing() -> None:
    progress.end()
    progress.status("nothing listens")
    progress.step("nor here")


def write_progress(folder: Path, lines: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "progress.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_the_matrix_estimates_the_time_left_from_the_last_matrix(tmp_path: Path) -> None:
    old = tmp_path / "matrix-20261101-000000" / "targets"
    write_progress(old / "4.4.0", [{"collected": 64, "elapsed_s": 2},
                                   {"nodeid": "a", "cell": "pass", "elapsed_s": 300}])
    (old / "kfake").mkdir(parents=True)  # a matrix from before progress files: its checks' durations
    (old / "kfake" / "results.json").write_text(json.dumps({"checks": [{"duration_s": 40}, {"duration_s": 20}]}))
    current = tmp_path / "matrix-20261124-000000"
    write_progress(current / "targets" / "4.4.0", [
        {"collected": 64, "elapsed_s": 1}, {"nodeid": "a", "cell": "pass", "elapsed_s": 60},
        {"nodeid": "b", "cell": "fail", "elapsed_s": 120},
    ])
    before = previous_durations(tmp_path, current)
    assert before == {"4.4.0": 300.0, "kfake": 60.0}
    state = read_progress(current / "targets" / "4.4.0" / "progress.jsonl")
    assert state == RunProgress(collected=64, done=2, elapsed_s=120.0, failed=1)
    assert describe(state, "[1/2] 4.4.0", before["4.4.0"], [before["kfake"]]) == (
        "[1/2] 4.4.0: 2/64 checks (1 FAIL/ERROR), 2 min 00 s in; "
        "about 4 min 00 s left (from the last matrix's durations)")
    assert describe(state, "[1/2] 4.4.0", None, []).endswith(
        "no earlier run of every target left to estimate the time from")
