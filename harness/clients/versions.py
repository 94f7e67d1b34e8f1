"""librdkafka versions as a client axis: an interpreter whose confluent-kafka is another release.

Each version lives in a cached virtualenv (`$KCTS_CACHE/clients/confluent-kafka-<v>`) that holds only
that confluent-kafka wheel (from PyPI, its librdkafka bundled) and borrows every other package from
the interpreter that made it: a `.pth` line adds this environment's site-packages after its own, so
the version it holds shadows ours and nothing else is installed twice.

Only client drivers run under it (harness/clients/drivers/): the harness itself drives clusters
(topics, leader moves, elections) with the pinned confluent-kafka, whose API older releases lack
(ElectionType, AdminClient as a context manager before 2.4).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from harness.errors import SetupError
from harness.kafka.dist import cache_root

_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:\.post\d+)?$")
# The venv is good when it loads its own confluent-kafka and every driver with it.
_CHECK = """
import importlib, pkgutil, confluent_kafka, harness.clients.drivers as drivers
for m in pkgutil.walk_packages(drivers.__path__, "harness.clients.drivers."):
    importlib.import_module(m.name)
from harness.clients.drivers.kip320_consumers import release
print(release(confluent_kafka.version()), confluent_kafka.libversion()[0])
"""


def interpreter(version: str) -> Path:
    """The python of the cached virtualenv with confluent-kafka `version`, made on first use."""
    if not _VERSION.match(version):
        raise SetupError(f"--librdkafka {version!r}: give confluent-kafka release numbers, e.g. 2.16.1,2.6.1,2.0.2")
    root = cache_root() / "clients" / f"confluent-kafka-{version}-py{sys.version_info.major}{sys.version_info.minor}"
    python = root / "bin" / "python"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / "ready").exists():
            return python
        shutil.rmtree(root, ignore_errors=True)
        _make(root, version)
        (root / "ready").write_text(version)
    return python


def _make(root: Path, version: str) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120,
                   capture_output=True)
    site = Path(subprocess.run(
        [str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60).stdout.strip())
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:", "--target", str(site),
         f"confluent-kafka=={version}"], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise SetupError(f"confluent-kafka {version} could not be installed from PyPI: {pip.stderr.strip()[-800:]}; "
                         "is it a released version with a wheel for this Python, and is PyPI reachable?")
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir also runs our .pth files (the editable install of kcts), after the venv's own packages.
    (site / "kcts-parent-env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    check = subprocess.run([str(root / "bin" / "python"), "-c", _CHECK], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": ""})
    got = check.stdout.split()
    if check.returncode != 0 or not got or got[0] != version:
        shutil.rmtree(root, ignore_errors=True)
        raise SetupError(f"under confluent-kafka {version} the client drivers do not load: "
                         f"{_last_line(check.stderr or check.stdout)}")


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else "no output"
