"""Integrity suites: the shared SparkSession (on --spark-master), a report folder per test, the checker,
and the finished pipeline the can-fail checks damage."""

from __future__ import annotations

import uuid

import pytest

from fixtures.cluster import Cluster
from fixtures.integrity import anomaly_reporter, integrity_checker, integrity_dir, spark, undamaged
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.scenarios.integrity import FinishedPipeline, finished_pipeline

__all__ = ["anomaly_reporter", "finished", "integrity_checker", "integrity_dir", "spark", "undamaged"]


@pytest.fixture(scope="module")
def finished(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> FinishedPipeline:
    """A small fault-free pipeline into two outputs, finished; each test damages one output."""
    inp = module_topic(request, "canfail-in", 3, partitions=3)
    outs = [module_topic(request, f"canfail-out{i}", 3, partitions=3) for i in range(2)]
    return finished_pipeline(cluster, inp, outs, f"{run_names.prefix}-canfail-{uuid.uuid4().hex[:6]}")
