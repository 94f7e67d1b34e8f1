"""The asserts that judge promises (harness.checks) are rewritten by pytest in every kcts session, so a
FAIL's reason reads the same in a serial run and in a sharded one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.layout import ROOT as REPO

LOADERS = '''
import importlib
import pkgutil

import harness.checks
from _pytest.assertion.rewrite import AssertionRewritingHook


def test_every_check_module_is_rewritten():
    names = [m.name for m in pkgutil.iter_modules(harness.checks.__path__, "harness.checks.")]
    plain = [n for n in names if not isinstance(importlib.import_module(n).__loader__, AssertionRewritingHook)]
    assert names and not plain, plain
'''


@pytest.mark.parametrize("where", ["elsewhere", "checkout"])
def test_the_checks_asserts_are_rewritten_however_pytest_finds_kcts(tmp_path: Path, where: str) -> None:
    """From the checkout, pytest finds kcts's distribution beside the current folder and would rewrite the
    harness package of its own accord; from any other folder (the `kcts` script's case) it would not.
    Both must rewrite harness.checks."""
    (tmp_path / "test_loaders.py").write_text(LOADERS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--reports-dir", str(tmp_path / "reports"),
         str(tmp_path / "test_loaders.py")],
        cwd=REPO if where == "checkout" else tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "PytestAssertRewriteWarning" not in done.stdout, done.stdout[-3000:]


HANDOVER = '''
import sys

import pytest

from harness import cli

seen = []
pytest.main = lambda args, plugins=None: seen.extend(m for m in sys.modules if m.startswith("harness.checks")) or 0
cli.main(["run", "--collect-only", "suites/smoke"])
print("imported:", sorted(seen))
'''


def test_kcts_run_imports_no_check_module_before_pytest_starts() -> None:
    """A module imported before pytest starts is never rewritten: one of harness.checks imported by
    `kcts run` itself (harness.verdicts imported client_reactions) judged with plain asserts under the
    `kcts` script and in a shard alike, and with pytest's explanation under a plain pytest."""
    done = subprocess.run([sys.executable, "-c", HANDOVER], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "imported: []" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
