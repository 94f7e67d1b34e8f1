"""ApiVersions' promise on the APIs KIP-320 judges: each version the leader advertises is served."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.served_versions import assert_every_advertised_version_is_served
from harness.histories import store
from harness.scenarios.served_versions import served_versions

pytestmark = pytest.mark.kip320


@pytest.mark.promise("protocol.api-versions.advertised-served")
def test_every_advertised_version_of_the_epoch_apis_is_served(cluster: Cluster, topic: str) -> None:
    """KIP-35, "Proposed Changes": the versions a broker advertises in ApiVersions are the versions it
    serves. Metadata, ListOffsets, OffsetForLeaderEpoch and Fetch (the APIs of KIP-320) at every
    advertised version our codec speaks, each one answered, none hung up on."""
    asked = served_versions(cluster, topic)
    store.save("protocol-served-versions", asked)
    assert_every_advertised_version_is_served(asked)
