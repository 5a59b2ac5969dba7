"""What every figure shares: new axes on demand, mark styles, axes of a parameter, and
the legibility rules (log-axis ticks, category ticks, titles and legends that fit)."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._optional import import_optional
from ..exceptions import InvalidArgumentTypeError
from ..space import Categorical, Float, Int

__all__ = ["MANY_CHOICES", "MARK_STYLES", "MAX_TEXT_CHARS", "axis_of", "bounded", "bounded_text", "category_label", "category_order", "check_result", "drawn_by",
           "legend_above", "legend_entries", "log_ticks", "new_axes", "set_category_ticks",
           "set_log_axis", "set_title", "set_xlabel", "style_axes_2d", "tick_text", "wrappable"]

#: Colour and line style of vertical marks, by label; others get a neutral dash-dot.
MARK_STYLES = {"incumbent": ("tab:red", "--"), "default": ("0.3", ":")}
OTHER_MARK = ("0.4", "-.")

#: Above this many choices a categorical axis is sorted by the curve it shows, and only
#: some of its choices are named.
MANY_CHOICES = 20
#: Longest tick label, in characters (longer ones lose their middle to an ellipsis).
MAX_TICK_CHARS = 14
#: Longest text of any kind in a figure (title, axis label, legend entry, tick), in
#: characters. A parameter's name can be any length, and matplotlib's layout of one text
#: grows with its length (a 1,000-character name took 1.4 GB to draw a report's figures,
#: 3,000 did not finish): longer texts lose their middle to an ellipsis. Tables and JSON
#: keep every name whole.
MAX_TEXT_CHARS = 60
#: Longest name beside a bar (importance charts): the names share the figure's width with
#: the bars and the axis label under them (a 60-character name left too little room for
#: the label, which was cut off).
MAX_BAR_LABEL_CHARS = 32
#: Most major ticks on a log axis.
MAX_LOG_TICKS = 6
# rough text metrics (DejaVu Sans): average glyph width and line height, in font sizes
_CHAR_WIDTH = 0.62
_LINE_HEIGHT = 1.3


def new_axes(ax: Any, caller: str, size: tuple[float, float]) -> Any:
    """``ax``, or the axes of a new pyplot figure of ``size``. Pyplot is imported only
    for a new figure: drawing on given axes (a report's page, a user's own figure)
    leaves the backend and pyplot's state alone."""
    if ax is None:
        plt = import_optional("matplotlib.pyplot", caller)
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
    ax: Any, x: Any, y: Any, labels: tuple[Any, Any], logs: tuple[bool, bool],
    names: tuple[str, str], totals: tuple[int | None, int | None] = (None, None),
) -> None:
    """Log scales, category ticks and labels of a heatmap's two axes.

    ``totals``: per axis, the categorical parameter's number of choices when its grid
    holds only some of them (said in the axis label).
    """
    for which, positions, ticks, log, name, total in (
            ("x", x, labels[0], logs[0], names[0], totals[0]),
            ("y", y, labels[1], logs[1], names[1], totals[1])):
        if log:
            set_log_axis(ax, which, positions)
        named = None if ticks is None else set_category_ticks(ax, which, list(ticks))
        text = name if ticks is None else category_label(name, len(ticks), total, named)
        # wrapping a vertical label misleads tight_layout (it reserves far too much room)
        getattr(ax, f"set_{which}label")(wrappable(text), wrap=which == "x")


def category_label(
    name: str, n: int, total: int | None = None, named: int | None = None,
    sorted_by: str | None = None,
) -> str:
    """An axis label saying which choices a categorical axis shows and names.

    Examples
    --------
    >>> category_label("arch", 200, named=13, sorted_by="mean")
    'arch (200 choices sorted by mean, 13 named)'
    >>> category_label("arch", 20, total=200)
    'arch (20 of 200 choices)'
    >>> category_label("kind", 3, named=3)
    'kind'
    """
    parts = []
    thinned = total is not None and total > n
    if thinned or sorted_by or (named is not None and named < n):
        choices = f"{n} of {total} choices" if thinned else f"{n} choices"
        parts.append(f"{choices} sorted by {sorted_by}" if sorted_by else choices)
    if named is not None and named < n:
        parts.append(f"{named} named")
    return f"{name} ({', '.join(parts)})" if parts else name


# ---------------------------------------------------------------------------- log axes
def log_ticks(
    low: float, high: float, *, integer: bool = False, max_ticks: int = MAX_LOG_TICKS
) -> list[float]:
    """A few well-spaced major ticks for a log axis from ``low`` to ``high``.

    Integers get powers of two (every second or more when there are many), wide
    ranges powers of ten, narrow ones the 1-2-5 series; at most ``max_ticks``.
    An empty list means "leave matplotlib's own ticks" (a range not above zero).

    Parameters
    ----------
    low, high : float
        The data's range.
    integer : bool, default=False
        An integer parameter (plain integer ticks).
    max_ticks : int, default=MAX_LOG_TICKS

    Returns
    -------
    list of float

    Examples
    --------
    >>> log_ticks(16, 256, integer=True)
    [16.0, 32.0, 64.0, 128.0, 256.0]
    >>> log_ticks(1, 1024, integer=True)
    [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0]
    >>> log_ticks(1e-5, 1.0)
    [1e-05, 0.0001, 0.001, 0.01, 0.1, 1.0]
    >>> log_ticks(0.01, 0.1)
    [0.01, 0.02, 0.05, 0.1]
    """
    if not (low > 0 and high > low and math.isfinite(high)):
        return []
    eps = 1e-9
    if integer and high / low <= 2.0 ** 12:
        exps = range(math.ceil(math.log2(low) - eps), math.floor(math.log2(high) + eps) + 1)
        ticks = _thinned([2.0 ** e for e in exps], list(exps), max_ticks)
    elif math.log10(high / low) >= 2:
        exps = range(math.ceil(math.log10(low) - eps), math.floor(math.log10(high) + eps) + 1)
        ticks = _thinned([10.0 ** e for e in exps], list(exps), max_ticks)
    else:
        lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
        ticks = [float(f"{m}e{e}") for e in range(lo, hi + 1) for m in (1, 2, 5)
                 if low * (1 - eps) <= float(f"{m}e{e}") <= high * (1 + eps)]
        if len(ticks) > max_ticks:
            ticks = [t for t in ticks if f"{t:e}".startswith("1")]
    if len(ticks) < 2:  # a narrow range: evenly spaced round numbers
        ticks = _round_ticks(low, high, integer)
    return ticks


def _thinned(values: list[float], exps: list[int], max_ticks: int) -> list[float]:
    """Every k-th value (by exponent, so 1, 4, 16 rather than 2, 8, 32), at most
    ``max_ticks`` of them."""
    k = max(1, math.ceil(len(values) / max(max_ticks, 2)))
    return [v for v, e in zip(values, exps, strict=True) if e % k == 0]


def _round_ticks(low: float, high: float, integer: bool) -> list[float]:
    span = high - low
    step = 10.0 ** math.floor(math.log10(span / 3))
    for m in (1, 2, 2.5, 5, 10):
        if span / (m * step) <= 4:
            step *= m
            break
    if integer:
        step = max(1.0, round(step))
    first = math.ceil(low / step - 1e-9) * step
    ticks = [float(f"{t:.12g}") for t in np.arange(first, high + step * 1e-9, step)]
    return ticks or [low, high]


#: Digits and the minus sign as superscripts: ``10⁻³`` is plain text, which draws in
#: half the time of mathtext's ``10^{-3}`` (the figures with a log axis dominated a
#: report page's time).
_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def tick_text(value: float, *, integer: bool = False, powers: bool = False) -> str:
    """A log axis's tick label: plain numbers (``64``, ``0.02``), ``10⁻³`` for powers
    of ten when ``powers`` (or when the plain number is long).

    Examples
    --------
    >>> tick_text(128.0, integer=True), tick_text(0.02), tick_text(0.001)
    ('128', '0.02', '0.001')
    >>> tick_text(0.001, powers=True), tick_text(1e5)
    ('10⁻³', '10⁵')
    """
    if integer and abs(value) < 1e6:
        return str(round(value))
    exp = math.log10(abs(value)) if value else 0.5
    if abs(exp - round(exp)) < 1e-9 and (powers or not 1e-3 <= abs(value) < 1e4):
        return "10" + str(round(exp)).translate(_SUPERSCRIPT)
    text = f"{value:g}"
    return text if len(text) <= 6 else f"{value:.2g}"


def set_log_axis(ax: Any, which: str, values: Any) -> None:
    """Log scale for ``ax``'s ``which`` axis ("x" or "y") with a few plain, labelled
    major ticks and unlabelled minor ones (no ``2x10^1 3x10^1`` clutter).

    Parameters
    ----------
    ax : matplotlib Axes
    which : {"x", "y"}
    values : array-like
        The positions drawn (their range sets the ticks; all whole numbers mean an
        integer parameter, labelled as integers).
    """
    ticker = import_optional("matplotlib.ticker", "hpinsight.plotting")
    getattr(ax, f"set_{which}scale")("log")
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return
    integer = bool(np.all(v == np.round(v)))
    fig = ax.get_figure()
    box = ax.get_position()
    length = (box.width * fig.get_figwidth() if which == "x"
              else box.height * fig.get_figheight()) * 0.85
    size = _font_points(f"{which}tick.labelsize") / 72.0
    wide = v.max() / v.min() >= 100  # powers of ten, "10^-5"; else "0.002", "1024"
    chars = len(str(round(v.max()))) if integer else (4 if wide else 5)
    pitch = (chars * _CHAR_WIDTH * size + 0.12) if which == "x" else (_LINE_HEIGHT * size + 0.1)
    max_ticks = int(min(MAX_LOG_TICKS, max(3, length // pitch)))
    ticks = log_ticks(float(v.min()), float(v.max()), integer=integer, max_ticks=max_ticks)
    if not ticks:
        return
    powers = not integer and all(abs(math.log10(t) - round(math.log10(t))) < 1e-9
                                 for t in ticks)
    axis = getattr(ax, f"{which}axis")
    axis.set_major_locator(ticker.FixedLocator(ticks))
    axis.set_major_formatter(ticker.FuncFormatter(
        lambda value, _pos: tick_text(value, integer=integer, powers=powers)))
    if integer and all(t == 2.0 ** round(math.log2(t)) for t in ticks):
        minor = [2.0 ** e for e in range(round(math.log2(ticks[0])) - 1,
                                          round(math.log2(ticks[-1])) + 2)]
        axis.set_minor_locator(ticker.FixedLocator(
            [m for m in minor if m not in ticks and v.min() <= m <= v.max()]))
    else:
        # 1, 2 and 5 of each decade (a decade without a label keeps its tick): the eight
        # of matplotlib's "auto" were a sixth of the demo page's drawing time
        axis.set_minor_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_minor_formatter(ticker.NullFormatter())


# ---------------------------------------------------------------------------- categories
def category_order(mean: Any) -> Any:
    """Drawing order of a categorical curve: the parameter's own order, or sorted by
    ``mean`` (lowest first) when there are more than ``MANY_CHOICES`` choices.

    Returns
    -------
    ndarray of int
        ``order[j]`` is the choice drawn at position ``j``.
    """
    m = np.asarray(mean, dtype=np.float64)
    if m.size <= MANY_CHOICES:
        return np.arange(m.size)
    return np.argsort(np.where(np.isnan(m), np.inf, m), kind="stable")


def set_category_ticks(ax: Any, which: str, labels: Sequence[str]) -> int:
    """Name the choices at positions ``0..n-1`` of ``ax``'s ``which`` axis without overlap.

    Long names are shortened in the middle; when the names do not fit side by side the
    x labels turn vertical (and smaller), and when even those do not fit only evenly
    spaced choices (the first and last among them) are named, the others keeping an
    unlabelled tick. The room is judged from the axes' size before layout, with a
    margin for what the layout takes.

    Parameters
    ----------
    ax : matplotlib Axes
    which : {"x", "y"}
    labels : sequence of str
        One per position.

    Returns
    -------
    int
        How many choices are named.
    """
    n = len(labels)
    fig = ax.get_figure()
    box = ax.get_position()
    length = (box.width * fig.get_figwidth() if which == "x"
              else box.height * fig.get_figheight()) * 0.85  # room the layout may take
    size = _font_points(f"{which}tick.labelsize") / 72.0
    texts = [as_written(_shorten(t)) for t in labels]
    widest = max((len(t) for t in texts), default=0) * _CHAR_WIDTH * size + 0.08
    line = _LINE_HEIGHT * size + 0.03
    rotate = which == "x" and n * widest > length
    pitch = line if (which == "y" or rotate) else widest  # room one name needs
    shown = np.arange(n)
    if n > 1 and n * pitch > length:
        # evenly spaced names, consecutive ones at least ``pitch`` apart (rounding can
        # bring two a position closer: one position of slack)
        gap = max(pitch * n / length + 1.0, 1.0)
        m = max(2, 1 + math.floor((n - 1) / gap))
        shown = np.unique(np.round(np.linspace(0, n - 1, m)).astype(np.intp))
    axis = getattr(ax, f"{which}axis")
    axis.set_ticks(shown.astype(np.float64), [texts[i] for i in shown])
    if shown.size < n:
        axis.set_ticks(np.arange(n, dtype=np.float64), minor=True)
    if rotate:
        ax.tick_params(axis="x", which="major", labelrotation=90, labelsize="small")
    return int(shown.size)


def _shorten(text: str, limit: int = MAX_TICK_CHARS) -> str:
    """At most ``limit`` characters, cut in the middle: names of a long set of choices
    often share a prefix and differ at the end (``"resnet…ant_017"``)."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def bounded(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Every line of ``text`` at most ``limit`` characters long, cut in the middle, and
    drawn as written (tick labels set from a list are made anew when the figure is
    drawn: pass them through this; every other text is cut by :func:`bounded_text`)."""
    return as_written("\n".join(_shorten(line, limit) for line in text.split("\n")))


def as_written(text: str) -> str:
    """``text`` with its dollar signs escaped, so that matplotlib draws a name such as
    ``a$b$c`` as it is written and not as mathematics (``$\\frac{1$`` stopped a figure
    with a parse error; escaping is the one way that also holds where a title is
    wrapped, which measures the text as mathematics whatever ``parse_math`` says)."""
    return _UNESCAPED_DOLLAR.sub(r"\\$", text) if "$" in text else text


_UNESCAPED_DOLLAR = re.compile(r"(?<!\\)\$")


def bounded_text(plot: Any) -> Any:
    """Decorate a ``plot_*`` function: before its Axes are returned (and before anything
    is drawn), every text it wrote longer than ``MAX_TEXT_CHARS`` is cut in the middle,
    so a figure costs the same whatever the length of a parameter's name (tick labels
    from a list: :func:`bounded`). Texts of a figure the user passed in (``ax=``) that
    the call left as they were stay whole: the user's own titles, labels and legends."""
    import functools

    @functools.wraps(plot)
    def with_bounded_text(*args: Any, **kwargs: Any) -> Any:
        given = kwargs.get("ax")
        before = ({} if given is None else
                  {id(t): t.get_text() for t in _texts_but_ticks(given.figure, plot.__name__)})
        ax = plot(*args, **kwargs)
        for text in _texts_but_ticks(ax.figure, plot.__name__):
            content = text.get_text()
            if before.get(id(text)) == content:
                continue
            shown = bounded(content) if len(content) > MAX_TEXT_CHARS else as_written(content)
            if shown != content:
                text.set_text(shown)
        return ax
    return with_bounded_text


def _texts_but_ticks(fig: Any, caller: str) -> list[Any]:
    """Every text of ``fig`` but its tick labels (titles, axis labels, legends,
    annotations, the figure's own texts). Tick labels are made anew from their labels
    when the figure is drawn, so those pass through :func:`bounded` where they are set;
    walking into an axis would also make its ticks before the draw does (``findobj``
    over a whole figure cost a twelfth of a report's page)."""
    axis_type = import_optional("matplotlib.axis", caller).Axis
    text_type = import_optional("matplotlib.text", caller).Text
    out: list[Any] = []
    todo = [fig]
    while todo:
        artist = todo.pop()
        if isinstance(artist, axis_type):
            out.extend((artist.label, artist.offsetText))
            continue
        if isinstance(artist, text_type):
            out.append(artist)
        todo.extend(artist.get_children())
    return out


def _font_points(key: str) -> float:
    mpl = import_optional("matplotlib", "hpinsight.plotting")
    fm = import_optional("matplotlib.font_manager", "hpinsight.plotting")
    return float(fm.FontProperties(size=mpl.rcParams[key]).get_size_in_points())


# ---------------------------------------------------------------------------- titles, legends
def legend_entries(ax: Any) -> tuple[list[Any], list[str]]:
    """The axes' legend handles and labels, curves first and the vertical marks
    (incumbent, default) last, whatever the order of drawing (error bars come after
    lines in matplotlib's own order)."""
    entries = sorted(zip(*ax.get_legend_handles_labels(), strict=True),
                     key=lambda entry: entry[1] in MARK_STYLES)
    return [h for h, _ in entries], [label for _, label in entries]


def set_title(ax: Any, text: str, **kwargs: Any) -> Any:
    """The axes' title, wrapped onto a second line rather than cut off by the figure's
    edge when it is wider than the room around the axes."""
    return ax.set_title(wrappable(text), wrap=True, **kwargs)


def set_xlabel(ax: Any, text: str) -> Any:
    """The x axis's label, wrapped as :func:`set_title` wraps a title."""
    return ax.set_xlabel(wrappable(text), wrap=True)


def wrappable(text: str, limit: int = MAX_BAR_LABEL_CHARS) -> str:
    """``text`` with every word longer than ``limit`` characters cut in the middle: a
    wrapped text breaks between words only, so one long parameter name ran past the
    figure's edge in a marginal's title and axis label."""
    return "\n".join(" ".join(_shorten(word, limit) for word in line.split(" "))
                     for line in text.split("\n"))


def legend_above(ax: Any, title: str, *, legend_title: str | None = None) -> Any:
    """A small, frameless legend in a row between the axes and their title, so it
    covers nothing drawn; the title moves up to make room.

    Parameters
    ----------
    ax : matplotlib Axes
    title : str
        The axes' title.
    legend_title : str, optional
        A line above the entries (e.g. ``"95% band"``).

    Returns
    -------
    matplotlib.legend.Legend or None
        None when nothing is labelled.
    """
    handles, labels = legend_entries(ax)
    if not handles:
        set_title(ax, title)
        return None
    ncol = min(len(handles), 3)
    rows = math.ceil(len(handles) / ncol) + (1 if legend_title else 0)
    small = _font_points("legend.fontsize") * 0.833  # "small"
    legend = ax.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                       ncol=ncol, fontsize="small", frameon=False, borderaxespad=0.2,
                       borderpad=0.2, handlelength=1.6, handletextpad=0.5,
                       columnspacing=1.2, labelspacing=0.3, title=legend_title,
                       title_fontsize="small")
    set_title(ax, title, pad=8.0 + rows * small * 1.35)
    return legend


def n_choices(space: Any, name: str) -> int | None:
    """A categorical parameter's number of choices (None: not categorical, or no space)."""
    param = None if space is None else space[name]
    return len(param.choices) if isinstance(param, Categorical) else None


#: The figure of each kind of result, for an error that names the right one.
_DRAWN_BY = {
    "FanovaResult": "plot_importance (its effects), plot_marginal or plot_interaction",
    "MarginalResult": "plot_marginal (one parameter) or plot_interaction (two)",
    "SubspaceResult": "plot_subspace",
    "TuningRiskResult": "plot_tuning_risk",
    "PartialDependenceResult": "plot_partial_dependence",
    "RegionsResult": "plot_regions",
    "AcrossStudiesResult": "plot_importance_across",
}


def drawn_by(kind: str) -> str:
    """`` A FanovaResult is drawn by ...``: the functions that draw a result of the class
    named ``kind`` ("" for a class no figure draws), for an error's hint."""
    return (f" A {kind} is drawn by hpinsight.plotting.{_DRAWN_BY[kind]}, or by its own .plot()."
            if kind in _DRAWN_BY else "")


def check_result(result: Any, kinds: tuple[str, ...], func: str, param: str = "result") -> None:
    """Refuse anything but the results (of :mod:`hpinsight.results`, by name) ``func``
    draws, naming the function that draws what was given: a SubspaceResult handed to
    ``plot_tuning_risk`` failed deep inside with ``AttributeError: 'SubspaceResult' object
    has no attribute 'rows'``. By class name, so that plotting imports no result module."""
    if any(c.__name__ in kinds and c.__module__.startswith("hpinsight.")
           for c in type(result).__mro__):
        return
    got = type(result).__name__
    hint = drawn_by(got)
    if isinstance(result, Mapping) and result and all(
            type(v).__name__ == "SurrogateRisk" for v in result.values()):
        hint = (" surrogate_tuning_risk's dict of SurrogateRisk has no figure of its own; "
                "suggest_subspace's SubspaceResult (with every cost of fixing) is drawn by "
                "hpinsight.plotting.plot_subspace.")
    raise InvalidArgumentTypeError(
        f"The '{param}' parameter of {func} must be a {' or a '.join(kinds)}. Got {got} "
        f"instead.{hint}")
