"""The version of kcts installed here, as `kcts --version` and the runner image's tag give it."""

from __future__ import annotations

from importlib import metadata


def version() -> str:
    try:
        return metadata.version("kcts")
    except metadata.PackageNotFoundError:  # a checkout on PYTHONPATH, never installed
        return "unknown (not installed; pip install -e .)"
