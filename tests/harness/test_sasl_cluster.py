"""The local backend's SASL_PLAINTEXT + StandardAuthorizer mode: users authenticate, ACLs decide."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, KafkaException

from harness import confluent
from harness.clients.admin import admin_client, create_topic
from harness.cluster.local import LocalCluster, LocalClusterSpec, SaslConfig
from harness.waiting import wait_until

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def sasl_cluster() -> Iterator[LocalCluster]:
    with LocalCluster(LocalClusterSpec(brokers=1, sasl=SaslConfig())) as c:
        yield c  # type: ignore[misc]


def test_user_without_acl_is_refused_and_super_user_is_not(sasl_cluster: LocalCluster) -> None:
    """alice has no ACL: her produce fails with TOPIC_AUTHORIZATION_FAILED (29); admin's succeeds."""
    with admin_client(sasl_cluster) as admin:
        topic = create_topic(sasl_cluster, admin, "acl-check", replication_factor=1)
    outcomes: dict[str, KafkaError | None] = {}
    for user in ("admin", "alice"):
        config = {**sasl_cluster.client_config(user), "message.timeout.ms": 10000}
        with confluent.producer(config, flush_timeout=15) as producer:

            def report(err: KafkaError | None, _msg: object, user: str = user) -> None:
                outcomes[user] = err

            try:
                producer.produce(topic, b"x", on_delivery=report)
            except KafkaException as exc:
                outcomes[user] = exc.args[0]
    assert outcomes["admin"] is None, outcomes
    alice = outcomes["alice"]
    assert alice is not None and alice.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, outcomes


def test_wrong_password_is_an_authentication_failure(sasl_cluster: LocalCluster) -> None:
    """A client with a wrong password is told so: librdkafka's _AUTHENTICATION error, not a hang."""
    errors: list[KafkaError] = []
    config = {**sasl_cluster.client_config("alice"), "sasl.password": "wrong", "error_cb": errors.append}
    with confluent.producer(config, flush_timeout=0) as producer:

        def refused() -> bool:
            producer.poll(0.1)
            return any(e.code() == KafkaError._AUTHENTICATION for e in errors)

        wait_until(refused, 20, lambda: f"client errors so far: {errors}")
