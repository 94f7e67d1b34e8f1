"""Targets from text: the command line's options, the matrix's `--targets` words and profile files,
each read into one `TargetSpec` (harness/cluster/model.py) here and nowhere else.

Every kind of target is found through `harness.cluster.registry`, which lists them (one module each
in `harness.cluster.kinds` says how `--target` and `--backend` spell it, how a profile's version is
read, what `--backend` builds from the options); nothing here names a kind. `spellings()` lists them
all (`4.4.0`, `kfake`, `docker:4.4.0`, `external:HOST:PORT`, a shipped profile such as `tansu`).
A profile file (`--target-profile FILE` or a shipped profile's name, TOML) has a `[target]` table
with the same fields as `TargetSpec`, and an optional `[target.security]` table. A `command` target
(any broker binary the harness starts and controls) also has the tables its backend reads
(`[build]`, `[[service]]`, `[node]`, `[leader_move]`: harness/cluster/command.py).
`target_from` reads the command line's options (declared in harness/cluster/target_options.py) into a
`Served`: the spec and the backend that makes its `Cluster` (`harness.cluster.registry.serve`).
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.cluster.backend import Served
from harness.cluster.model import (
    API,
    FETCH_MAX_WAIT_LIMIT_MS,
    HOOK,
    REASSIGNMENT,
    BackendOptions,
    Capabilities,
    Security,
    TargetKind,
    TargetSpec,
)
from harness.cluster.registry import backends, default_kind, kind_of, kinds, serve
from harness.cluster.target_options import SECURITY_OPTIONS
from harness.errors import KctsError
from harness.kafka.dist import normalize_version

# The model's names, which code that reads targets from text has long imported from here.
__all__ = [
    "API",
    "FETCH_MAX_WAIT_LIMIT_MS",
    "HOOK",
    "PROFILES",
    "PROFILE_FIELDS",
    "REASSIGNMENT",
    "Capabilities",
    "Security",
    "TargetKind",
    "TargetSpec",
    "from_options",
    "from_profile",
    "parse",
    "profile_path",
    "secret_env",
    "target_from",
    "to_run_args",
]

PROFILES = Path(__file__).resolve().parent.parent / "profiles"


def parse(text: str, **overrides: Any) -> TargetSpec:
    """A target from its short spelling (see the module docstring): a shipped profile's name, a kind's
    word or prefix, else what the default kind reads (a release: `4.4.0`)."""
    text = text.strip()
    if (PROFILES / f"{text}.toml").is_file():
        # A profile says how many brokers it runs; only the Java clients' version is the caller's.
        spec = from_profile(PROFILES / f"{text}.toml")
        java = overrides.get("java_clients")
        return replace(spec, java_clients=java) if java else spec
    for kind in kinds().values():
        if text in kind.words:
            return TargetSpec(kind=kind, version=None, **overrides)
        if kind.prefix and kind.parse_rest and text.startswith(kind.prefix):
            return kind.parse_rest(text.removeprefix(kind.prefix), **overrides)
    default = default_kind()
    if default.parse_rest is None:
        raise KctsError(f"target {text!r}: the default kind {default.name} reads no word")
    return default.parse_rest(text, **overrides)


def of_backend(word: str) -> TargetKind:
    """The kind `--backend WORD` selects."""
    for kind in kinds().values():
        if kind.backend == word:
            return kind
    raise KctsError(f"unknown --backend {word!r}; use one of {', '.join(backends())}")


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
    kind = kind_of(table.get("kind", default_kind().name))
    table["kind"] = kind
    extra = sorted(set(data) - {"replication_why"})
    if extra and not kind.profile_tables:
        owners = [k.name for k in kinds().values() if k.profile_tables]
        raise KctsError(f"target profile {path}: tables {extra} belong to a {' or '.join(owners)} target "
                        f"({' or '.join(f'kind = {o!r}' for o in owners)}); a {kind.name} target has only [target]")
    declared = table.get("version")
    if kind.profile_version is None:
        table.setdefault("version", None)
    else:  # an Apache Kafka release, which the Java clients follow unless the profile names theirs
        table["version"] = kind.profile_version(None if declared is None else str(declared))
        if table["version"]:
            table.setdefault("java_clients", table["version"])
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
    else:
        kind = of_backend(backend)
        spec = kind.from_backend(kind, BackendOptions(kafka_version, brokers, bootstrap, security, image, publish_from))
    if (image or publish_from) and not spec.kind.image_options:
        owners = " or ".join(k.backend or k.name for k in kinds().values() if k.image_options)
        raise KctsError(f"--image and --publish-from belong to a {owners} target: add --backend {owners}")
    if java_clients:
        spec = replace(spec, java_clients=normalize_version(java_clients))
    if spec.kind.security_options and security != Security() and spec.security == Security():
        spec = replace(spec, security=security)
    return spec


def security_from(values: object) -> Security:
    """`Security` from parsed options (argparse or pytest)."""
    return Security(*(getattr(values, o.dest) for o in SECURITY_OPTIONS))


def target_from(o: Any, *, prepare: bool = False) -> Served:
    """The target the parsed options name (argparse's namespace or pytest's `config.option`), with the
    backend that serves it (`harness.cluster.registry.serve`); prepared first if asked (`kcts run`:
    jars, binaries; a `SetupError` names the fix)."""
    security = security_from(o)
    spec = from_options(o.backend, o.kafka_version, o.brokers, o.bootstrap_servers, security, o.java_clients,
                        o.target, o.target_profile, o.image, o.publish_from)
    return serve(spec, prepare=prepare)


def secret_env(spec: TargetSpec) -> dict[str, str]:
    """The environment that carries a target's passwords to a `kcts run` child (see to_run_args)."""
    env = {"KCTS_SASL_PASSWORD": spec.security.password, "KCTS_SSL_KEY_PASSWORD": spec.security.ssl_key_password}
    return {k: v for k, v in env.items() if v}


def to_run_args(spec: TargetSpec) -> list[str]:
    """The `kcts run` arguments that select this target (the matrix runs each target this way)."""
    if spec.profile is not None:
        return ["--target-profile", str(spec.profile), "--java-clients", spec.java_clients]
    return [*spec.kind.run_args(spec), "--java-clients", spec.java_clients]
