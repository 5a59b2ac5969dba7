"""Figures of hpinsight results (matplotlib, imported on first use).

Each ``plot_*`` function draws into ``ax=`` (or a new figure) and returns the Axes; the
numbers it shows come from the ``*_plot_data`` functions, which need no drawing library.
Install matplotlib with ``pip install "hpinsight[plot]"``.
"""

from __future__ import annotations

from ._across import plot_importance_across
from ._data import (
    CurveData,
    PD2PlotData,
    PDPlotData,
    pd2_plot_data,
    pd_plot_data,
    region_plot_data,
    region_rules,
)
from ._importance import (
    plot_importance,
    plot_importance_history,
    plot_interaction,
    plot_marginal,
    plot_subspace,
    plot_tuning_risk,
)
from ._importance_data import (
    ImportancePlotData,
    MarginalPlotData,
    RiskPlotData,
    SubspacePlotData,
    TrajectoryPlotData,
    importance_plot_data,
    marginal_plot_data,
    risk_plot_data,
    subspace_plot_data,
    trajectory_plot_data,
)
from ._pdp import plot_partial_dependence, plot_regions

__all__ = [
    "CurveData",
    "ImportancePlotData",
    "MarginalPlotData",
    "PD2PlotData",
    "PDPlotData",
    "RiskPlotData",
    "SubspacePlotData",
    "TrajectoryPlotData",
    "importance_plot_data",
    "marginal_plot_data",
    "pd2_plot_data",
    "pd_plot_data",
    "plot_importance",
    "plot_importance_across",
    "plot_importance_history",
    "plot_interaction",
    "plot_marginal",
    "plot_partial_dependence",
    "plot_regions",
    "plot_subspace",
    "plot_tuning_risk",
    "region_plot_data",
    "region_rules",
    "risk_plot_data",
    "subspace_plot_data",
    "trajectory_plot_data",
]
