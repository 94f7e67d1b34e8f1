"""Faults and edits the proxy applies at runtime, one family of rules a module (the base class and
what the families share are in `base`):

    versions           what the brokers advertise: version caps, topic IDs
    errors             error codes replaced, partitions refused
    metadata_epochs    leader epochs in Metadata: behind, or missing
    epoch_end_offsets  OffsetsForLeaderEpoch end offsets
    list_offsets       the leader epoch of a ListOffsets answer
    committed          the leader epoch an OffsetFetch reads back
    epoch_validation   a Fetch or ListOffsets CurrentLeaderEpoch validated wrongly
    transactions       Fetch answers: aborted transactions (either isolation level), the last stable offset
    txn_ends           EndTxn: the outcome a transaction reaches, and how it is answered
    fetch_batches      the record batches of a Fetch answer: which are served, their epoch stamps
    timing             delays and closed connections

Two more families live beside this package: harness/proxy/allowed_rules.py (what a correct broker may
do, harness/allowed.toml) and harness/proxy/record_faults.py (a log other than the acknowledged one
served). Every rule class is named here too, so `from harness.proxy.rules import X` names any of them;
`FAMILIES` is what harness.proxy.rule_specs resolves catalogue names in.

The rules that replay documented broker bugs (harness/replays.toml names each bug and its link) make
Apache Kafka answer as the buggy broker did, on every matching answer, for as long as they are in force.
"""

from harness.proxy.rules import (
    committed,
    epoch_end_offsets,
    epoch_validation,
    errors,
    fetch_batches,
    list_offsets,
    metadata_epochs,
    timing,
    transactions,
    txn_ends,
    versions,
)
from harness.proxy.rules.base import (
    API_VERSIONS,
    EARLIEST_TIMESTAMP,
    FENCED_LEADER_EPOCH,
    FETCH,
    LATEST_TIMESTAMP,
    LIST_OFFSETS,
    METADATA,
    NO_EPOCH,
    OFFSET_FETCH,
    OFFSET_FOR_LEADER_EPOCH,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    HeldRequest,
    RequestAction,
    ResponseEdit,
    Rule,
)
from harness.proxy.rules.committed import CommittedEpochReadBack, CommittedMetadataDropped
from harness.proxy.rules.epoch_end_offsets import (
    DivergedEpochEndOffset,
    EpochAnsweredAtLogEnd,
    EpochBelowLogStartUndefined,
    FutureEpochEndsAtCurrent,
    PastEpochAnsweredWithCurrent,
    UndefinedEpochEndOffset,
    WrongEpochEndOffsets,
)
from harness.proxy.rules.epoch_validation import (
    FenceUnsetCurrentEpoch,
    IgnoreCurrentLeaderEpoch,
    StaleEpochUntilWritten,
)
from harness.proxy.rules.errors import RefusePartitions, ReplaceErrors, ReplaceTopicErrors
from harness.proxy.rules.fetch_batches import SkipBatchHoldingFetchOffset, StampBatchEpoch
from harness.proxy.rules.list_offsets import (
    LOOKUPS,
    CurrentEpochInListOffsets,
    CurrentEpochOnEmptyPartition,
    NoEpochInListOffsets,
    NoOffsetAnsweredAtStableOffset,
)
from harness.proxy.rules.metadata_epochs import NoLeaderEpochInMetadata, StaleLeaderEpoch, StaleUntilCommitRead
from harness.proxy.rules.timing import CloseConnection, Delay
from harness.proxy.rules.transactions import (
    AbortedTransactionsAtReadUncommitted,
    AbortedTransactionsNewestFirst,
    HideAbortedTransactions,
    ReadPastStableOffset,
)
from harness.proxy.rules.txn_ends import UnconfirmedEndTxnCommit
from harness.proxy.rules.versions import CapVersion, StripTopicIds

# The modules whose rule classes the catalogues and `--proxy-rule` may name (harness.proxy.rule_specs).
FAMILIES = (versions, errors, metadata_epochs, epoch_end_offsets, list_offsets, committed, epoch_validation,
            transactions, txn_ends, fetch_batches, timing)

__all__ = [
    "API_VERSIONS", "EARLIEST_TIMESTAMP", "FAMILIES", "FENCED_LEADER_EPOCH", "FETCH", "LATEST_TIMESTAMP",
    "LIST_OFFSETS", "LOOKUPS", "METADATA", "NO_EPOCH", "OFFSET_FETCH", "OFFSET_FOR_LEADER_EPOCH", "READ_COMMITTED",
    "READ_UNCOMMITTED", "AbortedTransactionsAtReadUncommitted", "AbortedTransactionsNewestFirst",
    "CapVersion", "CloseConnection", "CommittedEpochReadBack", "CommittedMetadataDropped",
    "CurrentEpochInListOffsets", "CurrentEpochOnEmptyPartition", "Delay", "DivergedEpochEndOffset",
    "EpochAnsweredAtLogEnd", "EpochBelowLogStartUndefined", "FenceUnsetCurrentEpoch", "FutureEpochEndsAtCurrent",
    "HeldRequest", "HideAbortedTransactions", "IgnoreCurrentLeaderEpoch", "NoEpochInListOffsets",
    "NoLeaderEpochInMetadata", "NoOffsetAnsweredAtStableOffset", "PastEpochAnsweredWithCurrent", "ReadPastStableOffset",
    "RefusePartitions", "ReplaceErrors", "ReplaceTopicErrors", "RequestAction", "ResponseEdit", "Rule",
    "SkipBatchHoldingFetchOffset", "StaleEpochUntilWritten", "StaleLeaderEpoch", "StaleUntilCommitRead",
    "StampBatchEpoch", "StripTopicIds", "UnconfirmedEndTxnCommit", "UndefinedEpochEndOffset", "WrongEpochEndOffsets",
]
