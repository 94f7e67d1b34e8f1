"""The shape of the harness, guarded: layers import only downwards, nothing imports in a loop, every
package sits on one layer, and `suites/` holds tests and thin fixtures only.

The layers, lowest first (a module may import its own layer and those below):

    0  errors, waiting, closing, areas, layout (where the suites, fixtures and docker/ are: a checkout or the wheel)
    1  session, reaper, network,   the run's link rules, node cgroups and Docker labels (the reaper
       docker_engine               removes what carries them)
    2  process                     spawning, the child protocol, ports, the JVM command, the CDS archive
    3  kafka (Kafka's own jars), protocol, confluent (the closing confluent-kafka client factories: a leaf),
       histories                   what scenarios observed, typed, and its one JSON codec
    4  checks                      pure judgements of what a target answered; docker (images, containers)
    5  cluster                     the Cluster interface, the target model, the backends
    6  clients, nemesis, proxy
    7  workload, integrity
    8  scenarios                   situations built against a Cluster, returned as history records
    9  verdicts, reports, pytest_plugin (and plugin/, its modules), bench, cli
    10 fixtures
    11 suites

Every import counts, at module level or inside a function. For the floors, `if TYPE_CHECKING:` blocks
do not (they never run); for loops they do: a reader (and any tool drawing the import graph) sees
two modules that name each other as one tangle, whether or not the interpreter runs both imports.
This test is the guard for the next person: a new module gets a layer here.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import source_tree

REPO = Path(__file__).resolve().parents[2]
LAYERS: dict[str, int] = {
    "harness.errors": 0, "harness.waiting": 0, "harness.areas": 0, "harness.attach": 0, "harness.progress": 0,
    "harness.promises": 0, "harness.layout": 0, "harness.closing": 0, "harness.installed": 0,
    "harness.procfs": 0,
    "harness.session": 1, "harness.reaper": 1, "harness.network": 1, "harness.docker_engine": 1,
    "harness.process": 2,
    "harness.kafka": 3, "harness.protocol": 3, "harness.confluent": 3, "harness.histories": 3,
    "harness.checks": 4, "harness.containers": 4,
    "harness.cluster": 5,
    "harness.clients": 6, "harness.nemesis": 6, "harness.proxy": 6,
    "harness.proxy.rules": 6,  # the proxy's rule families, one a module, with the proxy
    "harness.workload": 7, "harness.integrity": 7,
    "harness.scenarios": 8,
    "harness.verdicts": 9, "harness.reporting": 9, "harness.pytest_plugin": 9, "harness.plugin": 9, "harness.bench": 9,
    "harness.cli": 9,
    "harness": 9,  # the package itself (its __init__) sits with the entry points
    "fixtures": 10,
    "conftest": 11, "suites": 11,
}
# What a suite may import, besides the standard library and pytest.
SUITE_IMPORTS = ("harness.scenarios", "harness.checks", "harness.histories", "harness.verdicts", "fixtures")
# Floors that must not know each other: a scenario never judges, a check never builds.
APART = {("harness.scenarios", "harness.checks"), ("harness.checks", "harness.scenarios")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    found = {module_name(p): p for d in ("harness", "fixtures", "suites") for p in (REPO / d).rglob("*.py")}
    found["conftest"] = REPO / "conftest.py"
    return found


MODULES = sources()


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, *, type_checking: bool = False) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import that can run, and with `type_checking` also those under
    `if TYPE_CHECKING:`; `from a import b` names `a.b` when it is a module."""
    tree = source_tree.tree(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST) -> Iterator[tuple[str, int]]:
        if isinstance(node, ast.If) and _type_checking_only(node) and not type_checking:
            for child in node.orelse:
                yield from visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full if full in MODULES else base), node.lineno
        for child in ast.iter_child_nodes(node):
            yield from visit(child)

    yield from visit(tree)


def layer_of(module: str) -> tuple[str, int] | None:
    """The longest layer prefix of `module`, and its layer; None for a module outside the project."""
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        prefix = ".".join(parts[:i])
        if prefix in LAYERS:
            return prefix, LAYERS[prefix]
    return None


@functools.cache
def graph() -> dict[str, list[tuple[str, int]]]:
    """Each module's imports inside the project, with their lines. Parsed on first use, not at import:
    every process of a sharded run collects this module, and only the one that runs it needs the graph."""
    return {name: [(m, line) for m, line in imports(name, path) if layer_of(m) is not None]
            for name, path in MODULES.items()}


def test_every_module_has_a_layer() -> None:
    missing = sorted(name for name in MODULES if layer_of(name) is None)
    assert not missing, f"modules with no layer in LAYERS (add them, at the floor they belong to): {missing}"


def test_no_module_imports_a_higher_layer() -> None:
    upward = []
    for name, edges in graph().items():
        own = layer_of(name)
        assert own is not None
        for target, line in edges:
            theirs = layer_of(target)
            assert theirs is not None
            if theirs[1] > own[1]:
                upward.append(f"{MODULES[name].relative_to(REPO)}:{line}: {name} (layer {own[1]}, {own[0]}) "
                              f"imports {target} (layer {theirs[1]}, {theirs[0]})")
            if (own[0], theirs[0]) in APART:
                upward.append(f"{MODULES[name].relative_to(REPO)}:{line}: {name} imports {target}: "
                              f"{own[0]} and {theirs[0]} are kept apart")
    assert not upward, "imports that run upwards:\n  " + "\n  ".join(upward)


# The project's root package: its modules and packages are the floors themselves, so it spans them all.
ROOTS = {"harness"}


def packages_on_two_floors(layers: dict[str, int]) -> list[str]:
    """Every entry of `layers` inside a package entry on another floor: a package is one floor, so a
    module that belongs lower moves out of it (into a package, or a module, of its own)."""
    return [
        f"{inner} (layer {layers[inner]}) inside {outer} (layer {layers[outer]})"
        for outer in layers if outer not in ROOTS
        for inner in layers if inner.startswith(outer + ".") and layers[inner] != layers[outer]
    ]


def test_every_package_sits_on_one_floor() -> None:
    split = packages_on_two_floors(LAYERS)
    assert not split, "packages on two floors (move the module out of the package):\n  " + "\n  ".join(split)


def test_a_package_on_two_floors_is_found() -> None:
    """The guard itself can fail: the split that harness.containers had is found, a package alone is not."""
    assert packages_on_two_floors({"harness": 9, "harness.containers": 4, "harness.containers.engine": 1}) == [
        "harness.containers.engine (layer 1) inside harness.containers (layer 4)"]
    assert packages_on_two_floors({"harness": 9, "harness.errors": 0, "harness.containers": 4}) == []


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: every component of more than one module, or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, [])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, []))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, []):
                    found.append(sorted(component))
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, list[str]]:
    """Module -> the project modules it names in any import, `if TYPE_CHECKING:` ones included."""
    return {
        name: sorted({t for t, _ in imports(name, path, type_checking=True) if t in modules and t != name})
        for name, path in modules.items()
    }


def test_no_import_loop() -> None:
    loops = strongly_connected(import_graph(MODULES))
    assert not loops, "modules that import each other in a loop: " + "; ".join(" <-> ".join(c) for c in loops)


def test_the_loop_finder_finds_a_loop() -> None:
    """The guard itself can fail: a two-module loop and a self-import are found, a chain is not."""
    assert strongly_connected({"a": ["b"], "b": ["a"], "c": ["a"]}) == [["a", "b"]]
    assert strongly_connected({"a": ["a"]}) == [["a"]]
    assert strongly_connected({"a": ["b"], "b": ["c"], "c": []}) == []


def test_an_import_only_for_type_checking_still_closes_a_loop(tmp_path: Path) -> None:
    """The loop that harness/proxy had (server imports the link, the link names the server under
    TYPE_CHECKING) is found."""
    server = tmp_path / "server.py"
    server.write_text("from pkg.link import Link\n")
    link = tmp_path / "link.py"
    link.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.server import Proxy\n")
    graph = import_graph({"pkg.server": server, "pkg.link": link})
    assert strongly_connected(graph) == [["pkg.link", "pkg.server"]]


SUITE_FILES = sorted(p for p in (REPO / "suites").rglob("*.py"))


def test_suites_hold_only_tests_conftests_and_packages() -> None:
    other = [str(p.relative_to(REPO)) for p in SUITE_FILES
             if not (p.name.startswith("test_") or p.name in ("conftest.py", "__init__.py"))]
    assert not other, f"modules in suites/ that are not tests (scenarios go to harness/scenarios): {other}"


@pytest.mark.parametrize("path", SUITE_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_suites_import_only_scenarios_checks_verdicts_and_fixtures(path: Path) -> None:
    name = module_name(path)
    stdlib = set(sys.stdlib_module_names) | {"__future__", "pytest"}
    wrong = []
    for target, line in imports(name, path):
        root = target.split(".")[0]
        if root in stdlib:
            continue
        if target.endswith("conftest") or ".conftest." in target:
            wrong.append(f"line {line}: {target} (a test never imports from a conftest)")
        elif not any(target == p or target.startswith(p + ".") for p in SUITE_IMPORTS):
            wrong.append(f"line {line}: {target}")
    assert not wrong, f"{path.relative_to(REPO)} imports beyond {SUITE_IMPORTS}:\n  " + "\n  ".join(wrong)


@pytest.mark.parametrize("path", [p for p in SUITE_FILES if p.name == "conftest.py"],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_suite_conftests_hold_fixtures_only(path: Path) -> None:
    """A conftest defines fixtures (and constants); a function or class of another kind is a scenario
    or a helper, and belongs to harness/scenarios."""
    tree = source_tree.tree(path)
    other = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            other.append(f"class {node.name}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if not any(d.startswith(("pytest.fixture", "fixture")) for d in decorators):
                other.append(f"def {node.name}")
    assert not other, f"{path.relative_to(REPO)} holds more than fixtures: {other}"


# Parsed command-line options, whose `--backend` the target model reads.
OPTION_NAMESPACES = {"o", "opt", "config.option"}


def test_only_the_cluster_package_knows_which_backend_it_holds() -> None:
    """Outside harness/cluster/, code asks a target's capabilities: no `isinstance(c, SomeCluster)`,
    no backend names compared, no reaching into a backend's own spec."""
    found = []
    for name, path in MODULES.items():
        if name.startswith("harness.cluster"):
            continue
        for node in source_tree.nodes(path):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
                kinds = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                if "Cluster" in kinds:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
            if (isinstance(node, ast.Attribute) and node.attr in ("backend", "has_fault_control", "client_version")
                    and ast.unparse(node.value) not in OPTION_NAMESPACES):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
            if isinstance(node, ast.Constant) and node.value == "4.4.0" and name != "harness.kafka.dist":
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: the default version written again "
                             "(use harness.kafka.dist.DEFAULT_VERSION)")
    assert not found, "backend knowledge outside harness/cluster/:\n  " + "\n  ".join(found)


def test_no_two_classes_of_the_harness_share_a_name() -> None:
    """A class name means one thing (docs/architecture.md, "One word per concept"): a word read in a
    history, a check or a report names one class, the client drivers' programs included."""
    where: dict[str, list[str]] = {}
    for path in sorted((REPO / "harness").rglob("*.py")):
        for node in source_tree.nodes(path):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert not twice, "class names defined more than once:\n  " + "\n  ".join(
        f"{name}: {', '.join(places)}" for name, places in sorted(twice.items()))
