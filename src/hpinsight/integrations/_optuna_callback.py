"""Live importances during ``study.optimize``: a callback that refits off the optimization thread."""

from __future__ import annotations

import functools
import math
import numbers
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import optuna

from .._validation import (
    MODEL_KEYWORDS,
    check_int,
    check_mapping,
    check_objective,
    check_real,
    moved_keywords,
)
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..surrogates import GP, Forest
from ._dashboard import check_publish
from ._live import BackgroundRefits, LiveResults, RefitOptions
from ._optuna_live import Refitter
from ._optuna_shrink import ShrinkingSampler

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

    from .._subspace import SubspaceResult


__all__ = ["ImportanceCallback"]

#: The in-process cost expected of a first refit, in CPU seconds (starting the refit process
#: and reading the trials measured 0.03-0.05 s), before a refit has been measured.
FIRST_REFIT_COST = 0.05
_logger = optuna.logging.get_logger("optuna.hpinsight")


class ImportanceCallback(LiveResults):
    """Refit fANOVA importances while an Optuna study runs, without slowing it down.

    Add it to ``study.optimize(..., callbacks=[cb])``; one callback follows one study
    (the first it is handed: the trials of another are ignored, with a warning). Every
    ``every_n_trials`` COMPLETE trials (once there are ``min_trials``) it asks a background
    thread to refit on all COMPLETE trials of the study so far. One refit runs
    at a time; a request made while one runs replaces any older pending one.
    Each refit updates :attr:`latest` and :attr:`history`, logs a one-line
    ranking through Optuna's logger, and (``publish="attrs"``) stores a compact
    JSON summary in the study user attribute ``"hpinsight:importance"``, where
    other processes see it; ``publish="dashboard"`` also shows the importance
    figure and a short summary in optuna-dashboard.

    The callback never raises into Optuna: a failure is logged and kept in
    :attr:`errors`, and the study goes on. Calling it costs microseconds.

    Parameters
    ----------
    every_n_trials : int, default=10
        Refit after this many more COMPLETE trials, as long as refits stay within
        ``max_refit_share`` of the study's time.
    min_trials : int, default=20
        No refit before the study has this many COMPLETE trials.
    surrogate : GP or Forest, default=GP()
        The model each refit decomposes (see :func:`hpinsight.fanova`): ``hp.GP()``,
        whose importances hold on the clustered trials a sampler produces, or the
        paper's random forest, ``hp.Forest(n_trees=64)`` (its ``n_jobs``: cores for
        fitting; the default 1 leaves the others to the study).
    seed : int, optional
        Model seed; with a seed, a refit equals ``hp.fanova(...)`` on the
        same trials with that seed (over all trials with ``max_order=2`` for 2 to 12
        parameters, as a report analyses them; the main effects are the same either way).
    objective : int or str, optional
        The objective of a multi-objective study to analyse: an index, a name
        (``"values_1"`` or a metric name) or ``"front"``, the default there: reaching
        the Pareto front, analysed as each trial's share of trials that dominate it (as
        :class:`FanovaImportanceEvaluator` does). Or use ``target``. Whichever value is
        analysed, shrinking a study of several objectives decides over every objective:
        ``shrink_to="auto"`` fixes a parameter only when it is safe to fix for each one
        (at one common value, each cost against that objective's own margin), and
        ``shrink_to=k`` is refused (one ranking would fix what another objective needs).
    target : callable, optional
        ``target(frozen_trial) -> float``. Better is the study's direction (with several
        objectives: that of the objective the target reproduces, else "minimize").
    cap_quantile : float in (0, 1], optional
        Importance among the best trials: cap the objective at this quantile. Its
        verdicts call no effect "indistinguishable from nothing": that takes the
        analysis of all trials beside it (:meth:`~hpinsight.results.FanovaResult.beside`).
    publish : {"attrs", "dashboard"} or None, default="attrs"
        Where each refit's summary goes. ``"attrs"``: the study's user attribute
        :attr:`summary_key`. ``"dashboard"``: that, and into optuna-dashboard (the
        ``dashboard`` extra, checked here): the importance bars with their std as a
        user-defined figure, and the study's note, whose top it keeps to a short
        summary (what matters, what you can stop tuning or not yet, the trials behind
        it, the model's fit; a user's text below it is kept). Both are replaced at each
        refit, from the refit thread; a failure is logged once and kept in
        :attr:`errors`. None: nowhere. True and False mean ``"attrs"`` and None.
    shrink_to : int or "auto", optional
        After ``shrink_after`` trials, keep the ``shrink_to`` most important
        parameters free and fix the others, to their ``defaults`` value if
        given, else to the best trial's value; decided once per study. With
        ``"auto"``, fix exactly the parameters whose one decision
        (:func:`hpinsight.suggest_subspace`) is "safe to fix": no effect
        distinguishable from nothing and a cost of fixing within the margin. They
        are fixed at their ``defaults`` value, else the space's, else the best
        trial's (so the best configuration stays reachable). Its first decision also
        narrows the parameters that matter to the range of the best trials
        (``narrow_quantile``; with more than 10 parameters, the first decision that
        finds one that matters, no later than the first that can fix; see
        ``shrink_after``). ``"auto"``
        checks again at every multiple of ``shrink_after``: it fixes what has become
        safe to fix, and releases a fixed parameter whose effect is resolved or whose
        cost exceeds the margin. The exploring trials of the :class:`ShrinkingSampler`
        give those checks data on the fixed and narrowed parameters. A parameter once
        released is never fixed again. The first check, and each before the first that
        can fix, records "keep" when it neither fixes nor narrows anything;
        :attr:`subspace` holds the latest answer, with reasons.
        Takes effect in studies whose sampler is a :class:`ShrinkingSampler`.
    shrink_after : int, default=50
        Decisions fall due at trial counts: the first when this many trials have
        completed, and with ``"auto"`` at every multiple of ``shrink_after`` after it.
        ``"auto"`` fixes nothing before there are ``min(5 d, max(50, d**2 / 8))``
        trials of d parameters (nothing is safe to fix on fewer: they cannot show a
        small effect that is costly near the optimum) and also decides then; its
        decisions before can only narrow (``narrow_quantile``), and fall due from 2.5
        trials per parameter on. With the default it decides at 50, 100, 150, ... with
        up to 20 parameters, fixing from 50; at 100, 113, 150, ... with 30, and at 100,
        150, 200, ... with 40, fixing from 113 and 200
        (without narrowing, nothing is decided before then). A due decision is taken
        on the trials numbered below the one that just finished, and written before the
        next trial is sampled: with a :class:`ShrinkingSampler`, as the next trial
        starts (in its ``before_trial``, so a decision due at the study's last trial is
        not taken and costs nothing, and the wait counts in the duration of the trial it
        precedes); with another sampler, in the callback before it returns. The study
        waits for that fit, whose
        cost grows with the trials and the parameters: medians of 5 s at trial 50 and
        15-20 s at 200 on 12 and 15 parameters, 15 s at 100 and 47 s at 200 on 30, two
        studies at once on 2 cores (``benchmarks/bench_shrink.py``, 20 seeds). On an
        objective of seconds that is much of the study's time; on one of minutes, little.
        The next trial is then sampled under the
        decision (with ``n_jobs`` workers, at most ``n_jobs - 1`` trials already running
        are not; and the first decision that can fix waits until no trial numbered below
        it runs). So a seeded study takes the same decisions at the same trials however
        fast the machine. Nothing is decided once :meth:`close` has begun.
    defaults : mapping of str to value, optional
        Values to fix parameters to instead of the best trial's.
    narrow_quantile : float in (0, 1], "auto" or None, default="auto"
        Also narrow kept numerical parameters to the range their values span among
        the best ``narrow_quantile`` fraction of trials (at least two). ``"auto"``:
        with ``shrink_to="auto"``, the parameters that matter (a resolved effect), to
        the range of the best quarter of the trials, at the first decision (see
        ``shrink_to``); with an integer ``shrink_to``, nothing. None: never. A
        heuristic of ours, not from the fANOVA paper: it speeds up the search when
        the good region is one basin, and can exclude a second one, so a range is
        widened again when an exploring trial (``ShrinkingSampler``) ran the
        parameter outside it and did better than the model predicts, as a fixed
        parameter is released. With ``shrink_to="auto"`` only what matters is
        narrowed: where an effect is not resolved, the best trials' spread in it
        follows the others' effects, and on one objective each range is widened to
        hold where the model finds the parameter's main effect best (the best trials
        can lie on one side of an optimum the optimizer has not reached yet), with
        that value at least a quarter of the range's width from either edge (a
        sampler restarted in the range did not reach an optimum at its edge). A
        narrowed parameter a later check finds safe to fix is fixed instead.
        ``benchmarks/README.md`` measures narrowing against fixing alone.
    risk_margin : float, default=0.05
        With ``shrink_to="auto"``: the most fixing a parameter may cost, as a fraction of
        the spread of the trials near the best at the decision (best trial to the 10 %
        quantile; ``suggest_subspace``'s ``risk_margin``): what the study can still gain
        where it searches now.
    regions : int, default=0
        After each refit, also compute the PDPs (with confidence bands) of
        this many of the most important parameters, split each into
        confidence regions (Moosbauer et al. 2021) and keep the region of the
        best trial: :attr:`incumbent_regions`, :attr:`region_trees`.
    region_splits : int, default=3
        Splits of each of those trees.
    isolation : {"process", "thread"}, default="process"
        Where refits run. ``"process"``: in one child process (started at
        the first refit, stopped by :meth:`close`), so the study's own
        Python code never waits for the refit; reading the trials and
        calling ``target`` stay in this process. ``"thread"``: in a thread
        of this process, which competes with the sampler for the
        interpreter lock (a TPE study measured 1.8 times slower) and, while
        a refit runs, holds the process's BLAS libraries at one thread (the
        limit is the process's; the objective's own linear algebra then runs
        on one thread too). A child
        process that dies is replaced by a new one; if that fails too, refits
        continue in a thread. A warning says so either way.
    max_refit_share : float in (0, 1], default=0.1
        Refits may cost this process at most this share of the study's wall time so
        far (counted from the first trial the callback saw; the cost is the CPU time
        the refit thread spends here, which competes with the sampler, and the next
        refit is expected to cost what the last did, the first ``FIRST_REFIT_COST``).
        A refit that falls due earlier waits until the study has run long enough. On
        a cheap objective refits then come less often than ``every_n_trials`` (in a
        study of well under a second, not at all before :meth:`close`); on an
        expensive one the share is never reached. 1.0 turns the budget off.

    Attributes
    ----------
    latest : FanovaResult or None
        The latest refit, with the pairs where a report analyses them (2 to 12
        parameters), so ``hp.suggest_subspace(history, fitted=cb.latest)`` decides as
        a report of the same trials would.
    history : tuple of ImportanceSnapshot
    errors : tuple of Exception
    incumbent_regions : dict of str to RegionNode
    region_trees : mapping of str to RegionsResult

    Examples
    --------
    >>> import optuna
    >>> from hpinsight.integrations.optuna import ImportanceCallback
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0)
    >>> study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    >>> study.optimize(
    ...     lambda t: t.suggest_float("x", -1, 1) ** 2 + 0.01 * t.suggest_float("y", -1, 1),
    ...     n_trials=40, callbacks=[cb],
    ... )
    >>> cb.wait()
    True
    >>> [s.n_trials for s in cb.history][-1]
    40
    >>> cb.latest.ranking()[0].params
    ('x',)
    >>> cb.close()
    True
    """

    @moved_keywords(MODEL_KEYWORDS)
    def __init__(
        self,
        every_n_trials: int = 10,
        min_trials: int = 20,
        *,
        surrogate: GP | Forest | None = None,
        seed: int | None = None,
        objective: int | str | None = None,
        target: Callable[[FrozenTrial], float] | None = None,
        cap_quantile: float | None = None,
        publish: Literal["attrs", "dashboard"] | bool | None = "attrs",
        shrink_to: int | Literal["auto"] | None = None,
        shrink_after: int = 50,
        defaults: Mapping[str, Any] | None = None,
        narrow_quantile: float | Literal["auto"] | None = "auto",
        risk_margin: float = 0.05,
        isolation: Literal["process", "thread"] = "process",
        regions: int = 0,
        region_splits: int = 3,
        max_refit_share: float = 0.1,
    ) -> None:
        func = "ImportanceCallback"
        if type(every_n_trials).__module__.startswith("optuna"):
            # optimize(callbacks=[ImportanceCallback]) calls the class with (study, trial)
            raise InvalidArgumentTypeError(
                f"{func} was called with an Optuna {type(every_n_trials).__name__} as "
                "every_n_trials: pass an instance, not the class, in callbacks: "
                "study.optimize(objective, callbacks=[ImportanceCallback()]).")
        options = RefitOptions.checked(
            func, every_n_trials=every_n_trials, min_trials=min_trials, surrogate=surrogate,
            seed=seed, cap_quantile=cap_quantile, isolation=isolation, regions=regions, region_splits=region_splits)
        self.every_n_trials = options.every_n_trials
        self.min_trials = options.min_trials
        self.max_refit_share = check_real(max_refit_share, "max_refit_share", func, low=0.0,
                                          high=1.0, low_open=True)
        if target is not None and not callable(target):
            raise InvalidArgumentTypeError(
                f"The 'target' parameter of {func} must be a callable taking a FrozenTrial. "
                f"Got {type(target).__name__} instead."
            )
        if target is not None and objective is not None:
            # the target was analysed and the objective ignored without a word
            raise InvalidArgumentError(
                f"{func} takes objective= or target=, not both: objective={objective!r} picks "
                "one of the study's values, target computes one from each trial. Pass one of "
                "them.")
        self._refitter = Refitter(
            options,
            objective=check_objective(objective, func),
            target=target,
            publish=check_publish(publish, func),
            shrink_to=_check_shrink_to(shrink_to, func),
            shrink_after=check_int(shrink_after, "shrink_after", func, minimum=2),
            defaults=_check_defaults(defaults, func),
            narrow_quantile=_check_narrow_quantile(narrow_quantile, func),
            risk_margin=check_real(risk_margin, "risk_margin", func, low=0.0, high=math.inf),
            logger=_logger,
            on_error=lambda exc, when, log: self._refits.record(exc, when, log=log),
        )
        _check_shrink_options(func, self._refitter)
        self._fitter = self._refitter.fitter
        self._refits = BackgroundRefits(self._refitter.refit, _logger, "hpinsight-importance")
        self._lock = threading.Lock()
        self._study: optuna.Study | None = None
        self._seen = 0  # COMPLETE trials this callback was told about
        # COMPLETE trials the study had when this callback first saw one of its trials: a
        # resumed study (40 trials, then more) decided at shrink_after trials of this
        # session (trial 90), not of the study (trial 50)
        self._before: int | None = None
        # set while no decision is being taken: with n_jobs > 1 one thread takes a due
        # decision, and the others wait for it at the end of their trials, so that no
        # trial starts unrestricted meanwhile and no second thread takes it again
        self._no_decision = threading.Event()
        self._no_decision.set()
        # the ShrinkingSampler holding a decision this callback found due, until the next
        # trial starts and takes it (see feed)
        self._deferred: ShrinkingSampler | None = None
        self._requested_at = 0  # value of _seen at the last refit request
        self._warned_sampler = False
        self._warned_closed = False
        self._checked: dict[int, bool] = {}  # per study (by id): can it be analysed?
        #: the name of the study this callback follows: the first it was handed
        self._followed: str | None = None
        self._first_seen: float | None = None  # monotonic time of the first trial told
        #: The study's clock; a test may replace it with a clock of its own.
        self.clock: Callable[[], float] = time.monotonic

    def __repr__(self) -> str:
        return (
            f"ImportanceCallback(every_n_trials={self.every_n_trials}, "
            f"min_trials={self.min_trials}, refits={len(self.history)})"
        )

    # ---------------------------------------------------------------- public state
    @property
    def subspace(self) -> SubspaceResult | None:
        """With ``shrink_to="auto"``: the latest subspace suggestion, with its reasons."""
        return self._refitter.subspace

    @property
    def summary_key(self) -> str:
        """The study user attribute the summary is published under: ``SUMMARY_KEY``, or
        ``SUMMARY_KEY + ":objective 1"`` with ``objective=1`` (``":target"`` with
        ``target=``), so that callbacks on different objectives keep their own."""
        return self._refitter.summary_key

    # ---------------------------------------------------------------- feeding
    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Optuna's callback hook; see :meth:`feed`."""
        self.feed(study, trial)

    def feed(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Tell the callback a trial finished (for ask-and-tell loops).

        Examples
        --------
        >>> import optuna
        >>> from hpinsight.integrations.optuna import ImportanceCallback
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> cb = ImportanceCallback(every_n_trials=5, min_trials=10, seed=0)
        >>> study = optuna.create_study()
        >>> for _ in range(10):
        ...     trial = study.ask()
        ...     value = (trial.suggest_float("x", 0, 1) - 0.3) ** 2
        ...     cb.feed(study, study.tell(trial, value))
        >>> cb.close(wait=True)  # a last refit on all 10 trials, waited for
        True
        >>> cb.history[-1].n_trials
        10
        """
        try:
            if trial.state != optuna.trial.TrialState.COMPLETE or not self._usable(study):
                return
            if self._refits.closed:  # handed to a resumed study after close(): say so once
                if not self._warned_closed:
                    self._warned_closed = True
                    _logger.warning(
                        "hpinsight: this ImportanceCallback was closed, so it ignores trial %d "
                        "and every later one (no refits, no shrink decisions). Pass a new "
                        "ImportanceCallback to the next study.optimize call.", trial.number)
                return
            with self._lock:
                self._study = study
                self._seen += 1
                n = max(self._seen, trial.number + 1)
                now = self.clock()
                if self._first_seen is None:
                    self._first_seen = now
                if self._before is None and self._refitter.next_decision is not None:
                    self._before = _complete_before(study, trial.number)
                done = self._seen + (self._before or 0)  # the study's, for the schedule
                pending = self._refitter.next_decision
                if pending is not None and done < pending <= trial.number + 1:
                    # the trial numbers reached a decision point that this callback's
                    # count has not: other processes' trials (one callback per worker)
                    # or failed and pruned ones. The study's count decides; a callback
                    # that counted only its own decided N times late with N workers
                    done = max(done, _complete_before(study, trial.number) + 1)
                deciding = not self._no_decision.is_set()  # by another thread
                decide = (not deciding and self._deferred is None
                          and self._refitter.decision_due(done))
                # with a ShrinkingSampler the decision waits for the next trial to start
                # (its before_trial): one due at the study's last trial is never taken
                sampler = study.sampler if decide else None
                defer = sampler if isinstance(sampler, ShrinkingSampler) else None
                if defer is not None:
                    self._deferred = defer
                elif decide:
                    self._no_decision.clear()
                seen = done
                due = (n >= self.min_trials and self._seen - self._requested_at >= self.every_n_trials
                       and self._within_budget(now))
                if due:
                    self._requested_at = self._seen
            self._check_sampler(study)
            if defer is not None:
                defer._defer(self, study.study_name, functools.partial(
                    self._decide_deferred, before=trial.number + 1, n_complete=seen))
            elif decide:
                # in this thread, before the next trial is sampled: a decision point waits
                # for its fit, so the same seed gives the same decisions at the same trials
                try:
                    self._refitter.decide_now(study, before=trial.number + 1, n_complete=seen)
                finally:
                    self._no_decision.set()
            elif deciding:
                self._no_decision.wait()
            if due or (decide and defer is None and self._refitter.dashboard is not None):
                # (the dashboard shows a decision from the refit thread, not from this one)
                self._refits.request(study)
        except Exception as exc:  # never into Optuna
            self._refits.record(exc, "while recording a finished trial or deciding")

    def _decide_deferred(self, study: optuna.Study, *, before: int, n_complete: int) -> None:
        """The decision :meth:`feed` found due, taken as the next trial starts (in the
        :class:`ShrinkingSampler`'s ``before_trial``, which every trial starting
        meanwhile waits for)."""
        try:
            self._refitter.decide_now(study, before=before, n_complete=n_complete)
            if self._refitter.dashboard is not None:  # shown from the refit thread
                self._refits.request(study)
        except Exception as exc:  # never into Optuna
            self._refits.record(exc, "while deciding")
        finally:
            with self._lock:
                self._deferred = None

    def _within_budget(self, now: float) -> bool:
        """Whether refits so far, and the next one, fit in ``max_refit_share`` of the study's
        time (the next one is expected to cost what the last one did)."""
        assert self._first_seen is not None
        if self.max_refit_share >= 1.0:
            return True  # no budget: every due refit is requested
        last = self._refits.last_cost
        expected = FIRST_REFIT_COST if last is None else last
        return (self._refits.busy_seconds + expected
                <= self.max_refit_share * (now - self._first_seen))

    def _usable(self, study: optuna.Study) -> bool:
        """Whether this callback can analyse ``study``: checked at the first trial, so that a
        study it cannot read (several objectives and no ``objective=``) is reported once,
        clearly, instead of failing at every refit."""
        with self._lock:  # trials finish in parallel with n_jobs > 1: one check, one message
            checked = self._checked.get(id(study))
            if checked is None and self._followed not in (None, study.study_name):
                # its schedule, history and decisions are the first study's: a second one's
                # trials were counted on, decided "after 30 trials", mixed into one history
                self._refits.record(InvalidArgumentError(
                    f"This ImportanceCallback follows study {self._followed!r}: its refits, "
                    "history and shrink decisions are that study's. Pass a new "
                    "ImportanceCallback to each study."),
                    f"the trials of study {study.study_name!r} are ignored")
                checked = self._checked[id(study)] = False
            if checked is None:
                from ..adapters._optuna import objective_names, value_getter

                self._followed = study.study_name
                try:
                    value_getter(
                        "ImportanceCallback", list(study.directions), target=self._refitter.target,
                        objective=self._refitter.objective, names=objective_names(study))
                    shrink = self._refitter.shrink_to
                    if len(study.directions) > 1 and shrink is not None and shrink != "auto":
                        raise InvalidArgumentError(
                            f"ImportanceCallback cannot shrink_to={shrink} on study "
                            f"{study.study_name!r}, which has {len(study.directions)} "
                            "objectives: keeping the top parameters of one ranking would fix "
                            "parameters another objective needs. Pass shrink_to='auto', which "
                            "fixes only what is safe to fix for every objective, or "
                            "shrink_to=None.")
                except (TypeError, ValueError) as exc:
                    self._refits.record(exc, f"study {study.study_name!r} cannot be analysed, so "
                                             "no refit will run")
                    checked = False
                else:
                    checked = True
                self._checked[id(study)] = checked
        return checked

    def refresh(self, study: optuna.Study | None = None) -> None:
        """Ask for a refit now (in the background), whatever the trial count."""
        with self._lock:
            study = study or self._study
            self._study = study
            self._requested_at = self._seen
        self._refits.request(study)

    def wait(self, timeout: float | None = None) -> bool:
        """Refit on trials that arrived since the last request, and wait until idle.

        Returns
        -------
        bool
            True if no refit is running or pending any more, False on timeout.
        """
        with self._lock:
            flush = self._study if self._seen > self._requested_at else None
            self._requested_at = self._seen
        self._refits.request(flush)
        return self._refits.wait(timeout)

    def _before_close(self) -> None:
        self._refitter.begin_close()  # the study is over: nothing is decided any more
        with self._lock:
            deferred, self._deferred = self._deferred, None
        if deferred is not None:  # due at the last trial: no trial came to act on it
            deferred._cancel(self)

    def release(self, study: optuna.Study, *, why: str = "released by the user") -> None:
        """Undo a shrink: later trials of ``study`` sample the full space again."""
        ShrinkingSampler.release(study, why=why)

    def _check_sampler(self, study: optuna.Study) -> None:
        if self._refitter.shrink_to is None or self._warned_sampler:
            return
        self._warned_sampler = True
        if not isinstance(study.sampler, ShrinkingSampler):
            _logger.warning(
                "hpinsight: shrink_to=%r is recorded in the study but this process's sampler "
                "(%s) ignores it; create the study with sampler=ShrinkingSampler(%s) to follow it.",
                self._refitter.shrink_to, type(study.sampler).__name__,
                type(study.sampler).__name__ + "(...)",
            )


def _complete_before(study: optuna.Study, number: int) -> int:
    """How many COMPLETE trials ``study`` holds besides trial ``number``."""
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    return sum(t.number != number for t in complete)


def _check_shrink_options(func: str, refitter: Refitter) -> None:
    """Refuse options of shrinking given where they do nothing: without ``shrink_to``
    (every one of them), or ``risk_margin`` with a fixed size (only ``"auto"`` reads it).
    Accepted, they were silently ignored."""
    given = [name for name, unset in (("shrink_after", refitter.shrink_after == 50),
                                      ("defaults", not refitter.defaults),
                                      ("narrow_quantile",
                                       not isinstance(refitter.narrow_quantile, float)),
                                      ("risk_margin", refitter.risk_margin == 0.05)) if not unset]
    if refitter.shrink_to is None and given:
        raise InvalidArgumentError(
            f"{func}: {', '.join(given)} only {'acts' if len(given) == 1 else 'act'} with "
            "shrink_to, which is not set, so "
            "nothing would be shrunk; pass shrink_to='auto' (or how many parameters to "
            "keep), or leave them out.")
    if isinstance(refitter.shrink_to, int) and "risk_margin" in given:
        raise InvalidArgumentError(
            f"{func}: risk_margin is read by shrink_to='auto' only; with "
            f"shrink_to={refitter.shrink_to} the parameters outside the top ones are fixed "
            "whatever they cost. Pass shrink_to='auto', or leave risk_margin out.")


def _check_narrow_quantile(value: Any, func: str) -> float | Literal["auto"] | None:
    """``narrow_quantile`` checked: a fraction in (0, 1], ``"auto"`` (which the decision
    resolves, :meth:`Refitter._narrowing`) or None."""
    if value is None:
        return None
    if isinstance(value, str):
        if value != "auto":
            raise InvalidArgumentError(
                f"The 'narrow_quantile' parameter of {func} must be a float in (0, 1], 'auto' "
                f"or None. Got {value!r} instead.")
        return "auto"
    return check_real(value, "narrow_quantile", func, low=0.0, high=1.0, low_open=True)


def _check_defaults(value: Any, func: str) -> dict[str, Any]:
    """The values to fix parameters at, as a dict of their own (the user's stays as given)."""
    if value is None:
        return {}
    given = check_mapping(value, "defaults", func, of="parameter names to the values to fix "
                          "them at", example="{'lr': 0.01}")
    return {str(k): v for k, v in given.items()}


def _check_shrink_to(value: Any, func: str) -> int | Literal["auto"] | None:
    if value is None or value == "auto":
        return value  # type: ignore[no-any-return]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidArgumentError(
            f"The 'shrink_to' parameter of {func} must be a positive int (how many parameters "
            f"to keep) or 'auto' (keep what suggest_subspace keeps). Got {value!r} instead."
        )
    return int(value)
