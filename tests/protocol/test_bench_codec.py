"""The codec benchmark's plumbing, on synthetic responses (the live numbers come from `kcts bench codec`)."""

from __future__ import annotations

from harness.bench import codec as bench
from harness.protocol.spec import load_specs


def test_synthetic_responses_are_big_enough_and_measured() -> None:
    specs = load_specs("4.4.0")
    bodies = bench.synthesize(specs)
    result = bench.measure(specs, bodies, rounds=1, budget=0.02)
    assert result["metadata"]["partitions"] >= 1000 and result["fetch"]["batches"] >= 1000
    for name in ("metadata", "fetch"):
        entry = result[name]
        assert entry["ours_mb_s"] > 0 and entry["kio_mb_s"] > 0 and entry["ratio"] > 0
    assert result["fetch_with_records_mb_s"] > 0


def test_run_without_a_broker_falls_back_to_synthetic() -> None:
    class Args:
        source = "synthetic"
        rounds = 1
        budget = 0.005

    result = bench.run(Args())
    assert result["source"] == "synthetic" and {"ratio", "metadata", "fetch", "fetch_with_records_mb_s"} <= set(result)
