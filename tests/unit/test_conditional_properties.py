"""Properties of conditional search spaces, on random spaces (Hypothesis).

Random spaces mix every parameter kind the encoding treats differently (log, stepped,
integer, categorical with ``None``/bool/number choices) and every kind of condition
(``values`` on categorical and integer parents, ``gt``/``lt`` on numeric ones, also
outside the parent's range, :class:`~hpinsight.AnyOf`, several conditions on one child,
chains of conditional parents), in a shuffled column order. Checked:

* activity: ``active_mask`` of the encoded matrix agrees with ``is_active`` entry by
  entry, on sampled configurations and on configurations that set every parameter;
* encode -> decode -> encode reproduces the encoded matrix exactly;
* confidence regions: every sampled configuration routes with ``leaf_for`` to a leaf
  whose ``to_search_space()`` contains it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, event, find, given, settings
from hypothesis import strategies as st

import hpinsight as hp
from hpinsight import AnyOf, Categorical, Condition, Float, Int
from hpinsight.exceptions import InvalidArgumentError

# One of each kind of parameter (renamed when drawn). Bounds and steps include an inexact
# float step (0.1) and grids whose log-encoded values a split can fall between.
TEMPLATES: list[Any] = [
    Float("_", -1.0, 2.0),
    Float("_", 1e-3, 10.0, log=True),
    Float("_", 0.0, 1.0, step=0.25),
    Float("_", 0.0, 0.3, step=0.1),
    Int("_", 1, 6),
    Int("_", -2, 2),
    Int("_", 0, 20, step=5),
    Int("_", 1, 100, log=True),
    Int("_", 1, 4, log=True),
    Categorical("_", ["a", "b", "c", "d"]),
    Categorical("_", [None, "x"]),
    Categorical("_", [True, False]),
    Categorical("_", [1, 2, 3]),
    Categorical("_", [True, 1, None]),
]

_SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


def _renamed(template: Any, name: str) -> Any:
    if isinstance(template, Categorical):
        return Categorical(name, template.choices)
    kind = type(template)
    return kind(name, template.low, template.high, log=template.log, step=template.step)


def _values_of(param: Any) -> list[Any]:
    """Every valid value of a discrete parameter."""
    if isinstance(param, Categorical):
        return list(param.choices)
    if isinstance(param, Int):
        return list(range(param.low, param.high + 1, param.step))
    n = round((param.high - param.low) / param.step) + 1
    return [param.low + k * param.step for k in range(n)]


@st.composite
def _threshold(draw: st.DrawFn, parent: Any) -> float:
    """A gt/lt bound: a valid value (ties), a point between two, or outside the range."""
    low, high = parent.low, parent.high
    if parent.log:
        inside = math.exp(math.log(low) + draw(st.sampled_from([0.1, 0.5, 0.9]))
                          * (math.log(high) - math.log(low)))
    else:
        inside = low + draw(st.sampled_from([0.1, 0.5, 0.9])) * (high - low)
    options = [inside, low - 1.0, high + 1.0, low, high]
    if parent.log:
        options.append(0.0)  # below every value of a log parameter
    if isinstance(parent, Int) or parent.step is not None:
        options += _values_of(parent)
    return float(draw(st.sampled_from(options)))


@st.composite
def _condition(draw: st.DrawFn, child: str, parent: Any) -> Condition:
    discrete = isinstance(parent, Categorical | Int)
    if discrete and (isinstance(parent, Categorical) or draw(st.booleans())):
        choices = _values_of(parent)
        values = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=len(choices),
                               unique_by=repr))
        return Condition(child, parent.name, values=values)
    gt, lt = draw(st.sampled_from([(True, False), (False, True), (True, True)]))
    bounds = {}
    if gt:
        bounds["gt"] = draw(_threshold(parent))
    if lt:
        bounds["lt"] = draw(_threshold(parent))
    return Condition(child, parent.name, **bounds)


@st.composite
def conditional_spaces(draw: st.DrawFn, max_params: int = 6) -> hp.SearchSpace:
    """A random space; parameter ``p{i}`` may depend on any of ``p0 .. p{i-1}`` (so that
    chains form and no cycle does), and the column order is shuffled."""
    n = draw(st.integers(min_value=2, max_value=max_params))
    params = [_renamed(draw(st.sampled_from(TEMPLATES)), f"p{i}") for i in range(n)]
    conditions: list[Condition | AnyOf] = []
    for i in range(1, n):
        kind = draw(st.sampled_from(["none", "none", "one", "two", "anyof"]))
        if kind == "none":
            continue
        parents = draw(st.lists(st.integers(0, i - 1), min_size=1,
                                max_size=1 if kind == "one" else 2, unique=True))
        parts = [draw(_condition(f"p{i}", params[j])) for j in parents]
        if kind == "anyof":
            conditions.append(AnyOf(parts))
        else:
            conditions.extend(parts)
    order = draw(st.permutations(range(n)))
    return hp.SearchSpace([params[j] for j in order], conditions)


def _everywhere(space: hp.SearchSpace, n: int, seed: int) -> list[dict[str, Any]]:
    """Configurations with a value for every parameter, active or not."""
    return hp.SearchSpace(space.params).sample(n, seed=seed)


# ---------------------------------------------------------------------------- activity
@settings(max_examples=150, **_SETTINGS)
@given(space=conditional_spaces(), seed=st.integers(0, 2**16))
def test_active_mask_agrees_with_is_active(space, seed):
    configs = space.sample(25, seed=seed)
    X = space.encode(configs)
    mask = space.active_mask(X)
    expected = np.array([[space.is_active(name, c) for name in space.names] for c in configs])
    np.testing.assert_array_equal(mask, expected)
    # a sampled configuration holds exactly its active parameters
    np.testing.assert_array_equal(mask, ~np.isnan(X))
    # with every parameter set (inactive ones too), activity is still read off the parents
    full = _everywhere(space, 25, seed)
    X_full = hp.SearchSpace(space.params).encode(full)
    mask = space.active_mask(X_full)
    expected = np.array([[space.is_active(name, c) for name in space.names] for c in full])
    np.testing.assert_array_equal(mask, expected)


# ---------------------------------------------------------------------------- encoding
@settings(max_examples=150, **_SETTINGS)
@given(space=conditional_spaces(), seed=st.integers(0, 2**16))
def test_encode_decode_encode_round_trips_exactly(space, seed):
    configs = space.sample(25, seed=seed)
    X = space.encode(configs)
    decoded = space.decode(X)
    assert [set(c) for c in decoded] == [set(c) for c in configs]
    again = space.encode(decoded)
    np.testing.assert_array_equal(again, X)  # NaN == NaN here


def test_a_log_float_survives_encode_decode_encode():
    # minimised from test_encode_decode_encode_round_trips_exactly (about 0.2 % of the
    # values of a log Float are affected; 0.253 is the first of 0.001, 0.002, ...)
    space = hp.SearchSpace([Float("lr", 1e-3, 10.0, log=True)])
    X = space.encode([{"lr": 0.253}])
    decoded = space.decode(X)  # was {"lr": 0.25299999999999995}
    np.testing.assert_array_equal(space.encode(decoded), X)  # was off by one ulp


def test_decoding_a_valid_configuration_keeps_its_activity():
    space = hp.SearchSpace([Float("lr", 1e-3, 10.0, log=True), Float("m", 0.0, 1.0)],
                           [Condition("m", "lr", lt=0.253)])
    X = space.encode([{"lr": 0.253}])  # m is inactive: 0.253 < 0.253 is false
    decoded = space.decode(X)
    assert space.is_active("m", decoded[0]) is False  # was True
    np.testing.assert_array_equal(space.encode(decoded), X)  # raised: m has no value


# ---------------------------------------------------------------------------- regions
class _Noise:
    """A model whose predictive std steps up where random parameters cross a random
    cut, so that confidence splits fall on many parameters; the mean is the PDP's."""

    def __init__(self, space: hp.SearchSpace, seed: int) -> None:
        rng = np.random.default_rng(seed)
        d = len(space)
        self.weights = rng.exponential(size=d) * (rng.random(d) < 0.6)
        self.cuts = rng.random(d)
        lows, highs = [], []
        for p in space.params:
            if isinstance(p, Categorical):
                lows.append(0.0)
                highs.append(max(len(p.choices) - 1, 1))
            else:
                lows.append(math.log(p.low) if p.log else p.low)
                highs.append(math.log(p.high) if p.log else p.high)
        self.low, self.span = np.array(lows), np.array(highs) - np.array(lows)

    def predict(self, X: Any, return_std: bool = False) -> Any:
        u = np.nan_to_num((np.asarray(X) - self.low) / self.span)
        std = 0.1 + (u > self.cuts) @ self.weights
        mean = u.sum(axis=1)
        return (mean, std) if return_std else mean


def _contains(space: hp.SearchSpace, config: dict[str, Any]) -> str | None:
    """Why ``space`` does not contain ``config`` (None when it does): each value valid,
    and every parameter set exactly where the space's conditions make it active."""
    unknown = sorted(set(config) - set(space.names))
    if unknown:
        return f"{unknown} are not parameters of the region"
    for name, value in config.items():
        if not space[name].contains(value):
            return f"{name}={value!r} is outside the region's {space[name]!r}"
    for p in space.params:
        active = space.is_active(p.name, config)
        if active and p.name not in config:
            return f"{p.name!r} is active in the region but not set"
        if not active and p.name in config:
            return f"{p.name!r} is set but inactive in the region"
    return None


@settings(max_examples=60, **_SETTINGS)
@given(
    space=conditional_spaces(max_params=5),
    which=st.integers(0, 4),
    seed=st.integers(0, 2**16),
    max_splits=st.integers(1, 5),
)
def test_every_configuration_routes_to_a_region_that_contains_it(space, which, seed,
                                                                  max_splits):
    name = space.names[which % len(space)]
    try:
        pd = hp.partial_dependence(_Noise(space, seed), name, space=space, grid_size=3,
                                   n_samples=120, seed=seed)
    except InvalidArgumentError:
        # drawn where it is active, a PDP needs somewhere it is: refused only where the
        # conditions hold (next to) nowhere
        assert sum(name in c for c in space.sample(2000, seed=seed)) < 2
        return
    tree = hp.confidence_split(pd, max_splits=max_splits, min_node_size=10)
    leaves = tree.leaves()
    event(f"{len(leaves) - 1} splits")
    for config in space.sample(40, seed=seed + 1):
        leaf = tree.leaf_for(config)
        assert any(leaf is other for other in leaves)
        region = tree.to_search_space(leaf)
        why = _contains(region, config)
        assert why is None, f"{why}; config {config} routed to {leaf!r}"
        region.encode([config])  # and the narrowed space accepts it without a warning


def test_a_split_between_true_and_1_describes_both_regions_correctly():
    # minimised from test_every_configuration_routes_to_a_region_that_contains_it
    space = hp.SearchSpace([Categorical("c", [True, 1]), Float("x", 0.0, 1.0)])

    class Model:  # predictive std 1 where c is True (index 0), 0.1 where c is 1
        def predict(self, X, return_std=False):
            return X[:, 1], np.where(X[:, 0] == 0, 1.0, 0.1)

    pd = hp.partial_dependence(Model(), "x", space=space, grid_size=3, n_samples=100, seed=0)
    tree = hp.confidence_split(pd, max_splits=1)
    assert tree.root.split == ("c", (True,))
    # was: left is "c in {True, 1}" and right "c in {}", which to_search_space refuses
    assert [leaf.bounds["c"] for leaf in tree.leaves()] == [(True,), (1,)]
    leaf = tree.leaf_for({"c": 1, "x": 0.5})
    assert tree.to_search_space(leaf)["c"].choices == (1,)


def test_a_region_at_the_top_of_an_inexact_step_grid_holds_the_top_value():
    # minimised from test_every_configuration_routes_to_a_region_that_contains_it
    space = hp.SearchSpace([Float("x", 0.0, 1.0), Float("s", 0.0, 0.3, step=0.1)])
    assert {c["s"] for c in space.sample(50, seed=0)} == {0.0, 0.1, 0.2, 0.3}

    class Model:  # predictive std 1 where s is at its top value, 0.1 elsewhere
        def predict(self, X, return_std=False):
            return X[:, 0], np.where(X[:, 1] > 0.25, 1.0, 0.1)

    pd = hp.partial_dependence(Model(), "x", space=space, grid_size=3, n_samples=100, seed=0)
    tree = hp.confidence_split(pd, max_splits=1)
    assert tree.root.split == ("s", 0.25)
    leaf = tree.leaf_for({"x": 0.5, "s": 0.3})
    assert leaf.conditions == ("s > 0.25",)
    # was Categorical('s', choices=(0.30000000000000004,)), which does not contain 0.3
    assert tree.to_search_space(leaf)["s"].contains(0.3)


_FIND = settings(database=None, phases=[Phase.generate], max_examples=2000)


def test_the_strategies_draw_every_kind_of_condition():
    # guard against a strategy that silently stopped drawing some kind of condition
    def has(kind):
        return lambda s: any(kind(c) for c in s.conditions)

    find(conditional_spaces(), has(lambda c: isinstance(c, AnyOf)), settings=_FIND)
    find(conditional_spaces(), has(lambda c: isinstance(c, Condition) and c.values is None),
         settings=_FIND)
    find(conditional_spaces(), lambda s: any(  # a chain: a conditional child's parent
        set(c.parents) & set(s.conditional_names) for c in s.conditions), settings=_FIND)
    for kind in (Int, Categorical):
        find(conditional_spaces(), lambda s, kind=kind: any(
            isinstance(c, Condition) and c.values is not None and isinstance(s[c.parent], kind)
            for c in s.conditions), settings=_FIND)


def test_a_condition_on_a_stepped_float_holds_at_the_grid_value_its_samples_have():
    # sampling and decoding give 0.1 * 3 = 0.30000000000000004; the condition lists 0.3 as
    # typed: compared as numbers the child was inactive in every trial there, its values
    # were dropped with a warning and its effect came out 0
    import warnings

    import hpinsight as hp

    space = hp.SearchSpace([hp.Float("dropout", 0, 0.5, step=0.1), hp.Float("extra", 0, 1)],
                           conditions=[hp.Condition("extra", "dropout", values=[0.3])])
    assert space.is_active("extra", {"dropout": 0.1 * 3})
    assert not space.is_active("extra", {"dropout": 0.4})
    configs = space.sample(300, seed=0)
    at = [c for c in configs if math.isclose(c["dropout"], 0.3)]
    assert at
    assert all("extra" in c for c in at)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no value dropped as "inactive"
        X = space.encode([{"dropout": 0.1 * 3, "extra": 0.7}, {"dropout": 0.3, "extra": 0.2}])
    np.testing.assert_array_equal(X[:, 1], [0.7, 0.2])
    y = [10 * c["extra"] if "extra" in c else 5.0 for c in configs]  # 5: its mean
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0,
                       surrogate=hp.GP(n_draws=4, refits=0, shadows=False))
    shares = {i.params[0]: i.mean for i in result.ranking(order=1)}
    assert shares["extra"] > 0.1, shares  # was 0: never active (1/6: active in a sixth)
