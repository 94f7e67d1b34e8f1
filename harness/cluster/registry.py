"""Every kind of target kcts knows, in one static list: the one way a kind is found (`kinds`, which
harness/cluster/target.py reads `--target` and `--backend` words against; `kind_of` by its name;
the default), and the one way its backend is (`backend_of`; `serve`: a spec with its backend, as a
run hands it on).

Each line is the `BACKEND` of the module that serves a kind, which names the `KIND` of its module in
`harness.cluster.kinds` (the model's word on it). Adding a kind is its module there, the Cluster
class that serves it with its `BACKEND`, and one line here. Nothing imports by name: the import graph
is the whole story (`tests/harness/test_layers.py`).
"""

from __future__ import annotations

from functools import partial

from harness.cluster import command, docker, external, kfake, librdkafka_mock, local, operated
from harness.cluster.backend import Backend, Served
from harness.cluster.model import TargetKind, TargetSpec
from harness.errors import KctsError

# In the order `--target`'s help lists them and `parse` tries their words and prefixes.
BACKENDS: tuple[Backend, ...] = (
    local.BACKEND,  # apache: a local Apache Kafka cluster
    command.BACKEND,
    docker.BACKEND,
    external.BACKEND,
    operated.BACKEND,  # an external cluster under the operator's own commands
    kfake.BACKEND,
    librdkafka_mock.BACKEND,
)


def kinds() -> dict[str, TargetKind]:
    """Every kind, by name."""
    found: dict[str, TargetKind] = {}
    for backend in BACKENDS:
        if backend.kind.name in found:
            raise KctsError(f"two backends serve the target kind {backend.kind.name!r}")
        found[backend.kind.name] = backend.kind
    return found


def kind_of(name: str) -> TargetKind:
    """The kind a profile's `kind` or a report's `target_kind` names."""
    try:
        return kinds()[name]
    except KeyError:
        raise KctsError(f"unknown target kind {name!r}; use one of {', '.join(kinds())}") from None


def default_kind() -> TargetKind:
    """The kind a bare version names (`--target 4.4.0`), a profile without `kind`, `--backend`'s default."""
    found = [kind for kind in kinds().values() if kind.default]
    if len(found) != 1:
        raise KctsError(f"one target kind is the default (TargetKind.default), not {len(found)}")
    return found[0]


def backends() -> tuple[str, ...]:
    """The `--backend` choices, each kind's word (`local` is a cluster of Apache Kafka started here)."""
    return tuple(kind.backend for kind in kinds().values() if kind.backend)


def backend_of(kind: TargetKind) -> Backend:
    """How a kind is served."""
    for backend in BACKENDS:
        if backend.kind is kind:
            return backend
    raise KctsError(f"no backend serves the target kind {kind.name!r}")


def serve(spec: TargetSpec, *, prepare: bool = False) -> Served:
    """`spec` with its kind's backend, and that backend's make bound to it; prepared first if asked
    (a `SetupError` names the fix)."""
    backend = backend_of(spec.kind)
    said = None
    if prepare:
        said = backend.prepare(spec) if backend.prepare else f"{spec.label}: nothing to fetch or build"
    return Served(spec, backend, partial(backend.make, spec), said)


def spellings() -> str:
    """How `--target` names each kind of target, a line each (for help texts and errors)."""
    return "\n".join(f"  {kind.spelling}" for kind in kinds().values())
