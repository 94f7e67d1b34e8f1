"""The one table of the first client releases that fence Fetch with the leader epoch (KIP-320), and the
verdict it gives a consumer whose Fetches all carried -1: FAIL from that release on, "not supported by
this client" before it, an ERROR when the release is unknown."""

from __future__ import annotations

import pytest

from harness.checks.client_reactions import require_fetch_fencing
from harness.clients.kip320_releases import FETCH_EPOCH_SINCE, client_release, fetch_epoch_since
from harness.clients.stacks import GO, JAVA, LIBRDKAFKA, STACKS
from harness.errors import ClientLacks, SceneUnmet
from harness.histories.client_reactions import ClientRelease, EpochErrorRun


def test_every_stack_has_a_first_release_with_evidence() -> None:
    assert set(FETCH_EPOCH_SINCE) == set(STACKS)
    for stack in STACKS:
        since = fetch_epoch_since(stack)
        assert since.release and since.product and len(since.evidence) > 40, since
    with pytest.raises(KeyError, match="no KIP-320 Fetch fencing release known for client stack 'no-such-client'"):
        fetch_epoch_since("no-such-client")


@pytest.mark.parametrize(("stack", "older", "first", "newer"), [
    (LIBRDKAFKA, "2.0.2", "2.1.0", "2.16.1"),
    (JAVA, "2.2.2", "2.3.0", "4.4.0"),
    (GO, "0.5.0", "0.6.0", "1.22.2"),
])
def test_the_first_release_is_the_boundary(stack: str, older: str, first: str, newer: str) -> None:
    since = fetch_epoch_since(stack)
    assert not since.includes(older)
    assert since.includes(first) and since.includes(newer)


@pytest.mark.parametrize(("stack", "named", "release"), [
    (LIBRDKAFKA, "confluent-kafka 2.0.2 (librdkafka 2.0.2)", "2.0.2"),
    (GO, "franz-go v1.22.2", "1.22.2"),
    (JAVA, None, "4.4.0"),  # the Java driver names nothing: the run's kafka-clients
])
def test_a_client_release_is_read_from_what_its_driver_named(stack: str, named: str | None, release: str) -> None:
    got = client_release(stack, named, "4.4.0")
    assert got.release == release and got.fences_fetch == fetch_epoch_since(stack)


def _unfenced(release: ClientRelease | None) -> EpochErrorRun:
    return EpochErrorRun("librdkafka", "FENCED_LEADER_EPOCH", (), (), (), 3, (), sent_epochs=(-1, -1, -1),
                         release=release)


def test_a_release_that_fences_fetch_but_sent_minus_one_fails() -> None:
    run = _unfenced(client_release(LIBRDKAFKA, "confluent-kafka 2.6.1 (librdkafka 2.6.1)", "4.4.0"))
    with pytest.raises(AssertionError, match=r"librdkafka 2\.6\.1\) fenced none of its Fetches: its 3 refused Fetch "
                                             r"partition entries carried \[-1\].*since 2\.1\.0 \(confluentinc"):
        require_fetch_fencing(run, run.sent_epochs, "refused Fetch partition entries")


def test_an_older_release_that_sent_minus_one_does_not_support_it() -> None:
    run = _unfenced(client_release(LIBRDKAFKA, "confluent-kafka 2.0.2 (librdkafka 2.0.2)", "4.4.0"))
    with pytest.raises(ClientLacks, match=r"librdkafka 2\.0\.2 predates 2\.1\.0, the first release that sends it"):
        require_fetch_fencing(run, run.sent_epochs, "refused Fetch partition entries")


def test_an_unknown_release_is_not_judged() -> None:
    run = _unfenced(None)
    with pytest.raises(SceneUnmet, match="release is unknown"):
        require_fetch_fencing(run, run.sent_epochs, "refused Fetch partition entries")


def test_a_client_that_fenced_any_fetch_passes_the_premise() -> None:
    run = _unfenced(client_release(JAVA, None, "2.2.0"))
    require_fetch_fencing(run, (-1, 3), "Fetch partition entries")
    require_fetch_fencing(run, (), "Fetch partition entries")
