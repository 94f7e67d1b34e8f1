"""Apache Kafka from Maven Central: a runtime classpath per version, cached per user.

`resolve("4.4.0")` returns a `KafkaDistribution` whose jars are copied from the local Maven
repository into `$KCTS_CACHE/kafka/<version>/libs` (default `~/.cache/kcts`). A second call, in
this process or a later one, reads the cache and runs no Maven at all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import SetupError
from harness.kafka import maven
from harness.kafka.maven import Coordinate

DEFAULT_VERSION = "4.4.0"
# Release facts the checks rest on (not defaults): where a KIP first shipped, and a release before it.
FIRST_KIP1319_RELEASE = "4.4.0"  # TxnOffsetCommit v6 and its producer (KAFKA-20444)
PRE_KIP1319_RELEASE = "4.3.1"  # TxnOffsetCommit up to v5 (KIP-890 Transaction V2)

# Releases that run in KRaft with a dedicated controller; the first of each minor line that is
# listed here is what `4.0.x`-style requests resolve to.
KNOWN_VERSIONS: tuple[str, ...] = (
    "4.4.0",
    "4.3.1", "4.3.0",
    "4.2.2", "4.2.1", "4.2.0",
    "4.1.2", "4.1.1", "4.1.0",
    "4.0.2", "4.0.1", "4.0.0",
    "3.9.2", "3.9.1", "3.9.0",
    "3.8.1", "3.8.0",
    "3.7.2", "3.7.1", "3.7.0",
    "3.6.2", "3.6.1", "3.6.0",
    "3.5.2", "3.5.1", "3.5.0",
    "3.4.1", "3.4.0",
    "3.3.2", "3.3.1",
)
# The first release whose KRaft mode is production-ready (KIP-833): older ones are not run here.
FIRST_KRAFT_RELEASE = (3, 3)
# Apache Kafka's release line-up as a reference (`tox -e releases`): the last release of every line
# from the first production KRaft to the newest, oldest first.
RELEASE_LINE_UP: tuple[str, ...] = (
    "3.3.2", "3.4.1", "3.5.2", "3.6.2", "3.7.2", "3.8.1", "3.9.2", "4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0",
)

_VERSION_RE = re.compile(r"^\d+\.\d+\.(\d+|x)$")
_CACHE_FORMAT = 3


def cache_root() -> Path:
    return Path(os.environ.get("KCTS_CACHE", Path.home() / ".cache" / "kcts"))


@dataclass(frozen=True)
class KafkaDistribution:
    """A resolved Kafka runtime: broker, tools and clients jars of one version."""

    version: str
    home: Path
    jars: tuple[Path, ...]
    tools_version: str

    @property
    def classpath(self) -> str:
        return os.pathsep.join(str(j) for j in self.jars)

    def jar(self, artifact: str) -> Path:
        """The jar of one artifact, e.g. `jar("kafka-clients")`."""
        pattern = re.compile(rf"^{re.escape(artifact)}-\d[\w.\-]*\.jar$")
        for j in self.jars:
            if pattern.match(j.name):
                return j
        raise SetupError(f"{artifact} is not in the Kafka {self.version} classpath at {self.home}")


def normalize_version(requested: str) -> str:
    """Map `4.0.x` to the newest known 4.0 release; reject what is not a version at all."""
    if not _VERSION_RE.match(requested):
        raise SetupError(
            f"{requested!r} is not a Kafka version; pass --kafka-version like 4.4.0 "
            f"(known: {', '.join(KNOWN_VERSIONS)})"
        )
    if requested.endswith(".x"):
        line = requested[:-1]
        for v in KNOWN_VERSIONS:
            if v.startswith(line):
                return v
        raise SetupError(f"no known release in the {requested} line; known: {', '.join(KNOWN_VERSIONS)}")
    major = int(requested.split(".")[0])
    minor = int(requested.split(".")[1])
    if (major, minor) < FIRST_KRAFT_RELEASE:
        raise SetupError(
            f"Kafka {requested} cannot run a KRaft cluster with a dedicated controller here (KRaft is "
            "production-ready from 3.3, KIP-833); use 3.3.x or newer (--kafka-version 4.4.0 is the default)"
        )
    return requested


def check_java() -> int:
    """Return the major version of `java` on PATH; it must be 17 or newer."""
    java = shutil.which("java")
    if java is None:
        raise SetupError("java not found on PATH; install a JDK 17+ (apt-get install openjdk-17-jdk-headless)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        raise SetupError(f"cannot read the Java version from `java -version`: {out.strip()!r}")
    major = int(m.group(1))
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < 17:
        raise SetupError(f"Kafka needs Java 17 or newer, found {major} at {java}; install openjdk-17-jdk-headless")
    return major


def resolve(requested: str = DEFAULT_VERSION) -> KafkaDistribution:
    """Return the cached distribution of `requested`, resolving it with Maven on first use."""
    version = normalize_version(requested)
    home = cache_root() / "kafka" / version
    data = maven.cached(home, _CACHE_FORMAT, lambda h: _resolve_into(h, version))
    jars = tuple(home / "libs" / name for name in data["jars"])
    return KafkaDistribution(version, home, jars, data["tools_version"])


def _resolve_into(home: Path, version: str) -> dict[str, Any]:
    """Copy kafka_2.13 + kafka-tools of `version` into home/libs; the manifest names the tools version.

    Some releases reach Maven Central without `kafka-tools` (4.4.0 here). The verifiable clients
    then come from the newest earlier release of the same major that has it, running on this
    version's kafka-clients (pinned), and the manifest records which tools version that was.
    """
    maven.require_maven("Kafka jars")
    broker = Coordinate("org.apache.kafka", "kafka_2.13", version)
    clients = Coordinate("org.apache.kafka", "kafka-clients", version)
    candidates = [version] + [
        v for v in KNOWN_VERSIONS if v.split(".")[0] == version.split(".")[0] and _key(v) < _key(version)
    ]
    result = maven.MavenResult(False, "")
    for tools_version in candidates:
        tools = Coordinate("org.apache.kafka", "kafka-tools", tools_version)
        staging = home / f"libs.tmp{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        result = maven.copy_dependencies(staging, [broker, tools, _logging_binding(version)], managed=[clients])
        if result.ok:
            shutil.rmtree(home / "libs", ignore_errors=True)
            staging.rename(home / "libs")
            return {"version": version, "tools_version": tools_version,
                    "jars": sorted(p.name for p in (home / "libs").glob("*.jar"))}
        shutil.rmtree(staging, ignore_errors=True)
        if result.missing(broker):
            raise SetupError(
                f"Apache Kafka {version} is not on Maven Central (org.apache.kafka:kafka_2.13:{version} not found); "
                f"known versions: {', '.join(KNOWN_VERSIONS)}"
            )
        if result.unreachable:
            raise SetupError(
                "cannot reach Maven Central to fetch Kafka jars; check the network or set a mirror in "
                f"~/.m2/settings.xml, or pre-fill {home}/libs. Maven said: {result.errors}"
            )
        if not result.missing(tools):
            break
    raise SetupError(f"Maven could not resolve Kafka {version}: {result.errors}")


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def _logging_binding(version: str) -> Coordinate:
    """The slf4j binding that Kafka's tarball ships but its POMs leave out: without it, no logs."""
    if _key(version) < (4, 0, 0):
        return Coordinate("org.slf4j", "slf4j-reload4j", "1.7.36")
    return Coordinate("org.apache.logging.log4j", "log4j-slf4j-impl", "2.25.5")
