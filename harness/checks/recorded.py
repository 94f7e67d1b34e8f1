"""What a check saw, saved as JSON during a live run: moved to harness.histories.

The file I/O is harness.histories.store (checks do none), the JSON form harness.histories.codec.
This name stays for the suites and check tests whose histories are not typed yet (KIP-320, KIP-359,
KIP-1094, partitions): they save and load through it unchanged. A typed history is saved and loaded
with harness.histories.store directly.
"""

from __future__ import annotations

from harness.histories.store import RECORD_ENV, save
from harness.histories.store import load_untyped as load

__all__ = ["RECORD_ENV", "load", "save"]
