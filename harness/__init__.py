"""kcts harness: clusters, faults, protocol codec, clients, checkers and reports."""
