"""The integrity checker: reads a pipeline's topics with Spark and names every anomaly it finds."""
