"""Live importances during a SMAC3 run: a ``smac.Callback`` that refits off SMAC's thread."""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from smac.callback import Callback

from .._fanova import fanova
from .._history import TrialHistory
from .._validation import MODEL_KEYWORDS, check_choice, check_int, check_real, moved_keywords
from .._warn import collected
from ..adapters._smac import (
    Instances,
    SmacRun,
    history_from_records,
    records_from_runhistory,
    run_context,
)
from ..adapters._smac_model import (
    SmacModelUnavailable,
    forest_from_smac_model,
    smac_model_of,
    smac_target_of,
)
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..surrogates import GP, Forest, as_surrogate, refuse_fitted
from ._live import BackgroundRefits, ImportanceSnapshot, LiveFanova, LiveResults, RefitOptions

if TYPE_CHECKING:
    from .._fanova_result import FanovaResult

__all__ = ["RESULT_FILE", "SMAC_RESULT_FILE", "ImportanceCallback", "SmacForest"]

RESULT_FILE = "hpinsight_importance.json"
SMAC_RESULT_FILE = "hpinsight_importance_smac_surrogate.json"
_logger = logging.getLogger("hpinsight.integrations.smac")
_logger.addHandler(logging.NullHandler())


@dataclass(frozen=True, slots=True)
class SmacForest:
    """SMAC's own fitted random forest, decomposed as it stands, without a refit.

    A model choice for :class:`ImportanceCallback` (``surrogate=SmacForest()``): in SMAC's
    target (with the HPO facade, the log of the normalized cost) and with SMAC's few
    trees, so its spread over trees is coarse. When SMAC's model is not a random forest
    (the black-box facade's Gaussian process), is not trained yet, or uses instance
    features, the refit falls back to ``fallback`` and logs why.

    Parameters
    ----------
    fallback : GP or Forest, default=GP()
        The model hpinsight fits when SMAC's forest cannot be read.
    """

    fallback: GP | Forest = field(default_factory=GP)
    kind: ClassVar[Literal["smac"]] = "smac"

    def __post_init__(self) -> None:
        refuse_fitted(as_surrogate(self.fallback, "SmacForest"), "SmacForest",
                      "when SMAC's forest cannot be read")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe description."""
        return {"kind": self.kind, "fallback": self.fallback.to_dict()}


@dataclass(frozen=True, slots=True)
class _Job:
    """What a refit needs, copied on SMAC's thread so the refit never reads live SMAC state."""

    records: list[SmacRun]
    configs: dict[int, dict[str, Any]]
    configspace: Any
    objectives: list[str] | None
    instances: Instances
    model: Any  # SMAC's surrogate (surrogate=SmacForest()) or None
    smac_target: str | None  # what SMAC's forest was trained on
    #: The last refit, at stop_after: it runs below min_trials too (SMAC stopped with no
    #: refit at all, and nothing to continue on, when stop_after was below min_trials)
    final: bool = False


def _file_safe(text: str) -> str:
    """``text`` with every character a file name may not hold as ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


class ImportanceCallback(LiveResults, Callback):
    """Refit fANOVA importances while SMAC optimizes, without slowing it down.

    Pass it to a facade: ``HyperparameterOptimizationFacade(scenario, f,
    callbacks=[ImportanceCallback()])``. After every ``every_n_trials``
    successful trials (once there are ``min_trials``) it copies the
    runhistory and refits in the background: in a child process by default,
    one refit at a time, a newer request replacing a pending one. Each refit
    updates :attr:`latest` and :attr:`history`, logs a one-line ranking and
    writes ``hpinsight_importance.json`` (``..._smac_surrogate.json`` with
    ``surrogate=SmacForest()``; ``hpinsight_importance.objective-err.json`` with
    ``objective="err"``, ``....cap-0.25.json`` with ``cap_quantile=0.25``, likewise for
    ``budget`` and ``instances``, so that callbacks on one run keep their own) into
    the run's output folder (:attr:`result_path`).

    The callback never raises into SMAC (SMAC would pass the exception out of
    ``optimize()``): failures are logged and kept in :attr:`errors`, and
    ``on_tell_end`` returns None, so the callback never stops the run unless
    ``stop_after`` asks it to.

    Parameters
    ----------
    every_n_trials : int, default=10
        Refit after this many more successful trials.
    min_trials : int, default=20
        No refit before this many configurations have a successful run.
    surrogate : GP, Forest or SmacForest, default=GP()
        ``hp.GP()`` and ``hp.Forest(...)`` fit hpinsight's Gaussian process or a forest
        (see :func:`hpinsight.fanova`) on the mean cost of each configuration (raw costs;
        see :func:`hpinsight.adapters.from_smac`).
        :class:`SmacForest` decomposes SMAC's own fitted random forest as it stands.
    seed : int, optional
        Model seed; with a seed a refit equals ``hp.fanova(history, seed=...)``
        on the same runs (with ``max_order=2`` for 2 to 12 parameters, as a report
        analyses them; the main effects are the same either way).
    objective : int or str, optional
        Objective index or name of a multi-objective run; without it such a run is
        watched for reaching its Pareto front (``"front"``, as the Optuna callback does).
    instances : {"auto", "mean", "model"}, default="auto"
        How runs on several instances become one value per configuration
        (see :func:`hpinsight.adapters.from_smac`).
    budget : float, optional
        Of a multi-fidelity run, refit on the runs at this budget alone (see
        :func:`hpinsight.adapters.from_smac`). Without it each configuration counts at
        its highest budget; where those differ, the log line and the JSON say the values
        mix budgets.
    cap_quantile : float in (0, 1], optional
        Importance among the best configurations (Hutter et al. 2014, Sec. 3.3). Its
        verdicts call no effect "indistinguishable from nothing": that takes the
        analysis of all trials beside it (:meth:`~hpinsight.results.FanovaResult.beside`).
    stop_after : int, optional
        Stop SMAC gracefully once this many trials succeeded, after a last
        refit (also below ``min_trials``), so that
        :func:`~hpinsight.integrations.smac.shrink_and_continue` can continue on
        the important parameters (``on_tell_end`` then returns False once;
        otherwise it always returns None).
    write_json : bool, default=True
        Write the newest result into the run's output folder.
    final_timeout : float, default=120
        At the end of the run, wait at most this long for the last refit.
    isolation : {"process", "thread"}, default="process"
        Where refits run (see :class:`hpinsight.integrations.optuna.ImportanceCallback`).
    regions, region_splits : int, default=0 and 3
        Keep confidence-split PDPs of the ``regions`` most important
        parameters and the incumbent's region (see
        :class:`hpinsight.integrations.optuna.ImportanceCallback`).

    Attributes
    ----------
    latest : FanovaResult or None
    history : tuple of ImportanceSnapshot
    errors : tuple of Exception
    sources : tuple of str
        Per refit, which model was analysed: "gp", "forest" or "smac".
    """

    @moved_keywords(MODEL_KEYWORDS)
    def __init__(
        self,
        every_n_trials: int = 10,
        min_trials: int = 20,
        *,
        surrogate: GP | Forest | SmacForest | None = None,
        seed: int | None = None,
        objective: int | str | None = None,
        instances: Literal["auto", "mean", "model"] = "auto",
        budget: float | None = None,
        cap_quantile: float | None = None,
        stop_after: int | None = None,
        write_json: bool = True,
        final_timeout: float = 120.0,
        isolation: Literal["process", "thread"] = "process",
        regions: int = 0,
        region_splits: int = 3,
    ) -> None:
        super().__init__()
        func = "ImportanceCallback"
        smac = surrogate if isinstance(surrogate, SmacForest) else None
        options = RefitOptions.checked(
            func, every_n_trials=every_n_trials, min_trials=min_trials,
            surrogate=surrogate if smac is None else smac.fallback, seed=seed,
            cap_quantile=cap_quantile, isolation=isolation, regions=regions,
            region_splits=region_splits)
        self.every_n_trials = options.every_n_trials
        self.min_trials = options.min_trials
        self.surrogate: GP | Forest | SmacForest = options.surrogate if smac is None else smac
        if objective is not None and not isinstance(objective, int | str):
            raise InvalidArgumentTypeError(
                f"The 'objective' parameter of {func} must be an objective index or name. "
                f"Got {type(objective).__name__} instead."
            )
        self.objective = objective
        self.instances = check_choice(instances, "instances", func, ("auto", "mean", "model"))
        self.budget = None if budget is None else check_real(budget, "budget", func, low=0.0,
                                                             high=math.inf)
        self._seed = options.seed
        self.cap_quantile = options.cap_quantile
        if smac is not None and self.cap_quantile is not None:
            raise InvalidArgumentError(
                f"The 'cap_quantile' parameter of {func} needs a refit on capped costs, which "
                "surrogate=SmacForest() does not do. Use hp.GP() or hp.Forest() to cap."
            )
        self.stop_after = check_int(stop_after, "stop_after", func, minimum=1, allow_none=True)
        self.stopped = False
        self.write_json = bool(write_json)
        self.final_timeout = check_real(final_timeout, "final_timeout", func, low=0.0, high=1e9)
        # SmacForest reads SMAC's forest; its fallback, and every other refit, is ours
        self._fitter = LiveFanova(options, logger=_logger)
        self._refits = BackgroundRefits(self._refit, _logger, "hpinsight-smac-importance")
        self._lock = threading.Lock()
        self._sources: list[str] = []
        self._told_fallback: set[str] = set()
        self._told_warnings: set[str] = set()  # the run's warnings, each said once
        self._seen = 0
        self._requested_at = 0
        self._output: Path | None = None

    def __repr__(self) -> str:
        return (
            f"ImportanceCallback(every_n_trials={self.every_n_trials}, min_trials="
            f"{self.min_trials}, surrogate={self.surrogate.kind!r}, refits={len(self.history)})"
        )

    # ---------------------------------------------------------------- public state
    @property
    def sources(self) -> tuple[str, ...]:
        """Per refit, the model analysed ("gp", "forest" or "smac")."""
        with self._lock:
            return tuple(self._sources)

    @property
    def result_path(self) -> Path | None:
        """Where the JSON result is written (None before the run starts or if disabled)."""
        if self._output is None or not self.write_json:
            return None
        name = SMAC_RESULT_FILE if isinstance(self.surrogate, SmacForest) else RESULT_FILE
        # one callback per objective, cap, budget or instance handling: a file each (two
        # callbacks differing in cap_quantile wrote one file, and one result was lost)
        parts = [f"{key}-{_file_safe(str(value))}" for key, value in (
            ("objective", self.objective), ("cap", self.cap_quantile), ("budget", self.budget),
            ("instances", None if self.instances == "auto" else self.instances))
            if value is not None]
        if parts:
            name = name.replace(".json", "." + ".".join(parts) + ".json")
        return self._output / name

    # ---------------------------------------------------------------- SMAC hooks
    def on_start(self, smbo: Any) -> None:
        try:
            scenario = getattr(smbo, "_scenario", None)
            output = getattr(scenario, "output_directory", None)
            self._output = None if output is None else Path(output)
        except Exception as exc:
            self._refits.record(exc, "while reading the run's output folder")

    def on_tell_end(self, smbo: Any, info: Any, value: Any) -> bool | None:
        try:
            if int(value.status) != 1:  # only successful runs count towards a refit
                return None
            with self._lock:
                self._seen += 1
                n_configs = len(smbo.runhistory.ids_config)
                stop = (self.stop_after is not None and not self.stopped
                        and self._seen >= self.stop_after)
                due = stop or (n_configs >= self.min_trials
                               and self._seen - self._requested_at >= self.every_n_trials)
                if due:
                    self._requested_at = self._seen
                if stop:
                    self.stopped = True
            if due:
                self._refits.request(self._job(smbo, final=stop))
            if stop:
                self._refits.wait(self.final_timeout)
                _logger.info("hpinsight: stopping SMAC after %d successful trials (stop_after).",
                             self._seen)
                return False
        except Exception as exc:  # never into SMAC
            self._refits.record(exc, "while recording a finished trial")
        return None

    def on_end(self, smbo: Any) -> None:
        try:
            with self._lock:
                flush = self._seen > self._requested_at or not self._sources
                self._requested_at = self._seen
            if flush:
                self._refits.request(self._job(smbo))
            if self._refits.wait(self.final_timeout):
                self._fitter.close()  # the run is over: free the refit process (restarts if needed)
            else:
                _logger.warning("hpinsight: the last refit did not finish within %.0f s; it goes "
                                "on in the background (cb.wait() waits for it).", self.final_timeout)
        except Exception as exc:
            self._refits.record(exc, "at the end of the run")

    # ---------------------------------------------------------------- user calls
    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no refit runs or is pending; False on timeout."""
        return self._refits.wait(timeout)

    # ---------------------------------------------------------------- background work
    def _job(self, smbo: Any, *, final: bool = False) -> _Job:
        """Copy what a refit needs, on SMAC's thread (the runhistory changes as SMAC runs)."""
        records, configs = records_from_runhistory(smbo.runhistory)
        configspace, objectives, known = run_context(getattr(smbo, "_scenario", None),
                                                     smbo.runhistory)
        model = None
        target = None
        if isinstance(self.surrogate, SmacForest):
            try:
                model = smac_model_of(smbo)
                target = smac_target_of(smbo)
            except SmacModelUnavailable as exc:
                self._tell_fallback(str(exc))
        return _Job(records, configs, configspace, objectives, known, model, target, final)

    def _refit(self, job: _Job) -> tuple[FanovaResult, ImportanceSnapshot] | None:
        # a run of several objectives is watched for reaching its Pareto front unless
        # objective= names one, as the Optuna callback and `hpinsight watch` do (it failed
        # at every refit with an error that named another function's argument)
        objective = (self.objective if self.objective is not None or len(job.objectives or ()) < 2
                     else "front")
        # the package's warnings about the run (forbidden clauses the importances do not
        # model) said once, through the callback's logger: given from this thread they
        # came at every refit, attributed to a line of the threading module
        with collected() as warned:
            history = history_from_records(
                TrialHistory, job.configspace, job.records, job.configs, objective=objective,
                objectives=job.objectives, instances=self.instances, known=job.instances,
                seed=0 if self._seed is None else self._seed, budget=self.budget,
            )
        for category, message in warned:
            if message not in self._told_warnings:
                self._told_warnings.add(message)
                _logger.warning("hpinsight: %s: %s", category.__name__, message)
        need = min(self.min_trials, 2) if job.final else self.min_trials
        if not self._fitter.worth_fitting(history, need, "configurations"):
            return None
        source = self._fitter.options["surrogate"].kind
        out: tuple[FanovaResult, ImportanceSnapshot] | None = None
        if job.model is not None:
            try:
                # its trees predict SMAC's own target (for several objectives, their
                # aggregation), not the history's objective: the result says which
                forest = replace(
                    forest_from_smac_model(job.model, history.space, job.configspace),
                    target=job.smac_target)
            except SmacModelUnavailable as exc:
                self._tell_fallback(str(exc))
            else:
                started = time.perf_counter()
                out = self._fitter.summarize(history, fanova(history, surrogate=forest),
                                             started)
                source = "smac"
        if out is None:
            out = self._fitter.fit(history)
        result, snapshot = out
        with self._lock:
            self._sources.append(source)
        budgets = {} if history.sampling is None else dict(history.sampling.budgets)
        mixed = (f"; values from budgets {', '.join(f'{b:g}' for b in budgets)}, each "
                 "configuration at its highest (budget= reads one)" if budgets else "")
        _logger.info("hpinsight: %d configurations (%s, %s model%s): %s",
                     snapshot.n_trials, snapshot.best_text(), source, mixed,
                     snapshot.ranking_line())
        path = self.result_path
        if path is not None:
            self._write(path, result, snapshot, source,
                        job.smac_target if source == "smac" else history.objective_name, budgets)
        return result, snapshot

    def _write(
        self,
        path: Path,
        result: FanovaResult,
        snapshot: ImportanceSnapshot,
        source: str,
        target: str | None,
        budgets: Mapping[float, int] | None = None,
    ) -> None:
        payload = {
            "surrogate": (self.surrogate if source == "smac"
                          else self._fitter.options["surrogate"]).to_dict(),
            "target": target,
            # configurations valued at each budget, where they differ (values mix budgets)
            "budgets": [[b, n] for b, n in (budgets or {}).items()],
            "latest": result.to_dict(),
            "history": [s.to_dict() for s in (*self.history, snapshot)],
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".hpinsight-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w") as fh:
            json.dump(payload, fh, indent=1)
        os.replace(tmp, path)  # readers never see half a file

    def _tell_fallback(self, why: str) -> None:
        with self._lock:
            if why in self._told_fallback:
                return
            self._told_fallback.add(why)
        _logger.warning("hpinsight: %s; refitting hpinsight's own model instead.", why)
