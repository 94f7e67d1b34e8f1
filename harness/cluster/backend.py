"""How one kind of target is served: `Backend`, the `BACKEND` beside each Cluster class (local.py serves
the kind `apache`, kfake.py `kfake`, ...). It sits above the Cluster interface, which the target
model (`harness.cluster.model`) sits below: a kind's `TargetKind` knows no cluster, its `Backend` does.
`harness.cluster.registry` lists every backend; `harness.cluster.target.target_from` finds a target's
once, as a `Served`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.model import TargetKind, TargetSpec


@dataclass(frozen=True)
class Backend:
    """The kind it serves, and how."""

    kind: TargetKind
    make: Callable[[TargetSpec, Path | None], Cluster]  # the cluster that serves a spec, not started
    # Fetch or build what the target needs before any test; one line saying what. Raises SetupError
    # with the fix. None: nothing to fetch or build (a cluster that is already running).
    prepare: Callable[[TargetSpec], str] | None
    # A one-broker cluster of its own kind with SASL/PLAIN and ACLs for the harness's users (the side
    # cluster's name given), for the checks that need one to judge this kind itself rather than Apache
    # Kafka; not started. None: a SASL side cluster is a local Apache Kafka one, where capabilities allow.
    sasl_side_cluster: Callable[[str], Cluster] | None = None


@dataclass(frozen=True)
class Served:
    """A target and the backend that serves it, found once (`harness.cluster.target.target_from`) and
    handed on: `kcts run` gives it to pytest, whose `cluster` fixture calls `make(log_dir)`, the
    backend's own make bound to the spec. `prepared` is what preparing it said, where it was."""

    spec: TargetSpec
    backend: Backend
    make: Callable[[Path | None], Cluster]  # the cluster that serves `spec`, not started
    prepared: str | None = None
