"""A local Apache Kafka cluster of one release, started here (`--target 4.4.0`, `--backend local`): the
default kind. Served by harness/cluster/local.py (its BACKEND)."""

from __future__ import annotations

from typing import Any

from harness.cluster.model import REASSIGNMENT, BackendOptions, Capabilities, TargetKind, TargetSpec
from harness.kafka.dist import DEFAULT_VERSION, normalize_version


def release(text: str, **overrides: Any) -> TargetSpec:
    """A local cluster of the release `text` names (`4.4.0`, `4.0.x`); its Java clients default to it."""
    version = normalize_version(text)
    overrides.setdefault("java_clients", version)
    return TargetSpec(kind=KIND, version=version, **overrides)


def _from_backend(kind: TargetKind, options: BackendOptions) -> TargetSpec:
    # `--backend local` takes the release and the brokers; an address or security options are an
    # external target's.
    return release(options.kafka_version or DEFAULT_VERSION, brokers=options.brokers)


KIND = TargetKind(
    name="apache",
    spelling="`4.4.0`, `4.0.x`          a local Apache Kafka cluster of that version",
    capabilities=lambda spec: Capabilities(fault_control=True, node_logs=True, side_clusters=True, owned=True,
                                           leader_moves=REASSIGNMENT, replication=True, controller=True),
    run_args=lambda spec: ["--kafka-version", str(spec.version), "--brokers", str(spec.brokers)],
    parse_rest=release,
    default=True,
    backend="local",
    from_backend=_from_backend,
    profile_version=lambda version: normalize_version(version or DEFAULT_VERSION),
    apache_release=lambda spec: spec.version is not None,
)
