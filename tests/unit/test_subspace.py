"""Surrogate tuning risk and subspace suggestions: known separable objectives, the
"important but one setting is always good" case, risk-driven keeping, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hpinsight as hp
from hpinsight._decision_result import OUTSIDE


def _separable(n=400, seed=0):
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Float("z", 0.0, 1.0)])
    configs = space.sample(n, seed=seed)
    y = [(c["x"] - 0.3) ** 2 + 0.5 * (c["z"] - 0.8) ** 2 for c in configs]
    return space, configs, y


def test_surrogate_risk_recovers_a_separable_cost():
    space, configs, y = _separable()
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    risks = hp.surrogate_tuning_risk(result, {"x": 0.3, "z": 0.2}, configs=configs, seed=0)
    # fixing z at 0.2 loses 0.5 * 0.6^2 = 0.18; fixing x at its optimum loses nothing
    assert risks["z"].mean == pytest.approx(0.18, abs=0.03)
    assert abs(risks["x"].mean) < 0.01
    assert risks["z"].best_fixed["z"] == 0.2
    assert risks["z"].best_free["z"] == pytest.approx(0.8, abs=0.1)
    assert risks["z"].quantile(0.9) == risks["z"].quantiles[0.9]


def test_free_optimum_includes_the_default_so_the_mean_risk_is_never_negative():
    # on a forest, whose prediction is flat around the optimum, exactly
    space, configs, y = _separable(n=60, seed=3)
    result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=16), seed=0)
    for default in (0.0, 0.3, 0.55, 1.0):
        risks = hp.surrogate_tuning_risk(result, {"x": default, "z": default}, n_candidates=50,
                                         seed=1)
        assert all(r.mean >= 0.0 for r in risks.values())


def test_risk_of_a_default_at_the_optimum_is_zero_up_to_the_search_on_a_smooth_model():
    # the Gaussian process is smooth: a fixed search at the optimum can find a candidate a
    # hair better than the free one (paired searches of equal size), never by more than
    # the search's resolution, and a bad default costs what the objective says
    space, configs, y = _separable(n=60, seed=3)
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    risks = hp.surrogate_tuning_risk(result, {"x": 0.3, "z": 0.8}, n_candidates=50, seed=1)
    assert all(abs(r.mean) < 0.01 for r in risks.values())
    bad = hp.surrogate_tuning_risk(result, {"x": 1.0, "z": 0.0}, n_candidates=50, seed=1)
    assert bad["x"].mean == pytest.approx(0.49, abs=0.05)
    assert bad["z"].mean == pytest.approx(0.5 * 0.64, abs=0.05)


def test_maximizing_flips_the_sign_convention():
    space, configs, y = _separable()
    mini = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    maxi = hp.fanova(hp.TrialHistory(space, configs, [-v for v in y], direction="maximize"),
                     seed=0)
    a = hp.surrogate_tuning_risk(mini, {"z": 0.2}, seed=0)["z"]
    b = hp.surrogate_tuning_risk(maxi, {"z": 0.2}, seed=0)["z"]
    assert a.mean == pytest.approx(b.mean, rel=1e-9)
    assert a.mean > 0.1


def test_a_parameter_with_one_always_good_setting_is_kept_for_its_resolved_effect():
    # 'solver' explains most of the variance, but 'good' is always best: fixing it at
    # 'good' costs nothing. Its effect is resolved, so it is kept: only parameters with
    # no effect at all are fixed (a resolved effect can hide a costly dip near the optimum)
    space = hp.SearchSpace([hp.Categorical("solver", ["bad", "good"]),
                            hp.Float("x", 0.0, 1.0), hp.Float("noise", 0.0, 1.0)])
    configs = space.sample(300, seed=0)
    y = [10.0 * (c["solver"] == "bad") + (c["x"] - 0.5) ** 2 for c in configs]
    history = hp.TrialHistory(space, configs, y)
    sub = hp.suggest_subspace(history, seed=0)
    assert sub.defaults["solver"] == "good"  # the best trial's value
    assert sub.default_sources["solver"] == "incumbent"
    assert sub.risks["solver"].quantile(0.9) <= sub.margin  # cheap to fix ...
    assert sub.decisions["solver"].state == "matters"  # ... and kept all the same
    assert sub.decisions["x"].state == "matters"
    # 'noise' has no effect; whether it is safe to fix yet depends on the margin, which
    # is tight here (the best trials are nearly equal), and never on its variance
    assert sub.decisions["noise"].state in ("fix", "not_yet_safe")
    wide = hp.suggest_subspace(history, risk_margin=1.0, seed=0)
    assert list(wide.fixed) == ["noise"]
    assert wide.decisions["noise"].state == "fix"
    assert wide.reasons["noise"].startswith("You can stop tuning it")
    assert wide.decisions["solver"].state == "matters"
    assert sub.defaults["x"] == pytest.approx(0.5, abs=0.05)


def test_the_margin_is_a_fraction_of_the_spread_near_the_best():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Float("z", 0.0, 1.0)])
    configs = space.sample(200, seed=2)
    y = [(c["x"] - 0.3) ** 2 for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), risk_margin=0.05, seed=0)
    ordered = np.sort(y)
    assert sub.margin == pytest.approx(0.05 * (ordered[19] - ordered[0]))  # best 10 %
    wide = hp.suggest_subspace(hp.TrialHistory(space, configs, y), risk_margin=0.5, seed=0)
    assert wide.margin == pytest.approx(10 * sub.margin)


def test_declared_defaults_are_the_values_to_fix_at():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0, default=0.9),
                            hp.Float("z", 0.0, 1.0, default=0.5)])
    configs = space.sample(300, seed=4)
    y = [(c["x"] - 0.3) ** 2 + 1e-5 * c["z"] for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    assert sub.default_sources == {"x": "space", "z": "space"}
    assert sub.keep == ("x",)
    assert sub.fixed == {"z": 0.5}
    given = hp.suggest_subspace(hp.TrialHistory(space, configs, y), defaults={"z": 0.25},
                                seed=0)
    assert given.fixed == {"z": 0.25}
    assert given.default_sources["z"] == "given"


def test_the_same_seed_gives_the_same_decisions():
    space, configs, y = _separable(n=60)
    history = hp.TrialHistory(space, configs, y)
    one = hp.suggest_subspace(history, seed=5)
    again = hp.suggest_subspace(history, seed=5)
    assert again.to_dict() == one.to_dict()


def test_errors_name_the_problem():
    space, configs, y = _separable(n=9)
    with pytest.raises(hp.exceptions.InvalidDataError, match="at least 10 trials"):
        hp.suggest_subspace(hp.TrialHistory(space, configs, y))
    space, configs, y = _separable(n=40)
    history = hp.TrialHistory(space, configs, y)
    with pytest.raises(hp.exceptions.InvalidDataError, match="not in the search space"):
        hp.suggest_subspace(history, defaults={"nope": 1})
    with pytest.raises(TypeError, match=r"TrialHistory or an optuna\.Study"):
        hp.suggest_subspace([1, 2, 3])
    result = hp.fanova(history, seed=0)
    with pytest.raises(hp.exceptions.InvalidDataError, match="is not a value it can take"):
        hp.surrogate_tuning_risk(result, {"x": 2.0})
    with pytest.raises(KeyError):
        hp.surrogate_tuning_risk(result, {"nope": 0.5})
    # fitted results must be of these trials, uncapped and capped as named
    other = hp.fanova(hp.TrialHistory(space, configs[:30], y[:30]), seed=0)
    with pytest.raises(hp.exceptions.InvalidDataError, match="not on these 40 trials"):
        hp.suggest_subspace(history, fitted=other)
    capped = hp.fanova(history, cap_quantile=0.25, seed=0)
    with pytest.raises(hp.exceptions.InvalidDataError, match="must be the uncapped analysis"):
        hp.suggest_subspace(history, fitted=capped)
    with pytest.raises(hp.exceptions.InvalidDataError, match=r"cap_quantile=0\.1"):
        hp.suggest_subspace(history, capped=capped, top_quantile=0.1)
    with pytest.raises(TypeError, match="must be a FanovaResult"):
        hp.suggest_subspace(history, fitted="result")


def test_given_fits_are_used_as_they_are():
    space, configs, y = _separable(n=60)
    history = hp.TrialHistory(space, configs, y)
    result = hp.fanova(history, seed=3, max_order=2)
    capped = hp.fanova(history, cap_quantile=0.25, seed=3)
    sub = hp.suggest_subspace(history, fitted=result, capped=capped, seed=0)
    for name in space.names:
        assert sub.decisions[name].share == result.importance(name).mean
        assert sub.decisions[name].share_top == capped.importance(name).mean


def test_an_optuna_study_is_read_directly():
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2
                   + 0.0 * t.suggest_float("unused", 0, 1), n_trials=60)
    sub = hp.suggest_subspace(study, seed=0)
    assert sub.keep[0] == "x"
    assert sub.decisions["x"].state == "matters"
    # no effect; fixed, or not yet: the 60 trials leave a margin of only 1.6e-5 to gain
    assert sub.decisions["unused"].verdict == "indistinguishable from nothing"
    assert sub.decisions["unused"].state in ("fix", "not_yet_safe")
    assert sub.defaults["unused"] == study.best_params["unused"]
    assert sub.n_trials == 60


def test_noise_parameters_cost_nothing_and_are_fixed():
    # five knobs that do nothing: their surrogate risk is centred on zero (equal search
    # sizes on both sides, no winner's-curse bias) and their importance is nothing
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0)]
                           + [hp.Float(f"n{i}", 0.0, 1.0) for i in range(5)])
    configs = space.sample(120, seed=7)
    y = [(c["x"] - 0.3) ** 2 for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    assert sub.keep[0] == "x"
    assert len(sub.fixed) >= 4  # the spread over draws may still call one not yet safe
    assert all(abs(sub.risks[f"n{i}"].mean) < sub.margin for i in range(5))
    assert all(sub.importance_all[f"n{i}"] < 0.05 for i in range(5))
    assert {sub.decisions[f"n{i}"].state for i in range(5)} <= {"fix", "not_yet_safe"}


def test_a_value_beyond_what_the_trials_ran_is_not_safe_to_fix():
    # 'junk' does nothing where the trials ran it (below 0.7: above it the training
    # diverged, and those trials are not in the history); fixing it at a declared default
    # of 1.0 is a guess of the model's, and a continued run crashed on every trial there.
    # A default at the other bound, 0.0, lies as close to the trials as they lie to each
    # other, and is safe to fix; so is a log-scale value within the widest gap
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Float("junk", 0.0, 1.0),
                            hp.Float("lr", 1e-5, 1.0, log=True)])
    rng = np.random.default_rng(0)
    configs = [{"x": float(rng.uniform()), "junk": float(rng.uniform(0.0, 0.7)),
                "lr": float(10 ** rng.uniform(-4, 0))} for _ in range(150)]
    history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    far = hp.suggest_subspace(history, defaults={"junk": 1.0, "lr": 1e-5}, seed=0)
    for name, value in (("junk", 1.0), ("lr", 1e-5)):
        d = far.decisions[name]
        assert (d.state, d.evidence) == ("not_yet_safe", OUTSIDE), (name, d.sentence)
        low, high = (min(c[name] for c in configs), max(c[name] for c in configs))
        assert d.tried == (low, high)
        assert d.tuned
        assert name not in far.fixed
        assert f"fixing it at {value:g}" in d.sentence
        assert "no trial ran it there" in d.sentence
    near = hp.suggest_subspace(history, defaults={"junk": 0.0, "lr": 1e-4}, seed=0)
    assert near.fixed == {"junk": 0.0, "lr": 1e-4}
    assert near.decisions["junk"].tried == ()


def _sgd_adam() -> tuple[hp.SearchSpace, list[dict]]:
    """opt in {sgd, adam}, momentum under sgd, and x; 120 configurations."""
    space = hp.SearchSpace(
        [hp.Categorical("opt", ["sgd", "adam"]), hp.Float("momentum", 0.0, 1.0),
         hp.Float("x", 0.0, 1.0)],
        conditions=[hp.Condition("momentum", "opt", values=["sgd"])],
    )
    return space, space.sample(120, seed=3)


def test_reported_configurations_hold_only_the_users_active_parameters():
    space, configs = _sgd_adam()
    y = [(c["x"] - 0.4) ** 2 + (0.5 if c["opt"] == "adam" else 0.1 * c["momentum"])
         for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    for risk in sub.risks.values():
        for config in (risk.best_free, risk.best_fixed):
            assert set(config) <= set(space.names)  # no shadow columns
            if config["opt"] == "adam":
                assert "momentum" not in config  # inactive: not reported
        assert not risk.per_draw.flags.writeable


def test_a_parameter_inactive_at_the_predicted_best_says_so():
    # adam is always better, so momentum (SGD only) is inactive where the model predicts
    # the best: its value to fix at is the middle of its range, and its origin says why
    space, configs = _sgd_adam()
    y = [(c["x"] - 0.4) ** 2 + (0.0 if c["opt"] == "adam" else 1.0 + c["momentum"])
         for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    assert sub.default_sources["momentum"] == "inactive"
    assert sub.defaults["momentum"] == pytest.approx(0.5)
    assert sub.default_origin("momentum").endswith("inactive where the model predicts the best")
    assert sub.default_sources["x"] == "incumbent"  # active in the best trial: its value


def test_a_gaussian_process_widens_the_cost_by_its_posterior_uncertainty():
    # few trials: the draws (a bootstrap with the hyperparameters held) can agree on a cost
    # the posterior is unsure of; the quantiles the rule uses carry that uncertainty
    from hpinsight._surrogate_risk import _mixture_quantile

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(12, seed=1)
    y = [math.sin(6 * c["x"]) + 0.3 * c["z"] for c in configs]
    result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.GP(refits=0), seed=0)
    risks = hp.surrogate_tuning_risk(result, {"x": 0.95, "z": 0.5}, seed=0)
    for risk in risks.values():
        assert risk.posterior_sd > 0
        assert risk.std == pytest.approx(math.sqrt(risk.per_draw.var() + risk.posterior_sd**2))
        assert risk.quantile(0.9) > np.quantile(risk.per_draw, 0.9)
        assert risk.quantiles[0.9] == pytest.approx(risk.quantile(0.9))
    # the mixture quantile: one value is a normal around it; many equal values the same
    assert _mixture_quantile(np.array([0.0]), 1.0, 0.9) == pytest.approx(1.2815515655, abs=1e-9)
    assert _mixture_quantile(np.full(4, 2.0), 0.5, 0.1) == pytest.approx(2.0 - 0.5 * 1.2815515655, abs=1e-9)
    assert _mixture_quantile(np.array([1.0, 3.0]), 0.0, 0.5) == pytest.approx(2.0)


def test_refits_widen_the_cost_as_they_widen_the_importances():
    # each refit's cost is the cost its own model states on the same candidates; the std
    # adds their variance (ddof=1) and the quantiles come from a mixture with that variance
    import dataclasses

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(12, seed=1)
    y = [math.sin(6 * c["x"]) + 0.3 * c["z"] for c in configs]
    history = hp.TrialHistory(space, configs, y)
    plain = hp.fanova(history, surrogate=hp.GP(refits=0), seed=0)
    wide = hp.fanova(history, surrogate=hp.GP(refits=3), seed=0)
    defaults = {"x": 0.95, "z": 0.5}
    before = hp.surrogate_tuning_risk(plain, defaults, seed=0)
    after = hp.surrogate_tuning_risk(wide, defaults, seed=0)
    alone = [hp.surrogate_tuning_risk(dataclasses.replace(wide, model=m), defaults, seed=0)
             for m in wide.model.refits]
    for name in defaults:
        a, b = before[name], after[name]
        assert a.per_refit.size == 0
        np.testing.assert_array_equal(b.per_draw, a.per_draw)  # the model is the same
        # (alone, a refit searches from its own optimum, not the model's: to the search's
        # resolution)
        np.testing.assert_allclose(b.per_refit, [r[name].per_draw[0] for r in alone], rtol=2e-3)
        assert b.std == pytest.approx(math.sqrt(a.std**2 + np.var(b.per_refit, ddof=1)))
        assert b.to_dict()["per_refit"] == pytest.approx(list(b.per_refit))
    spread = after["x"].per_refit.std()
    assert spread > 0.001  # 12 trials: the hyperparameters are not pinned down
    # ...but every refit kept still sees x: fixing it at 0.95 costs sin(5.7) + 1 = 0.45
    # (a refit on 6 of the 12 trials that lost x stated 0.0002 before it was left out)
    assert len(wide.model.refits) >= 2
    np.testing.assert_allclose(after["x"].per_refit, math.sin(5.7) + 1, atol=0.05)
    assert after["x"].std > before["x"].std
    assert after["x"].quantiles[0.9] == pytest.approx(after["x"].quantile(0.9))


def test_the_margin_of_a_study_whose_best_trials_tie_is_a_fraction_of_the_next_step():
    # an objective of a few levels (a count of errors): the best 10 % tie, the margin was
    # 0, and no parameter could ever be fixed however many trials ran
    from hpinsight._subspace import near_best_spread

    assert near_best_spread(np.array([3.0, 0.0, 0.0, 0.0, 1.0, 2.0])) == 1.0
    assert near_best_spread(np.array([0.0, 0.5, 0.7, 0.9, 3.0])) == 0.7  # no tie: as before
    assert near_best_spread(np.full(5, 2.0)) == 0.0  # one value: nothing to gain
    space = hp.SearchSpace([hp.Int("x", 0, 20), hp.Float("unused", 0, 1)])
    configs = space.sample(60, seed=0)
    y = [float(abs(c["x"] - 10) // 4) for c in configs]
    assert sorted(y)[:7] == [0.0] * 7
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    assert sub.margin == pytest.approx(0.05 * 1.0)


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_main_effect_spans_hold_each_numerical_parameters_known_optimum(direction):
    # optima x = 0.3, b = 0.5, k = 7 (an integer); a categorical has no span. Maximizing
    # the negated objective finds the same places: the spans follow the direction
    from hpinsight._subspace import main_effect_spans

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("b", 0, 1), hp.Int("k", 0, 20),
                            hp.Categorical("c", ["u", "v"])])
    configs = space.sample(120, seed=0)
    y = np.array([(c["x"] - 0.3) ** 2 + 0.5 * (c["b"] - 0.5) ** 2 + 0.01 * (c["k"] - 7) ** 2
                  + 0.1 * (c["c"] == "v") for c in configs])
    if direction == "maximize":
        y = -y
    result = hp.fanova(hp.TrialHistory(space, configs, y, direction=direction), seed=0)
    spans = main_effect_spans(result, ["x", "b", "k", "c"])
    assert sorted(spans) == ["b", "k", "x"]
    for name, best in (("x", 0.3), ("b", 0.5), ("k", 7)):
        low, at, high = spans[name]
        assert low < best < high
        assert low < at < high
    # two grid steps wide (100 points on [0, 1]; integers on 0..20), the best in between
    assert spans["x"].high - spans["x"].low == pytest.approx(2 / 99)
    assert spans["x"].best == pytest.approx((spans["x"].low + spans["x"].high) / 2)
    assert spans["k"] == (6.0, 7.0, 8.0)


def test_a_main_effect_best_at_the_edge_spans_the_edge_and_its_neighbour():
    from hpinsight._subspace import main_effect_spans

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("n", 0, 1)])
    configs = space.sample(80, seed=1)
    result = hp.fanova(hp.TrialHistory(space, configs, [c["x"] for c in configs]), seed=0)
    assert main_effect_spans(result, ["x"]) == {"x": (0.0, 0.0, pytest.approx(1 / 99))}


def test_the_cost_of_fixing_scales_with_the_objective() -> None:
    # its quantiles were found to an absolute 1e-12: on an objective on a 1e-9 scale that
    # was more than the margin, and a parameter's 90 % quantile moved from 0.53 to 5.67
    # times the margin
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Float("n", 0, 1)])
    configs = space.sample(80, seed=0)
    y = np.array([(c["x"] - 0.3) ** 2 + 0.05 * c["z"] for c in configs])
    y = y + np.random.default_rng(0).normal(0.0, 0.01, y.size)
    quantiles = []
    for scale in (1.0, 1e-9):
        result = hp.fanova(hp.TrialHistory(space, configs, scale * y), seed=0)
        risks = hp.surrogate_tuning_risk(result, {"x": 0.5, "z": 0.5, "n": 0.5}, seed=0)
        quantiles.append({name: risks[name].quantiles[0.9] / scale for name in ("x", "z", "n")})
    for name, q in quantiles[0].items():
        assert quantiles[1][name] == pytest.approx(q, rel=1e-6, abs=1e-9 * abs(y).max())


def test_the_cost_of_fixing_is_measured_from_the_optimum_not_from_the_best_random_candidate():
    # five additive effects, 100 random trials: no random candidate is near its best in
    # every parameter at once, and the free optimum found among them lay at e = 0.2, so
    # fixing e there "cost" -0.002 (true 0.02, three times the margin) and fixing a near
    # its optimum "gained" 0.017. Each cost is now the true one, and none is negative
    space = hp.SearchSpace([
        hp.Float("a", 0, 1), hp.Float("b", 0, 2, step=0.25), hp.Int("c", 1, 1024, log=True),
        hp.Categorical("d", [0.1, 0.2, 1e-3]), hp.Float("e", 0, 3)])
    configs = space.sample(100, seed=0)

    def f(c):
        return ((c["a"] - 0.3) ** 2 + 0.05 * c["b"] + 0.01 * math.log(c["c"]) + c["d"]
                + 0.1 * c["e"])

    truth = {"a": lambda v: (v - 0.3) ** 2, "b": lambda v: 0.05 * v,
             "c": lambda v: 0.01 * math.log(v), "d": lambda v: v - 1e-3, "e": lambda v: 0.1 * v}
    result = hp.fanova(hp.TrialHistory(space, configs, [f(c) for c in configs]), seed=0)
    at = {"a": 0.33, "b": 0.5, "c": 54, "d": 1e-3, "e": 0.2}
    risks = hp.surrogate_tuning_risk(result, at, configs=configs, seed=0)
    for name, risk in risks.items():
        assert risk.mean == pytest.approx(truth[name](at[name]), abs=2e-3), name
        assert (risk.per_draw >= 0).all(), name
        assert (risk.per_refit >= 0).all(), name
    assert risks["e"].best_free["e"] < 0.05  # the free optimum is found where it is
