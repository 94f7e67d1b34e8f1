"""Maven Central access shared by every Java artifact kcts needs (Kafka, the Spark connector).

`copy_dependencies` resolves a list of coordinates (and their runtime dependencies) and copies the
jars into a folder; `cached` keeps such a folder per user, behind a lock and a manifest, so that
the second call runs no Maven at all. `KCTS_MAVEN_ARGS` adds arguments to every Maven call (a
settings file, a local repository).
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import SetupError

# On a cold local repository Maven fetches the plugin's own dependencies first, one POM at a time:
# 3.8.1 needs fewer than 3.6.1 (Kafka 4.4.0's jars with it: 331 POMs against 408, 46-51 s against 55 s).
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


@dataclass(frozen=True)
class Coordinate:
    group: str
    artifact: str
    version: str

    def xml(self) -> str:
        return (f"<dependency><groupId>{self.group}</groupId><artifactId>{self.artifact}</artifactId>"
                f"<version>{self.version}</version></dependency>")


@dataclass(frozen=True)
class MavenResult:
    ok: bool
    output: str

    @property
    def unreachable(self) -> bool:
        return any(s in self.output for s in (
            "Could not transfer", "UnknownHost", "Connection refused", "Network is unreachable", "timed out"))

    def missing(self, coordinate: Coordinate) -> bool:
        return f"{coordinate.artifact}:jar:{coordinate.version}" in self.output

    @property
    def errors(self) -> str:
        text = re.sub(r"\x1b\[[0-9;]*m", "", self.output)
        lines = [ln for ln in text.splitlines()
                 if "[ERROR]" in ln and ln.strip() != "[ERROR]" and "-e switch" not in ln and "-X switch" not in ln]
        return " | ".join(lines[:3]) or text.strip()[-500:]


def require_maven(what: str) -> None:
    if shutil.which("mvn") is None:
        raise SetupError(f"mvn not found on PATH; install Maven (apt-get install maven) to fetch {what}")


def copy_dependencies(
    dest: Path, dependencies: Sequence[Coordinate], managed: Sequence[Coordinate] = (), timeout: float = 900
) -> MavenResult:
    """Resolve `dependencies` with their runtime closure into `dest` (created); `managed` pins versions."""
    workdir = Path(tempfile.mkdtemp(prefix="mvn-"))
    try:
        management = "".join(c.xml() for c in managed)
        pom = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kcts</groupId><artifactId>resolve</artifactId><version>1</version><packaging>pom</packaging>
  <dependencyManagement><dependencies>{management}</dependencies></dependencyManagement>
  <dependencies>{"".join(c.xml() for c in dependencies)}</dependencies>
</project>
"""
        (workdir / "pom.xml").write_text(pom)
        cmd = ["mvn", "-B", "-q", "-f", str(workdir / "pom.xml"), *shlex.split(os.environ.get("KCTS_MAVEN_ARGS", "")),
               f"{DEPENDENCY_PLUGIN}:copy-dependencies", f"-DoutputDirectory={dest}", "-DincludeScope=runtime"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return MavenResult(False, f"Maven timed out after {timeout:.0f} s (Could not transfer artifact: timeout)")
        return MavenResult(proc.returncode == 0, proc.stdout + proc.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def copy_artifact(dest: Path, artifact: str, timeout: float = 900) -> MavenResult:
    """Fetch one artifact (`group:artifact:version[:type[:classifier]]`, e.g. a zip) into `dest`, as it is."""
    cmd = ["mvn", "-B", "-q", *shlex.split(os.environ.get("KCTS_MAVEN_ARGS", "")), f"{DEPENDENCY_PLUGIN}:copy",
           f"-Dartifact={artifact}", f"-DoutputDirectory={dest}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=dest)
    except subprocess.TimeoutExpired:
        return MavenResult(False, f"Maven timed out after {timeout:.0f} s (Could not transfer artifact: timeout)")
    return MavenResult(proc.returncode == 0, proc.stdout + proc.stderr)


def cached(home: Path, fmt: int, produce: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """The manifest of `home`, made once by `produce(home)` under a lock; stale formats are redone.

    `produce` fills `home` and returns the manifest; a manifest's "jars" must all exist under
    home/libs or home/jars for it to count as made. It stages in folders named `*.tmp*`, which the
    next call removes when a `produce` was killed before it renamed them.
    """
    manifest = home / "manifest.json"
    if (data := _read(manifest, home, fmt)) is not None:
        return data
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (data := _read(manifest, home, fmt)) is not None:
            return data
        # Under the lock, a staging folder (`<folder>.tmp<pid>`) is that of a fetch that was killed
        # (bootstrap's background fetch at its time bound, an interrupted run): it would stay for good.
        for stale in home.glob("*.tmp*"):
            shutil.rmtree(stale, ignore_errors=True)
        data = {**produce(home), "format": fmt}
        manifest.write_text(json.dumps(data))
    return data


def _read(manifest: Path, home: Path, fmt: int) -> dict[str, Any] | None:
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    jars = data.get("jars", [])
    folder = home / data.get("folder", "libs")
    if data.get("format") != fmt or not jars or not all((folder / j).exists() for j in jars):
        return None
    return data
