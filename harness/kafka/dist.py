"""Apache Kafka from Maven Central: a runtime classpath per version, cached per user.

`KCTS_MAVEN_ARGS` adds arguments to every Maven call (a settings file, a local repository).

`resolve("4.4.0")` returns a `KafkaDistribution` whose jars are copied from the local Maven
repository into `$KCTS_CACHE/kafka/<version>/libs` (default `~/.cache/kcts`). A second call, in
this process or a later one, reads the cache and runs no Maven at all.
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
from dataclasses import dataclass
from pathlib import Path

from harness.errors import SetupError

DEFAULT_VERSION = "4.4.0"

# Releases that run in KRaft with a dedicated controller; the first of each minor line that is
# listed here is what `4.0.x`-style requests resolve to.
KNOWN_VERSIONS: tuple[str, ...] = (
    "4.4.0",
    "4.3.1", "4.3.0",
    "4.2.2", "4.2.1", "4.2.0",
    "4.1.2", "4.1.1", "4.1.0",
    "4.0.2", "4.0.1", "4.0.0",
    "3.9.2", "3.9.1", "3.9.0",
)

_VERSION_RE = re.compile(r"^\d+\.\d+\.(\d+|x)$")
_CACHE_FORMAT = 2


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
    if (major, minor) < (3, 9):
        raise SetupError(
            f"Kafka {requested} cannot run a KRaft cluster with a dedicated controller here; "
            "use 3.9.x or newer (--kafka-version 4.4.0 is the default)"
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
    manifest = home / "dist.json"
    if (cached := _read_manifest(manifest, home)) is not None:
        return cached
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (cached := _read_manifest(manifest, home)) is not None:
            return cached
        tools_version = _resolve_into(home, version)
        jars = sorted(p.name for p in (home / "libs").glob("*.jar"))
        manifest.write_text(
            json.dumps({"format": _CACHE_FORMAT, "version": version, "tools_version": tools_version, "jars": jars})
        )
    result = _read_manifest(manifest, home)
    assert result is not None
    return result


def _read_manifest(manifest: Path, home: Path) -> KafkaDistribution | None:
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    jars = tuple(home / "libs" / name for name in data.get("jars", []))
    if data.get("format") != _CACHE_FORMAT or not jars or not all(j.exists() for j in jars):
        return None
    return KafkaDistribution(data["version"], home, jars, data["tools_version"])


def _resolve_into(home: Path, version: str) -> str:
    """Copy kafka_2.13 + kafka-tools of `version` into home/libs; return the tools version used.

    Some releases reach Maven Central without `kafka-tools` (4.4.0 here). The verifiable clients
    then come from the newest earlier release of the same major that has it, running on this
    version's kafka-clients, and the manifest records which tools version that was.
    """
    if shutil.which("mvn") is None:
        raise SetupError("mvn not found on PATH; install Maven (apt-get install maven) to fetch Kafka jars")
    candidates = [version] + [
        v for v in KNOWN_VERSIONS if v.split(".")[0] == version.split(".")[0] and _key(v) < _key(version)
    ]
    last_error = ""
    for tools_version in candidates:
        staging = Path(tempfile.mkdtemp(prefix="resolve-", dir=home))
        try:
            ok, output = _run_maven(staging, version, tools_version)
            if ok:
                libs = home / "libs"
                if libs.exists():
                    shutil.rmtree(libs)
                (staging / "libs").rename(libs)
                return tools_version
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        last_error = output
        if f"kafka_2.13:jar:{version}" in output:
            raise SetupError(
                f"Apache Kafka {version} is not on Maven Central (org.apache.kafka:kafka_2.13:{version} not found); "
                f"known versions: {', '.join(KNOWN_VERSIONS)}"
            )
        if _unreachable(output):
            raise SetupError(
                "cannot reach Maven Central to fetch Kafka jars; check the network or set a mirror in "
                f"~/.m2/settings.xml, or pre-fill {home}/libs. Maven said: {_maven_errors(output)}"
            )
        if f"kafka-tools:jar:{tools_version}" not in output:
            break
    raise SetupError(f"Maven could not resolve Kafka {version}: {_maven_errors(last_error)}")


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def _run_maven(workdir: Path, version: str, tools_version: str) -> tuple[bool, str]:
    # kafka-clients is pinned so that tools borrowed from an older release run on this version's client.
    pom = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kcts</groupId><artifactId>kafka-runtime</artifactId><version>{version}</version>
  <packaging>pom</packaging>
  <dependencyManagement><dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId><version>{version}</version></dependency>
  </dependencies></dependencyManagement>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{version}</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>{tools_version}</version></dependency>
    {_logging_binding(version)}
  </dependencies>
</project>
"""
    (workdir / "pom.xml").write_text(pom)
    cmd = [
        "mvn", "-B", "-q", "-f", str(workdir / "pom.xml"), *shlex.split(os.environ.get("KCTS_MAVEN_ARGS", "")),
        "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies",
        f"-DoutputDirectory={workdir / 'libs'}", "-DincludeScope=runtime",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return False, "Maven timed out after 900 s (Could not transfer artifact: timeout)"
    return proc.returncode == 0, proc.stdout + proc.stderr


def _logging_binding(version: str) -> str:
    """The slf4j binding that Kafka's tarball ships but its POMs leave out: without it, no logs."""
    if _key(version) < (4, 0, 0):
        return (
            "<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId>"
            "<version>1.7.36</version></dependency>"
        )
    return (
        "<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId>"
        "<version>2.25.5</version></dependency>"
    )


def _unreachable(output: str) -> bool:
    return any(
        s in output
        for s in ("Could not transfer", "UnknownHost", "Connection refused", "Network is unreachable", "timed out")
    )


def _maven_errors(output: str) -> str:
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    lines = [ln for ln in output.splitlines() if "[ERROR]" in ln and ln.strip() != "[ERROR]" and "-e switch" not in ln
             and "-X switch" not in ln]
    return " | ".join(lines[:3]) or output.strip()[-500:]
