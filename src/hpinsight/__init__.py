"""hpinsight: which hyperparameters matter, how they act, and which you can stop tuning.

Here: the analyses (``fanova``, ``importance_across_studies``, ``partial_dependence``, ``confidence_split``,
``tuning_risk``, ``noninferiority_test``, ``holm_bonferroni``, ``default_values``,
``suggest_subspace``, ``surrogate_tuning_risk``, ``report``) and the data they take
(``SearchSpace`` with its parameter and condition types, ``TrialHistory``, and the
model objects ``GP`` and ``Forest`` that choose the surrogate). What they
return is in :mod:`hpinsight.results`, what they raise in :mod:`hpinsight.exceptions`.
Optimizer data comes in through :mod:`hpinsight.adapters` (``from_optuna``, ``from_smac``,
``from_configspace``), though every analysis also takes an Optuna study as it is.
Figures are in :mod:`hpinsight.plotting`, optimizer plug-ins in
:mod:`hpinsight.integrations` (``.optuna``, ``.smac``), experiment runners in
:mod:`hpinsight.experiments`; those load their optional dependencies on first use.
The computation core needs only NumPy, SciPy and scikit-learn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import adapters, exceptions, results
from ._across import importance_across_studies
from ._defaults import default_values
from ._fanova import fanova
from ._history import TrialHistory
from ._pdp import partial_dependence
from ._regions import confidence_split
from ._reporting import report
from ._risk import holm_bonferroni, noninferiority_test, tuning_risk
from ._sampling import SamplingRecord
from ._subspace import suggest_subspace
from ._surrogate_risk import surrogate_tuning_risk
from .space import AnyOf, Categorical, Condition, Float, Int, SearchSpace
from .surrogates import GP, Forest

if TYPE_CHECKING:
    from . import experiments, integrations, plotting

__all__ = [  # noqa: RUF022 -- plain sorted order, as test_public_api checks
    "AnyOf",
    "Categorical",
    "Condition",
    "Float",
    "Forest",
    "GP",
    "Int",
    "SamplingRecord",
    "SearchSpace",
    "TrialHistory",
    "__version__",
    "adapters",
    "confidence_split",
    "default_values",
    "exceptions",
    "experiments",
    "fanova",
    "holm_bonferroni",
    "importance_across_studies",
    "integrations",
    "noninferiority_test",
    "partial_dependence",
    "plotting",
    "report",
    "results",
    "suggest_subspace",
    "surrogate_tuning_risk",
    "tuning_risk",
]

#: Names that lived here before, and the module that holds them now.
_MOVED = {
    **dict.fromkeys(results.__all__, "results"),
    **dict.fromkeys(exceptions.__all__, "exceptions"),
    **dict.fromkeys((
        "plot_importance", "plot_importance_history", "plot_interaction", "plot_marginal",
        "plot_partial_dependence", "plot_regions", "plot_tuning_risk"), "plotting"),
}


def __getattr__(name: str) -> Any:
    # PEP 562: optional layers load on first access, so ``import hpinsight`` stays light.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("hpinsight")
        except PackageNotFoundError:  # running from a source tree that is not installed
            return "0+unknown"
    if name in ("experiments", "integrations", "plotting"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name in _MOVED:
        raise AttributeError(
            f"module 'hpinsight' has no attribute {name!r}: it lives in "
            f"hpinsight.{_MOVED[name]} (use hpinsight.{_MOVED[name]}.{name})"
        )
    raise AttributeError(f"module 'hpinsight' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
