"""Integrity suites: the shared SparkSession (on --spark-master), and a report folder per test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.integrity.fixtures import spark
from harness.pytest_plugin import run_dir

__all__ = ["spark"]


@pytest.fixture
def integrity_dir(request: pytest.FixtureRequest) -> Path:
    """`<run dir>/integrity/<test name>/`: where the checker writes report.json, anomalies.parquet, summary.txt."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
    return run_dir(request.config) / "integrity" / name
