"""Legibility of the figures at the report's sizes, measured on the drawn figure (Agg):
tick labels do not overlap, titles stay inside the figure, legends cover (almost) nothing
and leave the axes their width, region labels name each parameter once, log axes of
integers have plain ticks, many choices stay readable, and laying the figure out warns
of nothing, with ``tight_layout()`` as with ``layout="constrained"``."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.plotting import region_plot_data, region_rules
from hpinsight.plotting._common import log_ticks

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

#: The figure sizes of the HTML report (inches), by plot.
IMPORTANCE, MARGINAL, INTERACTION, REGIONS = (6.0, 4.0), (4.6, 3.2), (4.8, 3.8), (8.5, 3.4)
PDP = (5.5, 3.6)  # plot_partial_dependence's own default
ARCH = [f"resnet_variant_{i:03d}" for i in range(200)]
BEST_LOG_LR = {"adam": -3.0, "rmsprop": -3.5, "sgd": -1.5}


@pytest.fixture(scope="module")
def result():
    """A demo-like study with a log-scale integer and a categorical of 200 choices."""
    space = hp.SearchSpace([
        hp.Float("lr", 1e-5, 1.0, log=True),
        hp.Int("batch_size", 16, 256, log=True),
        hp.Categorical("optimizer", ["adam", "rmsprop", "sgd"]),
        hp.Float("dropout", 0.0, 0.6),
        hp.Categorical("arch", ARCH),
    ])
    configs = space.sample(300, seed=0)

    def loss(c):
        k = ARCH.index(c["arch"])
        return (0.08 * (math.log10(c["lr"]) - BEST_LOG_LR[c["optimizer"]]) ** 2 * (1 + k % 2)
                + 0.4 * (c["dropout"] - 0.25) ** 2
                + 0.01 * math.log2(c["batch_size"] / 64) ** 2 + 0.02 * math.sin(k))

    y = [loss(c) for c in configs]
    return hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)


@pytest.fixture(scope="module")
def trees(result):
    """Confidence splits as the report makes them (max_splits=3), by PDP parameter."""
    return {name: hp.confidence_split(hp.partial_dependence(result, params=name,
                                                            n_samples=200, seed=0),
                                      max_splits=3)
            for name in ("lr", "batch_size", "arch")}


INCUMBENT = {"lr": 1e-3, "batch_size": 64, "optimizer": "adam", "dropout": 0.25,
             "arch": ARCH[1]}


def draw(plot, size, layout="tight"):
    """Draw like the report: on a stand-alone Figure, then lay it out and render.

    Returns the figure, its (first) axes and every warning raised on the way.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = Figure(figsize=size, dpi=90,
                     layout="constrained" if layout == "constrained" else None)
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        plot(ax)
        if layout == "tight":
            fig.tight_layout()
        fig.canvas.draw()
    return fig, ax, [str(w.message) for w in caught]


def label_boxes(ax, which):
    """Window extents of the drawn tick labels of one axis (text shown, tick in view)."""
    axis = getattr(ax, f"{which}axis")
    low, high = sorted(axis.get_view_interval())
    renderer = ax.get_figure().canvas.get_renderer()
    boxes = []
    for minor in (False, True):
        for tick in axis.get_minor_ticks() if minor else axis.get_major_ticks():
            label = tick.label1
            loc = tick.get_loc()
            if loc is None or not label.get_visible() or not label.get_text():
                continue
            if not low - 1e-9 * abs(high - low) <= loc <= high + 1e-9 * abs(high - low):
                continue
            boxes.append((label.get_text(), label.get_window_extent(renderer)))
    return boxes


def overlapping(boxes):
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.overlaps(box_b)]


def inside(box, fig, slack=1.0):
    f = fig.bbox
    return (box.x0 >= f.x0 - slack and box.x1 <= f.x1 + slack and box.y0 >= f.y0 - slack
            and box.y1 <= f.y1 + slack)


def covered(ax, artist):
    """Share of the axes' area under ``artist`` (e.g. the legend)."""
    renderer = ax.get_figure().canvas.get_renderer()
    a, b = ax.get_window_extent(renderer), artist.get_window_extent(renderer)
    w = max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0))
    h = max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))
    return w * h / (a.width * a.height)


def assert_legible(fig, ax, caught, *, max_legend=0.10):
    """What every report figure must satisfy."""
    assert caught == []  # e.g. "Tight layout not applied", "constrained_layout not applied"
    renderer = fig.canvas.get_renderer()
    title = ax.title.get_window_extent(renderer)
    assert ax.get_title()
    assert inside(title, fig), (ax.get_title(), title, fig.bbox)
    for which in ("x", "y"):
        boxes = label_boxes(ax, which)
        assert overlapping(boxes) == [], (which, overlapping(boxes)[:3])
        assert all(inside(box, fig) for _, box in boxes), which
    legend = ax.get_legend()
    if legend is not None:
        assert covered(ax, legend) <= max_legend


# -- plot_regions ------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["tight", "constrained"])
@pytest.mark.parametrize("name", ["lr", "batch_size", "arch"])
def test_regions_keep_the_axes_wide_with_the_title_and_legend_in_the_figure(
        trees, name, layout):
    fig, ax, caught = draw(lambda ax: hp.plotting.plot_regions(
        trees[name], ax=ax, highlight=INCUMBENT), REGIONS, layout)
    # before: the legend was twice the axes' width (axes ~20 % of 765 px), the title
    # started left of the figure, and a split on 'arch' made tight_layout give up
    assert ax.get_window_extent().width >= 0.55 * fig.bbox.width
    assert_legible(fig, ax, caught, max_legend=0.0)  # beside the axes, not on them
    assert inside(ax.get_legend().get_window_extent(), fig)


def test_region_labels_name_each_parameter_once_and_count_samples(result, trees):
    space = result.space
    repeated = 0
    for tree in trees.values():
        leaves = tree.leaves()
        repeated += sum(len(leaf.conditions) > len({c.split()[0] for c in leaf.conditions})
                        for leaf in leaves)
        data = region_plot_data(tree)
        for leaf, curve in zip(leaves, data.curves[1:], strict=True):
            label = curve.label
            for param in space.names:
                assert len(re.findall(rf"\b{param}\b", label)) <= 1, label
            rules = region_rules(space, leaf)
            assert len(rules) == len(leaf.bounds)  # one per parameter split on
            assert all(len(rule) <= 32 for rule in rules), rules  # no list of 100 choices
            assert label == (f"{' and '.join(rules)} "
                             f"({leaf.n_samples} of {tree.pd.n_samples} samples)")
    assert repeated > 0  # the trees do split a parameter twice on one path


def test_region_rules_intersect_ranges_and_sets(trees, result):
    lr_rules = [region_rules(result.space, leaf) for leaf in trees["arch"].leaves()]
    assert any(re.fullmatch(r"[0-9.e+-]+ < lr <= [0-9.e+-]+", r) for rules in lr_rules
               for r in rules)  # "lr <= 0.15 and lr > 0.00017" is one interval
    for leaf in trees["batch_size"].leaves() + trees["lr"].leaves():
        for rule in region_rules(result.space, leaf):
            if rule.startswith("arch"):
                assert re.fullmatch(r"arch (in \d+ of 200 choices|= \S+|!= \S+|"
                                    r"(not )?in \{[^}]*\})", rule), rule
            if "batch_size" in rule:  # an integer: integer thresholds
                assert all(float(v).is_integer() for v in re.findall(r"[0-9.]+", rule))


# -- log axes of integers -----------------------------------------------------------------
@pytest.mark.parametrize("figure", ["marginal", "pdp", "regions", "interaction"])
def test_log_integer_axes_have_a_few_plain_ticks_that_do_not_overlap(result, trees, figure):
    plots = {
        "marginal": (lambda ax: hp.plotting.plot_marginal(result, "batch_size", ax=ax,
                                                          marks={"incumbent": 64}), MARGINAL),
        "pdp": (lambda ax: hp.plotting.plot_partial_dependence(trees["batch_size"].pd,
                                                               ax=ax), PDP),
        "regions": (lambda ax: hp.plotting.plot_regions(trees["batch_size"], ax=ax), REGIONS),
        "interaction": (lambda ax: hp.plotting.plot_interaction(result, "batch_size", "lr",
                                                                ax=ax), INTERACTION),
    }
    plot, size = plots[figure]
    fig, ax, caught = draw(plot, size)
    assert ax.get_xscale() == "log"
    texts = [text for text, _ in label_boxes(ax, "x")]
    # before: 11 labels such as 2x10^1 3x10^1 ..., six pairs of them overlapping
    assert 3 <= len(texts) <= 6
    assert all(t.isdigit() and math.log2(int(t)).is_integer() for t in texts), texts
    assert_legible(fig, ax, caught)


def test_log_ticks_are_few_and_well_spaced():
    assert log_ticks(16, 256, integer=True) == [16, 32, 64, 128, 256]
    assert log_ticks(16, 512, integer=True, max_ticks=4) == [16, 64, 256]
    assert log_ticks(1e-5, 1.0) == [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0]
    assert log_ticks(1e-5, 1.0, max_ticks=3) == [1e-4, 1e-2, 1.0]
    assert log_ticks(0.01, 0.1) == [0.01, 0.02, 0.05, 0.1]
    assert len(log_ticks(20, 30, integer=True)) >= 2  # no power of two inside: round steps
    assert log_ticks(0.0, 1.0) == []  # not a log range: matplotlib's own


# -- many choices ---------------------------------------------------------------------------
def test_a_marginal_of_200_choices_shows_all_sorted_and_names_a_readable_few(result):
    fig, ax, caught = draw(lambda ax: hp.plotting.plot_marginal(
        result, "arch", ax=ax, marks={"incumbent": ARCH[1]}), MARGINAL)
    assert_legible(fig, ax, caught)
    (points,) = ax.containers
    x, y = (np.asarray(a) for a in points.lines[0].get_data())
    assert x.size == 200  # every choice, though grid_size=100
    assert np.all(np.diff(y[np.argsort(x)]) >= 0)  # sorted by the marginal
    named = label_boxes(ax, "x")
    assert 2 <= len(named) < 200  # before: 100 names on top of each other
    assert "200 choices sorted by mean" in ax.get_xlabel()
    assert f"{len(named)} named" in ax.get_xlabel()
    lowest = result.marginal("arch", grid_size=200)
    names = list(lowest.grid[0])
    first = names[int(np.nanargmin(lowest.mean))]
    assert named[0][0] in (first, first[:6] + "…" + first[-7:])  # the best one is named
    (mark,) = [ln for ln in ax.get_lines() if ln.get_label() == "incumbent"]
    assert mark.get_xdata()[0] == x[1]  # at ARCH[1]'s sorted position


@pytest.mark.parametrize("figure", ["pdp", "regions", "interaction"])
def test_many_choices_in_pdps_and_heatmaps_say_what_is_shown(result, trees, figure):
    pd = trees["arch"].pd
    plots = {
        "pdp": (lambda ax: hp.plotting.plot_partial_dependence(pd, ax=ax), PDP, "x"),
        "regions": (lambda ax: hp.plotting.plot_regions(trees["arch"], ax=ax), REGIONS, "x"),
        "interaction": (lambda ax: hp.plotting.plot_interaction(result, "batch_size", "arch",
                                                                ax=ax), INTERACTION, "y"),
    }
    plot, size, which = plots[figure]
    fig, ax, caught = draw(plot, size)
    assert_legible(fig, ax, caught, max_legend=0.0 if figure == "regions" else 0.1)
    label = ax.get_xlabel() if which == "x" else ax.get_ylabel()
    # every choice is on the grid (a thinned one left out choices picked by their index)
    assert len(pd.grid[0]) == 200
    assert "(200 choices" in label
    assert " of 200 choices" not in label


# -- legends and titles ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["lr", "dropout", "optimizer"])
def test_the_marginal_legend_sits_above_the_axes_below_the_title(result, name):
    marks = {"incumbent": INCUMBENT[name], "default": {"lr": 1e-2, "dropout": 0.5,
                                                       "optimizer": "sgd"}[name]}
    fig, ax, caught = draw(lambda ax: hp.plotting.plot_marginal(result, name, ax=ax,
                                                                marks=marks), MARGINAL)
    assert_legible(fig, ax, caught, max_legend=0.0)  # before: over the curve, top left
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(ax.title.get_window_extent(renderer))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["mean ± std", "incumbent",
                                                                  "default"]


def test_importance_says_when_it_shows_only_the_top_effects(result):
    n = len(result.ranking())
    fig, ax, caught = draw(lambda ax: hp.plotting.plot_importance(result, ax=ax, top=8),
                           IMPORTANCE)
    assert ax.get_title() == f"Importance: top 8 of {n} effects"  # before: "Importance"
    assert_legible(fig, ax, caught)
    _, ax, _ = draw(lambda ax: hp.plotting.plot_importance(result, ax=ax, top=n), IMPORTANCE)
    assert ax.get_title() == "Importance"


@pytest.mark.parametrize("layout", ["tight", "constrained"])
def test_every_report_figure_lays_out_without_warnings_or_clipped_titles(
        result, trees, layout):
    figures = [
        (lambda ax: hp.plotting.plot_importance(result, ax=ax, top=8), IMPORTANCE),
        (lambda ax: hp.plotting.plot_marginal(result, "lr", ax=ax,
                                              marks={"incumbent": 1e-3}), MARGINAL),
        (lambda ax: hp.plotting.plot_marginal(result, "arch", ax=ax), MARGINAL),
        (lambda ax: hp.plotting.plot_interaction(result, "lr", "optimizer", ax=ax),
         INTERACTION),
        (lambda ax: hp.plotting.plot_interaction(result, "arch", "batch_size", ax=ax),
         INTERACTION),
        (lambda ax: hp.plotting.plot_partial_dependence(trees["lr"].pd, ax=ax, ice=5), PDP),
    ] + [(lambda ax, t=tree: hp.plotting.plot_regions(t, ax=ax, highlight=INCUMBENT), REGIONS)
         for tree in trees.values()]
    for plot, size in figures:
        fig, ax, caught = draw(plot, size, layout)
        assert_legible(fig, ax, caught)


def test_a_long_title_wraps_instead_of_leaving_the_figure():
    name = "a_rather_long_hyperparameter_name"
    space = hp.SearchSpace([hp.Float(name, 0.0, 1.0), hp.Float("other_long_parameter", 0, 1)])
    configs = space.sample(60, seed=0)
    r = hp.fanova(hp.TrialHistory(space, configs, [c[name] * c["other_long_parameter"]
                                                   for c in configs]),
                  seed=0, max_order=2)
    fig, ax, caught = draw(lambda ax: hp.plotting.plot_interaction(
        r, name, "other_long_parameter", ax=ax), INTERACTION)
    assert_legible(fig, ax, caught)


LONG = "learning_rate_" + "x" * 2986  # a 3,000-character name, as generated code may give


def _long_report(name: str):
    space = hp.SearchSpace([hp.Float(name, 0, 1), hp.Float("b", 0, 1),
                            hp.Categorical(name + "_kind", [name + "_u", "v"])])
    configs = space.sample(40, seed=0)
    y = [(c[name] - 0.3) ** 2 + 0.1 * c["b"] + (0.2 if c[name + "_kind"] == "v" else 0.0)
         for c in configs]
    return hp.report(hp.TrialHistory(space, configs, y), seed=0, top=2,
                     surrogate=hp.Forest(n_trees=8))


def test_a_name_of_any_length_is_shortened_in_figures_and_whole_elsewhere():
    from matplotlib.text import Text

    from hpinsight.plotting._common import MAX_TEXT_CHARS

    rep = _long_report(LONG)
    for draw in (lambda ax: rep.result.plot(ax=ax),
                 lambda ax: rep.result.marginal(LONG).plot(ax=ax),
                 lambda ax: rep.result.marginal(LONG, "b").plot(ax=ax),
                 lambda ax: rep.regions[LONG].plot(ax=ax)):
        fig = Figure(figsize=IMPORTANCE, layout="constrained")
        draw(fig.subplots())
        texts = [t.get_text() for t in fig.findobj(Text)]
        assert max(len(t) for line in texts for t in line.split("\n")) <= MAX_TEXT_CHARS
        assert any("…" in t for t in texts)  # shortened, not dropped
    page = rep.html()  # the table, the sentences and the JSON keep it whole
    assert f"<td>{LONG}</td>" in page
    assert LONG in rep.to_dict()["decisions"]["decisions"]


def test_drawing_on_a_users_axes_leaves_the_rest_of_their_figure_whole():
    # the long names of the analysis are shortened; the user's own long title, figure
    # title, legend entry and axis label beside them were shortened too, once
    from matplotlib.text import Text

    from hpinsight.plotting._common import MAX_TEXT_CHARS

    rep = _long_report(LONG)
    mine_title = "My own experiment: validation loss of ResNet-50 on ImageNet across 5 seeds"
    mine_label = "validation loss of ResNet-50 on ImageNet, mean over five seeds"
    suptitle = "Figure 3 of my paper: every hyperparameter analysis of the study in one figure"
    assert min(map(len, (mine_title, mine_label, suptitle))) > MAX_TEXT_CHARS
    fig = Figure(figsize=(12, 4))
    mine, theirs = fig.subplots(1, 2)
    mine.plot([0, 1], [0, 1], label=mine_label)
    mine.legend()
    mine.set_title(mine_title)
    mine.set_ylabel(mine_label)
    fig.suptitle(suptitle)
    rep.result.plot(ax=theirs)
    assert mine.get_title() == mine_title
    assert mine.get_ylabel() == mine_label
    assert fig.get_suptitle() == suptitle
    assert mine.get_legend().get_texts()[0].get_text() == mine_label
    ours = [t.get_text() for t in theirs.findobj(Text)]
    assert max(len(t) for line in ours for t in line.split("\n")) <= MAX_TEXT_CHARS
    assert any("…" in t for t in ours)


def test_every_public_plot_function_bounds_its_texts():
    # the one rule for long names holds for every figure, also one added later
    plots = [name for name in hp.plotting.__all__ if name.startswith("plot_")]
    assert len(plots) >= 9
    for name in plots:
        wrapped = getattr(hp.plotting, name)
        assert getattr(wrapped, "__wrapped__", None) is not None, name
        assert wrapped.__code__.co_name == "with_bounded_text", name


def test_a_long_name_costs_no_more_memory_to_draw_than_a_short_one():
    import tracemalloc

    peaks = {}
    for name in ("lr", LONG):
        rep = _long_report(name)
        rep.html()  # warm: matplotlib's font and text caches fill on a first page
        tracemalloc.start()
        rep.html()
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # a 1,000-character name once took 1.4 GB to draw (3,000 did not finish); now a few
    # MB for either, both drawn warm (1.25-1.39 times the short one's, measured)
    assert peaks[LONG] < 1.5 * peaks["lr"], peaks
