"""The one codec of histories: a frozen dataclass to JSON and back, driven by its field types.

JSON has no bytes (record values, record batches) and no UUIDs (topic IDs); both are tagged
objects here, `{"$bytes": base64}` and `{"$uuid": text}`, wherever they sit, typed or not. A
history is encoded as the object of its fields; decoding reads the field types (`typing.
get_type_hints`) and rebuilds each value as its type says: nested dataclasses, `list[T]`,
`tuple[T, ...]`, fixed tuples, `dict[str, T]`, `T | None`, UUID, bytes. A field typed `Any` (the
decoded body of a Kafka message, whose shape is its JSON spec, not a Python type) is decoded
untyped: tags become bytes and UUIDs, the rest stays as JSON gave it.

Decoding is strict: a key the dataclass does not know, or a value of the wrong kind, raises
`HistoryFormatError` naming the path, so a recording that drifted from its type says where.

A field declared with `metadata=OMITTED_AT_DEFAULT` is left out of the JSON while it holds its
default: a client driver's event carries only the fields that client reports (librdkafka an error
code, Java an exception name), and its recording stays the object the driver printed.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import types
import typing
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

# What JSON holds; a typed value is encoded into it and decoded from it.
Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]

T = TypeVar("T")

OMITTED_AT_DEFAULT = {"omitted_at_default": True}


class HistoryFormatError(ValueError):
    """A recording does not fit the history type it is read into."""


def encode(value: object) -> Json:
    """`value` as JSON: dataclasses as objects of their fields, bytes and UUIDs tagged, sets sorted."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, uuid.UUID):
        return {"$uuid": str(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value) if not _at_default(value, f)}
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, set | frozenset):
        return [encode(v) for v in sorted(value, key=repr)]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise HistoryFormatError(f"{type(value).__name__} has no JSON form: {value!r}")


def _at_default(value: object, f: dataclasses.Field[Any]) -> bool:
    if not f.metadata.get("omitted_at_default"):
        return False
    default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
    return bool(getattr(value, f.name) == default)


def untyped(data: Json) -> Any:
    """JSON with its tags turned back into bytes and UUIDs (for values typed `Any`)."""
    if isinstance(data, dict):
        if set(data) == {"$bytes"}:
            return base64.b64decode(str(data["$bytes"]))
        if set(data) == {"$uuid"}:
            return uuid.UUID(str(data["$uuid"]))
        return {k: untyped(v) for k, v in data.items()}
    if isinstance(data, list):
        return [untyped(v) for v in data]
    return data


def decode(kind: type[T], data: Json) -> T:
    """`data` read as a `kind` (a dataclass, or any type the module docstring lists)."""
    return typing.cast(T, _decode(kind, data, kind.__name__ if isinstance(kind, type) else str(kind)))


def dumps(history: object) -> str:
    return json.dumps(encode(history), indent=1, sort_keys=True) + "\n"


def loads(kind: type[T], text: str) -> T:
    return decode(kind, json.loads(text))


def _fail(path: str, want: object, data: Json) -> HistoryFormatError:
    return HistoryFormatError(f"{path}: expected {want}, found {json.dumps(data)[:200]}")


def _decode(kind: Any, data: Json, path: str) -> Any:
    if kind is Any or kind is object:
        return untyped(data)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        if data is None and type(None) in args:
            return None
        choices = [a for a in args if a is not type(None)]
        errors = []
        for choice in choices:
            try:
                return _decode(choice, data, path)
            except HistoryFormatError as exc:
                errors.append(str(exc))
        raise HistoryFormatError("; ".join(errors))
    if kind is type(None):
        if data is not None:
            raise _fail(path, "null", data)
        return None
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _dataclass(kind, data, path)
    if origin in (list, Sequence, tuple) or kind in (list, tuple):
        if not isinstance(data, list):
            raise _fail(path, kind, data)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(data):
                raise _fail(path, f"{len(args)} items", data)
            return tuple(_decode(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True)))
        item = args[0] if args else Any
        items = [_decode(item, v, f"{path}[{i}]") for i, v in enumerate(data)]
        return tuple(items) if origin is tuple or kind is tuple else items
    if origin in (dict, Mapping) or kind is dict:
        if not isinstance(data, dict):
            raise _fail(path, kind, data)
        key, value = args if args else (str, Any)
        return {_key(key, k, path): _decode(value, v, f"{path}.{k}") for k, v in data.items()}
    if kind is uuid.UUID:
        if not (isinstance(data, dict) and set(data) == {"$uuid"}):
            raise _fail(path, "a UUID", data)
        return uuid.UUID(str(data["$uuid"]))
    if kind is bytes:
        if not (isinstance(data, dict) and set(data) == {"$bytes"}):
            raise _fail(path, "bytes", data)
        return base64.b64decode(str(data["$bytes"]))
    if kind is bool or kind is str:
        if not isinstance(data, kind):
            raise _fail(path, kind.__name__, data)
        return data
    if kind is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise _fail(path, "int", data)
        return data
    if kind is float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise _fail(path, "float", data)
        return float(data)
    raise HistoryFormatError(f"{path}: the codec has no rule for the type {kind!r}")


def _key(kind: Any, key: str, path: str) -> Any:
    if kind is int:
        try:
            return int(key)
        except ValueError:
            raise _fail(path, "int keys", key) from None
    return key


def _dataclass(kind: type, data: Json, path: str) -> Any:
    if not isinstance(data, dict):
        raise _fail(path, f"a {kind.__name__} object", data)
    hints = typing.get_type_hints(kind)
    known = {f.name: f for f in dataclasses.fields(kind) if f.init}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise HistoryFormatError(f"{path}: {kind.__name__} has no field(s) {unknown}")
    values = {name: _decode(hints[name], data[name], f"{path}.{name}") for name in known if name in data}
    missing = [name for name, f in known.items() if name not in data and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise HistoryFormatError(f"{path}: {kind.__name__} lacks field(s) {missing}")
    return kind(**values)
