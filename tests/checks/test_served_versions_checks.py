"""ApiVersions' promise judged on recorded answers: a closed connection on an advertised version fails."""

from __future__ import annotations

import pytest

from harness.checks.served_versions import assert_every_advertised_version_is_served
from harness.errors import SceneUnmet
from harness.histories.served_versions import VersionServed

ANSWERED = [VersionServed("127.0.0.1:9092", "Metadata", v, (0, 13)) for v in range(13)]


def test_every_version_answered_passes() -> None:
    assert_every_advertised_version_is_served(ANSWERED)


def test_one_version_hung_up_on_fails_naming_it() -> None:
    closed = VersionServed("127.0.0.1:9092", "Metadata", 0, (0, 13), "broker closed the connection while answering")
    with pytest.raises(AssertionError, match=r"(?s)1 of 14 .*Metadata v0 \(advertised v0-13\): broker closed"):
        assert_every_advertised_version_is_served([closed, *ANSWERED[1:], VersionServed("b", "Fetch", 4, (4, 17))])


def test_no_request_sent_is_the_harness_s_error() -> None:
    with pytest.raises(SceneUnmet):
        assert_every_advertised_version_is_served([])
