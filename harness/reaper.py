"""The reaper: `python -m harness.reaper SESSION_ID ROOT FD`.

Blocks on FD until the harness process that holds its other end is gone, then kills every
process whose command line carries the session marker, removes the session's containers, networks
and volumes, its link rules and node cgroups, and
deletes the session root. Runs no longer than that.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path


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
    signal.signal(signal.SIGTERM, _reap_now)
    signal.signal(signal.SIGHUP, _reap_now)
    try:
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
    kill_tagged(session_id)
    remove_containers(session_id)
    remove_links(session_id)
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
