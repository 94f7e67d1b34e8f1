"""Apache Kafka in containers, from an image kcts builds offline or a named one (`--target docker:4.4.0`,
`--backend docker`). Served by harness/cluster/docker.py (its BACKEND)."""

from __future__ import annotations

import re
from typing import Any

from harness.cluster.model import REASSIGNMENT, BackendOptions, Capabilities, TargetKind, TargetSpec
from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION, normalize_version

NAME = "docker"


def docker_target(version_or_image: str | None, image: str | None, **overrides: Any) -> TargetSpec:
    """Apache Kafka in containers: `4.4.0` (an image kcts builds), or an image reference whose tag
    may name the release (`apache/kafka:4.4.0`); `image` names the image beside a version."""
    text = (version_or_image or "").strip()
    version: str | None = None
    if text and re.fullmatch(r"\d+\.\d+\.(\d+|x)", text):
        version = normalize_version(text)
    elif text:
        image = image or text
    if image and version is None:
        tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
        if re.fullmatch(r"\d+\.\d+\.\d+", tag):
            version = tag
    if image is None and version is None:
        version = DEFAULT_VERSION
    if version is not None:
        overrides.setdefault("java_clients", version)
    return TargetSpec(kind=KIND, version=version, image=image, **overrides)


def _from_backend(kind: TargetKind, options: BackendOptions) -> TargetSpec:
    return docker_target(options.kafka_version, options.image, brokers=options.brokers,
                         publish_from=options.publish_from)


def _validate(spec: TargetSpec) -> None:
    if not (spec.version or spec.image):
        raise KctsError("a docker target needs an Apache Kafka version (--kafka-version) or an image (--image)")


def _run_args(spec: TargetSpec) -> list[str]:
    own = ["--kafka-version", spec.version] if spec.version else []
    image = ["--image", spec.image] if spec.image else []
    ports = ["--publish-from", str(spec.publish_from)] if spec.publish_from else []
    return ["--backend", NAME, *own, *image, *ports, "--brokers", str(spec.brokers)]


KIND = TargetKind(
    name=NAME,
    spelling="`docker:4.4.0`            Apache Kafka 4.4.0 in containers, from an image kcts builds offline\n"
             "  `docker:IMAGE`            the same from a named image (`docker:apache/kafka:4.4.0`)",
    # As a local cluster, and a node can be cut off the network.
    capabilities=lambda spec: Capabilities(
        fault_control=True, node_logs=True, side_clusters=spec.version is not None, owned=True,
        leader_moves=REASSIGNMENT, replication=True, controller=True, partitions=True),
    run_args=_run_args,
    prefix=f"{NAME}:",
    parse_rest=lambda rest, **overrides: docker_target(rest, None, **overrides),
    backend=NAME,
    from_backend=_from_backend,
    image_options=True,
    # A profile's docker target runs a release (the default one if it names none).
    profile_version=lambda version: normalize_version(version or DEFAULT_VERSION),
    # A named image's release is the image's business unless its tag says it (docker_target).
    apache_release=lambda spec: spec.version is not None,
    validate=_validate,
    label=lambda spec: f"{NAME}:{spec.image or spec.version}",
)
