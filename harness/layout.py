"""Where kcts finds what is not Python of `harness`: the suites, the fixtures, the root conftest and docker/.

A checkout keeps them beside harness/ (conftest.py, suites/, fixtures/, docker/ at the repository root).
The wheel keeps the same tree one level down, in a `kcts_suite/` directory beside harness/ in
site-packages (setup.py maps the repository root to it). kcts_suite has no __init__.py on purpose:
pytest then treats kcts_suite/conftest.py as a root conftest, puts kcts_suite/ on sys.path and
imports `suites.*` and `fixtures.*` from it, so node ids ("suites/kip320/test_x.py::test_y") and
imports are the same in both.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import KctsError

_BESIDE = Path(__file__).resolve().parent.parent  # the checkout's root, or site-packages


def _is_suite_root(path: Path) -> bool:
    return (path / "conftest.py").is_file() and (path / "suites").is_dir()


# The checkout (an editable install included) wins: a wheel's kcts_suite/ is never beside a checkout's harness/.
ROOT = _BESIDE if _is_suite_root(_BESIDE) else _BESIDE / "kcts_suite"
CHECKOUT: Path | None = _BESIDE if ROOT == _BESIDE and (_BESIDE / "pyproject.toml").is_file() else None
DOCKER = ROOT / "docker"


def suites() -> Path:
    """The suites folder, or an error naming the fix when this kcts was installed without it."""
    if not _is_suite_root(ROOT):
        raise KctsError(f"no suites/ and conftest.py at {ROOT}: this kcts was installed without its suites; "
                        "reinstall it from its wheel (pip install --force-reinstall kcts-*.whl) or run it from a "
                        "checkout (pip install -e .)")
    return ROOT / "suites"


def suite_path(arg: str) -> str:
    """A `suites/...` path of the command line as pytest must see it: as given when it names a file or
    folder of the current directory, else the same path in the suite root (an installed kcts, run
    from anywhere, still takes the README's `kcts run suites/smoke`)."""
    head = arg.split("::")[0]
    if not head.startswith("suites/") or Path(head).exists() or not (ROOT / head).exists():
        return arg
    return str(ROOT / arg)
