"""The `kcts` command: `kcts run [pytest args]`, `kcts matrix --targets ...`, `kcts bench NAME --json`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from harness.cluster.target import Security, TargetSpec, from_options
from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION

REPO = Path(__file__).resolve().parent.parent
BENCHES = ("startup", "unclean", "codec", "proxy", "integrity")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__ or "", "\nusage: kcts run [--kafka-version V] [pytest args...] | "
              "kcts matrix --targets 4.4.0,4.3.1,kfake [pytest args...] | "
              "kcts bench {" + ",".join(BENCHES) + "} [--json]")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "run":
            return run(rest)
        if command == "bench":
            return bench(rest)
        if command == "matrix":
            return matrix(rest)
    except KctsError as exc:
        print(f"kcts: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kcts: interrupted", file=sys.stderr)
        return 130
    print(f"kcts: unknown command {command!r}; use run, matrix or bench", file=sys.stderr)
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
    parser.add_argument("--security-protocol")
    parser.add_argument("--sasl-mechanism")
    parser.add_argument("--sasl-username", default=os.environ.get("KCTS_SASL_USERNAME"))
    parser.add_argument("--sasl-password", default=os.environ.get("KCTS_SASL_PASSWORD"))
    parser.add_argument("--java-clients", default=os.environ.get("KCTS_JAVA_CLIENTS"))
    parser.add_argument("--target")
    parser.add_argument("--target-profile")
    o, _ = parser.parse_known_args(args)
    security = Security(o.security_protocol, o.sasl_mechanism, o.sasl_username, o.sasl_password)
    return from_options(o.backend, o.kafka_version, o.brokers, o.bootstrap_servers, security, o.java_clients,
                        o.target, o.target_profile)


def matrix(args: list[str]) -> int:
    """Run the suites against several targets; the exit code is 0 when the matrix was written."""
    from harness.reports.matrix_run import run_matrix

    parser = argparse.ArgumentParser(prog="kcts matrix")
    parser.add_argument("--targets", required=True,
                        help="comma-separated: 4.4.0,4.3.1,kfake,external:HOST:PORT, or a target profile FILE.toml")
    opts, pytest_args = parser.parse_known_args(args)
    os.chdir(REPO)
    run_matrix([t.strip() for t in opts.targets.split(",") if t.strip()], pytest_args)
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
    parser.add_argument("--records", type=int, default=1_000_000, help="integrity: records generated")
    parser.add_argument("--spark-master", default="local[2]", help="integrity: Spark master of the checker")
    opts = parser.parse_args(args)
    if opts.name == "startup":
        from harness.bench import startup

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
