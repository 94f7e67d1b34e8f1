"""kio (an independent Python implementation of the protocol) as a reference for our codec.

kio generates frozen dataclasses from an older set of Kafka's specs and has a native (Rust)
reader. Its field names are snake_case and sometimes older than ours (GenerationId where 4.4.0
says GenerationIdOrMemberEpoch), so fields are paired by position (regular fields) and by tag
(tagged fields), and a schema is only used when both sides agree on every field's wire type,
array-ness and nullability at that version. Where they disagree, `match` says why, which is
itself useful: it lists where kio's schemas trail Kafka 4.4.0.

Used by the differential tests and by the codec benchmark; needs `kio` installed.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.protocol.codec import VersionCtx, present_fields
from harness.protocol.spec import FieldSpec, MessageSpec, StructSpec
from harness.protocol.types import ZERO_UUID

try:
    from kio import index as kio_index
    from kio.schema.errors import ErrorCode
    from kio.schema.index import api_key_map, schema_name_map
    from kio.serial import entity_reader, entity_writer
except ImportError:  # pragma: no cover - kio is a dev dependency
    kio_index = None  # type: ignore[assignment]

# kio's own names for types that are plain integers on the wire.
_KIO_WIRE_TYPE = {
    "error_code": "int16",
    "timedelta_i32": "int32",
    "timedelta_i64": "int64",
    "datetime_i64": "int64",
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def available() -> bool:
    return kio_index is not None


@dataclass
class FieldPair:
    ours: FieldSpec
    kio_name: str
    kio_type: str  # kafka_type, or "struct"
    kio_optional: bool
    sub: StructMap | None


@dataclass
class StructMap:
    ours: StructSpec
    kio_cls: type
    pairs: list[FieldPair]


class Mismatch(Exception):
    """Our schema and kio's differ at this version."""


def kio_class(spec: MessageSpec, version: int) -> type | None:
    """kio's dataclass for this message version, or None when kio does not know it."""
    if kio_index is None:
        return None
    try:
        if spec.type == "request" and spec.api_key is not None:
            return kio_index.load_request_schema(spec.api_key, version)  # type: ignore[no-any-return]
        if spec.type == "response" and spec.api_key is not None:
            return kio_index.load_response_schema(spec.api_key, version)  # type: ignore[no-any-return]
        if spec.type == "header":
            name = {"RequestHeader": "request_header", "ResponseHeader": "response_header"}[spec.name]
            return kio_index.load_entity_schema(name, version, kio_index.EntityType.header)  # type: ignore[no-any-return]
    except (kio_index.KioIndexError, ImportError, KeyError, AttributeError):
        return None
    return None


def indexed(spec: MessageSpec, version: int) -> bool:
    """Whether kio's index names this message version, read from the index alone: no schema module is
    imported (`kio_class` imports one, which costs milliseconds each over hundreds of versions)."""
    if kio_index is None:
        return False
    if spec.type == "header":
        name = {"RequestHeader": "request_header", "ResponseHeader": "response_header"}.get(spec.name)
        entity = kio_index.EntityType.header
    elif spec.type in ("request", "response") and spec.api_key is not None:
        name = api_key_map.get(spec.api_key)
        entity = kio_index.EntityType.request if spec.type == "request" else kio_index.EntityType.response
    else:
        return False
    return name is not None and entity in schema_name_map.get(name, {}).get(version, {})


def match(spec: MessageSpec, version: int) -> StructMap:
    """Pair our fields with kio's for one version; raise Mismatch (with the reason) if they differ."""
    cls = kio_class(spec, version)
    if cls is None:
        raise Mismatch(f"kio has no {spec.name} v{version}")
    ctx = VersionCtx(spec, version, spec.is_flexible(version), "bytes")
    if bool(getattr(cls, "__flexible__", ctx.flexible)) != ctx.flexible:
        raise Mismatch(f"{spec.name} v{version}: flexible={ctx.flexible}, kio says {cls.__flexible__}")
    return _match_struct(spec.struct, cls, ctx, spec.name)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _unwrap(tp: Any) -> tuple[Any, bool, bool]:
    """(inner type, is_array, is_optional) of a kio field annotation."""
    optional = False
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        tp = args[0]
        origin = typing.get_origin(tp)
    if origin is tuple:
        return typing.get_args(tp)[0], True, optional
    return tp, False, optional


def _match_struct(s: StructSpec, cls: type, ctx: VersionCtx, path: str) -> StructMap:
    regular, tagged = present_fields(s, ctx)
    kfields = dataclasses.fields(cls)
    hints = _hints(cls)
    kreg = [f for f in kfields if "tag" not in f.metadata]
    ktag = {int(f.metadata["tag"]): f for f in kfields if "tag" in f.metadata}
    if len(kreg) != len(regular):
        raise Mismatch(
            f"{path}: {len(regular)} fields ({', '.join(f.name for f in regular)}) vs kio's {len(kreg)} "
            f"({', '.join(f.name for f in kreg)})"
        )
    if {f.tag for f in tagged} != set(ktag):
        raise Mismatch(f"{path}: tags {sorted(f.tag or 0 for f in tagged)} vs kio's {sorted(ktag)}")
    pairs = [_match_field(ours, kf, hints[kf.name], ctx, path) for ours, kf in zip(regular, kreg, strict=True)]
    pairs += [_match_field(f, ktag[f.tag or 0], hints[ktag[f.tag or 0].name], ctx, path, tagged=True) for f in tagged]
    return StructMap(s, cls, pairs)


def _match_field(
    ours: FieldSpec, kf: dataclasses.Field[Any], hint: Any, ctx: VersionCtx, path: str, tagged: bool = False
) -> FieldPair:
    where = f"{path}.{ours.name} (kio {kf.name})"
    inner, is_array, optional = _unwrap(hint)
    if is_array != ours.type.is_array:
        raise Mismatch(f"{where}: array={ours.type.is_array}, kio array={is_array}")
    nullable = ctx.version in ours.nullable_versions
    if dataclasses.is_dataclass(inner):
        if not ours.type.is_struct or ours.struct is None:
            raise Mismatch(f"{where}: kio has a struct, we have {ours.type}")
        if not tagged and not is_array and optional != nullable:
            raise Mismatch(f"{where}: nullable={nullable}, kio optional={optional}")
        sub = _match_struct(ours.struct, inner, ctx, f"{path}.{ours.name}")  # type: ignore[arg-type]
        return FieldPair(ours, kf.name, "struct", optional, sub)
    ktype = str(kf.metadata.get("kafka_type", ""))
    wire = _KIO_WIRE_TYPE.get(ktype, ktype)
    if wire != ours.type.element:
        raise Mismatch(f"{where}: type {ours.type.element}, kio {ktype}")
    # kio types uuid and datetime_i64 as optional although Kafka's are not nullable: it reads the
    # zero UUID and a -1 timestamp as None, and writes None back as those values.
    if not tagged and ktype not in ("uuid", "datetime_i64") and optional != nullable:
        raise Mismatch(f"{where}: nullable={nullable}, kio optional={optional}")
    return FieldPair(ours, kf.name, ktype, optional, None)


# --- values ----------------------------------------------------------------------------------


def _to_kio_scalar(ktype: str, value: Any, optional: bool) -> Any:
    if value is None:
        return None
    if ktype == "error_code":
        return ErrorCode(value)
    if ktype in ("timedelta_i32", "timedelta_i64"):
        return datetime.timedelta(milliseconds=value)
    if ktype == "datetime_i64":
        if optional and value == -1:
            return None
        return _EPOCH + datetime.timedelta(milliseconds=value)
    if ktype == "uuid":
        return None if (optional and value == ZERO_UUID) else value
    return value


def to_kio(m: StructMap, value: Mapping[str, Any]) -> Any:
    """Our dict (all fields present) as kio's dataclass instance."""
    kwargs = {}
    for p in m.pairs:
        v = value[p.ours.name]
        if p.sub is not None:
            if v is None:
                kwargs[p.kio_name] = None
            elif p.ours.type.is_array:
                kwargs[p.kio_name] = tuple(to_kio(p.sub, e) for e in v)
            else:
                kwargs[p.kio_name] = to_kio(p.sub, v)
        elif p.ours.type.is_array:
            # kio reads a zero UUID as None wherever it appears, array elements included.
            elem_optional = p.kio_type == "uuid"
            kwargs[p.kio_name] = None if v is None else tuple(_to_kio_scalar(p.kio_type, e, elem_optional) for e in v)
        else:
            kwargs[p.kio_name] = _to_kio_scalar(p.kio_type, v, p.kio_optional)
    return m.kio_cls(**kwargs)


def kio_encode(m: StructMap, entity: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(m.kio_cls)(buf, entity)
    return buf.getvalue()


def kio_decoder(cls: type) -> Callable[[bytes, int], tuple[Any, int]]:
    """kio's native reader of a message: fn(buf, offset) -> (entity, bytes consumed)."""
    return entity_reader(cls)  # type: ignore[no-any-return]


def kio_decode(m: StructMap, data: bytes) -> Any:
    entity, size = entity_reader(m.kio_cls)(data, 0)
    if size != len(data):
        raise ValueError(f"kio read {size} of {len(data)} bytes")
    return entity


def kio_types(m: StructMap) -> dict[tuple[str, str], tuple[str, bool]]:
    """(struct name, field name) -> (kio's kafka_type, optional) of every paired field, to constrain values."""
    out: dict[tuple[str, str], tuple[str, bool]] = {}
    todo = [m]
    while todo:
        sm = todo.pop()
        for p in sm.pairs:
            out[(sm.ours.name, p.ours.name)] = (p.kio_type, p.kio_optional)
            if p.sub is not None:
                todo.append(p.sub)
    return out


def normalize_uuid(value: Any) -> Any:
    return ZERO_UUID if value is None else value
