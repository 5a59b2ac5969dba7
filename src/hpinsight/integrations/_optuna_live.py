"""One live refit of an Optuna study: history -> fANOVA -> snapshot, published and logged.

Shared by :class:`~hpinsight.integrations.optuna.ImportanceCallback` (which runs
it on a background thread) and ``hpinsight watch`` (which runs it in a poll
loop). It raises; the callers decide how failures are reported.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna

from .._fanova import fanova
from .._history import TrialHistory
from ._optuna_shrink import DECISIONS_KEY, read_restriction, restrict
from ._worker import RefitWorker, WorkerError

if TYPE_CHECKING:
    from .._fanova import FanovaResult

__all__ = ["SUMMARY_KEY", "ImportanceSnapshot", "Refitter", "compact_summary"]

SUMMARY_KEY = "hpinsight:importance"
_DISPLAY_LIMIT = 1024  # optuna-dashboard truncates longer attribute values


@dataclass(frozen=True, slots=True)
class ImportanceSnapshot:
    """Main-effect importances of a study at one point of its run.

    Attributes
    ----------
    n_trials : int
        COMPLETE trials (finite value) the forest was fit on.
    last_trial : int
        Highest trial number among them.
    importances : mapping of str to float
        Mean fraction of variance per parameter, sorted descending.
    stds : mapping of str to float
        Std over trees of the same fractions.
    best_value : float
        Best analysed value among the trials.
    n_excluded : int
        Trials left out (not COMPLETE, or non-finite value).
    seconds : float
        Wall time of the refit.
    """

    n_trials: int
    last_trial: int
    importances: Mapping[str, float]
    stds: Mapping[str, float]
    best_value: float
    n_excluded: int
    seconds: float
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def __post_init__(self) -> None:
        object.__setattr__(self, "importances", MappingProxyType(dict(self.importances)))
        object.__setattr__(self, "stds", MappingProxyType(dict(self.stds)))

    def __reduce__(self) -> tuple[Any, ...]:
        # read-only mapping views do not pickle; rebuild from plain dicts
        return (
            type(self),
            (self.n_trials, self.last_trial, dict(self.importances), dict(self.stds),
             self.best_value, self.n_excluded, self.seconds, self.created),
        )

    def __repr__(self) -> str:
        return f"ImportanceSnapshot(n_trials={self.n_trials}, {self.ranking_line(top=3)})"

    def ranking_line(self, top: int = 5) -> str:
        """``"lr 0.61±0.05, optimizer 0.20±0.04, ..."`` for the ``top`` parameters."""
        items = list(self.importances.items())
        shown = ", ".join(f"{n} {m:.2f}±{self.stds[n]:.2f}" for n, m in items[:top])
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
        }


def compact_summary(snapshot: ImportanceSnapshot, limit: int = _DISPLAY_LIMIT) -> dict[str, Any]:
    """A JSON object for a study user attribute whose serialization stays under ``limit`` chars.

    Importances are rounded to 3 decimals as ``[mean, std]``; the least
    important parameters are dropped (and counted in ``"more"``) if needed.
    """
    imp = {n: [round(m, 3), round(snapshot.stds[n], 3)] for n, m in snapshot.importances.items()}
    out: dict[str, Any] = {
        "n_trials": snapshot.n_trials,
        "n_excluded": snapshot.n_excluded,
        "best": float(f"{snapshot.best_value:.6g}"),
        "updated": snapshot.created,
        "importance": imp,
    }
    names = list(imp)
    while len(json.dumps(out)) > limit and names:
        del imp[names.pop()]
        out["more"] = len(snapshot.importances) - len(names)
    return out


class Refitter:
    """Refit fANOVA on a study and publish the outcome; the options of the callback."""

    def __init__(
        self,
        *,
        min_trials: int,
        n_trees: int,
        seed: int | None,
        objective: int | None,
        target: Callable[[Any], float] | None,
        cap_quantile: float | None,
        n_jobs: int | None,
        publish: bool,
        shrink_to: int | None,
        shrink_after: int,
        defaults: Mapping[str, Any],
        logger: logging.Logger,
        narrow_quantile: float | None = None,
        isolation: str = "thread",
    ) -> None:
        self.min_trials = min_trials
        self.n_trees = n_trees
        self.seed = seed
        self.objective = objective
        self.target = target
        self.cap_quantile = cap_quantile
        self.n_jobs = n_jobs
        self.publish = publish
        self.shrink_to = shrink_to
        self.shrink_after = shrink_after
        self.defaults = dict(defaults)
        self.narrow_quantile = narrow_quantile
        self.logger = logger
        self._worker = RefitWorker() if isolation == "process" else None
        self._last_n: int | None = None
        self._told_changed: set[str] = set()

    def refit(self, study: optuna.Study) -> tuple[FanovaResult, ImportanceSnapshot] | None:
        """Refit if there are enough new trials; None when there was nothing to do."""
        started = time.perf_counter()
        history, changed = _history(study, self.target, self.objective)
        new = sorted(set(changed) - self._told_changed)
        if new:
            self._told_changed.update(new)
            self.logger.warning(
                "hpinsight: the distribution of %s changed during study %r; importances use "
                "the union of its ranges.", ", ".join(map(repr, new)), study.study_name,
            )
        if history is None or history.n_trials < self.min_trials or history.n_trials == self._last_n:
            return None
        self._last_n = history.n_trials
        if np.ptp(history.y) == 0.0:
            self.logger.info(
                "hpinsight: %d trials, all with the same value; nothing to rank yet.",
                history.n_trials,
            )
            return None
        result = self._fanova(history)
        ranking = result.ranking(order=1)
        snapshot = ImportanceSnapshot(
            n_trials=history.n_trials,
            last_trial=max(history.trial_ids),
            importances={i.params[0]: max(0.0, float(i.mean)) for i in ranking},
            stds={i.params[0]: float(i.std) for i in ranking},
            best_value=history.best()[2],
            n_excluded=history.n_excluded,
            seconds=time.perf_counter() - started,
        )
        if self.publish:
            _publish(study, snapshot)
        self.logger.info(
            "hpinsight: %d trials (best %.6g): %s", snapshot.n_trials, snapshot.best_value,
            snapshot.ranking_line(),
        )
        if self.shrink_to is not None and history.n_trials >= self.shrink_after:
            self._maybe_shrink(study, history, snapshot)
        return result, snapshot

    def close(self) -> None:
        """Stop the refit process, if any."""
        if self._worker is not None:
            self._worker.close()

    @property
    def worker_pid(self) -> int | None:
        """Process id of the refit process while it runs."""
        return None if self._worker is None else self._worker.pid

    def _fanova(self, history: TrialHistory) -> FanovaResult:
        options: dict[str, Any] = {
            "n_trees": self.n_trees, "seed": self.seed, "cap_quantile": self.cap_quantile,
            "n_jobs": self.n_jobs,
        }
        if self._worker is not None:
            try:
                result, caught = self._worker.run("fanova", history, **options)
            except WorkerError as exc:
                self._worker = None
                self.logger.warning(
                    "hpinsight: %s; refitting in a thread of this process from now on "
                    "(results are the same, the study may run slower).", exc,
                )
            else:
                for message in caught:
                    self.logger.info("hpinsight: refit: %s", message)
                return result  # type: ignore[no-any-return]
        return fanova(history, **options)

    def _maybe_shrink(
        self, study: optuna.Study, history: TrialHistory, snapshot: ImportanceSnapshot
    ) -> None:
        if read_restriction(study):
            return  # already shrunk (by this or another process)
        decisions = study.user_attrs.get(DECISIONS_KEY)
        if isinstance(decisions, list) and decisions:
            return  # decided before (and maybe released by the user): never shrink twice
        assert self.shrink_to is not None
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
        restrict(study, fixed, ranges=ranges, why=why, after_trial=snapshot.last_trial)
        self.logger.info("hpinsight: %s", why)


def best_ranges(
    history: TrialHistory, names: list[str], quantile: float
) -> dict[str, tuple[float, float]]:
    """Per numerical parameter in ``names``: (min, max) of its values in the best trials.

    The best trials are the ``quantile`` fraction with the best values (at least two);
    a parameter active in fewer than two of them is left out.
    """
    from .._space import Float, Int

    n_best = max(2, math.ceil(quantile * history.n_trials))
    order = np.argsort(history.y if history.direction == "minimize" else -history.y,
                       kind="stable")[:n_best]
    out: dict[str, tuple[float, float]] = {}
    for name in names:
        if not isinstance(history.space[name], Float | Int):
            continue
        values = [history.configs[i][name] for i in order if name in history.configs[i]]
        if len(values) >= 2 and min(values) < max(values):
            out[name] = (float(min(values)), float(max(values)))
    return out


def _publish(study: optuna.Study, snapshot: ImportanceSnapshot) -> None:
    """Store the summary unless another process already published one on more trials.

    Several processes (workers' callbacks, ``hpinsight watch``) may publish to
    one study; without this check a slow refit on older trials could overwrite
    a newer summary. The read-then-write is not atomic, so the window remains,
    but it is one storage round trip wide instead of a whole refit.
    """
    current = study.user_attrs.get(SUMMARY_KEY)
    if isinstance(current, Mapping) and int(current.get("n_trials", -1)) > snapshot.n_trials:
        return
    study.set_user_attr(SUMMARY_KEY, compact_summary(snapshot))


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
