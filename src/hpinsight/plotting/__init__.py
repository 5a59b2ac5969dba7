"""Figures of hpinsight results (matplotlib, imported on first use).

Each ``plot_*`` function draws into ``ax=`` (or a new figure) and returns the Axes; the
numbers it shows come from the ``*_plot_data`` functions, which need no drawing library.
Install matplotlib with ``pip install "hpinsight[plot]"``.
"""

from __future__ import annotations

from ._data import (
    CurveData,
    PD2PlotData,
    PDPlotData,
    pd2_plot_data,
    pd_plot_data,
    region_plot_data,
)
from ._pdp import plot_partial_dependence, plot_regions

__all__ = [
    "CurveData",
    "PD2PlotData",
    "PDPlotData",
    "pd2_plot_data",
    "pd_plot_data",
    "plot_partial_dependence",
    "plot_regions",
    "region_plot_data",
]
