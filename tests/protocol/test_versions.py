"""Specs of other Kafka versions: each is read from its own jars, and the codec handles all of them.

Only versions already in the local cache are used (no Maven run from a unit test).
"""

from __future__ import annotations

import pytest

from harness.kafka.dist import cache_root
from harness.protocol.codec import decode, encode
from harness.protocol.spec import load_specs

CACHED = [v for v in ("3.9.2", "4.0.2", "4.3.1") if (cache_root() / "kafka" / v / "dist.json").exists()]
TXN_OFFSET_COMMIT_MAX = {"3.9.2": 4, "4.0.2": 5, "4.3.1": 5, "4.4.0": 6}


@pytest.mark.parametrize("version", [*CACHED, "4.4.0"])
def test_every_message_of_the_version_encodes_and_decodes_its_defaults(version: str) -> None:
    specs = load_specs(version)
    assert specs.api("TxnOffsetCommit").valid_versions.high == TXN_OFFSET_COMMIT_MAX[version]
    for spec in specs.messages.values():
        for v in spec.valid_versions:
            raw = encode(spec, v, {}, check_version=False)
            assert encode(spec, v, decode(spec, v, raw, check_version=False), check_version=False) == raw
