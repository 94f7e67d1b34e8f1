"""`kcts bench gate` reads the gate's selection from the file .ci/run reads it from."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench.gate import GATE_ENV, selection
from harness.errors import KctsError

REPO = Path(__file__).resolve().parents[2]


def test_the_bench_runs_the_envs_and_environment_the_gate_runs() -> None:
    sel = selection(REPO)
    assert sel.envs == ("tests", "conformance", "docker")
    assert sel.environment["KCTS_CONFORMANCE_MARKERS"] == "not heavy and not integrity and not partition"
    run = (REPO / ".ci" / "run").read_text()
    assert ". .ci/gate.env" in run and 'for env in $GATE_ENVS; do\n  python3 -m tox -e "$env"' in run


def test_a_line_that_is_not_key_value_is_one_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / ".ci").mkdir()
    (tmp_path / GATE_ENV).write_text('GATE_ENVS="tests"\nexport X=1\n')
    with pytest.raises(KctsError, match=r'gate.env:2: expected KEY="value", got \'export X=1\''):
        selection(tmp_path)


def test_outside_the_repository_it_says_where_it_runs_from(tmp_path: Path) -> None:
    with pytest.raises(KctsError, match=r"runs from the kcts repository \(it reads \.ci/gate\.env\)"):
        selection(tmp_path)
