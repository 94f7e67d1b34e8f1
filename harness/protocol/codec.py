"""Encode and decode any message of a spec at any version, as plain dicts.

Messages are dicts keyed by the spec's field names (`{"Topics": [{"Name": ..., "Partitions":
[...]}]}`). Encoding fills defaults for absent keys and refuses unknown keys; decoding yields every
field the version has (tagged ones at their default when absent from the wire). Unknown tagged
fields survive a round trip under the key `_unknown_tagged_fields` ({tag: raw bytes}).

Speed: each (spec, version, direction) is compiled once into one Python function whose source is
generated from the schema, with nested structs inlined as loops, runs of fixed-width fields read
by a single `struct.unpack_from`, and arrays of integers read in one call. No per-byte loops run
on the hot path except for multi-byte varints. Arrays of flat structs (see `_FlatSite`) are read a
run of same-shaped elements at a time, and the garbage collector is paused while a large message
is decoded (it would otherwise rescan the growing, cycle-free result again and again).
"""

from __future__ import annotations

import gc
import struct
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.protocol.exceptions import DecodeError, EncodeError, ProtocolError, UnsupportedVersionError
from harness.protocol.spec import ApiSpec, FieldSpec, MessageSpec, SpecSet, StructSpec
from harness.protocol.types import (
    FIXED_FORMATS,
    INT32,
    check_int,
    encode_uvarint,
    read_uvarint,
    uuid_from_bytes,
    uuid_to_bytes,
    uvarint_tail,
)

UNKNOWN_TAGS = "_unknown_tagged_fields"

Decoder = Callable[[bytes, int], tuple[dict[str, Any], int]]
Encoder = Callable[[Mapping[str, Any], Callable[[bytes], Any]], None]

# bytes: records as a bytes copy; view: a zero-copy memoryview of the response buffer (valid as
# long as the caller keeps it, which the view itself ensures); parse: decoded record batches.
RECORDS_MODES = ("bytes", "view", "parse")

# Messages smaller than this decode too quickly for a collection to matter.
_GC_PAUSE_BYTES = 16 * 1024


# --- runtime helpers the generated code calls ------------------------------------------------

_ARRAY_STRUCTS: dict[tuple[str, int], struct.Struct] = {}


def _array_struct(code: str, n: int) -> struct.Struct:
    key = (code, n)
    s = _ARRAY_STRUCTS.get(key)
    if s is None:
        s = _ARRAY_STRUCTS[key] = struct.Struct(f">{n}{code}")
    return s


def _array_cache(code: str) -> dict[int, struct.Struct]:
    # Per element type, a dict n -> Struct(">{n}{code}"); small sizes are made up front.
    cache = {n: struct.Struct(f">{n}{code}") for n in range(65)}
    return cache


def _null_error(where: str) -> None:
    raise DecodeError(f"{where}: null on the wire where the schema allows none")


def _length_error(where: str, n: int) -> None:
    raise DecodeError(f"{where}: invalid length {n}")


def _unknown_keys(d: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    if not isinstance(d, Mapping):
        raise EncodeError(f"{where}: expected a dict, got {type(d).__name__}")
    extra = sorted(set(d) - known)
    if extra:
        raise EncodeError(f"{where}: unknown field(s) {', '.join(extra)}; known: {', '.join(sorted(known))}")


def _null_not_allowed(where: str) -> None:
    raise EncodeError(f"{where}: None given, but the field is not nullable at this version")


def _unsupported(where: str, name: str, version: int) -> None:
    raise UnsupportedVersionError(
        f"{where}: attempted to write a non-default {name} at version {version}, which does not have "
        "this field (and the spec does not mark it ignorable)"
    )


def _string_too_long(where: str, n: int) -> None:
    raise EncodeError(f"{where}: string of {n} bytes is longer than 32767")


def _records_bytes(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        return value  # type: ignore[return-value]
    from harness.protocol.records import encode_batches

    return encode_batches(value)


def _parse_records(value: bytes | None) -> Any:
    if value is None:
        return None
    from harness.protocol.records import parse_batches

    return parse_batches(value)


def _make_tag_reader(known: dict[int, tuple[str, Decoder]], where: str) -> Callable[[bytes, int], tuple[dict, int]]:
    def read_tags(buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
        count, pos = read_uvarint(buf, pos)
        out: dict[str, Any] = {}
        unknown: dict[int, bytes] | None = None
        for _ in range(count):
            tag, pos = read_uvarint(buf, pos)
            size, pos = read_uvarint(buf, pos)
            end = pos + size
            if end > len(buf):
                raise DecodeError(f"{where}: tagged field {tag} of {size} bytes runs past the end")
            entry = known.get(tag)
            if entry is None:
                if unknown is None:
                    unknown = {}
                unknown[tag] = buf[pos:end]
            else:
                value, p = entry[1](buf, pos)
                if p != end:
                    raise DecodeError(
                        f"{where}: tagged field {entry[0]} (tag {tag}) used {p - pos} of its {size} bytes"
                    )
                out[entry[0]] = value
            pos = end
        if unknown:
            out[UNKNOWN_TAGS] = unknown
        return out, pos

    return read_tags


def _write_tags(
    w: Callable[[bytes], Any],
    tags: list[tuple[int, bytes]],
    unknown: Any,
    where: str,
    known: frozenset[int] = frozenset(),
) -> None:
    if unknown:
        if not isinstance(unknown, Mapping):
            raise EncodeError(f"{where}: {UNKNOWN_TAGS} must map tag -> bytes")
        for tag, raw in unknown.items():
            if tag in known:
                raise EncodeError(f"{where}: tag {tag} is both a known field and in {UNKNOWN_TAGS}")
            tags.append((int(tag), bytes(raw)))
        tags.sort(key=lambda t: t[0])
    w(encode_uvarint(len(tags)))
    for tag, raw in tags:
        w(encode_uvarint(tag))
        w(encode_uvarint(len(raw)))
        w(raw)


def _no_tags_allowed(unknown: Any, where: str) -> None:
    if unknown:
        raise EncodeError(f"{where}: tagged fields given, but this version is not flexible")


_I16 = struct.Struct(">h").unpack_from
_I32 = INT32.unpack_from
_P16 = struct.Struct(">h").pack
_P32 = INT32.pack

_BASE_NS: dict[str, Any] = {
    "_uvt": uvarint_tail,
    "_uv": encode_uvarint,
    "_uuid": uuid_from_bytes,
    "_ub": uuid_to_bytes,
    "_i16": _I16,
    "_i32": _I32,
    "_p16": _P16,
    "_p32": _P32,
    "_arr": _array_struct,
    "_null": _null_error,
    "_badlen": _length_error,
    "_unknown_keys": _unknown_keys,
    "_unsupported": _unsupported,
    "_notnull": _null_not_allowed,
    "_toolong": _string_too_long,
    "_recbytes": _records_bytes,
    "_recparse": _parse_records,
    "_mv": memoryview,
    "_write_tags": _write_tags,
    "_no_tags": _no_tags_allowed,
    "DecodeError": DecodeError,
}
for _code in "bhHiIqd?":
    _BASE_NS[f"_A{ord(_code)}"] = _array_cache(_code)


# --- code generation -------------------------------------------------------------------------


class _Source:
    """Lines of one generated function plus the constants it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = dict(_BASE_NS)
        self._n = 0

    def tmp(self, prefix: str = "v") -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, value: Any, prefix: str = "K") -> str:
        name = self.tmp(prefix)
        self.ns[name] = value
        return name

    def line(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def build(self, name: str) -> Callable[..., Any]:
        text = "\n".join(self.lines)
        try:
            code = compile(text, f"<kcts-codec {name}>", "exec")
        except SyntaxError as e:  # a generator bug: show the source that failed
            raise ProtocolError(f"generated code for {name} does not compile: {e}\n{text}") from e
        exec(code, self.ns)
        fn = self.ns[name]
        fn.__kcts_source__ = text
        return fn  # type: ignore[no-any-return]


@dataclass(frozen=True)
class VersionCtx:
    """What code generation needs to know about the message version being compiled."""

    message: MessageSpec
    version: int
    flexible: bool
    records: str
    speculate: bool = True

    def field_flexible(self, f: FieldSpec) -> bool:
        # Only string/bytes fields may override flexibility (RequestHeader.ClientId does).
        if f.flexible_versions is not None:
            return self.version in f.flexible_versions
        return self.flexible


def present_fields(struct_spec: StructSpec, ctx: VersionCtx) -> tuple[list[FieldSpec], list[FieldSpec]]:
    """Fields of a struct in this version, split into (regular, tagged)."""
    regular: list[FieldSpec] = []
    tagged: list[FieldSpec] = []
    for f in struct_spec.fields:
        if ctx.version not in f.versions:
            continue
        if ctx.flexible and ctx.version in f.tagged_versions:
            tagged.append(f)
        else:
            regular.append(f)
    return regular, tagged


def default_value(f: FieldSpec, version: int, flexible: bool) -> Any:
    """A fresh default for field f as decoded at this version (structs expanded in full)."""
    d = f.default
    if f.type.is_array:
        return None if d is None else []
    if f.type.is_struct:
        if d is None:
            return None
        assert f.struct is not None
        return default_struct(f.struct, version, flexible)
    return d


def default_struct(struct_spec: StructSpec, version: int, flexible: bool) -> dict[str, Any]:
    return {f.name: default_value(f, version, flexible) for f in struct_spec.fields if version in f.versions}


def _default_expr(src: _Source, f: FieldSpec, ctx: VersionCtx) -> str:
    d = f.default
    if f.type.is_array:
        return "None" if d is None else "[]"
    if f.type.is_struct:
        if d is None:
            return "None"
        assert f.struct is not None
        # A dict display, so that every decoded message gets its own (nested) default struct.
        items = [f"{g.name!r}: {_default_expr(src, g, ctx)}" for g in f.struct.fields if ctx.version in g.versions]
        return "{" + ", ".join(items) + "}"
    if d is None or isinstance(d, bool | int | str | bytes):
        return repr(d)
    return src.const(d, "D")


# Decoder generation.


def _gen_decode_value(
    src: _Source, ind: int, f: FieldSpec, ctx: VersionCtx, target: str, where: str, tagged: bool = False
) -> None:
    t = f.type
    nullable = ctx.version in f.nullable_versions
    if t.is_array:
        _gen_decode_array(src, ind, f, ctx, target, where, nullable)
    elif t.is_struct and nullable and tagged:
        # A tagged nullable struct carries an unsigned varint marker, 0 for null (as Kafka's
        # generated readers do), not the int8 -1 of an untagged one.
        assert f.struct is not None
        m = src.tmp("m")
        src.line(ind, f"{m} = buf[pos]")
        src.line(ind, "pos += 1")
        src.line(ind, f"if {m} > 127: {m}, pos = _uvt(buf, pos, {m})")
        src.line(ind, f"if {m} == 0: {target} = None")
        src.line(ind, "else:")
        _gen_decode_struct(src, ind + 1, f.struct, ctx, target, where)
    elif t.is_struct:
        assert f.struct is not None
        if nullable:
            # KIP-893: a nullable struct is preceded by an int8 marker, -1 for null.
            src.line(ind, "if buf[pos] > 127:")
            src.line(ind + 1, "pos += 1")
            src.line(ind + 1, f"{target} = None")
            src.line(ind, "else:")
            src.line(ind + 1, "pos += 1")
            _gen_decode_struct(src, ind + 1, f.struct, ctx, target, where)
        else:
            _gen_decode_struct(src, ind, f.struct, ctx, target, where)
    elif t.text in ("string", "bytes", "records"):
        kind = "view" if t.text == "records" and ctx.records == "view" else t.text
        _gen_decode_lenprefixed(src, ind, kind, ctx.field_flexible(f), nullable, target, f"{where}.{f.name}")
        if t.text == "records" and ctx.records == "parse":
            src.line(ind, f"{target} = _recparse({target})")
    else:
        fmt, size = FIXED_FORMATS[t.text]
        s = src.const(struct.Struct(">" + fmt).unpack_from, "S")
        src.line(ind, f"{target}, = {s}(buf, pos)")
        src.line(ind, f"pos += {size}")
        if t.text == "uuid":
            src.line(ind, f"{target} = _uuid({target})")


def _gen_read_length(src: _Source, ind: int, compact: bool, n: str, legacy_reader: str, width: int) -> None:
    if compact:
        src.line(ind, f"{n} = buf[pos]")
        src.line(ind, "pos += 1")
        src.line(ind, f"if {n} > 127: {n}, pos = _uvt(buf, pos, {n})")
        src.line(ind, f"{n} -= 1")
    else:
        src.line(ind, f"{n}, = {legacy_reader}(buf, pos)")
        src.line(ind, f"pos += {width}")


def _gen_decode_lenprefixed(
    src: _Source, ind: int, kind: str, compact: bool, nullable: bool, target: str, where: str
) -> None:
    n = src.tmp("n")
    if kind == "string":
        _gen_read_length(src, ind, compact, n, "_i16", 2)
    else:
        _gen_read_length(src, ind, compact, n, "_i32", 4)
    w = src.const(where, "W")
    conv = ".decode()" if kind == "string" else ""
    source = "_mv(buf)" if kind == "view" else "buf"
    if nullable:
        src.line(ind, f"if {n} < 0: {target} = None")
        src.line(ind, "else:")
        src.line(ind + 1, f"{target} = {source}[pos:pos + {n}]{conv}")
        src.line(ind + 1, f"pos += {n}")
    else:
        src.line(ind, f"if {n} < 0: _null({w})")
        src.line(ind, f"{target} = {source}[pos:pos + {n}]{conv}")
        src.line(ind, f"pos += {n}")


def _gen_decode_array(
    src: _Source, ind: int, f: FieldSpec, ctx: VersionCtx, target: str, where: str, nullable: bool
) -> None:
    n = src.tmp("n")
    _gen_read_length(src, ind, ctx.flexible, n, "_i32", 4)
    w = src.const(f"{where}.{f.name}", "W")
    if nullable:
        src.line(ind, f"if {n} < 0: {target} = None")
        src.line(ind, "else:")
        ind += 1
    else:
        src.line(ind, f"if {n} < 0: _null({w})")
    elem = f.type.element
    if elem in FIXED_FORMATS and elem != "uuid":
        code, size = FIXED_FORMATS[elem]
        cache = f"_A{ord(code)}"
        s = src.tmp("s")
        src.line(ind, f"{s} = {cache}.get({n})")
        src.line(ind, f"if {s} is None: {s} = _arr({code!r}, {n})")
        src.line(ind, f"{target} = list({s}.unpack_from(buf, pos))")
        src.line(ind, f"pos += {size} * {n}")
        return
    ap = src.tmp("ap")
    item = src.tmp("e")
    if ctx.speculate and f.struct is not None and _flat_fields(f.struct, ctx) is not None:
        _gen_decode_flat_array(src, ind, f, ctx, target, where, n, item)
        return
    src.line(ind, f"{target} = []")
    src.line(ind, f"{ap} = {target}.append")
    src.line(ind, f"for _ in range({n}):")
    if elem == "uuid":
        src.line(ind + 1, f"{ap}(_uuid(buf[pos:pos + 16]))")
        src.line(ind + 1, "pos += 16")
        src.line(ind, f"if pos > len(buf): _badlen({w}, {n})")
    elif elem in ("string", "bytes"):
        _gen_decode_lenprefixed(src, ind + 1, elem, ctx.flexible, False, item, f"{where}.{f.name}[]")
        src.line(ind + 1, f"{ap}({item})")
    else:
        assert f.struct is not None
        _gen_decode_struct(src, ind + 1, f.struct, ctx, item, f"{where}.{f.name}[]")
        src.line(ind + 1, f"{ap}({item})")


def _gen_decode_struct(src: _Source, ind: int, s: StructSpec, ctx: VersionCtx, target: str, where: str) -> None:
    regular, tagged = present_fields(s, ctx)
    names: dict[str, str] = {}
    group: list[tuple[FieldSpec, str]] = []

    def flush() -> None:
        if not group:
            return
        fmt = ">" + "".join(FIXED_FORMATS[f.type.text][0] for f, _ in group)
        st = struct.Struct(fmt)
        unpack = src.const(st.unpack_from, "S")
        src.line(ind, f"{', '.join(v for _, v in group)}, = {unpack}(buf, pos)")
        src.line(ind, f"pos += {st.size}")
        for f, v in group:
            if f.type.text == "uuid":
                src.line(ind, f"{v} = _uuid({v})")
        group.clear()

    for f in regular:
        v = src.tmp()
        names[f.name] = v
        if f.type.is_fixed:
            group.append((f, v))
            continue
        flush()
        _gen_decode_value(src, ind, f, ctx, v, where)
    flush()

    tv = None
    if ctx.flexible:
        known: dict[int, tuple[str, Decoder]] = {}
        for f in tagged:
            assert f.tag is not None
            known[f.tag] = (f.name, _compile_value_decoder(f, ctx, f"{where}.{f.name}"))
        reader = src.const(_make_tag_reader(known, where), "T")
        tv = src.tmp("tv")
        # The first byte of the count is nonzero exactly when there are tagged fields.
        src.line(ind, f"if buf[pos]: {tv}, pos = {reader}(buf, pos)")
        src.line(ind, "else:")
        src.line(ind + 1, "pos += 1")
        src.line(ind + 1, f"{tv} = None")
        for f in tagged:
            names[f.name] = _default_expr(src, f, ctx)

    items = ", ".join(f"{f.name!r}: {names[f.name]}" for f in s.fields if f.name in names)
    src.line(ind, f"{target} = {{{items}}}")
    if tv is not None:
        src.line(ind, f"if {tv} is not None: {target}.update({tv})")


def _gen_decode_flat_array(
    src: _Source, ind: int, f: FieldSpec, ctx: VersionCtx, target: str, where: str, n: str, item: str
) -> None:
    """An array of flat structs: runs of same-shaped elements go through a compiled fast path."""
    assert f.struct is not None
    site = src.const(_FlatSite(f.struct, ctx), "FS")
    i, fr, c = src.tmp("i"), src.tmp("fr"), src.tmp("c")
    src.line(ind, f"{target} = []")
    src.line(ind, f"{i} = 0")
    src.line(ind, f"{fr} = {site}.last")
    src.line(ind, f"while {i} < {n}:")
    src.line(ind + 1, f"if {fr} is not None:")
    src.line(ind + 2, f"{c}, pos = {fr}(buf, pos, {n} - {i}, {target})")
    src.line(ind + 2, f"{i} += {c}")
    src.line(ind + 2, f"if {i} >= {n}: break")
    _gen_decode_struct(src, ind + 1, f.struct, ctx, item, f"{where}.{f.name}[]")
    src.line(ind + 1, f"{target}.append({item})")
    src.line(ind + 1, f"{i} += 1")
    src.line(ind + 1, f"{fr} = {site}.learn({item})")


def _flat_fields(s: StructSpec, ctx: VersionCtx) -> list[FieldSpec] | None:
    """The regular fields of a struct whose every field has a shape fixed by its lengths alone.

    Such a struct (integers, strings, bytes, arrays of integers; no nested structs) can be
    decoded, once the lengths of its variable parts are known, by one struct format.
    """
    regular, _ = present_fields(s, ctx)
    if not regular:
        return None
    for f in regular:
        t = f.type
        if t.is_struct or t.text == "records":
            return None
        if t.is_array and t.element not in FIXED_FORMATS:
            return None
        if t.is_array and t.element == "uuid":
            return None
    return regular


class _FlatSite:
    """Shape-speculative decoding of one array-of-flat-structs site in a compiled decoder.

    The shape of an element is the tuple of lengths of its variable parts (-1 for null). Once an
    element of a shape has been decoded the slow way, a function for that shape is compiled: for
    each length-prefix byte (and the empty tag buffer) one extended slice gathers that byte from
    every element of the candidate run, and the run ends at the first element where any differs;
    `Struct.iter_unpack` then reads the run and a comprehension builds the dicts. Elements that do
    not fit go through the generic code, so the result is the same either way (tests compare).
    Metadata partitions are the case this is for: thousands of elements of one shape.
    """

    MAX_SHAPES = 16
    MAX_ITEMS = 256

    def __init__(self, struct_spec: StructSpec, ctx: VersionCtx) -> None:
        self.struct = struct_spec
        self.ctx = ctx
        fields = _flat_fields(struct_spec, ctx)
        assert fields is not None
        self.fields = fields
        self.variable = [f for f in fields if not f.type.is_fixed]
        self.shapes: dict[tuple[int, ...], Any] = {}
        self.last: Any = None
        self.lock = threading.Lock()

    def learn(self, element: dict[str, Any]) -> Any:
        shape = []
        for f in self.variable:
            v = element[f.name]
            if v is None:
                shape.append(-1)
            elif isinstance(v, str):
                shape.append(len(v) if v.isascii() else len(v.encode()))
            else:
                shape.append(len(v))
        key = tuple(shape)
        fn = self.shapes.get(key)
        if fn is None:
            if len(self.shapes) >= self.MAX_SHAPES:
                return None
            with self.lock:
                fn = self.shapes.get(key)
                if fn is None:
                    fn = self.shapes[key] = self._compile(key)
        if fn is not False:
            self.last = fn
            return fn
        return None

    def _compile(self, shape: tuple[int, ...]) -> Any:
        ctx = self.ctx
        fmt = [">"]
        # (offset in the element, expected byte) for every length-prefix byte and the tag count.
        checks: list[tuple[int, int]] = []
        exprs: dict[str, str] = {}
        names: list[str] = []  # one per item of the unpacked tuple; "_" for the skipped ones
        src = _Source()
        offset = 0
        k = 0
        for f in self.fields:
            t = f.type
            if t.is_fixed:
                code, size = FIXED_FORMATS[t.text]
                fmt.append(code)
                v = f"x{len(names)}"
                names.append(v)
                exprs[f.name] = f"_uuid({v})" if t.text == "uuid" else v
                offset += size
                continue
            n = shape[k]
            k += 1
            if n > self.MAX_ITEMS:
                return False
            compact = ctx.field_flexible(f) if not t.is_array else ctx.flexible
            if compact:
                if n + 1 > 127:
                    return False  # a multi-byte varint: leave such elements to the generic code
                prefix = bytes([n + 1])
                fmt.append("B")
            elif t.text == "string":
                prefix = struct.pack(">h", n)
                fmt.append("h")
            else:
                prefix = struct.pack(">i", n)
                fmt.append("i")
            checks.extend((offset + j, b) for j, b in enumerate(prefix))
            offset += len(prefix)
            names.append("_")
            if n < 0:
                exprs[f.name] = "None"
            elif t.is_array:
                code, size = FIXED_FORMATS[t.element]
                fmt.append(f"{n}{code}")
                items = [f"x{len(names) + j}" for j in range(n)]
                names.extend(items)
                exprs[f.name] = "[" + ", ".join(items) + "]"
                offset += size * n
            else:
                fmt.append(f"{n}s")
                v = f"x{len(names)}"
                names.append(v)
                exprs[f.name] = f"{v}.decode()" if t.text == "string" else v
                offset += n
        if ctx.flexible:
            fmt.append("B")
            names.append("_")
            checks.append((offset, 0))
            offset += 1
            for f in present_fields(self.struct, ctx)[1]:
                exprs[f.name] = _default_expr(src, f, ctx)
        st = struct.Struct("".join(fmt))
        size = st.size
        if size == 0 or size != offset:
            return False
        it = src.const(st.iter_unpack, "IT")
        items = ", ".join(f"{f.name!r}: {exprs[f.name]}" for f in self.struct.fields if f.name in exprs)
        target = ", ".join(names) + ("," if len(names) == 1 else "")
        src.line(0, "def flat_run(buf, pos, limit, out):")
        src.line(1, f"m = (len(buf) - pos) // {size}")
        src.line(1, "if m > limit: m = limit")
        src.line(1, f"end = pos + m * {size}")
        # Each check takes, with one extended slice, the byte at the same offset of every element of
        # the run; the run ends before the first element where any such byte differs.
        for off, byte in checks:
            col = src.tmp("col")
            exp = src.const(bytes([byte]), "B")
            src.line(1, f"{col} = buf[pos + {off}:end:{size}]")
            src.line(1, f"if {col}.count({exp}) != m:")
            src.line(2, f"m = len({col}) - len({col}.lstrip({exp}))")
            src.line(2, f"end = pos + m * {size}")
        src.line(1, "if m == 0: return 0, pos")
        src.line(1, f"out.extend([{{{items}}} for {target} in {it}(buf[pos:end])])")
        src.line(1, "return m, end")
        return src.build("flat_run")


def _compile_value_decoder(f: FieldSpec, ctx: VersionCtx, where: str) -> Decoder:
    src = _Source()
    src.line(0, "def tagged_value(buf, pos):")
    _gen_decode_value(src, 1, f, ctx, "x", where, tagged=True)
    src.line(1, "return x, pos")
    return src.build("tagged_value")  # type: ignore[return-value]


# Encoder generation.


def _nondefault_expr(src: _Source, f: FieldSpec, x: str, nullable: bool) -> str:
    """Kafka's "is this value not the default" test, as a Python expression over variable x."""
    d = f.default
    t = f.type
    if t.is_array or t.text in ("bytes", "records"):
        if d is None:
            return f"{x} is not None"
        if nullable:
            return f"({x} is None or len({x}) != 0)"
        return f"len({x}) != 0"
    if t.is_struct:
        if d is None:
            return f"{x} is not None"
        assert f.struct is not None
        check = src.const(lambda v, s=f.struct: not struct_is_default(s, v), "C")
        if nullable:
            return f"({x} is None or {check}({x}))"
        return f"{check}({x})"
    if t.text == "uuid":
        zero = src.const(uuid_to_bytes(d), "D")
        return f"_ub({x}) != {zero}"
    if t.text == "string":
        if d is None:
            return f"{x} is not None"
        return f"{x} != {d!r}"
    return f"{x} != {d!r}"


def struct_is_default(s: StructSpec, value: Any) -> bool:
    """True when a struct value has every given field at its default (as Kafka's equals() would)."""
    if value is None:
        return False
    if not isinstance(value, Mapping):
        return False
    for f in s.fields:
        if f.name not in value:
            continue
        v = value[f.name]
        d = f.default
        if f.type.is_array:
            if (d is None and v is not None) or (d is not None and (v is None or len(v) != 0)):
                return False
        elif f.type.is_struct:
            if d is None:
                if v is not None:
                    return False
            elif f.struct is not None and not struct_is_default(f.struct, v):
                return False
        elif f.type.text == "uuid":
            if uuid_to_bytes(v) != uuid_to_bytes(d):
                return False
        elif v != d:
            return False
    return not value.get(UNKNOWN_TAGS)


def _gen_encode_value(
    src: _Source, ind: int, f: FieldSpec, ctx: VersionCtx, x: str, where: str, tagged: bool = False
) -> None:
    t = f.type
    nullable = ctx.version in f.nullable_versions
    w = src.const(f"{where}.{f.name}", "W")
    if t.is_array:
        if nullable:
            src.line(ind, f"if {x} is None: w({'_uv(0)' if ctx.flexible else '_p32(-1)'})")
            src.line(ind, "else:")
            ind += 1
        else:
            src.line(ind, f"if {x} is None: _notnull({w})")
        n = src.tmp("n")
        src.line(ind, f"{n} = len({x})")
        src.line(ind, f"w(_uv({n} + 1))" if ctx.flexible else f"w(_p32({n}))")
        elem = t.element
        if elem in FIXED_FORMATS and elem != "uuid":
            code = FIXED_FORMATS[elem][0]
            src.line(ind, f"w(_arr({code!r}, {n}).pack(*{x}))")
            return
        e = src.tmp("e")
        src.line(ind, f"for {e} in {x}:")
        if elem == "uuid":
            src.line(ind + 1, f"w(_ub({e}))")
        elif elem in ("string", "bytes"):
            _gen_encode_lenprefixed(src, ind + 1, elem, ctx.flexible, False, e, f"{where}.{f.name}[]")
        else:
            assert f.struct is not None
            _gen_encode_struct(src, ind + 1, f.struct, ctx, e, f"{where}.{f.name}[]")
    elif t.is_struct:
        assert f.struct is not None
        if nullable:
            null_marker = "b'\\x00'" if tagged else "b'\\xff'"  # tagged: varint 0; untagged: int8 -1
            src.line(ind, f"if {x} is None: w({null_marker})")
            src.line(ind, "else:")
            src.line(ind + 1, "w(b'\\x01')")
            _gen_encode_struct(src, ind + 1, f.struct, ctx, x, f"{where}.{f.name}")
        else:
            src.line(ind, f"if {x} is None: _notnull({w})")
            _gen_encode_struct(src, ind, f.struct, ctx, x, f"{where}.{f.name}")
    elif t.text in ("string", "bytes", "records"):
        if t.text == "records":
            src.line(ind, f"if {x} is not None: {x} = _recbytes({x})")
        _gen_encode_lenprefixed(src, ind, t.text, ctx.field_flexible(f), nullable, x, f"{where}.{f.name}")
    else:
        fmt = FIXED_FORMATS[t.text][0]
        pack = src.const(struct.Struct(">" + fmt).pack, "P")
        src.line(ind, f"w({pack}(_ub({x})))" if t.text == "uuid" else f"w({pack}({x}))")


def _gen_encode_lenprefixed(
    src: _Source, ind: int, kind: str, compact: bool, nullable: bool, x: str, where: str
) -> None:
    w = src.const(where, "W")
    if nullable:
        null = "_uv(0)" if compact else ("_p16(-1)" if kind == "string" else "_p32(-1)")
        src.line(ind, f"if {x} is None: w({null})")
        src.line(ind, "else:")
        ind += 1
    else:
        src.line(ind, f"if {x} is None: _notnull({w})")
    b = x
    if kind == "string":
        b = src.tmp("b")
        src.line(ind, f"{b} = {x}.encode()")
    n = src.tmp("n")
    src.line(ind, f"{n} = len({b})")
    if kind == "string":
        src.line(ind, f"if {n} > 32767: _toolong({w}, {n})")
        src.line(ind, f"w(_uv({n} + 1))" if compact else f"w(_p16({n}))")
    else:
        src.line(ind, f"w(_uv({n} + 1))" if compact else f"w(_p32({n}))")
    src.line(ind, f"w({b})")


def _gen_encode_struct(src: _Source, ind: int, s: StructSpec, ctx: VersionCtx, d: str, where: str) -> None:
    known = src.const(s.field_names() | {UNKNOWN_TAGS}, "F")
    wh = src.const(where, "W")
    src.line(ind, f"if {d}.keys() - {known}: _unknown_keys({d}, {known}, {wh})")
    regular, tagged = present_fields(s, ctx)

    # Fields this version lacks: a non-default value is an error unless the field is ignorable.
    for f in s.fields:
        if ctx.version in f.versions or f.ignorable:
            continue
        x = src.tmp("a")
        src.line(ind, f"{x} = {d}.get({f.name!r})")
        cond = _nondefault_expr(src, f, x, nullable=False)
        src.line(ind, f"if {x} is not None and {cond}: _unsupported({wh}, {f.name!r}, {ctx.version})")

    group: list[str] = []
    fmt: list[str] = []

    def flush() -> None:
        if not group:
            return
        pack = src.const(struct.Struct(">" + "".join(fmt)).pack, "P")
        src.line(ind, f"w({pack}({', '.join(group)}))")
        group.clear()
        fmt.clear()

    for f in regular:
        dflt = _default_expr(src, f, ctx) if not f.type.is_array else ("None" if f.default is None else "()")
        get = f"{d}.get({f.name!r}, {dflt})"
        if f.type.is_fixed:
            group.append(f"_ub({get})" if f.type.text == "uuid" else get)
            fmt.append(FIXED_FORMATS[f.type.text][0])
            continue
        flush()
        x = src.tmp("x")
        src.line(ind, f"{x} = {get}")
        _gen_encode_value(src, ind, f, ctx, x, where)
    flush()

    if not ctx.flexible:
        src.line(ind, f"if {UNKNOWN_TAGS!r} in {d}: _no_tags({d}[{UNKNOWN_TAGS!r}], {wh})")
        return
    if not tagged:
        src.line(ind, f"if {UNKNOWN_TAGS!r} in {d}: _write_tags(w, [], {d}[{UNKNOWN_TAGS!r}], {wh})")
        src.line(ind, "else: w(b'\\x00')")
        return
    tags = src.tmp("tags")
    src.line(ind, f"{tags} = []")
    for f in sorted(tagged, key=lambda f: f.tag or 0):
        x = src.tmp("t")
        enc = src.const(_compile_value_encoder(f, ctx, where), "E")
        dflt = _default_expr(src, f, ctx) if not f.type.is_array else ("None" if f.default is None else "()")
        src.line(ind, f"{x} = {d}.get({f.name!r}, {dflt})")
        cond = _nondefault_expr(src, f, x, ctx.version in f.nullable_versions)
        src.line(ind, f"if {cond}: {tags}.append(({f.tag}, {enc}({x})))")
    known_tags = src.const(frozenset(f.tag for f in tagged), "KT")
    src.line(ind, f"_write_tags(w, {tags}, {d}.get({UNKNOWN_TAGS!r}), {wh}, {known_tags})")


def _compile_value_encoder(f: FieldSpec, ctx: VersionCtx, where: str) -> Callable[[Any], bytes]:
    src = _Source()
    src.line(0, "def tagged_value(x):")
    src.line(1, "parts = []")
    src.line(1, "w = parts.append")
    _gen_encode_value(src, 1, f, ctx, "x", where, tagged=True)
    src.line(1, "return b''.join(parts)")
    return src.build("tagged_value")  # type: ignore[return-value]


# --- compiled codecs, cached -----------------------------------------------------------------

_cache: dict[tuple[int, int, str, str], Any] = {}
_cache_lock = threading.Lock()
_keepalive: dict[int, MessageSpec] = {}


def _check_version(spec: MessageSpec, version: int) -> None:
    if version not in spec.valid_versions:
        raise UnsupportedVersionError(
            f"{spec.name} has no version {version} in this spec (valid: {spec.valid_versions})"
        )


def compile_decoder(
    spec: MessageSpec,
    version: int,
    *,
    records: str = "bytes",
    check_version: bool = True,
    speculate: bool = True,
) -> Decoder:
    """The decoder of one message version: `fn(buf, pos) -> (dict, new_pos)`.

    speculate=False leaves out the shape-speculative fast path for arrays of flat structs
    (the result is the same; tests compare the two).
    """
    if records not in RECORDS_MODES:
        raise ValueError(f"records must be one of {RECORDS_MODES}")
    if check_version:
        _check_version(spec, version)
    key = (id(spec), version, "decode", records if speculate else records + "-plain")
    fn = _cache.get(key)
    if fn is None:
        ctx = VersionCtx(spec, version, spec.is_flexible(version), records, speculate)
        src = _Source()
        src.line(0, "def decode(buf, pos):")
        _gen_decode_struct(src, 1, spec.struct, ctx, "rv", f"{spec.name} v{version}")
        src.line(1, "return rv, pos")
        fn = src.build("decode")
        with _cache_lock:
            _cache[key] = fn
            _keepalive[id(spec)] = spec
    return fn  # type: ignore[no-any-return]


def compile_encoder(spec: MessageSpec, version: int, *, check_version: bool = True) -> Encoder:
    """The encoder of one message version: `fn(body, append)` calls append(bytes) in order."""
    if check_version:
        _check_version(spec, version)
    key = (id(spec), version, "encode", "")
    fn = _cache.get(key)
    if fn is None:
        ctx = VersionCtx(spec, version, spec.is_flexible(version), "bytes")
        src = _Source()
        src.line(0, "def encode(d, w):")
        _gen_encode_struct(src, 1, spec.struct, ctx, "d", f"{spec.name} v{version}")
        fn = src.build("encode")
        with _cache_lock:
            _cache[key] = fn
            _keepalive[id(spec)] = spec
    return fn  # type: ignore[no-any-return]


def generated_source(spec: MessageSpec, version: int, direction: str = "decode") -> str:
    """The Python source generated for a message version (for debugging the codec)."""
    fn = compile_decoder(spec, version) if direction == "decode" else compile_encoder(spec, version)
    return fn.__kcts_source__  # type: ignore[attr-defined,no-any-return]


def encode(
    spec: MessageSpec, version: int, body: Mapping[str, Any] | None = None, *, check_version: bool = True
) -> bytes:
    """Encode a message body (no header, no size prefix)."""
    fn = compile_encoder(spec, version, check_version=check_version)
    parts: list[bytes] = []
    try:
        fn(body if body is not None else {}, parts.append)
    except ProtocolError:
        raise
    except (struct.error, TypeError, AttributeError, ValueError, OverflowError, KeyError) as e:
        raise EncodeError(_diagnose(spec, version, body or {}, e)) from e
    return b"".join(parts)


def decode(
    spec: MessageSpec,
    version: int,
    data: bytes | bytearray | memoryview,
    *,
    records: str = "bytes",
    offset: int = 0,
    allow_trailing: bool = False,
    check_version: bool = True,
) -> dict[str, Any]:
    """Decode a message body that fills `data` from `offset` to the end."""
    buf = data if type(data) is bytes else bytes(data)
    fn = compile_decoder(spec, version, records=records, check_version=check_version)
    value, pos = _run_decoder(fn, buf, offset, spec, version)
    if pos != len(buf) and not allow_trailing:
        raise DecodeError(f"{spec.name} v{version}: {len(buf) - pos} trailing bytes after the message (of {len(buf)})")
    return value


def decode_from(
    spec: MessageSpec, version: int, buf: bytes, offset: int = 0, *, records: str = "bytes"
) -> tuple[dict[str, Any], int]:
    """Decode one message at offset; return it and the offset just past it."""
    fn = compile_decoder(spec, version, records=records)
    return _run_decoder(fn, buf, offset, spec, version)


def _run_decoder(fn: Decoder, buf: bytes, offset: int, spec: MessageSpec, version: int) -> tuple[dict[str, Any], int]:
    # A decode makes many small containers and no cycles; letting the collector run in the middle
    # walks the growing result again and again (over half the time for a 2000-partition Metadata).
    paused = gc.isenabled() and len(buf) - offset > _GC_PAUSE_BYTES
    if paused:
        gc.disable()
    try:
        value, pos = fn(buf, offset)
    except DecodeError as e:
        raise DecodeError(f"{spec.name} v{version}: {e}") from e
    except (struct.error, IndexError) as e:
        raise DecodeError(f"{spec.name} v{version}: truncated or corrupt ({len(buf)} bytes): {e}") from e
    except UnicodeDecodeError as e:
        raise DecodeError(f"{spec.name} v{version}: a string is not valid UTF-8: {e}") from e
    finally:
        if paused:
            gc.enable()
    if pos > len(buf):
        raise DecodeError(f"{spec.name} v{version}: truncated: needs {pos} bytes, got {len(buf)}")
    return value, pos


def _diagnose(spec: MessageSpec, version: int, body: Any, cause: BaseException) -> str:
    """Find which field made the compiled encoder fail, for an error message with a path."""
    ctx = VersionCtx(spec, version, spec.is_flexible(version), "bytes")
    found = _find_bad(spec.struct, body, ctx, spec.name)
    prefix = f"{spec.name} v{version}"
    if found:
        return f"{prefix}: {found}"
    return f"{prefix}: {type(cause).__name__}: {cause}"


def _find_bad(s: StructSpec, value: Any, ctx: VersionCtx, path: str) -> str | None:
    if not isinstance(value, Mapping):
        return f"{path}: expected a dict, got {type(value).__name__}"
    for f in s.fields:
        if ctx.version not in f.versions or f.name not in value:
            continue
        v = value[f.name]
        p = f"{path}.{f.name}"
        if v is None:
            continue
        t = f.type
        if t.is_array:
            if not isinstance(v, list | tuple):
                return f"{p}: expected a list, got {type(v).__name__}"
            for i, item in enumerate(v):
                problem = _find_bad_item(f, t.element, item, ctx, f"{p}[{i}]")
                if problem:
                    return problem
        else:
            problem = _find_bad_item(f, t.text, v, ctx, p)
            if problem:
                return problem
    return None


def _find_bad_item(f: FieldSpec, type_name: str, v: Any, ctx: VersionCtx, p: str) -> str | None:
    if f.type.is_struct:
        assert f.struct is not None
        return _find_bad(f.struct, v, ctx, p)
    if type_name == "string":
        return None if isinstance(v, str) else f"{p}: expected str, got {type(v).__name__} {v!r}"
    if type_name in ("bytes", "records"):
        ok = isinstance(v, bytes | bytearray | memoryview | list)
        return None if ok else f"{p}: expected bytes, got {type(v).__name__}"
    if type_name == "uuid":
        try:
            uuid_to_bytes(v)
        except (EncodeError, ValueError) as e:
            return f"{p}: {e}"
        return None
    try:
        check_int(type_name, v)
    except EncodeError as e:
        return f"{p}: {e}"
    return None


# --- headers and whole requests/responses ----------------------------------------------------


def _api_of(spec: ApiSpec | MessageSpec) -> ApiSpec:
    if isinstance(spec, ApiSpec):
        return spec
    if spec.specset is None or spec.api_key is None:
        raise ProtocolError(f"{spec.name} is not part of a loaded API; pass the ApiSpec")
    return spec.specset.api(spec.api_key)


def _specset_of(api: ApiSpec) -> SpecSet:
    assert api.request.specset is not None, "specs must be loaded through load_specs"
    return api.request.specset


def encode_request(
    spec: ApiSpec | MessageSpec,
    version: int,
    header_fields: Mapping[str, Any] | None = None,
    body: Mapping[str, Any] | None = None,
) -> bytes:
    """Header + body of a request, without the 4-byte size prefix (see `frame`).

    `header_fields` may give CorrelationId and ClientId; the API key and version are filled in.
    """
    api = _api_of(spec)
    return encode_request_header(api, version, header_fields) + encode(api.request, version, body)


def encode_request_header(
    spec: ApiSpec | MessageSpec, version: int, header_fields: Mapping[str, Any] | None = None
) -> bytes:
    """The request header alone, at the header version Kafka uses for this API version."""
    api = _api_of(spec)
    hv = api.request_header_version(version)
    header = dict(header_fields or {})
    header["RequestApiKey"] = api.key
    header["RequestApiVersion"] = version
    header.setdefault("CorrelationId", 0)
    return encode(_specset_of(api).request_header, hv, header, check_version=False)


def encode_response(
    spec: ApiSpec | MessageSpec,
    version: int,
    header_fields: Mapping[str, Any] | None = None,
    body: Mapping[str, Any] | None = None,
) -> bytes:
    """Header + body of a response, without the size prefix (for fakes and proxies)."""
    api = _api_of(spec)
    hv = api.response_header_version(version)
    head = encode(_specset_of(api).response_header, hv, dict(header_fields or {}), check_version=False)
    return head + encode(api.response, version, body)


def decode_response(
    spec: ApiSpec | MessageSpec,
    version: int,
    data: bytes | bytearray | memoryview,
    *,
    records: str = "bytes",
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, body) of a response frame without its size prefix."""
    api = _api_of(spec)
    buf = data if type(data) is bytes else bytes(data)
    hv = api.response_header_version(version)
    hspec = _specset_of(api).response_header
    header, pos = _run_decoder(compile_decoder(hspec, hv, check_version=False), buf, 0, hspec, hv)
    body = decode(api.response, version, buf, records=records, offset=pos)
    return header, body


def split_response(
    spec: ApiSpec | MessageSpec, version: int, data: bytes | bytearray | memoryview
) -> tuple[dict[str, Any], bytes]:
    """(decoded header, body bytes) of a response frame, e.g. to keep a body for later decoding."""
    api = _api_of(spec)
    buf = data if type(data) is bytes else bytes(data)
    hv = api.response_header_version(version)
    hspec = _specset_of(api).response_header
    header, pos = _run_decoder(compile_decoder(hspec, hv, check_version=False), buf, 0, hspec, hv)
    return header, buf[pos:]


@dataclass(frozen=True)
class DecodedRequest:
    api: ApiSpec
    version: int
    header: dict[str, Any]
    body: dict[str, Any]


def decode_request(specs: SpecSet, data: bytes | bytearray | memoryview, *, records: str = "bytes") -> DecodedRequest:
    """Decode a request frame (no size prefix): its key and version come from the header."""
    buf = data if type(data) is bytes else bytes(data)
    if len(buf) < 4:
        raise DecodeError(f"request of {len(buf)} bytes is too short for a header")
    key, version = struct.unpack_from(">hh", buf, 0)
    api = specs.api(key)
    hv = api.request_header_version(version)
    hspec = specs.request_header
    header, pos = _run_decoder(compile_decoder(hspec, hv, check_version=False), buf, 0, hspec, hv)
    body = decode(api.request, version, buf, records=records, offset=pos)
    return DecodedRequest(api, version, header, body)


def map_key_fields(f: FieldSpec, version: int) -> tuple[str, ...]:
    """The mapKey fields of an array-of-structs field at a version (e.g. Name up to v12, TopicId after).

    Kafka's generated classes hold such arrays as collections keyed by these fields; on the wire
    they are plain arrays, and here plain lists. `index_by_map_key` gives the keyed view.
    """
    if f.struct is None or not f.type.is_array:
        return ()
    return tuple(g.name for g in f.struct.fields if g.map_key and version in g.versions)


def index_by_map_key(f: FieldSpec, version: int, items: list[dict[str, Any]] | None) -> dict[Any, dict[str, Any]]:
    """{key: element} of a decoded array by its mapKey fields (a tuple when there are several).

    Like the Java collection's find(), the first element wins when a key repeats.
    """
    keys = map_key_fields(f, version)
    if not keys:
        raise ProtocolError(f"{f.name} has no mapKey field at version {version}")
    out: dict[Any, dict[str, Any]] = {}
    for item in items or []:
        key = item[keys[0]] if len(keys) == 1 else tuple(item[k] for k in keys)
        out.setdefault(key, item)
    return out


def decode_versioned(spec: MessageSpec, data: bytes | bytearray | memoryview) -> tuple[int, dict[str, Any]]:
    """(version, body) of a record key or value that starts with its int16 schema version.

    Coordinator records in __consumer_offsets and __transaction_state (OffsetCommitKey/Value,
    TransactionLogValue, ...) and control record values are stored this way.
    """
    buf = data if type(data) is bytes else bytes(data)
    if len(buf) < 2:
        raise DecodeError(f"{spec.name}: {len(buf)} bytes, too short for a version prefix")
    (version,) = struct.unpack_from(">h", buf, 0)
    return version, decode(spec, version, buf, offset=2)


def encode_versioned(spec: MessageSpec, version: int, body: Mapping[str, Any] | None = None) -> bytes:
    return _P16(version) + encode(spec, version, body)


def frame(payload: bytes) -> bytes:
    """Prefix a request or response with its int32 size, as it goes on the wire."""
    return _P32(len(payload)) + payload


def read_uvarint_at(buf: bytes, pos: int) -> tuple[int, int]:
    """Re-exported for callers that walk raw frames."""
    return read_uvarint(buf, pos)
