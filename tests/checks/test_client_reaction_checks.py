"""The client epoch-error checks reject a client that resets, fails or does not refresh (recorded, altered)."""

from __future__ import annotations

import pytest
from alterations import typed
from recordings import Recording

from harness.checks.client_reactions import (
    assert_first_fetch_uses_the_reset_epoch,
    assert_read_on_through_epoch_errors,
    assert_validated_only_once_metadata_caught_up,
    assert_written_once_through_epoch_errors,
    require_epoch_told,
    require_fetch_fencing,
)
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.client_reactions import CommittedAhead, EpochErrorRun, ResetFetch

RUNS = [f"kip320-client-{e}-{c}" for e in ("fenced", "unknown") for c in ("librdkafka", "java")]


@pytest.mark.parametrize("name", RUNS)
def test_recorded_runs_pass(recording: Recording, name: str) -> None:
    run = typed(EpochErrorRun, recording(name))
    assert run.refused >= 1
    assert_read_on_through_epoch_errors(run)


@pytest.mark.parametrize("name", RUNS)
def test_the_recorded_clients_fenced_their_fetches(recording: Recording, name: str) -> None:
    run = typed(EpochErrorRun, recording(name))
    assert run.sent_epochs and run.release is not None and run.release.fences()
    require_fetch_fencing(run, run.sent_epochs, "refused Fetch partition entries")


@pytest.mark.parametrize("name", RUNS)
def test_a_release_that_fences_fetch_sending_minus_one_fails(recording: Recording, name: str) -> None:
    """Every refused Fetch entry at CurrentLeaderEpoch -1 from the recorded release (librdkafka 2.16.0,
    kafka-clients 4.4.0): a FAIL of the promise, no longer "not supported by this client"."""
    run = recording(name)
    run["sent_epochs"] = [-1] * len(run["sent_epochs"])
    with pytest.raises(AssertionError, match=r"fenced none of its Fetches: its \d+ refused Fetch partition entries "
                                             r"carried \[-1\], though .* since (2\.1\.0|2\.3\.0)"):
        require_fetch_fencing(typed(EpochErrorRun, run), run["sent_epochs"], "refused Fetch partition entries")


@pytest.mark.parametrize("name", RUNS)
def test_an_older_release_sending_minus_one_does_not_support_fencing(recording: Recording, name: str) -> None:
    """The same from a release before the first that fences Fetch (librdkafka 2.0.2, kafka-clients 2.2.0)."""
    run = recording(name)
    run["sent_epochs"] = [-1] * len(run["sent_epochs"])
    run["release"]["release"] = "2.0.2" if name.endswith("librdkafka") else "2.2.0"
    older = r"(librdkafka 2\.0\.2 predates 2\.1\.0|kafka-clients 2\.2\.0 predates 2\.3\.0)"
    with pytest.raises(ClientLacks, match=older):
        require_fetch_fencing(typed(EpochErrorRun, run), run["sent_epochs"], "refused Fetch partition entries")


# -- the premise: the target gave the client a leader epoch -------------------------------


def test_kafka_clients_on_a_target_without_metadata_epochs_is_a_refused_premise(recording: Recording) -> None:
    """Recorded live: kafka-clients 4.4.0 through the replay eventhubs-metadata-without-epochs (4.4.0 whose
    Metadata v7+ carries LeaderEpoch -1: `kcts run -p harness.proxy.replaying --replay
    eventhubs-metadata-without-epochs suites/kip320/test_client_epoch_errors.py`). Its refused Fetch
    carried -1, the only epoch it had: the target's part is missing, not the client's."""
    run = typed(EpochErrorRun, recording("kip320-client-fenced-java-metadata-without-epochs"))
    assert run.sent_epochs == (-1,) and run.learned and all(m.epoch == -1 for m in run.learned)
    with pytest.raises(TargetRefused, match=r"gave kafka-clients 4\.4\.0 no leader epoch for the partition before its "
                                            r"first refused Fetch at [\d.]+s \(Metadata v13 at [\d.]+s: leader \d+ "
                                            r"LeaderEpoch -1"):
        assert_read_on_through_epoch_errors(run)


@pytest.mark.parametrize("name", RUNS)
def test_a_client_the_target_gave_no_epoch_is_a_refused_premise(recording: Recording, name: str) -> None:
    """The recorded 4.4.0 run, its Metadata answers altered to LeaderEpoch -1 (a broker without KIP-320
    epochs) and every refused Fetch entry to -1: never a FAIL of the client."""
    run = recording(name)
    run["sent_epochs"] = [-1] * len(run["sent_epochs"])
    for m in run["learned"]:
        m["epoch"] = -1
    with pytest.raises(TargetRefused, match=r"no leader epoch for the partition before its first refused Fetch .*"
                                            r"LeaderEpoch -1.* carried CurrentLeaderEpoch -1"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


@pytest.mark.parametrize("name", RUNS)
def test_a_client_the_target_gave_an_epoch_that_sent_minus_one_fails(recording: Recording, name: str) -> None:
    """The same refused Fetches at -1 where the recorded Metadata did give the epoch: the client's FAIL."""
    run = recording(name)
    assert any(m["epoch"] >= 0 and m["at"] <= run["first_refused_at"] for m in run["learned"])
    run["sent_epochs"] = [-1] * len(run["sent_epochs"])
    with pytest.raises(AssertionError, match=r"fenced none of its Fetches: its \d+ refused Fetch partition entries "
                                             r"carried \[-1\]"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_an_epoch_given_only_after_the_refused_fetches_began_is_no_premise(recording: Recording) -> None:
    """librdkafka's first two Metadata answers came before its first refused Fetch: with only those two
    without an epoch, what the client knew when it fetched was no epoch at all."""
    run = recording("kip320-client-fenced-librdkafka")
    run["sent_epochs"] = [-1] * len(run["sent_epochs"])
    before = [m for m in run["learned"] if m["at"] <= run["first_refused_at"]]
    assert before and len(before) < len(run["learned"])
    for m in before:
        m["epoch"] = -1
    with pytest.raises(TargetRefused, match="no leader epoch for the partition before its first refused Fetch"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_client_that_asked_metadata_without_the_field_does_not_support_it(recording: Recording) -> None:
    run = recording("kip320-client-unknown-librdkafka")
    run["sent_epochs"] = [-1] * len(run["sent_epochs"])
    for m in run["learned"]:
        m.update(version=5, epoch=-1)
    with pytest.raises(ClientLacks, match=r"leader epochs in Metadata .* \(it asked Metadata v\[5\]"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_client_that_fenced_with_an_epoch_is_judged_whatever_metadata_said(recording: Recording) -> None:
    """An entry at an epoch >= 0 shows the client had one to send: the premise does not apply."""
    run = recording("kip320-client-fenced-librdkafka")
    for m in run["learned"]:
        m["epoch"] = -1
    assert all(e >= 0 for e in run["sent_epochs"])
    assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


@pytest.mark.parametrize("name", RUNS)
def test_a_client_that_reports_the_error_fails(recording: Recording, name: str) -> None:
    run = recording(name)
    run["errors"] = [{"event": "error", "detail": {"code": "_AUTO_OFFSET_RESET", "message": "fetch failed"}}]
    run["reads"] = []
    with pytest.raises(AssertionError, match=r"reported error \{'code': '_AUTO_OFFSET_RESET'"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


@pytest.mark.parametrize("name", RUNS)
def test_a_client_that_could_not_read_the_target_s_answer_is_a_refused_premise(recording: Recording, name: str) -> None:
    """Tansu 0.6.0 answers Fetch v12 with NodeEndpoints (tag 0, defined from v16): kafka-clients stops on
    it. The client's words are the evidence; the client is not judged."""
    run = recording(name)
    run["errors"] = [{"event": "error", "detail": {"consumer": "java", "exception": "java.lang.RuntimeException",
                                                   "message": "Tag 0 is not valid for version 12"}}]
    run["reads"] = []
    with pytest.raises(TargetRefused, match=r"could not read the target's answer: Tag 0 is not valid for version 12"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


@pytest.mark.parametrize("name", RUNS)
def test_a_client_that_reset_and_read_again_fails(recording: Recording, name: str) -> None:
    """A reset to the log start after the error: the first records come twice."""
    run = recording(name)
    run["reads"] = run["reads"][:5] + run["reads"]
    with pytest.raises(AssertionError, match=r"read 35 records, offsets 0\.\.29 .* expected the 30 records"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


@pytest.mark.parametrize("client", ["librdkafka", "java"])
def test_no_metadata_refresh_after_fenced_leader_epoch_fails(recording: Recording, client: str) -> None:
    run = recording(f"kip320-client-fenced-{client}")
    run["after"] = [api for api in run["after"] if api != "Metadata"]
    with pytest.raises(AssertionError, match="did not refresh its metadata after FENCED_LEADER_EPOCH"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_run_where_fetches_were_answered_but_none_refused_is_the_harness_s_error(recording: Recording) -> None:
    run = recording("kip320-client-unknown-java")
    run.update(refused=0, exchanges=[{"api": "Fetch", "version": 17, "outcome": "answered"}])
    with pytest.raises(SceneUnmet, match=r"the proxy's rule acted on none of the 1 Fetch answers \(v9\+\) to java"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def _producer_run(**changes: object) -> dict:
    """A producer run as the scenario records it (no Apache target carries CurrentLeaderEpoch in
    Produce, so there is no recorded one): 30 values written and read back once, in order."""
    values = [f"p-{i}" for i in range(30)]
    run = {"client": "librdkafka producer", "error": "FENCED_LEADER_EPOCH", "refused": 3, "errors": [],
           "written": [{"offset": i, "value": v} for i, v in enumerate(values)],
           "reads": [{"offset": i, "value": v} for i, v in enumerate(values)],
           "after": ["Produce", "Metadata", "Produce"], "sent_epochs": [4] * 6}
    run.update(changes)
    return run


def test_a_producer_that_retried_and_wrote_once_passes() -> None:
    assert_written_once_through_epoch_errors(typed(EpochErrorRun, _producer_run()))


def test_a_producer_that_failed_the_deliveries_fails() -> None:
    failed = [{"event": "delivery_failed", "detail": {"value": "p-0", "error": "KafkaError{code=FENCED_LEADER_EPOCH}"}}]
    with pytest.raises(AssertionError, match="failed 1 deliveries after FENCED_LEADER_EPOCH: delivery_failed"):
        assert_written_once_through_epoch_errors(typed(EpochErrorRun, _producer_run(errors=failed)))


def test_a_producer_retry_that_wrote_twice_fails() -> None:
    """A non-idempotent retry of a refused request the broker had appended: the first values twice."""
    run = _producer_run()
    run["reads"] = run["reads"][:3] + run["reads"]
    with pytest.raises(AssertionError, match="holds 33 records"):
        assert_written_once_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_producer_that_did_not_refresh_after_fenced_fails() -> None:
    with pytest.raises(AssertionError, match="did not refresh its metadata"):
        assert_written_once_through_epoch_errors(typed(EpochErrorRun, _producer_run(after=["Produce", "Produce"])))


def _told(epoch: int, at: float = 0.1) -> list[dict]:
    return [{"at": at, "source": "Metadata", "version": 12, "leader": 1, "epoch": epoch}]


def test_a_producer_the_target_gave_no_epoch_is_a_refused_premise() -> None:
    """Produce entries at -1 after Metadata gave LeaderEpoch -1: no epoch to send (KIP-359), the target's part."""
    run = typed(EpochErrorRun, _producer_run(sent_epochs=[-1] * 6, learned=_told(-1), first_refused_at=0.2))
    with pytest.raises(TargetRefused, match=r"no leader epoch .* before its first refused Produce at 0\.200s "
                                            r"\(Metadata v12 at 0\.100s: leader 1 LeaderEpoch -1\), so its 6 Produce"):
        require_epoch_told(run, "Produce", "Produce partition entries")


def test_a_producer_the_target_gave_an_epoch_passes_the_premise() -> None:
    """-1 though Metadata gave epoch 4: the premise holds, and the suite finds the client lacking."""
    run = typed(EpochErrorRun, _producer_run(sent_epochs=[-1] * 6, learned=_told(4), first_refused_at=0.2))
    require_epoch_told(run, "Produce", "Produce partition entries")


@pytest.mark.parametrize("client", ["librdkafka", "java"])
def test_recorded_members_waited_for_the_committed_epoch(recording: Recording, client: str) -> None:
    assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, recording(f"kip320-committed-ahead-{client}")))


@pytest.mark.parametrize("client", ["librdkafka", "java"])
def test_validating_with_metadata_behind_the_commit_fails(recording: Recording, client: str) -> None:
    """A member that asked about the committed epoch while its metadata still showed the older one."""
    run = recording(f"kip320-committed-ahead-{client}")
    run["validations"].insert(0, {"current": 0, "leader_epoch": run["committed"]["epoch"]})
    with pytest.raises(AssertionError, match="before its metadata reached it"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


def test_a_member_that_did_not_start_from_the_commit_fails(recording: Recording) -> None:
    run = recording("kip320-committed-ahead-java")
    run["reads"] = [{"offset": 20 + i, "value": f"x-{i}"} for i in range(10)]
    with pytest.raises(AssertionError, match=r"read 10 records, offsets 20\.\.29 from the commit"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


def test_a_target_whose_own_metadata_never_reaches_the_committed_epoch_refused_the_premise(
    recording: Recording,
) -> None:
    """Java asked Metadata again after the three stale answers; the target's own answer, altered to
    LeaderEpoch -1 (a broker without epochs), never reached the committed epoch: a member that waits
    for it cannot be judged on reading on."""
    run = recording("kip320-committed-ahead-java")
    own = run["learned"][run["stale"]:]
    assert own and any(m["epoch"] >= run["committed"]["epoch"] for m in own)
    for m in own:
        m["epoch"] = -1
    run["reads"] = []
    with pytest.raises(TargetRefused, match=r"own Metadata answers to java \(after the 3 shown behind\) never "
                                            r"reached the committed epoch 1: Metadata v13 at [\d.]+s: leader \d+ "
                                            r"LeaderEpoch -1"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


def test_no_stale_metadata_after_answered_metadata_is_the_harness_s_error(recording: Recording) -> None:
    run = recording("kip320-committed-ahead-librdkafka")
    run.update(stale=0, exchanges=[{"api": "Metadata", "version": 12, "outcome": "answered"}])
    with pytest.raises(SceneUnmet, match="the proxy's rule acted on none of the 1 Metadata answers"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


RESETS = [f"kip320-reset-fetch-{c}-{r}" for c in ("librdkafka", "java") for r in ("earliest", "latest")]


def _first_fetch_after_reset(run: dict) -> dict:
    answer = next(a for a in run["list_offsets"] if a["error"] == "NONE")
    return run["fetches"][answer["fetches_before"]]


@pytest.mark.parametrize("name", RESETS)
def test_recorded_resets_fetch_at_the_returned_epoch(recording: Recording, name: str) -> None:
    run = typed(ResetFetch, recording(name))
    assert run.epoch >= 1
    assert_first_fetch_uses_the_reset_epoch(run)


@pytest.mark.parametrize("name", RESETS)
def test_a_first_fetch_without_an_epoch_fails(recording: Recording, name: str) -> None:
    """CurrentLeaderEpoch -1: the fetch is not fenced at all."""
    run = recording(name)
    _first_fetch_after_reset(run)["current"] = -1
    with pytest.raises(AssertionError, match=r"first Fetch after it asked for offset \d+ with CurrentLeaderEpoch -1"):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))


def test_a_first_fetch_at_an_epoch_older_than_the_returned_one_fails(recording: Recording) -> None:
    """Reset to the log end at epoch 1, then fetched with the epoch stale metadata showed (0)."""
    run = recording("kip320-reset-fetch-librdkafka-latest")
    answer = next(a for a in run["list_offsets"] if a["error"] == "NONE")
    assert answer["epoch"] == run["epoch"] >= 1
    _first_fetch_after_reset(run)["current"] = answer["epoch"] - 1
    e = answer["epoch"]
    with pytest.raises(AssertionError, match=rf"at epoch {e} .* CurrentLeaderEpoch {e - 1}"):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))


@pytest.mark.parametrize("name", RESETS)
def test_a_first_fetch_elsewhere_than_the_returned_offset_fails(recording: Recording, name: str) -> None:
    run = recording(name)
    _first_fetch_after_reset(run)["offset"] += 7
    with pytest.raises(AssertionError, match="the first Fetch after it asked for offset"):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))


def test_a_client_that_never_fetched_after_the_reset_fails(recording: Recording) -> None:
    run = recording("kip320-reset-fetch-java-earliest")
    answer = next(a for a in run["list_offsets"] if a["error"] == "NONE")
    run["fetches"] = run["fetches"][:answer["fetches_before"]]
    with pytest.raises(AssertionError, match="sent no Fetch after the reset"):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))


@pytest.mark.parametrize("name", RESETS)
def test_a_reset_the_target_returned_no_epoch_for_is_a_refused_premise(recording: Recording, name: str) -> None:
    """ListOffsets v4+ answered the offset with LeaderEpoch -1: the epoch the first Fetch is held to is
    missing, the target's part; even a first Fetch at -1 is then no FAIL."""
    run = recording(name)
    answer = next(a for a in run["list_offsets"] if a["error"] == "NONE")
    answer["epoch"] = -1
    _first_fetch_after_reset(run)["current"] = -1
    refused = rf"ListOffsets v{answer['version']} returned offset \d+ with LeaderEpoch -1"
    with pytest.raises(TargetRefused, match=refused):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))


def test_a_reset_asked_at_a_version_without_the_epoch_does_not_support_it(recording: Recording) -> None:
    run = recording("kip320-reset-fetch-librdkafka-earliest")
    for a in run["list_offsets"]:
        a.update(version=3, epoch=-1)
    with pytest.raises(ClientLacks, match=r"its reset asked ListOffsets v3, which has no LeaderEpoch"):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))
