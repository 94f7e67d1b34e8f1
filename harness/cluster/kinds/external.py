"""A cluster that is already running, reached at a bootstrap address (`--target external:HOST:PORT`,
`--backend external`). Served by harness/cluster/external.py (its BACKEND)."""

from __future__ import annotations

import re
from typing import Any

from harness.cluster.model import NOT_OUR_VERSION, BackendOptions, Capabilities, TargetKind, TargetSpec
from harness.errors import KctsError
from harness.kafka.dist import normalize_version

NAME = "external"


def _parse(hostport: str, **overrides: Any) -> TargetSpec:
    if not re.fullmatch(r"[^:,\s]+:\d+(,[^:,\s]+:\d+)*", hostport):
        raise KctsError(f"target {NAME}:{hostport!r}: use external:HOST:PORT")
    return TargetSpec(kind=KIND, version=None, bootstrap=hostport, **overrides)


def _from_backend(kind: TargetKind, options: BackendOptions) -> TargetSpec:
    """`--backend external --bootstrap-servers H:P[,...]` and the security options beside it."""
    if options.kafka_version:
        raise KctsError(NOT_OUR_VERSION.format(backend=NAME))
    return TargetSpec(kind=kind, version=None, brokers=options.brokers, bootstrap=options.bootstrap,
                      security=options.security)


def _validate(spec: TargetSpec) -> None:
    if not spec.bootstrap:
        raise KctsError("an external target needs a bootstrap address: --bootstrap-servers host:port[,...]")


def _run_args(spec: TargetSpec) -> list[str]:
    args = ["--backend", NAME, "--bootstrap-servers", str(spec.bootstrap)]
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
    name=NAME,
    spelling="`external:HOST:PORT`      a cluster that is already running",
    # An external target whose profile declares its Apache Kafka release gets the side-cluster
    # checks, which then judge that release as they do for a local cluster of it.
    capabilities=lambda spec: Capabilities(fault_control=False, node_logs=False,
                                           side_clusters=spec.version is not None, owned=False, leader_moves=None,
                                           replication=None),
    run_args=_run_args,
    prefix=f"{NAME}:",
    parse_rest=_parse,
    backend=NAME,
    security_options=True,
    # A profile may declare the Apache Kafka release the cluster runs (see capabilities); none by default.
    profile_version=lambda version: normalize_version(version) if version else version,
    validate=_validate,
    from_backend=_from_backend,
)
