"""Free TCP ports for the servers the harness starts, always on loopback."""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A port nothing listens on right now on 127.0.0.1.

    The port is free when this returns, not reserved: the server that takes it should start soon.
    Loopback only, because nothing the harness starts on its own should be reachable from outside.
    """
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])
