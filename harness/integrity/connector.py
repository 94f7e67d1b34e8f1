"""The spark-sql-kafka connector jars for the installed pyspark, resolved with Maven and cached per user.

The pyspark wheel bundles Spark itself but no Kafka source. Its connector (same version as Spark)
and the few dependencies the wheel lacks are copied from the local Maven repository into
`$KCTS_CACHE/spark/<version>/jars`; jars the wheel already ships (Hadoop client, Scala, slf4j,
lz4, snappy) are left out, so that one copy of each class is on the driver's classpath. Spark is
then given the files through `spark.jars`: no Ivy resolution happens when a session starts.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.errors import SetupError
from harness.kafka.dist import cache_root

CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"
_CACHE_FORMAT = 1
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
    manifest = home / "jars.json"
    if (cached := _read_manifest(manifest, home)) is not None:
        return cached
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (cached := _read_manifest(manifest, home)) is not None:
            return cached
        names = _resolve_into(home, version)
        manifest.write_text(json.dumps({"format": _CACHE_FORMAT, "version": version, "jars": names}))
    result = _read_manifest(manifest, home)
    assert result is not None
    return result


def _read_manifest(manifest: Path, home: Path) -> list[Path] | None:
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    jars = [home / "jars" / name for name in data.get("jars", [])]
    if data.get("format") != _CACHE_FORMAT or not jars or not all(j.exists() for j in jars):
        return None
    return jars


def _resolve_into(home: Path, version: str) -> list[str]:
    if shutil.which("mvn") is None:
        raise SetupError("mvn not found on PATH; install Maven (apt-get install maven) to fetch the Spark connector")
    staging = Path(tempfile.mkdtemp(prefix="resolve-", dir=home))
    try:
        (staging / "pom.xml").write_text(_pom(version))
        cmd = [
            "mvn", "-B", "-q", "-f", str(staging / "pom.xml"), *shlex.split(os.environ.get("KCTS_MAVEN_ARGS", "")),
            "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies",
            f"-DoutputDirectory={staging / 'jars'}", "-DincludeScope=runtime",
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired as exc:
            raise SetupError(f"Maven timed out resolving {CONNECTOR}:{version}") from exc
        if proc.returncode != 0:
            out = proc.stdout + proc.stderr
            errors = " | ".join(ln for ln in out.splitlines() if "[ERROR]" in ln)[:600] or out[-600:]
            raise SetupError(
                f"Maven could not resolve {CONNECTOR}:{version} (the connector must match pyspark {version}; "
                f"not every Spark release reaches Maven Central): {errors}"
            )
        bundled = bundled_artifacts()
        target = home / "jars"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        kept = []
        for jar in sorted((staging / "jars").glob("*.jar")):
            m = _VERSIONED_JAR.match(jar.name)
            if m and m.group("artifact") in bundled:
                continue
            shutil.copy2(jar, target / jar.name)
            kept.append(jar.name)
        return kept
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _pom(version: str) -> str:
    group, artifact = CONNECTOR.split(":")
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kcts</groupId><artifactId>spark-kafka-connector</artifactId><version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
"""
