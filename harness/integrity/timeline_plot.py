"""A history's timeline as a picture: each process a lane, each send and poll a bar from its start to
its end coloured by outcome, the nemesis's faults as vertical lines or spans, and the operations
behind each anomaly marked with the class's name.

After Jepsen's `timeline` checker (an HTML page of each process's operations over time) and its Kafka
workload's `realtime-lag` plot (jepsen/src/jepsen/tests/kafka.clj in jepsen-io/jepsen), in Jepsen's
colours for outcomes (`colors` in jepsen.web): ok blue, info orange, fail pink. The picture is drawn
from typed data (`timeline`, pure and testable without a figure) by matplotlib's Agg canvas, with no
display and no pyplot state, so it runs in any thread of a test run. A large history is sampled, lane
by lane, to at most `max_per_lane` operations, always keeping those an anomaly names, so that the
drawing's cost does not grow with the history (reading it back does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.histories.history import Operation, OpType, Outcome
from harness.process.events import EventLog

if TYPE_CHECKING:  # types only: drawing needs neither Spark nor the judge's numpy and Arrow
    from matplotlib.figure import Figure

    from harness.integrity.anomaly_checks import AnomalyFindings, JepsenAnomaly

DRAWN = (OpType.SEND, OpType.POLL)
MAX_PER_LANE = 2000
MAX_EVENTS_NAMED = 12  # nemesis events named in the legend; the rest counted
# Jepsen's colours for :ok, :info and :fail (`colors` in jepsen.web).
COLOURS = {Outcome.OK: "#6DB6FE", Outcome.INFO: "#FFAA26", Outcome.FAIL: "#FEB5DA"}
ANOMALY_COLOUR = "#D62728"
ANOMALY_GID = "anomaly"  # the gid of the markers' collection: what a test counts


@dataclass(frozen=True)
class NemesisEvent:
    """A fault over the history, on the histories' clock (time.monotonic_ns): a moment, or a span
    from `start_ns` to `end_ns`."""

    start_ns: int
    label: str
    end_ns: int | None = None


@dataclass(frozen=True)
class Bar:
    """One operation drawn: its lane, what it was, how it ended, and when (seconds since t0)."""

    lane: int
    type: OpType
    outcome: Outcome
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Mark:
    """An operation an anomaly names: the middle of its bar, in its lane, with the class's name."""

    lane: int
    at_s: float
    kind: JepsenAnomaly


@dataclass(frozen=True)
class Span:
    """A nemesis event in seconds since t0 (`end_s` None: a moment)."""

    start_s: float
    end_s: float | None
    label: str


@dataclass(frozen=True)
class Timeline:
    """What the picture shows, decided before anything is drawn."""

    title: str
    t0_ns: int  # the history's first operation: x = 0
    lanes: tuple[str, ...]  # processes, top to bottom in the order of their first operation
    bars: tuple[Bar, ...]
    marks: tuple[Mark, ...]
    events: tuple[Span, ...]
    total: int  # sends and polls in the history
    left_out: int  # of them, not drawn (sampled away)


def events_from_log(log: EventLog, who: Iterable[str] = ("nemesis",)) -> tuple[NemesisEvent, ...]:
    """The events of a scene's EventLog by `who` (the nemesis, by default), as moments."""
    whose = set(who)
    return tuple(NemesisEvent(log.at_ns(e), f"{e['what']}") for e in list(log.events) if e.get("who") in whose)


def _sample(ops: Sequence[Operation], keep: set[tuple[str, int]], most: int) -> list[Operation]:
    """`ops` of one lane, at most `most` (evenly spaced in time order) besides those in `keep`."""
    if len(ops) <= most:
        return list(ops)
    step = len(ops) / most
    chosen = {int(i * step) for i in range(most)}
    return [op for i, op in enumerate(ops) if i in chosen or (op.process, op.start_ns) in keep]


def timeline(ops: Sequence[Operation], findings: AnomalyFindings, events: Sequence[NemesisEvent] = (),
             title: str = "history", max_per_lane: int = MAX_PER_LANE) -> Timeline:
    """The picture's content: `ops` (read back with harness.histories.history.read_folder) as lanes
    of bars, the operations of every example case of `findings` marked, `events` as spans."""
    drawn = sorted((op for op in ops if op.type in DRAWN), key=lambda op: (op.start_ns, op.process))
    named = [(case.kind, ref) for cases in findings.examples.values() for case in cases for ref in case.ops]
    firsts = [op.start_ns for op in drawn] + [ref.start_ns for _, ref in named]
    t0 = min(firsts) if firsts else min((e.start_ns for e in events), default=0)

    def s(ns: int) -> float:
        return (ns - t0) / 1e9

    lanes: dict[str, int] = {}
    by_lane: dict[str, list[Operation]] = {}
    for op in drawn:
        lanes.setdefault(op.process, len(lanes))
        by_lane.setdefault(op.process, []).append(op)
    for _, ref in named:  # an operation named whose process wrote no send or poll still gets a lane
        lanes.setdefault(ref.process, len(lanes))
    keep = {(ref.process, ref.start_ns) for _, ref in named}
    bars = [Bar(lanes[op.process], op.type, op.outcome, s(op.start_ns), s(op.end_ns))
            for process, lane_ops in by_lane.items() for op in _sample(lane_ops, keep, max_per_lane)]
    marks = {Mark(lanes[ref.process], s((ref.start_ns + ref.end_ns) // 2), kind) for kind, ref in named}
    spans = tuple(Span(s(e.start_ns), None if e.end_ns is None else s(e.end_ns), e.label) for e in events)
    ordered = tuple(sorted(marks, key=lambda m: (m.at_s, m.lane, m.kind.value)))
    return Timeline(title, t0, tuple(lanes), tuple(bars), ordered, spans, len(drawn), len(drawn) - len(bars))


def _plain(text: str) -> str:
    """Text as matplotlib shows it literally (a `$` would start its math mode)."""
    return text.replace("$", r"\$")


def _short(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "\N{HORIZONTAL ELLIPSIS}"


def lane_labels(lanes: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The processes' common prefix up to a dot (a scene names its clients `<topic>.<role>`), and
    each lane's name without it: the picture's width goes to the timeline, not to a repeated topic."""
    if not lanes:
        return "", ()
    common = lanes[0]
    for name in lanes[1:]:
        while not name.startswith(common):
            common = common[:-1]
    prefix = common[: common.rfind(".") + 1]
    if any(name == prefix for name in lanes):
        prefix = ""
    return prefix, tuple(name[len(prefix):] for name in lanes)


def draw(t: Timeline, findings: AnomalyFindings) -> Figure:
    """The figure of `t`: sends in the upper half of their process's lane, polls in the lower half
    (hatched), one collection per lane, kind and outcome, so that thousands of bars stay cheap."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    fig = Figure(figsize=(14, max(3.0, 0.5 * len(t.lanes) + 2.0)), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ends = [b.end_s for b in t.bars] + [m.at_s for m in t.marks] + [
        x for e in t.events for x in (e.start_s, e.end_s) if x is not None]
    starts = [b.start_s for b in t.bars] + [e.start_s for e in t.events]
    lo, hi = (min(starts, default=0.0), max(ends, default=1.0))
    width = max(hi - lo, 1e-3)
    least = width / 1500  # an operation of microseconds still shows as a sliver
    groups: dict[tuple[int, OpType, Outcome], list[tuple[float, float]]] = {}
    for b in t.bars:
        groups.setdefault((b.lane, b.type, b.outcome), []).append((b.start_s, max(b.end_s - b.start_s, least)))
    for (lane, kind, outcome), xs in groups.items():
        y = (lane - 0.4) if kind is OpType.SEND else lane
        # Edges only while bars are few: thousands of outlines would paint the lane grey.
        ax.broken_barh(xs, (y, 0.4), facecolors=COLOURS[outcome], edgecolor="#4D4D4D",
                       linewidth=0.3 if len(xs) < 200 else 0, hatch="///" if kind is OpType.POLL else None)
    for n, e in enumerate(t.events, 1):
        if e.end_s is not None:
            ax.axvspan(e.start_s, e.end_s, color="#999999", alpha=0.18, linewidth=0)
        ax.axvline(e.start_s, color="#333333", linestyle="--", linewidth=1)
        # A short tag on the line, in the plot; the whole label in the legend, numbered alike.
        ax.annotate(f"N{n}", (e.start_s, 0.0), xycoords=("data", "axes fraction"), xytext=(2, 2),
                    textcoords="offset points", ha="left", va="bottom", fontsize=7, color="#333333",
                    fontweight="bold")
    if t.marks:
        ax.scatter([m.at_s for m in t.marks], [m.lane for m in t.marks], marker="X", s=70, color=ANOMALY_COLOUR,
                   edgecolors="white", linewidths=0.6, zorder=5, gid=ANOMALY_GID)
        # One label per marked operation, naming every class that names it.
        kinds: dict[tuple[int, float], list[str]] = {}
        for m in t.marks:
            kinds.setdefault((m.lane, m.at_s), []).append(m.kind.value)
        for (lane, at), names in kinds.items():
            ax.annotate(", ".join(names), (at, lane), xytext=(4, 5), textcoords="offset points",
                        color=ANOMALY_COLOUR, fontsize=7, fontweight="bold", zorder=6)
    prefix, labels = lane_labels(t.lanes)
    ax.set_yticks(range(len(t.lanes)), [_plain(p) for p in labels], fontsize=7)
    ax.set_ylim(len(t.lanes) - 0.4, -0.6)  # the first process on top
    ax.set_xlim(lo - width * 0.02, hi + width * 0.02)
    ax.set_xlabel("seconds since the history's first operation")
    ax.grid(axis="x", color="#E0E0E0", linewidth=0.5)
    found = ", ".join(f"{k.value} {n}" for k, n in findings.counts.items() if n) or "no anomaly"
    sampled = f", {t.total - t.left_out} of {t.total} drawn" if t.left_out else ""
    whose = f"; processes {prefix}*" if prefix else ""
    ax.set_title(_plain(f"{t.title}: {t.total} sends and polls{sampled}; {found}{whose}"), fontsize=9, loc="left")
    legend = [Patch(facecolor=COLOURS[o], edgecolor="#4D4D4D", label=o.value) for o in Outcome]
    legend += [Patch(facecolor="white", edgecolor="#4D4D4D", label="send (upper half)"),
               Patch(facecolor="white", edgecolor="#4D4D4D", hatch="///", label="poll (lower half)")]
    if t.marks:
        legend.append(Patch(facecolor=ANOMALY_COLOUR, label="operation behind an anomaly"))
    legend += [Patch(facecolor="#999999", alpha=0.4, label=_plain(f"N{n} {_short(e.label, 70)}"))
               for n, e in enumerate(t.events[:MAX_EVENTS_NAMED], 1)]
    if len(t.events) > MAX_EVENTS_NAMED:
        legend.append(Patch(facecolor="#999999", alpha=0.4, label=f"and {len(t.events) - MAX_EVENTS_NAMED} more"))
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7, frameon=False)
    return fig


def write(path: Path, ops: Sequence[Operation], findings: AnomalyFindings, events: Sequence[NemesisEvent] = (),
          title: str = "history", max_per_lane: int = MAX_PER_LANE) -> Timeline:
    """Draw the timeline into `path` (PNG, or SVG by its suffix); returns what was drawn."""
    t = timeline(ops, findings, events, title, max_per_lane)
    path.parent.mkdir(parents=True, exist_ok=True)
    draw(t, findings).savefig(path, dpi=110)
    return t
