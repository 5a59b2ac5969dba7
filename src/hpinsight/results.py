"""Index of the result classes returned by hpinsight's public functions."""

from __future__ import annotations

from ._across import AcrossStudiesResult
from ._decision_result import DecisionResult, ParameterDecision
from ._defaults import DefaultValues
from ._fanova_result import FanovaResult, Importance, MarginalResult
from ._pdp import PartialDependenceResult
from ._regions_result import RegionNode, RegionsResult
from ._reporting import MultiObjectiveReport, Report
from ._risk import NonInferiorityResult, TuningRiskResult, TuningRiskRow
from ._subspace import SubspaceResult
from ._surrogate_risk import SurrogateRisk

__all__ = [
    "AcrossStudiesResult",
    "DecisionResult",
    "DefaultValues",
    "FanovaResult",
    "Importance",
    "MarginalResult",
    "MultiObjectiveReport",
    "NonInferiorityResult",
    "ParameterDecision",
    "PartialDependenceResult",
    "RegionNode",
    "RegionsResult",
    "Report",
    "SubspaceResult",
    "SurrogateRisk",
    "TuningRiskResult",
    "TuningRiskRow",
]

#: Result names of earlier releases, and the names that replaced them.
_RENAMED = {"RegionTree": "RegionsResult"}


def __getattr__(name: str) -> object:
    if name in _RENAMED:
        raise AttributeError(f"hpinsight.results.{name} is now hpinsight.results.{_RENAMED[name]}")
    raise AttributeError(f"module 'hpinsight.results' has no attribute {name!r}")
