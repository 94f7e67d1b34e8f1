"""The `kcts` command: one subcommand per task (`kcts --help` lists them, `kcts COMMAND --help` shows one).

Each command parses its own arguments, with argparse: `run`, `matrix` and `soak` hand whatever they do
not know to pytest, which an argparse subparser tree would reject or, worse, read as an abbreviation
of one of its own options. The tree here is for the top level only: `--version`, `--help`, and the
names of the commands.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from harness import layout
from harness.bench.main import BENCHES
from harness.bench.main import main as bench_main
from harness.cluster.backend import Served
from harness.cluster.target import target_from
from harness.cluster.target_options import declare
from harness.errors import KctsError
from harness.installed import version
from harness.reporting.shards import split_args


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    top = _top_parser()
    if not argv:
        top.print_help(sys.stderr)
        return 2
    # --help, --version and an unknown command end here (argparse exits: 0, or 2 with the commands named).
    top.parse_args(argv[:1])
    command, rest = argv[0], argv[1:]
    try:
        return COMMANDS[command][1](rest)
    except KctsError as exc:
        print(f"kcts: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kcts: interrupted", file=sys.stderr)
        return 130


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kcts", description="Kafka compatibility conformance: leader-epoch and offset KIPs on real clusters "
        "under faults.", epilog="`kcts COMMAND --help` for a command's options. Reports go to ./reports.")
    parser.add_argument("--version", action="version", version=f"kcts {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (summary, _) in COMMANDS.items():
        commands.add_parser(name, help=summary, add_help=False)
    return parser


def run(args: list[str]) -> int:
    """Prepare the target first (clear errors before any test), then hand everything to pytest."""
    import pytest

    if _asks_help(args):
        _target_parser("kcts run", RUN_HELP).print_help()
        return 0
    served = _target(args)
    suites = layout.suites()
    print(f"kcts: {served.prepared}", flush=True)
    shards, run_id, reports_dir, rest = split_args(args)
    if shards is not None and shards > 1:
        return _sharded(shards, _suite_paths(rest), run_id, reports_dir, served.spec.environment().get("target"))
    args = _suite_paths(args) if shards is None else _suite_paths(rest + _given(run_id, reports_dir))
    if not any(_selects_tests(a) for a in args):
        args = [str(suites), *args]
    # No chdir: reports go to ./reports of the caller's directory. pytest's rootdir is the suite root
    # all the same (its pyproject.toml holds the configuration), so node ids read "suites/...".
    return int(pytest.main(["-p", "no:cacheprovider", *args], plugins=[_Handover(served)]))


def _given(run_id: str | None, reports_dir: str | None) -> list[str]:
    """`--run-id` and `--reports-dir` as given, for pytest."""
    return [*(["--run-id", run_id] if run_id else []), *(["--reports-dir", reports_dir] if reports_dir else [])]


def _sharded(n: int, args: list[str], run_id: str | None, reports_dir: str | None, target: str | None) -> int:
    """`kcts run --shards N`: the selection in N runs side by side, joined into one run folder
    (harness/reporting/shards.py)."""
    import time

    from harness.reporting.run_names import new_run_id, point_latest
    from harness.reporting.shards import run_sharded

    selection = [a for a in args if _selects_tests(a)] or [str(layout.suites())]
    others = [a for a in args if not _selects_tests(a)]
    reports = Path(reports_dir or os.environ.get("KCTS_REPORTS", "reports"))
    run_dir = reports / (run_id or new_run_id())
    run_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    code = run_sharded(n, others, selection, run_dir, reports, target)
    if not os.environ.get("KCTS_NO_LATEST"):
        point_latest(reports, run_dir.name)
    summary = json.loads((run_dir / "results.json").read_text())["summary"]
    counts = ", ".join(f"{k} {v}" for k, v in summary["counts"].items() if v)
    print(f"kcts: {summary['total']} checks in {n} shards, {round(time.monotonic() - start)} s: {counts}; "
          f"{summary['defects']} defects; {run_dir}", flush=True)
    return code


class _Handover:
    """The target `run` parsed and prepared, as a pytest plugin object (harness/plugin/target.py takes
    its `kcts_served`), so that pytest does not parse the options again."""

    def __init__(self, served: Served) -> None:
        self.kcts_served = served


RUN_HELP = ("Run the conformance suites (all of suites/ unless test paths are given) against one target. "
            "The target is prepared first (a missing JDK or an unknown version is one line and exit 2). Any "
            "other argument is pytest's: -m smoke, -k NAME, --run-id ID, --reports-dir DIR (default ./reports); "
            "`python -m pytest --help` lists them all, the kcts group included. --shards N splits the selection "
            "by module into N runs side by side, each with its own cluster, joined into one run folder "
            "(harness/reporting/shards.py). The exit code is pytest's: non-zero on any FAIL.")


def _asks_help(args: list[str]) -> bool:
    """-h or --help among a command's own arguments (not after `--`, where pytest's begin)."""
    own = args[:args.index("--")] if "--" in args else args
    return "-h" in own or "--help" in own


def _suite_paths(args: list[str]) -> list[str]:
    """Test paths, and --ignore=/--deselect= values, under suites/ as pytest must see them (harness.layout)."""
    out: list[str] = []
    for arg in args:
        flag, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        out.append(f"{flag}={layout.suite_path(value)}" if eq else layout.suite_path(arg))
    return out


def _target_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The target options, declared as the pytest plugin declares them (harness/cluster/target_options.py)."""
    parser = argparse.ArgumentParser(prog=prog, description=description, add_help=False, allow_abbrev=False,
                                     usage=f"{prog} [target options] [pytest arguments ...]")
    declare(parser.add_argument_group("target").add_argument)
    return parser


def _target(args: list[str]) -> Served:
    """The target the arguments name, parsed as the pytest plugin parses them (target_from), and
    prepared (a missing JDK or an unknown version is a `SetupError` naming the fix, before any test)."""
    o, _ = _target_parser("kcts run", "").parse_known_args(args)
    return target_from(o, prepare=True)


def matrix(args: list[str]) -> int:
    """Run the suites against several targets; the exit code is 0 when the matrix was written."""
    from harness.reporting.matrix_run import ClientAxis, run_matrix

    if args[:1] == ["merge"]:  # columns made apart (a CI job each) joined into one matrix
        from harness.reporting.merge import main as merge_main

        return merge_main(args[1:])
    parser = argparse.ArgumentParser(prog="kcts matrix", epilog="`kcts matrix merge DIR...` joins columns made by "
                                     "separate kcts matrix or kcts run calls (`kcts matrix merge --help`).")
    parser.add_argument("--targets", required=True,
                        help="comma-separated: 4.4.0,4.3.1,kfake,external:HOST:PORT, or a target profile FILE.toml")
    parser.add_argument("--java-clients", default="",
                        help="comma-separated kafka-clients versions of the Java drivers: a client-only column each")
    parser.add_argument("--librdkafka", default="",
                        help="comma-separated confluent-kafka releases (librdkafka bundled): a client-only column each")
    parser.add_argument("--go-client", action="store_true", help="a client-only column of franz-go")
    parser.add_argument("--client-stacks", default="", metavar="S[@V],...",
                        help="comma-separated client stacks (harness.clients.stacks.registry names; 'all' for every "
                        "one), each at a release where it has version choice: a client-only column each")
    parser.add_argument("--jobs", type=int, default=1,
                        help="columns run at once, each a run with its own cluster (default 1: on 2 cores the columns "
                        "compete for the CPU; raise it where the machine has room)")
    parser.add_argument("--soak", action="append", type=lambda p: Path(p).resolve(), default=[],
                        help="a kcts soak report folder (reports/<soak id>): a column of pass k/n per check")
    opts, pytest_args = parser.parse_known_args(args)
    for folder in opts.soak:
        if not (folder / "soak.json").is_file():
            raise KctsError(f"--soak {folder}: no soak.json there; give a folder kcts soak wrote (reports/<soak id>)")

    def listed(text: str) -> list[str]:
        return [t.strip() for t in text.split(",") if t.strip()]

    if opts.client_stacks.strip() == "all":
        from harness.clients.stacks.registry import NAMES

        opts.client_stacks = ",".join(NAMES)
    axis = ClientAxis(java=listed(opts.java_clients), librdkafka=listed(opts.librdkafka), go=opts.go_client,
                      stacks=listed(opts.client_stacks))
    run_matrix(listed(opts.targets), pytest_args, clients=axis, soaks=opts.soak, jobs=opts.jobs)
    return 0


def soak(args: list[str]) -> int:
    """`kcts soak --repeat N [kcts run args]`: N runs, each on a fresh cluster; what each check gave."""
    from harness.reporting.soak import run_soak

    parser = argparse.ArgumentParser(prog="kcts soak", description="run a selection N times and report, per "
                                     "check, pass k/n, its duration spread and every verdict that flipped")
    parser.add_argument("--repeat", type=int, required=True)
    parser.add_argument("--soak-id", default=None, help="the report folder's name (default soak-<time>)")
    parser.add_argument("--reports-dir", type=Path, default=Path(os.environ.get("KCTS_REPORTS", "reports")))
    opts, run_args = parser.parse_known_args(args)
    return run_soak(opts.repeat, run_args, opts.reports_dir.resolve(), opts.soak_id)


def compare(args: list[str]) -> int:
    """Exit 0 when two runs give the same verdict on every check both ran (and they share one)."""
    from harness.reporting.compare import compare as compare_runs

    parser = argparse.ArgumentParser(prog="kcts compare", description="compare the verdicts of two runs")
    parser.add_argument("run_a", type=Path, help="a report folder (reports/<run-id>) or its results.json")
    parser.add_argument("run_b", type=Path)
    opts = parser.parse_args(args)
    result = compare_runs(opts.run_a, opts.run_b)
    print(result.render())
    return 0 if result.same else 1


def cluster(args: list[str]) -> int:
    """`kcts cluster up [target options]` holds a cluster until Ctrl-C; `kcts cluster OP [ARGS]` reaches it."""
    from harness import hold

    parser = argparse.ArgumentParser(prog="kcts cluster", description="start a cluster and hold it (up), or "
                                     "control the one held: " + ", ".join(hold.OPS))
    parser.add_argument("--name", default="default", help="which held cluster (default: default)")
    parser.add_argument("op", choices=("up", *hold.OPS))
    parser.add_argument("args", nargs="*")
    opts, target_args = parser.parse_known_args(args)
    if opts.op == "up":
        if opts.args:
            raise KctsError(f"kcts cluster up takes target options only, not {' '.join(opts.args)}")
        return hold.up(_target(target_args), opts.name)
    if target_args:
        raise KctsError(f"kcts cluster {opts.op}: unknown arguments {' '.join(target_args)}")
    return hold.control(opts.name, opts.op, opts.args)


def _selects_tests(arg: str) -> bool:
    """A test file or folder named on the command line (not an option's value such as a report folder)."""
    if arg.startswith("-"):
        return False
    path = Path(arg.split("::")[0])
    if not path.exists():
        return False
    if path.suffix == ".py":
        return True
    resolved = path.resolve()
    return any(resolved == layout.ROOT / d or layout.ROOT / d in resolved.parents for d in ("suites", "tests"))


def _image(args: list[str]) -> int:
    from harness.containers.build_command import main as image_main

    return image_main(args)


def _diff(args: list[str]) -> int:
    from harness.reporting.diff import main as diff_main

    return diff_main(args)


def _coverage(args: list[str]) -> int:
    from harness.reporting.coverage import main as coverage_main

    return coverage_main(args)


def _report(args: list[str]) -> int:
    from harness.reporting.allure_report import main as report_main

    return report_main(args)


def _replay(args: list[str]) -> int:
    from harness.replay import main as replay_main

    return replay_main(args)


def _allowed(args: list[str]) -> int:
    from harness.allowed import main as allowed_main

    return allowed_main(args)


# name -> (the line `kcts --help` gives it, the function that takes its arguments), in the README's order.
COMMANDS: dict[str, tuple[str, Callable[[list[str]], int]]] = {
    "run": ("run the suites against one target; other arguments are pytest's", run),
    "matrix": ("run the suites against several targets and client versions: matrix.json/.md/.html; "
               "`matrix merge` joins columns run apart", matrix),
    "soak": ("run one selection N times: pass k/n per check and every verdict that flipped", soak),
    "compare": ("compare the verdicts of two runs (exit 1 when one differs)", compare),
    "diff": ("what changed between two runs or matrices (exit 1 when a passing check fails now)", _diff),
    "report": ("render a run's Allure report as one self-contained page", _report),
    "coverage": ("promise -> checks -> versions -> verdicts", _coverage),
    "cluster": ("hold a cluster (up) and stop, pause or cut its nodes from another shell", cluster),
    "image": ("build the docker backend's Apache Kafka image, or the runner image (--runner), offline", _image),
    "bench": ("time one part of the harness: " + ", ".join(BENCHES), bench_main),
    "replay": ("replay documented broker bugs through the protocol proxy: caught or missed", _replay),
    "allowed": ("stage behaviour the KIPs and the protocol allow through the protocol proxy: 0 FAIL, 0 ERROR each",
                _allowed),
}


if __name__ == "__main__":
    sys.exit(main())
