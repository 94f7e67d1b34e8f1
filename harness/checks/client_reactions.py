"""Judgements of how a client met the epoch errors (harness.scenarios.client_reactions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _reads(reads: list[Mapping[str, Any]]) -> str:
    if not reads:
        return "nothing"
    return f"{len(reads)} records, offsets {reads[0]['offset']}..{reads[-1]['offset']}"


def assert_read_on_through_epoch_errors(run: Mapping[str, Any]) -> None:
    """KIP-320 "Consumer Handling": a consumer that gets FENCED_LEADER_EPOCH refreshes its metadata
    ("leader changes are detected either through a metadata refresh or in response to a
    FENCED_LEADER_EPOCH error") and fetches again; on UNKNOWN_LEADER_EPOCH "it will simply retry the
    fetch". Either way it neither resets its position nor fails: it reads every record once, in order,
    and reports nothing."""
    client, error = run["client"], run["error"]
    assert run["refused"] >= 1, (
        f"premise: the proxy refused no Fetch of {client}'s (it never sent Fetch v9+); APIs it sent: {run['after']}")
    assert not run["errors"], (
        f"{client} reported {run['errors'][:2]} after {run['refused']} Fetch answers of {error}, instead of retrying")
    got = [(r["offset"], r["value"]) for r in run["reads"]]
    want = [(w["offset"], w["value"]) for w in run["written"]]
    assert got == want, (
        f"{client} read {_reads(run['reads'])} after {error}, expected the {len(want)} records written, once each, "
        f"in order{'; ' + run['incomplete'] if run.get('incomplete') else ''}"
    )
    after = run["after"]
    if error == "FENCED_LEADER_EPOCH":
        assert "Metadata" in after, f"{client} did not refresh its metadata after {error}: it sent {after}"
    assert "Fetch" in after[1:], f"{client} did not fetch again after {error}: it sent {after}"


def assert_written_once_through_epoch_errors(run: Mapping[str, Any]) -> None:
    """KIP-359 "Proposed Changes": a producer that sees FENCED_LEADER_EPOCH "will refresh metadata and
    retry"; on UNKNOWN_LEADER_EPOCH it "will simply backoff and retry". An idempotent producer so
    refused delivers every record, reports no failure, and the partition holds each once, in order."""
    client, error = run["client"], run["error"]
    assert run["refused"] >= 1, f"premise: the proxy refused no Produce of {client}'s; APIs it sent: {run['after']}"
    assert not run["errors"], f"{client} failed {len(run['errors'])} deliveries after {error}: {run['errors'][:3]}"
    got = [r["value"] for r in run["reads"]]
    want = [w["value"] for w in run["written"]]
    assert got == want, (
        f"after {error}, the partition holds {len(got)} records ({got[:3]}...{got[-2:]}), expected the {len(want)} "
        f"written once each, in order")
    if error == "FENCED_LEADER_EPOCH":
        assert "Metadata" in run["after"], (
            f"{client} did not refresh its metadata after {error}: it sent {run['after']}")


def assert_validated_only_once_metadata_caught_up(run: Mapping[str, Any]) -> None:
    """KIP-320 "Consumer Handling", extension 2: "it is possible for the leader epoch included in the
    committed offset to be ahead of the metadata that is known to the consumer. Consumers are
    expected to wait until the metadata has at least reached the epoch of the committed offset
    before checking for truncation." No OffsetsForLeaderEpoch the client sent asks about an epoch
    newer than its current one; it reads on from the committed offset, once each, reporting nothing."""
    client = run["client"]
    assert run["stale"] >= 1, f"premise: no Metadata answer was shown behind to {client}"
    early = [v for v in run["validations"] if v["leader_epoch"] > v["current"] >= 0]
    assert not early, (
        f"{client} validated the committed epoch {run['committed']['epoch']} before its metadata reached it: "
        f"OffsetsForLeaderEpoch {early[:3]} (the answers show what the broker made of it); it then read "
        f"{_reads(run['reads'])} and reported {run['errors'][:2] or 'nothing'}")
    assert not run["errors"], f"{client} reported {run['errors'][:2]} starting from the commit {run['committed']}"
    got = [(r["offset"], r["value"]) for r in run["reads"]]
    want = [(w["offset"], w["value"]) for w in run["written"]]
    assert got == want, (
        f"{client} read {_reads(run['reads'])} from the commit {run['committed']}, expected offsets "
        f"{want[0][0]}..{want[-1][0]}{'; ' + run['incomplete'] if run.get('incomplete') else ''}")


def assert_first_fetch_uses_the_reset_epoch(run: Mapping[str, Any]) -> None:
    """KIP-320 "Consumer Handling", extension 1 and "Proposed Changes": ListOffsets returns the epoch of
    the offset it finds, and "the consumer will use this in its first fetch request after resetting
    offsets", so that a stale leader answers UNKNOWN_LEADER_EPOCH instead of serving it. The first
    Fetch after the reset asks for the offset ListOffsets returned, fenced at an epoch no older than
    the one it returned (never -1, which turns fencing off)."""
    client, reset = run["client"], run["reset"]
    found = [a for a in run["list_offsets"] if a["error"] == "NONE"]
    assert found, (f"premise: {client} ({reset}) got no ListOffsets answer for the partition: "
                   f"{run['list_offsets'][:3]}; errors {run['errors'][:2]}; {run.get('incomplete') or ''}; "
                   f"it sent {run.get('sent', [])[-40:]}")
    answer = found[0]
    after = run["fetches"][answer["fetches_before"]:]
    assert after, (f"{client} ({reset}) sent no Fetch after the reset to {answer}; errors {run['errors'][:2]}; "
                   f"{run.get('incomplete') or ''}")
    first = after[0]
    assert first["offset"] == answer["offset"] and first["current"] >= max(answer["epoch"], 0), (
        f"{client} ({reset}): ListOffsets v{answer['version']} returned offset {answer['offset']} at epoch "
        f"{answer['epoch']} (partition epoch {run['epoch']}); the first Fetch after it asked for offset "
        f"{first['offset']} with CurrentLeaderEpoch {first['current']} (v{first['version']})")
