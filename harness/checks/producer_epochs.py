"""KIP-359 "Proposed Changes": "Now that we include the leader epoch in the Metadata API, the producer will
be able to add it to Produce requests to verify metadata consistency between the client and the leader."

A producer's Produce partition entries, as the proxy decoded them with the target's own schema
(harness.scenarios.producer_epochs): each carries CurrentLeaderEpoch equal to an epoch Metadata had
given it (harness.checks.client_fetch_epochs.known_epochs, as for a consumer's Fetch), never -1 once it
knew one. A producer whose Produce carries no such field at all does not implement the KIP: "not
supported by this client", with the versions and fields it sent and what the target's schema offers
as the evidence (Apache Kafka's Produce has the field at no version: no Apache client sends it).
"""

from __future__ import annotations

from harness.checks.client_fetch_epochs import GRACE_S, known_epochs
from harness.checks.client_reactions import METADATA_WITH_EPOCH, metadata_answers
from harness.errors import ClientLacks, TargetRefused
from harness.histories.client_reactions import METADATA
from harness.histories.producer_epochs import ProduceEntry, ProducerEpochRun


def _entries(entries: list[ProduceEntry]) -> str:
    versions = sorted({e.version for e in entries})
    fields = sorted({f for e in entries for f in e.fields})
    return f"{len(entries)} partition entries, Produce v{versions[0]}-{versions[-1]}, fields {fields}"


def assert_produce_carries_the_metadata_epoch(run: ProducerEpochRun, grace: float = GRACE_S) -> None:
    """See the module. Premises (the target's): the producer's writes were acknowledged and it sent
    Produce through the proxy, and Metadata (v7+) gave it the partition's epoch before its first
    Produce (else "target refused the premise"; Metadata below v7 only: "not supported by this
    client")."""
    who = run.named or run.client
    entries = list(run.entries)
    if not entries or not run.acked:
        raise TargetRefused(f"{who} wrote nothing the target acknowledged through the proxy ({run.acked} acknowledged, "
                            f"{len(entries)} Produce entries){'; ' + run.incomplete if run.incomplete else ''}")
    told = [m for m in run.learned if m.source == METADATA and m.epoch >= 0 and m.error == "NONE"
            and m.at <= entries[0].at]
    if not told:
        asked = sorted({m.version for m in run.learned if m.source == METADATA})
        if asked and max(asked) < METADATA_WITH_EPOCH:
            raise ClientLacks(who, "leader epochs in Metadata (v7+, KIP-320)", f"it asked Metadata v{asked}")
        raise TargetRefused(f"the target gave {who} no leader epoch for the partition before its first Produce "
                            f"({metadata_answers(run.learned)})")
    carried = [e for e in entries if e.epoch is not None]
    if not carried:
        schema = (f"the target's Produce schema has it at v{list(run.schema_with_epoch)}" if run.schema_with_epoch
                  else "the target's Produce schema has it at no version")
        raise ClientLacks(who, "KIP-359 CurrentLeaderEpoch in Produce requests",
                          f"its {_entries(entries)}: no CurrentLeaderEpoch, though Metadata gave it epoch "
                          f"{told[-1].epoch} (partition epoch {run.epoch}); {schema}, advertised "
                          f"v{run.advertised[0]}-{run.advertised[1]}")
    wrong = [e for e in carried if e.epoch not in known_epochs(run.learned, e.at, grace)
             and not (e.epoch < 0 and not known_epochs(run.learned, e.at, grace))]
    assert not wrong, (
        f"{who} sent {len(wrong)} of its {len(carried)} Produce entries with a CurrentLeaderEpoch Metadata had not "
        "given it (KIP-359 \"Proposed Changes\": the producer adds the leader epoch from Metadata): "
        + "; ".join(f"Produce v{e.version} at {e.at:.3f}s CurrentLeaderEpoch {e.epoch}, known "
                    f"{sorted(known_epochs(run.learned, e.at, grace))}" for e in wrong[:3])
        + f"; told {metadata_answers(run.learned)}; partition epoch {run.epoch}")
