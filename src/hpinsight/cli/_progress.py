"""Progress of a long command: a bar on a terminal, log lines anywhere else.

A progress bar redraws itself with ``\\r``; in a log file or a CI log that is one
ever-growing line of garbage. So a bar is drawn only when stderr is a terminal; otherwise
each step is one log line. :func:`draws_bars` is the rule, shared by every subcommand.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

__all__ = ["Progress", "StageLog", "draws_bars"]


def draws_bars(stream: TextIO | None = None) -> bool:
    """Whether a progress bar may be drawn on ``stream``: only when it is a terminal.

    Parameters
    ----------
    stream : text stream, optional
        Where the bar would go (default: ``sys.stderr`` at the time of the call).

    Returns
    -------
    bool
        True when ``stream`` is a TTY; False for files, pipes, captured streams and
        closed or detached ones.
    """
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


class Progress:
    """A ``progress(stage, done, total)`` callable for the steps of a command: a tqdm bar
    on a terminal, else one log line per step.

    Parameters
    ----------
    logger : logging.Logger
        Where the steps are logged (at INFO) when no bar is drawn.
    stream : text stream, optional
        Where the bar goes (default: ``sys.stderr``).
    """

    def __init__(self, *, logger: logging.Logger, stream: TextIO | None = None) -> None:
        self._logger = logger
        self._bar: Any = None
        stream = sys.stderr if stream is None else stream
        if draws_bars(stream):
            try:
                from tqdm import tqdm  # comes with Optuna
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=1, unit="step", leave=False, dynamic_ncols=True,
                                 file=stream)

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Step ``done`` of ``total`` is ``stage`` (a short description)."""
        if self._bar is None:
            self._logger.info("%s ...", stage)
        else:
            self._bar.total = total
            self._bar.n = done
            self._bar.set_description(stage)
            self._bar.refresh()

    def close(self) -> None:
        """Remove the bar (no-op without one)."""
        if self._bar is not None:
            self._bar.close()


class StageLog:
    """A ``progress(stage, done, total)`` callable that logs a long stage's progress in
    steps of ``every`` (a fraction of the stage), with the time taken and an estimate of
    the time left: a progress bar for logs.

    Parameters
    ----------
    logger : logging.Logger
        Where the lines go (INFO).
    every : float, default=0.05
        Log when the stage has advanced by this fraction since the last line (and at its end).
    """

    def __init__(self, logger: logging.Logger, every: float = 0.05) -> None:
        self._logger, self._every = logger, every
        self._stage: str | None = None
        self._started = 0.0
        self._last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        import time

        now = time.monotonic()
        if stage != self._stage:
            self._stage, self._started, self._last = stage, now, 0.0
        share = done / total if total else 1.0
        if share - self._last < self._every and done < total:
            return
        self._last = share
        elapsed = now - self._started
        left = elapsed * (total - done) / done if done else float("nan")
        self._logger.info("%s: %d of %d fits (%.0f %%), %.0f s, about %.0f s left",
                          stage, done, total, 100 * share, elapsed, left)
