"""A replay of a broker answer that made a client misbehave runs that client at the release that had the
bug: its catalogue entry names the stack and version, and its run is a client-only run of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import replay
from harness.clients.stacks import franz_go
from harness.clients.stacks.registry import NAMES
from harness.replay import Run, load


def test_every_client_replay_names_a_stack_and_a_release_it_can_run() -> None:
    clients = [r for r in load().values() if r.client_stack]
    assert clients, "no replay of a client bug in the catalogue"
    for r in clients:
        stack, _, version = r.client_stack.partition("@")
        assert stack in NAMES and version, r.client_stack
        if stack == franz_go.GO:
            assert franz_go.release(version) != franz_go.module_version(), f"{r.id}: the buggy release, not the pinned"


def test_a_client_replay_runs_as_a_client_only_run_of_its_release(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    def run_entry(name: str, option: list[str], *args: Any, **kwargs: Any) -> Run:
        seen["option"] = option
        return Run(tmp_path / "run", 1, 0.0, None)

    monkeypatch.setattr(replay, "run_entry", run_entry)
    entry = next(r for r in load().values() if r.client_stack)
    outcome = replay.run_one(entry, "r", tmp_path, "4.4.0", [])
    assert seen["option"] == ["--replay", entry.id, "--client-stack", entry.client_stack]
    assert f"{entry.id} on {entry.client_stack}" in outcome.render()


def test_the_line_names_the_release_the_run_judged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`kcts replay ID --client-stack franz-go` runs the same rules on the pinned release: the line
    says so, from the run's results.json."""
    seen: dict[str, Any] = {}

    def run_entry(name: str, option: list[str], *args: Any, **kwargs: Any) -> Run:
        seen["option"] = option
        return Run(run_dir, 0, 0.0, ())

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "results.json").write_text(json.dumps({"checks": [], "environment": {"client": "franz-go v1.22.2"}}))
    monkeypatch.setattr(replay, "run_entry", run_entry)
    entry = next(r for r in load().values() if r.client_stack)
    outcome = replay.run_one(entry, "r", tmp_path, "4.4.0", [], client_stack="franz-go")
    assert seen["option"] == ["--replay", entry.id, "--client-stack", "franz-go"]
    assert outcome.render().startswith(f"MISSED {entry.id} on franz-go v1.22.2 (")
    assert "- client: franz-go v1.22.2" in (run_dir / "replay.md").read_text()
