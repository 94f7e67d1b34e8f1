"""Node.js packages of the harness (the KafkaJS and @platformatic/kafka client drivers): a package
folder (package.json, package-lock.json, its .js and .mjs files) installed with `npm ci` from the npm
registry once per digest of those files and cached under `cache`/<digest>/ (callers give
$KCTS_CACHE/<what>), where `node` runs it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from harness import session
from harness.errors import SetupError
from harness.process.spawn import spawn

# The package-lock.json pins every version; npm ci installs exactly those or fails.
NPM_CI = ["ci", "--no-audit", "--no-fund", "--omit=dev", "--loglevel=error"]


def package_files(source: Path) -> list[Path]:
    return [*sorted(p for p in source.iterdir() if p.suffix in (".js", ".mjs")),
            source / "package.json", source / "package-lock.json"]


def installed_at(source: Path, cache: Path) -> Path:
    """Where `source` is installed: a folder named by the digest of its package files."""
    digest = hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in package_files(source)))
    return cache / digest.hexdigest()[:12]


def node_package(source: Path, what: str, cache: Path) -> Path:
    """The folder holding `source`'s files and their node_modules, installed; `what` names it in errors."""
    files = package_files(source)
    out = installed_at(source, cache)
    if (out / "node_modules").is_dir():
        return out
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise SetupError(f"node and npm not found on PATH; install Node.js 18+ with npm (apt-get install nodejs "
                         f"npm) to install {what}")
    # Installed in the session's scratch (the reaper removes it if the run is killed), by a child that
    # dies with this thread; only a finished folder is moved into the cache.
    tmp = session.current().scratch(f"{what.replace(' ', '-')}-npm") / "package"
    tmp.mkdir()
    for f in files:
        shutil.copy2(f, tmp / f.name)
    proc = spawn([npm, *NPM_CI], cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=900)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        raise SetupError(f"installing {what} with npm ci failed (is the npm registry reachable? npm config get "
                         f"registry): {output.strip()[-1500:]}")
    # Moved beside the cache entry first (the scratch may be on another file system), then renamed in:
    # a concurrent install of the same digest leaves one complete folder.
    cache.mkdir(parents=True, exist_ok=True)
    staged = out.with_name(f"{out.name}.tmp{os.getpid()}")
    shutil.rmtree(staged, ignore_errors=True)
    shutil.move(str(tmp), str(staged))
    try:
        staged.rename(out)
    except OSError:  # another run installed it first
        shutil.rmtree(staged, ignore_errors=True)
    return out
