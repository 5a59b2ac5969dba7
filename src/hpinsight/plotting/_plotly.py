"""Plotly rendering of importances, for viewers that show plotly figures (optuna-dashboard).

The numbers come from :func:`~._importance_data.importance_plot_data`, the same plot data
the matplotlib figure draws; only the drawing differs. Plotly is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._decision_result import fmt_share
from .._optional import import_optional

if TYPE_CHECKING:
    from ._importance_data import ImportancePlotData

__all__ = ["plotly_importance"]


def plotly_importance(data: ImportancePlotData, *, title: str, spread: str = "draws",
                      caller: str = "plotly_importance") -> Any:
    """Horizontal bars of the fractions of variance with std whiskers, most important on top.

    Parameters
    ----------
    data : ImportancePlotData
        What to draw (:func:`~hpinsight.plotting.importance_plot_data`).
    title : str
        The figure's title.
    spread : str, default="draws"
        What the whiskers' std is over ("trees", "draws", ...), named on the x axis.
    caller : str, default="plotly_importance"
        Named in the error when plotly is missing.

    Returns
    -------
    plotly.graph_objects.Figure
        Its first trace is the bars over all trials: ``x`` the means, ``error_x.array`` the
        stds, ``y`` the labels (a second trace holds a capped analysis, if given). Plotly's
        default template is left out, so the figure stays small when stored.

    Examples
    --------
    >>> import numpy as np
    >>> from hpinsight.plotting import ImportancePlotData
    >>> data = ImportancePlotData(labels=("x", "z"), mean=np.array([0.9, 0.1]),
    ...                           std=np.array([0.02, 0.01]), capped_mean=None,
    ...                           capped_std=None, capped_label="", n_effects=2)
    >>> fig = plotly_importance(data, title="Importance")
    >>> fig.data[0].x
    (0.9, 0.1)
    """
    go = import_optional("plotly.graph_objects", caller)
    labels = list(data.labels)

    def bars(mean: Any, std: Any, name: str, color: str) -> Any:
        mean = [float(m) for m in np.asarray(mean, dtype=np.float64)]
        std = [float(s) for s in np.asarray(std, dtype=np.float64)]
        text = [f"{fmt_share(m)} ± {fmt_share(s)}" for m, s in zip(mean, std, strict=True)]
        return go.Bar(x=mean, y=labels, orientation="h", name=name, marker_color=color,
                      error_x={"type": "data", "array": std, "visible": True},
                      hovertext=text, hoverinfo="y+text")

    traces = [bars(data.mean, data.std, "all trials", "#1f77b4")]
    if data.capped_mean is not None and data.capped_std is not None:
        traces.append(bars(data.capped_mean, data.capped_std, data.capped_label, "#ff7f0e"))
    shown = len(labels)
    if data.n_effects > shown:
        title = f"{title}: top {shown} of {data.n_effects} effects"
    fig = go.Figure(data=traces)
    fig.update_layout(
        template="none", title={"text": title}, barmode="group", showlegend=len(traces) > 1,
        height=int(120 + 32 * shown * len(traces)), margin={"l": 140, "r": 30, "t": 60, "b": 50},
        xaxis={"title": {"text": f"fraction of variance (mean ± std over {spread})"},
               "rangemode": "tozero", "tickformat": ".0%", "gridcolor": "#e5e5e5"},
        yaxis={"autorange": "reversed", "automargin": True},
    )
    if data.note:  # a capped analysis without signal: said, not drawn
        fig.add_annotation(text=data.note.replace("\n", "<br>"), xref="paper", yref="paper", x=1.0, y=0.0,
                           xanchor="right", yanchor="bottom", showarrow=False,
                           font={"size": 11, "color": "#666666"})
    return fig
