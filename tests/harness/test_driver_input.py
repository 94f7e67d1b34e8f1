"""A client driver's input ends once the driver says it has exited (harness.clients.driver): a JVM waits
at exit for a thread still blocked reading its input, as the Java drivers' stdin readers are. The child
here is a stand-in that, like such a JVM, does not exit before its input ends."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness.clients.driver import ClientDriver, stop_driver

CHILD = """
import sys
print('{"event": "ready"}', flush=True)
for line in sys.stdin:
    if line.strip() == "exit":
        print('{"event": "exited"}', flush=True)
        break
sys.stdin.read()  # as a JVM's exit waits for its reader blocked in read(): until end of input
"""


def test_a_driver_that_said_exited_gets_the_end_of_its_input_and_goes(tmp_path: Path) -> None:
    driver = ClientDriver("stand-in", [sys.executable, "-c", CHILD], tmp_path / "driver.log").start()
    try:
        driver.wait_for(lambda e: e.get("event") == "ready", 10, "ready")
        began = time.monotonic()
        stop_driver(driver)
        assert driver.proc is not None and driver.proc.returncode == 0, driver.describe()
        assert time.monotonic() - began < 5, "the driver waited for its input to end past its exit"
        assert driver.events[-1] == {"event": "exited"}
    finally:
        driver.stop()
