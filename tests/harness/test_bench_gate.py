"""`kcts bench gate` reads the gate's selection from the file .ci/run reads it from."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench.gate import GATE_ENV, SERIAL, _child_env, selection
from harness.errors import KctsError

REPO = Path(__file__).resolve().parents[2]


def test_the_bench_runs_the_envs_and_environment_the_gate_runs() -> None:
    sel = selection(REPO)
    assert sel.envs == ("tests", "conformance", "docker")
    assert sel.environment["KCTS_CONFORMANCE_MARKERS"] == "not heavy and not integrity and not partition"
    assert sel.idle == ("tests", "docker")
    run = (REPO / ".ci" / "run").read_text()
    assert ". .ci/gate.env" in run and "for env in $GATE_ENVS; do" in run
    assert '[[ " $GATE_IDLE_ENVS " == *" $env "* ]] && class=(chrt --idle 0)' in run
    assert '"${class[@]}" python3 -m tox -e "$env"' in run


def test_the_serial_run_runs_each_env_in_one_process_and_the_shipped_one_as_gate_env_says() -> None:
    sel = selection(REPO)
    assert int(sel.environment["KCTS_TEST_SHARDS"]) > 1  # the gate's tests run in several processes
    shipped, serial = _child_env(sel, "s"), _child_env(sel, "s", serial=True)
    assert {k: shipped[k] for k in SERIAL} == {k: sel.environment[k] for k in SERIAL}
    assert {k: serial[k] for k in SERIAL} == {"KCTS_SHARDS": "1", "KCTS_TEST_SHARDS": "1"}
    tox = (REPO / "tox.ini").read_text()
    assert all(f"{{env:{k}:" in tox for k in SERIAL), "tox.ini no longer reads a variable SERIAL sets"


def test_an_idle_env_that_is_not_a_gate_env_is_one_error(tmp_path: Path) -> None:
    (tmp_path / ".ci").mkdir()
    (tmp_path / GATE_ENV).write_text('GATE_ENVS="tests"\nGATE_IDLE_ENVS="docker"\n')
    with pytest.raises(KctsError, match="GATE_IDLE_ENVS names docker, not in GATE_ENVS"):
        selection(tmp_path)


def test_a_line_that_is_not_key_value_is_one_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / ".ci").mkdir()
    (tmp_path / GATE_ENV).write_text('GATE_ENVS="tests"\nexport X=1\n')
    with pytest.raises(KctsError, match=r'gate.env:2: expected KEY="value", got \'export X=1\''):
        selection(tmp_path)


def test_outside_the_repository_it_says_where_it_runs_from(tmp_path: Path) -> None:
    with pytest.raises(KctsError, match=r"runs from the kcts repository \(it reads \.ci/gate\.env\)"):
        selection(tmp_path)
