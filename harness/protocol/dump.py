"""Readable text of any request or response, for logs and Allure attachments.

    TxnOffsetCommitRequest v6 (api 28, flexible)
      TransactionalId: 'tx-1'
      Topics: [1]
        - TopicId: 7a1Vx5yBRwGQ6tPbW0Fq3A (7b...)
          Partitions: [1]
            - PartitionIndex: 0
              CommittedLeaderEpoch: 3
      ErrorCode: 74 FENCED_LEADER_EPOCH

Error codes are named, UUIDs shown in Kafka's base64 form (as kafka-topics prints them) and hex,
record blobs summarized batch by batch.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from harness.kafka.dist import DEFAULT_VERSION
from harness.protocol.codec import UNKNOWN_TAGS
from harness.protocol.errors import error_name
from harness.protocol.exceptions import ProtocolError
from harness.protocol.spec import ApiSpec, FieldSpec, MessageSpec, SpecSet, StructSpec, load_specs
from harness.protocol.types import kafka_uuid_str

_MAX_BYTES_SHOWN = 32
_MAX_BATCHES_SHOWN = 20


def dump(
    api: ApiSpec | MessageSpec | str | int,
    version: int,
    body: Mapping[str, Any],
    *,
    direction: str = "request",
    specs: SpecSet | str = DEFAULT_VERSION,
) -> str:
    """Text of one message; `api` may be an ApiSpec (direction picks the side) or a MessageSpec."""
    spec = _message_spec(api, direction, specs)
    flexible = spec.is_flexible(version)
    head = f"{spec.name} v{version}"
    if spec.api_key is not None and spec.type in ("request", "response"):
        head += f" (api {spec.api_key}{', flexible' if flexible else ''})"
    lines = [head]
    _struct(lines, spec.struct, body, version, flexible, 1)
    return "\n".join(lines)


def dump_request(api: ApiSpec, version: int, body: Mapping[str, Any]) -> str:
    return dump(api, version, body, direction="request")


def dump_response(api: ApiSpec, version: int, body: Mapping[str, Any]) -> str:
    return dump(api, version, body, direction="response")


def _message_spec(api: ApiSpec | MessageSpec | str | int, direction: str, specs: SpecSet | str) -> MessageSpec:
    if isinstance(api, MessageSpec):
        return api
    if direction not in ("request", "response"):
        raise ValueError("direction must be 'request' or 'response'")
    if not isinstance(api, ApiSpec):
        api = load_specs(specs).api(api)
    return api.request if direction == "request" else api.response


def _struct(lines: list[str], s: StructSpec, value: Mapping[str, Any], version: int, flexible: bool, ind: int) -> None:
    pad = "  " * ind
    if not isinstance(value, Mapping):
        lines.append(f"{pad}{value!r}")
        return
    for f in s.fields:
        if f.name not in value:
            continue
        _field(lines, f, value[f.name], version, flexible, ind)
    unknown = value.get(UNKNOWN_TAGS)
    if unknown:
        for tag, raw in sorted(unknown.items()):
            lines.append(f"{pad}<unknown tag {tag}>: {_bytes(raw)}")
    extra = [k for k in value if k != UNKNOWN_TAGS and k not in s.field_names()]
    for k in extra:
        lines.append(f"{pad}{k}?: {value[k]!r}  (not in the spec)")


def _field(lines: list[str], f: FieldSpec, v: Any, version: int, flexible: bool, ind: int) -> None:
    pad = "  " * ind
    label = f.name
    if flexible and version in f.tagged_versions:
        label += f" (tag {f.tag})"
    if version not in f.versions:
        label += f" (not in v{version})"
    t = f.type
    if t.is_array and v is not None:
        lines.append(f"{pad}{label}: [{len(v)}]")
        for item in v:
            if t.is_struct and f.struct is not None:
                sub: list[str] = []
                _struct(sub, f.struct, item, version, flexible, ind + 2)
                if sub:
                    first = sub[0].lstrip()
                    lines.append(f"{pad}  - {first}")
                    lines.extend(sub[1:])
                else:
                    lines.append(f"{pad}  - {{}}")
            else:
                lines.append(f"{pad}  - {_scalar(f, t.element, item)}")
        return
    if t.is_struct and not t.is_array and v is not None and f.struct is not None:
        lines.append(f"{pad}{label}:")
        _struct(lines, f.struct, v, version, flexible, ind + 1)
        return
    if t.text == "records":
        lines.append(f"{pad}{label}: {_records_summary(v, pad)}")
        return
    lines.append(f"{pad}{label}: {_scalar(f, t.element, v)}")


def _scalar(f: FieldSpec, type_name: str, v: Any) -> str:
    if v is None:
        return "null"
    if type_name == "int16" and f.name.endswith("ErrorCode") and isinstance(v, int):
        return f"{v} {error_name(v)}" if v else "0"
    if type_name == "uuid" and isinstance(v, uuid.UUID):
        return f"{kafka_uuid_str(v)} ({v})"
    if type_name == "bytes" and isinstance(v, bytes | bytearray | memoryview):
        return _bytes(bytes(v))
    return repr(v)


def _bytes(raw: bytes) -> str:
    shown = raw[:_MAX_BYTES_SHOWN].hex()
    more = f"... ({len(raw)} bytes)" if len(raw) > _MAX_BYTES_SHOWN else f" ({len(raw)} bytes)"
    return f"0x{shown}{more}"


def _records_summary(v: Any, pad: str) -> str:
    if v is None:
        return "null"
    from harness.protocol.records import RecordBatch, parse_batches

    try:
        batches = v if isinstance(v, list) else parse_batches(bytes(v), verify_crc=False)
    except ProtocolError as e:
        return f"{len(v)} bytes (not parseable as record batches: {e})"
    size = f"{len(v)} bytes, " if not isinstance(v, list) else ""
    out = [f"{size}{len(batches)} batch(es)"]
    for b in batches[:_MAX_BATCHES_SHOWN]:
        assert isinstance(b, RecordBatch)
        flags = []
        if b.is_transactional:
            flags.append("transactional")
        if b.is_control:
            flags.append(f"control={b.control_type()}")
        if b.compression != "none":
            flags.append(b.compression)
        out.append(
            f"{pad}    offsets {b.base_offset}..{b.last_offset} records={len(b.records)} "
            f"leader_epoch={b.partition_leader_epoch} producer={b.producer_id}/{b.producer_epoch} "
            f"seq={b.base_sequence} crc={'ok' if b.crc_valid else 'BAD'}" + (f" [{' '.join(flags)}]" if flags else "")
        )
    if len(batches) > _MAX_BATCHES_SHOWN:
        out.append(f"{pad}    ... {len(batches) - _MAX_BATCHES_SHOWN} more")
    return "\n".join(out)
