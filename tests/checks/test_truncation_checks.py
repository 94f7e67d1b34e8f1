"""The KIP-320 consumer truncation checks reject clients that miss the divergence (recorded 4.4.0 runs, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import DATA, Recording

from harness.checks.truncation import (
    ReadOnAfterSurfacing,
    TruncationNotSurfaced,
    assert_resumed_at_divergence,
    assert_resumed_at_next_epoch_start,
    assert_truncation_surfaced,
    informational,
)
from harness.histories import json_codec, store
from harness.histories.truncation import ConsumerError, RepeatedUncleanConsumer, TruncatedConsumer

RESUMED = [f"kip320-truncation-{c}-{r}" for c in ("librdkafka", "java") for r in ("earliest", "latest")]
SURFACED = ["kip320-truncation-librdkafka-error", "kip320-truncation-java-none", "kip320-truncation-java-group-restart",
            "kip320-truncation-librdkafka-seek", "kip320-truncation-java-seek"]


def _client(name: str) -> str:
    return "java" if "-java-" in name else "librdkafka"


def _resumed(r: dict[str, Any], client: str) -> None:
    c = typed(TruncatedConsumer, r)
    assert_resumed_at_divergence(client, c.reads, c.errors, c.divergence, c.position_before, c.new_leader_writes)


def _surfaced(r: dict[str, Any], client: str) -> None:
    c = typed(TruncatedConsumer, r)
    assert_truncation_surfaced(client, c.reads, c.errors, c.divergence)


@pytest.mark.parametrize("kind, names", [
    (TruncatedConsumer, sorted(p.stem for p in DATA.glob("kip320-truncation-*.json"))),
    (RepeatedUncleanConsumer, sorted(p.stem for p in DATA.glob("kip320-repeated-unclean-*.json"))),
])
def test_recordings_read_into_their_types_and_write_back_the_same_json(kind: type, names: list[str]) -> None:
    """The driver's events keep their shape through the types: nothing lost, and nothing added but the
    fields the suite has saved since these were recorded (the client's name, the refused commands)."""
    assert names
    for name in names:
        data = store.load_json(DATA / f"{name}.json")
        written = json_codec.encode(json_codec.decode(kind, data))
        assert isinstance(written, dict) and isinstance(data, dict)
        assert {k: v for k, v in written.items() if k in data} == data, name
        assert set(written) - set(data) <= {"client", "refused"}, name


@pytest.mark.parametrize("name", RESUMED)
def test_recorded_resets_pass(recording: Recording, name: str) -> None:
    _resumed(recording(name), _client(name))


@pytest.mark.parametrize("name", RESUMED)
def test_resuming_at_the_old_position_fails(recording: Recording, name: str) -> None:
    """KIP-320's motivation: a consumer whose offset became valid again silently skips 20..49."""
    r = recording(name)
    r["reads"] = [x for x in r["reads"] if x["offset"] >= r["position_before"]]
    with pytest.raises(AssertionError, match=rf"resumed at offset {r['position_before']}"):
        _resumed(r, _client(name))


def test_resetting_to_the_log_start_fails(recording: Recording) -> None:
    r = recording("kip320-truncation-librdkafka-earliest")
    replicated = [{"offset": i, "epoch": 0, "value": f"replicated-{i}"} for i in range(r["divergence"])]
    r["reads"] = replicated + r["reads"]
    with pytest.raises(AssertionError, match=r"resumed at offset 0"):
        _resumed(r, "librdkafka")


def test_resetting_to_the_log_end_fails(recording: Recording) -> None:
    r = recording("kip320-truncation-java-latest")
    r["reads"] = []
    with pytest.raises(AssertionError, match=r"resumed at nothing"):
        _resumed(r, "java")


@pytest.mark.parametrize("name", SURFACED)
def test_recorded_truncation_errors_pass(recording: Recording, name: str) -> None:
    _surfaced(recording(name), _client(name))


def test_the_librdkafka_group_restart_recorded_on_4_4_0_fails(recording: Recording) -> None:
    """The known gap (librdkafka #5158) as recorded: the restarted member read on from 50."""
    r = recording("kip320-truncation-librdkafka-group-restart")
    with pytest.raises(AssertionError, match=r"did not surface the truncation at 20.*first 50@"):
        _surfaced(r, "librdkafka")


def test_a_reset_error_that_does_not_name_truncation_fails(recording: Recording) -> None:
    r = recording("kip320-truncation-librdkafka-error")
    r["errors"][0]["message"] = "Broker: Offset out of range"
    with pytest.raises(AssertionError, match=r"expected _AUTO_OFFSET_RESET naming the truncation"):
        _surfaced(r, "librdkafka")


def test_a_log_truncation_exception_with_the_wrong_offset_fails(recording: Recording) -> None:
    r = recording("kip320-truncation-java-none")
    r["errors"][0]["divergent"][0]["offset"] = r["position_before"]
    with pytest.raises(AssertionError, match=r"LogTruncationException with divergent offset 20"):
        _surfaced(r, "java")


def test_reading_on_after_surfacing_fails(recording: Recording) -> None:
    r = recording("kip320-truncation-java-group-restart")
    r["reads"] = [{"offset": 50, "epoch": 2, "value": "new-leader-30"}]
    with pytest.raises(ReadOnAfterSurfacing, match=r"surfaced the truncation at 20 but, with no reset policy, "
                                                   r"also read on: 1 records"):
        _surfaced(r, "java")


GO_LOSS_EVENT = {"code": "ErrDataLoss", "message": "topic t partition 0 lost records", "divergent": [
    {"partition": 0, "offset": 20, "epoch": 2, "consumed_to": 50, "consumed_to_epoch": 0}]}
GO_LOSS = typed(ConsumerError, GO_LOSS_EVENT)


def test_franz_go_surfaces_the_truncation_with_an_err_data_loss_resetting_to_the_divergence() -> None:
    assert_truncation_surfaced("franz-go", [], [GO_LOSS], 20)
    moved = typed(ConsumerError, {**GO_LOSS_EVENT, "divergent": [{**GO_LOSS_EVENT["divergent"][0], "offset": 0}]})
    with pytest.raises(TruncationNotSurfaced, match=r"expected ErrDataLoss resetting to 20"):
        assert_truncation_surfaced("franz-go", [], [moved], 20)
    with pytest.raises(TruncationNotSurfaced):
        assert_truncation_surfaced("franz-go", [], [ConsumerError(code="ErrDataLoss", message="no offsets")], 20)


def test_only_franz_gos_notice_of_the_reset_it_made_is_not_a_failure() -> None:
    other = ConsumerError(code="*kerr.Error", message="NOT_LEADER_OR_FOLLOWER")
    assert informational("franz-go", [GO_LOSS, other], 20) == [other]
    assert informational("franz-go", [GO_LOSS], 30) == [GO_LOSS]
    assert informational("java", [GO_LOSS], 20) == [GO_LOSS]


@pytest.mark.parametrize("client", ["librdkafka", "java"])
def test_a_sought_position_read_on_without_validation_fails(recording: Recording, client: str) -> None:
    """A seek whose epoch is ignored: the consumer reads the new leader's records from the sought offset."""
    r = recording(f"kip320-truncation-{client}-seek")
    writes = [w for w in r["new_leader_writes"] if w["offset"] >= r["position_before"]]
    r["errors"] = []
    r["reads"] = [{"offset": w["offset"], "epoch": 2, "value": w["value"]} for w in writes]
    with pytest.raises(AssertionError, match=rf"did not surface the truncation at {r['divergence']}"):
        _surfaced(r, client)


REPEATED = [f"kip320-repeated-unclean-{c}-{r}" for c in ("librdkafka", "java") for r in ("earliest", "latest")]


def _next_epoch(r: dict[str, Any], client: str) -> None:
    assert_resumed_at_next_epoch_start(client, typed(RepeatedUncleanConsumer, r))


@pytest.mark.parametrize("name", REPEATED)
def test_recorded_resumes_after_two_unclean_elections_pass(recording: Recording, name: str) -> None:
    r = recording(name)
    assert r["e1_start"] < r["e2_start"] < r["position_before"]
    _next_epoch(r, _client(name))


@pytest.mark.parametrize("name", REPEATED)
def test_resuming_at_the_old_position_after_two_elections_fails(recording: Recording, name: str) -> None:
    """The consumer's position is still inside the second unclean leader's log: reading on from it
    skips that leader's records up to it unseen."""
    r = recording(name)
    r["reads"] = [x for x in r["reads"] if x["offset"] >= r["position_before"]]
    with pytest.raises(AssertionError, match=rf"resumed at offset {r['position_before']}"):
        _next_epoch(r, _client(name))


def test_falling_back_to_the_log_start_after_two_elections_fails(recording: Recording) -> None:
    """The reset policy instead of the epoch lookup: the records before the next epoch come again."""
    r = recording("kip320-repeated-unclean-java-earliest")
    r["reads"] = [{"offset": i, "epoch": 0, "value": f"both-{i}"} for i in range(r["e2_start"])] + r["reads"]
    with pytest.raises(AssertionError, match=r"resumed at offset 0"):
        _next_epoch(r, "java")


def test_falling_back_to_the_log_end_after_two_elections_fails(recording: Recording) -> None:
    r = recording("kip320-repeated-unclean-librdkafka-latest")
    r["reads"] = []
    with pytest.raises(AssertionError, match=r"resumed at nothing"):
        _next_epoch(r, "librdkafka")


def test_reporting_an_error_after_two_elections_fails(recording: Recording) -> None:
    """With a reset policy the consumer resets on its own; raising to the application is not it."""
    r = recording("kip320-repeated-unclean-librdkafka-earliest")
    r["errors"] = [{"code": "_AUTO_OFFSET_RESET", "message": "offset reset failed"}]
    with pytest.raises(AssertionError, match=r"errors \[\{'code': '_AUTO_OFFSET_RESET'"):
        _next_epoch(r, "librdkafka")


def test_a_record_is_judged_against_the_epoch_of_its_batch_not_the_elections() -> None:
    """A controller may move the lead again after the unclean election, before the new-leader writes
    (4.4.0 once, at 7bef628: the election's epoch 2, every batch at 4, and a false FAIL of
    `test_consumed_records_expose_the_leader_epoch_they_were_written_in`). Each record's exposed epoch is
    judged against its batch's epoch as the leader serves it (epoch 0 included); an offset no batch
    answered for falls back to the election's epoch. A batch stamped older than the election still
    fails, as it did when every record was held to the election's epoch."""
    from types import SimpleNamespace

    from harness.scenarios.truncation import TruncationHistory

    election: Any = SimpleNamespace(epoch_after=2)
    h = TruncationHistory("t", election, 50, (), {}, {}, new_leader_epochs=((20, 4), (21, 0), (22, None)))
    assert [h.written_epoch(o) for o in (20, 21, 22, 23)] == [4, 0, 2, 2]
    assert h.batch_epochs() == [None, 0, 4]
    # A batch of a write made after the election, stamped before it, is the leader's fault, not the
    # client's: the check fails on it before it compares the clients' records.
    assert h.stamped_before_the_election() == [(21, 0)]
    later = TruncationHistory("t", election, 50, (), {}, {}, new_leader_epochs=((20, 2), (21, 4)))
    assert later.stamped_before_the_election() == []
