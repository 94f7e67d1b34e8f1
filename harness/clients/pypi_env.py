"""A Python client library from PyPI as a client stack's runtime: a cached virtualenv holding exactly
the pinned distributions, whose interpreter runs kcts's drivers of that client
(harness/clients/python_drivers/).

Like the confluent-kafka releases of harness.clients.versions, the environment
(`$KCTS_CACHE/clients/<name>-py<XY>`) holds only the pinned wheels and borrows every other package
from the interpreter that made it (a `.pth` line adds its site-packages after its own): the drivers
are modules of kcts, and the pinned client shadows anything of the same name. The pins are the
stack's, every dependency named with its version and installed without resolution (`--no-deps`), so
what runs is what the stack says, on any machine.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from harness.errors import SetupError
from harness.kafka.dist import cache_root


@dataclass(frozen=True)
class PypiClient:
    """A client library as pinned distributions; `probe` is Python that prints the client's version,
    `version` what it must print."""

    name: str
    requirements: tuple[str, ...]  # "dist==version", every one the client needs
    probe: str
    version: str

    def pins(self) -> str:
        return " ".join(self.requirements)


def interpreter(client: PypiClient) -> Path:
    """The python of the cached virtualenv of `client`, made on first use (and again where its pins changed)."""
    root = cache_root() / "clients" / f"{client.name}-py{sys.version_info.major}{sys.version_info.minor}"
    python = root / "bin" / "python"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = root / "ready"
        if ready.exists() and ready.read_text() == client.pins():
            return python
        shutil.rmtree(root, ignore_errors=True)
        _make(root, client)
        ready.write_text(client.pins())
    return python


def _make(root: Path, client: PypiClient) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120,
                   capture_output=True)
    site = Path(subprocess.run(
        [str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60).stdout.strip())
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:", "--target", str(site),
         *client.requirements], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise SetupError(f"{client.pins()} could not be installed from PyPI: {pip.stderr.strip()[-800:]}; is PyPI "
                         f"reachable (pip's index settings, a proxy), and is there a wheel for Python "
                         f"{sys.version_info.major}.{sys.version_info.minor}?")
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir also runs our .pth files (the editable install of kcts), after the venv's own packages.
    (site / "kcts-parent-env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    check = subprocess.run([str(root / "bin" / "python"), "-c", client.probe], capture_output=True, text=True,
                           timeout=120, env={**os.environ, "PYTHONPATH": ""})
    got = check.stdout.split()
    if check.returncode != 0 or not got or got[-1] != client.version:
        shutil.rmtree(root, ignore_errors=True)
        last = (check.stderr or check.stdout).strip().splitlines()
        raise SetupError(f"the virtualenv of {client.pins()} does not load {client.name} {client.version}: "
                         f"{last[-1] if last else 'no output'}")
