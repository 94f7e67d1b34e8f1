"""ApiVersions' promise: every version a broker advertises of an API is served.

KIP-35, "Proposed Changes": a broker answers ApiVersions with the range of versions it supports for
each API, and a client picks a version in that range. A broker that closes the connection on a
version it advertised breaks that promise (a client that chose it by the rules can never be
answered); it is judged here once, where other checks that needed such a version end as the
target's refusal of their premise (harness.plugin.verdict_boundary).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import require_scene
from harness.histories.served_versions import VersionServed


def assert_every_advertised_version_is_served(asked: Sequence[VersionServed]) -> None:
    require_scene(asked, "no request was sent at any advertised version")
    closed = [a for a in asked if a.closed is not None]
    assert not closed, (
        f"{len(closed)} of {len(asked)} advertised versions were not served (ApiVersions promises each one is):\n  "
        + "\n  ".join(f"{a.broker} {a.api} v{a.version} (advertised v{a.advertised[0]}-{a.advertised[1]}): {a.closed}"
                      for a in closed))
