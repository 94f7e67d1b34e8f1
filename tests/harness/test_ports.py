"""Ports for the harness's servers: below the ephemeral range, free, and reserved across kcts processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.process import ports

HOLD = """
import sys
from harness.process import ports
holder = ports.reserve(int(sys.argv[1]))
print("held" if holder else "refused", flush=True)
sys.stdin.read()
"""


def _holder(port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_picked_port_lies_below_the_ephemeral_range_and_is_free() -> None:
    low = ports.ephemeral_low()
    if low - ports.FIRST < 1000:
        pytest.skip(f"this kernel's ephemeral range starts at {low}: kcts lets the kernel pick")
    picked = {ports.free_port() for _ in range(20)}
    assert all(ports.FIRST <= p < low for p in picked), sorted(picked)
    assert all(ports.bindable(p) for p in picked)
    assert len(picked) == 20  # each pick is held, so none repeats within the hold


def test_a_port_reserved_by_another_process_is_refused_until_it_ends() -> None:
    port = 20000 + os.getpid() % 10000  # one no other test run picks at the same time
    proc = _holder(port)
    try:
        assert ports.reserve(port) is None
    finally:
        proc.kill()  # however the holder ends, its reservation goes with it
        proc.wait(10)
    again = ports.reserve(port)
    assert again is not None
    again.close()


def test_a_bound_port_is_not_bindable() -> None:
    with socket.socket() as server:
        server.bind((ports.LOOPBACK, 0))
        server.listen()
        assert not ports.bindable(server.getsockname()[1])


def test_the_ephemeral_range_is_read_from_the_kernel_file(tmp_path: Path) -> None:
    path = tmp_path / "ip_local_port_range"
    path.write_text("32768\t60999\n")
    assert ports.ephemeral_low(path) == 32768
    assert ports.ephemeral_low(tmp_path / "missing") == 0


def test_without_room_below_the_ephemeral_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    real_low = ports.ephemeral_low()
    monkeypatch.setattr(ports, "ephemeral_low", lambda: 1024)
    port = ports.free_port()
    assert ports.bindable(port) and port >= real_low  # bind(0)'s pick, from the ephemeral range
