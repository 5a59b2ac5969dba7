"""``hpinsight watch``: live importances of a (distributed) Optuna study from another terminal.

The study is loaded once and polled; Optuna keeps finished trials of a loaded
RDB study in memory and the journal storage replays only new log lines, so a
poll reads only what changed instead of re-opening the storage (which costs
seconds on large studies). A refit happens when the count of COMPLETE trials
grew by ``--every``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import signal
import threading
import time
from datetime import datetime
from types import FrameType
from typing import Any, TextIO

from .._optional import import_optional
from .._sampling import action_label
from ._model import add_model_arguments, below_minimum, model_from
from ._storage import (
    describe,
    known_studies,
    objective_argument,
    objective_problem,
    open_storage,
)

__all__ = ["add_parser", "run"]

_logger = logging.getLogger("hpinsight.cli.watch")
# The refit's own ranking line (INFO) would repeat the status line printed here.
#: Longest wait between polls while the storage does not answer, in seconds.
_MAX_BACKOFF = 60.0
_refit_logger = logging.getLogger("hpinsight.cli.watch.refit")
_refit_logger.setLevel(logging.WARNING)


def _shrink_to(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of parameters to keep (1 or more) or 'auto', got {text!r}")
    return k


def _narrow_quantile(text: str) -> float | str | None:
    if text in ("auto", "none"):
        return None if text == "none" else text
    try:
        q = float(text)
    except ValueError:
        q = math.nan
    if not 0.0 < q <= 1.0:
        raise argparse.ArgumentTypeError(
            f"expected a fraction in (0, 1], 'auto' or 'none', got {text!r}")
    return q


def add_parser(sub: Any) -> None:
    """Register the ``watch`` subcommand."""
    p = sub.add_parser(
        "watch",
        help="print live importances of an Optuna study (and optionally publish them)",
        description=(
            "Poll an Optuna study and print its parameter importances (exact fANOVA) as "
            "trials finish. Stop with Ctrl-C."
        ),
    )
    p.add_argument(
        "--storage", required=True,
        help="an RDB URL (sqlite:///study.db, postgresql+psycopg://user@host/db) or the path "
        "of an Optuna journal file",
    )
    p.add_argument("--study", required=True, help="study name")
    p.add_argument("--interval", type=float, default=10.0, help="seconds between polls (10)")
    p.add_argument("--every", type=int, default=1,
                   help="refit when this many more trials completed (1)")
    p.add_argument("--min-trials", type=int, default=20, help="first refit at this many (20)")
    p.add_argument("--publish", nargs="?", const="attrs", default=None,
                   choices=("attrs", "dashboard"), metavar="attrs|dashboard",
                   help="store the summary in the study user attribute 'hpinsight:importance' "
                   "(--publish or --publish attrs); --publish dashboard also shows the "
                   "importance figure and a short summary in optuna-dashboard (the study's "
                   "note), with the 'dashboard' extra")
    p.add_argument("--shrink-to", type=_shrink_to, default=None, metavar="K|auto",
                   help="with --publish: fix all but the K most important parameters for "
                   "workers using ShrinkingSampler; 'auto': fix those that are unimportant "
                   "among good trials and safely cheap to fix (tuning risk)")
    p.add_argument("--shrink-after", type=int, default=None, help="with --shrink-to: trials before shrinking; with --shrink-to auto, later checks fall at its multiples (50)")
    p.add_argument("--risk-margin", type=float, default=None, metavar="M",
                   help="with --shrink-to auto: the most fixing a parameter may cost, as a "
                   "fraction of the spread of the good trials (0.05)")
    p.add_argument("--narrow-quantile", type=_narrow_quantile, default="auto", metavar="Q|auto|none",
                   help="with --shrink-to: also narrow the kept numerical parameters to the "
                   "range of the best Q fraction of trials (a heuristic; 0 < Q <= 1); 'auto' "
                   "(default): with --shrink-to auto, the parameters that matter to the best "
                   "quarter, with --shrink-to K nothing; 'none': never")
    p.add_argument("--objective", type=objective_argument, default=None, metavar="OBJECTIVE",
                   help="which objective of a multi-objective study: an index, a name as Optuna "
                        "gives it (values_1, or a metric name) or 'front' for reaching the Pareto "
                        "front (the default there); --shrink-to auto on such a study fixes only "
                        "what is safe to fix for every objective")
    add_model_arguments(p)
    p.add_argument("--seed", type=int, default=0, help="model seed (0)")
    p.add_argument("--top", type=int, default=5, help="parameters shown per line (5)")
    p.add_argument("--once", action="store_true", help="refit once on what is there and exit")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Poll until Ctrl-C (or once); return the exit status."""
    optuna = import_optional("optuna", "hpinsight watch")
    from ..integrations._dashboard import require_dashboard
    from ..integrations._live import RefitOptions
    from ..integrations._optuna_live import Refitter
    from ..integrations._optuna_shrink import read_decisions, read_ranges, read_restriction

    if args.shrink_to is not None and not args.publish:
        _logger.error("--shrink-to needs --publish: the restriction is published to the study.")
        return 2
    if args.publish == "dashboard":
        try:
            require_dashboard("hpinsight watch --publish dashboard")
        except ImportError as exc:
            _logger.error("%s", exc)
            return 2
    if isinstance(args.narrow_quantile, float) and args.shrink_to is None:
        _logger.error("--narrow-quantile needs --shrink-to.")
        return 2
    # accepted where they do nothing, they were silently ignored (ImportanceCallback
    # refuses the same)
    unread = [flag for flag, value in (("--shrink-after", args.shrink_after),
                                       ("--risk-margin", args.risk_margin)) if value is not None]
    if args.shrink_to is None and unread:
        _logger.error("%s only %s with --shrink-to, which is not given, so nothing would be "
                      "shrunk; add --shrink-to auto (or how many parameters to keep), or leave "
                      "%s out.", " and ".join(unread), "acts" if len(unread) == 1 else "act",
                      "it" if len(unread) == 1 else "them")
        return 2
    if args.shrink_to not in (None, "auto") and args.risk_margin is not None:
        _logger.error("--risk-margin is read by --shrink-to auto only; with --shrink-to %s the "
                      "parameters outside the top ones are fixed whatever they cost. Use "
                      "--shrink-to auto, or leave --risk-margin out.", args.shrink_to)
        return 2
    args.shrink_after = 50 if args.shrink_after is None else args.shrink_after
    args.risk_margin = 0.05 if args.risk_margin is None else args.risk_margin
    if not 0.0 <= args.risk_margin < float("inf"):
        _logger.error("--risk-margin must be a number >= 0.")
        return 2
    # (NaN passed "<= 0" and polled at full speed; inf overflowed the first wait)
    if not 0 < args.interval <= threading.TIMEOUT_MAX or args.every < 1 or args.min_trials < 2:
        _logger.error("--interval must be a number of seconds > 0, --every >= 1 and "
                      "--min-trials >= 2.")
        return 2
    # as report checks them: accepted, --seed -3 and --n-trees 0 ended in a traceback, and
    # --shrink-after 0 in a refit that failed on every poll
    problem = below_minimum(args, top=1, n_trees=1, seed=0, shrink_after=2)
    if problem is not None:
        _logger.error(problem)
        return 2
    try:
        storage = open_storage(optuna, args.storage)
        study = optuna.load_study(study_name=args.study, storage=storage)
    except Exception as exc:
        _logger.error("cannot open study %r in %s: %s%s", args.study, describe(args.storage),
                      exc, known_studies(optuna, locals().get("storage")))
        return 1
    problem = objective_problem(study, args.objective)
    if problem is None and args.shrink_to not in (None, "auto") and len(study.directions) > 1:
        problem = (f"--shrink-to {args.shrink_to} cannot shrink study {args.study!r}, which has "
                   f"{len(study.directions)} objectives: keeping the top parameters of one "
                   "ranking would fix parameters another objective needs. Use --shrink-to "
                   "auto, which fixes only what is safe to fix for every objective.")
    if problem:
        _logger.error("%s", problem)
        return 2
    options = RefitOptions.checked(
        "hpinsight watch", min_trials=args.min_trials, surrogate=model_from(args, n_jobs=-1),
        seed=args.seed, isolation="thread")
    publish_failed = False  # a failure to publish (a read-only storage) since the start

    def published_not(exc: Exception, when: str, log: bool) -> None:
        nonlocal publish_failed
        publish_failed = True  # a flag, not the exceptions: their tracebacks hold the fits
        _dashboard_error(exc, when, log)

    refitter = Refitter(
        options, objective=args.objective, target=None, publish=args.publish,
        shrink_to=args.shrink_to, shrink_after=args.shrink_after,
        narrow_quantile=args.narrow_quantile, defaults={}, logger=_refit_logger,
        risk_margin=args.risk_margin, decide_in_refit=True,  # it cannot hold trials back
        on_error=published_not,
    )
    # Ctrl-C and SIGTERM stop the watcher, also when it was started from a script that
    # runs it in the background (a shell then starts it with SIGINT ignored). The handlers
    # are in place before the "watching" line, so whoever waits for that line can signal.
    stop = threading.Event()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        # raised wherever the loop is (a refit, a query) and remembered: raised inside a
        # garbage-collection callback (SQLAlchemy's), an exception is printed and dropped,
        # and the watcher went on polling (seen once in 1,600 test runs)
        stop.set()
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _write(out, f"watching study {args.study!r} ({describe(args.storage)})"
                    + ("; one ranking, then it stops" if args.once else "; Ctrl-C stops"))
        in_force, ranges = read_restriction(study), read_ranges(study)
        if in_force or ranges:  # a restriction that only narrows is one too
            held = ([f"fixed {_values(in_force)}"] if in_force else []) + (
                [f"narrowed {', '.join(f'{k} to [{lo:g}, {hi:g}]' for k, (lo, hi) in ranges.items())}"]
                if ranges else [])
            _write(out, f"restriction in force: {'; '.join(held)}")
        told = read_decisions(study)  # decisions made before we started are not news
        refitted_at = -1
        waiting = ""  # the counts last reported while waiting for --min-trials
        down_since: float | None = None  # when the storage stopped answering
        delay = args.interval
        while not stop.is_set():
            try:
                counts = _counts(optuna, study)
            except KeyError:  # the storage answers, and the study is gone: it cannot return
                # (one created again under its name has another id)
                _logger.error("study %r no longer exists in %s%s", args.study,
                              describe(args.storage), known_studies(optuna, storage))
                return 1
            except Exception as exc:  # the storage is down or unreachable: wait, not die
                if down_since is None:
                    down_since = time.monotonic()
                    _logger.warning(
                        "cannot reach the storage (%s: %s); retrying, at longer and longer "
                        "intervals up to %.0f s", type(exc).__name__, _first_line(exc),
                        max(_MAX_BACKOFF, args.interval))
                if args.once:
                    return 1
                delay = min(delay * 2, max(_MAX_BACKOFF, args.interval))
                stop.wait(delay)
                continue
            if down_since is not None:
                _logger.warning("the storage answers again, after %.0f s",
                                time.monotonic() - down_since)
                down_since, delay = None, args.interval
            complete = counts.get("COMPLETE", 0)
            if args.once or complete - refitted_at >= args.every:
                failed: Exception | None = None
                try:
                    outcome = refitter.refit(study)
                except Exception as exc:  # a monitor reports and keeps polling
                    _logger.warning("refit failed: %s: %s", type(exc).__name__, _first_line(exc))
                    outcome, failed = None, exc
                if outcome is not None:
                    # trials may have finished between the counts and the fit's own read:
                    # count again, so the line is never staler than the fit, and take as
                    # fitted what the fit saw (its trials, at most the new count), else a
                    # study's last trial finished in between is never reported
                    with contextlib.suppress(Exception):  # gone in between: the old ones
                        counts = _counts(optuna, study)
                    refitted_at = max(complete, min(counts.get("COMPLETE", 0),
                                                    outcome[1].n_trials))
                    _write(out, _status_line(counts, outcome[1], args.top))
                elif args.once and failed is not None:
                    # not "not enough trials": the status line gives the cause, and --once fails
                    _write(out, f"{_count_text(counts)} | refit failed: "
                                f"{type(failed).__name__}: {_first_line(failed)}")
                    return 1
                elif args.once:
                    _write(out, f"{_count_text(counts)} | " + (
                        refitter.idle_reason or f"not enough COMPLETE trials to rank (need "
                                                f"{args.min_trials})"))
                elif refitter.idle_reason is not None and complete >= args.min_trials:
                    # enough COMPLETE trials, yet nothing ranked (failed runs' inf values,
                    # one value in all): said at each change, as the wait below
                    line = f"{_count_text(counts)} | {refitter.idle_reason}"
                    if line != waiting:
                        waiting = line
                        _write(out, f"[{datetime.now().strftime('%H:%M:%S')}] {line}")
                # what this or any other process decided since: on screen, not only stored
                try:
                    decisions = read_decisions(study)
                except Exception:  # the storage went away in between: the next poll says so
                    decisions = told
                for d in decisions[len(told):]:
                    _write(out, f"[{datetime.now().strftime('%H:%M:%S')}] decision "
                                f"({action_label(d)}): {d.get('why', '')}")
                told = decisions
            if not args.once and complete < args.min_trials and _count_text(counts) != waiting:
                # below --min-trials nothing is ranked: say what it waits for, at each change
                waiting = _count_text(counts)
                _write(out, f"[{datetime.now().strftime('%H:%M:%S')}] {waiting} | waiting for "
                            f"{args.min_trials} COMPLETE trials to rank")
            if args.once:  # asked to publish and could not: a failure, said above
                return 1 if publish_failed else 0
            stop.wait(args.interval)
    except KeyboardInterrupt:
        pass  # Ctrl-C or SIGTERM
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        engine = getattr(storage, "engine", None)
        if engine is not None:
            engine.dispose()
    _write(out, "stopped")
    return 0


def _dashboard_error(exc: Exception, when: str, log: bool) -> None:
    """A failure to publish into optuna-dashboard: said once per run of failures."""
    if log:
        _logger.warning("%s: %s: %s (watching goes on)", when, type(exc).__name__,
                        _first_line(exc))


def _counts(optuna: Any, study: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in study.get_trials(deepcopy=False):
        counts[t.state.name] = counts.get(t.state.name, 0) + 1
    return counts


def _count_text(counts: dict[str, int]) -> str:
    shown = ("COMPLETE", "RUNNING", "PRUNED", "FAIL")
    return ", ".join(f"{counts.get(s, 0)} {s.lower()}" for s in shown)


def _status_line(counts: dict[str, int], snapshot: Any, top: int) -> str:
    return (
        f"[{datetime.now().strftime('%H:%M:%S')}] {_count_text(counts)} | "
        f"{snapshot.best_text()} | {snapshot.ranking_line(top=top)}"
    )


def _first_line(exc: BaseException) -> str:
    """A driver's message without the SQL and the help links it appends, and the first
    line of what caused it: Optuna wraps a failed write in a message of its own ("invalid
    data in the commit, e.g. exceeding max length"), where the cause says what happened
    ("attempt to write a readonly database")."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause).strip():
        line += f" ({type(cause).__name__}: {str(cause).strip().splitlines()[0]})"
    return line


def _values(fixed: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in fixed.items())


def _write(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()
