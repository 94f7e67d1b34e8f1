"""The reaper: `python -m harness.reaper SESSION_ID ROOT FD`.

Blocks on FD until the harness process that holds its other end is gone, then runs the undo
commands an operated target left in its ledger (what the operator's commands stopped, paused or cut
off is started, resumed and healed), kills every process whose command line carries the session
marker, removes the session's containers, networks and volumes, its link rules and node cgroups, and
deletes the session root. Runs no longer than that: each undo command within its own deadline, all
of them within `UNDO_BUDGET_S`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness import procfs

# An operated target's ledgers (harness/cluster/operations.py writes them): ROOT/undo/<cluster>.json,
# {"log": a file to append what ran to, or "", "entries": [{"what", "argv", "timeout", "in_flight_pid",
# "in_flight_until"}, ...]} in the order they are undone. `in_flight_pid` is the process group of the
# command that made the fault while it runs (0 once it ended): it does not die with the runner, so
# that what it asked for is done, or not, before its undo runs; the reaper waits for it until
# `in_flight_until` (seconds since the epoch, its deadline) and kills its group there.
UNDO_DIR = "undo"
UNDO_BUDGET_S = 600.0  # every undo command of a session, at most
UNDO_COMMAND_MAX_S = 300.0  # one undo command, whatever its ledger says


def tagged_pids(session_id: str) -> list[int]:
    marker = f"kcts.session={session_id}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline and b"harness.reaper" not in cmdline:
            pids.append(int(entry.name))
    return pids


def kill_tagged(session_id: str, grace: float = 0.0) -> list[int]:
    pids = tagged_pids(session_id)
    for sig in ([signal.SIGTERM] if grace else []) + [signal.SIGCONT, signal.SIGKILL]:
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if sig is signal.SIGTERM:
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and tagged_pids(session_id):
                time.sleep(0.2)
    return pids


def remove_containers(session_id: str) -> None:
    """Every container, network and volume labelled with the session (harness.docker_engine)."""
    try:
        from harness import docker_engine

        c = docker_engine.client(timeout=20)
        docker_engine.remove_labelled(c, f"{docker_engine.SESSION_LABEL}={session_id}")
    except Exception:  # noqa: BLE001 - no daemon or no SDK: nothing of ours can be running there
        pass


def remove_links(session_id: str) -> None:
    """The session's nftables tables and node cgroups (harness.network.links)."""
    try:
        from harness.network import links

        links.reap(session_id)
    except Exception:  # noqa: BLE001 - nothing of ours can be there without nft and cgroups
        pass


def undo_operations(root: Path, budget: float = UNDO_BUDGET_S) -> list[str]:
    """Run every undo command of the ledgers under ROOT/undo/, in each ledger's order; what ran, as
    lines (also appended to the ledger's log). Never raises: a command that fails or hangs (killed at
    its deadline) is noted and the next one runs."""
    deadline = time.monotonic() + budget
    done: list[str] = []
    for path in sorted((root / UNDO_DIR).glob("*.json")):
        try:
            ledger = json.loads(path.read_text())
            entries = list(ledger["entries"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        lines = []
        for entry in entries:
            try:
                argv = [str(a) for a in entry["argv"]]
                timeout = min(float(entry["timeout"]), UNDO_COMMAND_MAX_S)
                pid = int(entry.get("in_flight_pid") or 0)
                until = float(entry.get("in_flight_until") or 0)
            except (KeyError, TypeError, ValueError):
                continue
            if pid > 0:
                lines.append(f"reaper: {entry.get('what', '')}: its fault's command (pid {pid}) "
                             f"{_wait_for(pid, min(until - time.time(), deadline - time.monotonic()))}")
            left = deadline - time.monotonic()
            if left <= 0:
                lines.append(f"reaper: out of time before {entry.get('what', argv)}")
                break
            lines.append(f"reaper: {entry.get('what', '')}: $ {' '.join(argv)}: {_run(argv, min(timeout, left))}")
        done += lines
        try:
            if ledger.get("log"):
                with open(ledger["log"], "a") as log:
                    log.write("".join(f"{line}\n" for line in lines))
        except (OSError, TypeError):
            pass
    return done


def _wait_for(pid: int, timeout: float) -> str:
    """Until the process `pid` is gone (it is not ours to wait on: polled), or its group killed at the timeout."""
    end = time.monotonic() + max(0.0, timeout)
    while _alive(pid):
        if time.monotonic() >= end:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return "was killed at its deadline"
        time.sleep(0.1)
    return "had ended"


def _alive(pid: int) -> bool:
    """Running, and not a zombie (a process whose parent died is reaped by init; until then, a zombie)."""
    seen = procfs.stat(pid)
    return seen is not None and seen.state != "Z"


def _run(argv: list[str], timeout: float) -> str:
    """One undo command to its end, in a process group of its own that goes whole at its deadline
    (a shell string's children with it)."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    except OSError as exc:
        return f"could not run: {exc}"
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a child that left the group holds the pipe: not waited for
            pass
        return f"killed after {timeout:.0f} s"
    lines = out.decode(errors="replace").strip().splitlines()
    return f"exit {proc.returncode}" + (f" ({lines[-1][:200]})" if lines else "")


class _ReapNow(Exception):
    """SIGTERM or SIGHUP to the reaper itself (a `kill` of the whole process tree, a closing
    terminal): reap at once rather than die and leave the session's processes and containers."""


def _reap_now(signum: int, frame: object) -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # one reaping; a second signal must not cut it short
    raise _ReapNow


def main(argv: list[str]) -> int:
    session_id, root, fd = argv[0], Path(argv[1]), int(argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # Inside the try, as harness.hold.up does: a SIGTERM the instant after its handler is in
        # place still reaps, rather than ending the reaper on an uncaught _ReapNow.
        signal.signal(signal.SIGTERM, _reap_now)
        signal.signal(signal.SIGHUP, _reap_now)
        while True:
            try:
                if not os.read(fd, 1):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
    except _ReapNow:
        pass
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the reaping below runs to its end (each step bounded)
    undo_operations(root)  # first: the operator's cluster whole again as soon as can be
    kill_tagged(session_id)
    remove_containers(session_id)
    remove_links(session_id)
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
