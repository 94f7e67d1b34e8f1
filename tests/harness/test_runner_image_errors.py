"""`kcts image --runner` without a Docker daemon: one clear line and exit 2, before any wheel is built
(the image itself is built and run by tests/packaging/test_runner_image.py, heavy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import cli
from harness.containers import runner


def test_no_docker_daemon_is_one_clear_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/docker.sock")
    monkeypatch.setattr(runner, "build_wheel", lambda out: pytest.fail("a wheel was built without a daemon"))
    assert cli.main(["image", "--runner"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kcts: error: no Docker daemon answers") and "scripts/bootstrap" in err, err
    assert len(err.splitlines()) == 1, err
