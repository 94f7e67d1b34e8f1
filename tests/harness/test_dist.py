"""Kafka from Maven Central: versions, the per-user cache, and one clear error per bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import SetupError
from harness.kafka import dist


@pytest.mark.parametrize(
    ("requested", "expected"), [("4.4.0", "4.4.0"), ("4.0.x", "4.0.2"), ("3.9.x", "3.9.2"), ("4.3.1", "4.3.1")]
)
def test_version_lines_resolve_to_known_releases(requested: str, expected: str) -> None:
    assert dist.normalize_version(requested) == expected


@pytest.mark.parametrize("bad", ["latest", "4.4", "4.4.0;rm", ""])
def test_malformed_version_is_rejected_with_the_fix(bad: str) -> None:
    with pytest.raises(SetupError, match=r"--kafka-version like 4\.4\.0"):
        dist.normalize_version(bad)


def test_pre_kraft_version_is_rejected() -> None:
    with pytest.raises(SetupError, match=r"3\.3\.x or newer"):
        dist.normalize_version("2.8.1")


def test_unknown_version_names_the_known_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    with pytest.raises(SetupError, match=r"9\.9\.9 is not on Maven Central.*known versions: 4\.4\.0"):
        dist.resolve("9.9.9")


def test_unreachable_registry_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = tmp_path / "settings.xml"
    # A mirror on a loopback port nothing listens on: Maven's "Connection refused", at once.
    settings.write_text(
        "<settings><mirrors><mirror><id>dead</id><mirrorOf>*</mirrorOf>"
        "<url>http://127.0.0.1:9/maven2</url></mirror></mirrors></settings>"
    )
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KCTS_MAVEN_ARGS", f"-s {settings} -Dmaven.repo.local={tmp_path / 'repo'}")
    with pytest.raises(SetupError, match=r"cannot reach Maven Central.*settings\.xml"):
        dist.resolve("4.3.1")


def test_missing_maven_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SetupError, match=r"mvn not found.*apt-get install maven"):
        dist.resolve("4.3.0")


def test_missing_java_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SetupError, match=r"java not found.*openjdk-17"):
        dist.check_java()


def test_old_java_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SetupError, match="Java 17 or newer, found 11"):
        dist.check_java()


def test_second_resolve_reads_the_cache_without_maven(monkeypatch: pytest.MonkeyPatch) -> None:
    first = dist.resolve("4.4.0")
    monkeypatch.setenv("PATH", "/nonexistent")  # Maven would be unreachable now
    again = dist.resolve("4.4.0")
    assert again == first and again.jar("kafka-clients").name == "kafka-clients-4.4.0.jar"
    assert again.jar("kafka_2.13").exists()


def test_a_killed_fetchs_staging_folder_is_removed_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fetch killed mid-way (bootstrap's background one at its bound) leaves its copy of the jars behind."""
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    stale = tmp_path / "kafka" / "4.3.0" / "libs.tmp999999"
    stale.mkdir(parents=True)
    (stale / "kafka_2.13-4.3.0.jar").touch()
    with pytest.raises(SetupError, match=r"mvn not found"):
        dist.resolve("4.3.0")
    assert not stale.exists()
