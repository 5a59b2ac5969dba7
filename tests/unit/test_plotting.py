"""PDP and region figures: the plot data equals the results' numbers, and the drawn
artists carry them (Agg backend; figures closed)."""

from __future__ import annotations

import dataclasses
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
    return hp.fanova(hp.TrialHistory(space, configs, y), seed=0)


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
    ax = hp.plotting.plot_partial_dependence(pd, ice=4, marks={"incumbent": 0.01})
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
    ax = hp.plotting.plot_partial_dependence(pd, marks={"incumbent": "b"})
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
    ax = hp.plotting.plot_partial_dependence(pd)
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
    ax = hp.plotting.plot_regions(tree, highlight=incumbent)
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
        hp.plotting.plot_partial_dependence(pd2, ice=5)


# -- importances, marginals, interactions, trajectories, tuning risk -------------------------
from hpinsight.plotting import (  # noqa: E402
    importance_plot_data,
    marginal_plot_data,
    risk_plot_data,
    trajectory_plot_data,
)


@pytest.fixture(scope="module")
def pair_result():
    space = hp.SearchSpace([hp.Float("lr", 1e-4, 1.0, log=True), hp.Float("x", -1.0, 1.0),
                            hp.Categorical("kind", ["a", "b", "c"])])
    configs = space.sample(300, seed=1)
    y = [(math.log10(c["lr"]) + 2) ** 2 + {"a": 0.0, "b": 1.0, "c": 2.0}[c["kind"]] * c["x"]
         for c in configs]
    return (hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2),
            hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2, cap_quantile=0.25))


def test_importance_bars_carry_the_ranking_with_whiskers_and_the_capped_twin(pair_result):
    result, capped = pair_result
    data = importance_plot_data(result, top=4, capped=capped)
    ranked = result.ranking()[:4]
    assert data.labels == tuple(" x ".join(i.params) for i in ranked)
    np.testing.assert_allclose(data.mean, [i.mean for i in ranked])
    np.testing.assert_allclose(data.capped_mean, [capped.importance(*i.params).mean
                                                  for i in ranked])
    assert data.capped_label == "among the best 25 %"
    ax = hp.plotting.plot_importance(result, top=4, capped=capped)
    bars = [c for c in ax.containers if isinstance(c, mpl.container.BarContainer)]
    assert len(bars) == 2  # all trials, and the capped analysis beside it
    np.testing.assert_allclose([b.get_width() for b in bars[0]], data.mean)
    np.testing.assert_allclose([b.get_width() for b in bars[1]], data.capped_mean)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(data.labels)
    assert ax.get_xlabel() == "fraction of variance (mean ± std over draws and refits)"  # the GP's
    plain = dataclasses.replace(result, refit_fractions=None)  # a GP without refits
    assert hp.plotting.plot_importance(plain, top=4).get_xlabel() == "fraction of variance (mean ± std over draws)"
    space = result.space
    forest = hp.fanova(hp.TrialHistory(space, space.sample(60, seed=2), list(range(60))), surrogate=hp.Forest(n_trees=4),
                       seed=0)
    assert hp.plotting.plot_importance(forest).get_xlabel().endswith("over trees)")


def test_a_capped_analysis_without_signal_is_named_not_drawn(pair_result):
    # most of its refits flat: its shares are fractions of next to nothing (the demo's
    # batch_size read 0.0024 % +- 70.7 %), and a bar of them would read as an effect
    result, capped = pair_result
    shares = np.array(capped.refit_fractions)
    shares[: shares.shape[0] // 2 + 1] = np.nan
    doubtful = dataclasses.replace(capped, refit_fractions=shares)
    assert doubtful.signal_doubtful
    data = importance_plot_data(result, top=4, capped=doubtful)
    assert data.capped_mean is None
    assert data.capped_std is None
    assert data.note == (f"among the best 25 %, no clear signal: not drawn\n"
                         f"({shares.shape[0] // 2 + 1} of {shares.shape[0]} refits find no signal)")
    assert importance_plot_data(result, top=4, capped=capped).note == ""
    ax = hp.plotting.plot_importance(result, top=4, capped=doubtful)
    bars = [c for c in ax.containers if isinstance(c, mpl.container.BarContainer)]
    assert len(bars) == 1  # all trials only
    assert data.note in [t.get_text() for t in ax.texts]
    # drawn alone (a live capped refit), its own bars are not drawn either
    alone = importance_plot_data(doubtful, top=4)
    assert np.isnan(alone.mean).all()
    assert np.isnan(alone.std).all()
    assert alone.note == data.note
    assert importance_plot_data(capped, top=4).note == ""
    assert not np.isnan(importance_plot_data(capped, top=4).mean).any()


def test_marginal_band_is_one_std_over_trees_and_marks_land_on_the_axis(pair_result):
    result, _ = pair_result
    m = result.marginal("lr", grid_size=50)
    data = marginal_plot_data(result, "lr", grid_size=50,
                              marks={"default": 0.01, "incumbent": 5.0})
    np.testing.assert_array_equal(data.mean, m.mean)
    np.testing.assert_allclose(data.upper - data.mean, m.std)
    assert data.marks == {"default": 0.01}  # 5.0 is outside the range: not drawn
    ax = hp.plotting.plot_marginal(result, "lr", marks={"default": 0.01})
    assert ax.get_xscale() == "log"
    assert [ln.get_label() for ln in ax.get_lines()][-1] == "default"
    cat = hp.plotting.plot_marginal(result, "kind", marks={"incumbent": "c"})
    assert [t.get_text() for t in cat.get_xticklabels()] == ["a", "b", "c"]
    (mark,) = [ln for ln in cat.get_lines() if ln.get_label() == "incumbent"]
    assert mark.get_xdata()[0] == 2.0  # the position of choice "c"
    (points,) = cat.containers
    np.testing.assert_allclose(points.lines[0].get_ydata(), result.marginal("kind").mean)


def test_interaction_heatmap_is_the_joint_marginal(pair_result):
    result, _ = pair_result
    ax = hp.plotting.plot_interaction(result, "x", "kind", grid_size=10)
    mesh = ax.collections[0]
    expected = result.marginal("x", "kind", grid_size=10).mean.T
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(expected.shape), expected)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]


def test_trajectory_follows_the_callbacks_snapshots():
    from hpinsight.integrations._live import ImportanceSnapshot

    snaps = [
        ImportanceSnapshot(20, 19, {"a": 0.5, "b": 0.3}, {"a": 0.1, "b": 0.1}, 1.0, 0, 0.1),
        ImportanceSnapshot(30, 29, {"b": 0.6, "a": 0.2, "c": 0.1}, {"a": 0.05, "b": 0.2, "c": 0.0},
                           0.5, 0, 0.1),
    ]
    data = trajectory_plot_data(snaps, top=3)
    assert data.params == ("b", "a", "c")
    np.testing.assert_array_equal(data.n_trials, [20, 30])
    np.testing.assert_allclose(data.mean[0], [0.3, 0.6])
    assert np.isnan(data.mean[2, 0])  # 'c' did not exist at the first refit
    ax = hp.plotting.plot_importance_history(snaps, top=3)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [0.3, 0.6])
    with pytest.raises(ValueError, match="history is empty"):
        trajectory_plot_data([])


def test_tuning_risk_plot_colours_the_verdicts_and_draws_the_margin():
    free = np.linspace(0.05, 0.3, 30)
    rng = np.random.default_rng(0)
    result = hp.tuning_risk({"safe": free * (1 - rng.uniform(0, 0.02, 30)),
                             "costly": free * (1 + rng.uniform(0.1, 0.3, 30))}, free)
    data = risk_plot_data(result)
    assert data.non_inferior.tolist() == [True, False]
    np.testing.assert_allclose(data.mean, [r.relative_mean for r in result.rows])
    ax = hp.plotting.plot_tuning_risk(result)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["safe  (can fix)", "costly  (tune)"]
    assert any(ln.get_label() == "margin 0.01" for ln in ax.get_lines())


def test_a_configuration_without_a_split_parameter_is_marked_but_not_routed(result):
    pd = hp.partial_dependence(result, params="x", n_samples=300, seed=0)
    tree = hp.confidence_split(pd, max_splits=2)
    assert len(tree.leaves()) > 1  # splits are on the other parameters, never on x
    partial = {"x": 0.5}
    with pytest.raises(KeyError):
        tree.leaf_for(partial)
    ax = hp.plotting.plot_regions(tree, highlight=partial)
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert not any("incumbent's region" in lbl for lbl in labels)
    assert "incumbent" in labels


def test_the_subspace_figure_draws_no_shares_among_the_best_without_signal():
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(60, seed=0)
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs]),
                              seed=0)
    assert not sub.decisions.top_doubtful
    from hpinsight.plotting._importance_data import subspace_plot_data

    seen = subspace_plot_data(sub)
    assert seen.note == ""
    assert np.isfinite(seen.importance).any()
    doubtful = dataclasses.replace(sub, decisions=dataclasses.replace(sub.decisions, top_doubtful=True))
    data = subspace_plot_data(doubtful)
    assert np.isnan(data.importance).all()
    assert data.note == "no clear signal among the best: not drawn"
    np.testing.assert_array_equal(data.risk_mean, seen.risk_mean)  # costs stay
    ax = doubtful.plot()
    assert ax.get_xlabel().endswith("\nno clear signal among the best: not drawn")


def test_choices_equal_under_eq_are_marked_and_named_by_position() -> None:
    # True == 1 and False == 0, two choices each: True was drawn at 1's place, a region
    # of every choice but True was named "c not in {}", and the choice None had no mark
    space = hp.SearchSpace([hp.Categorical("c", [1, True, 0, False, None]), hp.Float("x", 0, 1)])
    configs = space.sample(400, seed=1)
    y = [c["x"] * (6 if c["c"] is True else -1) for c in configs]
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, surrogate=hp.Forest())
    pdc = hp.partial_dependence(r, params="c", n_samples=200, seed=0)
    assert list(pdc.grid[0]) == [1, True, 0, False, None]
    marks = {"t": True, "one": 1, "f": False, "none": None, "unknown": "z"}
    assert pd_plot_data(pdc, marks=marks).marks == {"t": 1.0, "one": 0.0, "f": 3.0, "none": 4.0}
    pd = hp.partial_dependence(r, params="x", n_samples=500, seed=0)
    tree = hp.confidence_split(pd, max_splits=1)
    rules = sorted(hp.plotting.region_rules(space, leaf) for leaf in tree.leaves())
    assert rules == [("c != True",), ("c = True",)]


def test_heatmap_cells_are_centred_on_their_grid_points_on_a_log_axis() -> None:
    # matplotlib's shading="nearest" put the edges at arithmetic midpoints before the
    # axis turned logarithmic: the cell of 1e-3 spanned [5.5e-4, 5.5e-3], the first cell
    # had a negative edge
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    space = hp.SearchSpace([hp.Float("lr", 1e-5, 1.0, log=True), hp.Float("z", 0, 1)])
    configs = space.sample(150, seed=0)
    y = [np.log10(c["lr"]) ** 2 + c["z"] for c in configs]
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    pd2 = hp.partial_dependence(r, params=("lr", "z"), grid_size=6, n_samples=100, seed=0)
    ax = pd2.plot()
    (mesh,) = ax.collections[:1]
    xs = np.unique(mesh.get_coordinates()[..., 0])
    log_edges = np.log10(xs)
    np.testing.assert_allclose(np.diff(log_edges), 1.0)  # a decade each, as the grid
    np.testing.assert_allclose((log_edges[:-1] + log_edges[1:]) / 2, np.log10(pd2.grid[0]))
    plt.close(ax.figure)


def test_ice_curves_on_sorted_choices_run_left_to_right() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [f"c{i:02d}" for i in range(30)]
    space = hp.SearchSpace([hp.Categorical("arch", names), hp.Float("x", 0, 1)])
    configs = space.sample(300, seed=0)
    y = [int(c["arch"][1:]) % 7 + c["x"] for c in configs]
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    pd = hp.partial_dependence(r, params="arch", n_samples=100, seed=0)
    ax = pd.plot(ice=5)
    ice = [line for line in ax.lines if line.get_color() == "0.75"]
    assert len(ice) == 5
    for line in ice:
        assert (np.diff(line.get_xdata()) > 0).all()
    plt.close(ax.figure)
