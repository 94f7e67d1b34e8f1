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


def test_a_release_older_than_the_harness_api_still_runs_the_drivers(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """2.0.2 lacks ElectionType (the harness's admin calls need it) and leader epochs (KIP-320 came in
    2.1.0); only the drivers run under it, and they load."""
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    python = versions.interpreter("2.0.2")
    out = subprocess.run([str(python), "-c", "import confluent_kafka, harness.clients.drivers.kip320_consumers; "
                          "print(confluent_kafka.version()[0], hasattr(confluent_kafka.Message, 'leader_epoch'))"],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["2.0.2", "False"], out.stderr


def test_a_release_pypi_does_not_have_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    with pytest.raises(SetupError, match=r"confluent-kafka 0\.0\.1 could not be installed from PyPI"):
        versions.interpreter("0.0.1")
    assert not (tmp_path / "clients" / "confluent-kafka-0.0.1-py311").exists()


def test_a_version_that_is_not_a_release_number_is_refused() -> None:
    with pytest.raises(SetupError, match="give confluent-kafka release numbers"):
        versions.interpreter("latest")
