"""The holder of librdkafka's mock cluster: `python rdkafka_mock_holder.py --brokers 3 --tag MARKER`.

librdkafka (the copy confluent-kafka bundles in confluent_kafka.libs/) carries a Kafka-protocol mock
cluster, `rd_kafka_mock`, with a control API exported from the shared library (src/rdkafka_mock.h).
This program loads that library with ctypes, creates a mock cluster of N brokers on one rd_kafka_t
handle of its own, and prints one JSON line: {"bootstrap": "127.0.0.1:port,..."}. The mock's
brokers listen on INADDR_LOOPBACK only (rd_kafka_mock_broker_new in src/rdkafka_mock.c).

Then it takes commands on stdin, one JSON line each ({"id": 1, "op": ..., ...}), and answers each on
stdout ({"id": 1, "ok": true} or {"id": 1, "error": "..."}), one at a time, in order:
  create_topic {topic, partitions, replication_factor}   rd_kafka_mock_topic_create
  set_leader {topic, partition, node}    rd_kafka_mock_partition_set_leader (node -1: no leader);
                                          the mock bumps the partition's leader epoch on every call
  set_follower {topic, partition, node}  rd_kafka_mock_partition_set_follower (the preferred replica)
  down {node} / up {node}                rd_kafka_mock_broker_set_down / _up: its listener and every
                                          connection close, and open again on the same port
  rtt {node, ms}                         rd_kafka_mock_broker_set_rtt: every answer of that broker is
                                          held `ms` after its request came (0: none)
End of stdin destroys the cluster and ends the program. It imports nothing of the harness: it runs
under the interpreter of whatever environment has confluent-kafka installed. The harness starts it
with PR_SET_PDEATHSIG and the session marker on its command line (`--tag`), so it dies with its
parent and the reaper finds it (harness/cluster/librdkafka_mock.py).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import sys
from pathlib import Path

RD_KAFKA_PRODUCER = 0


def library_path() -> Path:
    """The librdkafka that confluent-kafka bundles (confluent_kafka.libs/librdkafka-*.so*), found
    without importing confluent_kafka, which would load it a second time under another handle."""
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("confluent-kafka is not installed in this interpreter's environment")
    libs = Path(next(iter(spec.submodule_search_locations))).parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka*.so*"))
    if not found:
        raise SystemExit(f"no librdkafka shared library in {libs}: this confluent-kafka wheel bundles none")
    return found[0]


def load(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    p, i32, c = ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p
    for name, res, args in (
        ("rd_kafka_conf_new", p, []),
        ("rd_kafka_conf_set", ctypes.c_int, [p, c, c, c, ctypes.c_size_t]),
        ("rd_kafka_new", p, [ctypes.c_int, p, c, ctypes.c_size_t]),
        ("rd_kafka_destroy", None, [p]),
        ("rd_kafka_err2name", c, [ctypes.c_int]),
        ("rd_kafka_version_str", c, []),
        ("rd_kafka_mock_cluster_new", p, [p, ctypes.c_int]),
        ("rd_kafka_mock_cluster_destroy", None, [p]),
        ("rd_kafka_mock_cluster_bootstraps", c, [p]),
        ("rd_kafka_mock_topic_create", ctypes.c_int, [p, c, ctypes.c_int, ctypes.c_int]),
        ("rd_kafka_mock_partition_set_leader", ctypes.c_int, [p, c, i32, i32]),
        ("rd_kafka_mock_partition_set_follower", ctypes.c_int, [p, c, i32, i32]),
        ("rd_kafka_mock_broker_set_down", ctypes.c_int, [p, i32]),
        ("rd_kafka_mock_broker_set_up", ctypes.c_int, [p, i32]),
        ("rd_kafka_mock_broker_set_rtt", ctypes.c_int, [p, i32, ctypes.c_int]),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def create(lib: ctypes.CDLL, brokers: int) -> tuple[int, int]:
    """(rd_kafka_t, rd_kafka_mock_cluster_t): the mock cluster needs a handle to live on."""
    conf = lib.rd_kafka_conf_new()
    errstr = ctypes.create_string_buffer(512)
    # The handle is only the mock's host: it never connects anywhere, so it logs only its errors.
    lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, len(errstr))
    rk = lib.rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, len(errstr))
    if not rk:
        raise SystemExit(f"rd_kafka_new failed: {errstr.value.decode(errors='replace')}")
    mc = lib.rd_kafka_mock_cluster_new(rk, brokers)
    if not mc:
        lib.rd_kafka_destroy(rk)
        raise SystemExit(f"rd_kafka_mock_cluster_new({brokers}) failed (see the log above)")
    return rk, mc


def serve(lib: ctypes.CDLL, mc: int) -> None:
    def call(op: str, cmd: dict) -> int:
        if op == "create_topic":
            return lib.rd_kafka_mock_topic_create(mc, cmd["topic"].encode(), int(cmd["partitions"]),
                                                  int(cmd["replication_factor"]))
        if op == "set_leader":
            return lib.rd_kafka_mock_partition_set_leader(mc, cmd["topic"].encode(), int(cmd["partition"]),
                                                          int(cmd["node"]))
        if op == "set_follower":
            return lib.rd_kafka_mock_partition_set_follower(mc, cmd["topic"].encode(), int(cmd["partition"]),
                                                            int(cmd["node"]))
        if op == "down":
            return lib.rd_kafka_mock_broker_set_down(mc, int(cmd["node"]))
        if op == "up":
            return lib.rd_kafka_mock_broker_set_up(mc, int(cmd["node"]))
        if op == "rtt":
            return lib.rd_kafka_mock_broker_set_rtt(mc, int(cmd["node"]), int(cmd["ms"]))
        raise KeyError(op)

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
            rid = cmd.get("id")
        except ValueError:
            print(json.dumps({"id": None, "error": f"not a JSON line: {line[:200]!r}"}), flush=True)
            continue
        try:
            err = call(str(cmd.get("op")), cmd)
        except (KeyError, TypeError, ValueError) as exc:
            reply = {"id": rid, "error": f"bad command {cmd!r}: {exc!r}"}
        else:
            # Each control call waits on the mock's own thread (rd_kafka_op_req, RD_POLL_INFINITE):
            # when it returns, the change is in force for the next request any broker reads.
            reply = {"id": rid, "ok": True} if err == 0 else {
                "id": rid, "error": (lib.rd_kafka_err2name(err) or b"?").decode(), "code": err}
        print(json.dumps(reply), flush=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--tag", default="", help="the session marker, for the reaper; unused here")
    ap.add_argument("--lib", help="the librdkafka shared library (default: confluent-kafka's)")
    args = ap.parse_args(argv)
    path = Path(args.lib) if args.lib else library_path()
    lib = load(path)
    rk, mc = create(lib, args.brokers)
    try:
        print(json.dumps({"bootstrap": lib.rd_kafka_mock_cluster_bootstraps(mc).decode(),
                          "librdkafka": lib.rd_kafka_version_str().decode(), "library": str(path)}), flush=True)
        serve(lib, mc)
    finally:
        lib.rd_kafka_mock_cluster_destroy(mc)
        lib.rd_kafka_destroy(rk)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
