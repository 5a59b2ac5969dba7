"""The records of a tuning-risk experiment: one per outer fold, one per run, and the
experiment with its paired risks."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._defaults import DefaultValues
from .._history import TrialHistory
from .._risk import tuning_risk
from .._shared import json_value, readonly
from ..exceptions import (
    UnknownNameError,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._risk import TuningRiskResult

__all__ = ["FoldRecord", "RunRecord", "TuningRiskExperiment", "json_config"]


@dataclass(frozen=True, slots=True)
class FoldRecord:
    """One outer fold of a run: the random search on its training part and the test risk.

    Attributes
    ----------
    test_risk : float
        Risk of ``best_config`` refit on the outer training part, on the outer test part.
    best_config : dict of str to value
        The configuration with the lowest mean inner risk (the first one on ties).
    best_inner_risk : float
        Its mean inner cross-validated risk.
    trial_configs : tuple of dict, length n_iter
        The configurations evaluated, in trial order (as actually evaluated: in a fixed
        run the fixed parameter holds its default).
    trial_risks : tuple of float, length n_iter
        Their mean inner cross-validated risks.
    """

    test_risk: float
    best_config: dict[str, Any]
    best_inner_risk: float
    trial_configs: tuple[dict[str, Any], ...]
    trial_risks: tuple[float, ...]

    def to_dict(self, *, include_trials: bool = False) -> dict[str, Any]:
        """JSON-safe representation; the trials only with ``include_trials=True``."""
        out: dict[str, Any] = {
            "test_risk": self.test_risk,
            "best_config": json_config(self.best_config),
            "best_inner_risk": self.best_inner_risk,
        }
        if include_trials:
            out["trial_configs"] = [json_config(c) for c in self.trial_configs]
            out["trial_risks"] = list(self.trial_risks)
        return out


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One nested cross-validation run: a dataset, a search seed and a condition.

    Attributes
    ----------
    dataset : hashable
        The dataset's key in ``datasets``.
    seed : int
        The random-search seed (one of the experiment's ``seeds``).
    fixed : str or None
        The parameter held at its default, or ``None`` for the non-fixed run that tunes
        every parameter.
    default : value or None
        The value ``fixed`` was held at (``None`` for the non-fixed run).
    risk : float
        Mean outer test risk: the paper's ``R(θ_i^j)`` (fixed) or ``R(θ^*)`` (non-fixed).
    folds : tuple of FoldRecord
        The outer folds, in split order.
    """

    dataset: Hashable
    seed: int
    fixed: str | None
    default: Any
    risk: float
    folds: tuple[FoldRecord, ...]

    @property
    def condition(self) -> str:
        """``"non-fixed"`` or ``"fixed"``."""
        return "non-fixed" if self.fixed is None else "fixed"

    @property
    def best_configs(self) -> tuple[dict[str, Any], ...]:
        """The best configuration of every outer fold."""
        return tuple(f.best_config for f in self.folds)

    def to_dict(self, *, include_trials: bool = False) -> dict[str, Any]:
        """JSON-safe representation; the trials only with ``include_trials=True``."""
        return {
            "dataset": json_value(self.dataset),
            "seed": self.seed,
            "condition": self.condition,
            "fixed": self.fixed,
            "default": json_value(self.default),
            "risk": self.risk,
            "folds": [f.to_dict(include_trials=include_trials) for f in self.folds],
        }


@dataclass(frozen=True, slots=True)
class TuningRiskExperiment:
    """The runs of a tuning-risk experiment (see :func:`tuning_risk_experiment`).

    Attributes
    ----------
    records : tuple of RunRecord
        Every run, ordered by dataset (as given), seed, and condition (the non-fixed run
        first, then one run per parameter in ``params`` order).
    params : tuple of str
        The parameters tested.
    datasets : tuple of hashable
        Dataset keys, in the order given.
    seeds : tuple of int
        Random-search seeds.
    defaults : dict of hashable to dict of str to value
        Per dataset, the default each tested parameter was fixed at.
    default_values : DefaultValues or None
        The outcome of the default-value experiment, or ``None`` when the defaults were
        given.
    default_histories : dict of hashable to TrialHistory, or None
        Per dataset, the random configurations of the default-value experiment and
        their cross-validated risks (minimize), or ``None`` when defaults were given.
        They are ordinary histories: :func:`~hpinsight.fanova` accepts them.
    settings : dict
        The experiment's settings (JSON-safe).
    """

    records: tuple[RunRecord, ...]
    params: tuple[str, ...]
    datasets: tuple[Hashable, ...]
    seeds: tuple[int, ...]
    defaults: dict[Hashable, dict[str, Any]]
    default_values: DefaultValues | None
    default_histories: dict[Hashable, TrialHistory] | None
    settings: dict[str, Any]

    def __repr__(self) -> str:
        return (
            f"TuningRiskExperiment(n_datasets={len(self.datasets)}, n_seeds={len(self.seeds)}, "
            f"params={self.params!r}, n_runs={len(self.records)})"
        )

    @property
    def free(self) -> NDArray[np.float64]:
        """Risks of the non-fixed runs, shape (n_datasets * n_seeds,), by (dataset, seed)."""
        return readonly(np.array([r.risk for r in self.records if r.fixed is None]))

    @property
    def fixed(self) -> dict[str, NDArray[np.float64]]:
        """Per parameter, the risks of its fixed runs, in the order of :attr:`free`."""
        return {p: readonly(np.array([r.risk for r in self.records if r.fixed == p]))
                for p in self.params}

    def run(self, dataset: Hashable, seed: int, fixed: str | None = None) -> RunRecord:
        """The record of one run; ``fixed=None`` for the non-fixed run.

        Raises
        ------
        KeyError
            If there is no such run.
        """
        for r in self.records:
            if r.dataset == dataset and r.seed == seed and r.fixed == fixed:
                return r
        raise UnknownNameError(
            f"No run for dataset={dataset!r}, seed={seed!r}, fixed={fixed!r}; the datasets "
            f"are {list(self.datasets)!r}, the seeds {list(self.seeds)!r} and the parameters "
            f"{list(self.params)!r}."
        )

    def statistics(self, margin: float = 0.01, alpha: float = 0.05, **kwargs: Any) -> TuningRiskResult:
        """Tuning risk and Holm-corrected non-inferiority of every tested parameter.

        Parameters
        ----------
        margin : float, default=0.01
            Non-inferiority margin on the relative risk (the paper's 1 %).
        alpha : float, default=0.05
            Family-wise error rate.
        **kwargs
            Passed on to :func:`~hpinsight.tuning_risk` (``zero_method``, ``method``).

        Returns
        -------
        TuningRiskResult
        """
        return tuning_risk(self.fixed, self.free, margin=margin, alpha=alpha, **kwargs)

    def to_dict(self, *, include_trials: bool = False) -> dict[str, Any]:
        """JSON-safe representation; every trial only with ``include_trials=True``."""
        return {
            "params": list(self.params),
            "datasets": [json_value(d) for d in self.datasets],
            "seeds": list(self.seeds),
            "settings": dict(self.settings),
            "defaults": {str(d): json_config(v) for d, v in self.defaults.items()},
            "default_values": None if self.default_values is None else self.default_values.to_dict(),
            "default_histories": None if self.default_histories is None else {
                str(d): h.to_dict() for d, h in self.default_histories.items()
            },
            "runs": [r.to_dict(include_trials=include_trials) for r in self.records],
        }

    def to_frame(self) -> Any:
        """One row per run (dataset, seed, condition, fixed, default, risk) as a DataFrame."""
        from .._optional import import_optional

        pd = import_optional("pandas", "TuningRiskExperiment.to_frame")
        return pd.DataFrame.from_records([
            {"dataset": r.dataset, "seed": r.seed, "condition": r.condition, "fixed": r.fixed,
             "default": r.default, "risk": r.risk}
            for r in self.records
        ])


def json_config(config: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): json_value(v) for k, v in config.items()}
