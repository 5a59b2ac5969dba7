"""The ``hpinsight`` command line: ``hpinsight watch|report|risk-experiment ...`` (also
``python -m hpinsight``).

:func:`main` parses the arguments, configures logging (the only place hpinsight
does) and dispatches to one module per subcommand; each subcommand is a thin
layer over the library.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from .. import __version__  # the installed distribution's, from importlib.metadata
    from . import _report, _risk, _watch

    parser = argparse.ArgumentParser(
        prog="hpinsight",
        description="Which hyperparameters matter, how they act, and which you can stop tuning.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debugging details")
    parser.add_argument("--version", action="version", version=f"hpinsight {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _watch.add_parser(sub)
    _report.add_parser(sub)
    _risk.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).
    stdout : text stream, optional
        Where results are written (default: ``sys.stdout``).

    Returns
    -------
    int
        Exit status: 0 on success (also after Ctrl-C in ``watch``, and when the
        reader of its output goes away), 130 after Ctrl-C elsewhere, 1 when
        the storage, study or SMAC run cannot be opened (a missing SQLite or
        journal file, a file that is not a journal, a folder that is not one
        SMAC run) or the result cannot be written, 2 for usage errors
        (including ``--out`` in a folder that does not exist).

    Notes
    -----
    ``--help`` and ``--version`` print to ``sys.stdout`` and raise
    ``SystemExit(0)``, as argparse does.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    from ._model import model_misuse

    misuse = model_misuse(args)
    if misuse is not None:
        parser.error(misuse)  # a usage error: the message, and exit status 2
    out = stdout if stdout is not None else sys.stdout
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    root = logging.getLogger("hpinsight")
    level, optuna_level = root.level, _optuna_verbosity()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    # a warning is a line of the command's own, not Python's file:line and source code
    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        root.warning("%s", message)

    warnings.showwarning = show
    try:
        return int(args.run(args, out))
    except KeyboardInterrupt:  # Ctrl-C where a command does not handle it: no traceback
        root.error("interrupted")
        return 130
    except BrokenPipeError:  # the reader went away (hpinsight watch ... | head -1)
        if out is sys.stdout:  # and Python's own flush at exit would fail again
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        warnings.showwarning = shown
        root.removeHandler(handler)
        # called from Python, the caller's logging is as it was: the command quiets
        # Optuna's per-trial lines while it reads a study
        root.setLevel(level)
        if "optuna" in sys.modules:
            sys.modules["optuna"].logging.set_verbosity(
                sys.modules["optuna"].logging.INFO if optuna_level is None else optuna_level)


def _optuna_verbosity() -> int | None:
    """Optuna's verbosity, or None where Optuna is not imported yet (its default then)."""
    optuna = sys.modules.get("optuna")
    return None if optuna is None else int(optuna.logging.get_verbosity())
