"""The side clusters some checks start beside the target: a one-broker Apache Kafka cluster (another
release, SASL with ACLs, finalized features), or the target kind's own SASL cluster where its backend
has one (`Backend.sasl_side_cluster`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.local import LocalCluster, LocalClusterSpec, SaslConfig
from harness.cluster.registry import backend_of
from harness.errors import FaultControlUnavailable


@contextmanager
def side_cluster(
    beside: Cluster, name: str, log_dir: Path | None, *, version: str | None = None, sasl: bool = False,
    features: dict[str, int] | None = None,
) -> Iterator[Cluster]:
    """A started one-broker Apache Kafka cluster beside the target (default: of the target's
    version), with SASL/PLAIN and the StandardAuthorizer or finalized features if asked; closed
    on exit. A target whose capabilities do not allow it raises `FaultControlUnavailable`.

    Where the target's backend has a SASL side cluster of its own kind (kfake: a one-broker kfake with
    SASL/PLAIN and ACLs, the same users), a SASL side cluster is that one, so that the checks that need
    one judge the target's kind itself."""
    own = backend_of(beside.target.kind).sasl_side_cluster
    if own is not None and sasl and version is None and not features:
        with own(name) as cluster:
            yield cluster
        return
    if not beside.capabilities.side_clusters:
        raise FaultControlUnavailable(
            beside.target.label, f"a local Apache Kafka {name} cluster beside the target, and judges that cluster "
            "and the Java client rather than the target; it runs where the target is Apache Kafka")
    spec = LocalClusterSpec(
        version=version or beside.version, brokers=1, log_dir=log_dir, features=features or {},
        sasl=SaslConfig() if sasl else None,
    )
    with LocalCluster(spec) as local:
        yield local
