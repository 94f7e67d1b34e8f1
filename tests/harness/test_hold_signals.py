"""`kcts cluster up` stops on the first Ctrl-C and survives every later one: a burst of SIGINT and
SIGTERM (a user pressing Ctrl-C twice, `timeout` forwarding a signal it also got) ends the hold once
and lets the clean-up run to its end, with no hang."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from harness.waiting import wait_until
from tests.harness.holder import interruptible

REPO = Path(__file__).resolve().parents[2]

# The holder's shape (harness.hold.up): interrupt_once installed inside the try, parked until a
# signal, then a clean-up that takes long enough for the rest of the burst to land inside it.
CHILD = textwrap.dedent("""
    import signal, sys, time
    from harness.hold import STOP_SIGNALS, interrupt_once
    try:
        for s in STOP_SIGNALS:
            signal.signal(s, interrupt_once)
        print("ready", flush=True)
        while True:
            signal.pause()
    except KeyboardInterrupt:
        pass
    for _ in range(200000):
        time.monotonic()
    print("cleaned up", flush=True)
""")


def test_a_burst_of_stop_signals_ends_the_hold_once_and_lets_the_clean_up_finish() -> None:
    proc = subprocess.Popen([sys.executable, "-c", CHILD], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        for i in range(40):
            proc.send_signal(signal.SIGINT if i % 2 else signal.SIGTERM)
        wait_until(lambda: proc.poll() is not None, 15,
                   lambda: "the holder did not exit 15 s after a burst of 40 stop signals (a handler deadlock)")
        out = proc.stdout.read()
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, out.strip()) == (0, "cleaned up"), f"exit {proc.returncode}, output {out!r}"
