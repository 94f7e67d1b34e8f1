"""One harness session per process: its id, its scratch root, and the reaper that outlives it.

Everything the harness starts is tagged with the session id: JVMs carry `-Dkcts.session=<id>` on
their command line, containers a `kcts.session` label, scratch files live under the session root.
A reaper process, started once, waits on a pipe that only this process holds. When this process
ends, however it ends (return, Ctrl-C, SIGKILL), the pipe closes and the reaper kills whatever
still carries the tag and deletes the scratch root. Processes also get PR_SET_PDEATHSIG (see
harness.process.spawn), so JVMs die with their parent even before the reaper looks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

_lock = threading.Lock()
_session: Session | None = None
# The write end of each reaper's pipe: kept open, never written. Its closing at our exit is the
# reaper's signal; O_CLOEXEC (Python's default) keeps it out of every child, so only we hold it.
_reaper_pipes: list[int] = []


class Session:
    def __init__(self) -> None:
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        base = Path(os.environ.get("KCTS_TMP", tempfile.gettempdir()))
        self.root = base / f"kcts-{self.id}"
        self.root.mkdir(parents=True)
        self._reaper = _start_reaper(self.id, self.root)

    @property
    def marker(self) -> str:
        """A command-line argument that identifies this session's processes."""
        return f"-Dkcts.session={self.id}"

    def scratch(self, prefix: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=self.root))


def current() -> Session:
    global _session
    with _lock:
        if _session is None:
            _session = Session()
        return _session


def _start_reaper(session_id: str, root: Path) -> subprocess.Popen[bytes]:
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.reaper", session_id, str(root), str(read_fd)],
        pass_fds=(read_fd,),
        start_new_session=True,  # Ctrl-C on the terminal must not kill it before it cleans up
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=str(Path(__file__).resolve().parent.parent),
    )
    os.close(read_fd)
    _reaper_pipes.append(write_fd)
    return proc


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
