"""The one SparkSession of a pytest process, for every integrity test and suite that asks for it.

Both `suites/integrity` and `tests/integrity` import the `spark` fixture from here; the session is
started once per process (a start costs seconds) and stopped when pytest unconfigures.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from harness.integrity.spark import DEFAULT_MASTER, start, stop

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_shared: list[SparkSession] = []


def spark_master(config: pytest.Config) -> str:
    """--spark-master, else $KCTS_SPARK_MASTER, else local[2]."""
    return (
        config.getoption("spark_master", default=None) or os.environ.get("KCTS_SPARK_MASTER") or DEFAULT_MASTER
    )


@pytest.fixture(scope="session")
def spark(pytestconfig: pytest.Config) -> SparkSession:
    """A SparkSession on the configured master, with the Kafka connector; stopped at the end of the run."""
    if not _shared:
        session = start(spark_master(pytestconfig))
        _shared.append(session)
        pytestconfig.add_cleanup(lambda: (stop(session), _shared.clear()))
    return _shared[0]
