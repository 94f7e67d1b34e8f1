"""Go programs of the harness (kfake's main, the franz-go client drivers), built through the Go
module proxy once per source and cached under `cache`/<digest>/ (callers give $KCTS_CACHE/<what>)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from harness import session
from harness.errors import SetupError
from harness.process.spawn import spawn


def go_binary(source: Path, name: str, what: str, cache: Path) -> Path:
    """The binary `name` built from the Go module in `source` (its .go files, go.mod, go.sum); `what`
    names it in errors."""
    files = [*sorted(source.glob("*.go")), source / "go.mod", source / "go.sum"]
    digest = hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in files))
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
    proc = spawn([go, "build", "-o", str(tmp), "."], cwd=source, stdin=subprocess.DEVNULL,
                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=900)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        raise SetupError(f"building {what} failed (is the Go module proxy reachable?): {output.strip()[-1500:]}")
    # Moved beside the cache entry first (the scratch may be on another file system), then renamed in.
    staged = out.with_name(f"{name}.tmp{os.getpid()}")
    shutil.move(str(tmp), str(staged))
    staged.replace(out)
    return out
