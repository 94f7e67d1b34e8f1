"""Headless Chromium for the tests that read a page kcts renders (the Allure report, the matrix page):
one launch gives the DOM once the page's scripts ran and, when asked, a screenshot of the same render.
Chromium runs in a process group of its own, killed whole if it overstays, so no renderer or zygote
outlives the test, and on a profile of its own, removed afterwards."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def render(url: str, *, screenshot: Path | None = None, window: tuple[int, int] = (1400, 1100),
           virtual_time_ms: int | None = None, timeout: float = 90, required: bool = False) -> str:
    """The DOM of `url` after its scripts ran (within `virtual_time_ms` of page time, if given), and a
    screenshot of a `window`-sized view written to `screenshot` if given. Without Chromium the test
    is skipped, or fails if `required`."""
    browser = shutil.which("chromium")
    if browser is None:
        missing = "chromium is not installed (scripts/bootstrap installs it: apt-get install chromium)"
        if required:
            pytest.fail(missing)
        pytest.skip(missing)
    profile = tempfile.mkdtemp(prefix="kcts-chromium-")
    cmd = [browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size={window[0]},{window[1]}"]
    if virtual_time_ms is not None:
        cmd.append(f"--virtual-time-budget={virtual_time_ms}")
    if screenshot is not None:
        cmd.append(f"--screenshot={screenshot}")
    proc = subprocess.Popen([*cmd, "--dump-dom", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None or proc.returncode != 0:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    assert proc.returncode == 0, f"chromium exited {proc.returncode}: {err[-2000:]}"
    return out
