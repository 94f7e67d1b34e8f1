"""The one target model: what kcts judges, parsed in one place from the CLI, the matrix or a profile.

A `TargetSpec` names the kind of target (a local Apache Kafka cluster started here, franz-go's
kfake started here, or an external cluster reached at a bootstrap address), its broker version,
how to reach and authenticate to it, and which Java clients run against it. `Capabilities` says
what the harness can do to it; checks ask those, never which backend it is.
`harness.cluster.factory.make_cluster` turns a spec into a `Cluster`.

Each kind of target is one module of `harness.cluster.kinds`, which says how `parse` (the matrix's
`--targets` and `kcts run --target`) spells it, what the harness can do to it and how it is made;
`spellings()` lists them all (`4.4.0`, `kfake`, `docker:4.4.0`, `external:HOST:PORT`, a shipped
profile such as `tansu`).
A profile file (`--target-profile FILE` or a shipped profile's name, TOML) has a `[target]` table
with the same fields as `TargetSpec`, and an optional `[target.security]` table. A `command` target
(any broker binary the harness starts and controls) also has the tables its backend reads
(`[build]`, `[[service]]`, `[node]`, `[leader_move]`: harness/cluster/command.py).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION, normalize_version
from harness.protocol.auth import MECHANISMS, PROTOCOLS

APACHE, KFAKE, EXTERNAL, COMMAND, DOCKER = "apache", "kfake", "external", "command", "docker"
LIBRDKAFKA_MOCK = "librdkafka-mock"
PROFILES = Path(__file__).resolve().parent.parent / "profiles"

# How a leader is moved: reordering the replicas then a preferred election, applied at once (Apache);
# the target's own control API (kfake); the profile's hook command. None: reassignment is tried,
# and a target that does not apply it refuses the premise.
REASSIGNMENT, API, HOOK = "reassignment", "api", "hook"

# A profile's fetch_max_wait_ms stays well inside the raw client's 20 s wait for an answer
# (harness.clients.raw.RawConnector), with room for a read the broker finishes after the wait.
FETCH_MAX_WAIT_LIMIT_MS = 5000


@dataclass(frozen=True)
class Capabilities:
    """What the harness can do to a target; checks that need more end with a reason, not a verdict."""

    fault_control: bool  # stop, kill, pause and resume nodes, and the controller
    node_logs: bool  # read each broker's log (evidence, truncation log lines)
    # Checks that start one-broker Apache clusters beside the target (of its version, or an older
    # release) judge those clusters and the Java client, so they run where the target is Apache.
    side_clusters: bool
    owned: bool  # the harness started it and throws it away; False: clean up what the run made
    leader_moves: str | None  # REASSIGNMENT, API, HOOK or None (see above)
    # Each replica keeps a log of its own: a stopped follower leaves the ISR, and an unclean
    # election can diverge the logs. False where the target keeps one log per partition (kfake, a
    # shared storage engine); None where that is for the target to show.
    replication: bool | None = True
    controller: bool = False  # pause and resume the controller quorum
    partitions: bool = False  # cut a node off the network and reconnect it (Cluster.isolate_node)
    # Cut, degrade and heal single directed links between nodes (controller included) while
    # clients still reach every node (Cluster.cut_links); the local backend where this machine allows.
    links: bool = False
    no_links: str = "the target's backend cannot cut links between its nodes"  # why not, for skips
    no_replication: str = ""  # why not, the evidence of "not supported" for checks that need replicas


def _no_check(spec: TargetSpec) -> None:
    return None


@dataclass(frozen=True)
class TargetKind:
    """What the target model knows of one kind of target (`harness.cluster.kinds`, a module each)."""

    name: str
    spelling: str  # its line of `--target`'s help: how a user names one
    capabilities: Callable[[TargetSpec], Capabilities]
    run_args: Callable[[TargetSpec], list[str]]  # the `kcts run` arguments that select a spec
    # `--target` words it answers to (`kfake`), or a prefix (`docker:`) with the parser of the rest.
    words: tuple[str, ...] = ()
    prefix: str | None = None
    parse_rest: Callable[..., TargetSpec] | None = None
    # `--backend NAME` selects it (with --brokers, --bootstrap-servers and the security options).
    backend: str | None = None
    # Its version is an Apache Kafka release: the harness speaks that release's schemas to it, its
    # Java clients default to it, and the reference profile of that release applies.
    apache_release: Callable[[TargetSpec], bool] = lambda spec: False
    validate: Callable[[TargetSpec], None] = _no_check  # raises KctsError for a spec it cannot serve
    label: Callable[[TargetSpec], str] | None = None  # default: the version of a release, else the kind


KINDS_PACKAGE = "harness.cluster.kinds"


@cache
def kinds() -> dict[str, TargetKind]:
    """Every kind, by name, in the order of its module's name. Imported by name (see the package's
    docstring): the kinds' modules import this one."""
    found: dict[str, TargetKind] = {}
    package = importlib.import_module(KINDS_PACKAGE)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{KINDS_PACKAGE}.{info.name}")
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, TargetKind):
            raise KctsError(f"{module.__name__} defines no KIND (a TargetKind): every module there is a target kind")
        found[kind.name] = kind
    return found


def kind_of(name: str) -> TargetKind:
    try:
        return kinds()[name]
    except KeyError:
        raise KctsError(f"unknown target kind {name!r}; use one of {', '.join(kinds())}") from None


def backends() -> tuple[str, ...]:
    """The `--backend` choices, each kind's word (`local` is a cluster of Apache Kafka started here)."""
    return tuple(k.backend for k in kinds().values() if k.backend)


@dataclass(frozen=True)
class Security:
    """How clients reach and authenticate to an external target: TLS (a CA file, a client
    certificate for mTLS) and SASL. Secrets (the password, the key's password) never appear in a repr.
    Field names follow librdkafka's settings, which every other client's are made from."""

    protocol: str | None = None  # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    mechanism: str | None = None  # PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_ca_location: str | None = None  # PEM CA certificate(s) the brokers' certificates chain to
    ssl_certificate_location: str | None = None  # PEM client certificate (mTLS)
    ssl_key_location: str | None = None  # PEM client key (mTLS)
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_endpoint_identification: str | None = None  # "none": do not check the broker's host name

    def __post_init__(self) -> None:
        protocol = (self.protocol or "PLAINTEXT").upper()
        if protocol not in PROTOCOLS:
            raise KctsError(f"--security-protocol {self.protocol}: use one of {', '.join(PROTOCOLS)}")
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL") and (self.mechanism or "").upper() not in MECHANISMS:
            raise KctsError(f"--security-protocol {protocol} needs --sasl-mechanism, one of {', '.join(MECHANISMS)}"
                            f"{'' if not self.mechanism else f' (not {self.mechanism})'}")
        if bool(self.ssl_certificate_location) != bool(self.ssl_key_location):
            raise KctsError("a client certificate needs both --ssl-certificate-location and --ssl-key-location")
        for flag, path in (("--ssl-ca-location", self.ssl_ca_location),
                           ("--ssl-certificate-location", self.ssl_certificate_location),
                           ("--ssl-key-location", self.ssl_key_location)):
            if path and not Path(path).is_file():
                raise KctsError(f"{flag} {path}: no such file")
        if self.ssl_endpoint_identification not in (None, "none", "https"):
            raise KctsError(f"--ssl-endpoint-identification {self.ssl_endpoint_identification}: use https or none")

    def client_config(self) -> dict[str, str]:
        return {k: v for k, v in {
            "security.protocol": self.protocol, "sasl.mechanism": self.mechanism,
            "sasl.username": self.username, "sasl.password": self.password,
            "ssl.ca.location": self.ssl_ca_location, "ssl.certificate.location": self.ssl_certificate_location,
            "ssl.key.location": self.ssl_key_location, "ssl.key.password": self.ssl_key_password,
            "ssl.endpoint.identification.algorithm": self.ssl_endpoint_identification,
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
    profile: Path | None = None  # the profile file it came from
    replication: bool | None = None  # a profile's word on it; default: the kind's
    # The profile's other tables ([build], [[service]], [node], [leader_move]), for its backend.
    tables: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    image: str | None = None  # docker: the image to run; None: kcts builds Apache Kafka `version`
    publish_from: int | None = None  # docker: brokers' client ports on 127.0.0.1 from here on; None: free ones
    # The MaxWaitMs of the harness's own Fetch requests (harness.clients.raw.fetch, MinBytes 0). 0 asks
    # for the answer at once, and Apache Kafka reads every partition asked before it answers; a profile
    # sets a wait for a target that reads nothing within a wait of 0 (Nisshi 0.8.1: no topics at all).
    fetch_max_wait_ms: int = 0

    def __post_init__(self) -> None:
        kind_of(self.kind).validate(self)
        wait = self.fetch_max_wait_ms
        if isinstance(wait, bool) or not isinstance(wait, int) or not 0 <= wait <= FETCH_MAX_WAIT_LIMIT_MS:
            raise KctsError(f"fetch_max_wait_ms {wait!r}: give a whole number of milliseconds from 0 to "
                            f"{FETCH_MAX_WAIT_LIMIT_MS}")
        if self.publish_from is not None and not 1024 <= self.publish_from <= 65535 - self.brokers:
            raise KctsError(f"--publish-from {self.publish_from}: give a port from 1024 to {65535 - self.brokers}")
        if self.brokers < 1:
            raise KctsError(f"--brokers must be at least 1, not {self.brokers}")

    @property
    def label(self) -> str:
        """How the target is named in reasons and reports: `4.4.0`, `kfake`, `external`."""
        if self.name:
            return self.name
        kind = kind_of(self.kind)
        if kind.label:
            return kind.label(self)
        return self.version if kind.apache_release(self) and self.version else self.kind

    @property
    def protocol_specs(self) -> str:
        """Whose message schemas the harness speaks to it with: its own version's where it is an
        Apache Kafka release, the default release's otherwise (requests are versioned anyway)."""
        return self.version if kind_of(self.kind).apache_release(self) and self.version else DEFAULT_VERSION

    @property
    def apache_release(self) -> bool:
        """Whether its version is an Apache Kafka release (not a name for some other broker's)."""
        return kind_of(self.kind).apache_release(self)

    @property
    def capabilities(self) -> Capabilities:
        caps = kind_of(self.kind).capabilities(self)
        if self.replication is not None and self.replication != caps.replication:
            why = str(self.tables.get("replication_why", "")) or (
                f"the {self.label} profile says its brokers keep no replicas of their own")
            caps = replace(caps, replication=self.replication, no_replication=why if not self.replication else "")
        return caps

    def environment(self) -> dict[str, str]:
        """What reports show of the target (no secret)."""
        env = {"target": self.label, "target_kind": self.kind, "java_clients": self.java_clients}
        if self.bootstrap:
            env["bootstrap"] = self.bootstrap
        if self.image:
            env["image"] = self.image
        if self.security.protocol:
            env["security_protocol"] = self.security.protocol
        if self.security.mechanism:
            env["sasl_mechanism"] = self.security.mechanism
        if self.security.ssl_certificate_location:
            env["tls_client_certificate"] = "yes"
        if self.fetch_max_wait_ms:  # the harness's Fetches differ from the default: the report says so
            env["fetch_max_wait_ms"] = str(self.fetch_max_wait_ms)
        return env


def parse(text: str, **overrides: Any) -> TargetSpec:
    """A target from its short spelling (see the module docstring)."""
    text = text.strip()
    if (PROFILES / f"{text}.toml").is_file():
        # A profile says how many brokers it runs; only the Java clients' version is the caller's.
        spec = from_profile(PROFILES / f"{text}.toml")
        java = overrides.get("java_clients")
        return replace(spec, java_clients=java) if java else spec
    for kind in kinds().values():
        if text in kind.words:
            return TargetSpec(kind=kind.name, version=None, **overrides)
        if kind.prefix and kind.parse_rest and text.startswith(kind.prefix):
            return kind.parse_rest(text.removeprefix(kind.prefix), **overrides)
    version = normalize_version(text)
    overrides.setdefault("java_clients", version)
    return TargetSpec(kind=APACHE, version=version, **overrides)


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
    return TargetSpec(kind=DOCKER, version=version, image=image, **overrides)


def profile_path(name: str) -> Path:
    """A profile file by path, or a shipped profile by name (`tansu`)."""
    path = Path(name)
    if path.suffix != ".toml" and not path.exists() and (PROFILES / f"{name}.toml").is_file():
        return PROFILES / f"{name}.toml"
    if not path.is_file():
        shipped = sorted(p.stem for p in PROFILES.glob("*.toml"))
        raise KctsError(f"no target profile {name!r}: give a TOML file's path or one of the shipped profiles {shipped}")
    return path


PROFILE_FIELDS = ("kind", "version", "brokers", "bootstrap", "java_clients", "name", "replication",
                  "replication_why", "security", "image", "publish_from", "fetch_max_wait_ms")


def from_profile(path: Path) -> TargetSpec:
    """A target from a TOML profile: its `[target]` table, and the tables its backend reads."""
    path = profile_path(str(path))
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KctsError(f"cannot read target profile {path}: {exc}") from None
    table = dict(data.pop("target", None) or {})
    if not table:
        raise KctsError(f"target profile {path} has no [target] table")
    unknown = set(table) - set(PROFILE_FIELDS)
    if unknown:
        raise KctsError(f"target profile {path}: unknown [target] fields {sorted(unknown)}; "
                        f"known: {sorted(PROFILE_FIELDS)}")
    try:
        security = Security(**table.pop("security", {}))
    except TypeError as exc:
        raise KctsError(f"target profile {path}: [target.security]: {exc}; known: "
                        f"{sorted(Security.__dataclass_fields__)}") from None
    why = table.pop("replication_why", None)
    if why:
        data["replication_why"] = why
    table["profile"] = path
    table["tables"] = data
    kind = table.get("kind", APACHE)
    extra = sorted(set(data) - {"replication_why"})
    if extra and kind != COMMAND:
        raise KctsError(f"target profile {path}: tables {extra} belong to a command target (kind = \"command\"); "
                        f"a {kind} target has only [target]")
    if kind in (APACHE, DOCKER) or (kind == EXTERNAL and table.get("version")):
        # An external target may declare the Apache Kafka release it runs (see `capabilities`).
        table["version"] = normalize_version(str(table.get("version", DEFAULT_VERSION)))
        table.setdefault("java_clients", table["version"])
    else:
        table.setdefault("version", None)
    return TargetSpec(security=security, **table)


def from_options(
    backend: str, kafka_version: str | None, brokers: int, bootstrap: str | None, security: Security,
    java_clients: str | None, target: str | None = None, profile: str | None = None, image: str | None = None,
    publish_from: int | None = None,
) -> TargetSpec:
    """The target the command line names: `--target`/`--target-profile`, or the backend options."""
    if profile:
        spec = from_profile(Path(profile))
    elif target:
        spec = parse(target, brokers=brokers)
    elif backend == "local":
        version = normalize_version(kafka_version or DEFAULT_VERSION)
        spec = TargetSpec(kind=APACHE, version=version, brokers=brokers, java_clients=version)
    elif backend == DOCKER:
        spec = docker_target(kafka_version, image, brokers=brokers, publish_from=publish_from)
    elif backend in backends():
        if kafka_version:
            raise KctsError(
                f"--kafka-version names the broker version of a local Apache Kafka cluster; the {backend} target "
                "has its own. Name the Java clients' version with --java-clients"
            )
        spec = TargetSpec(kind=backend, version=None, brokers=brokers, bootstrap=bootstrap, security=security)
    else:
        raise KctsError(f"unknown --backend {backend!r}; use one of {', '.join(backends())}")
    if (image or publish_from) and spec.kind != DOCKER:
        raise KctsError("--image and --publish-from belong to a docker target: add --backend docker")
    if java_clients:
        spec = replace(spec, java_clients=normalize_version(java_clients))
    if spec.kind == EXTERNAL and security != Security() and spec.security == Security():
        spec = replace(spec, security=security)
    return spec


def secret_env(spec: TargetSpec) -> dict[str, str]:
    """The environment that carries a target's passwords to a `kcts run` child (see to_run_args)."""
    env = {"KCTS_SASL_PASSWORD": spec.security.password, "KCTS_SSL_KEY_PASSWORD": spec.security.ssl_key_password}
    return {k: v for k, v in env.items() if v}


def to_run_args(spec: TargetSpec) -> list[str]:
    """The `kcts run` arguments that select this target (the matrix runs each target this way)."""
    if spec.profile is not None:
        return ["--target-profile", str(spec.profile), "--java-clients", spec.java_clients]
    return [*kind_of(spec.kind).run_args(spec), "--java-clients", spec.java_clients]


def spellings() -> str:
    """How `--target` names each kind of target, a line each (for help texts and errors)."""
    return "\n".join(f"  {kind.spelling}" for kind in kinds().values())
