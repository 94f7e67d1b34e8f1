"""A group member resuming from its group's committed offset.

`resume`: 20 plain records are written to partition 0; the harness commits offset `COMMITTED` for a
new group outside any generation (OffsetCommit, as admin tools do) and reads it back with
OffsetFetch; then a client stack's consumer (its consumers driver, harness/clients/stacks) joins the
group with auto.offset.reset earliest, so that a member that cannot read the commit back would start
from offset 0, and is given READ_THROUGH_S to hand the application the last record. What it handed by
then, and the errors it reported, are the history.
"""

from __future__ import annotations

from harness import confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients.driver import READ_THROUGH_S, stopped_on_exit
from harness.clients.produce_read import produce
from harness.clients.stacks import client_version, consumers_driver
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.histories.client_reads import GroupResume
from harness.histories.observations import ClientEvent
from harness.protocol import errors
from harness.protocol.types import ZERO_UUID
from harness.waiting import WaitTimeout

RECORDS = 20
COMMITTED = 10


def resume(cluster: Cluster, topic: str, group: str, client: str) -> GroupResume:
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, rr.RawConnector(cluster) as raw:
        produce(producer, topic, [f"resume-{i}".encode() for i in range(RECORDS)])
        # Reconnecting: the coordinator lookup (FindCoordinator) is asked again after a timeout.
        any_broker = raw(cluster.state.running_brokers()[0], reconnect=True)
        # A broker whose Metadata stops below v10 gives no topic ID (KIP-516): the commit and its
        # read-back then name the topic, at the versions such a broker offers.
        tid = rr.metadata(any_broker, topic).get("TopicId", ZERO_UUID)
        coordinator = raw(tx.coordinator_id(any_broker, group, 0), reconnect=True)
        version = coordinator.max_version("OffsetCommit")
        code = rr.offset_commit(coordinator, version, group, topic, tid, 0, COMMITTED, -1, resend=True)
        require_target(code == 0, f"the group's commit of offset {COMMITTED} (OffsetCommit v{version}, sent by the "
                                  f"harness) was refused: {errors.describe(code)}")
        read_back = rr.offset_fetch(coordinator, coordinator.max_version("OffsetFetch"), group, topic, tid, 0)
        require_target(read_back["error"] == 0 and read_back["offset"] == COMMITTED,
                       f"the group's commit of offset {COMMITTED} read back as {read_back}")
    name = f"{client}/resume"
    driver = consumers_driver(client, cluster.java_clients, cluster.client_config(), topic)
    with driver, stopped_on_exit(driver):
        driver.wait_ready()
        driver.send_line(f"subscribe {name} earliest {group}")
        try:
            driver.wait_for(lambda e: e.get("event") == "record" and e["consumer"] == name
                            and e["offset"] >= RECORDS - 1, READ_THROUGH_S, f"{name} reads through {RECORDS - 1}")
        except WaitTimeout:
            pass  # what it handed by the bound is the history: the check says what it owed
        events = tuple(ClientEvent.of(e) for e in driver.events if e.get("consumer") == name)
        version_named = client_version(driver) or client
    return GroupResume(version_named, COMMITTED, RECORDS, tuple(int(e.get("offset")) for e in events
                                                                 if e.event == "record"),
                       tuple(e for e in events if e.event in ("error", "command_failed")), READ_THROUGH_S)
