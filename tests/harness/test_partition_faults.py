"""Which faults a target's capabilities allow: a network partition only where a node can be cut off."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness.cluster.kinds.docker import docker_target
from harness.cluster.target import TargetSpec, parse
from harness.errors import FaultControlUnavailable
from harness.nemesis.faults import CleanStop, Crash, Isolate, Pause, node_faults


@dataclass
class Caps:
    """Only what node_faults and Isolate read of a cluster: its target and capabilities."""

    target: TargetSpec

    @property
    def capabilities(self) -> object:
        return self.target.capabilities


def test_the_docker_backend_adds_a_network_partition_to_the_node_faults() -> None:
    assert node_faults(Caps(docker_target("4.4.0", None))) == (Crash, CleanStop, Pause, Isolate)  # type: ignore[arg-type]


@pytest.mark.parametrize("target", ["4.4.0", "kfake", "tansu", "external:127.0.0.1:9092"])
def test_targets_that_cannot_be_cut_off_get_no_partition(target: str) -> None:
    assert Isolate not in node_faults(Caps(parse(target)))  # type: ignore[arg-type]


def test_isolating_a_broker_of_a_target_without_partitions_is_fault_control_unavailable() -> None:
    with pytest.raises(FaultControlUnavailable, match=r"needs network partitions; the target is 4\.4\.0"):
        Isolate(Caps(parse("4.4.0")), 1).inject()  # type: ignore[arg-type]
