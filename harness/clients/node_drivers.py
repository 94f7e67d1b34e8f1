"""The Node.js client stacks' drivers (KafkaJS, @platformatic/kafka): a package folder under
harness/clients/ whose package-lock.json pins the client, installed into the kcts cache
(harness.process.npm_install) and run as `node MAIN MARKER ROLE ARGS` by the stack's node (the one
on PATH or $KCTS_NODE by default; harness.clients.pinned_node's for a client that needs a newer
one), which must be one the client's package.json `engines` accepts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.stacks.base import DriverRequest
from harness.errors import SetupError
from harness.kafka.dist import cache_root
from harness.process.npm_install import node_package


def locked(source: Path, package: str) -> dict[str, object]:
    """The entry of `package` in the package-lock.json of `source` (its version, engines...)."""
    lock = json.loads((source / "package-lock.json").read_text())
    return dict(lock["packages"][f"node_modules/{package}"])


def pinned_version(source: Path, package: str) -> str:
    return str(locked(source, package)["version"])


@dataclass(frozen=True)
class NodeBinary:
    path: str
    fix: str  # how to get a node the client's engines accept, said when they refuse this one


def node_binary() -> NodeBinary:
    """$KCTS_NODE, or the node on PATH."""
    node = os.environ.get("KCTS_NODE") or shutil.which("node")
    if node is None:
        raise SetupError("node not found on PATH; install Node.js (apt-get install nodejs npm), or set KCTS_NODE "
                         "to a node binary, to run the Node.js client drivers")
    return NodeBinary(node, "install a Node.js it accepts and put it on PATH or in KCTS_NODE")


@cache
def node_version(node: str) -> tuple[int, int, int]:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    major, minor, patch = (int(n) for n in re.findall(r"\d+", out)[:3])
    return major, minor, patch


def accepts(engines: str, version: tuple[int, int, int]) -> bool:
    """Whether an `engines.node` range of the forms npm packages use (">= 22.22.0 || >= 24.6.0",
    ">=14.0.0") accepts `version`; each alternative's lower bound applies within its major line
    when a later alternative starts a newer major."""
    bounds = [tuple(int(n) for n in re.findall(r"\d+", alt)[:3]) for alt in engines.split("||")]
    for i, low in enumerate(bounds):
        if version < low:
            continue
        later = [b for b in bounds[i + 1:] if b[0] > low[0]]
        if not later or version[0] < later[0][0] or version >= later[0]:
            return True
    return False


def node_driver(stack: str, source: Path, package: str, main: str, request: DriverRequest,
                node: Callable[[], NodeBinary] = node_binary) -> ClientDriver:
    """`node MAIN MARKER ROLE ARGS` in the installed copy of `source`: the marker first, as every kcts
    driver, so that the session's reaper finds it. A node older than `package`'s engines is refused
    here, with the fix, rather than met as the client's failures."""
    binary = node()
    engines = dict(locked(source, package).get("engines") or {}).get("node")  # type: ignore[call-overload]
    if engines and not accepts(str(engines), node_version(binary.path)):
        found = ".".join(map(str, node_version(binary.path)))
        raise SetupError(f"{package} {pinned_version(source, package)} needs Node.js {engines} (its package.json "
                         f"engines); {binary.path} is {found}: {binary.fix}")
    folder = node_package(source, f"the {stack} client drivers", cache_root() / f"node-{stack}")
    return ClientDriver(f"{stack} {request.role}", [binary.path, str(folder / main), session.current().marker,
                                                     request.role, *request.args], request.log)
