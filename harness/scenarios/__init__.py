"""Scenarios: each builds a situation against a `Cluster` and returns a frozen history record.

A scenario is Jepsen's workload and nemesis together: it creates what it needs (writes, faults,
leader moves, client runs, raw requests), opens and closes its own connections and clients, and
returns what happened (reads, errors, answers, commits, log batches, election facts) as a frozen
dataclass. It never judges: the checks in `harness.checks` do, in the tests. A premise the target
refuses raises `harness.errors.TargetRefused`; a missing fault control `FaultControlUnavailable`.
"""
