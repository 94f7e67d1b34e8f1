"""`kcts bench gate`: the gate's selection run serially, then as `.ci/run` ships it (its envs side by
side), in one run on one machine: the wall time of each, their ratio, and each node ID's verdict in both.

The selection is `.ci/gate.env` (the envs and their environment), which `.ci/run` reads too; each env
runs through tox as the gate runs it. The serial run is the selection one test at a time: each env
alone, in one pytest process (`SERIAL`), at the normal scheduling class. The shipped one is the gate's
schedule: the envs side by side, in the shards gate.env gives them, those of GATE_IDLE_ENVS in the idle
class. A verdict that differs between the two is a check whose verdict depends on the schedule.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from harness import procfs
from harness.errors import KctsError
from harness.reporting.compare import Comparison, compare

GATE_ENV = Path(".ci") / "gate.env"
TOX = ["python3", "-m", "tox"]
# What makes an env's run serial: its checks in one process (tox.ini's KCTS_SHARDS, KCTS_TEST_SHARDS).
SERIAL = {"KCTS_SHARDS": "1", "KCTS_TEST_SHARDS": "1"}


@dataclass(frozen=True)
class Selection:
    envs: tuple[str, ...]
    environment: dict[str, str]  # what the envs run with, besides the run's stamp
    idle: tuple[str, ...] = ()  # the envs the gate runs in the idle scheduling class


@dataclass(frozen=True)
class EnvRun:
    env: str
    seconds: float
    exit_code: int
    log: Path


@dataclass(frozen=True)
class Schedule:
    name: str
    stamp: str
    seconds: float
    envs: tuple[EnvRun, ...]
    cpu: procfs.MachineCpu


def selection(repo: Path) -> Selection:
    """The gate's envs and environment from `.ci/gate.env` (KEY="value" lines, comments)."""
    path = repo / GATE_ENV
    try:
        text = path.read_text()
    except OSError as exc:
        raise KctsError(f"kcts bench gate runs from the kcts repository (it reads {GATE_ENV}): {exc}") from None
    values: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.fullmatch(r'([A-Z_][A-Z0-9_]*)="([^"]*)"', line.strip())
        if not m:
            raise KctsError(f"{path}:{n}: expected KEY=\"value\", got {line!r}")
        values[m[1]] = m[2]
    envs = tuple(values.pop("GATE_ENVS", "").split())
    if not envs:
        raise KctsError(f"{path} names no GATE_ENVS")
    idle = tuple(values.pop("GATE_IDLE_ENVS", "").split())
    if set(idle) - set(envs):
        raise KctsError(f"{path}: GATE_IDLE_ENVS names {' '.join(sorted(set(idle) - set(envs)))}, not in GATE_ENVS")
    return Selection(envs, values, idle)


def _child_env(sel: Selection, stamp: str, serial: bool = False) -> dict[str, str]:
    # The bench may run from a tox env's kcts: the envs it starts find their own interpreters.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("TOX_")}
    return {**env, **sel.environment, **(SERIAL if serial else {}), "KCTS_RUN_STAMP": stamp}


def _idle_class() -> None:
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _start(repo: Path, env: str, child_env: dict[str, str], stamp: str,
           idle: bool = False) -> tuple[subprocess.Popen[bytes], Path]:
    log = repo / "reports" / f"tox-{env}-{stamp}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        return subprocess.Popen([*TOX, "-e", env], cwd=repo, env=child_env, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=_idle_class if idle else None), log


def run_serial(repo: Path, sel: Selection, stamp: str) -> Schedule:
    """Each env after the other, each in one process."""
    t0, cpu0, runs = time.monotonic(), procfs.machine_cpu(), []
    for env in sel.envs:
        start = time.monotonic()
        proc, log = _start(repo, env, _child_env(sel, stamp, serial=True), stamp)
        proc.wait()
        runs.append(EnvRun(env, time.monotonic() - start, proc.returncode, log))
    return Schedule("serial", stamp, time.monotonic() - t0, tuple(runs), procfs.machine_cpu().since(cpu0))


def run_shipped(repo: Path, sel: Selection, stamp: str) -> Schedule:
    """The envs side by side, as `.ci/run` starts them."""
    t0, cpu0 = time.monotonic(), procfs.machine_cpu()
    started = [(env, *_start(repo, env, _child_env(sel, stamp), stamp, idle=env in sel.idle)) for env in sel.envs]
    ended: dict[str, float] = {}

    def wait(env: str, proc: subprocess.Popen[bytes]) -> None:
        proc.wait()
        ended[env] = time.monotonic() - t0

    # Each env's own end, whichever ends first: one waiting thread per env.
    waiters = [threading.Thread(target=wait, args=(env, proc), daemon=True) for env, proc, _ in started]
    for w in waiters:
        w.start()
    for w in waiters:
        w.join()
    runs = tuple(EnvRun(env, ended[env], proc.returncode, log) for env, proc, log in started)
    return Schedule("shipped", stamp, time.monotonic() - t0, runs, procfs.machine_cpu().since(cpu0))


def verdicts(repo: Path, sel: Selection, serial: Schedule, shipped: Schedule) -> dict[str, Comparison]:
    """Per env, the serial run's verdict per node ID against the shipped run's."""
    reports = repo / "reports"
    return {env: compare(reports / f"{env}-{serial.stamp}", reports / f"{env}-{shipped.stamp}") for env in sel.envs}


def cpu_summary(schedule: Schedule) -> dict[str, float]:
    return {"busy_core_s": round(schedule.cpu.busy, 1), "busy_share": round(schedule.cpu.busy_share, 3),
            "steal_core_s": round(schedule.cpu.steal, 1)}


def run(repo: Path | None = None) -> dict[str, object]:
    repo = repo or Path.cwd()
    sel = selection(repo)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    # The envs' installs are made before either schedule is timed, so that neither pays them.
    installed = subprocess.run([*TOX, "-e", ",".join(sel.envs), "--notest"], cwd=repo, env=_child_env(sel, stamp),
                               capture_output=True, text=True, check=False)
    if installed.returncode:
        raise KctsError(f"tox could not install the gate's envs {', '.join(sel.envs)}: {installed.stdout[-2000:]}")
    serial = run_serial(repo, sel, f"bench-serial-{stamp}")
    shipped = run_shipped(repo, sel, f"bench-shipped-{stamp}")
    compared = verdicts(repo, sel, serial, shipped)
    failed = [f"{s.name} {r.env}: exit {r.exit_code} ({r.log})" for s in (serial, shipped) for r in s.envs
              if r.exit_code != 0]
    return {
        "selection": f"{GATE_ENV}: envs {' '.join(sel.envs)}; idle class when shipped: {' '.join(sel.idle) or 'none'}; "
                     + "; ".join(f"{k}={v!r}" for k, v in sel.environment.items())
                     + f"; serially: {'; '.join(f'{k}={v!r}' for k, v in SERIAL.items())}",
        "serial_s": round(serial.seconds, 1),
        "shipped_s": round(shipped.seconds, 1),
        "shipped_over_serial": round(shipped.seconds / serial.seconds, 3),
        "per_env_s": {r.env: {"serial": round(r.seconds, 1), "shipped_ended_at": round(s.seconds, 1)}
                      for r, s in zip(serial.envs, shipped.envs, strict=True)},
        "cpu": {s.name: cpu_summary(s) for s in (serial, shipped)},
        "node_ids_compared": sum(c.common for c in compared.values()),
        "node_ids_with_another_verdict": [f"{env}: {n}: {a} serial, {b} shipped"
                                          for env, c in compared.items() for n, a, b in c.differ],
        "node_ids_in_one_run_only": sum(len(c.only_a) + len(c.only_b) for c in compared.values()),
        "envs_failed": failed,
        "ok": not failed and not any(c.differ for c in compared.values()),
        "runs": f"reports/<env>-{serial.stamp}, reports/<env>-{shipped.stamp}",
    }
