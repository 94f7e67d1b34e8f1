"""Hypothesis strategies that generate message values from a spec (test-only; needs hypothesis).

`message_values(spec, version)` draws a dict with every field the version has, each value
within its type's range, nulls where the version allows them, tagged fields sometimes at their
default (so that both "absent" and "present" tag buffers are exercised).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from harness.protocol.codec import VersionCtx, default_value, present_fields
from harness.protocol.records import WireRecord, encode_batch
from harness.protocol.spec import FieldSpec, MessageSpec, StructSpec
from harness.protocol.types import INT_RANGES, ZERO_UUID

# override(field, struct_name) may return a strategy for a field's (non-null) value, e.g. to keep
# values within what another implementation can represent.
Override = Callable[[FieldSpec, str], st.SearchStrategy[Any] | None]

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_UUIDS = st.one_of(st.just(ZERO_UUID), st.uuids().map(lambda u: uuid.UUID(int=u.int)))


def _records_blob() -> st.SearchStrategy[bytes]:
    batch = st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=8)), st.binary(max_size=8)), max_size=3).map(
        lambda rs: encode_batch([WireRecord(v, k, timestamp=1_700_000_000_000) for k, v in rs])
    )
    return st.one_of(st.binary(max_size=24), batch)


def primitive(type_name: str) -> st.SearchStrategy[Any]:
    if type_name in INT_RANGES:
        lo, hi = INT_RANGES[type_name]
        return st.integers(lo, hi)
    if type_name == "bool":
        return st.booleans()
    if type_name == "float64":
        return st.floats(allow_nan=False)
    if type_name == "uuid":
        return _UUIDS
    if type_name == "string":
        return _TEXT
    if type_name == "bytes":
        return st.binary(max_size=16)
    if type_name == "records":
        return _records_blob()
    raise ValueError(f"no strategy for type {type_name}")


def message_values(
    spec: MessageSpec,
    version: int,
    *,
    max_items: int = 3,
    override: Override | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    if override is None:
        key = (id(spec), version, max_items)
        cached = _CACHE.get(key)
        if cached is None:
            cached = _CACHE[key] = (spec, _build(spec, version, max_items, None))
        return cached[1]
    return _build(spec, version, max_items, override)


# (spec kept alive beside its strategy so that its id is not reused)
_CACHE: dict[tuple[int, int, int], tuple[MessageSpec, st.SearchStrategy[dict[str, Any]]]] = {}


def _build(
    spec: MessageSpec, version: int, max_items: int, override: Override | None
) -> st.SearchStrategy[dict[str, Any]]:
    ctx = VersionCtx(spec, version, spec.is_flexible(version), "bytes")
    return _struct(spec.struct, ctx, max_items, override)


def _struct(
    s: StructSpec, ctx: VersionCtx, max_items: int, override: Override | None
) -> st.SearchStrategy[dict[str, Any]]:
    regular, tagged = present_fields(s, ctx)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for f in s.fields:
        if f in regular:
            fields[f.name] = _field(f, s, ctx, max_items, override)
        elif f in tagged:
            value = _field(f, s, ctx, max_items, override)
            fields[f.name] = st.one_of(st.builds(lambda f=f: default_value(f, ctx.version, ctx.flexible)), value)
    return st.fixed_dictionaries(fields)


def _field(
    f: FieldSpec, parent: StructSpec, ctx: VersionCtx, max_items: int, override: Override | None
) -> st.SearchStrategy[Any]:
    t = f.type
    base: st.SearchStrategy[Any] | None = override(f, parent.name) if override else None
    if base is None:
        if t.is_array:
            if t.is_struct:
                assert f.struct is not None
                elem = _struct(f.struct, ctx, max_items, override)
            else:
                elem = primitive(t.element)
            base = st.lists(elem, max_size=max_items)
        elif t.is_struct:
            assert f.struct is not None
            base = _struct(f.struct, ctx, max_items, override)
        else:
            base = primitive(t.text)
    if ctx.version in f.nullable_versions:
        return st.one_of(st.none(), base)
    return base
