"""What every figure shares: new axes on demand, mark styles, axes of a parameter."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._optional import import_optional
from .._params import Categorical, Float, Int

__all__ = ["MARK_STYLES", "axis_of", "new_axes", "style_axes_2d"]

#: Colour and line style of vertical marks, by label; others get a neutral dash-dot.
MARK_STYLES = {"incumbent": ("tab:red", "--"), "default": ("0.3", ":")}
OTHER_MARK = ("0.4", "-.")


def new_axes(ax: Any, caller: str, size: tuple[float, float]) -> Any:
    """``ax``, or the axes of a new pyplot figure of ``size`` (imports matplotlib)."""
    plt = import_optional("matplotlib.pyplot", caller)
    if ax is None:
        _, ax = plt.subplots(figsize=size)
    return ax


def axis_of(param: Any, grid: Any) -> tuple[Any, tuple[str, ...] | None, bool]:
    """Positions, tick labels (categoricals) and log scale of a parameter's grid.

    ``param`` None (a result built without its search space): a grid of numbers is a
    linear axis, anything else is categorical.
    """
    if isinstance(param, Categorical) or (param is None and not _all_numbers(grid)):
        return np.arange(len(grid), dtype=np.float64), tuple(map(str, grid)), False
    log = bool(isinstance(param, Float | Int) and param.log)
    return np.asarray(grid, dtype=np.float64), None, log


def _all_numbers(values: Any) -> bool:
    return all(isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)
               for v in values)


def style_axes_2d(
    ax: Any, x: Any, y: Any, labels: tuple[Any, Any], logs: tuple[bool, bool]
) -> None:
    """Log scales and category ticks of a heatmap's two axes."""
    for axis, positions, ticks, log in (("x", x, labels[0], logs[0]), ("y", y, labels[1], logs[1])):
        if log:
            getattr(ax, f"set_{axis}scale")("log")
        if ticks is not None:
            getattr(ax, f"set_{axis}ticks")(positions)
            getattr(ax, f"set_{axis}ticklabels")(list(ticks))
