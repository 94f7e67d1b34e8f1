"""The protocol's special values in offset and epoch fields, named once."""

NO_EPOCH = -1  # CurrentLeaderEpoch / LeaderEpoch unset: the epoch check is skipped (KIP-320)
CONSUMER_REPLICA_ID = -1  # ReplicaId of a consumer's Fetch or ListOffsets
DEBUGGING_REPLICA_ID = -2  # ReplicaId that any replica answers with its own log end offset
EARLIEST_TIMESTAMP = -2  # ListOffsets: the log start offset
LATEST_TIMESTAMP = -1  # ListOffsets: the log end offset (or the last stable offset, read_committed)
