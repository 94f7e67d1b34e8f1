"""The one target model: what kcts judges, parsed in one place from the CLI, the matrix or a profile.

A `TargetSpec` names the kind of target (a local Apache Kafka cluster started here, franz-go's
kfake started here, or an external cluster reached at a bootstrap address), its broker version,
how to reach and authenticate to it, and which Java clients run against it. `Capabilities` says
what the harness can do to it; checks ask those, never which backend it is.
`harness.cluster.factory.make_cluster` turns a spec into a `Cluster`.

Spellings accepted by `parse` (the matrix's `--targets` and `kcts run --target`):
  `4.4.0`, `4.0.x`          a local Apache Kafka cluster of that version
  `kfake`                   franz-go's kfake, built and started here
  `external:HOST:PORT`      a cluster that is already running
A profile file (`--target-profile FILE`, TOML) has a `[target]` table with the same fields as
`TargetSpec`, and an optional `[target.security]` table.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION, normalize_version

APACHE, KFAKE, EXTERNAL = "apache", "kfake", "external"
KINDS = (APACHE, KFAKE, EXTERNAL)


@dataclass(frozen=True)
class Capabilities:
    """What the harness can do to a target; checks that need more end with a reason, not a verdict."""

    fault_control: bool  # stop, kill, pause and resume nodes, and the controller
    node_logs: bool  # read each broker's log (evidence, truncation log lines)
    side_clusters: bool  # start one-broker Apache clusters of the target's version beside it
    owned: bool  # the harness started it and throws it away; False: clean up what the run made
    # Leader moves by reassignment: True where the target is known to apply them (a target that
    # then does not is failing), None where that is for the target to show.
    leader_moves: bool | None


@dataclass(frozen=True)
class Security:
    """How clients authenticate to an external target. The password never appears in a repr."""

    protocol: str | None = None  # SASL_PLAINTEXT, SASL_SSL, ...
    mechanism: str | None = None  # PLAIN, SCRAM-SHA-256, ...
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    def client_config(self) -> dict[str, str]:
        return {k: v for k, v in {
            "security.protocol": self.protocol, "sasl.mechanism": self.mechanism,
            "sasl.username": self.username, "sasl.password": self.password,
        }.items() if v}


@dataclass(frozen=True)
class TargetSpec:
    kind: str = APACHE
    version: str | None = DEFAULT_VERSION  # the broker version; None where the harness cannot know it
    brokers: int = 3
    bootstrap: str | None = None
    security: Security = field(default_factory=Security)
    java_clients: str = DEFAULT_VERSION  # the kafka-clients version of the Java drivers
    name: str | None = None  # the matrix column title; default `label`

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise KctsError(f"unknown target kind {self.kind!r}; use one of {', '.join(KINDS)}")
        if self.kind == EXTERNAL and not self.bootstrap:
            raise KctsError("an external target needs a bootstrap address: --bootstrap-servers host:port[,...]")
        if self.brokers < 1:
            raise KctsError(f"--brokers must be at least 1, not {self.brokers}")

    @property
    def label(self) -> str:
        """How the target is named in reasons and reports: `4.4.0`, `kfake`, `external`."""
        if self.name:
            return self.name
        return self.version if self.kind == APACHE and self.version else self.kind

    @property
    def protocol_specs(self) -> str:
        """Whose message schemas the harness speaks to it with: its own version's where it is an
        Apache Kafka release, the default release's otherwise (requests are versioned anyway)."""
        return self.version if self.kind == APACHE and self.version else DEFAULT_VERSION

    @property
    def capabilities(self) -> Capabilities:
        local = self.kind == APACHE
        return Capabilities(
            fault_control=local, node_logs=local, side_clusters=local, owned=self.kind != EXTERNAL,
            leader_moves=True if local else None,
        )

    def environment(self) -> dict[str, str]:
        """What reports show of the target (no secret)."""
        env = {"target": self.label, "target_kind": self.kind, "java_clients": self.java_clients}
        if self.bootstrap:
            env["bootstrap"] = self.bootstrap
        if self.security.mechanism:
            env["sasl_mechanism"] = self.security.mechanism
        return env


def parse(text: str, **overrides: Any) -> TargetSpec:
    """A target from its short spelling (see the module docstring)."""
    text = text.strip()
    if text == KFAKE:
        return TargetSpec(kind=KFAKE, version=None, **overrides)
    if text.startswith(f"{EXTERNAL}:"):
        hostport = text.removeprefix(f"{EXTERNAL}:")
        if not re.fullmatch(r"[^:,\s]+:\d+(,[^:,\s]+:\d+)*", hostport):
            raise KctsError(f"target {text!r}: use external:HOST:PORT")
        return TargetSpec(kind=EXTERNAL, version=None, bootstrap=hostport, **overrides)
    version = normalize_version(text)
    overrides.setdefault("java_clients", version)
    return TargetSpec(kind=APACHE, version=version, **overrides)


def from_profile(path: Path) -> TargetSpec:
    """A target from a TOML profile's `[target]` table."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KctsError(f"cannot read target profile {path}: {exc}") from None
    table = dict(data.get("target") or {})
    if not table:
        raise KctsError(f"target profile {path} has no [target] table")
    security = Security(**table.pop("security", {}))
    known = {f for f in TargetSpec.__dataclass_fields__}
    unknown = set(table) - known
    if unknown:
        raise KctsError(f"target profile {path}: unknown fields {sorted(unknown)}; known: {sorted(known)}")
    kind = table.get("kind", APACHE)
    if kind == APACHE:
        table["version"] = normalize_version(str(table.get("version", DEFAULT_VERSION)))
        table.setdefault("java_clients", table["version"])
    else:
        table.setdefault("version", None)
    return TargetSpec(security=security, **table)


def from_options(
    backend: str, kafka_version: str | None, brokers: int, bootstrap: str | None, security: Security,
    java_clients: str | None, target: str | None = None, profile: str | None = None,
) -> TargetSpec:
    """The target the command line names: `--target`/`--target-profile`, or the backend options."""
    if profile:
        spec = from_profile(Path(profile))
    elif target:
        spec = parse(target, brokers=brokers)
    elif backend == "local":
        version = normalize_version(kafka_version or DEFAULT_VERSION)
        spec = TargetSpec(kind=APACHE, version=version, brokers=brokers, java_clients=version)
    elif backend in (KFAKE, EXTERNAL):
        if kafka_version:
            raise KctsError(
                f"--kafka-version names the broker version of a local Apache Kafka cluster; the {backend} target "
                "has its own. Name the Java clients' version with --java-clients"
            )
        spec = TargetSpec(kind=backend, version=None, brokers=brokers, bootstrap=bootstrap, security=security)
    else:
        raise KctsError(f"unknown --backend {backend!r}; use local, kfake or external")
    if java_clients:
        spec = replace(spec, java_clients=normalize_version(java_clients))
    if spec.kind == EXTERNAL and security != Security() and spec.security == Security():
        spec = replace(spec, security=security)
    return spec


def to_run_args(spec: TargetSpec) -> list[str]:
    """The `kcts run` arguments that select this target (the matrix runs each target this way)."""
    args = ["--java-clients", spec.java_clients]
    if spec.kind == APACHE:
        return ["--kafka-version", str(spec.version), "--brokers", str(spec.brokers), *args]
    if spec.kind == KFAKE:
        return ["--backend", KFAKE, "--brokers", str(spec.brokers), *args]
    sec = spec.security
    for flag, value in (("--security-protocol", sec.protocol), ("--sasl-mechanism", sec.mechanism),
                        ("--sasl-username", sec.username)):
        if value:
            args += [flag, value]
    # The password goes through the environment (KCTS_SASL_PASSWORD), never a command line.
    return ["--backend", EXTERNAL, "--bootstrap-servers", str(spec.bootstrap), *args]
