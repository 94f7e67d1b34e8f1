"""The docker backend on a real engine: its images, its node control and partitions, its clean-up,
and one clear error for each bad input."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness import confluent, docker_engine
from harness.clients.admin import create_topic
from harness.cluster import probe
from harness.cluster.base import NodeState
from harness.cluster.docker import DockerCluster, to_env
from harness.cluster.kinds.docker import docker_target
from harness.containers import images
from harness.errors import SetupError
from harness.kafka.dist import DEFAULT_VERSION, resolve
from harness.waiting import wait_until
from tests.harness.test_no_leaks import start_holder

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.docker, pytest.mark.live]


@pytest.fixture(scope="module")
def docker_client() -> object:
    try:
        return docker_engine.client()
    except SetupError as exc:
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="module")
def kafka_image(docker_client: object) -> str:
    return images.ensure_kafka(docker_client, resolve(DEFAULT_VERSION)).tag  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def docker_cluster(kafka_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DockerCluster]:
    with DockerCluster(docker_target(DEFAULT_VERSION, None), tmp_path_factory.mktemp("docker-logs")) as c:
        yield c  # type: ignore[misc]


def kcts(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`kcts run` as a user runs it; bad input must end within `timeout` seconds."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})
    assert time.monotonic() - t0 < timeout
    return proc


def one_clear_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"exit 0 on bad input:\n{out[-3000:]}"
    assert "Traceback" not in out, f"a stack trace instead of one clear error:\n{out[-3000:]}"
    for needle in needles:
        assert needle in out, f"{needle!r} is not in the error:\n{out[-3000:]}"


# -- images --------------------------------------------------------------------------------------
def test_entrypoint_reads_the_apache_kafka_environment_convention(docker_client: object, kafka_image: str) -> None:
    """The image turns KAFKA_<NAME> into a property as apache/kafka does: '_' is '.', '__' is '-',
    '___' is '_'; the JVM option variables are not properties."""
    props = {
        **DockerCluster(docker_target(DEFAULT_VERSION, None)).broker_props(1),
        "listener.name.client.scram-sha-256.sasl.jaas.config": "x required;",
        "some_underscored.name": "1",
    }
    env = {**to_env(props), "KAFKA_HEAP_OPTS": "-Xmx1g", "CLUSTER_ID": "x"}
    out = docker_client.containers.run(  # type: ignore[attr-defined]
        kafka_image, ["--print-config"], environment=env, remove=True, labels=docker_engine.labels("test")).decode()
    printed = dict(line.split("=", 1) for line in out.splitlines() if line)
    assert printed == {k: str(v) for k, v in props.items()}, f"properties the entry point wrote:\n{out}"


def test_images_are_tagged_by_version_and_content_and_reused(docker_client: object, kafka_image: str) -> None:
    """A second request builds nothing: the tag carries the content hash, and the bare version tag
    (what docker/compose.yaml names) points at the same image."""
    again = images.ensure_kafka(docker_client, resolve(DEFAULT_VERSION))  # type: ignore[arg-type]
    assert again.tag == kafka_image and again.seconds == 0.0
    assert kafka_image.startswith(f"{images.KAFKA_REPO}:{DEFAULT_VERSION}-")
    bare = docker_client.images.get(f"{images.KAFKA_REPO}:{DEFAULT_VERSION}")  # type: ignore[attr-defined]
    assert bare.id == docker_client.images.get(kafka_image).id  # type: ignore[attr-defined]


def test_compose_file_runs_the_docker_backends_settings() -> None:
    """docker/compose.yaml, for users without kcts, configures every node as the backend does."""
    compose = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())
    cluster = DockerCluster(docker_target(DEFAULT_VERSION, None, publish_from=19092))
    services = compose["services"]
    jvm = {k: v for k, v in services["controller"]["environment"].items() if not k.startswith("KAFKA_") or
           k in ("KAFKA_HEAP_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_OPTS")}
    from harness.cluster.docker import jvm_env

    assert {k: v for k, v in jvm.items() if k != "CLUSTER_ID"} == jvm_env()

    def props(name: str) -> dict[str, str]:
        return {k: str(v) for k, v in services[name]["environment"].items() if k not in jvm}

    assert props("controller") == to_env(cluster.controller_props())
    for b in cluster.broker_ids:
        assert props(f"broker-{b}") == to_env(cluster.broker_props(b)), f"broker-{b}"
        assert services[f"broker-{b}"]["ports"] == [f"127.0.0.1:{cluster.ports[b]}:9092"]


# -- one cluster ---------------------------------------------------------------------------------
def test_brokers_are_published_on_loopback_only_and_talk_on_the_runs_network(docker_cluster: DockerCluster) -> None:
    """Clients reach each broker on 127.0.0.1 only; nodes share one user-defined network with the
    session's label, and nothing else."""
    assert docker_cluster.network is not None
    for node in [docker_cluster.controller, *docker_cluster.nodes.values()]:
        assert node is not None
        attrs = node.container.attrs
        bindings = [b for port in (attrs["HostConfig"]["PortBindings"] or {}).values() for b in port]
        assert all(b["HostIp"] == "127.0.0.1" for b in bindings), f"{node.name} publishes {bindings}"
        assert list(attrs["NetworkSettings"]["Networks"]) == [docker_cluster.network.name]
        assert attrs["Config"]["Labels"][docker_engine.SESSION_LABEL]
    assert docker_cluster.controller is not None and not docker_cluster.controller.published
    md = probe.metadata("127.0.0.1", docker_cluster.ports[1], [])
    assert set(md.broker_ids) == set(docker_cluster.broker_ids)


def test_node_control_kills_pauses_and_restarts_a_broker(docker_cluster: DockerCluster) -> None:
    """kill: the container is gone from the running set; pause: it is frozen and answers nothing;
    start: it is registered and unfenced again."""
    c = docker_cluster
    c.kill_node(2)
    assert c.node_state(2) is NodeState.STOPPED
    c.start_node(2)
    assert c.node_state(2) is NodeState.RUNNING
    c.pause_node(3)
    try:
        assert c.node_state(3) is NodeState.PAUSED
        with pytest.raises(OSError):
            probe.metadata("127.0.0.1", c.ports[3], [], timeout=2)
    finally:
        c.resume_node(3)
    # Frozen for the 2 s probe and the engine's calls, on a loaded machine past broker.session.timeout.ms
    # (3 s), it may have been fenced: then it lists itself once a heartbeat unfences it, not at the thaw.
    listed: list[tuple[int, ...]] = []

    def lists_every_broker() -> bool:
        listed.append(probe.metadata("127.0.0.1", c.ports[3], [], timeout=5).broker_ids)
        return set(listed[-1]) == {1, 2, 3}

    wait_until(lists_every_broker, 60, lambda: f"broker 3's Metadata after its resume listed {listed[-1:]}")


def test_an_isolated_leader_loses_the_lead_and_rejoins_the_isr_when_healed(docker_cluster: DockerCluster) -> None:
    """Disconnecting the leader from the network fences it (a new leader at a higher epoch); once
    reconnected it follows again and the ISR is whole."""
    c = docker_cluster
    topic = f"isolate-{os.getpid()}-{time.monotonic_ns()}"
    with confluent.admin(c.client_config()) as admin:
        create_topic(c, admin, topic, partitions=1, replication_factor=3)
    before = c.state.wait_for_isr(topic, 0, {1, 2, 3})
    c.isolate_node(before.leader)
    try:
        after = c.state.wait_for_partition(topic, 0, lambda s: s.leader not in (before.leader, -1)
                                           and s.leader_epoch > before.leader_epoch, "a new leader at a higher epoch")
        assert after.leader != before.leader
    finally:
        c.heal_node(before.leader)
    c.state.wait_for_isr(topic, 0, {1, 2, 3}, timeout=60)


# -- clean-up ------------------------------------------------------------------------------------
def test_sigkill_of_the_runner_leaves_no_container_network_or_volume(
        docker_client: object, kafka_image: str, tmp_path: Path) -> None:
    """kill -9 of a pytest holding a docker cluster: within 15 s nothing with its session's label
    is left in the engine (the session reaper)."""
    proc, info = start_holder(tmp_path, "--backend", "docker")
    label = f"{docker_engine.SESSION_LABEL}={info['session']}"
    assert docker_engine.leftovers(docker_client, label), "the holder's containers were not there"  # type: ignore[arg-type]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    wait_until(lambda: not docker_engine.leftovers(docker_client, label), 15,  # type: ignore[arg-type]
               lambda: f"left in the engine: {docker_engine.leftovers(docker_client, label)}")  # type: ignore[arg-type]


# -- bad input -----------------------------------------------------------------------------------
def test_no_docker_daemon_is_one_clear_error() -> None:
    proc = kcts("--backend", "docker", "suites/smoke", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    one_clear_error(proc, "no Docker daemon")


def test_no_permission_on_the_docker_socket_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A socket closed to this user (root, as the gate runs, is never refused: the refusal is simulated)."""
    sock = tmp_path / "docker.sock"
    sock.touch()
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setattr(docker_engine, "SOCKET", sock)
    monkeypatch.setattr(docker_engine.os, "access", lambda path, mode: False)
    with pytest.raises(SetupError, match=r"no permission on .*docker\.sock: run kcts as root, or add this user to the "
                       r"docker group"):
        docker_engine.client()


def test_an_image_that_does_not_exist_is_one_clear_error(docker_client: object) -> None:
    # A registry on loopback that is not there: the pull fails at once, and nothing leaves this machine.
    proc = kcts("--backend", "docker", "--image", "127.0.0.1:9/kcts/no-such-image:1.0", "suites/smoke")
    one_clear_error(proc, "127.0.0.1:9/kcts/no-such-image:1.0", "could not be pulled")


def test_a_container_that_exits_at_once_is_one_error_with_its_logs(docker_client: object, tmp_path: Path) -> None:
    base = images.ensure_base(docker_client).tag  # type: ignore[arg-type]
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base}\nENTRYPOINT [\"sh\", \"-c\", \"echo kcts-test: this broker refuses to start >&2; exit 3\"]\n")
    tag = "kcts/test-exits-at-once:1"
    docker_client.images.build(path=str(tmp_path), tag=tag, rm=True, labels=docker_engine.labels("test"))  # type: ignore[attr-defined]
    proc = kcts("--backend", "docker", "--kafka-version", DEFAULT_VERSION, "--image", tag, "suites/smoke")
    one_clear_error(proc, "exited with code 3", "kcts-test: this broker refuses to start")


def test_a_host_port_already_taken_is_one_clear_error() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        # Broker 1 on the held port: a neighbouring port may be anyone's (the gate runs two envs at once).
        proc = kcts("--backend", "docker", "--publish-from", str(port), "suites/smoke")
    one_clear_error(proc, f"broker 1 is to be published on 127.0.0.1:{port}", "already taken")


def test_the_kfake_binary_runs_from_its_image(docker_client: object) -> None:
    """docker/kfake/Dockerfile: the binary kcts builds, on the offline base, runs in a container."""
    from harness.cluster.kfake import ensure_binary

    built = images.ensure_binary(docker_client, "kfake", "local", ensure_binary())  # type: ignore[arg-type]
    container = docker_client.containers.run(  # type: ignore[attr-defined]
        built.tag, ["-h"], detach=True, labels=docker_engine.labels("test"))
    try:
        container.wait(timeout=30)
        out = container.logs().decode()
    finally:
        container.remove(force=True)
    assert "-brokers" in out, f"kcts-kfake -h in {built.tag} printed:\n{out}"


def test_a_failed_image_build_is_one_clear_error_with_the_builds_output(
        docker_client: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Dockerfile whose step fails: a SetupError naming the image and carrying the build's own words."""
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "Dockerfile").write_text(
        "ARG BASE\nFROM ${BASE}\nARG BINARY\nCOPY ${BINARY} /x\n"
        "RUN echo kcts-test: this step fails on purpose && false\n")
    binary = tmp_path / "binary"
    binary.write_text("#!/bin/sh\n")
    (tmp_path / "base").symlink_to(images.DOCKER_DIR / "base")  # the real base image, as it is
    monkeypatch.setattr(images, "DOCKER_DIR", tmp_path)
    with pytest.raises(SetupError) as raised:
        images.ensure_binary(docker_client, "broken", "1", binary)  # type: ignore[arg-type]
    text = str(raised.value)
    assert "building the image kcts/broken:1-" in text and "kcts-test: this step fails on purpose" in text, text
    assert "Traceback" not in text
