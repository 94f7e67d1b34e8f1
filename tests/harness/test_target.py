"""The one target model: every way in (matrix word, options, profile file) gives the same TargetSpec."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cluster.model import Security
from harness.cluster.registry import default_kind
from harness.cluster.target import from_options, from_profile, parse, to_run_args
from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION

NO_SECURITY = Security()


def test_the_matrix_word_and_the_options_name_the_same_target() -> None:
    assert parse("4.3.1") == from_options("local", "4.3.1", 3, None, NO_SECURITY, None)
    assert parse("kfake") == from_options("kfake", None, 3, None, NO_SECURITY, None)
    assert parse("librdkafka-mock") == from_options("librdkafka-mock", None, 3, None, NO_SECURITY, None)
    assert parse("external:127.0.0.1:9092") == from_options("external", None, 3, "127.0.0.1:9092", NO_SECURITY, None)


@pytest.mark.parametrize("word", ["4.4.0", "4.0.x", "kfake", "librdkafka-mock", "external:127.0.0.1:9092"])
def test_run_arguments_parse_back_to_the_same_target(word: str) -> None:
    """The matrix runs each target as `kcts run <to_run_args>`; those arguments must name it again."""
    spec = parse(word)
    args = to_run_args(spec)

    def value(flag: str) -> str | None:
        return args[args.index(flag) + 1] if flag in args else None

    again = from_options(value("--backend") or "local", value("--kafka-version"), int(value("--brokers") or 3),
                         value("--bootstrap-servers"), NO_SECURITY, value("--java-clients"))
    assert again == spec


def test_java_clients_follow_the_broker_on_apache_and_default_elsewhere() -> None:
    assert parse("4.3.1").java_clients == "4.3.1"
    assert parse("kfake").java_clients == DEFAULT_VERSION
    assert from_options("kfake", None, 3, None, NO_SECURITY, "4.0.x").java_clients == "4.0.2"


def test_kafka_version_on_a_target_with_its_own_broker_is_an_error() -> None:
    with pytest.raises(KctsError, match=r"--kafka-version names the broker version .* --java-clients"):
        from_options("external", "4.3.1", 3, "127.0.0.1:9092", NO_SECURITY, None)


def test_capabilities_come_from_the_kind() -> None:
    assert parse("4.4.0").capabilities.fault_control and parse("4.4.0").capabilities.leader_moves == "reassignment"
    kfake = parse("kfake").capabilities
    assert kfake.fault_control and not kfake.side_clusters and kfake.owned and kfake.leader_moves == "api"
    assert kfake.replication is False and "one log per partition" in kfake.no_replication
    mock = parse("librdkafka-mock").capabilities
    assert mock.fault_control and mock.owned and mock.leader_moves == "api" and not mock.node_logs
    assert mock.replication is False and "Let Replicas == ISRs" in mock.no_replication
    external = parse("external:127.0.0.1:9092").capabilities
    assert not external.owned and not external.node_logs and external.replication is None
    assert external.leader_moves is None and not external.fault_control


def test_a_command_profile_keeps_its_backend_tables_and_its_word_on_replication(tmp_path: Path) -> None:
    profile = tmp_path / "broker-x.toml"
    profile.write_text(
        '[target]\nkind = "command"\nname = "broker-x"\nversion = "1.2"\nbrokers = 2\nreplication = false\n'
        'replication_why = "one shared store"\n[node]\ncommand = ["broker-x", "{port}"]\n'
        '[leader_move]\ncommand = ["mv", "{topic}"]\n'
    )
    spec = from_profile(profile)
    caps = spec.capabilities
    assert (spec.kind.name, spec.label, spec.brokers, spec.profile) == ("command", "broker-x", 2, profile)
    assert spec.tables["node"]["command"] == ["broker-x", "{port}"]
    assert caps.leader_moves == "hook" and caps.replication is False and caps.no_replication == "one shared store"
    assert to_run_args(spec)[:2] == ["--target-profile", str(profile)]


def test_a_profile_typo_is_one_error_naming_the_field_and_the_known_ones(tmp_path: Path) -> None:
    profile = tmp_path / "typo.toml"
    profile.write_text('[target]\nkind = "kfake"\nbrokerz = 3\n')
    with pytest.raises(KctsError, match=r"unknown \[target\] fields \['brokerz'\]; known: .*'brokers'"):
        from_profile(profile)
    profile.write_text('[target]\nkind = "kfake"\n[node]\ncommand = ["x"]\n')
    with pytest.raises(KctsError, match=r"tables \['node'\] belong to a command or operated target"):
        from_profile(profile)


def test_a_missing_profile_names_the_shipped_ones() -> None:
    with pytest.raises(KctsError, match=r"no target profile 'nope'.*shipped profiles"):
        from_profile(Path("nope"))


def test_a_profile_file_names_a_target_and_keeps_its_password_out_of_reprs(tmp_path: Path) -> None:
    profile = tmp_path / "vendor.toml"
    profile.write_text(
        '[target]\nkind = "external"\nbootstrap = "127.0.0.1:19092"\nname = "vendor-x"\njava_clients = "4.3.1"\n'
        '[target.security]\nprotocol = "SASL_PLAINTEXT"\nmechanism = "PLAIN"\nusername = "u"\npassword = "s3cret"\n'
    )
    spec = from_profile(profile)
    got = (spec.kind.name, spec.bootstrap, spec.label, spec.java_clients)
    assert got == ("external", "127.0.0.1:19092", "vendor-x", "4.3.1")
    assert spec.security.client_config()["sasl.password"] == "s3cret"
    assert "s3cret" not in repr(spec) and "s3cret" not in str(spec.environment())
    assert "s3cret" not in " ".join(to_run_args(spec))


@pytest.mark.parametrize(("text", "error"), [
    ('[target]\nkind = "tansu"\n', "unknown target kind 'tansu'"),
    ('[target]\nkind = "external"\n', "needs a bootstrap address"),
    ('[target]\nversion = "4.4"\n', "not a Kafka version"),
    ('[target]\nbrokerz = 3\n', "unknown \\[target\\] fields \\['brokerz'\\]"),
    ("kind = 1\n", "has no \\[target\\] table"),
])
def test_a_bad_profile_is_one_clear_error(tmp_path: Path, text: str, error: str) -> None:
    profile = tmp_path / "bad.toml"
    profile.write_text(text)
    with pytest.raises(KctsError, match=error):
        from_profile(profile)


def test_the_default_target_is_a_local_apache_cluster_of_the_default_version() -> None:
    default = default_kind()
    assert (default.name, default.backend) == ("apache", "local")
    spec = from_options(str(default.backend), None, 3, None, NO_SECURITY, None)
    assert (spec.kind, spec.version, spec.brokers, spec.java_clients) == (default, DEFAULT_VERSION, 3, DEFAULT_VERSION)
    assert parse(DEFAULT_VERSION) == spec
    assert parse("kfake").kind.name == "kfake"


def test_a_profile_without_a_kind_is_the_default_kind_and_its_release_leads_the_java_clients(tmp_path: Path) -> None:
    profile = tmp_path / "plain.toml"
    profile.write_text('[target]\nversion = "4.0.x"\nbrokers = 1\n')
    spec = from_profile(profile)
    assert (spec.kind, spec.version, spec.java_clients, spec.label) == (default_kind(), "4.0.2", "4.0.2", "4.0.2")


def test_an_external_profile_may_declare_its_release(tmp_path: Path) -> None:
    """Its version is read as a release (normalized, the Java clients follow it); none by default."""
    profile = tmp_path / "declared.toml"
    profile.write_text('[target]\nkind = "external"\nbootstrap = "127.0.0.1:1"\nversion = "4.0.x"\n')
    spec = from_profile(profile)
    assert (spec.version, spec.java_clients, spec.capabilities.side_clusters) == ("4.0.2", "4.0.2", True)
    profile.write_text('[target]\nkind = "external"\nbootstrap = "127.0.0.1:1"\n')
    spec = from_profile(profile)
    assert (spec.version, spec.java_clients, spec.capabilities.side_clusters) == (None, DEFAULT_VERSION, False)


def test_a_command_profile_keeps_its_own_version_as_written(tmp_path: Path) -> None:
    profile = tmp_path / "own.toml"
    profile.write_text('[target]\nkind = "command"\nversion = "0.8.1"\n[node]\ncommand = ["b", "{port}"]\n')
    spec = from_profile(profile)
    assert (spec.version, spec.java_clients, spec.apache_release) == ("0.8.1", DEFAULT_VERSION, False)


def test_image_options_belong_to_the_docker_backend() -> None:
    with pytest.raises(KctsError, match=r"--image and --publish-from belong to a docker target: add --backend docker"):
        from_options("local", None, 3, None, NO_SECURITY, None, image="apache/kafka:4.4.0")
    spec = from_options("docker", None, 1, None, NO_SECURITY, None, image="apache/kafka:4.3.1", publish_from=20000)
    assert (spec.kind.name, spec.version, spec.image, spec.publish_from) == ("docker", "4.3.1", "apache/kafka:4.3.1",
                                                                             20000)


def test_the_security_options_reach_an_external_target_named_by_target() -> None:
    sasl = Security(protocol="SASL_PLAINTEXT", mechanism="PLAIN", username="u", password="p")
    assert from_options("local", None, 3, None, sasl, None, target="external:127.0.0.1:9092").security == sasl
    assert from_options("local", None, 3, None, sasl, None, target="kfake").security == NO_SECURITY
    assert from_options("external", None, 3, "127.0.0.1:9092", sasl, None).security == sasl


def test_an_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(KctsError, match=r"unknown --backend 'nope'; use one of local, docker, external, kfake"):
        from_options("nope", None, 3, None, NO_SECURITY, None)
