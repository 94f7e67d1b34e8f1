"""KIP-320 consumers after two unclean elections in a row, for every client stack judged; "not supported by this
target" where the last leader advertises no OffsetForLeaderEpoch version the client validates with
(harness.checks.truncation.require_truncation_detectable)."""

from __future__ import annotations

import pytest

from harness.checks.truncation import assert_resumed_at_next_epoch_start, require_truncation_detectable
from harness.histories import store
from harness.scenarios.repeated_unclean import RepeatedUnclean
from harness.scenarios.truncation import STACKS

pytestmark = [pytest.mark.kip320, pytest.mark.needs_fault_control, pytest.mark.client_axis]


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.repeated-unclean-next-epoch")
def test_consumer_after_two_unclean_elections_resumes_where_the_next_known_epoch_starts(
    repeated: RepeatedUnclean, client: str, reset: str
) -> None:
    """KIP-320 "Consumer Handling": "In some pathological cases (e.g. multiple consecutive unclean
    leader elections), we may not be able to find the exact offset, but we should be able to get
    close by finding the starting offset of the next largest epoch that the leader is aware of." A
    consumer that read epoch e1 of an unclean leader, which the next unclean leader never saw, resumes
    at the start of that leader's next epoch e2, with auto.offset.reset earliest or latest alike."""
    consumer = repeated.consumer(f"{client}/{reset}")
    store.save(f"kip320-repeated-unclean-{client}-{reset}", consumer)
    require_truncation_detectable(client, repeated.leader_offers)
    try:
        assert_resumed_at_next_epoch_start(client, consumer)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {repeated.evidence()}") from None
