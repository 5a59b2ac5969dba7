"""PDP and region figures: the plot data equals the results' numbers, and the drawn
artists carry them (Agg backend; figures closed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.plotting import pd2_plot_data, pd_plot_data, region_plot_data

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def result():
    space = hp.SearchSpace([hp.Float("lr", 1e-4, 1.0, log=True), hp.Float("x", -1.0, 1.0),
                            hp.Categorical("kind", ["a", "b", "c"])])
    configs = space.sample(300, seed=0)
    y = [(math.log10(c["lr"]) + 2) ** 2 + {"a": 0.0, "b": 1.0, "c": 2.0}[c["kind"]] * c["x"]
         for c in configs]
    return hp.fanova(configs, y, space, seed=0, n_trees=16)


def test_plot_data_are_the_results_numbers(result):
    pd = hp.partial_dependence(result, params="lr", n_samples=200, seed=0)
    data = pd_plot_data(pd, level=0.9, ice=5, seed=1, marks={"incumbent": 0.01})
    lower, upper = pd.confidence_band(0.9)
    (curve,) = data.curves
    np.testing.assert_array_equal(curve.mean, pd.mean)
    np.testing.assert_array_equal(curve.lower, lower)
    np.testing.assert_array_equal(curve.upper, upper)
    np.testing.assert_allclose(data.x, pd.grid[0])
    assert data.log
    assert data.ice.shape == (5, len(pd.grid[0]))
    assert all(any(np.array_equal(row, ice) for ice in pd.ice_mean) for row in data.ice)
    assert data.marks == {"incumbent": 0.01}


def test_numeric_pdp_draws_line_band_ice_and_marks(result):
    pd = hp.partial_dependence(result, params="lr", n_samples=200, seed=0)
    ax = hp.plot_partial_dependence(pd, ice=4, marks={"incumbent": 0.01})
    assert ax.get_xscale() == "log"
    lines = [ln for ln in ax.get_lines() if ln.get_label() == "all of the space"]
    (line,) = lines
    np.testing.assert_allclose(line.get_ydata(), pd.mean)
    (band,) = ax.collections
    vertices = band.get_paths()[0].vertices
    lower, upper = pd.confidence_band(0.95)
    assert vertices[:, 1].min() == pytest.approx(lower.min())
    assert vertices[:, 1].max() == pytest.approx(upper.max())
    assert sum(1 for ln in ax.get_lines() if ln.get_linewidth() == 0.6) == 4  # ICE curves
    marks = [ln for ln in ax.get_lines() if ln.get_label() == "incumbent"]
    assert marks[0].get_xdata()[0] == 0.01
    assert pd.plot().get_xlabel() == "lr"  # the result's own shortcut


def test_categorical_pdp_draws_error_bars_at_the_choices(result):
    pd = hp.partial_dependence(result, params="kind", n_samples=200, seed=0)
    ax = hp.plot_partial_dependence(pd, marks={"incumbent": "b"})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    data = pd_plot_data(pd, marks={"incumbent": "b", "default": "nope"})
    assert data.marks == {"incumbent": 1.0}  # unknown choices are not marked
    (bars,) = list(ax.containers)
    np.testing.assert_allclose(bars.lines[0].get_ydata(), pd.mean)


def test_two_parameter_pdp_is_a_heatmap_with_std_contours(result):
    pd = hp.partial_dependence(result, params=("x", "kind"), n_samples=100, grid_size=8,
                               seed=0)
    data = pd2_plot_data(pd)
    assert data.mean.shape == (3, 8)
    np.testing.assert_array_equal(data.mean, pd.mean.T)
    ax = hp.plot_partial_dependence(pd)
    mesh = ax.collections[0]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(3, 8), pd.mean.T)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]


def test_regions_draw_global_and_leaf_curves_with_the_incumbent_region(result):
    pd = hp.partial_dependence(result, params="x", n_samples=300, seed=0)
    tree = hp.confidence_split(pd, max_splits=2)
    incumbent = {"lr": 0.01, "x": -1.0, "kind": "c"}
    leaf = tree.leaf_for(incumbent)
    data = region_plot_data(tree, highlight=leaf)
    assert len(data.curves) == 1 + len(tree.leaves())
    (hl,) = [c for c in data.curves if c.highlight]
    np.testing.assert_array_equal(hl.mean, leaf.mean)
    assert hl.upper - hl.mean == pytest.approx(1.959963984540054 * leaf.std)
    ax = hp.plot_regions(tree, highlight=incumbent)
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert sum("incumbent's region" in lbl for lbl in labels) == 1
    assert "incumbent" in labels  # the incumbent's x is marked
    assert tree.plot().get_title().startswith("Partial dependence of x by")


def test_errors_name_the_fix(result):
    pd2 = hp.partial_dependence(result, params=("x", "lr"), n_samples=50, grid_size=5, seed=0)
    with pytest.raises(ValueError, match="pd2_plot_data"):
        pd_plot_data(pd2)
    pd1 = hp.partial_dependence(result, params="x", n_samples=50, seed=0)
    with pytest.raises(ValueError, match="two-parameter"):
        pd2_plot_data(pd1)


def test_two_parameter_pdp_refuses_ice_and_marks(result):
    pd2 = hp.partial_dependence(result, params=("x", "lr"), n_samples=50, grid_size=5, seed=0)
    with pytest.raises(ValueError, match="Leave out 'ice' and 'marks'"):
        hp.plot_partial_dependence(pd2, ice=5)
