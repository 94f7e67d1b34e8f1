"""The integrity checker's own tests share one local SparkSession."""

from harness.integrity.fixtures import spark

__all__ = ["spark"]
