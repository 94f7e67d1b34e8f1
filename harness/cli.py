"""The `kcts` command: `kcts run [pytest args]`, `kcts matrix --targets ...`, `kcts bench NAME --json`,
`kcts image` (the docker backend's image), `kcts compare RUN_A RUN_B` (the verdicts of two runs),
`kcts diff OLD NEW` (what changed, for a CI gate), `kcts report [RUN]` (the rendered Allure report),
`kcts cluster up` (a cluster to hold and poke at), `kcts coverage` (promise -> checks -> versions -> targets),
`kcts soak --repeat N` (the same selection N times: pass k/n and every verdict that flipped),
`kcts replay [ID...]` (documented broker bugs replayed through the protocol proxy: caught or missed)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from harness.cluster.target import SECURITY_OPTIONS, TargetSpec, from_options, security_from
from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION

REPO = Path(__file__).resolve().parent.parent
BENCHES = ("startup", "unclean", "codec", "proxy", "integrity")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__ or "", "\nusage: kcts run [--kafka-version V] [pytest args...] | "
              "kcts matrix --targets 4.4.0,4.3.1,kfake [pytest args...] | "
              "kcts bench {" + ",".join(BENCHES) + "} [--json] | kcts image [--kafka-version V] | "
              "kcts compare RUN_A RUN_B | kcts diff OLD NEW | kcts report [RUN] | kcts cluster up [...] | "
              "kcts coverage [RESULTS...] [--json] | kcts soak --repeat N [kcts run args...] | "
              "kcts replay [ID...] [--list]")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "run":
            return run(rest)
        if command == "bench":
            return bench(rest)
        if command == "matrix":
            return matrix(rest)
        if command == "image":
            return image(rest)
        if command == "compare":
            return compare(rest)
        if command == "diff":
            from harness.reports.diff import main as diff_main

            return diff_main(rest)
        if command == "coverage":
            from harness.reports.coverage import main as coverage_main

            return coverage_main(rest)
        if command == "report":
            from harness.reports.allure_report import main as report_main

            return report_main(rest)
        if command == "cluster":
            return cluster(rest)
        if command == "soak":
            return soak(rest)
        if command == "replay":
            from harness.replay import main as replay_main

            os.chdir(REPO)
            return replay_main(rest)
    except KctsError as exc:
        print(f"kcts: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kcts: interrupted", file=sys.stderr)
        return 130
    print(f"kcts: unknown command {command!r}; use run, matrix, bench, image, compare, diff, report, cluster, "
          "coverage, soak or replay",
          file=sys.stderr)
    return 2


def run(args: list[str]) -> int:
    """Prepare the target first (clear errors before any test), then hand everything to pytest."""
    import pytest

    from harness.cluster.factory import prepare

    spec = _target(args)
    print(f"kcts: {prepare(spec)}", flush=True)
    suites = REPO / "suites"
    if not suites.is_dir():
        raise KctsError(f"no suites/ beside the harness at {REPO}; run kcts from a kcts checkout")
    if not any(_selects_tests(a) for a in args):
        args = [str(suites), *args]
    os.chdir(REPO)
    return int(pytest.main(["-p", "no:cacheprovider", *args]))


def _target(args: list[str]) -> TargetSpec:
    """The target the arguments name, parsed as the pytest plugin will parse them."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--backend", default="local")
    parser.add_argument("--kafka-version", default=os.environ.get("KCTS_KAFKA_VERSION"))
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--bootstrap-servers")
    for flag, env, _ in SECURITY_OPTIONS:
        parser.add_argument(flag, default=os.environ.get(env) if env else None)
    parser.add_argument("--java-clients", default=os.environ.get("KCTS_JAVA_CLIENTS"))
    parser.add_argument("--target")
    parser.add_argument("--target-profile")
    parser.add_argument("--image", default=os.environ.get("KCTS_IMAGE"))
    parser.add_argument("--publish-from", type=int)
    o, _ = parser.parse_known_args(args)
    return from_options(o.backend, o.kafka_version, o.brokers, o.bootstrap_servers, security_from(o), o.java_clients,
                        o.target, o.target_profile, o.image, o.publish_from)


def matrix(args: list[str]) -> int:
    """Run the suites against several targets; the exit code is 0 when the matrix was written."""
    from harness.reports.matrix_run import ClientAxis, run_matrix

    parser = argparse.ArgumentParser(prog="kcts matrix")
    parser.add_argument("--targets", required=True,
                        help="comma-separated: 4.4.0,4.3.1,kfake,external:HOST:PORT, or a target profile FILE.toml")
    parser.add_argument("--java-clients", default="",
                        help="comma-separated kafka-clients versions of the Java drivers: a client-only column each")
    parser.add_argument("--librdkafka", default="",
                        help="comma-separated confluent-kafka releases (librdkafka bundled): a client-only column each")
    parser.add_argument("--go-client", action="store_true", help="a client-only column of franz-go")
    parser.add_argument("--soak", action="append", type=lambda p: Path(p).resolve(), default=[],
                        help="a kcts soak report folder (reports/<soak id>): a column of pass k/n per check")
    opts, pytest_args = parser.parse_known_args(args)
    for folder in opts.soak:
        if not (folder / "soak.json").is_file():
            raise KctsError(f"--soak {folder}: no soak.json there; give a folder kcts soak wrote (reports/<soak id>)")
    os.chdir(REPO)

    def listed(text: str) -> list[str]:
        return [t.strip() for t in text.split(",") if t.strip()]

    axis = ClientAxis(java=listed(opts.java_clients), librdkafka=listed(opts.librdkafka), go=opts.go_client)
    run_matrix(listed(opts.targets), pytest_args, clients=axis, soaks=opts.soak)
    return 0


def soak(args: list[str]) -> int:
    """`kcts soak --repeat N [kcts run args]`: N runs, each on a fresh cluster; what each check gave."""
    from harness.reports.soak import run_soak

    parser = argparse.ArgumentParser(prog="kcts soak", description="run a selection N times and report, per "
                                     "check, pass k/n, its duration spread and every verdict that flipped")
    parser.add_argument("--repeat", type=int, required=True)
    parser.add_argument("--soak-id", default=None, help="the report folder's name (default soak-<time>)")
    parser.add_argument("--reports-dir", type=Path, default=Path(os.environ.get("KCTS_REPORTS", "reports")))
    opts, run_args = parser.parse_known_args(args)
    os.chdir(REPO)
    return run_soak(opts.repeat, run_args, opts.reports_dir.resolve(), opts.soak_id)


def compare(args: list[str]) -> int:
    """Exit 0 when two runs give the same verdict on every check both ran (and they share one)."""
    from harness.reports.compare import compare as compare_runs

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


def image(args: list[str]) -> int:
    """Build (or find) the docker backend's Apache Kafka image, offline; print its tags."""
    from harness.docker import engine, images
    from harness.kafka.dist import check_java, normalize_version, resolve

    parser = argparse.ArgumentParser(prog="kcts image", description="build kcts/kafka:<version> offline "
                                     "(debootstrap base + Maven Central jars), as docker/compose.yaml runs it")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    opts = parser.parse_args(args)
    check_java()
    built = images.ensure_kafka(engine.client(), resolve(normalize_version(opts.kafka_version)))
    how = f"built in {built.seconds:.0f} s" if built.seconds else "already built"
    print(f"{built.tag} and {images.KAFKA_REPO}:{built.tag.split(':')[1].split('-')[0]} ({how})")
    return 0


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
    return any(resolved == REPO / d or REPO / d in resolved.parents for d in ("suites", "tests"))


def bench(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts bench")
    parser.add_argument("name", choices=BENCHES)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", dest="startup_on", choices=("local", "docker"), default="local",
                        help="startup: docker compares the cluster in containers with the local one")
    parser.add_argument("--warm-images", action="store_true",
                        help="startup --backend docker: keep the images instead of timing their cold build")
    parser.add_argument("--records", type=int, default=1_000_000, help="integrity: records generated")
    parser.add_argument("--spark-master", default="local[2]", help="integrity: Spark master of the checker")
    opts = parser.parse_args(args)
    if opts.name == "startup":
        from harness.bench import startup

        if opts.startup_on == "docker":
            result = startup.run_docker(opts.kafka_version, rounds=opts.rounds, cold=not opts.warm_images)
        else:
            result = startup.run(opts.kafka_version, rounds=opts.rounds)
    elif opts.name == "unclean":
        from harness.bench import unclean

        result = unclean.run(opts.kafka_version, rounds=opts.rounds)
    elif opts.name == "integrity":
        from harness.bench import integrity

        result = integrity.run(opts.records, opts.kafka_version, opts.spark_master)
    elif opts.name == "proxy":
        from harness.bench import proxy

        result = proxy.run(opts.kafka_version, rounds=opts.rounds)
    else:
        from harness.bench import codec

        result = codec.run(opts)
    if opts.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
