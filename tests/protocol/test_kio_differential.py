"""Byte-for-byte differential tests against kio, an independent implementation, on every schema it shares with 4.4.0.

For each (api, version, direction) whose kio dataclass agrees with our spec field by field, a generated
message is encoded by both (same bytes), kio's bytes are decoded by us (same dict) and ours by kio
(same dataclass).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.protocol import kio_bridge as kb
from harness.protocol.codec import decode, encode
from harness.protocol.spec import FieldSpec, MessageSpec, load_specs
from harness.protocol.strategies import message_values

pytest.importorskip("kio")
from kio.schema.errors import ErrorCode

SPECS = load_specs("4.4.0")
_ERROR_CODES = sorted(e.value for e in ErrorCode)


@functools.cache
def matches(name: str) -> dict[int, kb.StructMap]:
    """Every version of message `name` whose kio dataclass agrees with our spec, paired field by field.
    Built on first use, not at import: every process of a sharded run collects this module."""
    spec = SPECS.message(name)
    out = {}
    for v in spec.valid_versions:
        try:
            out[v] = kb.match(spec, v)
        except kb.Mismatch:
            continue
    return out


MESSAGES = [*(s for api in SPECS.apis() for s in (api.request, api.response)),
            *(SPECS.message(name) for name in ("RequestHeader", "ResponseHeader"))]
# Each message kio's index names at some version: the index alone, no schema module imported.
CASES = [pytest.param(s.name, id=s.name) for s in MESSAGES if any(kb.indexed(s, v) for v in s.valid_versions)]


def _override(kio_types: dict[tuple[str, str], tuple[str, bool]]) -> Any:
    def override(f: FieldSpec, struct_name: str) -> st.SearchStrategy[Any] | None:
        # Keep values within what kio's Python types can hold (its enums, timedelta, datetime).
        ktype, optional = kio_types.get((struct_name, f.name), ("", False))
        if ktype == "error_code":
            elem: st.SearchStrategy[Any] = st.sampled_from(_ERROR_CODES)
        elif ktype == "timedelta_i64":
            elem = st.integers(-(2**49), 2**49)
        elif ktype == "datetime_i64":
            # kio reads -1 as None where its field is optional, and cannot hold it otherwise.
            elem = st.integers(0, 2**41) | (st.just(-1) if optional else st.nothing())
        else:
            return None
        return st.lists(elem, max_size=3) if f.type.is_array else elem

    return override


_STRATEGIES: dict[tuple[str, int], st.SearchStrategy[dict[str, Any]]] = {}


def _values(spec: MessageSpec, version: int, m: kb.StructMap) -> st.SearchStrategy[dict[str, Any]]:
    key = (spec.name, version)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = message_values(spec, version, override=_override(kb.kio_types(m)))
    return _STRATEGIES[key]


def _spec(name: str) -> MessageSpec:
    return SPECS.message(name)


@pytest.mark.parametrize("name", CASES)
@settings(
    max_examples=3,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_same_bytes_as_kio(name: str, data: st.DataObject) -> None:
    spec = _spec(name)
    assert matches(name), f"kio shares no version of {name}"
    for version, m in matches(name).items():
        value = data.draw(_values(spec, version, m), label=f"v{version}")
        ours = encode(spec, version, value, check_version=False)
        entity = kb.to_kio(m, value)
        theirs = kb.kio_encode(m, entity)
        assert ours == theirs, f"{name} v{version}: encodings differ"
        assert decode(spec, version, theirs, check_version=False) == value, (
            f"{name} v{version}: our decode of kio bytes"
        )
        assert kb.kio_decode(m, ours) == entity, f"{name} v{version}: kio's decode of our bytes"


def test_kio_coverage() -> None:
    """Most 4.4.0 schemas are shared with kio; the ones that are not are listed, not silently skipped."""
    shared = sum(len(matches(s.name)) for s in MESSAGES)
    missing: list[str] = []
    differ: list[str] = []
    for api in SPECS.apis():
        for spec in (api.request, api.response):
            for v in spec.valid_versions:
                if v in matches(spec.name):
                    continue
                try:
                    kb.match(spec, v)
                except kb.Mismatch as e:
                    (missing if "kio has no" in str(e) else differ).append(str(e))
    assert shared >= 590, f"only {shared} schemas shared with kio"
    # kio 0.6.5 predates these 4.x versions; a new entry here means kio or the specs moved.
    assert len(missing) <= 20, missing
    assert differ == [], differ
