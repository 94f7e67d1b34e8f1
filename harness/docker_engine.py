"""The Docker engine as kcts uses it: one client, labels, clear set-up errors, and the clean-up.

testcontainers starts its Ryuk reaper unless told not to, and Ryuk is an image that cannot be
pulled without a registry; kcts disables it and reaps by label instead: every container, network
and volume a run creates carries `kcts.session=<session id>`, and the session's reaper
(harness.reaper) removes whatever still carries it when the run ends, however it ends.

Only a daemon on this machine is used: a `DOCKER_HOST` that names another host is refused.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import SetupError

if TYPE_CHECKING:
    import docker

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

SESSION_LABEL = "kcts.session"
CLUSTER_LABEL = "kcts.cluster"
SOCKET = Path("/var/run/docker.sock")
_LOCAL_HOST = re.compile(r"^(unix://.*|tcp://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?/?)$")


def labels(session_id: str, **more: str) -> dict[str, str]:
    return {SESSION_LABEL: session_id, **{f"kcts.{k}": v for k, v in more.items()}}


def check_docker_host() -> None:
    host = os.environ.get("DOCKER_HOST", "")
    if host and not _LOCAL_HOST.match(host):
        raise SetupError(
            f"DOCKER_HOST={host} names a Docker engine on another host; kcts starts containers only on this "
            "machine (unset DOCKER_HOST, or point it at a local socket)")


def client(timeout: float = 30) -> docker.DockerClient:
    """A client of the local daemon, or a `SetupError` that says what is missing and how to fix it."""
    check_docker_host()
    try:
        from docker.errors import DockerException

        import docker
    except ImportError:
        raise SetupError("the docker backend needs the Python packages testcontainers and docker: "
                         "pip install -e . (they are kcts dependencies)") from None
    if not os.environ.get("DOCKER_HOST"):
        if not SOCKET.exists():
            raise SetupError(
                f"no Docker daemon: {SOCKET} does not exist. Start one (scripts/bootstrap installs docker.io and "
                "starts dockerd), or set DOCKER_HOST to a local socket")
        if not os.access(SOCKET, os.R_OK | os.W_OK):
            raise SetupError(
                f"no permission on {SOCKET}: run kcts as root, or add this user to the docker group "
                "(usermod -aG docker $USER, then log in again)")
    try:
        c = docker.from_env(timeout=int(timeout))
        c.ping()
    except DockerException as exc:
        text = str(exc)
        if "Permission denied" in text:
            raise SetupError(f"no permission on the Docker socket ({text[:200]}): run kcts as root, or add this "
                             "user to the docker group") from None
        raise SetupError(f"no Docker daemon answers ({text[:300]}). Start dockerd (scripts/bootstrap starts it), "
                         "or fix DOCKER_HOST") from None
    return c


def remove_labelled(c: docker.DockerClient, label: str) -> list[str]:
    """Remove every container, then network, then volume carrying `label` (`key=value`); the names."""
    removed: list[str] = []
    flt: dict[str, Any] = {"label": label}
    for container in c.containers.list(all=True, filters=flt):
        _quietly(container.remove, force=True, v=True)
        removed.append(f"container {container.name}")
    for network in c.networks.list(filters=flt):
        _quietly(network.remove)
        removed.append(f"network {network.name}")
    for volume in c.volumes.list(filters=flt):
        _quietly(volume.remove, force=True)
        removed.append(f"volume {volume.name}")
    return removed


def leftovers(c: docker.DockerClient, label: str) -> list[str]:
    """What still carries `label`: containers, networks and volumes, by name."""
    flt: dict[str, Any] = {"label": label}
    return ([f"container {x.name}" for x in c.containers.list(all=True, filters=flt)]
            + [f"network {x.name}" for x in c.networks.list(filters=flt)]
            + [f"volume {x.name}" for x in c.volumes.list(filters=flt)])


def _quietly(fn: Any, **kwargs: Any) -> None:
    from docker.errors import APIError, NotFound

    try:
        fn(**kwargs)
    except NotFound:
        pass
    except APIError as exc:
        if "removal" not in str(exc) and "in progress" not in str(exc):
            raise
