"""Edge values that used to give silent wrong answers: ``None`` as a categorical choice
(defaults and subspace), midpoints of stepped and log ranges (subspace), and the last bit
of log-encoded condition parents (encoding and activity), and objectives whose variance
leaves floating point."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import hpinsight as hp
from hpinsight._surrogate_risk import midpoint as _midpoint
from hpinsight.exceptions import HPInsightWarning
from hpinsight.space._encoding import encode_value, is_missing, log_encode, measure_of

# Values where ``math.log`` (the C library) and ``np.log`` (NumPy's SIMD loop) differ in the
# last bit on an AVX-512 machine (found by comparing both over 1..100000 and k/100, k/1000
# for k up to 100000); on other machines they may agree, and the tests below add the
# values where they differ there.
INT_LOG_SPLITS = (9170, 19143, 94869)
FLOAT_LOG_SPLITS = (0.662, 0.806, 0.917, 1.05, 40.4, 73.72)


def _log_splits(values: np.ndarray) -> list[float]:
    """The values where ``math.log`` and ``np.log`` disagree on this machine."""
    return [float(v) for v, lv in zip(values, np.log(values), strict=True)
            if math.log(float(v)) != lv]


# --------------------------------------------------------------------------------------
# _defaults / _encoding: None is a categorical choice, not an inactive parameter
def _class_weight_history() -> hp.TrialHistory:
    """class_weight=None in 8 of the 10 best trials, 'balanced' in 2, 'balanced' elsewhere."""
    space = hp.SearchSpace([hp.Categorical("class_weight", ["balanced", None]),
                            hp.Float("x", 0.0, 1.0)])
    rng = np.random.default_rng(0)
    weights = [None] * 8 + ["balanced"] * 2 + ["balanced"] * 20
    configs = [{"class_weight": w, "x": float(x)}
               for w, x in zip(weights, rng.uniform(size=len(weights)), strict=True)]
    return hp.TrialHistory(space, configs, list(range(len(configs))))


def test_none_is_a_vote_for_the_none_choice_in_default_values():
    history = _class_weight_history()
    result = hp.default_values(history, top_n=10)
    assert "class_weight" in result.values
    assert result.values["class_weight"] is None
    assert result.support["class_weight"] == pytest.approx(0.8)
    assert result.n_configs["class_weight"] == 10
    assert result.to_dict()["values"]["class_weight"] is None


def test_none_votes_leave_one_out_too():
    history = _class_weight_history()
    result = hp.default_values({"a": history, "b": history}, top_n=10)
    assert result.for_study("a")["class_weight"] is None
    assert result.for_study("b")["class_weight"] is None


def test_an_absent_key_is_inactive_and_does_not_vote():
    space = hp.SearchSpace([hp.Categorical("c", [None, "a"]), hp.Categorical("k", ["x", "y"])],
                           conditions=[hp.Condition("c", "k", values=["x"])])
    configs = [{"k": "y"}] * 3 + [{"k": "x", "c": "a"}] * 2 + [{"k": "x", "c": None}]
    result = hp.default_values(hp.TrialHistory(space, configs, [0, 1, 2, 3, 4, 5]), top_n=6)
    assert result.values["c"] == "a"
    assert result.n_configs["c"] == 3
    only_absent = hp.default_values(hp.TrialHistory(space, configs[:3], [0, 1, 2]), top_n=3)
    assert "c" not in only_absent.values


@pytest.mark.parametrize(
    ("param", "value", "missing"),
    [
        (hp.Categorical("c", [None, "a"]), None, False),
        (hp.Categorical("c", ["a", "b"]), None, True),
        (hp.Categorical("c", ["a", "b"]), "a", False),
        (hp.Float("x", 0.0, 1.0), None, True),
        (hp.Float("x", 0.0, 1.0), math.nan, True),
        (hp.Float("x", 0.0, 1.0), 0.0, False),
        (hp.Int("n", 0, 3), 0, False),
    ],
    ids=["none-choice", "none-not-a-choice", "choice", "float-none",
         "float-nan", "float-zero", "int-zero"],
)
def test_is_missing_tells_a_none_choice_from_a_gap(param, value, missing):
    assert is_missing(param, value) is missing


def test_encode_maps_a_none_choice_to_its_index_and_an_absent_key_to_nan():
    space = hp.SearchSpace([hp.Categorical("class_weight", ["balanced", None]),
                            hp.Float("x", 0.0, 1.0)])
    X = space.encode([{"class_weight": None, "x": 0.5}, {"x": 0.5},
                      {"class_weight": "balanced", "x": 0.5}])
    np.testing.assert_array_equal(X[:, 0], [1.0, np.nan, 0.0])
    assert space.decode(X)[0] == {"class_weight": None, "x": 0.5}


def test_suggest_subspace_fixes_a_none_choice_at_the_best_trials_value():
    # the objective is best at class_weight=None, as is the best trial: that is the value
    # to fix it at, and a None survives the results and their JSON
    space = hp.SearchSpace([hp.Categorical("class_weight", ["balanced", None]),
                            hp.Float("x", 0.0, 1.0)])
    configs = space.sample(40, seed=1)
    y = [c["x"] + (0.0 if c["class_weight"] is None else 0.5) for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), top_quantile=0.3,
                              surrogate=hp.Forest(n_trees=16, n_jobs=1), n_candidates=100, seed=0)
    assert sub.default_sources["class_weight"] == "incumbent"
    assert sub.defaults["class_weight"] is None
    assert sub.risks["class_weight"].default is None
    if "class_weight" in sub.fixed:
        assert sub.fixed["class_weight"] is None
    assert sub.to_dict()["defaults"]["class_weight"] is None


# --------------------------------------------------------------------------------------
# _surrogate_risk.midpoint: a legal value of every kind of parameter
@pytest.mark.parametrize(
    ("param", "expected"),
    [
        (hp.Int("n", 0, 12, step=4), 8),  # 6 is off the grid; 4 and 8 tie, NumPy rounds to even
        (hp.Int("n", 0, 10, step=5), 5),
        (hp.Int("n", 2, 9), 6),  # 5.5 rounds to even
        (hp.Int("n", 1, 1000, log=True), 32),  # sqrt(1000) = 31.6
        (hp.Int("n", 1, 2, log=True), 1),  # sqrt(2) = 1.41
        (hp.Float("x", 0.0, 1.0, step=0.3), 0.6),  # grid 0, .3, .6, .9; 0.5 -> 0.6
        (hp.Float("x", 0.0, 1.0, step=0.4), 0.4),  # grid 0, .4, .8; 0.5 -> 0.4
        (hp.Float("x", 1e-4, 1.0, log=True), 1e-2),
        (hp.Float("x", -1.0, 2.0), 0.5),
    ],
    ids=["int-step4", "int-step5", "int", "int-log", "int-log-narrow", "float-step0.3",
         "float-step0.4", "float-log", "float"],
)
def test_midpoint_is_a_legal_value(param, expected):
    value = _midpoint(param)
    assert param.contains(value)
    assert value == pytest.approx(expected, rel=1e-12)
    assert isinstance(value, int if isinstance(param, hp.Int) else float)


def test_midpoint_of_a_categorical_is_its_first_choice():
    assert _midpoint(hp.Categorical("c", [None, "a"])) is None


def test_a_stepped_parameter_inactive_in_every_top_trial_is_fixed_on_its_grid():
    # momentum (SGD only) is inactive where the model predicts the best, so it is fixed at the middle
    # of its range: that must be on the step grid, not 6
    space = hp.SearchSpace(
        [hp.Categorical("opt", ["sgd", "adam"]), hp.Int("momentum", 0, 12, step=4),
         hp.Float("x", 0.0, 1.0)],
        conditions=[hp.Condition("momentum", "opt", values=["sgd"])],
    )
    configs = space.sample(60, seed=3)
    y = [(c["x"] - 0.4) ** 2 + (0.0 if c["opt"] == "adam" else 1.0 + c["momentum"])
         for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=16, n_jobs=1), n_candidates=100, seed=0)
    assert sub.default_sources["momentum"] == "inactive"
    assert sub.defaults["momentum"] == 8
    assert space["momentum"].contains(sub.defaults["momentum"])


# --------------------------------------------------------------------------------------
# _encoding / _space: one logarithm for data, condition targets, bounds and is_active
def _check_activity(space: hp.SearchSpace, parents: list[float], child: str = "c") -> None:
    """``active_mask(encode(configs))`` agrees with ``is_active`` for the parent at each value."""
    parent = next(p for p in space.params if p.name != child)
    cast = int if isinstance(parent, hp.Int) else float
    configs = []
    expected = []
    for v in parents:
        config: dict[str, object] = {parent.name: cast(v)}
        active = space.is_active(child, config)
        expected.append(active)
        if active:
            config[child] = 0.5
        configs.append(config)
    with warnings.catch_warnings():
        # the wrong mask blanks the child's value with a warning; the assertion says more
        warnings.simplefilter("ignore", HPInsightWarning)
        X = space.encode(configs)
    mask = space.active_mask(X)[:, space.index(child)]
    wrong = [v for v, m, e in zip(parents, mask.tolist(), expected, strict=True) if m != e]
    assert not wrong, f"active_mask and is_active disagree for {parent.name} at {wrong}"


def test_every_value_of_a_log_int_parent_in_1_to_1000_activates_its_child():
    values = list(range(1, 1001))
    space = hp.SearchSpace([hp.Int("p", 1, 1000, log=True), hp.Float("c", 0.0, 1.0)],
                           conditions=[hp.Condition("c", "p", values=values)])
    _check_activity(space, values)
    assert all(space.is_active("c", {"p": v}) for v in values)


def test_a_log_int_parent_where_the_two_logarithms_differ():
    splits = sorted(set(INT_LOG_SPLITS) | {
        int(v) for v in _log_splits(np.arange(1, 100_001, dtype=np.float64))})
    parents = sorted({w for v in splits for w in (v - 1, v, v + 1)})
    space = hp.SearchSpace([hp.Int("p", 1, 100_000, log=True), hp.Float("c", 0.0, 1.0)],
                           conditions=[hp.Condition("c", "p", values=splits)])
    _check_activity(space, parents)
    assert [space.is_active("c", {"p": v}) for v in parents] == [v in splits for v in parents]


def test_a_log_float_parent_where_the_two_logarithms_differ():
    found = _log_splits(np.arange(1, 20_001) / 100.0)[:10]
    splits = sorted(set(FLOAT_LOG_SPLITS) | set(found))
    space = hp.SearchSpace([hp.Float("p", 1e-3, 1e3, log=True), hp.Float("c", 0.0, 1.0)],
                           conditions=[hp.Condition("c", "p", values=splits)])
    parents = [*splits, 0.5, 1.0, 100.0]
    _check_activity(space, parents)
    assert [space.is_active("c", {"p": v}) for v in parents] == [v in splits for v in parents]


@pytest.mark.parametrize("bound", ["gt", "lt"])
@pytest.mark.parametrize(
    ("parent", "splits"),
    [
        (hp.Int("p", 1, 100_000, log=True), INT_LOG_SPLITS),
        (hp.Float("p", 1e-3, 1e3, log=True), FLOAT_LOG_SPLITS),
    ],
    ids=["int-log", "float-log"],
)
def test_strict_bounds_on_a_log_parent_exclude_the_bound_itself(parent, splits, bound):
    # a parent exactly at gt/lt is outside the strict bound, in the mask and in is_active
    for b in splits:
        space = hp.SearchSpace([parent, hp.Float("c", 0.0, 1.0)],
                               conditions=[hp.Condition("c", "p", **{bound: b})])
        _check_activity(space, [b])
        assert not space.is_active("c", {"p": b})


def test_condition_targets_bounds_and_measure_points_use_one_logarithm():
    int_param = hp.Int("p", 1, 100_000, log=True)
    float_param = hp.Float("q", 1e-3, 1e3, log=True)
    for v in INT_LOG_SPLITS:
        assert encode_value(int_param, v) == log_encode(np.array([v, 1.0]))[0]
    for v in FLOAT_LOG_SPLITS:
        assert encode_value(float_param, v) == log_encode(np.array([1.0, v]))[1]
    space = hp.SearchSpace([int_param, float_param])
    X = space.encode([{"p": v, "q": w} for v, w in zip(INT_LOG_SPLITS, FLOAT_LOG_SPLITS,
                                                        strict=False)])
    np.testing.assert_array_equal(X[:, 0], [encode_value(int_param, v) for v in INT_LOG_SPLITS])
    points = measure_of(int_param).points
    assert points is not None
    np.testing.assert_array_equal(points[[v - 1 for v in INT_LOG_SPLITS]], X[:, 0])


@pytest.mark.parametrize(("scale", "fix"), [(1e200, "divide it by 1e+200"),
                                             (1e-200, "multiply it by 1e+200")])
def test_an_objective_whose_variance_leaves_float_range_is_a_clear_error(scale, fix):
    # values spread over 1e200 crashed inside the fit (an empty maximum), and over 1e-200
    # read as a constant objective with every importance 0
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("y", 0, 1)])
    configs = space.sample(40, seed=0)
    y = np.array([(c["x"] - 0.3) ** 2 + 0.1 * c["y"] for c in configs])
    with pytest.raises(hp.exceptions.InvalidDataError, match=f"span .*{re.escape(fix)}"):
        hp.fanova(hp.TrialHistory(space, configs, y * scale), seed=0)
    # a large offset with an ordinary spread is analysed, and so is a spread of 1e100
    for values in (1e12 + y, 1e100 * y, 1e-100 * y):
        ranked = hp.fanova(hp.TrialHistory(space, configs, values), seed=0).ranking()
        assert ranked[0].params == ("x",)


@pytest.mark.parametrize("units", ["offset", "tiny"])
def test_the_forest_answers_the_same_in_any_units_of_the_objective(units):
    # scikit-learn's criterion sums squares of the raw values: 1e8 + f lost f to rounding
    # (most trees grew no split, yet x was "resolved" at 0 and z at 1), and f * 1e-8
    # grew no split at all ("the objective looks constant")
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    X = np.random.default_rng(0).random((200, 2))
    y = X[:, 0] ** 2 + X[:, 1]  # x and z each hold about half of the variance
    configs = [{"x": a, "z": b} for a, b in X]
    shifted = {"offset": y + 1e8, "tiny": y * 1e-8}[units]
    forest = hp.Forest(n_trees=16, min_samples_leaf=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", HPInsightWarning)  # no "looks constant"
        got = hp.fanova(hp.TrialHistory(space, configs, shifted), surrogate=forest, seed=0)
    plain = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=forest, seed=0)
    assert got.n_constant_draws == 0
    assert got.fit_r2 is not None
    assert got.fit_r2 > 0.9
    for name in ("x", "z"):
        assert got.importance(name).mean == pytest.approx(0.5, abs=0.05)
        assert got.importance(name).mean == pytest.approx(plain.importance(name).mean, abs=0.005)
    # predictions and marginals in the objective's own units, not the standardized ones
    spread = float(np.ptp(shifted))
    predicted = got.model.predict_per_draw(space.encode(configs)).mean(axis=0)
    np.testing.assert_allclose(predicted, shifted, rtol=0, atol=0.2 * spread)
    marginal = np.asarray(got.marginal("x").mean)
    assert shifted.min() <= marginal.min() < marginal.max() <= shifted.max()
    assert np.ptp(marginal) > 0.35 * spread  # x moves the objective by about 1 of its 2


def test_a_small_forests_out_of_bag_r2_counts_only_rows_it_has_a_prediction_for():
    # with 6 trees on 30 rows some rows are in every tree's bootstrap; scikit-learn's own
    # score counts them as predicted 0, so a clean function offset by 5 scored -11
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    X = np.random.default_rng(0).random((30, 2))
    configs = [{"x": a, "z": b} for a, b in X]
    y = X[:, 0] ** 2 + X[:, 1] + 5.0
    result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=6), seed=0)
    assert result.fit_r2 is not None
    assert 0.5 < result.fit_r2 < 1.0



def test_values_that_differ_by_rounding_alone_are_a_constant_objective_to_the_forest():
    # standardized, a spread of 5.55e-17 on 0.3 became +-1 and both parameters came out
    # "resolved"
    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("z", 0, 1)])
    rng = np.random.default_rng(0)
    configs = [{"a": a, "z": z} for a, z in rng.random((40, 2))]
    y = 0.3 + (rng.random(40) < 0.5) * 5.55e-17
    with pytest.warns(hp.exceptions.ConstantObjectiveWarning):
        result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=8), seed=0)
    assert result.is_constant


@pytest.mark.parametrize("value", [0.4, 0.1, 0.123, 1e9 + 0.3])
def test_one_value_in_every_trial_is_a_constant_objective_to_the_gaussian_process(value):
    # 30 trials of 0.4 have a std of 1.1e-16 about their computed mean: standardized, it
    # became +-1, and the report gave the three parameters 38.7, 36.4 and 24.8 % of the
    # "variation" with a leave-one-out R² of -1.2e292
    space = hp.SearchSpace([hp.Float("x", -3, 3), hp.Float("y", 0, 1), hp.Int("z", 1, 10)])
    configs = space.sample(30, seed=0)
    history = hp.TrialHistory(space, configs, [value] * 30)
    with pytest.warns(hp.exceptions.ConstantObjectiveWarning):
        result = hp.fanova(history, seed=0)
    assert result.is_constant
    assert result.model.fit_r2 is None  # nothing to predict: no fit to score
    assert all(i.mean == 0.0 for i in result.ranking())
    rep = hp.report(history, seed=0)
    assert "Every trial has the same value" in rep.html()


def test_an_empty_cell_of_a_none_choice_column_is_that_choice_where_active():
    # pandas 3 stores None in a column of strings as NaN: class_weight=None was read as
    # "inactive", and its effect (+3) went to nothing
    pd = pytest.importorskip("pandas")
    space = hp.SearchSpace(
        [hp.Categorical("kind", ["a", "b"]), hp.Categorical("class_weight", ["balanced", None]),
         hp.Categorical("w", ["x", None])], [hp.Condition("w", "kind", ["a"])])
    frame = pd.DataFrame({"kind": ["a", "b", "a", "b"],
                          "class_weight": ["balanced", None, None, "balanced"],
                          "w": [None, None, "x", None]})
    rows = [{"kind": "a", "class_weight": "balanced", "w": None},
            {"kind": "b", "class_weight": None},
            {"kind": "a", "class_weight": None, "w": "x"},
            {"kind": "b", "class_weight": "balanced"}]
    expected = [[0, 0, 1], [1, 1, np.nan], [0, 1, 0], [1, 0, np.nan]]
    np.testing.assert_array_equal(space.encode(frame), expected)
    from_frame = hp.TrialHistory(space, frame, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(from_frame.encoded(), expected)
    assert [dict(c) for c in from_frame.configs] == rows
    # pandas' own missing value (convert_dtypes) marks an inactive entry, as NaN does
    typed = frame.convert_dtypes()
    np.testing.assert_array_equal(space.encode(typed), expected)
    other = hp.SearchSpace([hp.Categorical("kind", ["a", "b"]), hp.Float("v", 0, 1)],
                           [hp.Condition("v", "kind", ["a"])])
    np.testing.assert_array_equal(
        other.encode(pd.DataFrame({"kind": ["a", "b"], "v": [0.5, None]}).convert_dtypes()),
        [[0, 0.5], [1, np.nan]])


def test_a_series_of_values_indexed_apart_from_the_configurations_is_refused():
    # paired by position: y sorted apart from the frame gave each configuration another
    # trial's value without a word
    pd = pytest.importorskip("pandas")
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    frame = pd.DataFrame({"x": [0.1, 0.2, 0.3]}, index=[10, 11, 12])
    with pytest.raises(ValueError, match=r"y.loc\[configs.index\]"):
        hp.TrialHistory(space, frame, pd.Series([3.0, 2.0, 1.0], index=[12, 11, 10]))
    paired = hp.TrialHistory(space, frame, pd.Series([1.0, 2.0, 3.0], index=[10, 11, 12]))
    assert list(paired.y) == [1.0, 2.0, 3.0]
    as_given = hp.TrialHistory(space, frame, pd.Series([3.0, 2.0, 1.0]).to_numpy())
    assert list(as_given.y) == [3.0, 2.0, 1.0]


def test_values_as_a_list_or_array_beside_a_dataframe_are_taken_by_position():
    pd = pytest.importorskip("pandas")
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    frame = pd.DataFrame({"x": [0.1, 0.2, 0.3]}, index=[10, 11, 12])
    for y in ([3.0, 2.0, 1.0], np.array([3.0, 2.0, 1.0]), (3.0, 2.0, 1.0)):
        assert list(hp.TrialHistory(space, frame, y).y) == [3.0, 2.0, 1.0]
