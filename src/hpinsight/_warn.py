"""The package's own warnings, and a way to hold some back in one thread alone.

``warnings.catch_warnings`` swaps the process's one list of filters on entry and puts
its copy back on exit. Entered in a refit thread (a live callback's, a dashboard's
server thread) while the user's own code enters and leaves it too, the two restores
cross: a filter is lost, or one of ours ("ignore") stays in the user's process for
good. :func:`held_back` instead marks, for the calling thread (and context) only,
categories that :func:`warn` then does not give, and :func:`collected` gathers what it
would give (a refit thread logs them); nothing of the process changes.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["collected", "held_back", "warn"]

_HELD: ContextVar[tuple[type[Warning], ...]] = ContextVar("hpinsight_held_back", default=())
_COLLECTED: ContextVar[list[tuple[type[Warning], str]] | None] = ContextVar(
    "hpinsight_collected", default=None)


@contextlib.contextmanager
def held_back(*categories: type[Warning]) -> Iterator[None]:
    """Within the block, :func:`warn` in this thread gives no warning of ``categories``
    (or of their subclasses)."""
    token = _HELD.set(_HELD.get() + categories)
    try:
        yield
    finally:
        _HELD.reset(token)


@contextlib.contextmanager
def collected() -> Iterator[list[tuple[type[Warning], str]]]:
    """Within the block, :func:`warn` in this thread gives no warning but appends it,
    as ``(category, message)``, to the list this yields."""
    caught: list[tuple[type[Warning], str]] = []
    token = _COLLECTED.set(caught)
    try:
        yield caught
    finally:
        _COLLECTED.reset(token)


def warn(message: str, category: type[Warning], stacklevel: int | None = 1) -> None:
    """``warnings.warn(message, category, stacklevel)``, unless :func:`held_back` holds
    ``category`` back in this thread. ``stacklevel`` counts as if the caller had called
    ``warnings.warn`` itself; None: the first frame outside the package and the
    optimizer that called it (the user's line, however many calls lie between)."""
    if issubclass(category, _HELD.get()):
        return
    caught = _COLLECTED.get()
    if caught is not None:
        caught.append((category, message))
        return
    warnings.warn(message, category,
                  stacklevel=_outside_package() if stacklevel is None else stacklevel + 1)


#: Whose frames a warning skips to reach the user's line: the package's, and those of the
#: optimizers that call it (Optuna's importance functions and plots call the evaluator,
#: ``study.optimize`` the callback, SMAC its callback).
_SKIPPED = frozenset({__name__.split(".")[0], "optuna", "smac"})


def _outside_package() -> int:
    """The ``stacklevel`` of :func:`warn`'s ``warnings.warn`` at the first frame whose
    module is neither the package's nor an optimizer's that called it."""
    frame = sys._getframe(2)  # the caller of warn
    level = 2
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] \
            in _SKIPPED:
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
