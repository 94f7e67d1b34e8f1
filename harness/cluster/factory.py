"""One factory from a `TargetSpec` to a `Cluster`, and the side clusters some checks start beside it.

Which class serves which kind of target is each kind's module's word (`harness.cluster.kinds`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.target import KFAKE, KINDS_PACKAGE, TargetSpec, kind_of
from harness.errors import FaultControlUnavailable


@dataclass(frozen=True)
class Backend:
    """How one kind of target is served (`BACKEND` of its module in `harness.cluster.kinds`)."""

    make: Callable[[TargetSpec, Path | None], Cluster]  # the cluster that serves a spec, not started
    # Fetch or build what the target needs before any test; one line saying what. Raises SetupError
    # with the fix.
    prepare: Callable[[TargetSpec], str]


def backend(target: TargetSpec) -> Backend:
    """The backend of the target's kind (its module is imported by name: it imports this one)."""
    module = importlib.import_module(f"{KINDS_PACKAGE}.{kind_of(target.kind).name.replace('-', '_')}")
    found = getattr(module, "BACKEND", None)
    if not isinstance(found, Backend):
        raise TypeError(f"{module.__name__} defines no BACKEND (a harness.cluster.factory.Backend)")
    return found


def make_cluster(target: TargetSpec, log_dir: Path | None = None) -> Cluster:
    """The cluster that serves `target`, not started (use it as a context manager, or call start)."""
    return backend(target).make(target, log_dir)


def prepare(target: TargetSpec) -> str:
    """Fetch or build what the target needs before any test (jars, binaries); one line saying what.

    Raises `SetupError` with the fix (an unknown version, no Java, an unreachable registry).
    """
    return backend(target).prepare(target)


@contextmanager
def side_cluster(
    beside: Cluster, name: str, log_dir: Path | None, *, version: str | None = None, sasl: bool = False,
    features: dict[str, int] | None = None,
) -> Iterator[Cluster]:
    """A started one-broker Apache Kafka cluster beside the target (default: of the target's
    version), with SASL/PLAIN and the StandardAuthorizer or finalized features if asked; closed
    on exit. A target whose capabilities do not allow it raises `FaultControlUnavailable`.

    Beside kfake, a SASL side cluster is a one-broker kfake with SASL/PLAIN and ACLs (the same
    users), so that the checks that need one judge kfake itself."""
    if beside.target.kind == KFAKE and sasl and version is None and not features:
        from harness.cluster.kfake import KfakeCluster
        from harness.cluster.local import SaslConfig

        with KfakeCluster(TargetSpec(kind=KFAKE, version=None, brokers=1, name=f"kfake-{name}"),
                          sasl=SaslConfig()) as kfake:
            yield kfake
        return
    if not beside.capabilities.side_clusters:
        raise FaultControlUnavailable(
            beside.target.label, f"a local Apache Kafka {name} cluster beside the target, and judges that cluster "
            "and the Java client rather than the target; it runs where the target is Apache Kafka")
    from harness.cluster.local import LocalCluster, LocalClusterSpec, SaslConfig

    spec = LocalClusterSpec(
        version=version or beside.version, brokers=1, log_dir=log_dir, features=features or {},
        sasl=SaslConfig() if sasl else None,
    )
    with LocalCluster(spec) as cluster:
        yield cluster
