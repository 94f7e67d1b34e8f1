"""Container nodes of command targets, without Docker: `[node] image` parses and is checked, and each
node's command renders with the addresses a container needs (harness.cluster.command_containers).
The containers themselves are tests/harness/test_tansu_docker.py's."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import pytest

from harness.cluster.command import CommandCluster, ImageSpec, load_profile, prepare
from harness.cluster.command_containers import ContainerCommandNode
from harness.cluster.services import PostgresService
from harness.cluster.target import from_profile, parse
from harness.containers.network import ClusterNetwork
from harness.errors import ClusterError, SetupError
from tests.harness.test_command_backend import write_profile
from tests.harness.test_tansu_docker import client  # noqa: F401 - the fixture that skips when no Docker engine answers

pytestmark = pytest.mark.timeout(30)

BROKER = ["broker", "--listen", "{listen_host}:{container_port}", "--advertise", "{host}:{port}",
          "--storage", "{postgres_url}", "--id", "{node_id}"]
POSTGRES = {"kind": "postgres", "database": "fake"}


def image_profile(tmp_path: Path, **node: object) -> Path:
    table: dict[str, object] = {"image": {"dockerfile": "fake", "binary": "{root}/bin/fake"}, "command": BROKER,
                                **node}
    return write_profile(tmp_path, brokers=2, service=[POSTGRES], node=table)


def test_an_image_table_a_reference_and_the_container_port_parse(tmp_path: Path) -> None:
    node = load_profile(from_profile(image_profile(tmp_path))).node
    assert node.image == ImageSpec(dockerfile="fake", binary="{root}/bin/fake") and node.container_port == 9092
    node = load_profile(from_profile(image_profile(tmp_path, image="vendor/broker:1.2", container_port=19092))).node
    assert node.image == ImageSpec(reference="vendor/broker:1.2") and node.container_port == 19092
    # A process node has neither; its {listen_host} and {container_port} are its own address.
    path = write_profile(tmp_path, node={"command": ["x", "{listen_host}:{container_port}"]})
    assert load_profile(from_profile(path)).node.image is None


@pytest.mark.parametrize(("node", "words"), [
    ({"image": {"dockerfile": "fake"}}, "binary ="),
    ({"image": {"dockerfile": "Fake/../x", "binary": "b"}}, "dockerfile = \"NAME\""),
    ({"image": {"dockerfile": "fake", "binary": "{data_dir}/fake"}}, "{data_dir}"),
    ({"image": {"dockerfile": "fake", "binary": "b", "tag": "x"}}, "'tag'"),
    ({"image": 3}, "image reference"),
    ({"container_port": 70000}, "not a port"),
    ({"command": ["broker", "--data", "{data_dir}"]}, "no host data directory"),
])
def test_a_bad_image_table_or_a_placeholder_a_container_cannot_use_is_named(
        tmp_path: Path, node: dict[str, object], words: str) -> None:
    with pytest.raises(SetupError) as failure:
        load_profile(from_profile(image_profile(tmp_path, **node)))
    assert words in str(failure.value) and "[node]" in str(failure.value), failure.value


def test_a_command_service_is_not_for_container_nodes_and_container_port_not_for_processes(tmp_path: Path) -> None:
    minio = {"kind": "command", "name": "minio", "command": ["minio", "{port}"]}
    node = {"image": "vendor/broker:1", "command": ["broker", "{minio_port}"]}
    path = write_profile(tmp_path, service=[minio], node=node)
    with pytest.raises(SetupError, match=r"\{minio_port\}.*reaches only a PostgreSQL service"):
        load_profile(from_profile(path))
    path = write_profile(tmp_path, node={"command": ["x"], "container_port": 9092})
    with pytest.raises(SetupError, match="container_port is where a container node listens"):
        load_profile(from_profile(path))


def test_a_missing_image_binary_is_a_setup_error_before_docker_is_asked(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match=r"image's binary .*/bin/fake does not exist"):
        prepare(from_profile(image_profile(tmp_path)))


def test_image_nodes_can_be_cut_off_the_network_and_processes_cannot() -> None:
    assert parse("tansu-docker").capabilities.partitions
    assert parse("tansu-docker").capabilities.fault_control
    assert not parse("tansu").capabilities.partitions


@pytest.mark.docker
@pytest.mark.usefixtures("client")
def test_a_container_node_listens_on_every_address_of_its_own_and_reaches_postgresql_at_the_gateway(
        tmp_path: Path) -> None:
    """Skipped when no Docker engine answers: the cluster's close asks the engine to remove whatever
    carries its network's label, and an engine that is not there is a clean-up error."""
    cluster = CommandCluster(from_profile(image_profile(tmp_path, env={"DB": "{postgres_host}"})), tmp_path / "logs")
    # What `start` would have set: the image, the network, and a PostgreSQL serving both sides.
    service = cluster.services[0]
    assert isinstance(service, PostgresService)
    service.serve_containers("172.30.0.1", "172.30.0.0/16")
    service.port = 5555
    cluster._started_services = [service]
    cluster.values = {"host": "127.0.0.1", "listen_host": "127.0.0.1", "root": "/r", "cluster_id": "c",
                      "session_tag": "t", "name": "fake", "version": "1", "bootstrap": cluster.bootstrap_servers,
                      "postgres_url": "postgres://kcts@127.0.0.1:5555/fake", "postgres_host": "127.0.0.1",
                      "postgres_port": "5555"}
    cluster.image, cluster.network, cluster.docker = "kcts/fake:1-abc", cast(Any, object()), ClusterNetwork()
    node = cluster.nodes[2]
    assert isinstance(node, ContainerCommandNode)
    cluster._configure(node)
    assert node.argv == ["broker", "--listen", "0.0.0.0:9092", "--advertise", f"127.0.0.1:{node.port}",
                         "--storage", "postgres://kcts@172.30.0.1:5555/fake", "--id", "2"]
    assert node.env["DB"] == "172.30.0.1" and "PATH" not in node.env  # nothing of this machine's environment
    assert node.command_line.startswith("docker run kcts/fake:1-abc broker")
    assert cluster.broker_address(2) == ("127.0.0.1", node.port)
    cluster.close()


def test_a_process_node_listens_where_it_is_reached(tmp_path: Path) -> None:
    path = write_profile(tmp_path, node={"command": [sys.executable, "{listen_host}:{container_port}", "{port}"]})
    cluster = CommandCluster(from_profile(path), tmp_path / "logs")
    cluster.values = {"host": "127.0.0.1", "listen_host": "127.0.0.1", "root": "/r", "cluster_id": "c",
                      "session_tag": "t", "name": "fake", "version": "1", "bootstrap": cluster.bootstrap_servers}
    node = cluster.nodes[1]
    cluster._configure(node)
    assert node.argv == [sys.executable, f"127.0.0.1:{node.port}", str(node.port)]  # type: ignore[attr-defined]
    cluster.close()


@pytest.mark.parametrize(("gateway", "subnet"), [("0.0.0.0", "0.0.0.0/0"), ("10.1.0.1", "172.30.0.0/16"),
                                                 ("nowhere", "172.30.0.0/16")])
def test_postgresql_serves_only_a_network_it_is_the_gateway_of(gateway: str, subnet: str) -> None:
    service = PostgresService({"kind": "postgres"}, None, Path("."), 0)
    with pytest.raises(ClusterError):
        service.serve_containers(gateway, subnet)
    assert service.container_values() == {}
