"""A broken or hostile target never hangs kcts nor swells it: each misbehaviour ends in a clear error
that names what the target did, within 60 s, with the harness process under 200 MB.

Each case runs in a process of its own (its time and its own peak memory, VmHWM, measured): the raw
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.layout import ROOT as REPO
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
    "slow": r"no response to ApiVersions v\d+ .* within \d+s",
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


def _hwm_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (VmHWM), in MB; None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _measured(argv: list[str]) -> Ended:
    """Run `argv` from the repository: its exit, wall time, peak RSS and output. The peak is the
    child's own VmHWM, sampled every 20 ms until it exits: wait4's ru_maxrss would count this pytest
    process's memory, which a forked child inherits as its starting high-water mark. A run that
    outlives the deadline by 30 s is killed and fails the test."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: proc.stdout.read(65536), b"")), daemon=True)
    reader.start()
    peak = 0.0
    while proc.poll() is None:
        if time.monotonic() - start > DEADLINE + 30:
            proc.kill()
        peak = max(peak, _hwm_mb(proc.pid) or 0.0)
        time.sleep(0.02)
    reader.join(10)
    output = b"".join(chunks).decode(errors="replace")
    assert proc.returncode != -9, f"{argv[2:5]} still ran after {DEADLINE + 30:g} s:\n{output[-2000:]}"
    return Ended(proc.returncode, time.monotonic() - start, peak, output)


# A target whose Metadata names one broker more at each answer, all at its own address, is reachable:
# the run must end with verdicts that name what it refused (it advertises no CreateTopics), not follow
# it forever.
LOOP_SAYS = r"TARGET_REFUSED: the target refused to create topic .*serve no CreateTopics: API 19 is not among"
CASES = [*((via, b) for via in ("raw", "proxy") for b in sorted(RAW_SAYS)),
         *(("external", b) for b in sorted(EXTERNAL_SAYS)), ("external", "self-loop")]


def _case(via: str, behaviour: str, reports: Path) -> Ended:
    if via != "external":
        return _measured([sys.executable, "-m", "tests.hostile.ask", behaviour, via])
    with HostileBroker(load_specs("4.4.0"), behaviour) as broker:
        return _measured([sys.executable, "-m", "harness.cli", "run", "--backend", "external", "--bootstrap-servers",
                          "{}:{}".format(*broker.address), "-m", "smoke", "--run-id", behaviour,
                          "--reports-dir", str(reports)])


@pytest.fixture(scope="module")
def ended(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Ended]:
    """Every case, run a few at a time: most of them wait (on a deadline, on a closed port), and each
    is measured on its own."""
    reports = tmp_path_factory.mktemp("hostile-reports")
    with ThreadPoolExecutor(max_workers=4) as pool:
        running = {case: pool.submit(_case, *case, reports) for case in CASES}
        return {case: f.result() for case, f in running.items()}


@pytest.mark.parametrize("via", ["raw", "proxy"])
@pytest.mark.parametrize("behaviour", sorted(RAW_SAYS))
def test_the_raw_client_names_what_a_hostile_broker_did(
    ended: dict[tuple[str, str], Ended], behaviour: str, via: str
) -> None:
    run = ended[(via, behaviour)]
    assert run.exit_code == 0, run.output[-2000:]
    result = json.loads(run.output.strip().splitlines()[-1])
    says = (RAW_SAYS if via == "raw" else PROXY_SAYS)[behaviour]
    assert result["error"] is not None, f"{behaviour} via {via}: the client was answered: {result}"
    assert re.search(says, result["error"]), (
        f"{behaviour} via {via}: expected the error to say /{says}/; it said {result['error']!r}")
    if via == "proxy" and behaviour in PROXY_NOTES:
        assert any(PROXY_NOTES[behaviour] in e for e in result["proxy_errors"]), (
            f"the proxy noted {result['proxy_errors']}")
    assert run.seconds <= DEADLINE and run.peak_mb < MAX_RSS_MB, (
        f"{behaviour} via {via}: {run.seconds:.1f} s, {run.peak_mb:.0f} MB")


@pytest.mark.parametrize("behaviour", sorted(EXTERNAL_SAYS))
def test_an_external_run_against_a_hostile_broker_ends_in_one_error_naming_it(
    ended: dict[tuple[str, str], Ended], behaviour: str
) -> None:
    run = ended[("external", behaviour)]
    assert run.exit_code not in (0, 1), f"{behaviour}: exit {run.exit_code}, a verdict, not a setup error"
    assert re.search(EXTERNAL_SAYS[behaviour], run.output), (
        f"{behaviour}: expected /{EXTERNAL_SAYS[behaviour]}/ in:\n{run.output[-2500:]}")
    assert "Traceback" not in run.output, run.output[-2500:]
    assert run.seconds <= DEADLINE and run.peak_mb < MAX_RSS_MB, (
        f"{behaviour}: {run.seconds:.1f} s, {run.peak_mb:.0f} MB")


def test_an_external_run_against_a_broker_list_that_loops_back_ends_in_verdicts(
    ended: dict[tuple[str, str], Ended],
) -> None:
    run = ended[("external", "self-loop")]
    assert run.exit_code == 0 and re.search(LOOP_SAYS, run.output), f"exit {run.exit_code}:\n{run.output[-2500:]}"
    assert "Traceback" not in run.output, run.output[-2500:]
    assert run.seconds <= DEADLINE and run.peak_mb < MAX_RSS_MB, f"self-loop: {run.seconds:.1f} s, {run.peak_mb:.0f} MB"
