"""Defects, not FAILs: the FAILs of one run grouped by the cause each names.

A vendor reads 16 FAILs as 16 defects, but FAILs often share one cause: one refusal of a commit's
epoch fails both the committed-epoch check and the committed-metadata check; one wrong answer to
OffsetForLeaderEpoch's sentinel fails two checks of it; one connection closed on an advertised version
fails every check that sent it. Each FAIL gets a defect key, computed from what the run records of
it and nothing else: its failure's text (the exception as pytest reported it; in a results.json from
before schema 4, its `reason`), its promise ids, the APIs its raw client exchanged, and its node id.

The key, first rule that applies:

1. A promise the target did not keep in time (`PromiseUnkept`, whose message ends
   "(promise: <id>)"): ``unkept <id>``, with the first API the message names
   (``unkept protocol.api-versions.advertised-served: Produce``). Every check whose scene waited for it
   fails with the same message, so they are one defect.
2. An answer the raw client could not read, in its own words ("is not a valid Produce v5 response",
   "no response to Fetch"): ``Produce: answered what is not a Produce response``.
3. An error code answered where another was owed: the first ``NAME(code)`` other than NONE(0) that
   the text gives as an answer (after ": ", "as ", "got ", "answered " or "(", never after
   "expected "): ``OffsetCommit: answered UNKNOWN_LEADER_EPOCH(75)``.
4. A wrong answer beside the owed one: ``got X, expected Y`` (or ``X, expected Y`` after a colon, or
   ``got X`` alone where the owed answer was said before): ``OffsetForLeaderEpoch: got NONE(0)
   (-1, 0), expected NONE (-1, -1)``.

5. Otherwise the failure's headline (its first line, up to its first ": " or "; ", every number
   ``<n>``: a count that changes from run to run must not make `kcts diff` see the defect fixed and
   found again), scoped by the check's promises: ``[kip359.x] <n> sent, <n> acknowledged, ...``.

Rules 2 to 4 read the failure line by line, in order; the first line one of them fits gives the key.

Rules 3 and 4 name the API that answered: the last API named before the answer, on its line or an
earlier one, else the one API the check exchanged. Without one the key is scoped by the check's
promises as in rule 5, so that one error code answered by unrelated APIs does not join their FAILs.

What the rules cannot see stays apart: two wrong answers of one cause that differ (librdkafka's mock
echoes any asked epoch, so epoch 2 and epoch 4 get different wrong answers) are two defects, and so
is a cause that shows as an error in one check and as a missing value in another. `same_defect_as`
joins such FAILs where a check's author knows they are one.

Before any rule the text is normalised, so that what differs between two checks (or two runs) of one
cause does not split it: the words of the check's own parametrized variant (``[java]``,
``[librdkafka]``, ``[franz-go-earliest]``; never an API name, which is what a variant like
``[TxnOffsetCommit]`` is about); kcts-made names (topics, groups, transactional ids, ``'kcts ...'``
metadata strings); UUIDs; host:port; dotted client versions; request versions (``v6``: a multi-version
check lists each version, and which comes first is not the defect); numbers of three digits or more
(offsets used as ids such as 106 for v6, broker ids, timestamps, byte counts); parenthesised field
names (``(LeaderEpoch, EndOffset)``). Small numbers stay: an epoch of -1 where 0 was owed is the
wrong answer itself.

A check may declare ``@pytest.mark.same_defect_as("<promise id>")``: when a check of that promise
FAILs in the same run, this check's FAIL is its consequence and takes that check's key (the first
such check by node id; a cycle of declarations takes the smallest key in it). When no check of that
promise FAILed, the declaration does nothing and the check keeps its own key.

Each defect cites the documents of its promises (harness/promises.toml's `kip` and `section`:
"KIP-279, Proposed Changes"), so a vendor reads what each defect breaks from the text that promises it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

# How messages name an API, where Kafka's own name differs (the KIPs and kcts's checks say "Offsets").
ALIASES = {"OffsetsForLeaderEpoch": "OffsetForLeaderEpoch"}
KEY_LENGTH = 200  # a key longer than this is cut: what follows is detail, not the cause

# The exception's type before its message: a builtin's or pytest's name, or any qualified name (what
# pytest shows of a check's own AssertionError subclass: "test_x.test_y.<locals>.OlderVersionSent").
_EXCEPTION_PREFIX = re.compile(r"^(?:[\w<>]+\.)+[A-Z]\w*: ?|^(?=[A-Z])\w*(?:Error|Exception|Unkept|Failed): ?")
_PROMISE = re.compile(r"\(promise: ([\w.\-]+)\)")
_QUOTED_NAME = re.compile(r"""'kcts[^']*'|"kcts[^"]*\"""")
_NAME = re.compile(r"\bkcts(?=[\d-])[\w.\-]*")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_ADDR = re.compile(r"(?<![\w.:\-])(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]|localhost|[A-Za-z][\w\-]*(?:\.[\w\-]+)+)"
                   r":\d{2,5}\b")
_DOTTED_VERSION = re.compile(r"\bv?\d+\.\d+\.\d+[\w.\-]*")
_REQUEST_VERSION = re.compile(r"\bv\d+(?:\s*(?:-|to)\s*v?\d+)?\b")
_BIG_NUMBER = re.compile(r"(?<![A-Z_]\()(?<![\w.])\d{3,}(?![\w.])")
_FIELD_NAMES = re.compile(r"\s?\([A-Za-z_]\w*(?:, ?[A-Za-z_]\w*)+\)")
_ERROR = re.compile(r"\b([A-Z][A-Z0-9_]*[A-Z])\((-?\d+)\)")
# The raw client's words for an answer it could not read (harness.protocol.client, and the checks
# that quote it): the API is named in them.
_UNREADABLE = re.compile(r"(?:an answer that is not a|is not a valid) (?P<api>[A-Z]\w+) response"
                         r"|no response to (?P<silent>[A-Z]\w+)")
_ANSWERED_BEFORE = (": ", "as ", "got ", "answered ", "(")
# What an owed answer looks like after ", expected ": an error name (with its code), then offsets,
# epochs and timestamps, or a tuple of numbers.
_EXPECTED = re.compile(r"(?:[A-Z][A-Z0-9_]*[A-Z](?:\(-?\d+\))?)?(?:\s?(?:(?:offset|epoch|timestamp) -?(?:\d+|<n>)"
                       r"|\((?:-?\d+|<n>|None)(?:, ?(?:-?\d+|<n>|None))*\)))*")


@dataclass(frozen=True)
class Citation:
    """The document a promise comes from, as harness/promises.toml names it."""

    kip: str  # "KIP-320", "KIP-98", "Kafka protocol"
    section: str

    def __str__(self) -> str:
        return f"{self.kip}, {self.section}"


@dataclass(frozen=True)
class Failure:
    """One FAIL as the grouping reads it."""

    nodeid: str
    message: str  # the failure's text: the exception pytest reported, or a results.json's `reason`
    promises: tuple[str, ...] = ()  # ids of harness/promises.toml the check judges
    apis: tuple[str, ...] = ()  # what its raw client exchanged: "Fetch v12"
    same_defect_as: tuple[str, ...] = ()  # promise ids whose FAIL this one is a consequence of

    @classmethod
    def from_json(cls, check: Mapping[str, Any]) -> Failure:
        """A FAIL of a results.json (its `reason` is the text; a file keeps no same_defect_as)."""
        return cls(str(check["nodeid"]), str(check.get("reason") or ""), tuple(check.get("promises") or ()),
                   tuple(check.get("apis") or ()))


@dataclass(frozen=True)
class Cause:
    """What one FAIL says went wrong: the defect key, and the same for a reader."""

    key: str
    title: str


@dataclass(frozen=True)
class Defect:
    """FAILs of one run with one cause."""

    key: str
    title: str
    promises: tuple[str, ...]  # every promise its FAILs judge, the cause's first
    documents: tuple[Citation, ...]  # where those promises come from, each once
    checks: tuple[str, ...]  # node ids of its FAILs
    consequences: tuple[str, ...] = ()  # those of them joined by same_defect_as

    def cites(self) -> str:
        """"KIP-320, Protocol Changes / OffsetCommit · Consumer Handling; KIP-35, Proposed Changes": each
        document once, its sections after it; "" where no promise is named."""
        sections: dict[str, list[str]] = {}
        for d in self.documents:
            sections.setdefault(d.kip, []).append(d.section)
        return "; ".join(f"{kip}, {' · '.join(s)}" for kip, s in sections.items())

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "promises": list(self.promises),
                "documents": [{"kip": d.kip, "section": d.section} for d in self.documents],
                "checks": list(self.checks), "consequences": list(self.consequences)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Defect:
        return cls(str(data["key"]), str(data.get("title") or data["key"]), tuple(data.get("promises") or ()),
                   tuple(Citation(str(d["kip"]), str(d["section"])) for d in data.get("documents") or ()),
                   tuple(data.get("checks") or ()), tuple(data.get("consequences") or ()))


def count_line(defects: Sequence[Defect]) -> str:
    """"9 defects (16 FAILs)"; "1 defect (1 FAIL)"; "0 defects"."""
    return count_text(len(defects), sum(len(d.checks) for d in defects))


def count_text(defects: int, fails: int) -> str:
    head = f"{defects} defect{'' if defects == 1 else 's'}"
    return f"{head} ({fails_text(fails)})" if fails else head


def fails_text(fails: int) -> str:
    """"1 FAIL", "3 FAILs"."""
    return f"{fails} FAIL{'' if fails == 1 else 's'}"


def of_results(data: Mapping[str, Any]) -> list[Defect]:
    """A results.json's defects: as recorded (schema 4), else grouped from its checks' reasons."""
    recorded = data.get("defects")
    if isinstance(recorded, list):
        return [Defect.from_json(d) for d in recorded]
    return from_reasons(data)


def from_reasons(data: Mapping[str, Any]) -> list[Defect]:
    """A results.json's FAILs grouped from what the file holds of each (its reason, promises, apis)."""
    return group(Failure.from_json(c) for c in data.get("checks", []) if c.get("cell") == "fail")


def keys_of(defects: Iterable[Defect]) -> dict[str, str]:
    """Each FAIL's defect key, by node id."""
    return {nodeid: d.key for d in defects for nodeid in d.checks}


def group(failures: Iterable[Failure]) -> list[Defect]:
    """The FAILs of one run as defects, the one with most FAILs first."""
    fails = sorted(failures, key=lambda f: f.nodeid)
    own = {f.nodeid: cause(f) for f in fails}
    by_id = {f.nodeid: f for f in fails}
    naming: dict[str, list[str]] = {}
    for f in fails:
        for p in f.promises:
            naming.setdefault(p, []).append(f.nodeid)
    redirect: dict[str, str] = {}
    for f in fails:
        for p in f.same_defect_as:
            cause_of = next((n for n in naming.get(p, ()) if n != f.nodeid), None)
            if cause_of is not None:
                redirect[f.nodeid] = cause_of
                break
    members: dict[str, list[str]] = {}
    for nodeid in own:
        members.setdefault(_resolve(nodeid, redirect, own), []).append(nodeid)
    found = []
    for key, nodeids in members.items():
        causes = [n for n in nodeids if n not in redirect] or nodeids
        title = next((own[n].title for n in nodeids if own[n].key == key), own[causes[0]].title)
        ordered = causes + [n for n in nodeids if n not in causes]
        promises = tuple(dict.fromkeys(p for n in ordered for p in by_id[n].promises))
        found.append(Defect(key, title, promises, citations(promises), tuple(ordered),
                            tuple(n for n in ordered if n in redirect)))
    return sorted(found, key=lambda d: (-len(d.checks), d.key))


def _resolve(nodeid: str, redirect: Mapping[str, str], own: Mapping[str, Cause]) -> str:
    """The key a FAIL ends with: its own, or that of the FAIL it is a consequence of, followed to the end."""
    seen: list[str] = []
    current = nodeid
    while current in redirect and current not in seen:
        seen.append(current)
        current = redirect[current]
    if current in seen:  # a cycle: wherever it is entered, it ends with the same key
        return min(own[n].key for n in seen[seen.index(current):])
    return own[current].key


def citations(promises: Iterable[str]) -> tuple[Citation, ...]:
    """The documents the promises come from, each once, in the promises' order; an id the catalogue
    does not list (a promise renamed since an old run) cites nothing."""
    from harness.promises import catalogue

    known = catalogue()
    return tuple(dict.fromkeys(Citation(known[p].kip, known[p].section) for p in promises if p in known))


# -- the key of one FAIL ---------------------------------------------------------------------------


def cause(f: Failure) -> Cause:
    """The defect key of one FAIL (the module's doc gives the rules)."""
    raw = _message_lines(f.message)
    promises = _PROMISE.findall(f.message)  # the outermost exception's comes last
    promise = promises[-1] if promises else None
    lines = [_normalise(line, f.nodeid) for line in raw]
    names = _api_pattern(f.apis)
    if promise is not None:
        api = next(iter(names.findall(" ".join(lines))), None) or _only_api(f.apis)
        api = ALIASES.get(api, api) if api else None
        return _cut(Cause(f"unkept {promise}" + (f": {api}" if api else ""),
                          f"promise {promise} not kept" + (f" ({api})" if api else "")))
    for i, line in enumerate(lines):
        unreadable = _UNREADABLE.search(line)
        if unreadable is not None:
            api = unreadable["api"] or unreadable["silent"]
            what = f"answered what is not a {api} response" if unreadable["api"] else "no response"
            api = ALIASES.get(api, api)
            return _cut(Cause(f"{api}: {what}", f"{api}: {what}"))
        found = _answered_error(line) or _wrong_answer(line)
        if found is None:
            continue
        at, answer = found
        api = _last_api(line[:at], names) or next(
            (a for earlier in reversed(lines[:i]) if (a := _last_api(earlier, names))), None) or _only_api(f.apis)
        if api:
            return _cut(Cause(f"{api}: {answer}", f"{api}: {answer}"))
        return _cut(Cause(f"{_scope(f)} {answer}", answer))
    headline = _headline(lines[0] if lines else "") or _function(f.nodeid)
    return _cut(Cause(f"{_scope(f)} {headline}", headline))


def _message_lines(message: str) -> list[str]:
    """The failure's own lines: without the exception's type, pytest's rewritten `assert ...` below
    the message, the promise line (rule 1 reads it first) or blank lines."""
    lines = message.strip().splitlines()
    if lines:
        lines[0] = _EXCEPTION_PREFIX.sub("", lines[0])
    out = []
    for i, line in enumerate(lines):
        text = line.strip()
        if i and (text.startswith("assert ") or text.startswith("+  where")):
            break  # pytest's explanation of the assert statement, not the check's message
        if text and not _PROMISE.fullmatch(text):
            out.append(text)
    return out


def _normalise(line: str, nodeid: str) -> str:
    text = _QUOTED_NAME.sub("<name>", line)
    text = _NAME.sub("<name>", text)
    text = _UUID.sub("<uuid>", text)
    text = _ADDR.sub("<addr>", text)
    text = _DOTTED_VERSION.sub("<version>", text)
    for words in _variant_words(nodeid):
        text = re.sub(rf"(?<![\w\-]){re.escape(words)}(?![\w\-])", "", text, flags=re.IGNORECASE)
    text = _REQUEST_VERSION.sub("", text)
    text = _BIG_NUMBER.sub("<n>", text)
    text = _FIELD_NAMES.sub("", text)
    text = re.sub(r"\(\s*\)", "", text)  # what held only a variant's words
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,:;)])", r"\1", text)
    return text.strip(" ,;:")


@cache
def _variant_words(nodeid: str) -> tuple[str, ...]:
    """The words of a check's parametrized variant that may name it in its own failure, longest first:
    "franz-go-earliest", "franz-go", "go-earliest", "earliest", "franz" of `[franz-go-earliest]`.
    An API name is not one: it is what the variant is about."""
    match = re.search(r"\[(.+)\]$", nodeid)
    if match is None:
        return ()
    parts = [p for p in re.split(r"[-_]", match[1]) if p]
    words = {"-".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}
    apis = {a.lower() for a in (*_catalogue_apis(), *ALIASES)}
    keep = [w for w in words if len(w) >= 3 and not w.isdigit() and w.lower() not in apis]
    return tuple(sorted(keep, key=lambda w: (-len(w), w)))


@cache
def _catalogue_apis() -> tuple[str, ...]:
    """The APIs the promises concern (harness/promises.toml's `apis`)."""
    from harness.promises import catalogue

    return tuple(sorted({api for p in catalogue().values() for api in p.apis}))


@cache
def _api_pattern(apis: tuple[str, ...]) -> re.Pattern[str]:
    names = {*_catalogue_apis(), *ALIASES, *(a.split(" ")[0] for a in apis)}
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b")


def _last_api(text: str, names: re.Pattern[str]) -> str | None:
    found = names.findall(text)
    return ALIASES.get(found[-1], found[-1]) if found else None


def _only_api(apis: Sequence[str]) -> str | None:
    """The API a check exchanged, when it exchanged one only (ApiVersions, which every client sends
    first, aside)."""
    names = {a.split(" ")[0] for a in apis} - {"ApiVersions"}
    return ALIASES.get(next(iter(names)), next(iter(names))) if len(names) == 1 else None


def _answered_error(line: str) -> tuple[int, str] | None:
    """Rule 2: (where, "answered NAME(code)") for the first error code the line gives as an answer."""
    for m in _ERROR.finditer(line):
        if m[1] == "NONE":
            continue
        before = line[:m.start()]
        if before.endswith(_ANSWERED_BEFORE) or not before.strip():
            if not before.rstrip(" (").endswith("expected"):
                return m.start(), f"answered {m[0]}"
    return None


def _wrong_answer(line: str) -> tuple[int, str] | None:
    """Rule 3: (where, "got X, expected Y") for the first wrong answer the line states."""
    at = line.find(", expected ")
    if at >= 0:
        head = line[:at]
        got_at = head.rfind("got ")
        start = got_at + len("got ") if got_at >= 0 else head.rfind(": ") + 2 if ": " in head else -1
        if start < 0:
            return None
        owed = _EXPECTED.match(line, at + len(", expected "))
        expected = owed[0].strip() if owed and owed[0].strip() else re.split(
            r";|\s\(", line[at + len(", expected "):], maxsplit=1)[0][:40]
        said = "got " if got_at >= 0 else ""
        return start, f"{said}{head[start:].strip()[:80]}, expected {expected.strip()}"
    got = re.search(r"\bgot (.+)$", line)
    if got is not None:
        return got.start(), f"got {got[1].strip()[:80]}"
    return None


def _headline(line: str) -> str:
    """Rule 4: the failure's first statement, every number <n>."""
    text = re.sub(r"(?<![\w<])-?\d+(?![\w>])", "<n>", line).lstrip(" ,;:")
    return re.split(r": |; ", text, maxsplit=1)[0].strip()[:120]


def _scope(f: Failure) -> str:
    """What a key without an API is scoped by: the check's promises, or its function where a file
    from before schema 2 names none."""
    return "[" + ",".join(f.promises or (_function(f.nodeid),)) + "]"


def _function(nodeid: str) -> str:
    return re.sub(r"\[.*\]$", "", nodeid.rsplit("::", 1)[-1])


def _cut(c: Cause) -> Cause:
    def cut(text: str) -> str:
        return text if len(text) <= KEY_LENGTH else text[:KEY_LENGTH - 3] + "..."

    return Cause(cut(c.key), cut(c.title))
