"""The Java client's preflight (harness.clients.jvm.java_reaches) on recorded answers of a fake broker:
librdkafka's mock cluster answers the Java client's first ApiVersions (v5) with bytes that, read at v5,
carry a ThrottleTimeMs of 1,179,648 ms, and advertises ApiVersions v0-2 when asked again: the Java
client is "not supported" by that target, decided from ApiVersions alone, with both as the evidence.
A broker that answers in KIP-511's layout lets the client through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.clients import jvm
from harness.errors import NotSupported
from tests.protocol.test_client import FakeBroker, default_handler, mock_cluster


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBroker]:
    monkeypatch.setattr(jvm, "_reaches", {})  # each test asks afresh
    b = FakeBroker(default_handler)
    yield b
    b.close()


def test_the_java_client_is_not_supported_by_a_target_whose_api_versions_it_reads_as_a_long_throttle(
    broker: FakeBroker,
) -> None:
    broker.handler = mock_cluster
    bootstrap = f"127.0.0.1:{broker.port}"

    with pytest.raises(NotSupported) as ended:
        jvm.java_reaches(bootstrap, "4.4.0")

    assert ended.value.what == "Java kafka-clients 4.4.0"
    assert f"{bootstrap} advertises ApiVersions v0-2" in ended.value.evidence
    assert "ThrottleTimeMs 1179648 (19.7 min)" in ended.value.evidence
    asked = len(broker.requests)
    with pytest.raises(NotSupported):  # decided once per bootstrap
        jvm.java_reaches(bootstrap, "3.9.2")
    assert len(broker.requests) == asked


def test_a_target_answering_in_kip_511s_layout_lets_the_java_client_through(broker: FakeBroker) -> None:
    jvm.java_reaches(f"127.0.0.1:{broker.port}", "4.4.0")  # the fake's default: UNSUPPORTED_VERSION written as v0
