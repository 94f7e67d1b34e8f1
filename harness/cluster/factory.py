"""One factory from a `TargetSpec` to a `Cluster`, and the side clusters some checks start beside it.

This is the only place that knows which class serves which kind of target.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.target import APACHE, COMMAND, DOCKER, EXTERNAL, KFAKE, LIBRDKAFKA_MOCK, TargetSpec
from harness.errors import FaultControlUnavailable


def _apache(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.local import LocalCluster, LocalClusterSpec

    assert target.version is not None
    spec = LocalClusterSpec(version=target.version, brokers=target.brokers, log_dir=log_dir)
    return LocalCluster(spec, target=target)


def _kfake(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.kfake import KfakeCluster

    return KfakeCluster(target)


def _librdkafka_mock(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.librdkafka_mock import LibrdkafkaMockCluster

    return LibrdkafkaMockCluster(target)


def _docker(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.docker import DockerCluster

    return DockerCluster(target, log_dir)


def _external(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.external import ExternalCluster

    return ExternalCluster(target)


def _command(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.command import CommandCluster

    return CommandCluster(target, log_dir)


BACKENDS: dict[str, Callable[[TargetSpec, Path | None], Cluster]] = {
    APACHE: _apache, KFAKE: _kfake, EXTERNAL: _external, COMMAND: _command, DOCKER: _docker,
    LIBRDKAFKA_MOCK: _librdkafka_mock,
}


def make_cluster(target: TargetSpec, log_dir: Path | None = None) -> Cluster:
    """The cluster that serves `target`, not started (use it as a context manager, or call start)."""
    return BACKENDS[target.kind](target, log_dir)


def prepare(target: TargetSpec) -> str:
    """Fetch or build what the target needs before any test (jars, binaries); one line saying what.

    Raises `SetupError` with the fix (an unknown version, no Java, an unreachable registry).
    """
    if target.kind == APACHE:
        from harness.kafka.dist import check_java, resolve

        assert target.version is not None
        check_java()
        dist = resolve(target.version)
        return f"Apache Kafka {dist.version} ({len(dist.jars)} jars, tools {dist.tools_version})"
    if target.kind == DOCKER:
        from harness import docker_engine
        from harness.cluster.docker import check_ports_free
        from harness.docker import images
        from harness.kafka.dist import check_java, resolve

        check_java()  # the Java clients, and any side cluster, run here
        if target.publish_from:
            check_ports_free({b: target.publish_from + b - 1 for b in range(1, target.brokers + 1)})
        client = docker_engine.client()
        if target.image:
            built = images.require(client, target.image)
        else:
            assert target.version is not None
            built = images.ensure_kafka(client, resolve(target.version))
        how = f"built in {built.seconds:.0f} s" if built.seconds else "reused"
        return f"Apache Kafka {target.version or ''} in containers from {built.tag} ({how})"
    if target.kind == KFAKE:
        from harness.cluster.kfake import ensure_binary

        return f"kfake at {ensure_binary()}"
    if target.kind == LIBRDKAFKA_MOCK:
        from harness.cluster.librdkafka_mock import prepare as prepare_mock

        return prepare_mock()
    if target.kind == COMMAND:
        from harness.cluster.command import prepare as prepare_command

        return prepare_command(target)
    return f"external target at {target.bootstrap}"


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
