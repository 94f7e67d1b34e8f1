"""External targets behind TLS, mTLS and SCRAM: `kcts run --backend external` passes the suites that
need no node control against local clusters with those listeners, and no secret it was given
appears in any file of the run's report folder or in its output.

Heavy (tox -e security): four runs of the whole non-destructive selection.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cluster.local import LocalCluster, LocalClusterSpec, SaslConfig, TlsConfig
from harness.cluster.tls import Certificates, make_certificates

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.live, pytest.mark.heavy]


@dataclass(frozen=True)
class Listener:
    name: str
    tls: bool
    client_auth: bool
    mechanism: str | None  # SASL mechanism, None: no SASL


LISTENERS = [
    Listener("tls", tls=True, client_auth=False, mechanism=None),
    Listener("mtls", tls=True, client_auth=True, mechanism=None),
    Listener("sasl-ssl-scram-sha-256", tls=True, client_auth=False, mechanism="SCRAM-SHA-256"),
    Listener("sasl-plaintext-scram-sha-512", tls=False, client_auth=False, mechanism="SCRAM-SHA-512"),
]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(params=LISTENERS, ids=lambda listener: listener.name)
def secured(request: pytest.FixtureRequest, certs: Certificates) -> Iterator[tuple[Listener, LocalCluster]]:
    listener: Listener = request.param
    sasl = None
    if listener.mechanism:
        users = {"admin": f"adm-{secrets.token_urlsafe(12)}", "alice": f"al-{secrets.token_urlsafe(12)}"}
        sasl = SaslConfig(users=users, mechanism=listener.mechanism)
    tls = TlsConfig(certs, client_auth=listener.client_auth) if listener.tls else None
    with LocalCluster(LocalClusterSpec(sasl=sasl, tls=tls)) as cluster:
        yield listener, cluster  # type: ignore[misc]


def run_args(config: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """`kcts run` flags for a cluster's client settings; the passwords go in the environment."""
    flags = {"security.protocol": "--security-protocol", "sasl.mechanism": "--sasl-mechanism",
             "sasl.username": "--sasl-username", "ssl.ca.location": "--ssl-ca-location",
             "ssl.certificate.location": "--ssl-certificate-location", "ssl.key.location": "--ssl-key-location"}
    args = [arg for key, flag in flags.items() if key in config for arg in (flag, config[key])]
    env = {"KCTS_SASL_PASSWORD": config.get("sasl.password"), "KCTS_SSL_KEY_PASSWORD": config.get("ssl.key.password")}
    return args, {k: v for k, v in env.items() if v}


def secrets_of(config: dict[str, str]) -> dict[str, str]:
    """Every secret given to the run, by name: passwords and the client key's encrypted body."""
    found = {k: v for k, v in config.items() if k in ("sasl.password", "ssl.key.password")}
    if key := config.get("ssl.key.location"):
        body = [line for line in Path(key).read_text().splitlines() if line and not line.startswith("-----")]
        found["client key (PEM body)"] = body[1][:40]
    return found


@pytest.mark.timeout(900)
def test_external_run_over_a_secured_listener_passes_and_leaks_no_secret(
    secured: tuple[Listener, LocalCluster], tmp_path: Path
) -> None:
    """Promise (issue 17): the raw client, librdkafka and the Java drivers all reach the target over
    its TLS, mTLS or SCRAM listener; no check fails or errors; no secret is in any artefact."""
    listener, cluster = secured
    config = cluster.client_config()
    args, env = run_args(config)
    reports = tmp_path / "reports"
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--backend", "external", "--bootstrap-servers",
         cluster.bootstrap_servers, *args, "-m", "not heavy", "--reports-dir", str(reports), "--run-id", listener.name],
        cwd=REPO, capture_output=True, text=True, timeout=900, env={**os.environ, "KCTS_NO_LATEST": "1", **env},
    )
    output = proc.stdout + proc.stderr
    results = json.loads((reports / listener.name / "results.json").read_text())
    counts = results["summary"]["counts"]
    bad = [(c["nodeid"], c["cell"], (c["reason"] or "")[:300]) for c in results["checks"]
           if c["cell"] in ("fail", "error")]
    assert proc.returncode == 0 and not bad, (
        f"{listener.name}: exit {proc.returncode}, {counts}:\n{bad}\n{output[-3000:]}"
    )
    assert counts["pass"] >= 20, f"{listener.name}: too few checks ran to judge the listener: {counts}"

    leaks = []
    for name, secret in secrets_of(config).items():
        needle = secret.encode()
        if needle in output.encode():
            leaks.append(f"{name} in the run's output")
        for path in (reports / listener.name).rglob("*"):
            if path.is_file() and needle in path.read_bytes():
                leaks.append(f"{name} in {path.relative_to(reports)}")
    assert not leaks, f"{listener.name}: secrets found: {leaks}"
