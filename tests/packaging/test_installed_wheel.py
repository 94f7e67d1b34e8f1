"""kcts as a user gets it: the wheel `python -m build` makes, installed into a fresh virtualenv, run from
an empty folder outside the checkout (`python3 -m tox -e package`; heavy, not in the gate).

The user cache is fresh too, but for the Kafka jars (linked from the usual cache: fetching them again
proves nothing about the package), so that the Java drivers and kfake are compiled from the sources
in the installed package, as on a user's first run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from harness import layout
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.kafka.dist import cache_root

pytestmark = [pytest.mark.live, pytest.mark.heavy]

# What a run needs besides harness/'s modules, as the wheel holds it (kcts_suite/ is the checkout's root).
SHIPPED = ("kcts_suite/conftest.py", "kcts_suite/pyproject.toml", "kcts_suite/fixtures/cluster.py",
           "kcts_suite/suites/smoke/test_smoke.py", "kcts_suite/docker/kafka/Dockerfile",
           "kcts_suite/docker/base/build.sh", "kcts_suite/docker/compose.yaml", "harness/clients/java/KctsJson.java",
           "harness/clients/go/go.mod", "harness/cluster/kcts_kfake/main.go", "harness/promises.toml",
           "harness/client_gaps.toml",
           "harness/replays.toml", "harness/profiles/tansu.toml", "harness/reporting/results.schema.json")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built as a release would be (the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    try:
        import build  # noqa: F401
    except ImportError:
        pytest.fail("the `build` package is missing; run this test through `python3 -m tox -e package`, or "
                    f"{sys.executable} -m pip install build")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(layout.CHECKOUT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv (no site packages of this one) with only the wheel and its dependencies."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=120)
    (wheel,) = dist.glob("kcts-*.whl")
    proc = subprocess.run([str(root / "bin" / "pip"), "install", "-q", str(wheel)], capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("user-cache")
    if (cache_root() / "kafka").is_dir():
        (cache / "kafka").symlink_to(cache_root() / "kafka")
    return cache


@pytest.fixture()
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "somewhere-else"
    folder.mkdir()
    return folder


def kcts(venv: Path, cwd: Path, cache: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    # Only the venv's bin on PATH ahead of the system's: no tox env, no checkout on sys.path.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KCTS_", "PYTHON", "VIRTUAL_ENV"))}
    env |= {"PATH": f"{venv / 'bin'}:{env.get('PATH', '')}", "KCTS_CACHE": str(cache)}
    return subprocess.run([str(venv / "bin" / "kcts"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def verdicts(run: Path) -> dict[str, int]:
    return json.loads((run / "results.json").read_text())["summary"]["counts"]


def test_the_wheel_and_sdist_hold_everything_a_run_needs(dist: Path) -> None:
    (wheel,) = dist.glob("kcts-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not [n for n in SHIPPED if n not in names], sorted(n for n in SHIPPED if n not in names)
    assert not [n for n in names if n.split("/")[0] not in ("harness", "kcts_suite") and ".dist-info/" not in n]
    assert "kcts_suite/__init__.py" not in names  # pytest must see kcts_suite/conftest.py as a root conftest
    (sdist,) = dist.glob("kcts-*.tar.gz")
    inside = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    assert {"conftest.py", "setup.py", "docker/kafka/kcts-entrypoint", "suites/smoke/test_smoke.py",
            "harness/cluster/kcts_kfake/main.go"} <= inside


def test_version_from_an_empty_folder(venv: Path, empty: Path, user_cache: Path) -> None:
    proc = kcts(venv, empty, user_cache, "--version")
    project = tomllib.loads((layout.ROOT / "pyproject.toml").read_text())["project"]
    assert proc.returncode == 0 and proc.stdout.strip() == f"kcts {project['version']}", proc
    assert kcts(venv, empty, user_cache, "run", "--help").returncode == 0


def test_smoke_on_a_local_cluster_reports_to_the_current_folder(venv: Path, empty: Path, user_cache: Path) -> None:
    proc = kcts(venv, empty, user_cache, "run", "-m", "smoke", "--run-id", "smoke", timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    counts = verdicts(empty / "reports" / "smoke")
    # Every smoke check passes, however many the suite holds (a hard-coded 3 went stale at the fourth).
    assert counts["pass"] == sum(counts.values()) >= 3, counts
    assert (empty / "reports" / "latest").resolve() == (empty / "reports" / "smoke").resolve()
    assert not list(empty.glob("*.py")) and sorted(p.name for p in empty.iterdir()) == ["reports"]


def test_external_target_held_here_and_java_drivers_built_from_the_package(
    venv: Path, empty: Path, user_cache: Path
) -> None:
    """suites/kip1094 as the README names it, though the empty folder has no suites/: its Java driver
    is compiled into the fresh user cache from the installed sources."""
    with LocalCluster(LocalClusterSpec()) as held:
        proc = kcts(venv, empty, user_cache, "run", "--backend", "external", "--bootstrap-servers",
                    held.bootstrap_servers, "suites/kip1094", "--run-id", "external", timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    counts = verdicts(empty / "reports" / "external")
    assert counts["pass"] >= 1 and counts["fail"] == counts["error"] == 0, counts
    assert list((user_cache / "drivers").glob("Kip1094NextOffsets-*/Kip1094NextOffsets.class"))


def test_kfake_is_built_from_the_package(venv: Path, empty: Path, user_cache: Path) -> None:
    proc = kcts(venv, empty, user_cache, "run", "--backend", "kfake", "-m", "smoke", "--run-id", "kfake",
                timeout=1200)
    assert (empty / "reports" / "kfake" / "results.json").is_file(), proc.stdout[-4000:] + proc.stderr[-2000:]
    assert list((user_cache / "kfake").glob("*/kcts-kfake")), proc.stdout[-2000:]
