"""What a check saw, saved as JSON during a live run: moved to harness.histories.

The file I/O is harness.histories.store (checks do none), the JSON form harness.histories.codec.
This name stays for the suites that save through it and the check tests that load a recording as
JSON, alter it, then read it into its history type (tests/checks/alterations.py `typed`); the JSON
is the codec's either way. A typed history may be saved and loaded with harness.histories.store directly.
"""

from __future__ import annotations

from harness.histories.store import RECORD_ENV, save
from harness.histories.store import load_untyped as load

__all__ = ["RECORD_ENV", "load", "save"]
