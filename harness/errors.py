"""Errors a user can act on: each names the fix."""


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
