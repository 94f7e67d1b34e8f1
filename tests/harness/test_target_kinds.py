"""Adding a kind of target is its module in `harness.cluster.kinds`, the module that serves it (its
`BACKEND`) and one line in `harness.cluster.registry`: the target parser, the side clusters and the command
line find it there, nothing else names it, and nothing is imported by name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.cluster import registry, target
from harness.cluster.backend import Backend
from harness.cluster.model import Capabilities, Security, TargetKind, TargetSpec
from harness.cluster.registry import backends, kind_of, kinds, serve
from harness.cluster.target import from_options, parse, to_run_args
from tests.harness import source_tree
from tests.harness.test_layers import MODULES, REPO, imports

TOY = TargetKind(
    name="toy", spelling="`toy`  a toy broker",
    capabilities=lambda spec: Capabilities(fault_control=False, node_logs=False, side_clusters=False,
                                           owned=True, leader_moves=None, replication=False),
    run_args=lambda spec: ["--backend", "toy"], words=("toy",), backend="toy")
TOY_BACKEND = Backend(kind=TOY, make=lambda spec, log_dir: ("a toy cluster", spec),  # type: ignore[arg-type,return-value]
                      prepare=lambda spec: "toy ready")


@pytest.fixture
def toy_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy kind's one line in the registry."""
    monkeypatch.setattr(registry, "BACKENDS", (*registry.BACKENDS, TOY_BACKEND))


def test_every_kind_has_its_backend() -> None:
    found = kinds()
    assert set(found) == {"apache", "command", "docker", "external", "kfake", "librdkafka-mock", "operated"}
    assert [k for k in found.values() if k.default] == [kind_of("apache")]
    for name, kind in found.items():
        spec = TargetSpec(kind=kind, version=None if name != "apache" else "4.4.0",
                          bootstrap="127.0.0.1:9092" if name in ("external", "operated") else None,
                          image="i" if name == "docker" else None,
                          profile=Path("op.toml") if name == "operated" else None)
        assert serve(spec).backend.kind is kind, name


def test_a_new_kind_is_one_module_and_one_line(toy_kind: None) -> None:
    spec = parse("toy")
    assert (spec.kind, spec.label, spec.capabilities.owned) == (TOY, "toy", True)
    assert "toy" in backends()
    assert from_options("toy", None, 3, None, Security(), None) == spec
    assert to_run_args(spec) == ["--backend", "toy", "--java-clients", spec.java_clients]
    toy = serve(spec, prepare=True)
    assert toy.make(None) == ("a toy cluster", spec)  # type: ignore[comparison-overlap]
    assert (toy.spec, toy.prepared) == (spec, "toy ready")
    assert "`toy`  a toy broker" in registry.spellings()


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(Exception, match="unknown target kind 'nope'; use one of apache, command, docker"):
        kind_of("nope")


def test_a_spec_carries_its_kind_not_a_name() -> None:
    """The model asks the kind itself; a name is read into a kind only where text comes in."""
    with pytest.raises(TypeError, match=r"TargetSpec\.kind is a TargetKind"):
        TargetSpec(kind="kfake", version=None)  # type: ignore[arg-type]
    assert str(kind_of("kfake")) == "kfake" and parse("kfake").environment()["target_kind"] == "kfake"


def test_no_module_outside_the_kinds_names_a_kind_s_backend_class() -> None:
    """The target parser, the registry and the side clusters reach backends only through the kinds' BACKENDs."""
    here = Path(target.__file__).parent
    for name in ("target.py", "side.py", "registry.py"):
        text = (here / name).read_text()
        for backend_class in ("LocalCluster(", "KfakeCluster(", "LibrdkafkaMockCluster(", "DockerCluster(",
                              "ExternalCluster(", "CommandCluster("):
            if name == "side.py" and backend_class == "LocalCluster(":
                continue  # a side cluster is an Apache Kafka one beside any target whose capabilities allow it
            assert backend_class not in text, f"{name} names {backend_class}"


def _cluster_imports(module: str) -> set[str]:
    return {m for m, _ in imports(module, MODULES[module], type_checking=True) if m.startswith("harness.cluster")}


KIND_MODULES = sorted(m for m in MODULES if m.startswith("harness.cluster.kinds."))
# The module that serves each kind: the one other module that names its KIND.
SERVING = {f"harness.cluster.kinds.{b.kind.name.replace('-', '_')}": b.make.__module__ for b in registry.BACKENDS}


def test_the_model_sits_below_the_kinds_and_the_kinds_import_only_the_model() -> None:
    assert _cluster_imports("harness.cluster.model") == set()
    for module in KIND_MODULES:
        assert _cluster_imports(module) <= {"harness.cluster.model"}, module


def test_every_kind_module_is_in_the_registry_and_only_its_server_names_it() -> None:
    assert set(SERVING) == set(KIND_MODULES)
    # bench/startup times Apache Kafka in containers, the docker kind's own: it reads the docker word.
    allowed = {"harness.cluster.kinds.docker": {"harness.bench.startup"}}
    for module in MODULES:
        for kind_module in _cluster_imports(module) & set(KIND_MODULES):
            if module not in {SERVING[kind_module], *allowed.get(kind_module, ())}:
                pytest.fail(f"{module} imports {kind_module}: only {SERVING[kind_module]} serves that kind")


def test_nothing_compares_a_target_s_kind() -> None:
    """Outside the kinds, code asks the kind's fields or the spec's capabilities, never which kind it is."""
    found = []
    for name, path in MODULES.items():
        if name == "harness.cluster.registry":
            continue  # finding a kind is its one job
        for node in source_tree.nodes(path):
            if isinstance(node, ast.Compare):
                sides = [ast.unparse(n) for n in (node.left, *node.comparators)]
                if any(s.endswith(".kind") or s.endswith(".kind.name") for s in sides):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "kind comparisons:\n  " + "\n  ".join(found)


def test_the_plugin_takes_the_target_kcts_run_parsed_and_does_not_parse_again() -> None:
    """`kcts run` parses and prepares once and hands the result over (harness/cli.py `_Handover`); the
    plugin keeps that one: its options (None here) are never read."""
    from types import SimpleNamespace

    from harness.cli import _Handover
    from harness.plugin.target import served_target

    given = serve(parse("kfake"))
    config = SimpleNamespace(stash=pytest.Stash(), option=None,
                             pluginmanager=SimpleNamespace(get_plugins=lambda: {object(), _Handover(given)}))
    assert served_target(config) is given  # type: ignore[arg-type]
