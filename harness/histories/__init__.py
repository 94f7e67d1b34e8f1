"""Histories: what a scenario observed, typed once, for the checks that judge it.

One frozen dataclass per kind of observation (`observations`: a wire exchange, a client event, a
write, a read, an offset commit; `epochs`: a partition's epoch history and an unclean election),
the histories of each KIP's situations made of them (`kip1319`, `kip1094`), and one codec (`codec`)
that writes any of them as JSON and reads it back by its field types. Scenarios return histories,
checks take them, and recordings load into them (`store`, the only I/O here).

This package sits below both scenarios and checks: it imports nothing of the harness above the
protocol floor.
"""
