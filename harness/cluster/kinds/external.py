"""A cluster that is already running, reached at a bootstrap address (`--target external:HOST:PORT`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.cluster.base import Cluster
from harness.cluster.factory import Backend
from harness.cluster.target import EXTERNAL, Capabilities, TargetKind, TargetSpec
from harness.errors import KctsError


def _make(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.external import ExternalCluster

    return ExternalCluster(target)


def _prepare(target: TargetSpec) -> str:
    return f"external target at {target.bootstrap}"


def _parse(hostport: str, **overrides: Any) -> TargetSpec:
    if not re.fullmatch(r"[^:,\s]+:\d+(,[^:,\s]+:\d+)*", hostport):
        raise KctsError(f"target {EXTERNAL}:{hostport!r}: use external:HOST:PORT")
    return TargetSpec(kind=EXTERNAL, version=None, bootstrap=hostport, **overrides)


def _validate(spec: TargetSpec) -> None:
    if not spec.bootstrap:
        raise KctsError("an external target needs a bootstrap address: --bootstrap-servers host:port[,...]")


def _run_args(spec: TargetSpec) -> list[str]:
    args = ["--backend", EXTERNAL, "--bootstrap-servers", str(spec.bootstrap)]
    sec = spec.security
    for flag, value in (("--security-protocol", sec.protocol), ("--sasl-mechanism", sec.mechanism),
                        ("--sasl-username", sec.username), ("--ssl-ca-location", sec.ssl_ca_location),
                        ("--ssl-certificate-location", sec.ssl_certificate_location),
                        ("--ssl-key-location", sec.ssl_key_location),
                        ("--ssl-endpoint-identification", sec.ssl_endpoint_identification)):
        if value:
            args += [flag, value]
    # Passwords go through the environment (KCTS_SASL_PASSWORD, KCTS_SSL_KEY_PASSWORD: secret_env),
    # never a command line.
    return args


KIND = TargetKind(
    name=EXTERNAL,
    spelling="`external:HOST:PORT`      a cluster that is already running",
    # An external target whose profile declares its Apache Kafka release gets the side-cluster
    # checks, which then judge that release as they do for a local cluster of it.
    capabilities=lambda spec: Capabilities(fault_control=False, node_logs=False,
                                           side_clusters=spec.version is not None, owned=False, leader_moves=None,
                                           replication=None),
    run_args=_run_args,
    prefix=f"{EXTERNAL}:",
    parse_rest=_parse,
    backend=EXTERNAL,
    validate=_validate,
)

BACKEND = Backend(make=_make, prepare=_prepare)
