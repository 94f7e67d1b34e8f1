"""Errors a user can act on: each names the fix."""


class KctsError(Exception):
    """A problem with the environment or the input, with the fix in its message."""


class SetupError(KctsError):
    """The suite cannot start: a missing tool, an unknown version, an unreachable registry."""


class ClusterError(KctsError):
    """A cluster or node did not reach the state asked of it."""
