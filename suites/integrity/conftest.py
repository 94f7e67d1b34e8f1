"""Integrity suites: the Spark master option, the shared SparkSession, and a report folder per test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.integrity.fixtures import spark
from harness.pytest_plugin import run_dir

__all__ = ["spark"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts-integrity", "record integrity checker")
    group.addoption(
        "--spark-master", default=None,
        help="Spark master the integrity checker runs on (default $KCTS_SPARK_MASTER or local[2])",
    )


@pytest.fixture
def integrity_dir(request: pytest.FixtureRequest) -> Path:
    """`<run dir>/integrity/<test name>/`: where the checker writes report.json, anomalies.parquet, summary.txt."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
    return run_dir(request.config) / "integrity" / name
