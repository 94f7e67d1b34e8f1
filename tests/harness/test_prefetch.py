"""The background fetch of Kafka's jars that scripts/bootstrap starts before kcts is installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.kafka import dist, prefetch

ROOT = Path(__file__).resolve().parents[2]


def test_the_prefetch_runs_on_the_standard_library_alone() -> None:
    """bootstrap runs it with the machine's python3, where none of kcts's packages is installed yet."""
    proc = subprocess.run(
        [sys.executable, "-S", "-B", "-c", "import harness.kafka.prefetch"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_a_filled_cache_is_read_and_no_maven_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn: a run of Maven would be an error
    for version in prefetch.FIRST_RUN_VERSIONS:
        home = tmp_path / "kafka" / version
        (home / "libs").mkdir(parents=True)
        (home / "libs" / "kafka_2.13.jar").touch()
        manifest = {"version": version, "tools_version": version, "jars": ["kafka_2.13.jar"],
                    "format": dist._CACHE_FORMAT}
        (home / "manifest.json").write_text(json.dumps(manifest))
    assert prefetch.main() == 0
    assert capsys.readouterr().out.count("(1 jars)") == len(prefetch.FIRST_RUN_VERSIONS)


def test_a_fetch_that_cannot_run_says_why_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert prefetch.main(["4.3.0"]) == 1
    assert "mvn not found" in capsys.readouterr().err
