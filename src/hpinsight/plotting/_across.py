"""Matplotlib rendering of the importance across studies: each parameter's shares over
the studies (a box, and a point per study)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_int
from ._common import MAX_BAR_LABEL_CHARS, bounded, bounded_text, check_result, new_axes, set_title

if TYPE_CHECKING:
    from .._across import AcrossStudiesResult

__all__ = ["plot_importance_across"]


@bounded_text
def plot_importance_across(result: AcrossStudiesResult, *, ax: Any = None,
                           top: int | None = None) -> Any:
    """Each parameter's main-effect share in every study: a box over the studies
    (quartiles, whiskers to 1.5 IQR) and one point per study, largest median on top.

    Parameters
    ----------
    result : AcrossStudiesResult
        From :func:`~hpinsight.importance_across_studies`.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    top : int, optional
        Only the ``top`` parameters by median share.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> import numpy as np
    >>> import hpinsight as hp
    >>> from hpinsight.results import AcrossStudiesResult
    >>> r = AcrossStudiesResult(studies=("a", "b", "c"), params=("x", "z"),
    ...                         shares=np.array([[0.9, 0.1], [0.7, 0.3], [0.8, 0.2]]))
    >>> ax = hp.plotting.plot_importance_across(r, ax=Figure().add_subplot())
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['x', 'z']
    """
    check_result(result, ("AcrossStudiesResult",), "plot_importance_across")
    names = list(result.ranking())
    if top is not None:
        names = names[: check_int(top, "top", "plot_importance_across", minimum=1)]
    ax = new_axes(ax, "plot_importance_across", (6.0, 0.45 * len(names) + 1.4))
    columns = [result.shares[:, result.params.index(n)] for n in names]
    columns = [c[np.isfinite(c)] for c in columns]
    y = np.arange(len(names), dtype=np.float64)
    ax.boxplot(columns, positions=y, widths=0.6, showfliers=False,
               medianprops={"color": "tab:blue"}, **_horizontal())
    rng = np.random.default_rng(0)  # a fixed jitter: the same figure every time
    for k, c in enumerate(columns):
        ax.scatter(c, k + rng.uniform(-0.15, 0.15, c.size), s=12, color="0.25",
                   alpha=0.7, zorder=3)
    ax.set_yticks(y)
    ax.set_yticklabels([bounded(n, MAX_BAR_LABEL_CHARS) for n in names])
    ax.invert_yaxis()
    ax.set_xlim(left=0.0)
    ax.set_xlabel("share of variance (main effect), one point per study")
    w = result.kendall_w
    agree = f"; Kendall's W = {w:.2f}" if np.isfinite(w) else ""
    set_title(ax, f"Importance across {result.n_studies} studies{agree}")
    return ax


def _horizontal() -> dict[str, Any]:
    """Matplotlib's keyword for horizontal boxes: ``orientation`` from 3.10, before that
    ``vert`` (deprecated since)."""
    import matplotlib

    major, minor = (int(p) for p in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}
