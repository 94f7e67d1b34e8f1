"""Topic administration with waits on real state, not on futures alone."""

from __future__ import annotations

import concurrent.futures
import re
from contextlib import AbstractContextManager
from itertools import count

from confluent_kafka.admin import AdminClient, NewTopic

from harness import confluent, progress
from harness.cluster.base import Cluster
from harness.confluent import QUIET
from harness.errors import TargetRefused
from harness.waiting import asked_again

__all__ = ["QUIET", "admin_client", "create_topic", "topic_name"]
_seq = count(1)


def admin_client(cluster: Cluster, lasting: bool = False) -> AbstractContextManager[AdminClient]:
    """An admin client of `cluster`, as a context manager (see harness.confluent)."""
    return confluent.admin(cluster.client_config(), lasting=lasting)


def topic_name(prefix: str, hint: str) -> str:
    """A unique, valid topic name that says which test made it."""
    hint = re.sub(r"[^a-zA-Z0-9._-]+", "-", hint).strip("-")[:120]
    return f"{prefix}-{hint}-{next(_seq)}"


def _too_few_unfenced(refused: TargetRefused | None) -> bool:
    return refused is not None and "INVALID_REPLICATION_FACTOR" in str(refused)


def create_topic(
    cluster: Cluster,
    admin: AdminClient,
    name: str,
    partitions: int = 1,
    replication_factor: int = 3,
    config: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> str:
    """Create a topic; wait until every partition has a leader and a full ISR, as every broker sees it.

    Each broker learns of a new topic from the controller on its own time; a request by topic ID
    sent to one that has not yet gets UNKNOWN_TOPIC_ID, so all of them must agree first.
    """
    rf = min(replication_factor, len(cluster.broker_ids))
    topic = NewTopic(name, partitions, rf, config=config or {})

    unanswered: list[float] = []

    def attempt(client: AdminClient) -> TargetRefused | None:
        try:
            confluent.admin_result(client, client.create_topics([topic])[name], timeout)
        except concurrent.futures.TimeoutError as exc:
            # No answer yet is no refusal: under load the answer may come late, or the topic may
            # already exist. Its partitions appearing (waited on below) is the answer.
            unanswered.append(timeout)
            progress.step(f"CreateTopics of {name} unanswered after {timeout:.0f} s ({exc!r}); waiting for the topic")
        except Exception as exc:  # noqa: BLE001 - whatever the future raises is the answer, returned to be judged
            # Some of librdkafka's errors (a timeout) print as nothing: the reason is then their repr.
            refused = TargetRefused(f"the target refused to create topic {name} (rf={rf}, config={config}): "
                                    f"{str(exc) or repr(exc)}")
            refused.__cause__ = exc
            return refused
        return None

    def create(client: AdminClient) -> None:
        # Too few unfenced brokers for the replicas is INVALID_REPLICATION_FACTOR, and a broker that
        # missed its session timeout is fenced only until its next heartbeat: on a loaded machine a
        # side cluster's one broker was ("All brokers are currently fenced"). Asked again within
        # `timeout`; what persists is the refusal.
        refused, earlier = asked_again(lambda: attempt(client), _too_few_unfenced, timeout, backoff=0.5)
        if refused is not None:
            if earlier:
                raise TargetRefused(f"{refused} (the same for {len(earlier) + 1} asks over at least {timeout:.0f} s)"
                                    ) from refused.__cause__
            raise refused

    why = cluster.state.no_create_topics()
    if why is not None:
        cluster.create_topic_itself(name, partitions, rf, config, why)
    else:
        try:
            create(admin)
        except TargetRefused as refused:
            if "NOT_CONTROLLER" not in str(refused):
                raise
            # A long-lived client may still name a controller that has since moved (kfake answers
            # CreateTopics on its controller only); a new client asks the target again.
            with admin_client(cluster) as fresh:
                create(fresh)
    for p in range(partitions):
        try:
            cluster.state.wait_for_partition(
                name, p, lambda s: s.leader >= 0 and len(s.isr) == rf, f"leader and {rf} in-sync replicas", timeout
            )
        except TargetRefused as exc:
            if unanswered:
                raise TargetRefused(f"the target did not create topic {name}: its CreateTopics got no answer in "
                                    f"{timeout:.0f} s, and then: {exc}") from exc
            raise
        for broker in cluster.state.running_brokers():
            cluster.state.wait_for_partition(name, p, lambda s: s.leader >= 0, f"a leader, as broker {broker} sees it",
                                             timeout, broker=broker)
    return name
