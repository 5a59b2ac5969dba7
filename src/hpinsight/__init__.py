"""hpinsight: which hyperparameters matter, how they act, and which you can stop tuning.

The computation core (search spaces, exact fANOVA of random forests) needs only
NumPy and scikit-learn. Optimizer adapters, plotting and the command line are
loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._defaults import DefaultValues, default_values
from ._fanova import FanovaResult, Importance, MarginalResult, fanova
from ._history import TrialHistory
from ._pdp import PartialDependenceResult, partial_dependence
from ._regions import RegionNode, RegionTree, confidence_split
from ._reporting import Report, report
from ._risk import (
    NonInferiorityResult,
    TuningRiskResult,
    TuningRiskRow,
    holm_bonferroni,
    noninferiority_test,
    tuning_risk,
)
from ._sampling import SamplingRecord
from ._space import AnyOf, Categorical, Condition, Float, Int, SearchSpace
from ._subspace import SubspaceResult, SurrogateRisk, suggest_subspace, surrogate_tuning_risk
from .exceptions import (
    ChangedDistributionWarning,
    ConstantObjectiveWarning,
    ExcludedTrialsWarning,
    HPInsightError,
    HPInsightWarning,
    InvalidDataError,
    InvalidSpaceError,
)

if TYPE_CHECKING:
    from . import integrations, plotting
    from .plotting import (
        plot_importance,
        plot_importance_history,
        plot_interaction,
        plot_marginal,
        plot_partial_dependence,
        plot_regions,
        plot_tuning_risk,
    )

__all__ = [
    "AnyOf",
    "Categorical",
    "ChangedDistributionWarning",
    "Condition",
    "ConstantObjectiveWarning",
    "DefaultValues",
    "ExcludedTrialsWarning",
    "FanovaResult",
    "Float",
    "HPInsightError",
    "HPInsightWarning",
    "Importance",
    "Int",
    "InvalidDataError",
    "InvalidSpaceError",
    "MarginalResult",
    "NonInferiorityResult",
    "PartialDependenceResult",
    "RegionNode",
    "RegionTree",
    "Report",
    "SamplingRecord",
    "SearchSpace",
    "SubspaceResult",
    "SurrogateRisk",
    "TrialHistory",
    "TuningRiskResult",
    "TuningRiskRow",
    "__version__",
    "confidence_split",
    "default_values",
    "fanova",
    "holm_bonferroni",
    "integrations",
    "noninferiority_test",
    "partial_dependence",
    "plot_importance",
    "plot_importance_history",
    "plot_interaction",
    "plot_marginal",
    "plot_partial_dependence",
    "plot_regions",
    "plot_tuning_risk",
    "plotting",
    "report",
    "suggest_subspace",
    "surrogate_tuning_risk",
    "tuning_risk",
]


#: Plot functions re-exported here, loaded (with matplotlib) on first access.
_PLOTS = frozenset({
    "plot_importance", "plot_importance_history", "plot_interaction", "plot_marginal",
    "plot_partial_dependence", "plot_regions", "plot_tuning_risk",
})


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
    if name in _PLOTS:
        from . import plotting

        return getattr(plotting, name)
    raise AttributeError(f"module 'hpinsight' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
