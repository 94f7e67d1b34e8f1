"""Go programs of the harness (kfake's main, the franz-go client drivers), built through the Go
module proxy once per source and cached under `cache`/<digest>/ (callers give $KCTS_CACHE/<what>).

A build may pin one module at another version than the source's go.mod names (`ModulePin`): the
source is copied aside, the requirement changed there and `go mod tidy` run, so the module's own
requirements decide its dependencies; `tags` select the source's build-tagged files. The digest
covers the pin and the tags, so each version has a cache entry of its own."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness import session
from harness.errors import SetupError
from harness.process.spawn import spawn


@dataclass(frozen=True)
class ModulePin:
    """Build against `path` at `version` (e.g. github.com/twmb/franz-go v1.21.3). `drop`: requirements
    of the source's go.mod left for `go mod tidy` to choose, the versions the pinned module requires
    (a sub-module released with it, such as franz-go's pkg/kmsg)."""

    path: str
    version: str
    drop: tuple[str, ...] = ()

    def key(self) -> bytes:
        return f"{self.path}@{self.version}-{','.join(self.drop)}".encode()


def go_binary(source: Path, name: str, what: str, cache: Path, pin: ModulePin | None = None,
              tags: tuple[str, ...] = ()) -> Path:
    """The binary `name` built from the Go module in `source` (its .go files, go.mod, go.sum); `what`
    names it in errors."""
    files = [*sorted(source.glob("*.go")), source / "go.mod", source / "go.sum"]
    digest = hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in files))
    if pin is not None or tags:
        digest.update(b"\0" + (pin.key() if pin else b"") + b"\0" + ",".join(tags).encode())
    out = cache / digest.hexdigest()[:12] / name
    if out.exists():
        return out
    go = shutil.which("go")
    if go is None:
        raise SetupError(f"go not found on PATH; install Go 1.26+ (apt-get install golang-go) to build {what}")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Built in the session's scratch (the reaper removes it if the run is killed), by a child that
    # dies with this thread; only a finished binary is moved into the cache.
    tmp = session.current().scratch(f"{what}-build") / name
    workdir = source
    if pin is not None:
        # The source stays as it is: the pinned go.mod and go.sum are written beside a copy.
        workdir = session.current().scratch(f"{what}-module")
        for f in files:
            shutil.copyfile(f, workdir / f.name)
        _go(go, ["mod", "edit", f"-require={pin.path}@{pin.version}", *(f"-droprequire={d}" for d in pin.drop)],
            workdir, what)
        _go(go, ["mod", "tidy"], workdir, what)
    _go(go, ["build", *(["-tags", ",".join(tags)] if tags else []), "-o", str(tmp), "."], workdir, what)
    # Moved beside the cache entry first (the scratch may be on another file system), then renamed in.
    staged = out.with_name(f"{name}.tmp{os.getpid()}")
    shutil.move(str(tmp), str(staged))
    staged.replace(out)
    return out


def _go(go: str, args: list[str], cwd: Path, what: str) -> None:
    proc = spawn([go, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=900)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        raise SetupError(f"building {what} failed at `go {' '.join(args[:2])}` (is the Go module proxy reachable?): "
                         f"{output.strip()[-1500:]}")
