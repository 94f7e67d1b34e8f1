"""Histories: what a scenario observed, typed once, for the checks that judge it.

One frozen dataclass per kind of observation (`observations`: a wire exchange, a client event, a
write, a read, an offset commit; `epochs`: a partition's epoch lineage and an unclean election;
`records`: a record a log served or a producer was told of), the histories of each situation made
of them, one module each, named for what it holds (`kip1319`, `kip1094`, `epoch_validation`,
`leader_answers`, `offset_commits`, `network_splits`, ...), and one codec (`codec`) that writes any
of them as JSON and reads it back by its field types. A decoded Kafka message body stays an
`observations.Body`: its shape is the message's spec, not a Python type. Scenarios return histories,
checks take them, and recordings load into them (`store`, the only I/O here).

This package sits below both scenarios and checks: it imports nothing of the harness above the
protocol floor.
"""
