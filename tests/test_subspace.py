"""Surrogate tuning risk and subspace suggestions: known separable objectives, the
"important but one setting is always good" case, risk-driven keeping, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hpinsight as hp


def _separable(n=400, seed=0):
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Float("z", 0.0, 1.0)])
    configs = space.sample(n, seed=seed)
    y = [(c["x"] - 0.3) ** 2 + 0.5 * (c["z"] - 0.8) ** 2 for c in configs]
    return space, configs, y


def test_surrogate_risk_recovers_a_separable_cost():
    space, configs, y = _separable()
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, n_trees=32)
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
    result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate="forest", seed=0, n_trees=16)
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
    mini = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, n_trees=16)
    maxi = hp.fanova(hp.TrialHistory(space, configs, [-v for v in y], direction="maximize"),
                     seed=0, n_trees=16)
    a = hp.surrogate_tuning_risk(mini, {"z": 0.2}, seed=0)["z"]
    b = hp.surrogate_tuning_risk(maxi, {"z": 0.2}, seed=0)["z"]
    assert a.mean == pytest.approx(b.mean, rel=1e-9)
    assert a.mean > 0.1


def test_capping_discounts_a_parameter_with_one_always_good_setting():
    # 'solver' explains most of the variance overall, but 'good' is always best: capped
    # at the default it explains far less, fixing it at 'good' costs nothing, and only
    # importance (the conservative half of the rule) keeps it
    space = hp.SearchSpace([hp.Categorical("solver", ["bad", "good"]),
                            hp.Float("x", 0.0, 1.0), hp.Float("noise", 0.0, 1.0)])
    configs = space.sample(300, seed=0)
    y = [10.0 * (c["solver"] == "bad") + (c["x"] - 0.5) ** 2 for c in configs]
    history = hp.TrialHistory(space, configs, y)
    overall = hp.fanova(history, seed=0)
    assert overall.importance("solver").mean > 0.9
    # data-driven defaults: "auto" judges importance among the best quarter of trials
    assert hp.suggest_subspace(history, seed=0).notion == "quantile"
    sub = hp.suggest_subspace(history, good="default", seed=0)
    assert sub.notion == "default"
    assert sub.defaults["solver"] == "good"
    assert sub.default_sources["solver"] == "data"
    assert sub.importance_default["solver"] < 0.5 * sub.importance_default["x"]
    assert sub.risks["solver"].quantile(0.9) <= sub.margin  # safe to fix
    assert sub.keep[0] == "x"
    assert sub.reasons["solver"].startswith("kept (important)")
    assert list(sub.fixed) == ["noise"]
    assert sub.reasons["noise"].startswith("fixed (unimportant and safe to fix)")
    # without the overall guard and with a stricter threshold the risk decides and
    # 'solver' is fixed; with the guard (the default) its overall effect keeps it
    assert "solver" in hp.suggest_subspace(history, good="default", importance_threshold=0.3,
                                           seed=0).keep
    strict = hp.suggest_subspace(history, good="default", importance_threshold=0.3,
                                 overall=False, seed=0)
    assert strict.keep == ("x",)
    assert strict.fixed["solver"] == "good"
    quantile = hp.suggest_subspace(history, good="quantile", seed=0)
    assert quantile.notion == "quantile"
    assert math.isnan(quantile.importance_default["x"])
    assert quantile.to_dict()["importance_default"]["x"] is None


def test_a_costly_default_keeps_an_unimportant_parameter():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Float("z", 0.0, 1.0)])
    configs = space.sample(300, seed=2)
    y = [(c["x"] - 0.3) ** 2 + 0.2 * (c["z"] - 0.8) ** 2 for c in configs]
    history = hp.TrialHistory(space, configs, y)
    # importance switched off: only the risk decides
    costly = hp.suggest_subspace(history, defaults={"z": 0.0}, importance_threshold=1.0,
                                 overall=False, min_keep=0, seed=0)
    assert "z" in costly.keep
    assert costly.reasons["z"].startswith("kept (risky to fix)")
    assert costly.default_sources["z"] == "given"
    cheap = hp.suggest_subspace(history, defaults={"z": 0.8}, importance_threshold=1.0,
                                overall=False, min_keep=0, seed=0)
    assert cheap.fixed.get("z") == 0.8


def test_declared_defaults_enable_improvement_over_the_default():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0, default=0.9),
                            hp.Float("z", 0.0, 1.0, default=0.5)])
    configs = space.sample(300, seed=4)
    y = [(c["x"] - 0.3) ** 2 + 1e-5 * c["z"] for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    assert sub.notion == "default"  # declared defaults, and enough trials beat them
    assert sub.default_sources == {"x": "space", "z": "space"}
    assert sub.importance_default["x"] > 0.5
    assert sub.keep == ("x",)
    assert sub.fixed == {"z": 0.5}


def test_min_keep_and_reproducibility():
    space = hp.SearchSpace([hp.Float("a", 0.0, 1.0), hp.Float("b", 0.0, 1.0)])
    configs = space.sample(50, seed=0)
    y = np.random.default_rng(0).normal(size=50) * 1e-3 + [c["a"] * 1e-4 for c in configs]
    history = hp.TrialHistory(space, configs, y)
    one = hp.suggest_subspace(history, min_keep=1, importance_threshold=1.0, risk_margin=10.0,
                              overall=False, seed=5)
    assert len(one.keep) == 1
    assert one.reasons[one.keep[0]].startswith("kept (kept to keep at least 1)")
    again = hp.suggest_subspace(history, min_keep=1, importance_threshold=1.0,
                                risk_margin=10.0, overall=False, seed=5)
    assert again.to_dict() == one.to_dict()


def test_errors_name_the_problem():
    space, configs, y = _separable(n=9)
    with pytest.raises(hp.exceptions.InvalidDataError, match="at least 10 trials"):
        hp.suggest_subspace(hp.TrialHistory(space, configs, y))
    space, configs, y = _separable(n=40)
    history = hp.TrialHistory(space, configs, y)
    with pytest.raises(hp.exceptions.InvalidDataError, match="not in the search space"):
        hp.suggest_subspace(history, defaults={"nope": 1})
    # a step objective: the default sits on the floor, so no trial can beat it
    step = hp.TrialHistory(space, configs, [float(c["x"] > 0.5) for c in configs])
    with pytest.raises(hp.exceptions.InvalidDataError, match="beat the default"):
        hp.suggest_subspace(step, defaults={"x": 0.1, "z": 0.5}, good="default",
                            surrogate="forest")
    with pytest.raises(TypeError, match=r"TrialHistory or an optuna\.Study"):
        hp.suggest_subspace([1, 2, 3])
    result = hp.fanova(history, seed=0, n_trees=8)
    with pytest.raises(hp.exceptions.InvalidDataError, match="outside its range"):
        hp.surrogate_tuning_risk(result, {"x": 2.0})
    with pytest.raises(KeyError):
        hp.surrogate_tuning_risk(result, {"nope": 0.5})


def test_an_optuna_study_is_read_directly():
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2
                   + 0.0 * t.suggest_float("unused", 0, 1), n_trials=60)
    sub = hp.suggest_subspace(study, seed=0)
    assert sub.keep == ("x",)
    assert set(sub.fixed) == {"unused"}
    assert sub.n_trials == 60


def test_noise_parameters_cost_nothing_and_score_like_shadows():
    # five knobs that do nothing: their surrogate risk is centred on zero (equal search
    # sizes on both sides, no winner's-curse bias) and their importance is at noise level
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0)]
                           + [hp.Float(f"n{i}", 0.0, 1.0) for i in range(5)])
    configs = space.sample(120, seed=7)
    y = [(c["x"] - 0.3) ** 2 for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    assert sub.keep[0] == "x"
    assert len(sub.fixed) >= 4  # the per-tree spread may still call one risky
    assert all(abs(sub.risks[f"n{i}"].mean) < sub.margin for i in range(5))
    assert all(sub.importance_all[f"n{i}"] < 0.05 for i in range(5))
    assert sub.null_importance["all"] < 0.05
    assert math.isnan(sub.null_importance["default"])
    no_shadows = hp.suggest_subspace(hp.TrialHistory(space, configs, y), shadows=0, seed=0)
    assert no_shadows.null_importance["all"] == 0.0
    clash = hp.SearchSpace([hp.Float("__shadow0__", 0.0, 1.0), hp.Float("x", 0.0, 1.0)])
    with pytest.raises(hp.exceptions.InvalidDataError, match="reserved"):
        hp.suggest_subspace(hp.TrialHistory(clash, clash.sample(20, seed=0), list(range(20))))


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
        assert not risk.per_tree.flags.writeable
    assert "__shadow0__" not in str(sub.to_dict())


def test_a_parameter_inactive_in_every_top_trial_says_so_in_its_reason():
    # adam is always better, so momentum (SGD only) is inactive in all the best trials:
    # its value to fix at is the middle of its range, and the reason must not call that
    # "most frequent in the best trials"
    space, configs = _sgd_adam()
    y = [(c["x"] - 0.4) ** 2 + (0.0 if c["opt"] == "adam" else 1.0 + c["momentum"])
         for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    assert sub.default_sources["momentum"] == "inactive"
    assert sub.defaults["momentum"] == pytest.approx(0.5)
    assert "inactive in all of the best" in sub.reasons["momentum"]
    assert "most frequent" not in sub.reasons["momentum"]
    assert sub.default_sources["x"] == "data"


def test_a_gaussian_process_widens_the_cost_by_its_posterior_uncertainty():
    # few trials: the draws (a bootstrap with the hyperparameters held) can agree on a cost
    # the posterior is unsure of; the quantiles the rule uses carry that uncertainty
    from hpinsight._subspace import _mixture_quantile

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(12, seed=1)
    y = [math.sin(6 * c["x"]) + 0.3 * c["z"] for c in configs]
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    risks = hp.surrogate_tuning_risk(result, {"x": 0.95, "z": 0.5}, seed=0)
    for risk in risks.values():
        assert risk.posterior_sd > 0
        assert risk.std == pytest.approx(math.sqrt(risk.per_tree.var() + risk.posterior_sd**2))
        assert risk.quantile(0.9) > np.quantile(risk.per_tree, 0.9)
        assert risk.quantiles[0.9] == pytest.approx(risk.quantile(0.9))
    # the mixture quantile: one value is a normal around it; many equal values the same
    assert _mixture_quantile(np.array([0.0]), 1.0, 0.9) == pytest.approx(1.2815515655, abs=1e-9)
    assert _mixture_quantile(np.full(4, 2.0), 0.5, 0.1) == pytest.approx(2.0 - 0.5 * 1.2815515655, abs=1e-9)
    assert _mixture_quantile(np.array([1.0, 3.0]), 0.0, 0.5) == pytest.approx(2.0)
