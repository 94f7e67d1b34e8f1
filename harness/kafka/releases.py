"""What the local backend does differently by Apache Kafka release (3.3 to 4.4), in one place.

Every release from 3.3 runs the same way here: a static quorum (`controller.quorum.voters`, which
every KRaft release reads; 4.x's dynamic quorum is not needed), a controller formatted once per
release and feature set, brokers given a `meta.properties` of their own. What differs is below, each
with the release that brought it.
"""

from __future__ import annotations

# SCRAM credentials in KRaft (KIP-900, Apache Kafka 3.5): before it, AlterUserScramCredentials on a
# KRaft cluster is refused, so a SASL cluster of 3.3 or 3.4 offers PLAIN alone.
SCRAM_IN_KRAFT = (3, 5)


def line(version: str) -> tuple[int, int]:
    """(major, minor) of a release, `3.9.2` -> (3, 9)."""
    major, minor, *_ = version.split(".")
    return int(major), int(minor)


def sasl_mechanisms(version: str) -> tuple[str, ...]:
    """The SASL mechanisms a local cluster of `version` enables on its client listener."""
    if line(version) < SCRAM_IN_KRAFT:
        return ("PLAIN",)
    return ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
