"""Records of the coordinators' internal topics, read with the specs of the coordinator jars.

In `__consumer_offsets`, `__transaction_state` and `__share_group_state` a record key starts
with an int16 *record type* (the spec's `apiKey`: 1 = OffsetCommit, 2 = GroupMetadata, ...) and
the key struct follows at version 0; the value starts with an int16 *schema version* of the value
spec of that same type. A null value is a tombstone. Types are numbered per coordinator, so the
topic decides which family of specs applies. Control batches (transaction markers) share these
partitions and are not coordinator records: skip `batch.is_control`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from harness.protocol.codec import decode
from harness.protocol.exceptions import DecodeError
from harness.protocol.spec import MessageSpec, SpecSet

FAMILIES = {
    "__consumer_offsets": "group",
    "__transaction_state": "transaction",
    "__share_group_state": "share",
}


@dataclass(frozen=True)
class CoordinatorRecord:
    record_type: int
    key_schema: str
    key: dict[str, Any]
    value_schema: str | None
    value_version: int | None
    value: dict[str, Any] | None  # None for a tombstone


def _family_specs(specs: SpecSet, family: str, kind: str) -> dict[int, MessageSpec]:
    jar = f"kafka-{family}-coordinator-"
    return {
        m.api_key: m
        for m in specs.messages.values()
        if m.type == f"coordinator-{kind}" and m.api_key is not None and m.source.startswith(jar)
    }


# Before the coordinators had jars of their own (3.3 to 3.5, and 3.6-3.8 for some), their records
# were `data` specs in the broker's jar, named by what they hold, and the record type was the key's
# version (OffsetCommitKey v0-1, GroupMetadataKey v2, TransactionLogKey v0).
LEGACY_NAMES: dict[str, dict[int, str]] = {
    "group": {0: "OffsetCommit", 1: "OffsetCommit", 2: "GroupMetadata"},
    "transaction": {0: "TransactionLog"},
}


def _legacy_spec(specs: SpecSet, family: str, kind: str, record_type: int) -> MessageSpec | None:
    name = LEGACY_NAMES.get(family, {}).get(record_type)
    found = specs.messages.get(f"{name}{kind.capitalize()}") if name else None
    return found if found is not None and found.type == "data" else None


def decode_coordinator_record(
    specs: SpecSet, topic_or_family: str, key: bytes, value: bytes | None
) -> CoordinatorRecord:
    """Decode one record of a coordinator topic (`__consumer_offsets`, ...) or family ("group", ...)."""
    family = FAMILIES.get(topic_or_family, topic_or_family)
    if len(key) < 2:
        raise DecodeError(f"{family} coordinator record key of {len(key)} bytes has no type")
    (record_type,) = struct.unpack_from(">h", key, 0)
    key_spec = _family_specs(specs, family, "key").get(record_type)
    key_version = key_spec.valid_versions.high if key_spec is not None else record_type
    value_spec = _family_specs(specs, family, "value").get(record_type)
    if key_spec is None:
        key_spec = _legacy_spec(specs, family, "key", record_type)
        value_spec = _legacy_spec(specs, family, "value", record_type)
    if key_spec is None:
        raise DecodeError(
            f"no {family} coordinator key schema for record type {record_type} in the {specs.label} specs"
        )
    key_body = decode(key_spec, key_version, key, offset=2)
    if value is None:
        return CoordinatorRecord(record_type, key_spec.name, key_body, None, None, None)
    if value_spec is None:
        raise DecodeError(f"no {family} coordinator value schema for record type {record_type}")
    if len(value) < 2:
        raise DecodeError(f"{value_spec.name}: {len(value)} bytes, too short for a version prefix")
    (version,) = struct.unpack_from(">h", value, 0)
    # Values newer than the spec (a newer broker) still decode their known prefix where Kafka
    # promises compatibility (KIP-915: new fields are tagged), so decode at the highest known.
    known = min(version, value_spec.valid_versions.high)
    body = decode(value_spec, known, value, offset=2, allow_trailing=version > known)
    return CoordinatorRecord(record_type, key_spec.name, key_body, value_spec.name, version, body)
