"""The integrity checker's own tests share one local SparkSession; each test that uses it is marked
`spark`, which the gate leaves to tox -e integrity."""

import pytest

from fixtures.integrity import anomaly_reporter, spark

__all__ = ["anomaly_reporter", "spark"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
