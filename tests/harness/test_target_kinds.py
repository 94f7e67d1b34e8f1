"""Adding a kind of target is adding one module to `harness.cluster.kinds`: the target model, the
factory and the command line find it there, and nothing else names it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cluster import factory, kinds, target
from harness.cluster.target import TargetSpec, backends, kind_of, parse, to_run_args

TOY = '''
from harness.cluster.factory import Backend
from harness.cluster.target import Capabilities, TargetKind

KIND = TargetKind(
    name="toy", spelling="`toy`  a toy broker",
    capabilities=lambda spec: Capabilities(fault_control=False, node_logs=False, side_clusters=False,
                                           owned=True, leader_moves=None, replication=False),
    run_args=lambda spec: ["--backend", "toy"], words=("toy",), backend="toy")
BACKEND = Backend(make=lambda spec, log_dir: ("a toy cluster", spec), prepare=lambda spec: "toy ready")
'''


@pytest.fixture
def toy_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "toy.py").write_text(TOY)
    monkeypatch.setattr(kinds, "__path__", [*kinds.__path__, str(tmp_path)])
    target.kinds.cache_clear()
    yield
    target.kinds.cache_clear()


def test_every_kind_module_defines_its_kind_and_its_backend() -> None:
    found = target.kinds()
    assert set(found) == {"apache", "command", "docker", "external", "kfake", "librdkafka-mock"}
    for name in found:
        spec = TargetSpec(kind=name, version=None if name != "apache" else "4.4.0",
                          bootstrap="127.0.0.1:9092" if name == "external" else None,
                          image="i" if name == "docker" else None)
        assert factory.backend(spec).make and factory.backend(spec).prepare, name


def test_a_new_kind_is_one_module(toy_kind: None) -> None:
    spec = parse("toy")
    assert (spec.kind, spec.label, spec.capabilities.owned) == ("toy", "toy", True)
    assert "toy" in backends()
    assert to_run_args(spec) == ["--backend", "toy", "--java-clients", spec.java_clients]
    assert factory.make_cluster(spec) == ("a toy cluster", spec)  # type: ignore[comparison-overlap]
    assert factory.prepare(spec) == "toy ready"
    assert "`toy`  a toy broker" in target.spellings()


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(Exception, match="unknown target kind 'nope'; use one of apache, command, docker"):
        kind_of("nope")


def test_no_module_outside_the_kinds_names_a_kind_s_backend_class() -> None:
    """The target model, the factory and the command line reach backends only through the kinds."""
    here = Path(target.__file__).parent
    for name in ("target.py", "factory.py"):
        text = (here / name).read_text()
        for backend_class in ("LocalCluster(", "KfakeCluster(", "LibrdkafkaMockCluster(", "DockerCluster(",
                              "ExternalCluster(", "CommandCluster("):
            if name == "factory.py" and backend_class in ("LocalCluster(", "KfakeCluster("):
                continue  # side clusters: an Apache one beside any target, a SASL kfake beside kfake
            assert backend_class not in text, f"{name} names {backend_class}"
