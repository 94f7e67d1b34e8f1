"""Install-once of what a command target runs: a profile's `[build]` table, run into the cache.

    [build]
    command = ["cargo", "install", "--locked", "tansu", "--version", "0.6.0", "--root", "{root}"]
    creates = "{root}/bin/tansu"   # built when this exists; the build must make it
    needs = ["cargo"]              # tools that must be on PATH (a missing one: how to install it)
    hint = "..."                   # optional: how to get a tool that kcts does not know
    env = {}                       # added to the build's environment
    timeout = 3600                 # seconds
    name = "tansu"                 # optional: the cache directory's name (default: the target's name),
                                   # so that several profiles share one build

`{root}` is `cache_root()/<name>/<version>` (`~/.cache/kcts/tansu/0.6.0`). A lock file beside it
keeps two runs from building at once: the second waits, then finds the first's result. The
build's output goes to `<root>.build.log`; a failed build is a SetupError with that path and the
log's tail.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cluster.services import (
    check_keys,
    child_env,
    render,
    string_list,
    string_table,
    typed,
)
from harness.errors import SetupError
from harness.kafka.dist import cache_root
from harness.process.service import tail
from harness.process.spawn import spawn

BUILD_KEYS = ("command", "creates", "needs", "hint", "env", "timeout", "name")

# Where a tool lives when its installer does not put it on PATH, and how to get it.
TOOLS: dict[str, tuple[tuple[str, ...], str]] = {
    "cargo": (("~/.cargo/bin",), "install Rust with rustup (curl --proto '=https' -sSf https://sh.rustup.rs | "
              "sh -s -- -y), then open a new shell or add ~/.cargo/bin to PATH"),
    "go": (("/usr/local/go/bin",), "install Go (apt-get install golang-go)"),
    "make": ((), "apt-get install make"),
    "git": ((), "apt-get install git"),
}


def build_root(name: str, version: str | None) -> Path:
    """Where a target's build goes: cache_root()/<name>/<version>."""
    if not re.fullmatch(r"[\w.+-]+", name) or (version is not None and not re.fullmatch(r"[\w.+-]+", version)):
        raise SetupError(f"target name {name!r} and version {version!r}: use letters, digits and . _ + - "
                         "(they name the build's cache directory)")
    return cache_root() / name / (version or "unversioned")


@dataclass(frozen=True)
class BuildSpec:
    command: list[str]
    creates: str
    needs: list[str] = field(default_factory=list)
    hint: str = ""
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 3600.0
    name: str | None = None

    @staticmethod
    def from_table(table: Mapping[str, Any], profile: Path | None) -> BuildSpec:
        if not isinstance(table, dict):
            raise SetupError(f"target profile {profile}: [build] must be a table")
        check_keys(table, BUILD_KEYS, "[build]", profile)
        creates = typed(table, "creates", str, "[build]", profile)
        if not creates:
            raise SetupError(f"target profile {profile}: [build] needs creates = \"{{root}}/...\": the file the "
                             "build makes, by which kcts knows it is done")
        return BuildSpec(
            command=string_list(table, "command", "[build]", profile, required=True),
            creates=creates,
            needs=string_list(table, "needs", "[build]", profile),
            hint=typed(table, "hint", str, "[build]", profile, ""),
            env=string_table(table, "env", "[build]", profile),
            timeout=typed(table, "timeout", float, "[build]", profile, 3600.0),
            name=typed(table, "name", str, "[build]", profile, None),
        )


def find_tool(tool: str, hint: str = "") -> Path:
    """A tool on PATH, or where its installer puts it; a SetupError saying how to install it."""
    found = _which(tool)
    if found is not None:
        return found
    places, how = TOOLS.get(tool, ((), ""))
    for place in places:
        candidate = Path(place).expanduser() / tool
        if os.access(candidate, os.X_OK):
            return candidate
    how = hint or how or f"install {tool} and put it on PATH"
    raise SetupError(f"{tool} not found on PATH (needed to build the target): {how}")


def _which(tool: str) -> Path | None:
    found = shutil.which(tool)
    return Path(found) if found else None


def ensure_built(spec: BuildSpec, root: Path, label: str) -> str:
    """Run the build once into `root` unless `creates` exists; one line saying what."""
    values = {"root": str(root)}
    where = f"[build] of {label}"
    creates = Path(render(spec.creates, values, where))
    if creates.exists():
        return f"{label}: {creates} (built before)"
    tools = [find_tool(t, spec.hint) for t in spec.needs]
    argv = [render(a, values, where) for a in spec.command]
    root.parent.mkdir(parents=True, exist_ok=True)
    log_path = root.with_name(f"{root.name}.build.log")
    with open(root.with_name(f"{root.name}.lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"kcts: another run is building {label}; waiting for it (log: {log_path})", file=sys.stderr,
                  flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        if creates.exists():  # the run we waited for built it
            return f"{label}: {creates} (built by another run)"
        path = os.pathsep.join([*dict.fromkeys(str(t.parent) for t in tools), os.environ.get("PATH", "")])
        env = child_env({"PATH": path, **{k: render(v, values, where) for k, v in spec.env.items()}})
        print(f"kcts: building {label} once into {root} (log: {log_path}): {' '.join(argv)}", file=sys.stderr,
              flush=True)
        started = time.monotonic()
        code = _run(argv, env, log_path, spec.timeout)
        if code != 0:
            what = f"timed out after {spec.timeout:.0f}s" if code is None else f"failed (exit {code})"
            raise SetupError(f"building {label} {what}; log {log_path}, last lines:\n{tail(log_path, 25)}")
        if not creates.exists():
            raise SetupError(f"building {label} succeeded but did not create {creates} (the profile's [build] "
                             f"creates); log {log_path}, last lines:\n{tail(log_path, 15)}")
        return f"{label}: built {creates} in {time.monotonic() - started:.0f}s"


def _run(argv: list[str], env: Mapping[str, str], log_path: Path, timeout: float) -> int | None:
    """The build, its output to the log; None if it ran past the timeout (then it is killed)."""
    with open(log_path, "w") as log:
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
        try:
            proc = spawn(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=dict(env))
        except OSError as exc:
            raise SetupError(f"cannot run the build command {argv[0]}: {exc}") from exc
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)
        return None
