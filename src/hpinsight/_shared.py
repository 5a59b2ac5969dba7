"""Small helpers every result type shares: frozen arrays, JSON values, one-line reprs,
number formatting. Nothing here knows a method of the papers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["GRID_TOL", "MATTERS_SHARE", "NEGLIGIBLE_SHARE", "NO_CLEAR_SIGNAL", "REPR_WIDTH", "clip_text", "fmt_best", "fmt_r2", "fmt_share", "fmt_value", "grid_columns", "join_items",
           "json_array", "json_value", "no_signal_words", "readonly", "round_share", "spread_beyond_rounding", "step_index",
           "taken_out_words"]


def spread_beyond_rounding(y: NDArray[np.float64]) -> float | None:
    """The standard deviation of ``y``, or None where it is at the rounding of the values
    themselves (64 ulps of the largest) or not finite: no spread. Standardized, such a
    spread becomes one, and a model would fit the last bits (30 trials of 0.4 have a
    standard deviation of 1.1e-16 about their computed mean)."""
    if not y.size:
        return None
    sd = float(y.std())
    rounding = 64 * np.finfo(np.float64).eps * float(np.abs(y).max())
    return sd if sd > rounding and math.isfinite(sd) else None


def readonly(a: Any) -> NDArray[Any]:
    """Return ``a`` as an array that cannot be written to (results and trees are frozen)."""
    out: NDArray[Any] = np.asarray(a)
    out.flags.writeable = False
    return out


def json_value(v: Any) -> Any:
    """A value as JSON holds it: NumPy scalars unwrapped, NaN and infinities as None,
    anything else that JSON has no type for as its ``str``."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)


def json_array(a: Any) -> Any:
    """A float array as nested lists, NaN and infinities as None (JSON has neither)."""
    arr = np.asarray(a, dtype=np.float64)
    finite = np.isfinite(arr)
    if finite.all():
        return arr.tolist()
    out = arr.astype(object)
    out[~finite] = None
    return out.tolist()


def grid_columns(params: Sequence[str], grid: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """One column per parameter with its native value at every grid point, in the C order
    of ``mean.ravel()`` (the first parameter varies slowest)."""
    mesh = np.meshgrid(*[np.arange(len(g)) for g in grid], indexing="ij")
    return {name: [grid[a][int(k)] for k in mesh[a].ravel()] for a, name in enumerate(params)}


#: The longest a result's ``repr`` gets: one line, names and headline numbers only.
REPR_WIDTH = 120


def clip_text(text: str, width: int) -> str:
    """``text``, cut to ``width`` characters with a closing "…" when it is longer."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"


def join_items(items: Sequence[str | tuple[str, str]], width: int) -> str:
    """``items`` joined by ", ": as many as fit in ``width`` characters, then "…+k" for the
    ``k`` left out.

    An item may be a ``(name, value)`` pair, e.g. ``("lr", "=0.93")``: when not even the
    first fits, its name is shortened and its value kept.
    """
    pairs = [(item, "") if isinstance(item, str) else item for item in items]
    texts = [name + value for name, value in pairs]
    for k in range(len(texts), 0, -1):
        rest = len(texts) - k
        shown = ", ".join(texts[:k]) + (f", …+{rest}" if rest else "")
        if len(shown) <= width:
            return shown
    if not pairs:
        return ""
    name, value = pairs[0]
    more = f", …+{len(pairs) - 1}" if len(pairs) > 1 else ""
    return clip_text(clip_text(name, max(width - len(value) - len(more), 1)) + value + more, width)


#: What every surface writes in place of a share from an analysis where more than a
#: quarter of the refits find no signal (``FanovaResult.signal_doubtful``): a fraction of
#: next to nothing.
NO_CLEAR_SIGNAL = "no clear signal"


def no_signal_words(n_flat: int, n_refits: int) -> str:
    """How every surface says why an analysis has no clear signal, with its own counts:
    ``4 of 12 refits find no signal`` (the rule is more than a quarter, so "most" would
    claim more than the counts do)."""
    return f"{n_flat} of {n_refits} refits find no signal"


#: An effect that is resolved and holds at least this share of the variance "matters";
#: nothing is "indistinguishable from nothing" while its trials could hide an effect this
#: large (:attr:`~hpinsight.results.Importance.hidden`).
MATTERS_SHARE = 0.05
#: Shares below this are nothing whatever the null says (a fit that gives the shadows
#: exactly nothing would otherwise call a share of 1e-9 "uncertain").
NEGLIGIBLE_SHARE = 5e-4
#: The shares the rules read against: no share is written equal to one unless it is one.
_SHARE_THRESHOLDS = (MATTERS_SHARE, NEGLIGIBLE_SHARE)


def fmt_share(x: float) -> str:
    """A share of variance, the one way every surface writes it: ``42.1 %``; below
    0.1 %, to two significant digits (``0.047 %``), so a small share that is not nothing
    does not print as ``0.0 %`` (below 1e-6 % it does). A share is never printed equal
    to a threshold the rules read (:data:`MATTERS_SHARE`, :data:`NEGLIGIBLE_SHARE`)
    unless it is one: ``4.99 %``, not ``5.0 %``, for a share the rules call below 5 %."""
    text = _share_text(x)
    for threshold in _SHARE_THRESHOLDS:
        if x != threshold and text == _share_text(threshold):
            decimals = len(text.split()[0].partition(".")[2])
            while decimals < 8 and f"{100 * x:.{decimals}f}" == f"{100 * threshold:.{decimals}f}":
                decimals += 1
            return f"{100 * x:.{decimals}f} %"
    return text


def round_share(x: float, digits: int = 3) -> float:
    """A share of variance as stored for machines (the live summary's JSON): ``digits``
    significant digits, and never equal to a threshold the rules read unless it is one
    (``0.0496``, not ``0.05``; ``round(x, 3)`` made 0.0496 "0.05" beside "small" and a
    share of 0.00049 "0.0"). NaN and zero stay as they are."""
    if not math.isfinite(x) or x == 0.0:
        return float(x)
    out = float(f"{x:.{digits}g}")
    while digits < 17 and out in _SHARE_THRESHOLDS and x != out:
        digits += 1
        out = float(f"{x:.{digits}g}")
    return out


def _share_text(x: float) -> str:
    """:func:`fmt_share` before it keeps shares apart from the thresholds."""
    if not math.isfinite(x):
        return "n/a"
    pct = 100 * x
    if abs(pct) < 1e-6:  # below a millionth of a percent
        return "0.0 %"
    if abs(float(f"{pct:.2g}")) >= 0.1:  # (0.0999 % rounds to 0.1 %, not "0.100 %")
        return f"{pct:.1f} %"
    decimals = 1 - math.floor(math.log10(abs(pct)))  # two significant digits
    return f"{pct:.{decimals}f} %"


def taken_out_words(before: float) -> str:
    """How every surface names an effect whose parameter the model took out (its share
    is 0): ``taken out of the model, 30.0 % before``, the share its verdict read."""
    return f"taken out of the model, {fmt_share(before)} before"


def fmt_value(value: Any, *, quote: bool = False) -> str:
    """A parameter value for people: floats to 4 significant digits, or to the unit
    from 10,000 to a billion (``30154``, not ``3.015e+04``), other values as they
    print (``quote=True``: as their ``repr``, so strings keep their quotes). A numpy
    scalar prints as the Python value it holds (``4``, not ``np.int64(4)``).

    Examples
    --------
    >>> fmt_value(0.000123456), fmt_value(30154.2), fmt_value(np.int64(4)), fmt_value(2e12)
    ('0.0001235', '30154', '4', '2e+12')
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return f"{value:.0f}" if 1e4 <= abs(value) < 1e9 else f"{value:.4g}"
    return repr(value) if quote else str(value)


def fmt_best(value: float) -> str:
    """An objective's best value for people: 6 significant digits, and from 100,000 on
    to the sixth decimal (``1000000.0133``, where ``1e+06`` hid every difference a study
    of values near a million makes).

    Examples
    --------
    >>> fmt_best(0.28535612), fmt_best(1000000.0133), fmt_best(-2.5e-7), fmt_best(2e12)
    ('0.285356', '1000000.0133', '-2.5e-07', '2000000000000')
    """
    if math.isfinite(value) and abs(value) >= 1e5:
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return f"{value:.6g}"


def fmt_r2(r2: float | None) -> str:
    """A model's R² to two decimals (``n/a`` for None); a small negative one is
    ``0.00``, not ``-0.00``."""
    if r2 is None or not math.isfinite(r2):
        return "n/a"
    text = f"{r2:.2f}"
    return "0.00" if text == "-0.00" else text


#: Slack, in steps, for values that sit on a step grid up to floating-point error.
GRID_TOL = 1e-9


def step_index(low: float, step: float, x: Any, how: str) -> Any:
    """Index ``k`` of the grid value ``low + k * step`` that is nearest to ``x``
    (``how="nearest"``, ties to even), the last at or below it (``"floor"``) or the
    first at or above it (``"ceil"``); a value within ``GRID_TOL`` steps of a grid value
    counts as on it. On a scalar, an int; on an array, a float array of whole numbers
    (NaN stays NaN).

    Examples
    --------
    >>> step_index(0.0, 0.1, 0.3, "floor"), step_index(0.0, 0.1, 0.25, "ceil")
    (3, 3)
    """
    t = (np.asarray(x, dtype=np.float64) - low) / step
    if how == "nearest":
        k = np.round(t)
    elif how == "floor":
        k = np.floor(t + GRID_TOL)
    elif how == "ceil":
        k = np.ceil(t - GRID_TOL)
    else:  # pragma: no cover - internal
        raise AssertionError(how)
    return k if k.ndim else int(k)
