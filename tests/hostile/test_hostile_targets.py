"""A broken or hostile target never hangs kcts nor swells it: each misbehaviour ends in a clear error
that names what the target did, within 60 s, with the harness process under 200 MB.

Each case runs in a process of its own (its time and peak memory measured with wait4): the raw
client straight to the hostile broker, the raw client through the protocol proxy, and `kcts run
--backend external` against it. The broker is tests/hostile/broker.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import pytest

from harness.cli import REPO
from harness.protocol.spec import load_specs
from tests.hostile.broker import HostileBroker

DEADLINE = 60.0
MAX_RSS_MB = 200

# What the raw client must say of each misbehaviour (directly and through the proxy).
RAW_SAYS = {
    "garbage": r"announces 1213486160 bytes, outside 4\.\.67108864",
    "huge": r"announces 2147483647 bytes, outside 4\.\.67108864",
    "truncated": r"closed the connection while answering ApiVersions v\d+ .*\(10 of 100 bytes read\)",
    "wrong-correlation": r"has correlation id 1001, expected 1",
    "wrong-version": r"answer to Metadata v12 is not a valid Metadata v12 response",
    "slow": r"no response to ApiVersions v\d+ .* within 5s",
    "refuses-advertised": r"closed the connection while answering Metadata v12 .*; it advertised Metadata v0-12",
}
# Through the proxy the client sees the link closed; the proxy names the frame it refused.
PROXY_SAYS = {
    **RAW_SAYS,
    "garbage": r"closed the connection while answering ApiVersions",
    "huge": r"closed the connection while answering ApiVersions",
    "truncated": r"closed the connection while answering ApiVersions",
}
PROXY_NOTES = {"garbage": "announced a 1213486160-byte frame", "huge": "announced a 2147483647-byte frame"}
EXTERNAL_SAYS = {
    **{b: r"cannot start the target: the broker at --bootstrap-servers 127\.0\.0\.1:\d+ does not answer as a Kafka "
          r"broker; asked directly, .*" + said for b, said in RAW_SAYS.items()},
    "ghosts": r"the target's Metadata names broker 7 at 127\.0\.0\.1:1, which does not answer as a Kafka broker; "
              r"asked directly, cannot connect to 127\.0\.0\.1:1",
}


@dataclass(frozen=True)
class Ended:
    exit_code: int
    seconds: float
    peak_mb: float
    output: str


def _measured(argv: list[str]) -> Ended:
    """Run `argv` from the repository: its exit, wall time, peak RSS (wait4) and output. A run that
    outlives the deadline by 30 s is killed and fails the test."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: proc.stdout.read(65536), b"")), daemon=True)
    reader.start()
    killer = threading.Timer(DEADLINE + 30, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(10)
    output = b"".join(chunks).decode(errors="replace")
    assert proc.returncode != -9, f"{argv[2:5]} still ran after {DEADLINE + 30:g} s:\n{output[-2000:]}"
    return Ended(proc.returncode, time.monotonic() - start, usage.ru_maxrss / 1024, output)


@pytest.mark.parametrize("via", ["raw", "proxy"])
@pytest.mark.parametrize("behaviour", sorted(RAW_SAYS))
def test_the_raw_client_names_what_a_hostile_broker_did(behaviour: str, via: str) -> None:
    ended = _measured([sys.executable, "-m", "tests.hostile.ask", behaviour, via])
    assert ended.exit_code == 0, ended.output[-2000:]
    result = json.loads(ended.output.strip().splitlines()[-1])
    says = (RAW_SAYS if via == "raw" else PROXY_SAYS)[behaviour]
    assert result["error"] is not None, f"{behaviour} via {via}: the client was answered: {result}"
    assert re.search(says, result["error"]), (
        f"{behaviour} via {via}: expected the error to say /{says}/; it said {result['error']!r}")
    if via == "proxy" and behaviour in PROXY_NOTES:
        assert any(PROXY_NOTES[behaviour] in e for e in result["proxy_errors"]), (
            f"the proxy noted {result['proxy_errors']}")
    assert ended.seconds <= DEADLINE and ended.peak_mb < MAX_RSS_MB, (
        f"{behaviour} via {via}: {ended.seconds:.1f} s, {ended.peak_mb:.0f} MB")


@pytest.mark.parametrize("behaviour", sorted(EXTERNAL_SAYS))
def test_an_external_run_against_a_hostile_broker_ends_in_one_error_naming_it(behaviour: str) -> None:
    with HostileBroker(load_specs("4.4.0"), behaviour) as broker:
        ended = _measured([sys.executable, "-m", "harness.cli", "run", "--backend", "external", "--bootstrap-servers",
                           "{}:{}".format(*broker.address), "-m", "smoke", "--run-id",
                           f"tests-hostile-{behaviour}-{os.getpid()}"])
    assert ended.exit_code not in (0, 1), f"{behaviour}: exit {ended.exit_code}, a verdict, not a setup error"
    assert re.search(EXTERNAL_SAYS[behaviour], ended.output), (
        f"{behaviour}: expected /{EXTERNAL_SAYS[behaviour]}/ in:\n{ended.output[-2500:]}")
    assert "Traceback" not in ended.output, ended.output[-2500:]
    assert ended.seconds <= DEADLINE and ended.peak_mb < MAX_RSS_MB, (
        f"{behaviour}: {ended.seconds:.1f} s, {ended.peak_mb:.0f} MB")
