"""Cached virtualenvs holding another confluent-kafka release (harness.clients.versions)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.clients import versions
from harness.errors import SetupError

pytestmark = pytest.mark.live  # wheels from PyPI


def test_a_version_gets_an_interpreter_that_loads_it_and_the_harness(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    python = versions.interpreter("2.6.1")
    out = subprocess.run([str(python), "-c", "import confluent_kafka, harness.cluster.local; "
                          "print(confluent_kafka.version()[0], confluent_kafka.libversion()[0])"],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["2.6.1", "2.6.1"], out.stderr
    assert versions.interpreter("2.6.1") == python  # cached


def test_a_release_the_harness_cannot_run_on_is_refused_naming_what_it_lacks(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    with pytest.raises(SetupError, match=r"under confluent-kafka 2\.0\.2 the harness does not load: ImportError: "
                                         r"cannot import name 'ElectionType'"):
        versions.interpreter("2.0.2")
    assert not (tmp_path / "clients" / "confluent-kafka-2.0.2-py311" / "ready").exists()


def test_a_version_that_is_not_a_release_number_is_refused() -> None:
    with pytest.raises(SetupError, match="give confluent-kafka release numbers"):
        versions.interpreter("latest")
