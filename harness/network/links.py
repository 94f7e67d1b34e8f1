"""Links between the nodes of one local cluster, cut and healed one direction at a time.

Every node (broker or controller) runs in a cgroup (v2) of its own. An nftables table of the run,
made before the first node starts, marks each new TCP connection with the pair of nodes it joins:
the cgroup of the socket that opened it, and the node whose listener port it was opened to. A
connection from anything outside the nodes' cgroups (the test process, its clients, the proxy)
carries no mark, so no link fault ever touches what clients see. A cut `frm -> to` drops every
packet `frm` sends to `to`: the original direction of connections `frm` opened to `to`, and the
reply direction of connections `to` opened to `frm`. Everything stays on loopback.

What the run made is named after its session (`kcts_<session>_...` tables, cgroups under
`kcts/<session>/`), so the reaper removes it after the runner dies however it dies (`reap`).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.errors import KctsError, SetupError

MARK_BASE = 0x4B5C0000  # the high half tells our connection marks from anyone else's
SYSFS_CGROUP = Path("/sys/fs/cgroup")  # where nft resolves `socket cgroupv2` paths


class LinkControlUnavailable(KctsError):
    """This machine cannot cut links between local nodes; the message names what is missing."""


def cgroup2_mount() -> Path | None:
    """Where the unified (v2) cgroup hierarchy is mounted, if anywhere."""
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                return Path(fields[1])
    except OSError:
        pass
    return None


def unavailable_reason() -> str | None:
    """None when link faults work here; otherwise what is missing and how to get it."""
    if os.geteuid() != 0:
        return ("link faults need root (nftables rules and cgroups); run kcts as root, or in a container "
                "with CAP_NET_ADMIN")
    if shutil.which("nft") is None:
        return "link faults need the nft command: install Debian's nftables (scripts/bootstrap does)"
    if cgroup2_mount() is None:
        return "link faults need a cgroup v2 (unified) hierarchy mounted; none is in /proc/self/mounts"
    return None


def _table_prefix(session_id: str) -> str:
    return "kcts_" + re.sub(r"\W", "_", session_id)


def session_table(session_id: str, name: str) -> str:
    """The name of a session's nftables table `name`: the reaper removes every one (reap)."""
    return re.sub(r"\W", "_", f"{_table_prefix(session_id)}_{name}")


def _nft(script: str) -> None:
    proc = subprocess.run(["nft", "-f", "-"], input=script, text=True, capture_output=True, timeout=30)
    if proc.returncode != 0:
        raise SetupError(
            f"nft refused the run's link rules: {proc.stderr.strip()[-600:]}\n--- script ---\n{script[:2000]}"
        )


@dataclass(frozen=True)
class LinkFault:
    """One directed link fault: `to` hears nothing of what `frm` sends (`loss` 100, the default), or
    loses `loss` % of it, or hears it `delay_ms` late."""

    frm: int
    to: int
    loss: int = 100
    delay_ms: int = 0

    def __str__(self) -> str:
        if self.loss == 100:
            return f"{self.frm}->{self.to}"
        what = [f"{self.loss}% loss"] * bool(self.loss) + [f"{self.delay_ms} ms late"] * bool(self.delay_ms)
        return f"{self.frm}->{self.to} ({', '.join(what)})"


class LinkControl:
    """The link faults of one cluster: `cut`, `degrade`, `heal`, and the rules' packet counts."""

    def __init__(self, session_id: str, name: str, ports: dict[int, Iterable[int]]) -> None:
        reason = unavailable_reason()
        if reason:
            raise LinkControlUnavailable(reason)
        self.session_id = session_id
        self.table = session_table(session_id, name)
        self.ports = {node: sorted(set(p)) for node, p in ports.items()}
        self.index = {node: i + 1 for i, node in enumerate(sorted(self.ports))}
        mount = cgroup2_mount()
        assert mount is not None
        self.cgroup_rel = f"kcts/{session_id}/{name}"
        self.cgroup_root = mount / self.cgroup_rel
        self.faults: dict[tuple[int, int], LinkFault] = {}
        self.delays = LoopbackDelays(session_id)
        self._made = False

    # -- set-up --------------------------------------------------------------------------------
    def cgroup(self, node: int) -> Path:
        """The cgroup a node's process joins before it execs (harness.process.spawn)."""
        return self.cgroup_root / f"node-{node}"

    def _nft_path(self, node: int) -> str:
        return f"{self.cgroup_rel}/node-{node}"

    def mark(self, frm: int, to: int) -> int:
        return MARK_BASE | self.index[frm] << 8 | self.index[to]

    def setup(self) -> LinkControl:
        """Make the nodes' cgroups and the run's table; before any node starts, so that every
        connection between nodes is marked from its first packet."""
        mount = cgroup2_mount()
        assert mount is not None
        for node in self.ports:
            self.cgroup(node).mkdir(parents=True, exist_ok=True)
        if mount != SYSFS_CGROUP:
            # nft resolves `socket cgroupv2` paths under /sys/fs/cgroup; on a hybrid layout the
            # unified tree is mounted below it, so its `kcts` folder is linked where nft looks.
            link = SYSFS_CGROUP / "kcts"
            if not link.exists():
                try:
                    link.symlink_to(mount / "kcts")
                except FileExistsError:
                    pass
        level = self.cgroup_rel.count("/") + 2
        marking = []
        for frm in self.ports:
            pairs = ", ".join(
                f"{port} : {self.mark(frm, to):#x}" for to, ports in self.ports.items() if to != frm for port in ports
            )
            marking.append(
                f'    ct state new socket cgroupv2 level {level} "{self._nft_path(frm)}" '
                f"ct mark set tcp dport map {{ {pairs} }}"
            )
        _nft(
            f"table inet {self.table} {{\n"
            "  counter off_loopback {\n  }\n"
            "  chain tag_connections {\n    type filter hook output priority -150; policy accept;\n"
            + "\n".join(marking) + "\n"
            # Evidence that nodes speak to nothing but loopback: counted, never expected.
            f'    socket cgroupv2 level {level - 1} "{self.cgroup_rel}" oifname != "lo" counter name "off_loopback"\n'
            "  }\n"
            "  chain link_faults {\n    type filter hook output priority 0; policy accept;\n  }\n"
            "}\n"
        )
        self._made = True
        return self

    # -- faults ---------------------------------------------------------------------------------
    def apply(self, faults: Iterable[LinkFault]) -> None:
        """Add link faults to those in force (a link given twice takes the later one)."""
        for f in faults:
            if f.frm == f.to or f.frm not in self.ports or f.to not in self.ports:
                raise KctsError(f"no link {f.frm}->{f.to}: the nodes are {sorted(self.ports)}")
            if not 0 <= f.loss <= 100 or f.delay_ms < 0 or not (f.loss or f.delay_ms):
                raise KctsError(f"a link fault loses 1..100 % or delays by a positive time: not {f}")
        before = dict(self.faults)
        self.faults.update({(f.frm, f.to): f for f in faults})
        try:
            self._load()
        except KctsError:
            self.faults = before
            self._load()
            raise

    def heal(self) -> None:
        """Every link back to normal."""
        self.faults.clear()
        if self._made:
            self._load()

    def _load(self) -> None:
        rules = []
        delays = {f.delay_ms for f in self.faults.values() if f.delay_ms}
        bands = self.delays.hold(delays)
        for f in self.faults.values():
            actions = []
            if f.loss:
                actions.append("drop" if f.loss == 100 else f"numgen random mod 100 < {f.loss} drop")
            if f.delay_ms:
                actions.append(f"meta mark set {delay_mark(bands[f.delay_ms]):#x}")
            chain = f"add rule inet {self.table} link_faults"
            for action in actions:
                rules.append(f"{chain} ct mark {self.mark(f.frm, f.to):#x} ct direction original {action}")
                rules.append(f"{chain} ct mark {self.mark(f.to, f.frm):#x} ct direction reply {action}")
        _nft(f"flush chain inet {self.table} link_faults\n" + "\n".join(rules) + "\n")

    def off_loopback_packets(self) -> int:
        """Packets the nodes sent anywhere but loopback since the table was made."""
        out = subprocess.run(["nft", "list", "counter", "inet", self.table, "off_loopback"],
                             capture_output=True, text=True, timeout=30).stdout
        found = re.search(r"packets (\d+)", out)
        return int(found.group(1)) if found else -1

    def describe(self) -> str:
        return ", ".join(str(f) for f in self.faults.values()) or "all links up"

    # -- tear-down ------------------------------------------------------------------------------
    def close(self) -> None:
        """Remove the table and the cgroups (also what a failed `setup` made); the nodes' processes
        must be gone."""
        if self._made:
            self._made = False
            subprocess.run(["nft", "delete", "table", "inet", self.table], capture_output=True, timeout=30)
            self.delays.hold(set())
        if self.cgroup_root.exists():
            _remove_cgroups(self.cgroup_root)
        _remove_if_empty(self.cgroup_root.parent)  # the session's folder, once its last cluster is gone


# -- delays -------------------------------------------------------------------------------------
# Delay needs a queue: netem under a prio qdisc on lo, one band per delay in force, chosen by the
# packet mark the link rules set. lo is the machine's, so the prio qdisc exists only while some run
# holds a band; each band held is a file naming its session (the reaper releases a dead session's),
# and every change is made under one lock.
ROOT_HANDLE = "4b5c"
FIRST_BAND, LAST_BAND = 4, 16  # bands 1-3 carry everything else, as pfifo_fast's priomap would
PRIOMAP = "1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1"
BAND_DIR = Path(os.environ.get("KCTS_RUN_DIR", "/run/kcts")) / "loopback-delay"


def delay_mark(band: int) -> int:
    return MARK_BASE | 0xFF00 | band


def _tc(*args: str, check: bool = True) -> str:
    proc = subprocess.run(["tc", *args], capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        if "qdisc kind is unknown" in proc.stderr:
            raise LinkControlUnavailable(
                f"link delays need the kernel's prio and netem qdiscs (sch_prio, sch_netem); tc {' '.join(args[:6])} "
                f"says: {proc.stderr.strip()}")
        raise SetupError(f"tc {' '.join(args)} failed: {proc.stderr.strip()[-400:]}")
    return proc.stdout


class LoopbackDelays:
    """The bands of lo's delay qdisc that one session holds: `hold({delay_ms, ...})` -> band per delay."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.bands: dict[int, int] = {}

    def hold(self, delays: set[int]) -> dict[int, int]:
        if not delays and not self.bands:
            return {}
        if shutil.which("tc") is None:
            raise LinkControlUnavailable("link delays need the tc command: install Debian's iproute2")
        with _band_lock():
            try:
                for ms in [d for d in self.bands if d not in delays]:
                    _release_band(self.bands.pop(ms))
                for ms in sorted(delays - set(self.bands)):
                    self.bands[ms] = _take_band(self.session_id, ms)
            finally:
                _drop_root_if_unused()
        return dict(self.bands)


@contextmanager
def _band_lock() -> Iterator[None]:
    BAND_DIR.mkdir(parents=True, exist_ok=True)
    fd = os.open(BAND_DIR / ".lock", os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _take_band(session_id: str, delay_ms: int) -> int:
    root = _tc("qdisc", "show", "dev", "lo", "root")
    if f"qdisc prio {ROOT_HANDLE}:" not in root:
        if not root.startswith("qdisc noqueue"):
            raise LinkControlUnavailable(f"link delays need lo's root qdisc, which holds another: {root.strip()}")
        _tc("qdisc", "add", "dev", "lo", "root", "handle", f"{ROOT_HANDLE}:", "prio", "bands", str(LAST_BAND),
            "priomap", *PRIOMAP.split())
    free = [b for b in range(FIRST_BAND, LAST_BAND + 1) if not (BAND_DIR / str(b)).exists()]
    if not free:
        raise KctsError(f"every loopback delay band is held ({LAST_BAND - FIRST_BAND + 1}): too many delays at once")
    band = free[0]
    (BAND_DIR / str(band)).write_text(session_id)
    try:
        _tc("qdisc", "replace", "dev", "lo", "parent", f"{ROOT_HANDLE}:{band:x}", "handle", f"{band:x}0:",
            "netem", "delay", f"{delay_ms}ms")
        _tc("filter", "replace", "dev", "lo", "parent", f"{ROOT_HANDLE}:", "protocol", "all", "prio", str(band),
            "handle", f"{delay_mark(band):#x}", "fw", "flowid", f"{ROOT_HANDLE}:{band:x}")
    except KctsError:
        _release_band(band)
        raise
    return band


def _release_band(band: int) -> None:
    _tc("filter", "del", "dev", "lo", "parent", f"{ROOT_HANDLE}:", "protocol", "all", "prio", str(band), check=False)
    _tc("qdisc", "del", "dev", "lo", "parent", f"{ROOT_HANDLE}:{band:x}", check=False)
    (BAND_DIR / str(band)).unlink(missing_ok=True)


def _drop_root_if_unused() -> None:
    if not any((BAND_DIR / str(b)).exists() for b in range(FIRST_BAND, LAST_BAND + 1)):
        if f"qdisc prio {ROOT_HANDLE}:" in _tc("qdisc", "show", "dev", "lo", "root", check=False):
            _tc("qdisc", "del", "dev", "lo", "root", check=False)


def _session_bands(session_id: str) -> list[int]:
    """The delay bands a session holds, by the files that name it."""
    held = []
    for b in range(FIRST_BAND, LAST_BAND + 1):
        try:
            if (BAND_DIR / str(b)).read_text() == session_id:
                held.append(b)
        except OSError:
            pass
    return held


def _release_session_bands(session_id: str) -> None:
    if not BAND_DIR.is_dir() or shutil.which("tc") is None:
        return
    with _band_lock():
        for b in _session_bands(session_id):
            _release_band(b)
        _drop_root_if_unused()


def _remove_cgroups(root: Path, timeout: float = 10.0) -> None:
    """rmdir a cgroup tree bottom-up; a cgroup empties a moment after its last process is reaped."""
    deadline = time.monotonic() + timeout
    for path in sorted((p for p in [root, *root.rglob("*")] if p.is_dir()), key=lambda p: -len(p.parts)):
        while True:
            try:
                path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _session_tables(session_id: str) -> list[tuple[str, str]]:
    """(family, name) of every nftables table of a session."""
    if shutil.which("nft") is None:
        return []
    prefix = _table_prefix(session_id)
    listed = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True, timeout=30).stdout
    return [(parts[1], parts[2]) for parts in map(str.split, listed.splitlines())
            if len(parts) == 3 and parts[0] == "table" and parts[2].startswith(prefix)]


def _session_cgroups(session_id: str) -> Path | None:
    mount = cgroup2_mount()
    return None if mount is None else mount / "kcts" / session_id


def reap(session_id: str) -> None:
    """Remove every table, delay band and cgroup of a session: the reaper's part, after its processes
    are killed."""
    _release_session_bands(session_id)
    for family, name in _session_tables(session_id):
        subprocess.run(["nft", "delete", "table", family, name], capture_output=True, timeout=30)
    folder = _session_cgroups(session_id)
    if folder is not None and folder.is_dir():
        _remove_cgroups(folder)


def leftovers(session_id: str) -> list[str]:
    """What of a session is still on this machine: tables and cgroups (for tests and the reaper)."""
    found = [f"nft table {family} {name}" for family, name in _session_tables(session_id)]
    folder = _session_cgroups(session_id)
    if folder is not None and folder.exists():
        found.append(f"cgroup {folder}")
    return found + [f"loopback delay band {b}" for b in _session_bands(session_id)]
