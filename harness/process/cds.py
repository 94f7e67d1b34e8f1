"""Where a classpath's class-data-sharing archive lives.

One archive per classpath, shared by every JVM that runs it (brokers and Java clients): mapped at
start, it saves each JVM most of its class loading. It is dumped once, by a combined Kafka node at
its exit (harness.cluster.combined.ensure_cds_archive), because that JVM loads both the
controller's and the broker's classes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path


def cds_archive_path(cache: Path, version: str, jars: Sequence[Path]) -> Path:
    """The archive of the classpath `jars` (of Kafka `version`) under the cache root `cache`.

    The JVM refuses an archive whose jars changed since it was dumped, so their sizes and times
    are part of the key: a re-resolved classpath gets a new archive instead of a silent slow start.
    """
    h = hashlib.sha256(os.pathsep.join(str(j) for j in jars).encode())
    for jar in jars:
        st = jar.stat()
        h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    digest = h.hexdigest()[:12]
    path = cache / "cds" / f"{version}-{digest}.jsa"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
