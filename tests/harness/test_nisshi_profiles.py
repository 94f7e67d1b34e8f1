"""The shipped Nisshi profiles (harness/profiles/nisshi*.toml), without building or starting Nisshi:
they parse, share one crates.io build with the storage engines their nodes use, pin the Rust its
Cargo.lock needs, let Nisshi create its own PostgreSQL schema, and a machine without cargo gets one
clear error saying how to install it.

Nisshi is Tansu renamed (tansu-io/tansu commit 7bbbb75 "tansu -> nisshi"); `kcts run --target
nisshi-memory` and `--target nisshi` build it once (cargo, 25-60 minutes on 2 cores).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cluster.builds import build_root
from harness.cluster.command import load_profile, prepare
from harness.cluster.services import PostgresService
from harness.cluster.target import from_profile, parse, profile_path
from harness.errors import SetupError

NISSHI = ("nisshi", "nisshi-memory", "nisshi-docker")


@pytest.mark.parametrize("name", NISSHI)
def test_a_nisshi_profile_parses_into_the_0_8_1_build_shared_by_all(name: str) -> None:
    spec = from_profile(profile_path(name))
    profile = load_profile(spec)
    assert (spec.kind.name, spec.name, spec.version, spec.replication) == ("command", name, "0.8.1", False)
    assert profile.root == build_root("nisshi", "0.8.1")
    assert profile.build is not None and profile.build.creates == "{root}/bin/nisshi"
    if profile.node.image is None:
        assert profile.node.command[:2] == ["{root}/bin/nisshi", "broker"]
    else:  # docker/nisshi/Dockerfile: the binary of the same build is the entry point
        assert (profile.node.image.dockerfile, profile.node.image.binary) == ("nisshi", "{root}/bin/nisshi")
        assert profile.node.command[0] == "broker"
    assert parse(name).name == name  # the one word of `kcts run --target nisshi-memory`


def test_the_nisshi_profiles_build_the_same_binary_the_same_way() -> None:
    """One build serves both profiles only if they ask for the same one: a profile that differs would
    find the other's binary in the shared cache and run it without its own features."""
    builds = [load_profile(from_profile(profile_path(name))).build for name in NISSHI]
    assert len({(repr(b.command), repr(b.env), repr(b.needs)) for b in builds if b is not None}) == 1, builds


def test_the_build_is_the_crates_io_release_with_the_engines_the_nodes_use() -> None:
    """memory:// is the dynostore engine and postgres:// the postgres one (nisshi 0.8.1's
    src/bin/nisshi.rs maps each URL scheme to its feature); the lock file needs rustc 1.96 (rama 0.4.0)."""
    build = load_profile(from_profile(profile_path("nisshi"))).build
    assert build is not None
    argv = build.command
    assert argv[:7] == ["cargo", "install", "--locked", "nisshi", "--version", "0.8.1", "--no-default-features"]
    features = set(argv[argv.index("--features") + 1].split(","))
    assert features == {"dynostore", "postgres"}
    assert build.env["RUSTUP_TOOLCHAIN"] == "1.96.0"
    memory = load_profile(from_profile(profile_path("nisshi-memory"))).node.command
    assert memory[memory.index("--storage-engine") + 1].startswith("memory://")


def test_nisshi_on_postgresql_creates_its_own_schema(tmp_path: Path) -> None:
    """Nisshi 0.8.1 runs the schema of its own sources at start (nisshi-storage-sql, Postgres::ensure_schema,
    under an advisory lock so that three brokers starting together create it once); Tansu 0.6.0's
    schema file run beforehand would make Nisshi find tables without a recorded version and only
    record it, leaving out what 0.8.1 added."""
    profile = load_profile(from_profile(profile_path("nisshi")))
    (table,) = profile.services
    service = PostgresService(table, profile.path, tmp_path, 0)
    assert service.init_sql == []
    assert "{postgres_url}" in profile.node.command


def test_without_cargo_the_first_run_says_how_to_install_rust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.cargo/bin/cargo
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SetupError, match=r"cargo not found on PATH.*rustup.*Rust 1\.96\.0"):
        prepare(from_profile(profile_path("nisshi-memory")))
    assert not (tmp_path / "cache").exists()  # refused before any build began
