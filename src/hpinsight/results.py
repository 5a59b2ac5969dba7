"""Index of the result classes returned by hpinsight's public functions."""

from __future__ import annotations

from ._fanova import FanovaResult, Importance, MarginalResult
from ._pdp import PartialDependenceResult
from ._regions import RegionTree

__all__ = ["FanovaResult", "Importance", "MarginalResult", "PartialDependenceResult", "RegionTree"]
