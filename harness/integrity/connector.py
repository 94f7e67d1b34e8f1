"""The spark-sql-kafka connector jars for the installed pyspark, resolved with Maven and cached per user.

The pyspark wheel bundles Spark itself but no Kafka source. Its connector (same version as Spark)
and the few dependencies the wheel lacks are copied from the local Maven repository into
`$KCTS_CACHE/spark/<version>/jars`; jars the wheel already ships (Hadoop client, Scala, slf4j,
lz4, snappy) are left out, so that one copy of each class is on the driver's classpath. Spark is
then given the files through `spark.jars`: no Ivy resolution happens when a session starts.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from harness.errors import SetupError
from harness.kafka import maven
from harness.kafka.dist import cache_root
from harness.kafka.maven import Coordinate

CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"
_CACHE_FORMAT = 2
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-\d[\w.\-]*\.jar$")


def pyspark_version() -> str:
    try:
        import pyspark
    except ImportError as exc:
        raise SetupError("pyspark is not installed; `pip install -e .` installs the pinned version") from exc
    return pyspark.__version__


def bundled_artifacts() -> set[str]:
    """Artifact ids of the jars inside the pyspark wheel."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    return {m.group("artifact") for j in jars.glob("*.jar") if (m := _VERSIONED_JAR.match(j.name))}


def connector_jars(version: str | None = None) -> list[Path]:
    """The connector and its missing dependencies for Spark `version` (default: installed pyspark)."""
    version = version or pyspark_version()
    home = cache_root() / "spark" / version
    data = maven.cached(home, _CACHE_FORMAT, lambda h: _resolve_into(h, version))
    return [home / "jars" / name for name in data["jars"]]


def _resolve_into(home: Path, version: str) -> dict[str, Any]:
    maven.require_maven("the Spark connector")
    group, artifact = CONNECTOR.split(":")
    staging = home / f"jars.tmp{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        result = maven.copy_dependencies(staging, [Coordinate(group, artifact, version)])
        if result.unreachable:
            raise SetupError(
                "cannot reach Maven Central to fetch the Spark connector; check the network or set a mirror "
                f"in ~/.m2/settings.xml. Maven said: {result.errors}"
            )
        if not result.ok:
            raise SetupError(
                f"Maven could not resolve {CONNECTOR}:{version} (the connector must match pyspark {version}; "
                f"not every Spark release reaches Maven Central): {result.errors}"
            )
        bundled = bundled_artifacts()
        target = home / "jars"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        kept = []
        for jar in sorted(staging.glob("*.jar")):
            m = _VERSIONED_JAR.match(jar.name)
            if m and m.group("artifact") in bundled:
                continue
            shutil.copy2(jar, target / jar.name)
            kept.append(jar.name)
        return {"version": version, "folder": "jars", "jars": kept}
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def connector_client_version() -> str:
    """The kafka-clients version that Spark's Kafka source reads with."""
    for jar in connector_jars():
        m = _VERSIONED_JAR.match(jar.name)
        if m and m.group("artifact") == "kafka-clients":
            return jar.name[len("kafka-clients-"):-len(".jar")]
    return "?"
