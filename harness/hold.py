"""`kcts cluster up`: a cluster to hold and poke at, and the commands that reach it from another shell.

The holder starts a cluster through the one target model, prints how to reach it, and keeps it
until Ctrl-C or SIGTERM; then the cluster goes as a run's does (and the session's reaper takes it
if the holder is killed outright). Node control from another shell (`kcts cluster kill 2`) goes
to the holder over a Unix socket in its session root: the socket is removed with the session, so
a holder that died leaves nothing to find, and no state lives anywhere else.

Protocol: one JSON line per connection each way, `{"op": "kill", "args": ["2"]}` answered by
`{"ok": true, "message": "..."}` or `{"ok": false, "error": "..."}`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import session
from harness.cluster.backend import Served
from harness.cluster.base import Cluster
from harness.errors import KctsError

NODE_OPS = ("stop", "start", "kill", "pause", "resume", "isolate", "heal")
LINK_OPS = ("cut", "cut-off", "heal-links")
OPS = (*NODE_OPS, *LINK_OPS, "unclean", "status")


def _sockets(name: str) -> list[Path]:
    base = Path(os.environ.get("KCTS_TMP", tempfile.gettempdir()))
    return sorted(base.glob(f"kcts-*/held/{name}.sock"))


def ask(name: str, op: str, args: list[str], timeout: float = 120.0) -> dict[str, Any]:
    """Send one command to the holder of cluster `name`; its answer. KctsError when none holds it."""
    for path in _sockets(name):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError:
            sock.close()
            continue  # a holder that died before its reaper removed the socket
        with sock:
            sock.sendall(json.dumps({"op": op, "args": args}).encode() + b"\n")
            reply = sock.makefile("rb").readline()
        if not reply:
            raise KctsError(f"the holder of cluster {name!r} closed the connection without an answer")
        return json.loads(reply)
    raise KctsError(f"no cluster named {name!r} is held here: start one with `kcts cluster up` "
                    f"(or name it: `kcts cluster --name NAME {op} ...`)")


class Holder:
    """A started cluster, its control socket and the commands it answers."""

    def __init__(self, cluster: Cluster, name: str) -> None:
        self.cluster = cluster
        self.name = name
        self._lock = threading.Lock()
        folder = session.current().root / "held"
        folder.mkdir(exist_ok=True)
        self.socket_path = folder / f"{name}.sock"
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.socket_path))
        self._server.listen(8)
        threading.Thread(target=self._serve, name="kcts-cluster-control", daemon=True).start()

    def close(self) -> None:
        self._server.close()
        self.socket_path.unlink(missing_ok=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            with conn:
                try:
                    request = json.loads(conn.makefile("rb").readline() or b"{}")
                    with self._lock:
                        answer = {"ok": True, "message": self.handle(request.get("op", ""), request.get("args", []))}
                except (KctsError, ValueError, AssertionError) as exc:
                    answer = {"ok": False, "error": str(exc)}
                except Exception as exc:  # noqa: BLE001 - the holder keeps the cluster whatever one command did
                    answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                try:
                    conn.sendall(json.dumps(answer).encode() + b"\n")
                except OSError:
                    pass

    def handle(self, op: str, args: list[str]) -> str:
        c = self.cluster
        if op == "status":
            return status(c)
        if op in NODE_OPS:
            broker = _broker(c, args)
            if op in ("isolate", "heal") and not c.capabilities.partitions:
                raise KctsError(f"{c.target.label} cannot cut a node off the network (no partition control)")
            if op != "start" and not c.capabilities.fault_control:
                raise KctsError(f"{c.target.label} gives no fault control: nodes cannot be stopped or paused")
            action: Callable[[int], None] = {
                "stop": c.stop_node, "start": c.start_node, "kill": c.kill_node, "pause": c.pause_node,
                "resume": c.resume_node, "isolate": c.isolate_node, "heal": c.heal_node,
            }[op]
            action(broker)
            return f"broker {broker}: {op} done; now {c.node_state(broker).value}"
        if op in LINK_OPS:
            return _links(c, op, args)
        if op == "unclean":
            if len(args) != 2 or not args[1].isdigit():
                raise KctsError("usage: kcts cluster unclean TOPIC PARTITION")
            from harness.nemesis.unclean import force_unclean_election

            e = force_unclean_election(c, args[0], int(args[1]))
            return (f"{args[0]}-{args[1]}: broker {e.new_leader} elected uncleanly (epoch {e.epoch_before} -> "
                    f"{e.epoch_after}); broker {e.old_leader} truncated offsets {e.divergence_offset}.."
                    f"{e.old_leader_leo_before - 1}")
        raise KctsError(f"unknown command {op!r}; the held cluster answers {', '.join(OPS)}")


def _links(c: Cluster, op: str, args: list[str]) -> str:
    """`cut FROM TO` (TO stops hearing FROM), `cut-off NODE` (from every other node, both ways; clients
    still reach it), `heal-links`."""
    from harness.network.links import LinkFault

    if not c.capabilities.links:
        raise KctsError(f"{c.target.label} cannot cut links between its nodes: {c.capabilities.no_links}")
    nodes = [*c.broker_ids, *c.controller_ids]
    if op == "heal-links":
        c.heal_links()
        return "every link up"
    ids = [int(a) for a in args if a.lstrip("-").isdigit()]
    want = 2 if op == "cut" else 1
    if len(ids) != want or len(args) != want or any(i not in nodes for i in ids):
        usage = "kcts cluster cut FROM TO" if op == "cut" else "kcts cluster cut-off NODE"
        raise KctsError(f"usage: {usage}, with node ids of {nodes}")
    if op == "cut":
        faults = [LinkFault(ids[0], ids[1])]
    else:
        faults = [f for o in nodes if o != ids[0] for f in (LinkFault(ids[0], o), LinkFault(o, ids[0]))]
    c.cut_links(faults)
    return f"links cut: {c.links_in_force()}"


def _broker(cluster: Cluster, args: list[str]) -> int:
    if len(args) != 1 or not args[0].lstrip("-").isdigit():
        raise KctsError("name one broker id, e.g. `kcts cluster kill 2`")
    broker = int(args[0])
    if broker not in cluster.broker_ids:
        raise KctsError(f"no broker {broker}: the held cluster's brokers are {cluster.broker_ids}")
    return broker


def status(cluster: Cluster) -> str:
    nodes = ", ".join(f"{b} {cluster.node_state(b).value}" for b in cluster.broker_ids)
    return f"{cluster.target.label}: bootstrap {cluster.bootstrap_servers}; brokers {nodes}"


def banner(cluster: Cluster, name: str) -> list[str]:
    """What `kcts cluster up` prints once the cluster is ready: how to reach it and what to type."""
    named = "" if name == "default" else f"--name {name} "
    b = cluster.broker_ids[-1]
    lines = [
        f"kcts cluster: {cluster.target.label} is up (brokers {', '.join(map(str, cluster.broker_ids))})",
        f"bootstrap: {cluster.bootstrap_servers}",
        "run the suites that need no node control against it:",
        f"  kcts run --backend external --bootstrap-servers {cluster.bootstrap_servers}",
    ]
    if cluster.capabilities.fault_control:
        lines.append("from another shell:")
        lines += [f"  kcts cluster {named}{op} {b}" for op in ("kill", "stop", "start", "pause", "resume")]
        if cluster.capabilities.partitions:
            lines += [f"  kcts cluster {named}{op} {b}" for op in ("isolate", "heal")]
        if cluster.capabilities.links:
            lines += [f"  kcts cluster {named}cut-off {b}   (from every other node; clients still reach it)",
                      f"  kcts cluster {named}cut {b} {cluster.controller_ids[0]}   (one way: "
                      f"{cluster.controller_ids[0]} stops hearing {b})" if cluster.controller_ids else "",
                      f"  kcts cluster {named}heal-links"]
            lines = [line for line in lines if line]
        if cluster.capabilities.replication:
            lines.append(f"  kcts cluster {named}unclean TOPIC 0   "
                         "(a topic with replicas on 2+ brokers and unclean.leader.election.enable=true)")
    lines += [f"  kcts cluster {named}status", "Ctrl-C stops it and removes everything it made."]
    return lines


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def interrupt_once(signum: int, frame: object) -> None:
    """The holder's handler: the first SIGINT or SIGTERM stops the hold, and every later one is
    ignored from that instant, so a second Ctrl-C (or `timeout` forwarding one) cannot cut the
    clean-up short. It takes no lock: a handler that set a threading.Event deadlocked when a second
    signal landed inside the first one's set()."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    raise KeyboardInterrupt


def up(served: Served, name: str) -> int:
    """Start the cluster, print the banner, hold it until SIGINT or SIGTERM; 0 once it is gone."""
    for path in _sockets(name):
        try:
            ask(name, "status", [], timeout=5)
        except (KctsError, OSError, ValueError):
            continue
        raise KctsError(f"a cluster named {name!r} is already held here ({path}); stop it with Ctrl-C in its "
                        f"shell, or hold another with --name")
    print(f"kcts cluster: {served.prepared}", flush=True)
    cluster = served.make(session.current().scratch("held-nodes"))
    holder: Holder | None = None
    previous: dict[int, Any] = {}
    try:
        # Inside the try: a signal the instant after its handler is in place still cleans up.
        for s in STOP_SIGNALS:
            previous[s] = signal.signal(s, interrupt_once)
        cluster.start()
        holder = Holder(cluster, name)
        print("\n".join(banner(cluster, name)), flush=True)
        while True:
            signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        for s in previous:
            signal.signal(s, signal.SIG_IGN)
        try:
            if holder is not None:
                holder.close()
            cluster.close()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    print("kcts cluster: stopped; nothing of it is left", flush=True)
    return 0


def control(name: str, op: str, args: list[str]) -> int:
    answer = ask(name, op, args)
    if not answer.get("ok"):
        raise KctsError(answer.get("error") or "the holder refused the command")
    print(answer["message"])
    return 0
