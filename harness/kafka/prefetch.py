"""Fill kcts's cache with the Kafka jars a first run needs, before kcts itself is installed.

`scripts/bootstrap` starts this in the background with the machine's own python3, so that Maven's
downloads overlap tox's installs of the Python packages (on a fresh machine each takes about a
minute). It imports the standard library only, as dist.py and maven.py do. `kcts run` then finds
the jars in the cache, or waits on the cache's lock until this is done with them; if this failed,
kcts fetches them itself and says why when it cannot.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from harness.errors import SetupError
from harness.kafka.dist import DEFAULT_VERSION, PRE_KIP1319_RELEASE, resolve

# The conformance suites run the default release and, for KIP-1319's version negotiation, the last
# release before it.
FIRST_RUN_VERSIONS = (DEFAULT_VERSION, PRE_KIP1319_RELEASE)


def main(versions: Sequence[str] = ()) -> int:
    status = 0
    for version in versions or FIRST_RUN_VERSIONS:
        try:
            dist = resolve(version)
        except SetupError as exc:
            print(f"kcts prefetch: {exc}", file=sys.stderr)
            status = 1
            continue
        print(f"kcts prefetch: Apache Kafka {dist.version} ({len(dist.jars)} jars) in {dist.home}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
