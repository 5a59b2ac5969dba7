"""Live importances, optimizer-free: snapshots, one fANOVA refit, and background refits.

The Optuna and SMAC callbacks and ``hpinsight watch`` are built from these parts:

* :class:`ImportanceSnapshot` -- the compact outcome of one refit;
* :class:`LiveFanova` -- history -> fANOVA result and snapshot, computed in a
  child process (:mod:`._worker`) or in this one;
* :class:`BackgroundRefits` -- one background thread that runs the newest
  requested refit, keeps results and errors, and never raises into the caller.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from .._decision_result import fmt_share
from .._decisions import decision_order
from .._shared import NO_CLEAR_SIGNAL, fmt_best, no_signal_words, round_share
from .._validation import check_choice, check_int, check_real, check_seed
from .._warn import collected
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..surrogates import GP, Forest, as_surrogate, refuse_fitted
from ._tasks import TASKS
from ._worker import RefitWorker, WorkerError

if TYPE_CHECKING:
    from .._fanova_result import FanovaResult
    from .._history import TrialHistory
    from .._regions_result import RegionNode, RegionsResult
    from .._subspace import Span, SubspaceResult

__all__ = [
    "DISPLAY_LIMIT",
    "BackgroundRefits",
    "ImportanceSnapshot",
    "LiveFanova",
    "LiveResults",
    "compact_summary",
]

DISPLAY_LIMIT = 1024  # optuna-dashboard truncates longer attribute values
_MAX_ERRORS = 100


@dataclass(frozen=True, slots=True)
class ImportanceSnapshot:
    """Main-effect importances of a run at one point of its progress.

    Attributes
    ----------
    n_trials : int
        COMPLETE trials (finite value) the model was fit on.
    last_trial : int
        Highest trial number among them.
    importances : mapping of str to float
        Mean fraction of variance per parameter, sorted descending.
    stds : mapping of str to float
        Std over trees (or draws) of the same fractions.
    best_value : float
        Best analysed value among the trials.
    n_excluded : int
        Trials left out (not COMPLETE, or non-finite value).
    seconds : float
        Wall time of the refit.
    verdicts : mapping of str to str
        Per parameter, :attr:`hpinsight.results.Importance.verdict`: "resolved",
        "uncertain", "indistinguishable from nothing" or "negligible".
    front_size : int, optional
        When the analysed value is reaching the Pareto front of a study of several
        objectives: how many analysed trials are on the front (``best_value`` is then 0,
        the share of trials dominating a trial on the front). None otherwise.
    doubtful : bool
        A capped refit (``cap_quantile``) more than a quarter of whose hyperparameter
        refits find no signal (:attr:`hpinsight.results.FanovaResult.signal_doubtful`):
        every verdict is uncertain and the shares are fractions of next to nothing, so the
        status lines quote none (the numbers stay in :meth:`to_dict`).
    flat_refits : tuple of (int, int)
        How many of the fit's hyperparameter refits find no signal, of how many.
    """

    n_trials: int
    last_trial: int
    importances: Mapping[str, float]
    stds: Mapping[str, float]
    best_value: float
    n_excluded: int
    seconds: float
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    verdicts: Mapping[str, str] = field(default_factory=dict)
    front_size: int | None = None
    doubtful: bool = False
    flat_refits: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "importances", MappingProxyType(dict(self.importances)))
        object.__setattr__(self, "stds", MappingProxyType(dict(self.stds)))
        object.__setattr__(self, "verdicts", MappingProxyType(dict(self.verdicts)))

    def __reduce__(self) -> tuple[Any, ...]:
        # read-only mapping views do not pickle; rebuild from plain dicts
        return (
            type(self),
            (self.n_trials, self.last_trial, dict(self.importances), dict(self.stds),
             self.best_value, self.n_excluded, self.seconds, self.created, dict(self.verdicts),
             self.front_size, self.doubtful, self.flat_refits),
        )

    def best_text(self) -> str:
        """``"best 0.0123"``, or for the Pareto front ``"front of 12 trials"``: what the
        status lines print."""
        if self.front_size is not None:
            return f"front of {self.front_size} trial{'s' if self.front_size != 1 else ''}"
        return f"best {fmt_best(self.best_value)}"

    def __repr__(self) -> str:
        return f"ImportanceSnapshot(n_trials={self.n_trials}, {self.ranking_line(top=3)})"

    def ranking_line(self, top: int = 5) -> str:
        """``"lr 61.0 % ± 5.0 %, optimizer 20.0 % ± 4.0 % (uncertain), seed 0.0012 % ±
        0.0010 % (nothing), ..."`` for the ``top`` parameters, each share written as the
        report writes it (:func:`hpinsight._decisions.fmt_share`); effects
        indistinguishable from nothing say so. A doubtful capped refit (``doubtful``)
        gives ``"no clear signal among the best (10 of 12 refits find no signal)"``."""
        if self.doubtful:
            why = (no_signal_words(*self.flat_refits) if self.flat_refits[1]
                   else "too many refits find no signal")  # counts not given
            return f"{NO_CLEAR_SIGNAL} among the best ({why})"
        items = list(self.importances.items())
        marks = {"uncertain": " (uncertain)", "indistinguishable from nothing": " (nothing)",
                 "negligible": " (negligible)"}
        shown = ", ".join(f"{n} {fmt_share(m)} ± {fmt_share(self.stds[n])}"
                          f"{marks.get(self.verdicts.get(n, ''), '')}" for n, m in items[:top])
        rest = len(items) - top
        return shown + (f" (+{rest} more)" if rest > 0 else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "n_trials": self.n_trials,
            "last_trial": self.last_trial,
            "importances": dict(self.importances),
            "stds": dict(self.stds),
            "best_value": self.best_value,
            "n_excluded": self.n_excluded,
            "seconds": self.seconds,
            "created": self.created,
            "verdicts": dict(self.verdicts),
            "front_size": self.front_size,
            "doubtful": self.doubtful,
            "flat_refits": list(self.flat_refits),
        }


def compact_summary(
    snapshot: ImportanceSnapshot, limit: int = DISPLAY_LIMIT,
    decisions: Mapping[str, str] | None = None, decided_after: int | None = None,
) -> dict[str, Any]:
    """A JSON object whose serialization stays under ``limit`` characters.

    Importances are ``[mean, std]`` to 3 significant digits, a mean never rounded onto a
    threshold the decisions read (:func:`~hpinsight._shared.round_share`). ``decisions``
    (parameter to its decision's state, one of :data:`hpinsight._decision_result.STATES`,
    taken on the first ``decided_after`` trials) are shown under ``"decisions"``. The least important
    parameters are dropped from both (and counted in ``"more"``) if needed. A doubtful
    capped refit (:attr:`ImportanceSnapshot.doubtful`) says so under ``"no_clear_signal"``.
    """
    imp = {n: [round_share(m), round_share(snapshot.stds[n])]
           for n, m in snapshot.importances.items()}
    out: dict[str, Any] = {
        "n_trials": snapshot.n_trials,
        "n_excluded": snapshot.n_excluded,
        "best": snapshot.best_value,  # as the study has it (rounded, 1e6 + 0.0133 was 1e6)
        **({} if snapshot.front_size is None else {"front_size": snapshot.front_size}),
        "updated": snapshot.created,
        **({"no_clear_signal": True} if snapshot.doubtful else {}),
        "importance": imp,
    }
    states = None
    if decisions:
        states = {n: decisions[n] for n in imp if n in decisions}
        out["decided_after"] = decided_after
        out["decisions"] = states
    names = list(imp)
    while len(json.dumps(out)) > limit and names:
        name = names.pop()
        del imp[name]
        if states is not None:
            states.pop(name, None)
        out["more"] = len(snapshot.importances) - len(names)
    return out


@dataclass(frozen=True, slots=True)
class RefitOptions:
    """What every live refit is asked for: the options both callbacks and ``hpinsight
    watch`` share, validated once by :meth:`checked` (see the callbacks for each one's
    meaning)."""

    every_n_trials: int = 10
    min_trials: int = 20
    surrogate: GP | Forest = field(default_factory=GP)
    seed: int | None = None
    cap_quantile: float | None = None
    isolation: str = "process"
    regions: int = 0
    region_splits: int = 3

    @classmethod
    def checked(cls, func: str, **values: Any) -> RefitOptions:
        """Validate ``values`` (the options of the public ``func``) into options; a
        ``surrogate`` of None is ``GP()``."""
        given = cls(**{k: v for k, v in values.items() if k != "surrogate"})
        cap = given.cap_quantile
        return cls(
            every_n_trials=check_int(given.every_n_trials, "every_n_trials", func, minimum=1),
            min_trials=check_int(given.min_trials, "min_trials", func, minimum=2),
            surrogate=refuse_fitted(as_surrogate(values.get("surrogate"), func), func,
                                    "on the trials as they arrive"),
            seed=check_seed(given.seed, func),
            cap_quantile=None if cap is None else check_real(
                cap, "cap_quantile", func, low=0.0, high=1.0, low_open=True),
            isolation=check_choice(given.isolation, "isolation", func, ("process", "thread")),
            regions=check_int(given.regions, "regions", func, minimum=0),
            region_splits=check_int(given.region_splits, "region_splits", func, minimum=0),
        )

    def fanova_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`hpinsight.fanova` these options set."""
        return {"surrogate": self.surrogate, "seed": self.seed,
                "cap_quantile": self.cap_quantile}


class LiveFanova:
    """Fit fANOVA on a history and summarize it, in a child process or in this one.

    Parameters
    ----------
    options : RefitOptions
        ``surrogate``, ``seed`` and ``cap_quantile`` go to
        :func:`hpinsight.fanova`. ``isolation="process"`` computes in a
        :class:`~._worker.RefitWorker`; a child that dies is replaced by a new one (a
        warning says so), and only when the new one fails too does every later fit run
        in this process. ``regions``: after each fit, also compute the
        PDPs of this many of the most important parameters, split them into
        confidence regions (``region_splits`` splits) and keep the incumbent's region
        (see :func:`._tasks.confidence_regions`).
    logger : logging.Logger
    """

    def __init__(self, options: RefitOptions, *, logger: logging.Logger) -> None:
        self.options: dict[str, Any] = options.fanova_options()
        self.logger = logger
        self.regions = options.regions
        self.region_splits = options.region_splits
        self.latest_regions: Mapping[str, RegionsResult] = MappingProxyType({})
        self.latest_incumbent: Mapping[str, Any] = MappingProxyType({})
        self._worker = RefitWorker() if options.isolation == "process" else None
        self._last_n: int | None = None

    @property
    def worker_pid(self) -> int | None:
        """Process id of the child process while it runs."""
        return None if self._worker is None else self._worker.pid

    def close(self) -> None:
        """Stop the child process, if any."""
        if self._worker is not None:
            self._worker.close()

    def worth_fitting(self, history: TrialHistory, min_trials: int, unit: str = "trials") -> bool:
        """Whether ``history`` brings news: enough entries, more than the last fit, not constant.

        A constant objective is logged (once per count) instead of fitted.
        """
        n = history.n_trials
        if n < min_trials or n == self._last_n:
            return False
        self._last_n = n
        if np.ptp(history.y) == 0.0:
            self.logger.info("hpinsight: %d %s, all with the same value; nothing to rank yet.",
                             n, unit)
            return False
        return True

    def fit(self, history: TrialHistory) -> tuple[FanovaResult, ImportanceSnapshot]:
        """fANOVA of ``history`` and the snapshot of its main effects.

        Over all trials, the pairs are analysed where a report's would be
        (:func:`~hpinsight._decisions.decision_order`): the decisions a note or a summary
        draws from this fit are then the report's on the same trials (a parameter that
        matters through a pair was "not resolved yet" in the note and "matters" on the
        page). A capped refit analyses main effects, as a report's capped analysis does.
        """
        started = time.perf_counter()
        order = decision_order(len(history.space)) if self.options["cap_quantile"] is None else 1
        return self.summarize(history, self._run("fanova", history, max_order=order, **self.options),
                              started)

    def rank(self, history: TrialHistory) -> ImportanceSnapshot:
        """The snapshot of a fit of ``history`` that is not published as the latest one
        (no confidence regions are refreshed)."""
        started = time.perf_counter()
        return self.summarize(history, self._run("fanova", history, **self.options), started,
                              regions=False)[1]

    def summarize(
        self, history: TrialHistory, result: FanovaResult, started: float | None = None,
        *, regions: bool = True,
    ) -> tuple[FanovaResult, ImportanceSnapshot]:
        """``result`` and the snapshot of its main effects (``started``: a perf_counter).

        With ``regions`` (and the fitter's ``regions``), the incumbent's confidence regions
        are refreshed too.
        """
        started = time.perf_counter() if started is None else started
        ranking = result.ranking(order=1)
        if regions and self.regions and not result.is_constant:
            incumbent = dict(history.best()[1])
            trees = self._run("regions", result, top=self.regions,
                              max_splits=self.region_splits, seed=self.options["seed"])
            self.latest_regions = MappingProxyType(dict(trees))
            self.latest_incumbent = MappingProxyType(incumbent)
        snapshot = ImportanceSnapshot(
            n_trials=history.n_trials,
            last_trial=max(history.trial_ids),
            importances={i.params[0]: max(0.0, float(i.mean)) for i in ranking},
            stds={i.params[0]: float(i.std) for i in ranking},
            verdicts={i.params[0]: i.verdict for i in ranking},
            best_value=history.best()[2],
            n_excluded=history.n_excluded,
            seconds=time.perf_counter() - started,
            front_size=int(np.count_nonzero(history.y == 0.0)) if history.is_front else None,
            doubtful=result.cap_value is not None and result.signal_doubtful,
            flat_refits=(result.n_flat_refits, result.n_refits),
        )
        return result, snapshot

    def suggest_subspace(self, history: TrialHistory | Mapping[str, TrialHistory],
                         **kwargs: Any) -> SubspaceResult:
        """:func:`~hpinsight.suggest_subspace` of ``history`` (or of each objective's
        history, decided for every objective), with this fitter's model options."""
        opts = {key: self.options[key] for key in ("surrogate", "seed")}
        opts.update(kwargs)
        return self._run("subspace", history, **opts)  # type: ignore[no-any-return]

    def subspace_and_spans(
        self, history: TrialHistory, **kwargs: Any
    ) -> tuple[SubspaceResult, dict[str, Span]]:
        """:meth:`suggest_subspace` of one objective's ``history`` and, from the same fit,
        where the main effect of each parameter it finds to matter is best
        (:func:`hpinsight._subspace.subspace_and_spans`)."""
        opts = {key: self.options[key] for key in ("surrogate", "seed")}
        opts.update(kwargs)
        return self._run("subspace_spans", history, **opts)  # type: ignore[no-any-return]

    def _run(self, task: str, *args: Any, **kwargs: Any) -> Any:
        worker = self._worker
        if worker is not None:
            try:
                try:
                    out, caught = worker.run(task, *args, **kwargs)
                except WorkerError as exc:  # killed, out of memory: a new child, once
                    self.logger.warning("hpinsight: %s; starting a new refit process.", exc)
                    out, caught = worker.run(task, *args, **kwargs)
            except WorkerError as exc:  # a new one failed too: this process from now on
                self._worker = None
                self.logger.warning(
                    "hpinsight: %s again; refitting in a thread of this process from now on "
                    "(results are the same, the optimization may run slower).", exc,
                )
            else:
                return self._logged(out, caught)
        # in this process: the package's warnings are logged, as the refit process's are
        # (never given from this thread, whose filters are the user's process's)
        with collected() as warned:
            out = TASKS[task](*args, **kwargs)
        return self._logged(out, [f"{category.__name__}: {message}" for category, message in warned])

    def _logged(self, out: Any, messages: list[str]) -> Any:
        """``out``, once the warnings of the refit that made it are logged."""
        for message in messages:
            self.logger.info("hpinsight: refit: %s", message)
        return out


Outcome = tuple["FanovaResult", ImportanceSnapshot]


class BackgroundRefits:
    """Run the newest requested refit on one background thread.

    ``compute(job)`` returns ``(result, snapshot)`` or None (nothing to do);
    it may raise: the exception is logged and kept in :attr:`errors`, never
    passed on. A job requested while another runs replaces any older pending
    job, so a slow refit never queues up work.

    The thread is not a daemon and ends whenever it is idle (a request starts a new
    one). So a program that ends without ``close()`` waits for the refit in progress
    only, takes no new one (none starts once the main thread has finished), and no
    refit is cut off half-way by the interpreter tearing down the pipe to the refit
    process under it.

    Parameters
    ----------
    compute : callable
    logger : logging.Logger
    name : str
        Name of the thread.
    """

    def __init__(
        self, compute: Callable[[Any], Outcome | None], logger: logging.Logger, name: str
    ) -> None:
        self._compute = compute
        self._logger = logger
        self._name = name
        self._cond = threading.Condition()
        self._pending: Any = None
        self._running = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._latest: FanovaResult | None = None
        self._history: list[ImportanceSnapshot] = []
        #: The refit thread's CPU clock; a test may replace it with a clock of its own.
        self.cost_clock: Callable[[], float] = time.thread_time
        self._busy = 0.0  # CPU seconds this process's refit thread spent in finished jobs
        self._last_cost: float | None = None  # ... in the newest one
        self._errors: collections.deque[Exception] = collections.deque(maxlen=_MAX_ERRORS)
        self._on_idle: Callable[[], None] | None = None  # set by stop() during a job

    @property
    def latest(self) -> FanovaResult | None:
        with self._cond:
            return self._latest

    @property
    def history(self) -> tuple[ImportanceSnapshot, ...]:
        with self._cond:
            return tuple(self._history)

    @property
    def errors(self) -> tuple[Exception, ...]:
        with self._cond:
            return tuple(self._errors)

    @property
    def closed(self) -> bool:
        with self._cond:
            return self._closed

    @property
    def busy_seconds(self) -> float:
        """CPU time the refit thread spent in this process on finished jobs: reading the
        trials, talking to the refit process, or (in a thread) the whole refit. That is
        what competes with the study for the interpreter; a refit process's own work runs
        on another core at low priority."""
        with self._cond:
            return self._busy

    @property
    def last_cost(self) -> float | None:
        """``busy_seconds`` of the newest finished job (None before the first)."""
        with self._cond:
            return self._last_cost

    def request(self, job: Any) -> None:
        """Queue ``job`` (replacing a pending one) and make sure the thread runs."""
        with self._cond:
            if self._closed or job is None:
                return
            self._pending = job
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=False)
                self._thread.start()
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no job runs or is pending; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._running:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def close(self, timeout: float | None = None) -> bool:
        """:meth:`wait`, then stop the thread; later requests are ignored."""
        done = self.wait(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and done:
            thread.join(timeout)
        return done

    def stop(self, on_idle: Callable[[], None]) -> bool:
        """Stop without waiting: drop a pending job, ignore later requests, and call
        ``on_idle`` once no job runs (now, or when the running one ends, from its thread).

        Returns
        -------
        bool
            True if no job was running (``on_idle`` has run), False if one still runs.
        """
        with self._cond:
            self._closed = True
            self._pending = None
            self._cond.notify_all()
            if self._running:
                self._on_idle = on_idle
                return False
        on_idle()
        return True

    def record(self, exc: Exception, when: str, *, log: bool = True) -> None:
        """Log ``exc`` as a warning (unless not ``log``) and keep it in :attr:`errors`
        (never raises)."""
        try:
            with self._cond:
                self._errors.append(exc)
            if not log:
                return
            self._logger.warning("hpinsight: %s: %s: %s (the optimization goes on)", when,
                                 type(exc).__name__, exc)
            self._logger.debug("hpinsight: traceback", exc_info=exc)
        except Exception:  # pragma: no cover - logging itself failed; stay silent
            pass

    def _work(self) -> None:
        while True:
            with self._cond:
                if not threading.main_thread().is_alive():
                    self._pending = None  # the program has ended: no new refit
                if self._pending is None:
                    self._thread = None  # idle: end; the next request starts a thread
                    self._cond.notify_all()
                    on_idle, self._on_idle = self._on_idle, None
                    break
                job, self._pending = self._pending, None
                self._running = True
            started = self.cost_clock()
            try:
                out = self._compute(job)
                if out is not None:
                    with self._cond:
                        self._latest = out[0]
                        self._history.append(out[1])
            except Exception as exc:
                self.record(exc, "while refitting importances")
            finally:
                with self._cond:
                    self._running = False
                    self._last_cost = self.cost_clock() - started
                    self._busy += self._last_cost
                    self._cond.notify_all()
        if on_idle is not None:  # stop() came while the job ran: its clean-up is ours
            try:
                on_idle()
            except Exception as exc:
                self.record(exc, "while stopping the refit process")


class LiveResults:
    """What a live callback exposes, read from its :class:`BackgroundRefits` and fitter.

    A live callback is also a context manager: leaving the ``with`` block calls its
    ``close()``, which returns at once and stops the refit process once the refit in
    progress, if any, ends.
    """

    _refits: BackgroundRefits
    _fitter: LiveFanova

    def wait(self, timeout: float | None = None) -> bool:
        raise NotImplementedError

    def close(self, wait: bool | float = False) -> bool:
        """Stop refitting and free the refit process; later trials are ignored.

        Parameters
        ----------
        wait : bool or float, default=False
            False: return at once (in well under a second). A pending refit is dropped;
            one in progress finishes in the background and then stops the refit process
            (a program that ends waits for it; :attr:`latest` may be one refit behind
            the last trials). True, or a number of seconds: first :meth:`wait` (with
            the Optuna callback, a last refit on the trials since the latest one), then
            stop; a number bounds the wait.

        Returns
        -------
        bool
            True if nothing runs any more; False if a refit still runs (``wait=False``,
            or the wait timed out).
        """
        if not isinstance(wait, bool | int | float):
            raise InvalidArgumentTypeError(
                f"The 'wait' parameter of close must be a bool or a number of seconds. "
                f"Got {type(wait).__name__} instead.")
        if not isinstance(wait, bool) and not wait >= 0:
            raise InvalidArgumentError(
                f"The 'wait' parameter of close must be a number of seconds >= 0 (or True to "
                f"wait as long as it takes). Got {wait!r} instead.")
        self._before_close()
        if wait is False:
            return self._refits.stop(self._fitter.close)
        timeout = None if wait is True else float(wait)
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self.wait(timeout):
            # the wait bounds the whole close: past it, as close() without waiting (the
            # pending refit dropped, the refit process stopped once the running one ends);
            # the queue's own close waited as long again, and then left the process running
            return self._refits.stop(self._fitter.close)
        done = self._refits.close(None if deadline is None
                                  else max(deadline - time.monotonic(), 0.0))
        if done:
            self._fitter.close()
        return done

    def _before_close(self) -> None:
        """What a callback does first when it closes (nothing by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def latest(self) -> FanovaResult | None:
        """The newest fANOVA result (None before the first refit)."""
        return self._refits.latest

    @property
    def history(self) -> tuple[ImportanceSnapshot, ...]:
        """Every refit so far, oldest first: trial count and importances."""
        return self._refits.history

    @property
    def errors(self) -> tuple[Exception, ...]:
        """Exceptions caught instead of raised (the last 100)."""
        return self._refits.errors

    @property
    def region_trees(self) -> Mapping[str, RegionsResult]:
        """Confidence-split PDPs of the most important parameters, from the newest refit.

        Empty unless the callback was made with ``regions=k``.
        """
        return self._fitter.latest_regions

    @property
    def incumbent_regions(self) -> dict[str, RegionNode]:
        """Per parameter in :attr:`region_trees`: the region holding the incumbent.

        Each is a :class:`~hpinsight.results.RegionNode` with the regional PDP and its
        band (``mean``, ``std``, ``mean_confidence``). The incumbent is routed
        as it is: no split on its way uses a parameter it has inactive (see
        :meth:`RegionsResult.leaf_for <hpinsight.results.RegionsResult.leaf_for>`), so none is
        given a value.
        """
        trees, incumbent = self._fitter.latest_regions, self._fitter.latest_incumbent
        return {name: tree.leaf_for(incumbent) for name, tree in trees.items()}
