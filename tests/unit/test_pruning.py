"""Taking out of the Gaussian process the parameters its likelihood barely pays for."""

from __future__ import annotations

import dataclasses
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.exceptions import InvalidArgumentTypeError
from hpinsight.results import Importance
from hpinsight.surrogates.gp import fit_gp
from hpinsight.surrogates.gp._kernel import make_columns, scale_columns
from hpinsight.surrogates.gp._likelihood import (
    LENGTH_BOUNDS,
    UNIT_BOUNDS,
    Likelihood,
    _minimize_nll,
    fit_hyperparameters_and_raw,
    prune_columns,
    prune_threshold,
    unit_members,
)


def _noisy(n: int = 150, d: int = 12, seed: int = 0, noise: float = 0.6):
    """Random trials of ``d`` floats: ``a`` and ``b`` act, the rest do nothing, with
    Gaussian noise of standard deviation ``noise``."""
    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("b", 0, 1),
                            *(hp.Float(f"n{k}", 0, 1) for k in range(d - 2))])
    X = np.random.default_rng(seed).uniform(size=(n, d))
    y = (np.sin(2 * np.pi * X[:, 0]) + 3 * (X[:, 1] - 0.4) ** 2
         + noise * np.random.default_rng(seed + 1).standard_normal(n))
    return space, X, y


def _fit(space, X, y):
    cols = make_columns(space, X)
    U = scale_columns(cols, X)
    units = unit_members(len(cols), ())
    ys = (y - y.mean()) / y.std()
    return cols, U, ys, units


def _cost(lik: Likelihood, ys: np.ndarray, theta: np.ndarray, j: int) -> float:
    """Column ``j``'s removal cost, written out: its length scale to the upper bound, its
    variance to the lower one, every other variance refit, the likelihood's difference."""
    d = lik.d
    t = theta.copy()
    t[j] = math.log(LENGTH_BOUNDS[1])
    t[d + 2 + j] = math.log(UNIT_BOUNDS[0])
    free = np.array([i for i in range(d, t.size) if i != d + 2 + j])
    return _minimize_nll(lik, ys, t, free)[0] - lik.data_nll(theta, ys)


def test_the_columns_taken_out_are_those_whose_removal_costs_less_than_the_threshold() -> None:
    space, X, y = _noisy()
    cols, U, ys, units = _fit(space, X, y)
    plain = fit_hyperparameters_and_raw(cols, U, ys, units)
    lik = Likelihood(cols, U, units)
    threshold = prune_threshold(y.size)
    theta, off = prune_columns(lik, ys, plain.theta, threshold)
    costs = np.array([_cost(lik, ys, plain.theta, j) for j in range(len(cols))])
    assert off.any()  # the noise gives some do-nothing columns a little
    assert not off[:2].any()  # the two that act stay
    # every column taken out costs less than the price of a parameter; every one kept
    # that was checked with a refit costs more
    assert np.all(costs[off] < threshold)
    assert np.all(costs[~off] >= threshold)
    # taken out: the length scale at its bound, the unit's variance at its bound
    assert np.all(theta[:len(cols)][off] == math.log(LENGTH_BOUNDS[1]))
    assert np.all(theta[len(cols) + 2:][off] == math.log(UNIT_BOUNDS[0]))
    # kept: the length scales as fitted (only the variances are refit)
    np.testing.assert_array_equal(theta[:len(cols)][~off], plain.theta[:len(cols)][~off])


def test_the_refits_split_over_a_second_thread_give_the_same_columns_and_bits() -> None:
    # the columns whose cost is checked with a refit are shared with a pool's thread (on a
    # likelihood of its own); each result must land on its own column
    space, X, y = _noisy(seed=3)
    cols, U, ys, units = _fit(space, X, y)
    theta0 = fit_hyperparameters_and_raw(cols, U, ys, units).theta
    lik = Likelihood(cols, U, units)
    threshold = prune_threshold(y.size)
    d = len(cols)
    plain = [lik.data_nll(t, ys) - lik.data_nll(theta0, ys) for t in
             (np.r_[np.where(np.arange(d) == j, math.log(LENGTH_BOUNDS[1]), theta0[:d]),
                    theta0[d:d + 2],
                    np.where(np.arange(d) == j, math.log(UNIT_BOUNDS[0]), theta0[d + 2:])]
              for j in range(d))]
    checked = [j for j, c in enumerate(plain) if threshold <= c < 8.0 * threshold]
    assert len(checked) >= 3  # some refits in each thread
    alone, off = prune_columns(lik, ys, theta0, threshold)
    with ThreadPoolExecutor(max_workers=1) as pool:
        shared, off_shared = prune_columns(lik, ys, theta0, threshold, pool=pool)
    np.testing.assert_array_equal(off_shared, off)
    np.testing.assert_array_equal(shared, alone)
    costs = np.array([_cost(lik, ys, theta0, j) for j in checked])
    np.testing.assert_array_equal(off[checked], costs < threshold)


def test_the_threshold_is_the_information_criterions_price_of_a_parameter() -> None:
    assert prune_threshold(200) == pytest.approx(0.5 * math.log(200))
    assert prune_threshold(256) > prune_threshold(60) > 0


def test_a_pruned_fit_gives_the_columns_taken_out_no_share() -> None:
    space, X, y = _noisy()
    pruned = hp.fanova(hp.TrialHistory(space, space.decode(X), y), seed=0)
    plain = hp.fanova(hp.TrialHistory(space, space.decode(X), y), seed=0,
                      surrogate=hp.GP(prune=False))
    model = pruned.model
    assert model.pruned  # columns were taken out ...
    assert model.unpruned is not None  # ... of this model
    names = [space.names[j] for j in model.pruned]
    assert "a" not in names
    assert "b" not in names
    for name in names:
        imp = pruned.importance(name)
        assert imp.mean < 1e-9
        assert imp.before_pruning is not None
        assert imp.interval[0] == 0.0
        assert imp.verdict != "resolved"
    # the do-nothing columns had a share without pruning; they have none with it
    mass = {r: sum(x.importance(n).mean for n in space.names[2:]) for r, x in
            (("pruned", pruned), ("plain", plain))}
    assert mass["plain"] > 10 * mass["pruned"]
    assert pruned.importance("a").verdict == plain.importance("a").verdict == "resolved"
    # what the page and the JSON read
    assert pruned.importance(names[0]).to_dict()["before_pruning"] == pytest.approx(
        pruned.importance(names[0]).before_pruning)
    assert plain.importance(names[0]).before_pruning is None


def test_a_parameter_taken_out_is_judged_on_its_share_before() -> None:
    space, X, y = _noisy()
    result = hp.fanova(hp.TrialHistory(space, space.decode(X), y), seed=0)
    name = space.names[result.model.pruned[0]]
    j = result.subsets.index((name,))
    before = np.array(result.pruned_fractions)
    # before pruning the fit gave it far more than a shadow: taken out, it is uncertain,
    # not nothing (being taken out is no evidence that it does nothing), nor resolved
    before[j] = 0.3
    big = dataclasses.replace(result, pruned_fractions=before).importance(name)
    assert big.mean < 1e-9
    assert big.verdict == "uncertain"
    assert big.interval == (0.0, pytest.approx(0.3 + 1.6448536269514722 * big.std))
    # ... and nothing where the fit before gave it nothing either
    before[j] = 0.0
    small = dataclasses.replace(result, pruned_fractions=before).importance(name)
    assert small.verdict == "indistinguishable from nothing"


def test_nothing_is_taken_out_where_every_column_would_go() -> None:
    space, X, _ = _noisy(n=80, d=4)
    y = np.random.default_rng(7).standard_normal(80)  # pure noise
    cols, U, ys, units = _fit(space, X, y)
    lik = Likelihood(cols, U, units)
    plain = fit_hyperparameters_and_raw(cols, U, ys, units)
    costs = [_cost(lik, ys, plain.theta, j) for j in range(len(cols))]
    assert max(costs) < prune_threshold(80)  # every column would go
    pruned = fit_hyperparameters_and_raw(cols, U, ys, units, prune=True)
    assert pruned.pruned == ()
    np.testing.assert_array_equal(pruned.theta, plain.theta)


def test_the_disputed_rule_reads_the_length_scales_kept_before_pruning() -> None:
    from hpinsight._decision_result import DISPUTED_LENGTH, DISPUTED_RATIO
    from hpinsight._decisions import _disputed

    space, X, y = _noisy()
    result = hp.fanova(hp.TrialHistory(space, space.decode(X), y), seed=0)
    model = result.model
    kept = np.asarray(model.unpruned.length_scales)
    j = next(j for j in model.pruned if kept[j] < 1.9 * DISPUTED_LENGTH)
    assert model.length_scales[j] == pytest.approx(LENGTH_BOUNDS[1])
    # a raw length scale under the disputed line and over half the one the fit kept
    raw = np.array(model.raw_length_scales)
    raw[j] = 1.01 * kept[j] / DISPUTED_RATIO
    assert raw[j] < DISPUTED_LENGTH
    assert LENGTH_BOUNDS[1] > DISPUTED_RATIO * raw[j]
    changed = dataclasses.replace(result, model=dataclasses.replace(model, raw_length_scales=raw))
    # against the bound it would be disputed; against the length scale kept it is not
    assert space.names[j] not in _disputed(changed)
    raw[j] = 0.99 * kept[j] / DISPUTED_RATIO
    changed = dataclasses.replace(result, model=dataclasses.replace(model, raw_length_scales=raw))
    assert space.names[j] in _disputed(changed)


def test_the_model_object_says_whether_it_prunes() -> None:
    assert hp.GP().prune is True
    assert hp.GP().to_dict()["prune"] is True
    assert repr(hp.GP(prune=False)) == "GP(prune=False)"
    with pytest.raises(InvalidArgumentTypeError, match="'prune' parameter of GP must be True or False"):
        hp.GP(prune="yes")


def test_without_pruning_the_fit_has_no_pruned_columns() -> None:
    space, X, y = _noisy(n=60, d=4)
    gp = fit_gp(space, X, y, n_draws=2, seed=0)
    assert gp.pruned is None
    assert gp.unpruned is None
    assert Importance(("a",), 0.1, 0.01).before_pruning is None


def test_a_parameter_taken_out_is_kept_tuned_while_its_share_before_is_uncertain() -> None:
    from hpinsight._decisions import decide
    from hpinsight._surrogate_risk import SurrogateRisk

    space, X, y = _noisy()
    result = hp.fanova(hp.TrialHistory(space, space.decode(X), y), seed=0)
    name = space.names[result.model.pruned[0]]
    j = result.subsets.index((name,))
    free = np.zeros(4)

    def risks():
        return {n: SurrogateRisk(n, 0.5, 0.0, 0.0, {}, free, {}, {}) for n in space.names}

    values = dict.fromkeys(space.names, 0.5)
    margin = 0.5 * math.sqrt(result.total_variance)  # the effect's size decides, not its cost
    # the fit before gave it nothing: a costless "nothing", safe to fix
    before = np.array(result.pruned_fractions)
    before[j] = 0.0
    nothing = dataclasses.replace(result, pruned_fractions=before)
    assert decide(nothing, risks=risks(), values=values, margin=margin)[name].state == "fix"
    # the fit before gave it 30 %: uncertain, and its size is that share's, not the 0 of
    # the model it was taken out of, so it is not waved through as too small to matter
    before[j] = 0.3
    large = dataclasses.replace(result, pruned_fractions=before)
    d = decide(large, risks=risks(), values=values, margin=margin)[name]
    assert large.importance(name).verdict == "uncertain"
    assert d.state == "unresolved", d.sentence
    assert not d.negligible
    assert d.effect_sd == pytest.approx(math.sqrt(0.3 * result.total_variance))
    # its sentence gives the share its verdict read, not only the 0 of the pruned model,
    # and so does its JSON; a parameter kept in the model says nothing of pruning
    assert d.share == pytest.approx(0.0, abs=1e-12)
    assert d.share_before == pytest.approx(0.3)
    assert "explains 0.0 % of the variation (taken out of the model, 30.0 % before)" in d.sentence
    assert d.to_dict()["share_before"] == pytest.approx(0.3)
    kept = decide(large, risks=risks(), values=values, margin=margin)["a"]
    assert math.isnan(kept.share_before)
    assert "taken out" not in kept.sentence
    assert kept.to_dict()["share_before"] is None


def test_the_page_says_which_parameters_were_taken_out() -> None:
    import html
    import re

    space, X, y = _noisy()
    rep = hp.report(hp.TrialHistory(space, space.decode(X), y), top=1, seed=0)
    gone = [space.names[j] for j in rep.result.model.pruned]
    page = html.unescape(rep.html())
    table = page.split('<table class=effects>', 1)[1].split("</table>", 1)[0]
    rows = {re.sub("<[^>]+>", "", r.split("</td>", 1)[0]): r
            for r in table.split("<tr><td>")[1:]}
    for name in space.names:
        said = "taken out of the model" in rows[name].split("</td>")[2]
        assert said == (name in gone), name
    assert (f"Over all trials, {len(gone)} of the {len(space)} parameters were taken out of "
            "the model") in page
    # and the JSON holds each one's share before
    effects = {tuple(e["params"]): e for e in rep.to_dict()["fanova"]["effects"]}
    for name in gone:
        assert effects[(name,)]["before_pruning"] is not None
    assert effects[("a",)]["before_pruning"] is None
    # the table quotes the JSON's share before, in the words a decision's sentence uses
    # (test_a_parameter_taken_out_is_kept_tuned_while_its_share_before_is_uncertain)
    from hpinsight._shared import fmt_share

    for name in gone:
        words = f"taken out of the model, {fmt_share(effects[(name,)]['before_pruning'])} before"
        assert words in rows[name], name


def test_a_fit_for_the_means_alone_has_the_full_models_means_and_skips_the_rest() -> None:
    # the Optuna evaluator's model: its importances must be the full analysis's to the
    # bit, where columns are taken out too, while the posterior before pruning and the
    # leave-one-out fit (which only verdicts and notes read) are not computed
    from hpinsight.surrogates import means_only

    space, X, y = _noisy()
    history = hp.TrialHistory(space, space.decode(X), y)
    full = hp.fanova(history, seed=0)
    quick = hp.fanova(history, surrogate=means_only(hp.GP()), seed=0)
    assert full.model.pruned  # the case where the two could part
    assert quick.model.pruned == full.model.pruned
    assert [i.mean for i in quick.ranking(order=1)] == [i.mean for i in full.ranking(order=1)]
    assert [i.params for i in quick.ranking(order=1)] == [i.params for i in full.ranking(order=1)]
    assert quick.model.unpruned is None
    assert quick.model.fit_r2 is None
    assert full.model.unpruned is not None
    assert full.model.fit_r2 is not None
    # without pruning the same holds
    plain = hp.fanova(history, surrogate=hp.GP(prune=False), seed=0)
    assert ([i.mean for i in hp.fanova(history, surrogate=means_only(hp.GP(prune=False)), seed=0)
             .ranking(order=1)] == [i.mean for i in plain.ranking(order=1)])


def test_a_small_trend_taken_out_keeps_its_share_and_the_page_says_what_it_shows():
    # a linear 0.1 y and a categorical step, exact shares 0.18 % and 0.40 %, too cheap in
    # likelihood to keep: taken out, they keep those shares (a length scale at its bound
    # holds a gentle trend), so the page's note said "their share is next to 0" beside
    # 0.4 %. They stay unresolved, and the note says what the table shows
    import html

    space = hp.SearchSpace([hp.Float("x", -5, 5), hp.Int("y", 0, 10),
                            hp.Categorical("z", ["a", "b", "c"])])
    configs = space.sample(80, seed=2)  # (on seeds 0, 1 and 3-6 they are kept, resolved)
    y = [c["x"] ** 2 + 0.1 * c["y"] + (1.0 if c["z"] == "a" else 0.0) for c in configs]
    history = hp.TrialHistory(space, configs, y)
    result = hp.fanova(history, seed=0)
    pruned = {i.params[0]: i for i in result.ranking(order=1) if i.before_pruning is not None}
    assert set(pruned) == {"y", "z"}
    for imp in pruned.values():
        assert imp.mean > 1e-3  # kept, not next to 0
        assert imp.verdict != "resolved"
    page = html.unescape(hp.report(history, seed=0, top=1, subspace=False).html())
    assert "taken out of the model" in page
    assert "next to 0" not in page
    assert "still holds a gentle trend" in " ".join(page.split())
