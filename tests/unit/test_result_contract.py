"""Every class in ``hpinsight.results`` keeps the same contract: a one-line ``repr`` of at
most 120 characters that names the class, a JSON-safe ``to_dict()``, a tidy
``to_frame()`` and a ``.plot(ax=None)`` that returns the Axes it drew on.

The exceptions are listed here with their reason, and each is checked: the class must not
grow the method silently, and its docstring must say where the data or the figure is
instead. A class added to ``results.__all__`` without an example below fails every test
of this module, so the contract cannot be skipped by accident."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import hpinsight as hp
from hpinsight import results

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")
pd = pytest.importorskip("pandas")

REPR_WIDTH = 120

#: Value objects that are a row (or a group of rows) of a parent's frame, and where.
NO_FRAME = {
    "Importance": "a row of FanovaResult.to_frame",
    "ParameterDecision": "a row of DecisionResult.to_frame",
    "RegionNode": "rows of RegionsResult.to_frame",
    "SurrogateRisk": "a row of SubspaceResult.to_frame",
    "TuningRiskRow": "a row of TuningRiskResult.to_frame",
}
#: Classes without a figure of their own, and why.
NO_PLOT = {
    **{name: f"value object: {where.replace('to_frame', 'plot')}"
       for name, where in NO_FRAME.items()},
    "DefaultValues": "values of different kinds and scales; marked on a marginal instead",
    "NonInferiorityResult": "one test, no figure; TuningRiskResult.plot draws several",
    "Report": "many figures, drawn into Report.html",
    "MultiObjectiveReport": "many figures, drawn into MultiObjectiveReport.html",
    "DecisionResult": "states and sentences; SubspaceResult.plot draws the costs",
}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def build_examples(names: tuple[str, ...]) -> dict[str, object]:
    """One instance of every result class, from the public functions on small data.

    ``names`` are the parameter names: a log-scaled one, a float and a categorical that
    the objective uses, then any number of floats it ignores (long or many names test
    the ``repr`` width).
    """
    lr, a, k, *idle = names
    space = hp.SearchSpace([hp.Float(lr, 1e-4, 1.0, log=True), hp.Float(a, 0.0, 1.0),
                            hp.Categorical(k, ["x", "y"]),
                            *(hp.Float(name, 0.0, 1.0) for name in idle)])
    configs = space.sample(60, seed=1)
    y = [(math.log10(c[lr]) + 2) ** 2 + 0.3 * c[a] + (0.5 if c[k] == "y" else 0.0)
         for c in configs]
    history = hp.TrialHistory(space, configs, y)
    cost = hp.TrialHistory(space, configs, [c[a] + (1.0 if c[k] == "x" else 0.0)
                                            for c in configs], objective_name="cost")
    forest = {"surrogate": hp.Forest(n_trees=8)}
    fan = hp.fanova(history, seed=0, max_order=2, **forest)
    pdp = hp.partial_dependence(fan, params=lr, grid_size=5, n_samples=100, seed=0)
    tree = hp.confidence_split(pdp, max_splits=2)
    free = [0.10, 0.20, 0.15, 0.30, 0.05, 0.12]  # as in test_risk.py
    risk = hp.tuning_risk({a: [0.10, 0.20, 0.15, 0.30, 0.05, 0.12],
                           lr: [0.20, 0.35, 0.15, 0.50, 0.09, 0.20]}, free)
    sub = hp.suggest_subspace(history, n_candidates=200, seed=0, **forest)
    other = hp.TrialHistory(space, configs, [2.0 * v for v in y][::-1])
    across = hp.importance_across_studies({"first": history, "second": other},
                                          progress=False, **forest)
    return {
        "AcrossStudiesResult": across,
        "DefaultValues": hp.default_values(history, top_n=5),
        "FanovaResult": fan,
        "Importance": fan.ranking()[0],
        "MarginalResult": fan.marginal(lr, grid_size=5),
        "NonInferiorityResult": hp.noninferiority_test(
            [-0.02, -0.05, 0.0, -0.01, -0.03, 0.005], margin=0.01),
        "PartialDependenceResult": pdp,
        "RegionNode": tree.leaves()[0],
        "RegionsResult": tree,
        "Report": hp.report(history, top=1, **forest),
        "MultiObjectiveReport": hp.report({"loss": history, "cost": cost}, top=1,
                                          subspace=False, **forest),
        "SubspaceResult": sub,
        "DecisionResult": sub.decisions,
        "ParameterDecision": next(iter(sub.decisions)),
        "SurrogateRisk": sub.risks[lr],
        "TuningRiskResult": risk,
        "TuningRiskRow": risk.rows[0],
    }


@pytest.fixture(scope="module")
def examples():
    return build_examples(("lr", "alpha", "kind"))


@pytest.fixture(scope="module")
def long_examples():
    return build_examples(("learning_rate_of_the_outer_optimizer_in_log_space",
                           "weight_decay_applied_to_every_layer_except_the_norms",
                           "kind_of_the_learning_rate_schedule_after_warm_up"))


@pytest.fixture(scope="module")
def many_examples():
    return build_examples(("lr", "alpha", "kind",
                           *(f"idle_parameter_{i}" for i in range(9))))


def example(examples: dict[str, object], name: str) -> object:
    if name not in examples:
        pytest.fail(f"results.{name} has no example: add one to build_examples() and give "
                    "it the contract (repr, to_dict, to_frame, plot) or list the exception.")
    obj = examples[name]
    assert type(obj) is getattr(results, name)
    return obj


def drew_something(ax) -> bool:
    return bool(ax.lines or ax.patches or ax.collections or ax.images or ax.containers)


# -- the contract, for every class in results.__all__ ----------------------------------------
@pytest.mark.parametrize("names", ["examples", "long_examples", "many_examples"],
                         ids=["short-names", "long-names", "many-names"])
@pytest.mark.parametrize("name", results.__all__)
def test_repr_is_one_short_line_naming_the_class(name, names, request):
    obj = example(request.getfixturevalue(names), name)
    text = repr(obj)
    assert "\n" not in text
    assert len(text) <= REPR_WIDTH, text
    assert text.startswith(f"{name}("), text
    assert text.endswith(")"), text


@pytest.mark.parametrize("name", results.__all__)
def test_to_dict_is_json_safe(name, examples):
    data = example(examples, name).to_dict()
    assert isinstance(data, dict)
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data  # plain lists, str keys: nothing lost in the round trip


@pytest.mark.parametrize("name", results.__all__)
def test_comparing_a_result_gives_a_bool(name, examples):
    # a result holding arrays compared its fields elementwise: `a == b`, `a in results`
    # and `results.index(a)` raised "The truth value of an array ... is ambiguous"
    import copy

    obj = example(examples, name)
    other = copy.deepcopy(obj)  # its own arrays, equal in value
    assert (obj == obj) is True
    assert isinstance(obj == other, bool)
    assert [other, obj].index(obj) in (0, 1)


def test_comparing_a_history_gives_a_bool():
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    first, second = (hp.TrialHistory(space, [{"x": 0.1}, {"x": 0.2}], [1.0, 2.0])
                     for _ in range(2))
    assert first != second  # two histories, equal in value: identity, as for arrays
    assert [second, first].index(first) == 1

@pytest.mark.parametrize("name", results.__all__)
def test_to_frame_is_a_dataframe_or_an_explicit_exception(name, examples):
    obj = example(examples, name)
    cls = type(obj)
    if name in NO_FRAME:
        assert not hasattr(cls, "to_frame"), f"{name} has to_frame now: drop it from NO_FRAME"
        parent = NO_FRAME[name].split()[-1].split(".")[0]
        assert parent in (cls.__doc__ or ""), f"{name}'s docstring should name {parent}"
        assert "to_frame" in (cls.__doc__ or "")
        return
    frame = obj.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) >= 1
    assert frame.columns.is_unique
    assert all(isinstance(c, str) for c in frame.columns)


@pytest.mark.parametrize("name", results.__all__)
def test_plot_returns_the_axes_it_drew_on_or_an_explicit_exception(name, examples):
    obj = example(examples, name)
    cls = type(obj)
    if name in NO_PLOT:
        assert not hasattr(cls, "plot"), f"{name} has plot now: drop it from NO_PLOT"
        assert "plot" in (cls.__doc__ or ""), f"{name}'s docstring should say why no plot"
        return
    ax = obj.plot()
    assert isinstance(ax, mpl.axes.Axes)
    assert drew_something(ax)
    _, given = plt.subplots()
    assert obj.plot(ax=given) is given


# -- what the frames and figures hold ---------------------------------------------------------
ROWS = {
    "AcrossStudiesResult": lambda r: len(r.params),
    "DefaultValues": lambda r: len(r.values),
    "FanovaResult": lambda r: len(r.ranking()),
    "MarginalResult": lambda r: r.mean.size,
    "NonInferiorityResult": lambda r: 1,
    "PartialDependenceResult": lambda r: r.mean.size,
    "RegionsResult": lambda r: len(r.nodes()) * r.pd.mean.size,
    "Report": lambda r: len(r.result.ranking()),
    "MultiObjectiveReport": lambda r: sum(len(s.result.ranking()) for s in r.sections.values()),
    "SubspaceResult": lambda r: len(r.keep) + len(r.fixed),
    "DecisionResult": lambda r: len(r.decisions),
    "TuningRiskResult": lambda r: len(r.rows),
}


def test_every_frame_has_its_row_count_listed():
    assert set(ROWS) == set(results.__all__) - set(NO_FRAME)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_frames_are_tidy_one_row_per_item(name, examples):
    obj = example(examples, name)
    assert len(obj.to_frame()) == ROWS[name](obj)


def test_grid_frames_follow_the_grid(examples):
    m = examples["MarginalResult"]
    frame = m.to_frame()
    assert list(frame.columns) == ["lr", "mean", "std"]
    np.testing.assert_allclose(frame["lr"], m.grid[0])
    np.testing.assert_array_equal(frame["mean"], m.mean)
    pdp = examples["PartialDependenceResult"]
    frame = pdp.to_frame(level=0.9)
    lower, upper = pdp.confidence_band(0.9)
    np.testing.assert_array_equal(frame["lower"], lower)
    np.testing.assert_array_equal(frame["upper"], upper)
    tree = examples["RegionsResult"]
    frame = tree.to_frame()
    leaves = frame[frame["is_leaf"]]
    assert leaves.groupby("node")["n_samples"].first().sum() == tree.pd.n_samples
    root = frame[frame["node"] == 0]
    assert (root["region"] == "whole space").all()
    np.testing.assert_array_equal(root["mean"], tree.root.mean)


def test_subspace_frame_and_figure_carry_the_decision(examples):
    sub = examples["SubspaceResult"]
    frame = sub.to_frame()
    assert list(frame["param"]) == [*sub.keep, *sub.fixed]
    assert list(frame["keep"]) == [True] * len(sub.keep) + [False] * len(sub.fixed)
    np.testing.assert_allclose(frame["risk_mean"], [sub.risks[n].mean for n in frame["param"]])
    ax = sub.plot()
    (importance,) = [c for c in ax.containers if isinstance(c, mpl.container.BarContainer)]
    deciding = sub.importance_top
    np.testing.assert_allclose([b.get_width() for b in importance],
                               [deciding[n] for n in frame["param"]])
    (cost,) = [other for other in ax.figure.axes if other is not ax]
    (risk,) = [c for c in cost.containers if isinstance(c, mpl.container.BarContainer)]
    np.testing.assert_allclose([b.get_width() for b in risk], frame["risk_mean"])
    (margin,) = [ln for ln in cost.get_lines() if ln.get_label().startswith("risk margin")]
    assert margin.get_xdata()[0] == pytest.approx(sub.margin)


def test_report_frame_puts_the_capped_analysis_beside_the_effects(examples):
    rep = examples["Report"]
    frame = rep.to_frame().set_index("params")
    for imp in rep.capped.ranking():
        assert frame.loc[imp.params[0], "capped_mean"] == pytest.approx(imp.mean)
    pairs = frame[frame["order"] == 2]
    assert len(pairs) > 0
    assert pairs["capped_mean"].isna().all()


def test_marginal_plots_delegate_to_the_plotting_functions(examples):
    fan = examples["FanovaResult"]
    m = examples["MarginalResult"]
    (line,) = [ln for ln in m.plot().get_lines() if ln.get_label() == "mean ± std"]
    np.testing.assert_array_equal(line.get_ydata(), m.mean)
    assert m.plot().get_xscale() == "log"  # the space travels with the marginal
    joint = fan.marginal("alpha", "kind", grid_size=4)
    mesh = joint.plot().collections[0]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(2, 4), joint.mean.T)
    with pytest.raises(ValueError, match=r"MarginalResult\.plot"):
        hp.plotting.plot_marginal(joint)
    with pytest.raises(TypeError, match="needs 1 parameter name"):
        hp.plotting.plot_marginal(fan)


def test_a_marginal_built_without_its_space_still_plots():
    m = results.MarginalResult(params=("k",), grid=(("a", "b"),),
                               encoded_grid=(np.arange(2.0),), per_draw=np.ones((3, 2)),
                               mean=np.array([1.0, 2.0]), std=np.zeros(2))
    ax = m.plot(marks={"default": "b"})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    numeric = results.MarginalResult(params=("x",), grid=((0.0, 0.5, 1.0),),
                                     encoded_grid=(np.linspace(0, 1, 3),),
                                     per_draw=np.ones((2, 3)), mean=np.ones(3), std=np.zeros(3))
    ax = numeric.plot(marks={"default": 0.25, "outside": 3.0})
    assert [ln.get_label() for ln in ax.get_lines()][-1] == "default"


@pytest.mark.parametrize(
    ("name", "expected"),
    [("NonInferiorityResult", "NonInferiorityResult(statistic=21, z=2.201, "),
     ("TuningRiskResult", "TuningRiskResult(n_params=2, margin=0.01, alpha=0.05, "
                          "non_inferior=['alpha'])")],
    ids=["test", "table"],
)
def test_reprs_show_the_headline_numbers(name, expected, examples):
    assert repr(examples[name]).startswith(expected)


def test_to_dict_turns_non_finite_numbers_into_none():
    row = hp.tuning_risk({"p": [0.1]}, [0.1]).rows[0]  # one pair: no standard deviation
    assert math.isnan(row.risk_std)
    assert row.to_dict()["risk_std"] is None
    imp = results.Importance(("x",), math.nan, math.inf)
    assert imp.to_dict()["mean"] is None
    assert imp.to_dict()["std"] is None


def test_report_frame_tells_a_pair_from_a_parameter_named_like_it():
    # the pair (lr, wd) and a parameter named "lr x wd" share one text in "params"; the
    # pair took the parameter's share among the best
    space = hp.SearchSpace([hp.Float("lr", 0, 1), hp.Float("wd", 0, 1), hp.Float("lr x wd", 0, 1)])
    configs = space.sample(80, seed=0)
    y = [4 * c["lr"] * c["wd"] + 0.5 * c["lr x wd"] for c in configs]
    rep = hp.report(hp.TrialHistory(space, configs, y), top=1, subspace=False)
    frame = rep.to_frame().set_index(["params", "order"])
    assert frame.loc[("lr x wd", 1), "capped_mean"] == rep.capped.importance("lr x wd").mean
    assert np.isnan(frame.loc[("lr x wd", 2), "capped_mean"])
