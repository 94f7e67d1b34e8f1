"""The KIP-359 failover scene judges each stack's producer on its own: a stack whose client the target
does not support (Java kafka-clients on librdkafka's mock) ends "not supported" with the preflight's
evidence, one whose client the target refused ends "target refused", and the others are judged."""

from __future__ import annotations

import pytest

from harness.errors import NotSupported, TargetRefused
from harness.scenarios.kip359 import FailoverWrites, Writes

JAVA = ("Java kafka-clients 4.4.0",
        "127.0.0.1:39735 advertises ApiVersions v0-2; its answer to ApiVersions v5 ... ThrottleTimeMs 1179648")
WRITES = FailoverWrites("t", [], {"librdkafka": Writes(sent=["8.0"])}, [], refused={"go": "kfake refused it"},
                        unsupported={"java": JAVA})


def test_a_stack_the_target_does_not_support_is_not_supported_with_the_evidence() -> None:
    with pytest.raises(NotSupported) as ended:
        WRITES.writes_of("java")
    assert (ended.value.what, ended.value.evidence) == JAVA


def test_a_refused_stack_is_refused_and_the_others_are_judged() -> None:
    with pytest.raises(TargetRefused, match="kfake refused it"):
        WRITES.writes_of("go")
    assert WRITES.writes_of("librdkafka").sent == ["8.0"]
