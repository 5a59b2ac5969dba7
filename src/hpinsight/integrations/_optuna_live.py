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

from .._decisions import fmt_cost
from .._history import TrialHistory
from ._live import ImportanceSnapshot, LiveFanova, RefitOptions, compact_summary
from ._optuna_shrink import DECISIONS_KEY, read_restriction, record_decision, restrict

if TYPE_CHECKING:
    from .._fanova import FanovaResult
    from .._subspace import SubspaceResult

__all__ = ["SUMMARY_KEY", "Refitter", "best_ranges"]

SUMMARY_KEY = "hpinsight:importance"


class Refitter:
    """Refit fANOVA on a study and publish the outcome; the options of the callback."""

    def __init__(
        self,
        options: RefitOptions,
        *,
        objective: int | None,
        target: Callable[[Any], float] | None,
        publish: bool,
        shrink_to: int | Literal["auto"] | None,
        shrink_after: int,
        defaults: Mapping[str, Any],
        logger: logging.Logger,
        narrow_quantile: float | None = None,
        risk_margin: float = 0.05,
    ) -> None:
        self.min_trials = options.min_trials
        self.objective = objective
        self.target = target
        self.summary_key = summary_key_for(objective, target)
        self.publish = publish
        self.shrink_to = shrink_to
        self.shrink_after = shrink_after
        self.defaults = dict(defaults)
        self.narrow_quantile = narrow_quantile
        self.risk_margin = risk_margin
        self.logger = logger
        self.fitter = LiveFanova(options, logger=logger)
        self._told_changed: set[str] = set()
        #: The latest ``shrink_to="auto"`` suggestion (None before the first).
        self.subspace: SubspaceResult | None = None
        #: Set by :meth:`begin_close`: the study is over, nothing more is decided.
        self.closing = False
        # held while a decision is written, and by begin_close: a refit that was already
        # deciding when close() began writes nothing
        self._decide_lock = threading.Lock()
        #: Set by the callback when it sees the shrink fall due: the decision is made on
        #: the trials numbered below this, whenever the refit runs (None: on all trials,
        #: as for a watcher that attaches to a study already past ``shrink_after``).
        self.due_before: int | None = None
        self._shrink_done = False

    def refit(self, study: optuna.Study) -> tuple[FanovaResult, ImportanceSnapshot] | None:
        """Refit if there are enough new trials; None when there was nothing to do."""
        history, changed = _history(study, self.target, self.objective)
        new = sorted(set(changed) - self._told_changed)
        if new:
            self._told_changed.update(new)
            self.logger.warning(
                "hpinsight: the distribution of %s changed during study %r; importances use "
                "the union of its ranges.", ", ".join(map(repr, new)), study.study_name,
            )
        if history is None or not self.fitter.worth_fitting(history, self.min_trials):
            return None
        result, snapshot = self.fitter.fit(history)
        if self.publish:
            _publish(study, snapshot, self.summary_key)
        self.logger.info(
            "hpinsight: %d trials (best %.6g): %s", snapshot.n_trials, snapshot.best_value,
            snapshot.ranking_line(),
        )
        if self.shrink_to is not None and history.n_trials >= self.shrink_after and not self._shrink_done:
            self._shrink_done = True
            if self.closing:
                # a restriction written now would only shape a later resume of the study
                self.logger.info(
                    "hpinsight: the shrink_to=%r decision was due after %d trials, but no refit "
                    "finished before close(); nothing was fixed.", self.shrink_to, self.shrink_after)
            else:
                due = _trials_before(history, self.due_before)
                due_snapshot = snapshot if due is history else self.fitter.rank(due)
                self._maybe_shrink(study, due, due_snapshot)
        return result, snapshot

    def close(self) -> None:
        """Stop the refit process, if any."""
        self.fitter.close()

    def begin_close(self) -> None:
        """From now on nothing is decided: a decision that a refit reaches later, or is
        reaching now, is not written (it would only shape a later resume of the study)."""
        with self._decide_lock:
            self.closing = True

    def _write_decision(self, write: Callable[[], Any]) -> bool:
        """Run ``write`` (which stores a decision) unless :meth:`begin_close` came first."""
        with self._decide_lock:
            if self.closing:
                self.logger.info(
                    "hpinsight: the shrink_to=%r decision was reached as close() began; "
                    "nothing was written.", self.shrink_to)
                return False
            write()
            return True

    def _maybe_shrink(
        self, study: optuna.Study, history: TrialHistory, snapshot: ImportanceSnapshot
    ) -> None:
        if read_restriction(study):
            return  # already shrunk (by this or another process)
        decisions = study.user_attrs.get(DECISIONS_KEY)
        if isinstance(decisions, list) and decisions:
            return  # decided before (and maybe released by the user): never shrink twice
        if self.shrink_to == "auto":
            self._shrink_auto(study, history, snapshot)
            return
        assert isinstance(self.shrink_to, int)
        keep = list(snapshot.importances)[: self.shrink_to]
        best_id, incumbent, _ = history.best()
        fixed: dict[str, Any] = {}
        sources: list[str] = []
        for name in list(snapshot.importances)[self.shrink_to :]:
            if name in self.defaults:
                fixed[name] = self.defaults[name]
                sources.append(f"{name}=default")
            elif name in incumbent:
                fixed[name] = incumbent[name]
                sources.append(f"{name}=trial {best_id}")
        ranges = {} if self.narrow_quantile is None else best_ranges(
            history, keep, self.narrow_quantile)
        if not fixed and not ranges:
            return
        top = ", ".join(f"{n} ({snapshot.importances[n]:.2f})" for n in keep)
        why = (
            f"shrink_to={self.shrink_to} after {history.n_trials} trials: kept the most important "
            f"{top}; fixed the others ({', '.join(sources) or 'none'})"
        )
        if ranges:
            why += (f"; narrowed {', '.join(ranges)} to the range of the best "
                    f"{self.narrow_quantile:.0%} of trials")
        if self._write_decision(lambda: restrict(study, fixed, ranges=ranges, why=why,
                                                 after_trial=snapshot.last_trial)):
            self.logger.info("hpinsight: %s", why)


    def _shrink_auto(
        self, study: optuna.Study, history: TrialHistory, snapshot: ImportanceSnapshot
    ) -> None:
        names = set(history.space.names)  # a default for a parameter not seen yet waits
        subspace = self.fitter.suggest_subspace(
            history, defaults={k: v for k, v in self.defaults.items() if k in names},
            risk_margin=self.risk_margin)
        self.subspace = subspace
        # decided once, like shrink_to=k: asking again at every refit would be testing
        # again and again until noise calls something safe
        ranges = {} if self.narrow_quantile is None else best_ranges(
            history, list(subspace.keep), self.narrow_quantile)
        if subspace.fixed:
            fixed = ", ".join(f"{n}={v!r}" for n, v in subspace.fixed.items())
            why = (f"shrink_to='auto' after {history.n_trials} trials: fixed {fixed}, each "
                   "with no effect distinguishable from nothing and costing at most "
                   f"{fmt_cost(subspace.margin)} by the surrogate; kept {', '.join(subspace.keep)}")
        else:
            why = (f"shrink_to='auto' after {history.n_trials} trials: kept every parameter; "
                   "none shows no effect and is safely cheap to fix")
        if ranges:
            why += (f"; narrowed {', '.join(ranges)} to the range of the best "
                    f"{self.narrow_quantile:.0%} of trials")
        if subspace.fixed or ranges:
            written = self._write_decision(lambda: restrict(
                study, subspace.fixed, ranges=ranges, why=why, after_trial=snapshot.last_trial))
        else:
            written = self._write_decision(lambda: record_decision(
                study, "keep", {}, why, snapshot.last_trial))
        if not written:
            return
        self.logger.info("hpinsight: %s", why)
        for decision in subspace.decisions:  # one line per parameter: its one decision
            self.logger.info("hpinsight:   %s: %s", decision.param, decision.sentence)


def _trials_before(history: TrialHistory, number: int | None) -> TrialHistory:
    """``history`` cut to the trials numbered below ``number`` (itself if none is cut).

    A shrink decision falls due at a trial; a refit that runs later, on more trials,
    still decides on the trials the decision was due on.
    """
    ids = np.asarray(history.trial_ids)
    if number is None or bool((ids < number).all()):
        return history
    keep = np.flatnonzero(ids < number)
    return TrialHistory(
        history.space, tuple(history.configs[i] for i in keep), history.y[keep],
        direction=history.direction, trial_ids=tuple(history.trial_ids[i] for i in keep),
        excluded=history.excluded, objective_name=history.objective_name,
    )


def best_ranges(
    history: TrialHistory, names: list[str], quantile: float
) -> dict[str, tuple[float, float]]:
    """Per numerical parameter in ``names``: (min, max) of its values in the best trials.

    The best trials are the ``quantile`` fraction with the best values (at least two);
    a parameter active in fewer than two of them is left out.
    """
    from .._params import Float, Int

    n_best = max(2, math.ceil(quantile * history.n_trials))
    order = history.best_indices(n_best)
    out: dict[str, tuple[float, float]] = {}
    for name in names:
        if not isinstance(history.space[name], Float | Int):
            continue
        values = [history.configs[i][name] for i in order if name in history.configs[i]]
        if len(values) >= 2 and min(values) < max(values):
            out[name] = (float(min(values)), float(max(values)))
    return out


def summary_key_for(objective: int | None, target: Callable[[Any], float] | None) -> str:
    """The user attribute a summary is published under: ``SUMMARY_KEY`` for the study's
    value, with a suffix for another objective or a target, so that callbacks analysing
    different values of one study do not overwrite each other."""
    if target is not None:
        return f"{SUMMARY_KEY}:target"
    return SUMMARY_KEY if objective is None else f"{SUMMARY_KEY}:objective {objective}"


def _publish(study: optuna.Study, snapshot: ImportanceSnapshot, key: str = SUMMARY_KEY) -> None:
    """Store the summary unless another process already published one on more trials.

    Several processes (workers' callbacks, ``hpinsight watch``) may publish to
    one study; without this check a slow refit on older trials could overwrite
    a newer summary. The read-then-write is not atomic, so the window remains,
    but it is one storage round trip wide instead of a whole refit.
    """
    current = study.user_attrs.get(key)
    if isinstance(current, Mapping) and int(current.get("n_trials", -1)) > snapshot.n_trials:
        return
    study.set_user_attr(key, compact_summary(snapshot))


def _history(
    study: optuna.Study, target: Callable[[Any], float] | None, objective: int | None
) -> tuple[TrialHistory | None, list[str]]:
    """The study's history without Python warnings (they are not thread-safe to catch)."""
    from ..adapters._optuna import history_from_study

    changed: list[str] = []
    history = history_from_study(
        TrialHistory, study, target=target, objective=objective, on_change=changed.extend,
        allow_empty=True,
    )
    return history, changed
