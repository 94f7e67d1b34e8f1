"""On a real one-broker cluster whose broker is fenced while it still serves clients, an admin request made
then is answered once the broker is unfenced (harness.confluent.admin_result), where librdkafka alone
waits out its whole timeout ("Failed while waiting for controller").

A gate run met this on its SASL side cluster, whose broker missed its session timeout on a loaded
machine (tests/harness/test_admin_controller_lookup.py has the mechanism, against a stand-in). Here the
fence is made on purpose: new TCP connections to the controller are dropped (an nftables table of the
session, on loopback) and the controller is paused for 0.6 s, so the broker's heartbeat channel (its
RPC times out after 250 ms) disconnects and cannot connect again, while its metadata fetch connection
lives on. The controller fences the broker after its 3 s session timeout, the broker learns so, and it
answers Metadata with no broker and no controller (-1). The connections are allowed again `LIFT` s after
the admin request is made; the broker's next heartbeat unfences it.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from harness import confluent, session
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.network.links import session_table, unavailable_reason
from harness.protocol.client import RawClient
from harness.waiting import WaitTimeout, wait_until

pytestmark = [
    pytest.mark.live, pytest.mark.heavy,
    pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason())),
]

LIFT = 3.0  # s after the admin request is made, new connections to the controller are allowed again


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(LocalClusterSpec(brokers=1)) as c:
        yield c


def _answers_as_fenced(cluster: LocalCluster) -> bool:
    with RawClient.connect(*cluster.probe_address(1), spec=cluster.target.protocol_specs, timeout=10) as probe:
        answer = probe.send("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False,
                                             "IncludeTopicAuthorizedOperations": False})
    return not answer["Brokers"] and answer["ControllerId"] == -1


class Fence:
    """New connections to the controller dropped, by a table of the session (the reaper removes it if
    the run dies); `lift_later` allows them again `LIFT` s on, and `lifted` says whether it has."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.table = session_table(session.current().id, "no_new_controller_connections")
        self.lifted = threading.Event()
        self._timer: threading.Timer | None = None
        subprocess.run(["nft", "-f", "-"], check=True, text=True, input=(
            f"table inet {self.table} {{\n  chain out {{\n    type filter hook output priority 0; policy accept;\n"
            f"    tcp dport {cluster.controller_port} ct state new drop\n  }}\n}}\n"))

    def lift(self) -> None:
        subprocess.run(["nft", "delete", "table", "inet", self.table], capture_output=True)
        self.lifted.set()

    def lift_later(self) -> None:
        self._timer = threading.Timer(LIFT, self.lift)
        self._timer.start()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()
        self.lift()


def _fence(cluster: LocalCluster) -> bool:
    """The controller paused past the heartbeat's RPC timeout; whether the broker then answers as fenced."""
    cluster.pause_controller()
    try:
        time.sleep(0.6)  # the fault itself: longer than the heartbeat's 250 ms RPC timeout
    finally:
        cluster.resume_controller()
    try:
        wait_until(lambda: _answers_as_fenced(cluster), 8, lambda: "broker 1 answering Metadata as fenced")
    except WaitTimeout:
        return False
    return True


@pytest.fixture
def fenced(cluster: LocalCluster) -> Iterator[Fence]:
    """Broker 1 fenced, and answering Metadata so, until the test lifts the fence (or its end does). The
    recipe is tried up to 3 times: about one try in five the broker was not seen fenced (not traced)."""
    fence = Fence(cluster)
    try:
        if not any(_fence(cluster) for _ in range(3)):
            pytest.fail("broker 1 never answered Metadata as fenced, in 3 tries of the recipe")
        yield fence
    finally:
        fence.close()
    wait_until(lambda: not _answers_as_fenced(cluster), 30, lambda: "broker 1 unfenced again")


def _create(admin: AdminClient, name: str, request_timeout: float) -> Future[None]:
    future: Future[None] = admin.create_topics([NewTopic(name, 1, 1)], request_timeout=request_timeout)[name]
    return future


def test_librdkafka_alone_waits_for_a_controller_until_its_timeout(
    cluster: LocalCluster, fenced: Fence
) -> None:
    """The client gap admin_result works around, on a real broker: the request fails after its whole
    8 s, though the broker is unfenced about `LIFT` + 1 s in."""
    with confluent.admin(cluster.client_config()) as admin:
        future = _create(admin, "kcts-fenced-alone", request_timeout=8)
        fenced.lift_later()
        with pytest.raises(KafkaException, match="waiting for controller"):
            future.result(timeout=20)


def test_a_topic_asked_for_while_the_broker_is_fenced_is_created_once_it_is_not(
    cluster: LocalCluster, fenced: Fence
) -> None:
    with confluent.admin(cluster.client_config()) as admin:
        start = time.monotonic()
        future = _create(admin, "kcts-fenced-created", request_timeout=30)
        fenced.lift_later()
        confluent.admin_result(admin, future, 25)
        took = time.monotonic() - start
    assert fenced.lifted.is_set(), f"created after {took:.1f} s, before the broker could be unfenced"
    assert took < LIFT + 10, f"created {took:.1f} s after it was asked, {took - LIFT:.1f} s after the lift"
