"""The integrity checker's own tests share one local SparkSession."""

from fixtures.integrity import history_reporter, spark

__all__ = ["history_reporter", "spark"]
