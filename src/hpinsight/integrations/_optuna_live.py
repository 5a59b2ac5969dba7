"""One live refit of an Optuna study: history -> fANOVA -> snapshot, published and logged.

Shared by :class:`~hpinsight.integrations.optuna.ImportanceCallback` (which runs
it on a background thread) and ``hpinsight watch`` (which runs it in a poll
loop). It raises; the callers decide how failures are reported.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import optuna

from .._decision_result import (
    EXPLORED_Z,
    SINGLE,
    Explored,
    fmt_cost,
    min_trials_rule,
    min_trials_to_fix,
)
from .._history import TrialHistory
from .._joint import front_history
from .._shared import clip_text
from .._surrogate_risk import check_default_values
from ._dashboard import DashboardPublisher, ErrorHook, check_publish
from ._live import ImportanceSnapshot, LiveFanova, RefitOptions, compact_summary
from ._optuna_shrink import (
    read_decisions,
    read_ranges,
    read_restriction,
    record_decision,
    record_restriction,
    release,
)

if TYPE_CHECKING:
    from .._fanova_result import FanovaResult
    from .._subspace import Span, SubspaceResult
    from ..space import Float, Int, SearchSpace

__all__ = ["SUMMARY_KEY", "Refitter", "best_ranges"]

SUMMARY_KEY = "hpinsight:importance"
#: The decision points (completed trials) a process has taken, so that one callback per
#: worker process takes each once.
DECISION_POINTS_KEY = "hpinsight:decision_points"
#: ``narrow_quantile="auto"`` with ``shrink_to="auto"``: the parameters that matter are
#: narrowed to the range of this fraction of the best trials (``benchmarks/README.md``,
#: bench_shrink.py's ``narrow`` arm).
NARROW_QUANTILE = 0.25
#: Before a study can fix anything (:func:`min_trials_to_fix` trials), its
#: decisions narrow from this many trials per parameter on (bench_shrink.py, 20 seeds of
#: TPE and CMA-ES: narrowing at 2.5 per parameter on ``sparse20`` was 0.64-0.74 of the full
#: space's best at 100 trials; at 1.25 on ``sparse40``, worse in 3 of 5 TPE seeds).
NARROW_TRIALS_PER_PARAM = 2.5


class Refitter:
    """Refit fANOVA on a study and publish the outcome; the options of the callback."""

    def __init__(
        self,
        options: RefitOptions,
        *,
        objective: int | str | None,
        target: Callable[[Any], float] | None,
        publish: bool | Literal["attrs", "dashboard"] | None,
        shrink_to: int | Literal["auto"] | None,
        shrink_after: int,
        defaults: Mapping[str, Any],
        logger: logging.Logger,
        narrow_quantile: float | Literal["auto"] | None = None,
        risk_margin: float = 0.05,
        decide_in_refit: bool = False,
        on_error: ErrorHook | None = None,
    ) -> None:
        self.min_trials = options.min_trials
        self.objective = objective
        self.target = target
        self.summary_key = summary_key_for(objective, target)
        where = check_publish(publish, "Refitter")
        #: Whether the summary is stored in the study's user attribute.
        self.publish = where is not None
        #: With ``publish="dashboard"``: what saves the figure and note of each refit.
        self.dashboard = None if where != "dashboard" else DashboardPublisher(
            self.summary_key, on_error=on_error, logger=logger)
        #: Where a failure to store the summary goes (a read-only storage): the fit stands
        #: and is shown; without a hook, the failure is raised.
        self.on_error = on_error
        self._publish_failing = False  # said once per run of failures
        self.shrink_to = shrink_to
        self.shrink_after = shrink_after
        self.defaults = dict(defaults)
        self._told_defaults: set[str] = set()  # names of defaults no trial has, said once
        self.narrow_quantile = narrow_quantile
        self.risk_margin = risk_margin
        self.logger = logger
        self.fitter = LiveFanova(options, logger=logger)
        self._told_changed: set[str] = set()
        self._told_outside = 0  # trials left out for a value the space cannot hold, said
        self._told_starved = False  # enough trials finished, too few usable: said once
        #: The latest ``shrink_to="auto"`` suggestion (None before the first).
        self.subspace: SubspaceResult | None = None
        #: The snapshot of the latest refit (None before the first).
        self.last_snapshot: ImportanceSnapshot | None = None
        #: Why the latest :meth:`refit` fitted nothing though it could have news (too few
        #: trials with a finite value, or all with one value); None after a fit, or where
        #: nothing changed since the last one.
        self.idle_reason: str | None = None
        self._last_result: FanovaResult | None = None
        #: What the dashboard shows now: (snapshot, subspace) by identity.
        self._shown: tuple[int, int] | None = None
        #: Set by :meth:`begin_close`: the study is over, nothing more is decided.
        self.closing = False
        # held while a decision is taken and written, and by begin_close: once close()
        # began, nothing is decided
        self._decide_lock = threading.Lock()
        #: Completed trials at which the next shrink decision falls due (None: no more).
        #: ``shrink_to=k`` decides once, at ``shrink_after``; ``"auto"`` decides there and
        #: at every multiple of it, and also once there are min_trials_to_fix trials, the
        #: first decision that can fix; before that, only from
        #: NARROW_TRIALS_PER_PARAM trials per parameter on, and only with narrowing.
        self.next_decision: int | None = shrink_after if shrink_to is not None else None
        #: Whether :meth:`refit` takes due decisions itself (``hpinsight watch``, which
        #: cannot hold a study's trials back); the callback takes them in :meth:`decide_now`.
        self.decide_in_refit = decide_in_refit

    def refit(self, study: optuna.Study) -> tuple[FanovaResult, ImportanceSnapshot] | None:
        """Refit if there are enough new trials; None when there was nothing to do."""
        history, changed, outside = _history(study, self.target, self.objective)
        new = sorted(set(changed) - self._told_changed)
        if new:
            self._told_changed.update(new)
            self.logger.warning(
                "hpinsight: the distribution of %s changed during study %r; importances use "
                "the union of its ranges.", ", ".join(map(repr, new)), study.study_name,
            )
        if len(outside) > self._told_outside:  # said once, and again when more come
            from ..adapters._optuna import outside_text

            self._told_outside = len(outside)
            self.logger.warning("hpinsight: %s", outside_text(study.study_name, outside))
        if history is None or not self.fitter.worth_fitting(history, self.min_trials):
            # no new fit, but maybe a decision since the last one: the dashboard shows it
            self._show_in_dashboard(study, None if history is None else history.sampling)
            self.idle_reason = (_idle_reason(history, self.min_trials) if history is not None
                                else _empty_reason(study))
            if (history is not None and not self._told_starved
                    and history.n_trials < self.min_trials <= history.n_trials + history.n_excluded):
                # enough trials finished, but the values left most out (a target that
                # returns None): nothing was said while nothing was refit
                self._told_starved = True
                self.logger.warning(
                    "hpinsight: study %r: %s, so %d are usable and %d are needed to rank; no "
                    "refit runs until there are.", study.study_name, history.excluded_summary(),
                    history.n_trials, self.min_trials)
            return None
        self.idle_reason = None
        result, snapshot = self.fitter.fit(history)
        self.last_snapshot, self._last_result = snapshot, result
        if self.publish:
            self._store_summary(study, snapshot)
        self.logger.info(
            "hpinsight: %d trials (%s): %s", snapshot.n_trials, snapshot.best_text(),
            snapshot.ranking_line(),
        )
        if self.decide_in_refit and self.decision_due(history.n_trials):
            # a watcher decides on every trial it sees, at the latest point passed
            self._take_decision(study, history, history.n_trials)
        self._show_in_dashboard(study, history.sampling)
        return result, snapshot

    def _store_summary(self, study: optuna.Study, snapshot: ImportanceSnapshot) -> None:
        """Publish the summary; a failure (the storage refuses writes) goes to
        ``on_error``, once per run of failures, and the fit it summarises stands."""
        try:
            _publish(study, snapshot, self.summary_key, self.subspace)
        except Exception as exc:
            if self.on_error is None:
                raise
            first, self._publish_failing = not self._publish_failing, True
            self.on_error(exc, "while storing the importances in the study", first)
        else:
            self._publish_failing = False

    def _show_in_dashboard(self, study: optuna.Study, sampling: Any) -> None:
        """With ``publish="dashboard"``: show the latest fit, and the latest decision, in
        optuna-dashboard, unless it shows them already or another process published a
        summary on more trials (never raises)."""
        result, snapshot, subspace = self._last_result, self.last_snapshot, self.subspace
        if self.dashboard is None or result is None or snapshot is None:
            return
        shown = (id(snapshot), id(subspace))
        if shown == self._shown:
            return
        try:
            current = study.user_attrs.get(self.summary_key)
        except Exception:
            current = None  # the publisher meets the same storage and reports it
        if isinstance(current, Mapping) and int(current.get("n_trials", -1)) > snapshot.n_trials:
            return  # not over a newer summary
        if self.dashboard.publish(study, result, snapshot, sampling=sampling,
                                  subspace=subspace):
            self._shown = shown

    def decision_due(self, n_complete: int) -> bool:
        """Whether a shrink decision falls due with ``n_complete`` completed trials (never
        once :meth:`begin_close` was called: a closed callback left attached to a study
        re-read the whole study after every trial)."""
        return (self.next_decision is not None and n_complete >= self.next_decision
                and not self.closing)

    def decide_now(self, study: optuna.Study, before: int, n_complete: int) -> None:
        """Take the decision due at ``n_complete`` trials on the trials numbered below
        ``before``, and write it before returning.

        The callback calls this from the trial's own thread, so the next trial is sampled
        under the decision: a seeded study takes the same decisions at the same trials
        however fast the machine.
        """
        history, _, _ = _history(study, self.target, self.objective)
        if history is None:
            return
        self._take_decision(study, _trials_before(study, history, before), n_complete)

    def close(self) -> None:
        """Stop the refit process, if any."""
        self.fitter.close()

    def begin_close(self) -> None:
        """From now on nothing is decided (a restriction written after the study would only
        shape a later resume of it)."""
        with self._decide_lock:
            self.closing = True

    def _take_decision(self, study: optuna.Study, history: TrialHistory, n_complete: int) -> None:
        with self._decide_lock:
            if self.closing or self.next_decision is None:
                return
            step = self.shrink_after if self.shrink_to == "auto" else None
            # nothing can be safe to fix before min_trials_to_fix trials
            # (decide's rule 5): the first decision that can fix falls due once there are
            # that many, whatever the multiples of shrink_after
            offset = n_complete - history.n_trials
            fixable = ready_at(history)  # in trials of the history; ``ready`` in completed ones
            ready = fixable + offset
            early = step is not None and n_complete < ready and not read_restriction(study)
            narrow_from = ready_at(history, NARROW_TRIALS_PER_PARAM) + offset
            narrowing = self._narrowing() is not None
            # the study has the trials to fix, but some below this one still run (parallel
            # workers): this is the first decision that can fix, due once they finished,
            # not a narrowing one before it
            postponed = n_complete >= fixable
            if early and (not narrowing or n_complete < narrow_from or postponed):
                # a decision now could not act: without narrowing, nothing is decided before
                # it can fix; with it, not before the first multiple of the step with
                # NARROW_TRIALS_PER_PARAM trials per parameter
                assert step is not None
                self.next_decision = min(ready, -(-narrow_from // step) * step) \
                    if narrowing and not postponed else ready
                self.logger.info(
                    "hpinsight: shrink_to='auto' decides first at %d trials (it fixes from %d "
                    "trials, %s%s, for %d parameters)", self.next_decision,
                    ready, min_trials_rule(),
                    f", and narrows from {NARROW_TRIALS_PER_PARAM:g} per parameter"
                    if narrowing else "", len(history.space.names))
                return
            # "auto": the next multiple of the step (60 -> 100, not 110), or the first that
            # can fix if that comes sooner (50 -> 60 with 12 parameters); a size: decided once
            following = None if step is None else (n_complete // step + 1) * step
            if early and following is not None:
                following = min(following, ready)
            due, self.next_decision = self.next_decision, following
            if not _claim(study, due):
                # one callback per worker process (or `hpinsight watch` beside them): the
                # first to reach this point takes it, the others go on to the next
                self.logger.debug("hpinsight: the decision at %d trials of study %r was "
                                  "taken by another process", due, study.study_name)
                return
            try:
                self._decide(study, history)
            except Exception:
                raise  # an error: reported, and the schedule goes on (it would recur)
            except BaseException:
                # interrupted (Ctrl-C while it was fitted): it falls due again at the next
                # trial, instead of being skipped until the next point
                self.next_decision = due
                _unclaim(study, due)
                raise

    def _decide(self, study: optuna.Study, history: TrialHistory) -> None:  # holding _decide_lock
        """Take the decision due now on ``history`` and write it."""
        log = read_decisions(study)
        last = max(history.trial_ids)
        if any(isinstance(d.get("after_trial"), int) and d["after_trial"] >= last
               for d in log):
            return  # another process already decided on as many trials
        if self.shrink_to == "auto":
            self._shrink_auto(study, history, log, _objectives_of(study, history))
            if self.publish and self.last_snapshot is not None:  # the summary shows it now
                _publish(study, self.last_snapshot, self.summary_key, self.subspace)
        else:
            self._shrink_k(study, history, log)

    def _tell_unknown_defaults(self, study: optuna.Study, history: TrialHistory) -> None:
        """Say once, at a decision, which names of ``defaults`` no trial has: a misspelt
        name left the value the user meant unused without a word (a parameter of a
        define-by-run study may still come later, so it is no error)."""
        unknown = sorted(set(self.defaults) - set(history.space.names) - self._told_defaults)
        if unknown:
            self._told_defaults.update(unknown)
            self.logger.warning(
                "hpinsight: ImportanceCallback(defaults=...) names %s, which no trial of study "
                "%r has (its parameters: %s); a misspelt name? Its value is used only once a "
                "trial has that parameter; until then a parameter is fixed at its value in "
                "the best trial.", ", ".join(map(repr, unknown)), study.study_name,
                ", ".join(map(repr, history.space.names)))

    def _shrink_k(self, study: optuna.Study, history: TrialHistory,
                  log: list[dict[str, Any]]) -> None:
        """``shrink_to=k``: keep the ``k`` most important, fix the others; once per study."""
        if log or read_restriction(study):
            # decided before (by hand, another process, or released by the user): a study
            # is shrunk to a size once; said, not silently skipped
            last = log[-1] if log else {}
            self.logger.warning(
                "hpinsight: shrink_to=%d did not shrink study %r: it already has a "
                "restriction decision (%s after trial %s: %s); a study is shrunk to a size "
                "once. Release it (ShrinkingSampler.release(study)) before the study "
                "reaches shrink_after trials for shrink_to to act.", self.shrink_to,
                study.study_name, last.get("action", "a restriction"),
                last.get("after_trial", "?"), clip_text(str(last.get("why", "")), 120))
            return
        assert isinstance(self.shrink_to, int)
        # a default no trial could take was recorded as fixed while trials went on varying
        check_default_values(history.space, self.defaults, "ImportanceCallback(defaults=...)")
        self._tell_unknown_defaults(study, history)
        snapshot = self.fitter.rank(history)
        keep = list(snapshot.importances)[: self.shrink_to]
        best_id, incumbent, _ = history.best()
        fixed: dict[str, Any] = {}
        sources: list[str] = []
        free: list[str] = []  # inactive in the best trial, no default: no value to fix at
        for name in list(snapshot.importances)[self.shrink_to :]:
            if name in self.defaults:
                fixed[name] = self.defaults[name]
                sources.append(f"{name}=default")
            elif name in incumbent:
                fixed[name] = incumbent[name]
                sources.append(f"{name}=trial {best_id}")
            else:
                free.append(name)
        quantile = self._narrowing()
        ranges = {} if quantile is None else best_ranges(history, keep, quantile)
        if not fixed and not ranges:
            return
        top = ", ".join(f"{n} ({snapshot.importances[n]:.2f})" for n in keep)
        why = (
            f"shrink_to={self.shrink_to} after {history.n_trials} trials: kept the most important "
            f"{top}; fixed the others ({', '.join(sources) or 'none'})"
        )
        if free:
            why += (f"; left {', '.join(free)} free: inactive in the best trial (trial "
                    f"{best_id}) and without a default, so there is no value to fix "
                    f"{'it' if len(free) == 1 else 'them'} at")
        if ranges:
            why += (f"; narrowed {', '.join(ranges)} to the range of the best "
                    f"{quantile:.0%} of trials")
        if read_decisions(study) or read_restriction(study):
            # another process decided while this one fitted (seconds): the first stands
            self.logger.info("hpinsight: shrink_to=%d: study %r was restricted meanwhile by "
                             "another process; not shrunk twice", self.shrink_to, study.study_name)
            return
        record_restriction(study, fixed, ranges=ranges, why=why, after_trial=snapshot.last_trial)
        self.logger.info("hpinsight: %s", why)

    def _narrowing(self) -> float | None:
        """The fraction of the best trials a decision narrows to: ``narrow_quantile``;
        ``"auto"`` narrows with ``shrink_to="auto"`` only, to ``NARROW_QUANTILE``."""
        if not isinstance(self.narrow_quantile, str):
            return self.narrow_quantile
        return NARROW_QUANTILE if self.shrink_to == "auto" else None

    def _shrink_auto(self, study: optuna.Study, history: TrialHistory,
                     log: list[dict[str, Any]],
                     objectives: dict[str, TrialHistory] | None = None) -> None:
        """``shrink_to="auto"``: fix what is safe to fix, release what a check finds costly.

        A parameter once released (by a check or by the user) is never fixed again, so a
        decision cannot flip back and forth on noise. In a study of several objectives
        (``objectives``: each one's history, on the trials of ``history``) a parameter is
        fixed only when it is safe to fix for every objective (:mod:`hpinsight._joint`),
        whichever value the live importances analyse; ranges are narrowed to the trials
        nearest the Pareto front.
        """
        names = set(history.space.names)  # a default for a parameter not seen yet waits
        check_default_values(history.space, self.defaults, "ImportanceCallback(defaults=...)")
        self._tell_unknown_defaults(study, history)
        quantile = self._narrowing()
        options: dict[str, Any] = {
            "defaults": {k: v for k, v in self.defaults.items() if k in names},
            "risk_margin": self.risk_margin}
        # the opening decisions narrow (the first, or those before the first that can fix
        # while nothing is narrowed yet); on one objective, each range is widened to hold
        # where the model finds the parameter's main effect best, away from its edges
        # (several objectives: their ranges hold the trials nearest the front, each
        # objective's best elsewhere)
        opening = is_opening(log, history)
        narrow = opening and quantile is not None
        spans: dict[str, Span] = {}
        if narrow and objectives is None:
            subspace, spans = self.fitter.subspace_and_spans(history, **options)
        else:
            subspace = self.fitter.suggest_subspace(objectives or history, **options)
        self.subspace = subspace
        held = read_restriction(study)
        ranges = read_ranges(study)
        decisions = subspace.decisions
        release_now = {n: v for n, v in held.items()
                       if n in names and decisions[n].state == "release"}
        # held by the restriction, but the latest trials ran it elsewhere: its value lies
        # outside the distribution the objective asks for now, and it cannot be followed
        unheld = {n: v for n, v in held.items() if history.sampling is not None
                  and n in history.sampling.unheld and n not in release_now}
        # (a parameter with one value in the space needs no restriction to stay at it)
        fix_now = {n: v for n, v in subspace.fixed.items()
                   if n not in held  # (released before: "released" in decide, not here)
                   and decisions[n].grounds != SINGLE}
        last = max(history.trial_ids)
        head = f"shrink_to='auto' after {history.n_trials} trials"
        ready = ready_at(history)
        waiting = ("" if history.n_trials >= ready else
                   f"; nothing can be fixed before {ready} trials "
                   f"({min_trials_rule()})")
        if len(read_decisions(study)) != len(log):
            # another process decided while this one fitted (seconds): its decision stands,
            # and this one, on what the study held before it, is not written over it
            self.logger.info("hpinsight: %s: study %r was decided on meanwhile by another "
                             "process; its decision stands", head, study.study_name)
            return
        # a narrowed range that an exploring trial beat the model outside of, as a fixed
        # parameter is released on (decide's rule 1): its whole range again
        widen = {n: (ranges[n], e) for n, e in decisions.widen.items() if n in ranges}
        widened: list[str] = []
        if narrow:
            assert quantile is not None
            near = history if objectives is None else front_history(objectives)
            # only what matters: where a parameter's effect is not resolved, the best
            # trials' spread in it follows the others' effects, and its range can leave
            # out its own optimum (on benchmarks/bench_shrink.py's v10, the V-shaped c
            # was narrowed away from its best value in 4 of 10 TPE runs)
            ranges = best_ranges(near, [n for n in subspace.keep
                                        if decisions[n].state == "matters"],
                                 quantile)
            # the best trials can lie on one side of an optimum the optimizer has not
            # reached yet (GPSampler on v10: in 3 of 20 runs the best quarter at the
            # first decision left out an optimum the model's main effect already put
            # there, and one run ended 19.4 times the full space's best; widened, none)
            ranges, widened = with_spans(ranges, spans, history.space)
            ranges = narrower(ranges, history.space)
        after = {n: v for n, v in held.items() if n not in release_now and n not in unheld} \
            | fix_now
        # a narrowed parameter found safe to fix later is fixed: its range goes (a
        # restriction holds a parameter at a value or in a range, never both)
        ranges = {n: r for n, r in ranges.items() if n not in after and n not in widen}
        if release_now or unheld or widen:
            why = f"{head}: released " + "; ".join(
                [f"{n} ({decisions[n].sentence})" for n in release_now]
                + [f"{n} (held at {v!r}, but the latest trials ran it at other values: that "
                   "value lies outside the distribution the objective asks for now)"
                   for n, v in unheld.items()]
                + [_widen_reason(n, bounds, e) for n, (bounds, e) in widen.items()])
            release_now = release_now | unheld
            self.logger.info("hpinsight: %s", why)
            if not (after or ranges):  # nothing stays restricted: release() records it
                release(study, why=why)
                return
            record_decision(study, "release", release_now, why, last,
                            ranges={n: bounds for n, (bounds, _) in widen.items()})
        if fix_now or (ranges and narrow):
            fixed = ", ".join(f"{n}={v!r}" for n, v in fix_now.items())
            allowed = (f"the margin ({fmt_cost(subspace.margin)})" if not subspace.objectives else
                       "each objective's margin (" + ", ".join(
                           f"{k} {fmt_cost(sub.margin)}" for k, sub in subspace.objectives.items())
                       + ")")
            why = (f"{head}: fixed {fixed}, each with no effect that counts (none "
                   "distinguishable from nothing, or one too small to matter) "
                   f"and a cost of fixing, by the surrogate, within {allowed}; "
                   f"kept {', '.join(subspace.keep)}" if fix_now else
                   f"{head}: fixed nothing (none is safe to fix); kept "
                   f"{', '.join(subspace.keep)}")
            if ranges and narrow:
                why += (f"; narrowed {', '.join(ranges)} to the range of the best "
                        f"{quantile:.0%} of trials")
                if widened:
                    why += (f", {', '.join(widened)} widened to hold where the model finds "
                            "its main effect best, at least a quarter of the range from either edge")
            why += waiting
            record_restriction(study, after, ranges=ranges, why=why, after_trial=last)
        elif release_now or widen:
            record_restriction(study, after, ranges=ranges, why=f"{head}: the rest stays as it was",
                     after_trial=last)
            return
        elif opening:
            why = (f"{head}: kept every parameter; none shows no effect and is safely cheap "
                   "to fix" + ("; none has a resolved effect to narrow" if narrow else "")
                   + waiting)
            record_decision(study, "keep", {}, why, last)
        else:
            self.logger.info("hpinsight: %s: no change (fixed: %s)", head,
                             ", ".join(held) or "none")
            return
        self.logger.info("hpinsight: %s", why)
        for decision in decisions:  # one line per parameter: its one decision
            self.logger.info("hpinsight:   %s: %s", decision.param, decision.sentence)


def _claim(study: optuna.Study, due: int) -> bool:
    """Record that this process takes the decision due at ``due`` completed trials of
    ``study``; False if another process (a worker's callback, ``hpinsight watch``) took
    it already. Two that claim it in the same instant both decide, and the later one
    finds the earlier's decision when it writes (see ``_shrink_auto``)."""
    taken = study.user_attrs.get(DECISION_POINTS_KEY)
    taken = [p for p in taken if isinstance(p, int)] if isinstance(taken, list) else []
    if due in taken:
        return False
    study.set_user_attr(DECISION_POINTS_KEY, [*taken, due])
    return True


def _unclaim(study: optuna.Study, due: int) -> None:
    """Give back a decision point this process claimed and did not take."""
    taken = study.user_attrs.get(DECISION_POINTS_KEY)
    if isinstance(taken, list) and due in taken:
        study.set_user_attr(DECISION_POINTS_KEY, [p for p in taken if p != due])


def ready_at(history: TrialHistory, per_param: float | None = None) -> int:
    """Trials from which a decision on ``history`` can fix a parameter: nothing is safe
    to fix on fewer than :func:`min_trials_to_fix` (decide's rule 5); or, given
    ``per_param``, the trials for that many per parameter."""
    if per_param is None:
        return min_trials_to_fix(len(history.space.names))
    return math.ceil(per_param * len(history.space.names))


def is_opening(log: list[dict[str, Any]], history: TrialHistory) -> bool:
    """Whether a decision on ``history`` is one of the study's opening ones, which narrow
    what matters and record "keep" when they do nothing: the first, or one after
    nothing but opening "keep"s taken on fewer trials than could fix anything
    (:func:`ready_at`). So a study of many parameters narrows before it can fix, once:
    at its first decision that finds an effect to narrow, or else at its first that can
    fix."""
    ids = sorted(history.trial_ids)
    ready = ready_at(history)
    first_ready = ids[ready - 1] if len(ids) >= ready else math.inf
    return all(d.get("action") == "keep" and isinstance(d.get("after_trial"), int)
               and d["after_trial"] < first_ready for d in log)


def _idle_reason(history: TrialHistory | None, min_trials: int) -> str | None:
    """Why a refit of ``history`` ranks nothing, in the words of a status line (None:
    it has enough trials and more than one value, so only no news held it back)."""
    if history is None:
        return None
    if history.n_trials < min_trials:  # only news where trials were left out of the count
        return (f"{history.n_trials} usable, {min_trials} needed to rank; "
                f"{history.excluded_summary()}" if history.n_excluded else None)
    if np.ptp(history.y) == 0.0:
        return f"all {history.n_trials} with the same value; nothing to rank yet"
    return None


def _empty_reason(study: optuna.Study) -> str | None:
    """Why a study with no history ranks nothing, when its finished trials are there but
    have no parameters (None: it has none finished yet)."""
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if not done or any(t.params for t in done):
        return None
    return (f"{len(done)} COMPLETE trial(s), none with parameters: an objective that "
            "suggests no parameter has nothing to rank")


def _widen_reason(name: str, bounds: tuple[float, float], trial: Explored) -> str:
    """Why a narrowed range is widened again, for the shrink log."""
    return (f"{name}'s range, narrowed to [{bounds[0]:.6g}, {bounds[1]:.6g}] (exploring trial "
            f"{trial.trial}, which ran it outside that range, did {fmt_cost(trial.gain)} "
            "better than the model predicts from every other trial, more than the margin "
            f"plus {EXPLORED_Z:g} times that prediction's standard deviation "
            f"({fmt_cost(trial.sd)}) and by more of them than any trial that did not "
            "explore; one trial cannot tell which parameter it moved made the gain, so each "
            "is released)")


def _objectives_of(study: optuna.Study, history: TrialHistory) -> dict[str, TrialHistory] | None:
    """Each objective's history of a study of several objectives, on the trials of
    ``history`` (None for one objective): what a shrink decision is taken on."""
    if len(study.directions) < 2:
        return None
    from ..adapters._optuna import objective_names

    keep = set(history.trial_ids)
    out = {}
    for i, name in enumerate(objective_names(study)):
        one, _, _ = _history(study, None, i)
        assert one is not None  # history has trials, so every objective has
        out[name] = _trials_in(study, one, keep)
    return out


def _trials_in(study: optuna.Study, history: TrialHistory, ids: set[int]) -> TrialHistory:
    """``history`` cut to the trials ``ids`` (itself if none is cut), with the sampling
    record of the trials kept: a parameter the restriction holds is judged as held (so a
    check can release it), and its held count is over those trials."""
    from ..adapters._optuna import sampling_of

    keep = [i for i, t in enumerate(history.trial_ids) if t in ids]
    if len(keep) == history.n_trials:
        return history
    numbers = {history.trial_ids[i] for i in keep}
    trials = [t for t in study.get_trials(deepcopy=False) if t.number in numbers]
    changed = {} if history.sampling is None else history.sampling.changed
    return TrialHistory(
        history.space, tuple(history.configs[i] for i in keep), history.y[keep],
        direction=history.direction, trial_ids=tuple(history.trial_ids[i] for i in keep),
        excluded=history.excluded, objective_name=history.objective_name, label=history.label,
        sampling=sampling_of(study, trials, changed=changed),
    )


def _trials_before(study: optuna.Study, history: TrialHistory,
                   number: int | None) -> TrialHistory:
    """``history`` cut to the trials numbered below ``number`` (itself if none is cut).

    A shrink decision falls due at a trial; with parallel workers, later trials may have
    finished by then, and the decision still rests on the trials it was due on.
    """
    if number is None:
        return history
    return _trials_in(study, history, {t for t in history.trial_ids if t < number})


def best_ranges(
    history: TrialHistory, names: list[str], quantile: float
) -> dict[str, tuple[float, float]]:
    """Per numerical parameter in ``names``: (min, max) of its values in the best trials.

    The best trials are the ``quantile`` fraction with the best values (at least two),
    and every trial as good as the last of them; a parameter active in fewer than two of
    them is left out. (With several objectives every trial on the Pareto front ties at
    the best value: cut at the quantile by trial number, 10 of 19 front trials, all
    of them early, narrowed a trade-off parameter to a quarter of the front's span.)
    """
    from ..space import Float, Int

    n_best = max(2, math.ceil(quantile * history.n_trials))
    order = history.best_indices(n_best)
    order = np.union1d(order, np.flatnonzero(history.y == history.y[order[-1]]))
    out: dict[str, tuple[float, float]] = {}
    for name in names:
        if not isinstance(history.space[name], Float | Int):
            continue
        values = [history.configs[i][name] for i in order if name in history.configs[i]]
        if len(values) >= 2 and min(values) < max(values):
            out[name] = (float(min(values)), float(max(values)))
    return narrower(out, history.space)


def narrower(ranges: dict[str, tuple[float, float]], space: SearchSpace,
             ) -> dict[str, tuple[float, float]]:
    """``ranges`` less those that hold their parameter's whole range: such a "narrowing"
    restricts nothing, yet the page listed it as a restriction in force and counted its
    trials as narrowed (an integer's best trials on a Pareto front spanned its range)."""
    from ..space import Categorical

    out = {}
    for name, (low, high) in ranges.items():
        param = space[name]
        if isinstance(param, Categorical) or low > param.low or high < param.high:
            out[name] = (low, high)
    return out


#: A narrowed range keeps the value where its parameter's main effect is best at least
#: this share of its width away from either edge (on the parameter's own scale, log for
#: ``log=True``), unless that value lies at the edge of the whole range
EDGE_GUARD = 0.25


def with_spans(
    ranges: dict[str, tuple[float, float]], spans: Mapping[str, Span], space: SearchSpace,
) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """``ranges``, each widened to hold its parameter's span in ``spans`` (where its main
    effect is best: :func:`hpinsight._subspace.main_effect_spans`) with its best value at
    least ``EDGE_GUARD`` of the range's width from either edge, and the names of the
    ranges that had to widen.

    Why the guard: under CMA-ES, a range whose upper edge lay a grid step above the
    optimum (``benchmarks/bench_shrink.py``'s ``cond``, seed 0) was never searched near
    that edge: restarted in the range, CMA-ES's step size shrank before its mean got
    there, and the run ended 11.2 times the full space's best."""
    from ..space import Float, Int

    out = dict(ranges)
    widened = []
    for name, (low, high) in ranges.items():
        param = space[name]
        if name in spans and isinstance(param, Float | Int):  # spans are numerical
            span = spans[name]
            wide = _guarded(param, min(low, span.low), max(high, span.high), span.best)
            if wide != (low, high):
                out[name] = wide
                widened.append(name)
    return out, widened


def _guarded(param: Float | Int, low: float, high: float, best: float) -> tuple[float, float]:
    """``(low, high)`` widened so that ``best`` is at least ``EDGE_GUARD`` of its width
    from either edge, on the parameter's encoded scale, within its bounds (integers:
    outwards to integers)."""
    from ..space import Int, encode_value

    lo, hi, at = (encode_value(param, v) for v in (low, high, best))
    ratio = EDGE_GUARD / (1.0 - EDGE_GUARD)  # each side at least this share of the other
    hi = max(hi, at + ratio * (at - lo))
    lo = min(lo, at - ratio * (hi - at))
    back = math.exp if param.log else float
    new_low, new_high = max(param.low, back(lo)), min(param.high, back(hi))
    if new_low == low and new_high == high:
        return low, high
    if isinstance(param, Int):
        new_low, new_high = float(math.floor(new_low)), float(math.ceil(new_high))
    # never inside what was asked for (the round trip through the log may move a bound)
    return min(low, new_low), max(high, new_high)


def summary_key_for(objective: int | str | None, target: Callable[[Any], float] | None) -> str:
    """The user attribute a summary is published under: ``SUMMARY_KEY`` for the study's
    value, with a suffix for another objective or a target, so that callbacks analysing
    different values of one study do not overwrite each other."""
    if target is not None:
        return f"{SUMMARY_KEY}:target"
    return SUMMARY_KEY if objective is None else f"{SUMMARY_KEY}:objective {objective}"


def _publish(study: optuna.Study, snapshot: ImportanceSnapshot, key: str = SUMMARY_KEY,
             subspace: SubspaceResult | None = None) -> bool:
    """Store the summary unless another process already published one on more trials;
    whether it was stored.

    Several processes (workers' callbacks, ``hpinsight watch``) may publish to
    one study; without this check a slow refit on older trials could overwrite
    a newer summary. The read-then-write is not atomic, so the window remains,
    but it is one storage round trip wide instead of a whole refit.
    """
    current = study.user_attrs.get(key)
    if isinstance(current, Mapping) and int(current.get("n_trials", -1)) > snapshot.n_trials:
        return False
    decisions = None if subspace is None else {d.param: d.state for d in subspace.decisions}
    study.set_user_attr(key, compact_summary(
        snapshot, decisions=decisions,
        decided_after=None if subspace is None else subspace.n_trials))
    return True


def _history(
    study: optuna.Study, target: Callable[[Any], float] | None, objective: int | str | None
) -> tuple[TrialHistory | None, list[str], list[str]]:
    """The study's history without Python warnings (they are not thread-safe to catch):
    with the parameters whose distribution changed, and the trials left out for a value
    the search space cannot hold."""
    from ..adapters._optuna import history_from_study

    changed: list[str] = []
    outside: list[str] = []
    history = history_from_study(
        TrialHistory, study, target=target, objective=objective, on_change=changed.extend,
        on_outside=outside.extend, allow_empty=True,
    )
    return history, changed, outside
