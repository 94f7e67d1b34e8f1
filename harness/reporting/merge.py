"""`kcts matrix merge DIR... [--out DIR]`: one matrix from columns made apart.

A CI's job matrix runs one column per job, each maybe on its own machine, with `kcts matrix
--targets X` or `kcts run`; the merge job downloads their report folders and joins them. The page is
built by harness.reporting.matrix (`build`, `write_all`), as the one-process matrix builds it, so a
merged matrix equals the one-process matrix of the same targets cell for cell.

Each input is a matrix folder (its matrix.json and targets/<column>/ runs: every column of it), a run
folder (reports/<run-id>, its results.json: one column) or a results.json itself. `NAME=PATH` names a
run's column (by default the target its results.json names, with the client stack of a client-only
run, as `kcts matrix` titles it). Columns join only when they can be compared: every one ran the
same kcts version, and columns that judge the same clients ran the same checks; otherwise the merge
stops, naming the columns and what differs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.reporting.matrix import Target, build, client_row, column_line, write_all
from harness.reporting.matrix_run import slug

# What a column's folder keeps of its run: what the page links to (evidence/), what `kcts diff` and
# the next merge read (results.json), what `kcts matrix` estimates times from (progress.jsonl), and
# JUnit. Not the node logs or allure-results, which can be large and which the page never links.
KEPT = ("results.json", "progress.jsonl", "junit.xml", "evidence")
SHOWN = 8  # node ids named in a check-set error before "and N more"


@dataclass(frozen=True)
class Column:
    """One column to merge: its title, the run folder it came from, and that run's results."""

    name: str
    source: Path  # the run folder (holding results.json)
    origin: str  # the argument it came from, as the user typed it, for errors
    results: dict[str, Any]

    @property
    def version(self) -> str:
        return str((self.results.get("kcts") or {}).get("version") or "not recorded (a results.json before schema 2)")

    @property
    def commit(self) -> str | None:
        return (self.results.get("kcts") or {}).get("commit")

    @property
    def stack(self) -> str | None:
        return (self.results.get("environment") or {}).get("client_stack")

    def check_ids(self) -> set[str]:
        # As the matrix rows them: a client-only column's ids name its stack "client".
        return {client_row(c["nodeid"], self.stack) for c in self.results.get("checks", [])}


@dataclass(frozen=True)
class Soak:
    """A soak column of an input matrix, rebuilt from its rows as harness.reporting.soak wrote it."""

    title: str
    doc: dict[str, Any]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise KctsError(f"{path}: cannot read it ({exc}); give the report folder kcts wrote") from exc
    if not isinstance(data, dict):
        raise KctsError(f"{path} is not a kcts results or matrix file")
    return data


def column_title(results: dict[str, Any]) -> str:
    """A run's column title as `kcts matrix` would give it: the target, and for a client-only run its
    client (harness.reporting.matrix_run.ClientAxis.columns)."""
    env = results.get("environment") or {}
    name = str(results.get("target") or env.get("target") or "target")
    stack = env.get("client_stack")
    if stack == "librdkafka":
        release = str(env.get("librdkafka_driver", "")).removeprefix("confluent-kafka ") or env.get("confluent_kafka")
        return f"{name} · librdkafka {release}"
    if stack == "java":
        return f"{name} · java {env.get('java_clients')}"
    if stack == "franz-go":
        return f"{name} · {env.get('go_client') or 'franz-go'}"
    return name


def read_input(text: str) -> tuple[list[Column], list[Soak]]:
    """The columns (and soak columns) one argument holds: `[NAME=]PATH`."""
    name, eq, raw = text.partition("=")
    if not eq or not name or "/" in name:  # a path with "=" in a folder name is a path
        name, raw = "", text
    path = Path(raw)
    if not path.exists():
        raise KctsError(f"{text}: no such file or folder; give a matrix folder (reports/matrix-<stamp>), "
                        "a run folder (reports/<run-id>) or its results.json")
    if path.is_dir() and (path / "matrix.json").is_file():
        if name:
            raise KctsError(f"{text}: NAME= names one run's column, and {path} is a matrix of several; "
                            "give the matrix folder without a name (its columns keep theirs)")
        return _matrix_columns(path, text)
    results = path if path.is_file() else path / "results.json"
    if not results.is_file():
        raise KctsError(f"{text}: neither matrix.json nor results.json is there; give a matrix folder "
                        "(reports/matrix-<stamp>), a run folder (reports/<run-id>) or its results.json")
    data = _read_json(results)
    if "checks" not in data:
        raise KctsError(f"{results} is not a kcts results.json (no checks in it)")
    return [Column(name or column_title(data), results.parent, text, data)], []


def _matrix_columns(folder: Path, origin: str) -> tuple[list[Column], list[Soak]]:
    matrix = _read_json(folder / "matrix.json")
    columns = []
    for target in matrix.get("targets", []):
        results = folder / target["folder"] / "results.json"
        if not results.is_file():
            raise KctsError(f"{origin}: column {target['name']!r} has no {target['folder']}/results.json; "
                            "upload the whole matrix folder (its targets/ runs too), not matrix.json alone")
        columns.append(Column(target["name"], results.parent, origin, _read_json(results)))
    soaks = []
    for soak in matrix.get("soaks", []):
        title = soak["name"]
        checks = [{"nodeid": r["nodeid"], **r["soak"][title]} for r in matrix.get("rows", [])
                  if (r.get("soak") or {}).get(title)]
        soaks.append(Soak(title, {"repeat": soak.get("repeat"), "summary": soak.get("summary", {}),
                                  "checks": checks}))
    return columns, soaks


def mismatches(columns: Sequence[Column]) -> list[str]:
    """What keeps the columns from one matrix, one line each; empty when they join."""
    problems = []
    seen: dict[str, Column] = {}
    for c in columns:
        if c.name in seen:
            problems.append(f"two columns are named {c.name!r} ({seen[c.name].origin} and {c.origin}); "
                            "name one apart with NAME=PATH")
        seen.setdefault(c.name, c)
    versions: dict[str, list[str]] = {}
    for c in columns:
        versions.setdefault(c.version, []).append(c.name)
    if len(versions) > 1:
        problems.append("the columns ran different kcts versions: " + "; ".join(
            f"{v} ({', '.join(names)})" for v, names in versions.items())
            + "; run every column with one kcts (one wheel, or one commit)")
    # Client-only columns run the checks of their stack only, so a check set is compared among the
    # columns that judge the same clients; the first of them is the reference.
    groups: dict[str | None, list[Column]] = {}
    for c in columns:
        groups.setdefault(c.stack, []).append(c)
    for group in groups.values():
        first, want = group[0], group[0].check_ids()
        for c in group[1:]:
            have = c.check_ids()
            if have == want:
                continue
            parts = [f"{label} {len(ids)}: {_listed(ids)}" for label, ids in
                     (("missing", want - have), ("extra", have - want)) if ids]
            problems.append(f"column {c.name!r} ({c.origin}) ran other checks than {first.name!r} "
                            f"({first.origin}): " + "; ".join(parts)
                            + "; run every column with the same selection (-m, -k, test paths)")
    return problems


def _listed(ids: set[str]) -> str:
    shown = sorted(ids)[:SHOWN]
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(shown) + more


def merge(inputs: Sequence[str], out: Path) -> dict[str, Any]:
    """Read every input, check they join, copy each column's run under out/targets/ and write the
    matrix there. Returns the matrix."""
    columns: list[Column] = []
    soaks: list[Soak] = []
    for text in inputs:
        cols, sks = read_input(text)
        columns += cols
        soaks += sks
    if not columns:
        raise KctsError("no column to merge: the inputs hold no run")
    problems = mismatches(columns)
    if problems:
        raise KctsError("cannot merge:\n  " + "\n  ".join(problems))
    commits = {c.commit for c in columns if c.commit}
    if len(commits) > 1:  # one version, several checkouts: worth a line, not a refusal
        print(f"kcts matrix merge: note: the columns come from {len(commits)} commits of kcts {columns[0].version}: "
              + ", ".join(sorted(x[:12] for x in commits)), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    if (out / "matrix.json").exists() or (out / "targets").exists():
        raise KctsError(f"--out {out} already holds a matrix; give a new folder")
    runs = []
    for c in columns:
        # The one-process matrix's own layout (targets/<slug>), so evidence links read the same.
        folder = f"targets/{slug(c.name)}"
        _copy_run(c.source, out / folder)
        runs.append((Target(c.name, folder), c.results))
    matrix = build(runs, [(s.title, s.doc) for s in soaks])
    for p in write_all(matrix, out):
        print(f"kcts matrix merge: wrote {p}")
    for t in matrix["targets"]:
        print(f"kcts matrix merge: {column_line(matrix, t['name'])}", flush=True)
    return matrix


def _copy_run(source: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in KEPT:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, dest / name, dirs_exist_ok=True)
        elif path.is_file():
            shutil.copy2(path, dest / name)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kcts matrix merge",
        description="Join columns made by separate `kcts matrix` or `kcts run` calls (on one machine or many) "
        "into one matrix.json, matrix.md and matrix.html. Every column must come from the same kcts version, "
        "and columns that judge the same clients must have run the same checks; otherwise it exits 2 naming "
        "what differs.")
    p.add_argument("inputs", nargs="+", metavar="[NAME=]PATH",
                   help="a matrix folder (reports/matrix-<stamp>: all its columns), a run folder (reports/<run-id>) "
                   "or its results.json (one column, titled NAME or the target it ran against)")
    p.add_argument("--out", type=Path, default=None,
                   help="the folder to write the matrix to (default ./reports/matrix-<stamp>); each column's "
                   "results.json and evidence are copied under its targets/")
    return p


def main(args: list[str]) -> int:
    opts = parser().parse_args(args)
    out = opts.out or Path("reports") / f"matrix-{time.strftime('%Y%m%d-%H%M%S')}"
    merge(opts.inputs, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
