"""Defaults from data (Weerts 2018, Sec. 3.2.1): Freedman–Diaconis bins worked out by
hand, integer and categorical modes, log scale, direction, and leave-one-out."""

from __future__ import annotations

import math

import pytest

import hpinsight as hp

# Nine values; q25 = 2.5, q75 = 5 -> IQR 2.5, b = 2 * 2.5 / 9^(1/3) = 2.404; the range 7
# needs ceil(7 / 2.404) = 3 bins: [0, 2.33) holds 2, [2.33, 4.67) holds 4, the rest 3.
# The fullest bin's centre is 3.5.
VALUES = [0.0, 1.0, 2.5, 3.0, 3.2, 3.5, 5.0, 6.0, 7.0]


def _history(space, configs, y=None, direction="minimize"):
    y = list(range(len(configs))) if y is None else y
    return hp.TrialHistory(space, configs, y, direction=direction)


def test_freedman_diaconis_bin_centre_by_hand():
    space = hp.SearchSpace([hp.Float("x", 0.0, 10.0)])
    result = hp.default_values(_history(space, [{"x": v} for v in VALUES]), top_n=9)
    assert result.values["x"] == pytest.approx(3.5)
    assert result.support["x"] == pytest.approx(4 / 9)
    assert result.n_configs["x"] == 9


def test_log_parameters_are_binned_on_the_log_scale():
    space = hp.SearchSpace([hp.Float("C", 1.0, 1e8, log=True)])
    configs = [{"C": 10.0**v} for v in VALUES]
    result = hp.default_values(_history(space, configs), top_n=9)
    assert result.values["C"] == pytest.approx(10**3.5)


def test_small_integer_ranges_take_the_mode_and_ties_go_to_the_smallest():
    space = hp.SearchSpace([hp.Int("depth", 1, 10)])
    assert hp.default_values(_history(space, [{"depth": v} for v in [3, 3, 5, 5, 5, 7]]),
                             top_n=6).values["depth"] == 5
    assert hp.default_values(_history(space, [{"depth": v} for v in [5, 5, 3, 3]]),
                             top_n=4).values["depth"] == 3


def test_small_log_integer_and_step_grid_domains_take_the_mode():
    # one histogram bin over the best five (layers 1 or 4, dropout 0.0 or 0.5) gave 2 and
    # 0.2, values no best configuration had, each "supported" by all five
    space = hp.SearchSpace([hp.Int("layers", 1, 8, log=True),
                            hp.Float("dropout", 0.0, 0.5, step=0.1)])
    configs = [{"layers": a, "dropout": b}
               for a, b in [(1, 0.0), (4, 0.5), (1, 0.0), (4, 0.0), (1, 0.5)]]
    found = hp.default_values(_history(space, configs), top_n=5)
    assert found.values == {"layers": 1, "dropout": 0.0}
    assert found.support == {"layers": 0.6, "dropout": 0.6}
    assert isinstance(found.values["layers"], int)


def test_large_integer_ranges_are_binned_and_rounded():
    space = hp.SearchSpace([hp.Int("n", 0, 1000)])
    configs = [{"n": int(v * 10)} for v in VALUES]  # the same shape as VALUES, times 10
    value = hp.default_values(_history(space, configs), top_n=9).values["n"]
    assert value == 35
    assert isinstance(value, int)


def test_categorical_mode_ties_go_to_the_first_choice():
    space = hp.SearchSpace([hp.Categorical("k", ["a", "b", "c"])])
    configs = [{"k": v} for v in ["c", "b", "c", "b"]]
    assert hp.default_values(_history(space, configs), top_n=4).values["k"] == "b"


def test_only_the_top_n_vote_and_direction_is_respected():
    space = hp.SearchSpace([hp.Categorical("k", ["a", "b"])])
    configs = [{"k": "a"}, {"k": "a"}, {"k": "b"}, {"k": "b"}, {"k": "b"}]
    y = [0.1, 0.2, 0.9, 0.8, 0.7]
    assert hp.default_values(_history(space, configs, y), top_n=2).values["k"] == "a"
    maxi = _history(space, configs, y, direction="maximize")
    assert hp.default_values(maxi, top_n=2).values["k"] == "b"


def test_inactive_parameters_do_not_vote():
    space = hp.SearchSpace(
        [hp.Categorical("opt", ["sgd", "adam"]), hp.Float("momentum", 0.0, 1.0)],
        conditions=[hp.Condition("momentum", "opt", values=["sgd"])],
    )
    configs = [{"opt": "adam"}, {"opt": "adam"}, {"opt": "sgd", "momentum": 0.9}]
    result = hp.default_values(_history(space, configs), top_n=3)
    assert result.values["opt"] == "adam"
    assert result.n_configs["momentum"] == 1
    assert result.values["momentum"] == 0.9


def test_leave_one_out_never_uses_the_study_itself():
    space = hp.SearchSpace([hp.Categorical("k", ["a", "b", "c"]), hp.Float("x", 0.0, 10.0)])
    studies = {
        "s0": _history(space, [{"k": "c", "x": 9.0}] * 5),
        "s1": _history(space, [{"k": "a", "x": 1.0}] * 5),
        "s2": _history(space, [{"k": "b", "x": 5.0}] * 5),
    }
    result = hp.default_values(studies, top_n=5)
    for key in studies:
        others = {k: v for k, v in studies.items() if k != key}
        assert result.for_study(key) == hp.default_values(others, top_n=5).values
    assert result.per_study["s0"]["k"] == "a"  # a and b tie without s0; a comes first
    assert result.per_study["s1"]["k"] == "b"
    # changing a study's own data cannot change its own default
    changed = dict(studies, s0=_history(space, [{"k": "a", "x": 2.0}] * 5))
    assert hp.default_values(changed, top_n=5).per_study["s0"] == result.per_study["s0"]
    assert result.to_dict()["per_study"]["s2"]["k"] == "a"


def test_a_list_of_studies_is_keyed_by_position():
    space = hp.SearchSpace([hp.Categorical("k", ["a", "b"])])
    result = hp.default_values([_history(space, [{"k": "a"}]), _history(space, [{"k": "b"}])])
    assert result.for_study(0) == {"k": "b"}
    assert result.for_study(1) == {"k": "a"}
    with pytest.raises(KeyError, match="studies are"):
        result.for_study(5)


def test_errors():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0)])
    other = hp.SearchSpace([hp.Float("z", 0.0, 1.0)])
    with pytest.raises(hp.exceptions.InvalidDataError, match="same parameters"):
        hp.default_values([_history(space, [{"x": 0.5}]), _history(other, [{"z": 0.5}])])
    with pytest.raises(hp.exceptions.InvalidDataError, match="no studies"):
        hp.default_values([])
    with pytest.raises(TypeError, match="TrialHistory"):
        hp.default_values("study")
    with pytest.raises(ValueError, match="top_n"):
        hp.default_values(_history(space, [{"x": 0.5}]), top_n=0)


def test_constant_half_takes_the_repeated_value():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0)])
    configs = [{"x": v} for v in [0.3, 0.3, 0.3, 0.3, 0.1, 0.9]]
    result = hp.default_values(_history(space, configs), top_n=6)
    assert result.values["x"] == 0.3
    assert math.isclose(result.support["x"], 4 / 6)


def test_defaults_land_on_the_parameters_step_grid():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0, step=0.01), hp.Int("n", 10, 1000, step=10)])
    configs = [{"x": round(0.1 * v, 2), "n": 10 * (1 + int(9 * v))} for v in VALUES]
    result = hp.default_values(_history(space, configs), top_n=9)
    assert space["x"].contains(result.values["x"])
    assert space["n"].contains(result.values["n"])
    assert result.values["x"] == pytest.approx(0.35)


def test_tightly_clustered_best_values_do_not_ask_for_billions_of_bins():
    space = hp.SearchSpace([hp.Float("lr", 1e-6, 1.0, log=True)])
    configs = [{"lr": 0.01 * (1 + 1e-12 * i)} for i in range(30)]
    configs += [{"lr": 10.0 ** -k} for k in range(1, 6)] + [{"lr": 0.5}] * 5
    result = hp.default_values(_history(space, configs), top_n=40)
    assert result.values["lr"] == pytest.approx(0.01, rel=1e-3)
