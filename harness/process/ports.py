"""Free TCP ports for the servers the harness starts, always on loopback.

A port is picked below the kernel's ephemeral range, where no process's bind(0) or connect() ever
lands, and reserved among kcts processes for a while by an abstract Unix socket named after it.
Picking with bind(0) left a window, between the pick and a JVM's bind seconds later, in which any
other process's bind(0) or connect() could be given the same port: a gate run with both cores
loaded by other work once saw "broker-2 could not start: port 127.0.0.1:43291 is in use".
"""

from __future__ import annotations

import random
import socket
import threading
import time
from pathlib import Path

LOOPBACK = "127.0.0.1"

# Below this lie well-known services a developer machine may run (PostgreSQL, Jupyter, 8080s).
FIRST = 10000
# Long enough for a JVM on a loaded machine to bind what it was given; a reservation is an open
# socket, gone with the process however it ends.
HOLD_SECONDS = 300.0
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")

_held: list[tuple[float, socket.socket]] = []
_lock = threading.Lock()
_random = random.SystemRandom()


def ephemeral_low(path: Path = _EPHEMERAL_RANGE) -> int:
    """The first port the kernel hands out for bind(0) and connect(); 0 if it cannot be read."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def reserve(port: int) -> socket.socket | None:
    """The reservation of `port` among kcts processes, or None if another process holds it."""
    holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        holder.bind(f"\0kcts-port-{port}")
    except OSError:
        holder.close()
        return None
    return holder


def bindable(port: int) -> bool:
    """Nothing is bound to `port` on 127.0.0.1 (nor on the wildcard address) right now."""
    with socket.socket() as s:
        try:
            s.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def _kernel_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _release_expired(now: float) -> None:
    while _held and now - _held[0][0] > HOLD_SECONDS:
        _held.pop(0)[1].close()


def free_port() -> int:
    """A port nothing listens on right now on 127.0.0.1, reserved from other kcts processes.

    The server that takes it should bind it within HOLD_SECONDS. Loopback only, because nothing the
    harness starts on its own should be reachable from outside.
    """
    low = ephemeral_low()
    if low - FIRST < 1000:  # no room below the ephemeral range on this kernel: the old way
        return _kernel_port()
    with _lock:
        now = time.monotonic()
        _release_expired(now)
        for _ in range(100):
            port = _random.randrange(FIRST, low)
            holder = reserve(port)
            if holder is None:
                continue
            if bindable(port):
                _held.append((now, holder))
                return port
            holder.close()
    return _kernel_port()  # the range is crowded beyond belief; the kernel's pick still works
