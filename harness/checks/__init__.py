"""Pure assertion helpers for the conformance checks, one module per kind of promise.

Each function takes what a target answered (decoded response fields, record batches, a client's
recorded events) next to what the source document promises, and raises `AssertionError` whose
message carries the evidence: error names with codes, epochs, offsets. They do no I/O and read no
cluster, so the suites call them on live answers and tests/checks calls them on recorded answers
altered to break one premise, which shows that every check can fail.
"""
