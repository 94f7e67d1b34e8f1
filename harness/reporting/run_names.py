"""A run folder's default name and `reports/latest`, the link to the newest run or matrix."""

from __future__ import annotations

import os
import time
from pathlib import Path


def new_run_id() -> str:
    """The name of a run folder when --run-id gives none: its start time and the process."""
    return time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"


def point_latest(reports: Path, name: str) -> None:
    """`reports/latest` made a link to `reports/<name>`, whatever it was before."""
    latest = reports / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(name)
