"""Errors a user can act on: each names the fix; and the refusals that are verdicts, not errors.

A check's premise that did not hold is never a FAIL (only a broken promise is): `require_target`
ends it "target refused the premise" where the target would not take part in the scene, and
`require_scene` ends it as an ERROR where the harness's own scene did not happen.
"""


class KctsError(Exception):
    """A problem with the environment or the input, with the fix in its message."""


class SetupError(KctsError):
    """The suite cannot start: a missing tool, an unknown version, an unreachable registry."""


class ClusterError(KctsError):
    """A cluster or node did not reach the state asked of it."""


class Unrecoverable(KctsError):
    """No amount of waiting fixes this (a process exited): waits stop at once and raise it."""


class NodeExited(ClusterError, Unrecoverable):
    """A node's process ended while the harness was waiting on it."""


class SceneUnmet(KctsError):
    """The harness did not build the scene a check judges (it never sent the request it meant to, or a
    fault it made did not take): no verdict on the target; an ERROR to fix in the harness, whose
    message is the evidence of what happened instead."""


class PromiseUnkept(AssertionError):
    """The target did not bring about, within the bound the harness gave it, an outcome a promise owes
    (a commit the KIP says lands, an answer it must give): a FAIL of that promise, never the harness's
    ERROR. The message is the last state seen; `promise` names it (an id of harness/promises.toml)
    where the raiser knows it. Raised in a fixture's scene, the plugin ends every check that needed
    the scene as this FAIL (harness.plugin.verdict_boundary)."""

    def __init__(self, message: str, promise: str = "") -> None:
        super().__init__(f"{message}\n  (promise: {promise})" if promise else message)
        self.promise = promise


class WorkerHung(KctsError):
    """One of the harness's own client processes (a generator, a processor) did not finish or stop
    within its deadline: the harness's trouble, an ERROR, never the target's FAIL (every client call
    in it has a deadline of its own, and a target that refused one is raised as that refusal). The
    message shows the process's state and its last output; its threads are dumped into its log."""


class VerdictError(Unrecoverable):
    """A refusal that is a verdict of its own, raised where it is found (any layer); the pytest
    plugin ends the check with that verdict (harness.verdicts.from_exception)."""


class TargetRefused(VerdictError):
    """The target refused a check's premise (a leader move, a topic): no verdict on the promise.

    Any layer may raise it; the pytest plugin turns it into the "target refused the premise"
    verdict, which the matrix counts apart from skips.
    """


class NotSupported(VerdictError):
    """The target lacks what a check needs (an API version, a feature); `evidence` shows what it
    advertised. The pytest plugin turns it into the "not supported by this target" verdict."""

    def __init__(self, what: str, evidence: str, reference: str | None = None, capability: str | None = None) -> None:
        super().__init__(f"{what} is not supported by this target ({evidence})")
        self.what = what
        self.evidence = evidence
        self.reference = reference  # a reference profile's line: the target is a release known to have it
        self.capability = capability  # its name in harness.cluster.reference: read against the run's target


class ClientLacks(VerdictError):
    """A client version lacks an API a driver calls (an older kafka-clients): "not supported by this
    client", with the compiler's or the client's own words as the evidence."""

    def __init__(self, client: str, what: str, evidence: str) -> None:
        super().__init__(f"{what} is not supported by this client, {client} ({evidence})")
        self.client = client
        self.what = what
        self.evidence = evidence


class KnownClientGap(VerdictError):
    """A client (not the target) is known to fail here: `client`, the `upstream` issue, a `summary`."""

    def __init__(self, client: str, upstream: str, summary: str) -> None:
        super().__init__(f"{client}: {summary} ({upstream})")
        self.client = client
        self.upstream = upstream
        self.summary = summary


class FaultControlUnavailable(KctsError):
    """The target gives no control over its nodes (or no node logs, or no side clusters)."""

    def __init__(self, target: str, need: str = "fault control") -> None:
        super().__init__(f"needs {need}; the target is {target}")


class DriverUnavailable(KctsError):
    """kcts has no driver of this client stack for what the check needs (a skip that says which)."""


def require_scene(held: object, why: str) -> None:
    """A premise of the harness's own making: `SceneUnmet(why)` (an ERROR) unless `held`."""
    if not held:
        raise SceneUnmet(why)


def require_target(held: object, why: str) -> None:
    """A premise the target had to take part in: `TargetRefused(why)` (no verdict on the promise)
    unless `held`; `why` says what the target did instead."""
    if not held:
        raise TargetRefused(why)
