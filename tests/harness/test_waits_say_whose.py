"""Every wait says whose its outcome is (harness.waiting.Owed), because a passed deadline means a
different verdict for each: the harness's own step is its ERROR, the target's part in a scene is
"target refused the premise", and what a promise owes is that promise's FAIL. Left to the default, a
wait on the target would end as the harness's ERROR; so every `wait_until` passes `owed=` itself,
except in the harness's own infrastructure (processes, containers, the clusters it starts, the Spark
checker), where every wait is on the harness's own step.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from harness.promises import catalogue
from tests.harness import source_tree

REPO = Path(__file__).resolve().parents[2]
WALKED = ("harness", "suites", "fixtures")
INFRASTRUCTURE = ("harness/process/", "harness/containers/", "harness/cluster/", "harness/integrity/")


def waits() -> Iterator[tuple[str, ast.Call]]:
    """(path from the repository's root, call) of every `wait_until(...)` or `waiting.wait_until(...)`."""
    for top in WALKED:
        for path in sorted((REPO / top).rglob("*.py")):
            where = path.relative_to(REPO).as_posix()
            for node in source_tree.nodes(path):
                if isinstance(node, ast.Call) and _name(node.func) == "wait_until":
                    yield where, node


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def test_the_walk_finds_the_waits() -> None:
    found = list(waits())
    assert len(found) > 40, f"only {len(found)} waits found: the walk no longer sees them"
    assert any(where.startswith(INFRASTRUCTURE) for where, _ in found)


def test_every_wait_outside_the_harness_infrastructure_says_whose_it_is() -> None:
    unsaid = [(where, call.lineno) for where, call in waits()
              if not where.startswith(INFRASTRUCTURE) and _keyword(call, "owed") is None]
    missing = [f"{where}:{line}" for where, line in unsaid]
    assert not missing, (
        "a wait_until that does not say whose its outcome is; pass owed=Owed.HARNESS (the harness's own step), "
        "Owed.PREMISE (the target's part in the scene) or Owed.PROMISE with promise=<id> (what a promise owes): "
        + ", ".join(missing))


def test_a_waits_promise_is_one_of_the_catalogue() -> None:
    known = catalogue()
    unknown = []
    for where, call in waits():
        promise = _keyword(call, "promise")
        if promise is not None and isinstance(promise.value, ast.Constant) and promise.value.value:
            if promise.value.value not in known:
                unknown.append(f"{where}:{call.lineno} {promise.value.value!r}")
    assert not unknown, f"promise ids that harness/promises.toml does not hold: {unknown}"
