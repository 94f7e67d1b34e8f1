"""The verdicts besides pass and fail, one way each, so that reports and the matrix can tell them apart.

- not supported by this target: the target lacks the feature (an API version, a schema field);
  a skip whose reason starts with NOT_SUPPORTED and carries the advertised versions as evidence.
- target refused the premise: the target would not let the check set up its scene (a topic, a
  leader move, a client that could not reach it); no verdict on the promise. A skip whose reason
  starts with TARGET_REFUSED.
- known client gap: a strict xfail that names the upstream issue; it turns into a failure the day
  the gap is fixed, so the allow-list cannot rot.
- skip: anything else, always with a reason (e.g. "needs fault control; the target is external").
- error: the check never reached its verdict: a setup or teardown failure, or a call that raised
  anything but an assertion (StopIteration, ProtocolError, KeyError, a WaitTimeout, a `SceneUnmet`
  where the harness's own scene did not happen): a harness defect or an unmet premise, counted
  apart from FAIL, which is only ever a failed assertion: a broken promise. A premise that is
  itself a KIP's promise fails as that promise, its message naming the KIP and section.

Code below the pytest layer raises `harness.errors.NotSupported`, `TargetRefused`,
`KnownClientGap` or `FaultControlUnavailable`; `from_exception` turns them into these verdicts (the plugin calls it).
"""

from __future__ import annotations

import functools
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from harness.clients.stacks import gap_version
from harness.cluster.reference import client_predates, expected, predates
from harness.cluster.target import TargetSpec
from harness.errors import (
    ClientLacks,
    DriverUnavailable,
    FaultControlUnavailable,
    KnownClientGap,
    NotSupported,
)

# The premise guards and the refusal, for the suites (which import verdicts, not errors).
from harness.errors import TargetRefused as TargetRefused
from harness.errors import require_scene as require_scene
from harness.errors import require_target as require_target
from harness.waiting import WaitTimeout

if TYPE_CHECKING:
    from harness.checks.client_reactions import AssignmentNeverCompleted, CommittedOffsetsNeverFetched
    from harness.scenarios.kip1094 import NotReadThrough

NOT_SUPPORTED = "NOT_SUPPORTED"
TARGET_REFUSED = "TARGET_REFUSED"
KNOWN_CLIENT_GAP = "KNOWN_CLIENT_GAP"

# Matrix cells, in the order reports list them.
CELLS = ("pass", "fail", "error", "not-supported", "target-refused", "client-gap", "skipped")
# The cells that say something about the target: a verdict was reached (a known client gap is one:
# the outcome is known and accounted for). Errors, refusals and skips judged nothing.
JUDGED = ("pass", "fail", "not-supported", "client-gap")
# Exceptions that end a call without a verdict although they are AssertionErrors: a wait that timed
# out is an unmet premise of the scene (the target never got there), not a promise found broken.
NOT_VERDICTS: tuple[type[BaseException], ...] = (WaitTimeout,)


def not_supported(
    what: str, evidence: str, reference: str | None = None, *, target: TargetSpec | None = None,
    capability: str | None = None,
) -> NoReturn:
    """End the check with "not supported by this target"; `evidence` shows what the target advertised.

    Where the target is a release known to have the feature (`reference`, or the reference profile's
    line for `capability` on `target`: harness.cluster.reference), a missing feature is a regression:
    the check FAILs, the profile's line its premise."""
    if reference is None and target is not None and capability is not None:
        reference = expected(target, capability)
    if reference is not None:
        raise AssertionError(f"{what} is missing ({evidence}); {reference}")
    _label("not-supported")
    older = predates(target, capability) if target is not None and capability is not None else None
    pytest.skip(f"{NOT_SUPPORTED}: {what} is not supported by this target ({evidence})"
                + (f"; {older}" if older else ""))


def not_supported_by_client(client: str, what: str, evidence: str) -> NoReturn:
    """End the check with "not supported": the client, not the target, lacks what the promise is about
    (it never sends the field the promise concerns); `evidence` shows what it sent."""
    _label("not-supported")
    older = client_predates(client, what)
    pytest.skip(f"{NOT_SUPPORTED}: {what} is not supported by this client, {client} ({evidence})"
                + (f"; {older}" if older else ""))


def target_refused(why: str) -> NoReturn:
    """End the check with "the target refused the premise"; `why` says what it refused and how."""
    _label("target-refused")
    pytest.skip(f"{TARGET_REFUSED}: {why}")


def known_client_gap(client: str, upstream: str, summary: str) -> pytest.MarkDecorator:
    """Mark a check that a client is known to fail: strict xfail naming the upstream issue."""
    return pytest.mark.xfail(strict=True, reason=f"{KNOWN_CLIENT_GAP}: {client}: {summary} ({upstream})")


@dataclass(frozen=True)
class ClientGap:
    """A client's known failure of a check, narrowed to the exception that shows it: the check catches
    exactly that exception for exactly that client and calls `found`; any other failure stays a FAIL
    (or ERROR), and the client doing the right thing is a pass.

    With `affected` (a version range) and the `version` of the client that ran, the gap holds only
    inside the range: `found` on any other version fails the check with the evidence
    (`known_gap` reads both from harness/client_gaps.toml)."""

    client: str
    upstream: str
    summary: str
    affected: str = ""  # PEP 440 range of the versions known to have it; "" = every version
    version: str | None = None  # of the client that ran the check

    @property
    def applies(self) -> bool:
        if not self.affected or self.version is None:
            return True
        return _in_range(self.version, self.affected)

    def found(self, evidence: BaseException | str) -> NoReturn:
        """End the check as this known client gap, with what was seen; outside the affected
        versions, fail it with the same evidence."""
        seen = str(evidence).splitlines()[0][:300]
        if not self.applies:
            raise AssertionError(
                f"{evidence}\n  ({self.client} {self.version} is outside the versions known to have this gap, "
                f"{self.affected}: {self.upstream}; so it is judged)"
            )
        who = f"{self.client} {self.version}" if self.version else self.client
        # The verdict's reason keeps one line; the evidence file keeps the whole of what was seen (the
        # scene's faults, the client's own log lines) as the direct cause of the gap's verdict.
        cause = evidence if isinstance(evidence, BaseException) else AssertionError(evidence)
        if cause.__traceback__ is None and cause.__cause__ is None and cause.__context__ is None:
            cause.__cause__ = sys.exc_info()[1]  # built, never raised: it keeps the assertion it was built from
        try:
            client_gap_found(who, self.upstream, f"{self.summary}; seen: {seen}")
        except pytest.xfail.Exception as ended:
            raise ended from cause


def known_gap(gap_id: str, version: str | None) -> ClientGap:
    """The gap `gap_id` of harness/client_gaps.toml, for the client version that runs the check."""
    table = _gap_table()
    if gap_id not in table:
        raise KeyError(f"no client gap {gap_id!r} in {GAPS}; known: {sorted(table)}")
    row = table[gap_id]
    return ClientGap(row["client"], row["upstream"], row["summary"], row.get("affected", ""), version)


def stall_is_known_gap(stack: str, stall: CommittedOffsetsNeverFetched | AssignmentNeverCompleted) -> None:
    """End the check as the known client gap `stack` has for this stall (the stall's GAPS), for the
    versions that gap names; return where the stack has none, for the caller to re-raise the stall."""
    gap = type(stall).GAPS.get(stack)
    if gap is not None:
        known_gap(gap, gap_version(stack, stall.client)).found(stall)


def stalled_read(stack: str, timeout: NotReadThrough) -> NoReturn:
    """A consumer that did not read through the log: one that never fetched after its group's
    OffsetFetch was refused with a retriable coordinator error, or one whose group's last assignment
    reached it without the partition, is its stack's known client gap for the versions that gap names
    (else that stall, a FAIL); any other stays the harness's WaitTimeout, an ERROR."""
    # Imported here: `kcts run` imports this module before pytest starts, and a module of harness.checks
    # imported then would judge without pytest's rewritten asserts (harness/pytest_plugin.py).
    from harness.checks.client_reactions import (
        AssignmentNeverCompleted,
        CommittedOffsetsNeverFetched,
        require_assignment_completed,
        require_committed_offsets_fetched,
    )

    for require in (require_committed_offsets_fetched, require_assignment_completed):
        try:
            require(timeout.client, timeout.events, timeout.read, str(timeout))
        except (CommittedOffsetsNeverFetched, AssignmentNeverCompleted) as stall:
            stall_is_known_gap(stack, stall)
            raise
    raise timeout


GAPS = Path(__file__).resolve().parent / "client_gaps.toml"


@functools.cache
def _gap_table() -> dict[str, dict[str, str]]:
    with GAPS.open("rb") as f:
        return tomllib.load(f)


def _in_range(version: str, spec: str) -> bool:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) in SpecifierSet(spec)
    except InvalidVersion:
        return True  # a version we cannot read is given the benefit of the table


def client_gap_found(client: str, upstream: str, summary: str) -> NoReturn:
    """End a running check as a known client gap, for a gap that only some targets expose."""
    _label("client-gap")
    pytest.xfail(f"{KNOWN_CLIENT_GAP}: {client}: {summary} ({upstream})")


def from_exception(exc: BaseException, target: TargetSpec | None = None) -> None:
    """End the check with the verdict a refusal raised below the pytest layer stands for; return
    without doing anything for any other exception. `target`, the run's, judges a NotSupported that
    names its capability against the reference profiles."""
    if isinstance(exc, NotSupported):
        not_supported(exc.what, exc.evidence, exc.reference, target=target, capability=exc.capability)
    if isinstance(exc, TargetRefused):
        target_refused(str(exc))
    if isinstance(exc, KnownClientGap):
        client_gap_found(exc.client, exc.upstream, exc.summary)
    if isinstance(exc, ClientLacks):
        not_supported_by_client(exc.client, exc.what, exc.evidence)
    if isinstance(exc, (FaultControlUnavailable, DriverUnavailable)):
        pytest.skip(str(exc))


def _label(verdict: str) -> None:
    try:
        import allure
    except ImportError:
        return
    allure.dynamic.tag(verdict)


def is_verdict(raised: type[BaseException] | None) -> bool:
    """Whether a call that raised `raised` failed with a verdict: a failed assertion (or `pytest.fail`,
    a deliberate one). None (no exception known, e.g. a strict xfail that passed) counts as one."""
    if raised is None:
        return True
    if issubclass(raised, NOT_VERDICTS):
        return False
    return issubclass(raised, AssertionError | pytest.fail.Exception)


def classify(outcome: str, reason: str | None, raised: type[BaseException] | None = None) -> str:
    """Map a pytest outcome, its reason and (for a failed call) the exception type it raised to a
    matrix cell (one of `CELLS`). `outcome` "error" is a failed setup or teardown."""
    reason = reason or ""
    if outcome == "passed":
        return "pass"
    if outcome == "error":
        return "error"
    if outcome == "failed":
        return "fail" if is_verdict(raised) else "error"
    if NOT_SUPPORTED in reason:
        return "not-supported"
    if TARGET_REFUSED in reason:
        return "target-refused"
    if KNOWN_CLIENT_GAP in reason:
        return "client-gap" if outcome in ("xfailed", "skipped") else "fail"
    return "skipped"
