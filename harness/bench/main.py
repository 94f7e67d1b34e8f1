"""`kcts bench NAME`: one table from a bench's name to how it runs, so adding a bench is one row."""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable
from typing import Any

from harness.kafka.dist import DEFAULT_VERSION


def _startup(o: argparse.Namespace) -> dict[str, Any]:
    from harness.bench import startup

    if o.cluster_in == "containers":
        return startup.run_docker(o.kafka_version, rounds=o.rounds, cold=not o.warm_images)
    return startup.run(o.kafka_version, rounds=o.rounds)


def _module(name: str) -> Any:
    return importlib.import_module(f"harness.bench.{name}")


# name -> what runs it with the parsed options; each bench module is imported only when it runs.
BENCHES: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "startup": _startup,
    "unclean": lambda o: _module("unclean").run(o.kafka_version, rounds=o.rounds),
    "codec": lambda o: _module("codec").run(o),
    "proxy": lambda o: _module("proxy").run(o.kafka_version, rounds=o.rounds),
    "integrity": lambda o: _module("integrity").run(o.records, o.kafka_version, o.spark_master),
    "gate": lambda o: _module("gate").run(),
    "idle": lambda o: _module("idle").run(o.kafka_version, o.seconds),
}


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts bench", description="time one part of the harness")
    parser.add_argument("name", choices=BENCHES)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cluster-in", choices=("processes", "containers"), default="processes",
                        help="startup: containers times the cluster in containers against the one in processes")
    parser.add_argument("--warm-images", action="store_true",
                        help="startup --cluster-in containers: keep the images instead of timing their cold build")
    parser.add_argument("--seconds", type=float, default=60.0, help="idle: how long each cluster is held idle")
    parser.add_argument("--records", type=int, default=1_000_000, help="integrity: records generated")
    parser.add_argument("--spark-master", default="local[2]", help="integrity: Spark master of the checker")
    opts = parser.parse_args(args)
    result = BENCHES[opts.name](opts)
    if opts.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    # A bench that judges what it ran (gate: every env passed, every verdict the same) says so in "ok".
    return 1 if result.get("ok") is False else 0
