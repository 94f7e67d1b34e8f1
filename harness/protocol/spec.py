"""Kafka's JSON message specs, read from the jars of the version under test.

The specs ship in kafka-clients as `common/message/*.json` (requests, responses, headers, data
records) and in the coordinator jars (OffsetCommitValue and friends). Reading them from the very
jars of the broker under test means the codec knows that broker's schemas exactly, including
versions that no Python client has heard of yet.

The semantics follow Kafka's generator (generator/src/main/java/org/apache/kafka/message): a JSON
`null` default means "no default" (the type's natural one), numbers and booleans given as JSON
scalars mean the same as their string forms, and `taggedVersions` implies `versions`.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.protocol.exceptions import SpecError

MAX_VERSION = 0x7FFF

# Types whose wire form has a fixed width; everything else is length-prefixed or a struct.
FIXED_TYPES: frozenset[str] = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid"}
)
PRIMITIVE_TYPES: frozenset[str] = FIXED_TYPES | {"string", "bytes", "records"}

# Prefixes inside a jar that hold message specs; kafka-storage's `message/` is a different
# (storage-internal) family and is left out on purpose.
_SPEC_DIRS = ("common/message/", "common/metadata/")


@dataclass(frozen=True)
class Versions:
    """An inclusive range of versions; `low > high` is the empty range ("none")."""

    low: int
    high: int

    NONE_TEXT = "none"

    @classmethod
    def parse(cls, text: str | None, default: Versions | None = None) -> Versions:
        if text is None or text == "":
            if default is None:
                raise SpecError("a version range is required here")
            return default
        text = str(text).strip()
        if text == cls.NONE_TEXT:
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), MAX_VERSION)
        if "-" in text:
            low, high = text.split("-", 1)
            return cls(int(low), int(high))
        v = int(text)
        return cls(v, v)

    @property
    def empty(self) -> bool:
        return self.low > self.high

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.low, self.high + 1))

    def intersect(self, other: Versions) -> Versions:
        low, high = max(self.low, other.low), min(self.high, other.high)
        return Versions(low, high) if low <= high else NO_VERSIONS

    def __str__(self) -> str:
        if self.empty:
            return self.NONE_TEXT
        if self.high == MAX_VERSION:
            return f"{self.low}+"
        if self.low == self.high:
            return str(self.low)
        return f"{self.low}-{self.high}"


NO_VERSIONS = Versions(0, -1)
ALL_VERSIONS = Versions(0, MAX_VERSION)


@dataclass(frozen=True)
class FieldType:
    """A field's type as written in the spec: `int32`, `string`, `Foo`, `[]int32`, `[]Foo`."""

    text: str

    @property
    def is_array(self) -> bool:
        return self.text.startswith("[]")

    @property
    def element(self) -> str:
        """The element type of an array, or the type itself."""
        return self.text[2:] if self.is_array else self.text

    @property
    def is_struct(self) -> bool:
        """True for a struct and for an array of structs."""
        return self.element not in PRIMITIVE_TYPES

    @property
    def is_fixed(self) -> bool:
        return not self.is_array and self.text in FIXED_TYPES

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, eq=False)
class FieldSpec:
    """One field of a struct. `struct` is set for struct fields and arrays of structs."""

    name: str
    type: FieldType
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    default_text: str
    ignorable: bool
    map_key: bool
    entity_type: str | None
    about: str
    flexible_versions: Versions | None
    zero_copy: bool
    struct: StructSpec | None = None

    def present_in(self, version: int) -> bool:
        return version in self.versions

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable_versions

    def tagged_in(self, version: int) -> bool:
        return version in self.tagged_versions

    @cached_property
    def default(self) -> Any:
        """The Python value Kafka's generated classes start this field with (shared: do not mutate).

        An empty array is `()`, a struct `{}` (read-only; every field at its default), unless the
        spec says null; the codec gives decoded messages fresh lists and dicts.
        """
        return parse_default(self)


@dataclass(frozen=True, eq=False)
class StructSpec:
    name: str
    versions: Versions
    fields: tuple[FieldSpec, ...]

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")

    def field_names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)


@dataclass(frozen=True, eq=False)
class MessageSpec:
    """One JSON spec file: a request, a response, a header, or a data/coordinator record."""

    name: str
    type: str
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    struct: StructSpec
    structs: dict[str, StructSpec]
    common_structs: tuple[str, ...]
    latest_version_unstable: bool
    listeners: tuple[str, ...]
    source: str
    # The SpecSet this spec was loaded into, so that a request spec can find its header spec.
    specset: SpecSet | None = field(default=None, compare=False, repr=False)

    @property
    def fields(self) -> tuple[FieldSpec, ...]:
        return self.struct.fields

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible_versions

    def versions(self) -> list[int]:
        return list(self.valid_versions)

    def __repr__(self) -> str:
        key = "" if self.api_key is None else f" key={self.api_key}"
        return f"<MessageSpec {self.name}{key} versions={self.valid_versions} flexible={self.flexible_versions}>"


@dataclass(frozen=True, eq=False)
class ApiSpec:
    """A request/response pair sharing an API key."""

    key: int
    name: str
    request: MessageSpec
    response: MessageSpec

    @property
    def valid_versions(self) -> Versions:
        return self.request.valid_versions

    @property
    def latest_version_unstable(self) -> bool:
        return self.request.latest_version_unstable

    def request_header_version(self, version: int) -> int:
        # Kafka's ApiMessageTypeGenerator: ControlledShutdown v0 predates the client id.
        if self.key == 7 and version == 0:
            return 0
        return 2 if self.request.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        # KIP-511: a client may send an ApiVersions request the broker cannot parse as
        # flexible, so the response header stays v0 at every version.
        if self.key == 18:
            return 0
        return 1 if self.response.is_flexible(version) else 0

    def __repr__(self) -> str:
        return f"<ApiSpec {self.name} key={self.key} versions={self.valid_versions}>"


@dataclass(eq=False)
class SpecSet:
    """All specs of one Kafka version (or of the jars it was loaded from)."""

    label: str
    messages: dict[str, MessageSpec] = field(default_factory=dict, repr=False)
    _apis: dict[int, ApiSpec] = field(default_factory=dict, repr=False)
    _by_name: dict[str, ApiSpec] = field(default_factory=dict, repr=False)

    def add(self, spec: MessageSpec) -> None:
        self.messages.setdefault(spec.name, spec)

    def _link(self) -> None:
        for m in self.messages.values():
            if m.specset is None:
                object.__setattr__(m, "specset", self)
        requests = {m.api_key: m for m in self.messages.values() if m.type == "request"}
        responses = {m.api_key: m for m in self.messages.values() if m.type == "response"}
        for key, req in requests.items():
            resp = responses.get(key)
            if resp is None or key is None:
                continue
            api = ApiSpec(key, req.name.removesuffix("Request"), req, resp)
            self._apis[key] = api
            self._by_name[api.name] = self._by_name[api.name.lower()] = api

    def apis(self) -> list[ApiSpec]:
        return [self._apis[k] for k in sorted(self._apis)]

    def api(self, key_or_name: int | str | ApiSpec) -> ApiSpec:
        if isinstance(key_or_name, ApiSpec):
            return key_or_name
        if isinstance(key_or_name, int):
            try:
                return self._apis[key_or_name]
            except KeyError:
                raise SpecError(f"no API with key {key_or_name} in the {self.label} specs") from None
        name = key_or_name.removesuffix("Request").removesuffix("Response")
        api = self._by_name.get(name) or self._by_name.get(name.lower())
        if api is None:
            raise SpecError(f"no API named {key_or_name!r} in the {self.label} specs")
        return api

    def request(self, key_or_name: int | str) -> MessageSpec:
        return self.api(key_or_name).request

    def response(self, key_or_name: int | str) -> MessageSpec:
        return self.api(key_or_name).response

    def message(self, name: str) -> MessageSpec:
        """Any spec by its file name: `OffsetCommitValue`, `RequestHeader`, `EndTxnMarker`."""
        try:
            return self.messages[name]
        except KeyError:
            raise SpecError(f"no message spec named {name!r} in the {self.label} specs") from None

    @property
    def request_header(self) -> MessageSpec:
        return self.message("RequestHeader")

    @property
    def response_header(self) -> MessageSpec:
        return self.message("ResponseHeader")

    def __repr__(self) -> str:
        return f"<SpecSet {self.label}: {len(self._apis)} APIs, {len(self.messages)} specs>"


def strip_comments(text: str) -> str:
    """Remove `//` and `/* */` comments that are outside string literals."""
    out: list[str] = []
    i, n = 0, len(text)
    start = 0
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            out.append(text[start:i])
            if text[i + 1] == "/":
                end = text.find("\n", i)
                i = n if end < 0 else end
            else:
                end = text.find("*/", i + 2)
                if end < 0:
                    raise SpecError("unterminated /* comment")
                i = end + 2
            start = i
            continue
        i += 1
    out.append(text[start:])
    return "".join(out)


def parse_json(text: str, source: str = "<spec>") -> dict[str, Any]:
    try:
        data = json.loads(strip_comments(text))
    except ValueError as e:
        raise SpecError(f"{source}: not valid JSON after removing comments: {e}") from e
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a spec must be a JSON object")
    return data


def _default_text(raw: Any) -> str:
    # Jackson hands JSON scalars to the String constructor argument as text and JSON null as null,
    # which FieldSpec turns into "" (the type's natural default) -- not into a null default.
    if raw is None:
        return ""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return str(raw)


# Fields renamed without a wire change, keyed by (struct, the older name): the harness speaks every
# release with the newest names. KIP-890 part 2 (4.0, back to 3.6's specs) put AddPartitionsToTxn v0-3
# under V3AndBelow* names beside v4's batched transactions.
RENAMED: MappingProxyType[tuple[str, str], str] = MappingProxyType({
    ("AddPartitionsToTxnRequest", "TransactionalId"): "V3AndBelowTransactionalId",
    ("AddPartitionsToTxnRequest", "ProducerId"): "V3AndBelowProducerId",
    ("AddPartitionsToTxnRequest", "ProducerEpoch"): "V3AndBelowProducerEpoch",
    ("AddPartitionsToTxnRequest", "Topics"): "V3AndBelowTopics",
    ("AddPartitionsToTxnResponse", "Results"): "ResultsByTopicV3AndBelow",
    ("AddPartitionsToTxnTopicResult", "Results"): "ResultsByPartition",
    ("AddPartitionsToTxnPartitionResult", "ErrorCode"): "PartitionErrorCode",
})


def parse_message(data: dict[str, Any], source: str = "<spec>") -> MessageSpec:
    """Build a MessageSpec from one parsed JSON spec."""
    name = data.get("name")
    if not isinstance(name, str):
        raise SpecError(f"{source}: spec has no name")
    valid = Versions.parse(data.get("validVersions"))
    flexible = Versions.parse(data.get("flexibleVersions"), NO_VERSIONS)
    pascal = data.get("type") in ("request", "response")

    # Every struct, common or inline, is registered by name so a field may refer to it.
    raw_structs: dict[str, tuple[Versions, list[dict[str, Any]]]] = {}
    common = data.get("commonStructs", []) or []
    for cs in common:
        raw_structs[cs["name"]] = (Versions.parse(cs.get("versions"), ALL_VERSIONS), cs.get("fields", []))

    def register_inline(fields: Iterable[dict[str, Any]]) -> None:
        for f in fields:
            sub = f.get("fields")
            if sub is None:
                continue
            ftype = FieldType(f["type"])
            if ftype.element in raw_structs:
                raise SpecError(f"{source}: struct {ftype.element} is defined twice")
            tagged = Versions.parse(f.get("taggedVersions"), NO_VERSIONS)
            fv = Versions.parse(f.get("versions"), None if tagged.empty else tagged)
            raw_structs[ftype.element] = (fv, sub)
            register_inline(sub)

    register_inline(data.get("fields", []))
    for cs in common:
        register_inline(cs.get("fields", []))

    built: dict[str, StructSpec] = {}
    building: set[str] = set()

    def build_struct(sname: str) -> StructSpec:
        if sname in built:
            return built[sname]
        if sname not in raw_structs:
            raise SpecError(f"{source}: unknown struct type {sname}")
        if sname in building:
            raise SpecError(f"{source}: struct {sname} refers to itself")
        building.add(sname)
        versions, raw_fields = raw_structs[sname]
        struct = StructSpec(sname, versions, tuple(build_field(f, sname) for f in raw_fields))
        building.discard(sname)
        built[sname] = struct
        return struct

    def build_field(f: dict[str, Any], owner: str = "") -> FieldSpec:
        fname = f.get("name")
        if not isinstance(fname, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", fname):
            raise SpecError(f"{source}: invalid field name {fname!r}")
        if pascal:
            # Request and response names are PascalCase, but a few were not (`groupId` in OffsetFetch v8
            # up to 3.4, `timeoutMs` in CreateTopics): the wire carries no names, so one spelling serves
            # every release. (Coordinator records keep theirs: `group`, `topic`, ...)
            fname = fname[0].upper() + fname[1:]
            fname = RENAMED.get((owner, fname), fname)
        ftype = FieldType(f["type"])
        tagged = Versions.parse(f.get("taggedVersions"), NO_VERSIONS)
        versions = Versions.parse(f.get("versions"), None if tagged.empty else tagged)
        tag = f.get("tag")
        if (tag is None) != tagged.empty:
            raise SpecError(f"{source}: field {fname} must give both tag and taggedVersions, or neither")
        fv = f.get("flexibleVersions")
        return FieldSpec(
            name=fname,
            type=ftype,
            versions=versions,
            nullable_versions=Versions.parse(f.get("nullableVersions"), NO_VERSIONS),
            tagged_versions=tagged,
            tag=None if tag is None else int(tag),
            default_text=_default_text(f.get("default")),
            ignorable=bool(f.get("ignorable", False)),
            map_key=bool(f.get("mapKey", False)),
            entity_type=f.get("entityType"),
            about=f.get("about", ""),
            flexible_versions=None if fv in (None, "") else Versions.parse(fv),
            zero_copy=bool(f.get("zeroCopy", False)),
            struct=build_struct(ftype.element) if ftype.is_struct else None,
        )

    root = StructSpec(name, valid, tuple(build_field(f, name) for f in data.get("fields", [])))
    for sname in raw_structs:
        build_struct(sname)
    api_key = data.get("apiKey")
    return MessageSpec(
        name=name,
        type=str(data.get("type", "")),
        api_key=None if api_key is None else int(api_key),
        valid_versions=valid,
        flexible_versions=flexible,
        struct=root,
        structs=built,
        common_structs=tuple(cs["name"] for cs in common),
        latest_version_unstable=bool(data.get("latestVersionUnstable", False)),
        listeners=tuple(data.get("listeners", ()) or ()),
        source=source,
    )


def parse_default(f: FieldSpec) -> Any:
    """The value a field starts with when the caller does not give one (Kafka's rules)."""
    text = f.default_text
    t = f.type
    if t.is_array:
        if text == "null":
            return None
        if text:
            raise SpecError(f"field {f.name}: an array default must be empty or null, not {text!r}")
        return ()
    elem = t.text
    if elem == "bool":
        if text == "" or text.lower() == "false":
            return False
        if text.lower() == "true":
            return True
        raise SpecError(f"field {f.name}: invalid bool default {text!r}")
    if elem in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        if text == "":
            return 0
        neg = text.startswith("-")
        body = text[1:] if neg else text
        value = int(body[2:], 16) if body.startswith("0x") else int(body, 10)
        return -value if neg else value
    if elem == "float64":
        return float(text) if text else 0.0
    if elem == "uuid":
        if not text:
            from harness.protocol.types import ZERO_UUID

            return ZERO_UUID
        from harness.protocol.types import parse_uuid

        return parse_uuid(text)
    if elem == "string":
        return None if text == "null" else text
    if elem == "bytes":
        if text == "null":
            return None
        if text:
            raise SpecError(f"field {f.name}: a bytes default must be empty or null")
        return b""
    if elem == "records":
        return None
    # A struct: null, or the empty struct, which `{}` stands for (every field at its default).
    if text == "null":
        return None
    if text:
        raise SpecError(f"field {f.name}: a struct default must be empty or null")
    return MappingProxyType({})


def _jar_entries(jar: Path) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.endswith(".json") and name.startswith(_SPEC_DIRS) and name.count("/") == 2:
                out.append((name, z.read(name).decode("utf-8")))
    return out


@cache
def _load_jar_cached(path: str, mtime: float, size: int) -> tuple[MessageSpec, ...]:
    specs: list[MessageSpec] = []
    for entry, text in _jar_entries(Path(path)):
        source = f"{Path(path).name}!{entry}"
        specs.append(parse_message(parse_json(text, source), source))
    return tuple(specs)


def load_jar(jar: str | os.PathLike[str]) -> tuple[MessageSpec, ...]:
    """Parsed specs of one jar, cached per (path, mtime, size) for the life of the process."""
    p = Path(jar).resolve()
    try:
        st = p.stat()
    except OSError as e:
        raise SpecError(f"cannot read specs from {p}: {e}") from e
    return _load_jar_cached(str(p), st.st_mtime, st.st_size)


def _spec_jars(jars: Iterable[Path]) -> list[Path]:
    # kafka-clients first so that, should two jars ever carry the same spec name, the client's wins.
    kafka = [j for j in jars if j.name.startswith("kafka")]
    return sorted(kafka, key=lambda j: (not j.name.startswith("kafka-clients-"), j.name))


@cache
def _load_version(version: str) -> SpecSet:
    from harness.kafka.dist import resolve

    dist = resolve(version)
    return load_specs_from_jars(_spec_jars(dist.jars), label=dist.version)


def load_specs_from_jars(jars: Iterable[str | os.PathLike[str]], label: str | None = None) -> SpecSet:
    paths = [Path(j) for j in jars]
    specs = SpecSet(label or ",".join(p.name for p in paths))
    for jar in paths:
        for m in load_jar(jar):
            specs.add(m)
    specs._link()
    if not specs._apis:
        raise SpecError(f"no request/response specs found in {', '.join(str(p) for p in paths)}")
    return specs


def load_specs(version_or_jar: str | os.PathLike[str] | SpecSet) -> SpecSet:
    """Specs of a Kafka version ("4.4.0", resolved with Maven once) or of one jar file."""
    if isinstance(version_or_jar, SpecSet):
        return version_or_jar
    text = os.fspath(version_or_jar)
    if text.endswith(".jar") or os.sep in text:
        return load_specs_from_jars([text])
    return _load_version(text)
