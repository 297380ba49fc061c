"""The error root of hopgraph and its few kinds. Every package raises a subclass of one of these;
the CLI (exit codes) and the API (problem JSON) map the kinds in one place each."""

from __future__ import annotations


class HopgraphError(Exception):
    """Root of every error hopgraph raises on purpose."""


class BadInputError(HopgraphError, ValueError):
    """The request, a file or a setting is wrong; repeating it unchanged fails again."""


class NotFoundError(HopgraphError, LookupError):
    """The named thing (document, entity, job, checkpoint...) does not exist."""


class ConflictError(HopgraphError):
    """The request clashes with the current state (an id taken, a store owned by another process)."""


class StoreUnavailableError(HopgraphError, RuntimeError):
    """A store, server or model the work needs cannot be reached or used right now."""


class ForbiddenError(HopgraphError, PermissionError):
    """The caller may not read or do what it asked for."""


class TimeLimitError(HopgraphError, TimeoutError):
    """The work ran past its time limit and was stopped (on the server too)."""


#: (kind, CLI exit code, HTTP status): the one table both front ends read
ERROR_KINDS: tuple[tuple[type[HopgraphError], int, int], ...] = (
    (BadInputError, 2, 400),
    (NotFoundError, 4, 404),
    (ConflictError, 5, 409),
    (ForbiddenError, 7, 403),
    (StoreUnavailableError, 3, 503),
    (TimeLimitError, 6, 504),
    (HopgraphError, 1, 500),
)


def classify(exc: HopgraphError) -> tuple[int, int]:
    """``(exit code, HTTP status)`` of an error by its kind."""
    for kind, code, status in ERROR_KINDS:
        if isinstance(exc, kind):
            return code, status
    return 1, 500  # unreachable: HopgraphError is the last kind
