"""The runner image (`kcts image --runner`) as a user runs it: no checkout, no download, and the same
verdicts as the checkout (`python3 -m tox -e package`; heavy, not in the gate).

The run inside the image starts its local Apache Kafka 4.4.0 cluster in its own container, with no
network at all (`--network none`: its loopback only), so a pass also shows that the image holds every
jar, driver and package a run needs. The checkout then runs the same selection, and `kcts compare`
must find the same verdict for every check.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import docker_engine, layout, session

pytestmark = [pytest.mark.live, pytest.mark.heavy]

KCTS = Path(sys.executable).parent / "kcts"  # the checkout's kcts (an editable install)
VERSION = tomllib.loads((layout.ROOT / "pyproject.toml").read_text())["project"]["version"]


@pytest.fixture(scope="module")
def image() -> str:
    if shutil.which("docker") is None:
        pytest.fail("the docker CLI is missing: scripts/bootstrap installs docker.io and starts dockerd")
    proc = subprocess.run([str(KCTS), "image", "--runner"], capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    built = re.search(r"^(kcts-runner:\S+-[0-9a-f]{12}),", proc.stdout, re.M)
    assert built, proc.stdout
    return built.group(1)


@pytest.fixture()
def label() -> Iterator[str]:
    """The session's label on every container the test starts: its reaper removes them however the test
    ends, and the test itself asserts that none is left."""
    value = f"{docker_engine.SESSION_LABEL}={session.current().id}"
    yield value
    engine = docker_engine.client()
    docker_engine.remove_labelled(engine, value)
    assert not docker_engine.leftovers(engine, value)


def in_image(image: str, label: str, *args: str, reports: Path | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
    volume = ["-v", f"{reports}:/reports"] if reports else []
    return subprocess.run(["docker", "run", "--rm", "--label", label, "--network", "none", *volume, image, *args],
                          capture_output=True, text=True, timeout=timeout)


def test_the_image_holds_kcts_of_this_checkout(image: str, label: str) -> None:
    proc = in_image(image, label, "kcts", "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"kcts {VERSION}", proc
    assert image.startswith(f"kcts-runner:{VERSION}-")
    labels = json.loads(subprocess.run(["docker", "image", "inspect", "--format", "{{json .Config.Labels}}", image],
                                       capture_output=True, text=True, timeout=60, check=True).stdout)
    # The checkout's commit when the image was built: HEAD or, if a commit landed since, one before it.
    revision = labels["org.opencontainers.image.revision"].split("+")[0]
    assert re.fullmatch(r"[0-9a-f]{40}", revision), labels
    assert subprocess.run(["git", "-C", str(layout.CHECKOUT), "merge-base", "--is-ancestor", revision, "HEAD"],
                          timeout=30).returncode == 0, labels


def test_smoke_in_the_image_judges_as_the_checkout(image: str, label: str, tmp_path: Path) -> None:
    """`kcts run -m smoke` in the image, then in the checkout: the same verdict on every check."""
    reports = tmp_path / "reports"
    reports.mkdir()
    proc = in_image(image, label, "kcts", "run", "-m", "smoke", "--run-id", "image", reports=reports, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    counts = json.loads((reports / "image" / "results.json").read_text())["summary"]["counts"]
    assert counts["pass"] >= 3 and counts["fail"] == counts["error"] == 0, counts
    checkout = subprocess.run([str(KCTS), "run", "-m", "smoke", "--run-id", "checkout"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=1200)
    assert checkout.returncode == 0, checkout.stdout[-4000:] + checkout.stderr[-2000:]
    compared = subprocess.run([str(KCTS), "compare", str(reports / "image"), str(reports / "checkout")],
                              capture_output=True, text=True, timeout=60)
    assert compared.returncode == 0, compared.stdout + compared.stderr
