"""The integrity checker's own tests share one local SparkSession."""

from fixtures.integrity import spark

__all__ = ["spark"]
