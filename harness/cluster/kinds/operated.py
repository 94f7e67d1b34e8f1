"""A cluster kcts does not start, under the operator's own commands (`--target-profile FILE` with
`kind = "operated"`): Kubernetes, VMs under systemd, containers started by hand, a vendor's control
plane. Served by harness/cluster/operated.py (its BACKEND); the profile's tables are read by
harness/cluster/operations.py.

What the harness may do to it is what the profile's `[operations]` allow: stopping, killing and
pausing brokers needs all five of stop, start, kill, pause and resume (a fault the harness could not
undo is not one it may make); cutting a broker off the network needs isolate and heal; cutting single
directed links between nodes (controller included, where [controller] gives its id) cut and mend; pausing the
controller quorum pause_controller and resume_controller; node logs a logs command. Leaders move by
reassignment and ElectLeaders where the profile names an Apache Kafka release, else by the profile's
move_leader command where it has one.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.cluster.model import HOOK, REASSIGNMENT, Capabilities, TargetKind, TargetSpec
from harness.errors import KctsError
from harness.kafka.dist import normalize_version

NAME = "operated"

# The operations that make up each capability (harness.cluster.operations reads the commands).
FAULTS = ("stop", "start", "kill", "pause", "resume")
PARTITIONS = ("isolate", "heal")
CONTROLLER = ("pause_controller", "resume_controller")
LINKS = ("cut", "mend")


def operations(spec: TargetSpec) -> frozenset[str]:
    """The names of the operations the profile gives a command for."""
    table = spec.tables.get("operations")
    return frozenset(k for k in table if k not in ("timeout", "start_timeout")) if isinstance(table, Mapping) \
        else frozenset()


def _capabilities(spec: TargetSpec) -> Capabilities:
    given = operations(spec)
    release = spec.version is not None
    # The operator's own way of moving a leader wins; else reassignment, as on any Apache Kafka release.
    leader_moves = HOOK if "move_leader" in given else REASSIGNMENT if release else None
    return Capabilities(
        fault_control=given.issuperset(FAULTS), node_logs="logs" in given, side_clusters=release, owned=False,
        leader_moves=leader_moves,
        # An Apache Kafka release keeps a log per replica; any other broker says so in its profile.
        replication=True if release else None,
        controller=given.issuperset(CONTROLLER), partitions=given.issuperset(PARTITIONS),
        links=given.issuperset(LINKS),
        no_links="the operated target's profile has no cut and mend commands for single links between its "
                 "nodes (docs/recipes.md: link faults)")


def _validate(spec: TargetSpec) -> None:
    if not spec.bootstrap:
        raise KctsError(f"an {NAME} target's profile needs [target] bootstrap = \"host:port[,...]\": where clients "
                        "reach the cluster")
    if spec.profile is None:
        raise KctsError(f"an {NAME} target is described by a profile: --target-profile FILE with [operations]")


KIND = TargetKind(
    name=NAME,
    spelling="(a profile with kind = \"operated\")   a cluster kcts does not start, under the operator's commands",
    capabilities=_capabilities,
    run_args=lambda spec: ["--target-profile", str(spec.profile)],
    security_options=True,
    profile_version=lambda version: normalize_version(version) if version else version,
    profile_tables=True,
    apache_release=lambda spec: spec.version is not None,
    validate=_validate,
)
