"""The integrity checker's own tests share one local SparkSession."""

from fixtures.integrity import anomaly_reporter, spark

__all__ = ["anomaly_reporter", "spark"]
