"""A Kafka protocol proxy for tests: observe every exchange, inject faults, keep clients behind it."""

from harness.proxy.recorder import ProxiedExchange, Recording
from harness.proxy.rules import (
    CapVersion,
    CloseConnection,
    CommittedEpochReadBack,
    CurrentEpochInListOffsets,
    Delay,
    FenceUnsetCurrentEpoch,
    FutureEpochEndsAtCurrent,
    HideAbortedTransactions,
    IgnoreCurrentLeaderEpoch,
    NoLeaderEpochInMetadata,
    RefusePartitions,
    ReplaceErrors,
    ReplaceTopicErrors,
    Rule,
    SkipBatchHoldingFetchOffset,
    StaleLeaderEpoch,
    StripTopicIds,
    WrongEpochEndOffsets,
)
from harness.proxy.server import Proxy, ProxyError

__all__ = [
    "CapVersion",
    "CloseConnection",
    "CommittedEpochReadBack",
    "CurrentEpochInListOffsets",
    "Delay",
    "FenceUnsetCurrentEpoch",
    "FutureEpochEndsAtCurrent",
    "HideAbortedTransactions",
    "IgnoreCurrentLeaderEpoch",
    "NoLeaderEpochInMetadata",
    "ProxiedExchange",
    "Proxy",
    "ProxyError",
    "Recording",
    "RefusePartitions",
    "ReplaceErrors",
    "ReplaceTopicErrors",
    "Rule",
    "SkipBatchHoldingFetchOffset",
    "StaleLeaderEpoch",
    "StripTopicIds",
    "WrongEpochEndOffsets",
]
