"""Search-space adapters: ConfigSpace 1.x in both directions, and Optuna distributions."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.exceptions import HPInsightWarning, InvalidSpaceError


# --------------------------------------------------------------------------------------
# helpers
def _reordered(space: hp.SearchSpace, names: tuple[str, ...]) -> hp.SearchSpace:
    """``space`` with its parameters (and conditions) listed in the order ``names``."""
    return hp.SearchSpace(
        [space[n] for n in names], [c for n in names for c in space.conditions_of(n)]
    )


def _assert_configspace_accepts(cs: Any, configs: list[dict[str, Any]]) -> None:
    """ConfigSpace raises if a config sets an inactive or omits an active hyperparameter."""
    CS = pytest.importorskip("ConfigSpace")
    for config in configs:
        CS.Configuration(cs, values=config)


def _assert_encode_matches_configspace_activity(space: hp.SearchSpace, cs: Any) -> np.ndarray:
    """Encode ConfigSpace's own samples; the non-NaN pattern must be exactly their keys."""
    sampled = [dict(c) for c in cs.sample_configuration(300)]
    X = space.encode(sampled)
    expected = np.array([[name in c for name in space.names] for c in sampled])
    np.testing.assert_array_equal(~np.isnan(X), expected)
    np.testing.assert_array_equal(space.active_mask(X), expected)
    return expected


def _mixed_space() -> hp.SearchSpace:
    return hp.SearchSpace(
        [
            hp.Categorical("kind", ["a", "b", "c"], default="b"),
            hp.Float("lr", 1e-4, 1.0, log=True, default=1e-2),
            hp.Int("n", 1, 10),
            hp.Int("nlog", 1, 64, log=True, default=8),
            hp.Int("s", 0, 20, step=4, default=8),
            hp.Float("fs", 0.0, 1.0, step=0.25),
            hp.Float("x", -1.0, 1.0),
            hp.Float("y", 0.0, 1.0),
            hp.Float("z", 0.0, 1.0),
            hp.Categorical("w", [True, False, None]),
        ],
        conditions=[
            hp.Condition("lr", "kind", values=["a"]),
            hp.Condition("x", "kind", values=["a", "b"]),
            hp.Condition("x", "n", gt=2),
            hp.Condition("y", "s", gt=4, lt=16),
            hp.Condition("w", "lr", lt=0.01),
            hp.AnyOf(
                [
                    hp.Condition("z", "x", lt=0.0),
                    hp.Condition("z", "s", values=[0, 20]),
                    hp.Condition("z", "fs", gt=0.5),
                ]
            ),
        ],
    )


# --------------------------------------------------------------------------------------
# SearchSpace -> ConfigSpace -> SearchSpace
def test_configspace_round_trip_is_equal():
    pytest.importorskip("ConfigSpace")
    space = _mixed_space()
    cs = hp.adapters.to_configspace(space, seed=0)
    back = hp.adapters.from_configspace(cs)

    assert back.names == tuple(cs.keys())  # ConfigSpace's own order
    assert set(back.names) == set(space.names)
    assert _reordered(back, space.names) == space
    assert back.defaults == space.defaults


def test_to_configspace_hyperparameter_types_and_defaults():
    CS = pytest.importorskip("ConfigSpace")
    cs = hp.adapters.to_configspace(_mixed_space(), seed=0)

    assert isinstance(cs["lr"], CS.UniformFloatHyperparameter)
    assert cs["lr"].log is True
    assert (cs["lr"].lower, cs["lr"].upper, cs["lr"].default_value) == (1e-4, 1.0, 1e-2)
    assert isinstance(cs["n"], CS.UniformIntegerHyperparameter)
    assert (cs["n"].lower, cs["n"].upper, cs["n"].log) == (1, 10, False)
    assert isinstance(cs["nlog"], CS.UniformIntegerHyperparameter)
    assert (cs["nlog"].log, cs["nlog"].default_value) == (True, 8)
    assert isinstance(cs["s"], CS.OrdinalHyperparameter)
    assert tuple(cs["s"].sequence) == (0, 4, 8, 12, 16, 20)
    assert cs["s"].default_value == 8
    assert tuple(cs["fs"].sequence) == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert isinstance(cs["kind"], CS.CategoricalHyperparameter)
    assert tuple(cs["kind"].choices) == ("a", "b", "c")
    assert cs["kind"].default_value == "b"

    conditions = {c.child.name: c for c in cs.conditions}
    assert isinstance(conditions["lr"], CS.EqualsCondition)
    assert isinstance(conditions["x"], CS.AndConjunction)
    assert [type(c) for c in conditions["x"].components] == [
        CS.InCondition,
        CS.GreaterThanCondition,
    ]
    assert isinstance(conditions["y"], CS.AndConjunction)
    assert [type(c) for c in conditions["y"].components] == [
        CS.GreaterThanCondition,
        CS.LessThanCondition,
    ]
    assert isinstance(conditions["w"], CS.LessThanCondition)
    assert isinstance(conditions["z"], CS.OrConjunction)
    assert len(conditions["z"].components) == 3


def test_to_configspace_activity_agrees_with_configspace():
    pytest.importorskip("ConfigSpace")
    space = _mixed_space()
    cs = hp.adapters.to_configspace(space, seed=3)
    configs = space.sample(200, seed=0)
    _assert_configspace_accepts(cs, configs)
    expected = _assert_encode_matches_configspace_activity(space, cs)
    for name in space.conditional_names:  # every condition is sometimes on, sometimes off
        j = space.index(name)
        assert expected[:, j].any(), name
        assert not expected[:, j].all(), name


def test_to_configspace_seed_makes_sampling_reproducible():
    pytest.importorskip("ConfigSpace")
    space = _mixed_space()
    first = [dict(c) for c in hp.adapters.to_configspace(space, seed=7).sample_configuration(5)]
    second = [dict(c) for c in hp.adapters.to_configspace(space, seed=7).sample_configuration(5)]
    assert first == second


@pytest.mark.parametrize(
    ("parent", "condition", "expected"),
    [
        (hp.Int("p", 0, 10), {"gt": 2.5}, "c | p > 2"),
        (hp.Int("p", 0, 10), {"lt": 2.5}, "c | p < 3"),
        (hp.Float("p", 0.0, 1.0), {"gt": -5.0}, "(c | p == 0.0 || c | p > 0.0)"),
        (hp.Float("p", 0.0, 1.0), {"gt": 0.5, "lt": 5.0}, "c | p > 0.5"),
        (hp.Float("p", 0.0, 1.0), {"gt": 5.0}, "c | p > 1.0"),
        (hp.Float("p", 0.0, 1.0), {"lt": -1.0}, "c | p < 0.0"),
        (hp.Int("p", 0, 12, step=4), {"gt": 5}, "c | p > 4"),
        (hp.Int("p", 0, 12, step=4), {"lt": 5}, "c | p < 8"),
        (hp.Int("p", 0, 12, step=4), {"values": [4, 8]}, "c | p in {4, 8}"),
        (hp.Float("p", 0.0, 1.0, step=0.5), {"values": [0.5]}, "c | p == 0.5"),
        (hp.Float("p", 1e-3, 1.0, log=True), {"lt": 0.01}, "c | p < 0.01"),
    ],
    ids=[
        "int-gt-between",
        "int-lt-between",
        "float-gt-below-range",
        "float-lt-above-range",
        "float-gt-above-range-never",
        "float-lt-below-range-never",
        "grid-gt-off-grid",
        "grid-lt-off-grid",
        "grid-in",
        "grid-equals",
        "log-float-lt",
    ],
)
def test_to_configspace_moves_thresholds_to_legal_values(parent, condition, expected):
    pytest.importorskip("ConfigSpace")
    space = hp.SearchSpace([parent, hp.Float("c", 0.0, 1.0)], [hp.Condition("c", "p", **condition)])
    cs = hp.adapters.to_configspace(space, seed=0)
    assert [str(c) for c in cs.conditions] == [expected]
    # Same activity in both libraries, in both directions.
    _assert_configspace_accepts(cs, space.sample(200, seed=1))
    _assert_encode_matches_configspace_activity(space, cs)


@pytest.mark.parametrize(
    ("space_factory", "error", "match"),
    [
        (
            lambda: hp.SearchSpace([hp.Int("big", 0, 100_000, step=2)]),
            InvalidSpaceError,
            r"50001 values, more than the 10000 .*coarser step or step=1",
        ),
        (
            lambda: hp.SearchSpace([hp.Float("big", 0.0, 1.0, step=1e-5)]),
            InvalidSpaceError,
            r"OrdinalHyperparameter\. Use a coarser step or no step",
        ),
        (
            lambda: hp.SearchSpace([hp.Categorical("flag", [True, 1])]),
            InvalidSpaceError,
            r"ConfigSpace rejects parameter 'flag'.*True/False with 1/0",
        ),
    ],
    ids=["int-grid-too-large", "float-grid-too-large", "choices-configspace-merges"],
)
def test_to_configspace_errors(space_factory, error, match):
    pytest.importorskip("ConfigSpace")
    space = space_factory()
    with pytest.raises(error, match=match):
        hp.adapters.to_configspace(space)


# --------------------------------------------------------------------------------------
# ConfigSpace -> SearchSpace
_CHILDREN = (
    "c_eq",
    "c_ne_cat",
    "c_ne_int",
    "c_ne_float",
    "c_in",
    "c_gt",
    "c_lt",
    "c_gt_ord",
    "c_lt_ord",
    "c_and",
    "c_range",
    "c_or",
    "c_or_inactive_parent",
    "c_or_nested_or",
    "c_or_range",
    "c_grandchild",
)


@pytest.fixture(scope="module")
def hand_built() -> tuple[Any, hp.SearchSpace]:
    CS = pytest.importorskip("ConfigSpace")
    cs = CS.ConfigurationSpace(seed=1)
    a = CS.CategoricalHyperparameter("a", ["x", "y", "z"], weights=[0.5, 0.25, 0.25])
    i = CS.UniformIntegerHyperparameter("i", 1, 6)
    f = CS.UniformFloatHyperparameter("f", 0.0, 1.0)
    o = CS.OrdinalHyperparameter("o", ["low", "mid", "high"])
    c = {name: CS.UniformFloatHyperparameter(name, 0.0, 1.0) for name in _CHILDREN}
    cs.add([a, i, f, o, *c.values()])
    cs.add(
        [
            CS.EqualsCondition(c["c_eq"], a, "x"),
            CS.NotEqualsCondition(c["c_ne_cat"], a, "y"),
            CS.NotEqualsCondition(c["c_ne_int"], i, 3),
            CS.NotEqualsCondition(c["c_ne_float"], f, 0.5),
            CS.InCondition(c["c_in"], a, ["x", "z"]),
            CS.GreaterThanCondition(c["c_gt"], i, 2),
            CS.LessThanCondition(c["c_lt"], f, 0.3),
            CS.GreaterThanCondition(c["c_gt_ord"], o, "low"),
            CS.LessThanCondition(c["c_lt_ord"], o, "mid"),
            CS.AndConjunction(
                CS.EqualsCondition(c["c_and"], a, "x"),
                CS.GreaterThanCondition(c["c_and"], f, 0.2),
            ),
            CS.AndConjunction(
                CS.GreaterThanCondition(c["c_range"], f, 0.2),
                CS.LessThanCondition(c["c_range"], f, 0.8),
            ),
            CS.OrConjunction(
                CS.EqualsCondition(c["c_or"], a, "y"),
                CS.LessThanCondition(c["c_or"], i, 3),
            ),
            CS.OrConjunction(
                CS.EqualsCondition(c["c_or_inactive_parent"], a, "z"),
                CS.GreaterThanCondition(c["c_or_inactive_parent"], c["c_eq"], 0.5),
            ),
            CS.OrConjunction(
                CS.OrConjunction(
                    CS.EqualsCondition(c["c_or_nested_or"], a, "x"),
                    CS.GreaterThanCondition(c["c_or_nested_or"], i, 4),
                ),
                CS.NotEqualsCondition(c["c_or_nested_or"], f, 0.5),
            ),
            CS.OrConjunction(
                CS.AndConjunction(
                    CS.GreaterThanCondition(c["c_or_range"], f, 0.2),
                    CS.LessThanCondition(c["c_or_range"], f, 0.4),
                ),
                CS.EqualsCondition(c["c_or_range"], a, "y"),
            ),
            CS.GreaterThanCondition(c["c_grandchild"], c["c_gt"], 0.5),
        ]
    )
    return cs, hp.adapters.from_configspace(cs)


C = hp.Condition
_EXPECTED_CONDITIONS = [
    ("c_eq", (C("c_eq", "a", values=["x"]),)),
    ("c_ne_cat", (C("c_ne_cat", "a", values=["x", "z"]),)),
    ("c_ne_int", (C("c_ne_int", "i", values=[1, 2, 4, 5, 6]),)),
    (
        "c_ne_float",
        (hp.AnyOf([C("c_ne_float", "f", lt=0.5), C("c_ne_float", "f", gt=0.5)]),),
    ),
    ("c_in", (C("c_in", "a", values=["x", "z"]),)),
    ("c_gt", (C("c_gt", "i", gt=2),)),
    ("c_lt", (C("c_lt", "f", lt=0.3),)),
    ("c_gt_ord", (C("c_gt_ord", "o", values=["mid", "high"]),)),
    ("c_lt_ord", (C("c_lt_ord", "o", values=["low"]),)),
    ("c_and", (C("c_and", "a", values=["x"]), C("c_and", "f", gt=0.2))),
    ("c_range", (C("c_range", "f", gt=0.2, lt=0.8),)),
    ("c_or", (hp.AnyOf([C("c_or", "a", values=["y"]), C("c_or", "i", lt=3)]),)),
    (
        "c_or_inactive_parent",
        (
            hp.AnyOf(
                [
                    C("c_or_inactive_parent", "a", values=["z"]),
                    C("c_or_inactive_parent", "c_eq", gt=0.5),
                ]
            ),
        ),
    ),
    (
        "c_or_nested_or",
        (
            hp.AnyOf(
                [
                    C("c_or_nested_or", "a", values=["x"]),
                    C("c_or_nested_or", "i", gt=4),
                    C("c_or_nested_or", "f", lt=0.5),
                    C("c_or_nested_or", "f", gt=0.5),
                ]
            ),
        ),
    ),
    (
        "c_or_range",
        (hp.AnyOf([C("c_or_range", "f", gt=0.2, lt=0.4), C("c_or_range", "a", values=["y"])]),),
    ),
    ("c_grandchild", (C("c_grandchild", "c_gt", gt=0.5),)),
]


@pytest.mark.parametrize(
    ("child", "expected"), _EXPECTED_CONDITIONS, ids=[child for child, _ in _EXPECTED_CONDITIONS]
)
def test_from_configspace_conditions(hand_built, child, expected):
    _, space = hand_built
    assert space.conditions_of(child) == expected


def test_from_configspace_covers_every_child(hand_built):
    cs, space = hand_built
    assert space.names == tuple(cs.keys())
    assert set(space.conditional_names) == set(_CHILDREN)
    assert space["a"] == hp.Categorical("a", ["x", "y", "z"], default="x")  # weights dropped
    assert space["o"] == hp.Categorical("o", ["low", "mid", "high"], default="low")


def test_from_configspace_activity_agrees_with_configspace(hand_built):
    cs, space = hand_built
    # hpinsight's samples are valid ConfigSpace configurations (activity included) ...
    _assert_configspace_accepts(cs, space.sample(300, seed=0))
    # ... and ConfigSpace's samples encode with exactly their keys active.
    expected = _assert_encode_matches_configspace_activity(space, cs)
    always_on = {"c_ne_float", "c_or_nested_or"}  # off only where f == 0.5 exactly
    for name in _CHILDREN:
        j = space.index(name)
        assert expected[:, j].any(), name
        assert expected[:, j].all() == (name in always_on), name


def test_from_configspace_float_not_equals_agrees_at_the_excluded_value(hand_built):
    cs, space = hand_built
    unconditional = hp.SearchSpace(space.params)  # every parameter gets a value
    X = unconditional.encode(unconditional.sample(100, seed=2))
    X[:, space.index("f")] = 0.5
    X[~space.active_mask(X)] = np.nan
    configs = space.decode(X)
    assert not any("c_ne_float" in c for c in configs)
    assert any("c_or_nested_or" in c for c in configs)
    assert not all("c_or_nested_or" in c for c in configs)
    _assert_configspace_accepts(cs, configs)


@pytest.mark.parametrize(
    ("make_hp", "expected"),
    [
        (
            lambda CS: CS.UniformFloatHyperparameter("p", 1e-3, 1.0, log=True, default_value=0.1),
            hp.Float("p", 1e-3, 1.0, log=True, default=0.1),
        ),
        (
            lambda CS: CS.UniformIntegerHyperparameter("p", 2, 9, default_value=4),
            hp.Int("p", 2, 9, default=4),
        ),
        (
            lambda CS: CS.UniformIntegerHyperparameter("p", 1, 1024, log=True, default_value=32),
            hp.Int("p", 1, 1024, log=True, default=32),
        ),
        (
            lambda CS: CS.NormalFloatHyperparameter("p", mu=0.0, sigma=1.0, lower=-3, upper=3),
            hp.Float("p", -3.0, 3.0, default=0.0),
        ),
        (
            lambda CS: CS.NormalIntegerHyperparameter("p", mu=5, sigma=2, lower=0, upper=10),
            hp.Int("p", 0, 10, default=5),
        ),
        (
            lambda CS: CS.BetaFloatHyperparameter(
                "p", alpha=2.0, beta=2.0, lower=0.0, upper=4.0, default_value=1.0
            ),
            hp.Float("p", 0.0, 4.0, default=1.0),
        ),
        (
            lambda CS: CS.BetaIntegerHyperparameter(
                "p", alpha=2.0, beta=3.0, lower=1, upper=9, default_value=3
            ),
            hp.Int("p", 1, 9, default=3),
        ),
        (
            lambda CS: CS.CategoricalHyperparameter(
                "p", ["b", "a", 3], default_value="a", weights=[1, 2, 3]
            ),
            hp.Categorical("p", ["b", "a", 3], default="a"),
        ),
        (
            lambda CS: CS.OrdinalHyperparameter("p", [10, 1, 5], default_value=5),
            hp.Categorical("p", [10, 1, 5], default=5),
        ),
        (lambda CS: CS.Constant("p", "fixed"), hp.Categorical("p", ["fixed"], default="fixed")),
        (lambda CS: CS.Constant("p", 3), hp.Categorical("p", [3], default=3)),
    ],
    ids=[
        "uniform-float-log",
        "uniform-int",
        "uniform-int-log",
        "normal-float",
        "normal-int",
        "beta-float",
        "beta-int",
        "categorical-weights-dropped",
        "ordinal-keeps-order",
        "constant-str",
        "constant-int",
    ],
)
def test_from_configspace_hyperparameter_kinds(make_hp, expected):
    CS = pytest.importorskip("ConfigSpace")
    cs = CS.ConfigurationSpace()
    cs.add(make_hp(CS))
    space = hp.adapters.from_configspace(cs)
    assert space.params == (expected,)
    assert type(space.params[0].default) is type(expected.default)


def test_from_configspace_ignores_edited_ordinal_metadata():
    CS = pytest.importorskip("ConfigSpace")
    cs = CS.ConfigurationSpace()
    # Metadata claims a step grid, but the sequence does not match it: stay a plain ordinal.
    meta = {"hpinsight": {"kind": "Int", "low": 0, "high": 8, "step": 4}}
    cs.add(CS.OrdinalHyperparameter("p", [0, 4, 9], meta=meta))
    space = hp.adapters.from_configspace(cs)
    assert space["p"] == hp.Categorical("p", [0, 4, 9], default=0)


def test_an_or_holding_a_range_on_an_ordinal_parent_reads_as_the_values_between():
    # the error named "a GreaterThan and a LessThan on the same parent" as the exception it
    # allows, and still refused it on an ordinal parent, whose comparisons are value lists
    CS = pytest.importorskip("ConfigSpace")
    cs = CS.ConfigurationSpace(seed=0)
    p, a, c = (CS.OrdinalHyperparameter("p", [1, 2, 3, 4, 5]), CS.Categorical("a", ["x", "y"]),
               CS.Float("c", (0, 1)))
    cs.add([p, a, c, CS.OrConjunction(
        CS.EqualsCondition(c, a, "x"),
        CS.AndConjunction(CS.GreaterThanCondition(c, p, 1), CS.LessThanCondition(c, p, 4)))])
    space = hp.adapters.from_configspace(cs)
    (cond,) = space.conditions_of("c")
    assert cond == hp.AnyOf((hp.Condition("c", "a", values=("x",)),
                             hp.Condition("c", "p", values=(2, 3))))
    for config in cs.sample_configuration(200):  # active exactly where ConfigSpace has it
        values = dict(config)
        assert space.is_active("c", values) == ("c" in values)


def test_from_configspace_warns_about_forbidden_clauses():
    CS = pytest.importorskip("ConfigSpace")
    cs = CS.ConfigurationSpace(seed=0)
    a = CS.CategoricalHyperparameter("a", ["x", "y", "z"])
    b = CS.UniformIntegerHyperparameter("b", 1, 5, default_value=1)
    cs.add([a, b])
    cs.add(
        [
            CS.ForbiddenEqualsClause(a, "z"),
            CS.ForbiddenAndConjunction(
                CS.ForbiddenEqualsClause(a, "y"), CS.ForbiddenGreaterThanClause(b, 3)
            ),
        ]
    )
    with pytest.warns(HPInsightWarning, match=r"2 forbidden clause\(s\), which the importances do "
                      r"not model") as caught:
        space = hp.adapters.from_configspace(cs)
    assert space.names == ("a", "b")
    assert space.conditions == ()
    # it points at the user's line, whichever of the package's doors led there (it
    # pointed at a line of the package when reached through from_smac)
    assert caught[0].filename == __file__


def _nested_and_in_or(CS: Any) -> Any:
    cs = CS.ConfigurationSpace()
    a = CS.CategoricalHyperparameter("a", ["x", "y"])
    f = CS.UniformFloatHyperparameter("f", 0.0, 1.0)
    c = CS.UniformFloatHyperparameter("c", 0.0, 1.0)
    cs.add([a, f, c])
    cs.add(
        CS.OrConjunction(
            CS.AndConjunction(CS.EqualsCondition(c, a, "x"), CS.GreaterThanCondition(c, f, 0.5)),
            CS.EqualsCondition(c, a, "y"),
        )
    )
    return cs


def _ordinal_gt_top(CS: Any) -> Any:
    cs = CS.ConfigurationSpace()
    o = CS.OrdinalHyperparameter("o", ["low", "high"])
    c = CS.UniformFloatHyperparameter("c", 0.0, 1.0)
    cs.add([o, c])
    cs.add(CS.GreaterThanCondition(c, o, "high"))
    return cs


def _not_equals_constant(CS: Any) -> Any:
    cs = CS.ConfigurationSpace()
    k = CS.Constant("k", "v")
    c = CS.UniformFloatHyperparameter("c", 0.0, 1.0)
    cs.add([k, c])
    cs.add(CS.NotEqualsCondition(c, k, "v"))
    return cs


@pytest.mark.parametrize(
    ("make_input", "error", "match"),
    [
        (_nested_and_in_or, InvalidSpaceError, r"AND nested inside an OR.*Rewrite the condition"),
        (_ordinal_gt_top, InvalidSpaceError, r"c \| o > 'high'.*never active.*Remove 'c'"),
        (_not_equals_constant, InvalidSpaceError, r"never active"),
        (
            lambda CS: {"a": (0.0, 1.0)},
            InvalidSpaceError,
            r"expects a ConfigSpace\.ConfigurationSpace\. Got dict",
        ),
    ],
    ids=["and-nested-in-or", "ordinal-gt-last-value", "not-equals-constant", "not-a-configspace"],
)
def test_from_configspace_errors(make_input, error, match):
    CS = pytest.importorskip("ConfigSpace")
    configspace = make_input(CS)
    with pytest.raises(error, match=match):
        hp.adapters.from_configspace(configspace)


# --------------------------------------------------------------------------------------
# Optuna
@pytest.mark.parametrize(
    ("make_dist", "expected"),
    [
        (lambda D: D.FloatDistribution(-1.0, 2.0), hp.Float("p", -1.0, 2.0)),
        (lambda D: D.FloatDistribution(1e-5, 1e-1, log=True), hp.Float("p", 1e-5, 1e-1, log=True)),
        (lambda D: D.FloatDistribution(0.0, 1.0, step=0.25), hp.Float("p", 0.0, 1.0, step=0.25)),
        (lambda D: D.IntDistribution(1, 10), hp.Int("p", 1, 10)),
        (lambda D: D.IntDistribution(1, 1024, log=True), hp.Int("p", 1, 1024, log=True)),
        (lambda D: D.IntDistribution(16, 128, step=16), hp.Int("p", 16, 128, step=16)),
        (
            lambda D: D.CategoricalDistribution(["adam", "sgd", None, 1, True]),
            hp.Categorical("p", ["adam", "sgd", None, 1, True]),
        ),
        (lambda D: D.FloatDistribution(0.5, 0.5), hp.Categorical("p", [0.5])),
        (lambda D: D.IntDistribution(7, 7), hp.Categorical("p", [7])),
        (lambda D: D.IntDistribution(3, 3, log=True), hp.Categorical("p", [3])),
    ],
    ids=[
        "float",
        "float-log",
        "float-step",
        "int",
        "int-log",
        "int-step",
        "categorical",
        "float-single-value",
        "int-single-value",
        "int-log-single-value",
    ],
)
def test_from_optuna_distribution_kinds(make_dist, expected):
    optuna = pytest.importorskip("optuna")
    space = hp.adapters.space_from_optuna({"p": make_dist(optuna.distributions)})
    assert space.params == (expected,)
    assert space.conditions == ()


@pytest.mark.parametrize(
    ("make_dist", "expected"),
    [
        (lambda D: D.IntDistribution(0, 10, step=3), hp.Int("p", 0, 9, step=3)),
        (lambda D: D.FloatDistribution(0.0, 1.0, step=0.3), hp.Float("p", 0.0, 0.9, step=0.3)),
        (lambda D: D.FloatDistribution(0.0, 0.2, step=0.3), hp.Categorical("p", [0.0])),
    ],
    ids=["int-step-off-grid", "float-step-off-grid", "float-step-wider-than-range"],
)
def test_from_optuna_off_grid_high_follows_optuna(make_dist, expected):
    optuna = pytest.importorskip("optuna")
    with pytest.warns(UserWarning, match="not divisible by `step`"):
        dist = make_dist(optuna.distributions)
    space = hp.adapters.space_from_optuna({"p": dist})
    param = space["p"]
    assert type(param) is type(expected)
    if isinstance(expected, hp.Categorical):
        assert param == expected
    else:
        assert (param.low, param.step) == (expected.low, expected.step)
        assert param.high == pytest.approx(expected.high)


def test_from_optuna_snaps_int_high_that_bypassed_optuna_adjustment():
    optuna = pytest.importorskip("optuna")
    dist = optuna.distributions.IntDistribution(0, 9, step=3)
    dist.high = 10  # as if built without Optuna's own adjustment
    assert hp.adapters.space_from_optuna({"p": dist})["p"] == hp.Int("p", 0, 9, step=3)


def test_from_optuna_deprecated_distribution_classes():
    optuna = pytest.importorskip("optuna")
    D = optuna.distributions
    if not hasattr(D, "LogUniformDistribution"):
        pytest.skip("this Optuna version removed the deprecated distributions")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dists = {
            "u": D.UniformDistribution(0.0, 2.0),
            "lu": D.LogUniformDistribution(1e-3, 1.0),
            "du": D.DiscreteUniformDistribution(0.0, 1.0, 0.5),
            "iu": D.IntUniformDistribution(1, 9, step=2),
            "ilu": D.IntLogUniformDistribution(1, 100),
        }
    space = hp.adapters.space_from_optuna(dists)
    assert space.params == (
        hp.Float("u", 0.0, 2.0),
        hp.Float("lu", 1e-3, 1.0, log=True),
        hp.Float("du", 0.0, 1.0, step=0.5),
        hp.Int("iu", 1, 9, step=2),
        hp.Int("ilu", 1, 100, log=True),
    )


def test_from_optuna_on_a_real_study():
    optuna = pytest.importorskip("optuna")

    def objective(trial: Any) -> float:
        lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
        layers = trial.suggest_int("layers", 1, 8)
        width = trial.suggest_int("width", 16, 128, step=16)
        dropout = trial.suggest_float("dropout", 0.0, 0.5, step=0.1)
        optimizer = trial.suggest_categorical("optimizer", ["adam", "sgd"])
        return lr * layers + width / 128 + dropout + (optimizer == "sgd")

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=5)

    space = hp.adapters.space_from_optuna(study.best_trial.distributions)
    assert space.names == ("lr", "layers", "width", "dropout", "optimizer")
    assert space.params == (
        hp.Float("lr", 1e-4, 1e-1, log=True),
        hp.Int("layers", 1, 8),
        hp.Int("width", 16, 128, step=16),
        hp.Float("dropout", 0.0, 0.5, step=0.1),
        hp.Categorical("optimizer", ["adam", "sgd"]),
    )
    X = space.encode([t.params for t in study.trials])
    assert X.shape == (5, 5)
    assert not np.isnan(X).any()
    np.testing.assert_allclose(X[:, 0], [np.log(t.params["lr"]) for t in study.trials])
    np.testing.assert_array_equal(X[:, 2], [t.params["width"] for t in study.trials])


def _a_study(optuna: Any) -> Any:
    return optuna.create_study()


@pytest.mark.parametrize(
    ("make_input", "error", "match"),
    [
        (lambda optuna: [("p", 1)], InvalidSpaceError, r"expects a mapping.*Got list"),
        (_a_study, InvalidSpaceError, r"Got Study instead\. Pass study\.best_trial\.distributions"),
        (lambda optuna: {}, InvalidSpaceError, r"got no distributions"),
        (
            lambda optuna: {1: optuna.distributions.IntDistribution(0, 3)},
            InvalidSpaceError,
            r"names must be strings\. Got 1",
        ),
        (
            lambda optuna: {"p": (0.0, 1.0)},
            InvalidSpaceError,
            r"'p' has a tuple, which hpinsight cannot convert.*suggest_float",
        ),
    ],
    ids=["not-a-mapping", "a-study", "empty", "non-str-name", "not-a-distribution"],
)
def test_from_optuna_errors(make_input, error, match):
    optuna = pytest.importorskip("optuna")
    distributions = make_input(optuna)
    with pytest.raises(error, match=match):
        hp.adapters.space_from_optuna(distributions)


def test_choices_optuna_lists_twice_are_one_choice():
    # Optuna runs a study with them (and its own evaluators rank it); the space refused it
    optuna = pytest.importorskip("optuna")
    D = optuna.distributions
    space = hp.adapters.space_from_optuna({"p": D.CategoricalDistribution(["a", "a", "b"]),
                                           "q": D.CategoricalDistribution([1, 1.0, True])})
    assert space["p"].choices == ("a", "b")
    assert space["q"].choices == (1, True)


# --------------------------------------------------------------------------------------
# lazy imports
@pytest.mark.parametrize(
    ("call", "module"),
    [
        (lambda: hp.adapters.space_from_optuna({}), "optuna"),
        (lambda: hp.adapters.from_configspace(None), "ConfigSpace"),
        (lambda: hp.adapters.to_configspace(hp.SearchSpace([hp.Int("n", 0, 3)])), "ConfigSpace"),
    ],
    ids=["from_optuna", "from_configspace", "to_configspace"],
)
def test_missing_optional_dependency_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, call: Callable[[], Any], module: str
):
    monkeypatch.setitem(sys.modules, module, None)  # makes ``import module`` fail
    with pytest.raises(ImportError, match=r"pip install \"hpinsight\[(optuna|configspace)\]\""):
        call()


def test_adapter_modules_import_no_optimizer():
    code = (
        "import sys, hpinsight.adapters._configspace, hpinsight.adapters._optuna; "
        "print(sorted(m for m in ('optuna', 'ConfigSpace') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_is_active_reads_only_the_parents_and_order_puts_parents_first():
    space = hp.SearchSpace(
        [hp.Float("momentum", 0.0, 1.0), hp.Categorical("opt", ["sgd", "adam"]),
         hp.Float("nesterov_gamma", 0.0, 1.0), hp.Float("lr", 1e-4, 1.0, log=True)],
        conditions=[hp.Condition("momentum", "opt", values=["sgd"]),
                    hp.Condition("nesterov_gamma", "momentum", gt=0.5)],
    )
    order = space.names_parents_first
    assert order.index("opt") < order.index("momentum") < order.index("nesterov_gamma")
    assert space.is_active("lr", {})
    assert space.is_active("momentum", {"opt": "sgd"})
    assert not space.is_active("momentum", {"opt": "adam"})
    assert not space.is_active("momentum", {})  # a missing parent is inactive
    assert space.is_active("nesterov_gamma", {"opt": "sgd", "momentum": 0.9})
    assert not space.is_active("nesterov_gamma", {"opt": "sgd", "momentum": 0.2})
    # the same answer as the encoded activity of a full configuration
    config = {"opt": "sgd", "momentum": 0.7, "nesterov_gamma": 0.1, "lr": 0.01}
    mask = space.active_mask(space.encode([config]))[0]
    assert [space.is_active(n, config) for n in space.names] == mask.tolist()


@pytest.mark.parametrize(("low", "high", "step"), [
    (0.0, 0.9, 0.3), (0.0, 1.0, 0.1), (0.1, 0.7, 0.2), (0.0, 1.05, 0.1), (-1.0, 1.0, 0.25),
    (1e-3, 1.0, 1e-3)])
def test_a_stepped_floats_count_of_values_is_the_grid_index_of_its_top_plus_one(low, high,
                                                                                  step):
    from hpinsight._shared import step_index

    param = hp.Float("x", low, high, step=step)
    assert param.n_values == step_index(low, step, high, "floor") + 1
