"""The target model: what kcts judges (`TargetSpec`), what the harness may do to it (`Capabilities`),
and what varies by its kind (`TargetKind`). The lowest module of the cluster package: it imports no
other, each kind module (`harness.cluster.kinds`) imports it, and nothing here names a kind.

A spec carries its kind itself (`TargetSpec.kind` is the `TargetKind`, not its name), so the model
asks the kind, never a table of kinds: names are read into kinds only where text comes in
(`harness.cluster.target`, through `harness.cluster.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION
from harness.protocol.auth import MECHANISMS, PROTOCOLS

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
class BackendOptions:
    """What `--backend X` and the options beside it say, for the kind that `X` names to build a spec from."""

    kafka_version: str | None
    brokers: int
    bootstrap: str | None = None
    security: Security = field(default_factory=Security)
    image: str | None = None
    publish_from: int | None = None


NOT_OUR_VERSION = ("--kafka-version names the broker version of a local Apache Kafka cluster; the {backend} target "
                   "has its own. Name the Java clients' version with --java-clients")


def own_broker(kind: TargetKind, options: BackendOptions) -> TargetSpec:
    """What `--backend X` builds for a kind whose broker has a version of its own (kfake, an external
    cluster): the brokers, the bootstrap address and the security options, never `--kafka-version`."""
    if options.kafka_version:
        raise KctsError(NOT_OUR_VERSION.format(backend=kind.backend))
    return TargetSpec(kind=kind, version=None, brokers=options.brokers, bootstrap=options.bootstrap,
                      security=options.security)


def _no_check(spec: TargetSpec) -> None:
    return None


def _not_a_release(spec: TargetSpec) -> bool:
    return False


@dataclass(frozen=True, eq=False, repr=False)
class TargetKind:
    """Everything that varies by the kind of a target, in one value (`KIND` of its module in
    `harness.cluster.kinds`). One instance per kind: two are equal only if they are the same."""

    name: str
    spelling: str  # its line of `--target`'s help: how a user names one
    capabilities: Callable[[TargetSpec], Capabilities]
    run_args: Callable[[TargetSpec], list[str]]  # the `kcts run` arguments that select a spec
    # `--target` words it answers to (`kfake`), or a prefix (`docker:`) with the parser of the rest
    # (of the whole word, for the default kind: `4.4.0`).
    words: tuple[str, ...] = ()
    prefix: str | None = None
    parse_rest: Callable[..., TargetSpec] | None = None
    # The kind a bare version names (`--target 4.4.0`), a profile without `kind`, and `--backend`'s
    # default: one kind only.
    default: bool = False
    # `--backend NAME` selects it, and what it builds from the options beside it.
    backend: str | None = None
    from_backend: Callable[[TargetKind, BackendOptions], TargetSpec] = own_broker
    image_options: bool = False  # `--image` and `--publish-from` are its
    # The command line's security options reach it also where `--target` or a profile names it
    # (unless the profile has its own).
    security_options: bool = False
    # How a profile's `version` is read: None keeps it as written (the broker's own numbering, or
    # none); a function reads it as an Apache Kafka release (normalized, a default where it must
    # have one), which the Java clients then default to.
    profile_version: Callable[[str | None], str | None] | None = None
    # A profile of it may have tables beside [target] ([build], [[service]], [node], [leader_move]),
    # which its backend reads; a profile of any other kind has [target] only.
    profile_tables: bool = False
    # Its version is an Apache Kafka release: the harness speaks that release's schemas to it, its
    # Java clients default to it, and the reference profile of that release applies.
    apache_release: Callable[[TargetSpec], bool] = _not_a_release
    validate: Callable[[TargetSpec], None] = _no_check  # raises KctsError for a spec it cannot serve
    label: Callable[[TargetSpec], str] | None = None  # default: the version of a release, else the kind

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"TargetKind({self.name!r})"


@dataclass(frozen=True)
class TargetSpec:
    kind: TargetKind  # harness.cluster.registry.kind_of(name) where a name comes in
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
        if not isinstance(self.kind, TargetKind):
            raise TypeError(f"TargetSpec.kind is a TargetKind, not {self.kind!r}: "
                            "harness.cluster.registry.kind_of(name) reads a name")
        self.kind.validate(self)
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
        if self.kind.label:
            return self.kind.label(self)
        return self.version if self.apache_release and self.version else self.kind.name

    @property
    def protocol_specs(self) -> str:
        """Whose message schemas the harness speaks to it with: its own version's where it is an
        Apache Kafka release, the default release's otherwise (requests are versioned anyway)."""
        return self.version if self.apache_release and self.version else DEFAULT_VERSION

    @property
    def apache_release(self) -> bool:
        """Whether its version is an Apache Kafka release (not a name for some other broker's)."""
        return self.kind.apache_release(self)

    @property
    def capabilities(self) -> Capabilities:
        caps = self.kind.capabilities(self)
        if self.replication is not None and self.replication != caps.replication:
            why = str(self.tables.get("replication_why", "")) or (
                f"the {self.label} profile says its brokers keep no replicas of their own")
            caps = replace(caps, replication=self.replication, no_replication=why if not self.replication else "")
        return caps

    def environment(self) -> dict[str, str]:
        """What reports show of the target (no secret)."""
        env = {"target": self.label, "target_kind": self.kind.name, "java_clients": self.java_clients}
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
