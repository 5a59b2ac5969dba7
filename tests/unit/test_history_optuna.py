"""TrialHistory: built by hand, and read from Optuna studies (states, conditionals, objectives)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.exceptions import ChangedDistributionWarning, InvalidDataError

optuna = pytest.importorskip("optuna")
D = optuna.distributions
optuna.logging.set_verbosity(optuna.logging.WARNING)


def _trial(params: dict[str, Any], dists: dict[str, Any], value: Any = None, **kw: Any) -> Any:
    return optuna.trial.create_trial(params=params, distributions=dists, value=value, **kw)


# --------------------------------------------------------------------------------------
# TrialHistory by hand
def test_history_is_frozen_and_copies_its_inputs() -> None:
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    configs = [{"x": 0.2}, {"x": 0.9}]
    y = np.array([3.0, 1.0])
    h = hp.TrialHistory(space, configs, y, direction="minimize")
    configs[0]["x"] = 0.5
    y[0] = 100.0
    assert h.configs[0]["x"] == 0.2
    assert h.y[0] == 3.0
    assert not h.y.flags.writeable
    with pytest.raises(TypeError):
        h.configs[0]["x"] = 1.0  # type: ignore[index]
    assert h.best() == (1, {"x": 0.9}, 1.0)
    assert hp.TrialHistory(space, configs, y, direction="maximize").best()[0] == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"y": [1.0, math.nan]}, ValueError, "finite values only"),
        ({"y": [1.0]}, InvalidDataError, "must match one to one"),
        ({"trial_ids": [1]}, ValueError, "one entry per configuration"),
        ({"direction": "up"}, ValueError, "'direction'"),
        ({"space": {"x": (0, 1)}}, TypeError, "SearchSpace"),
    ],
    ids=["nan", "length", "ids", "direction", "space"],
)
def test_history_rejects_bad_input(kwargs: dict[str, Any], error: type, match: str) -> None:
    args: dict[str, Any] = {
        "space": hp.SearchSpace([hp.Float("x", 0, 1)]),
        "configs": [{"x": 0.1}, {"x": 0.2}],
        "y": [1.0, 2.0],
    }
    args.update(kwargs)
    with pytest.raises(error, match=match):
        hp.TrialHistory(**args)


def test_fanova_takes_a_history_alone() -> None:
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(80, seed=1)
    y = [c["x"] for c in configs]
    h = hp.TrialHistory(space, configs, y, excluded={"PRUNED": 4})
    r = hp.fanova(h, seed=0)
    assert r.n_excluded == 4
    assert r.ranking()[0].params == ("x",)
    with pytest.raises(TypeError, match="must be an hpinsight TrialHistory"):
        hp.fanova(configs)


# --------------------------------------------------------------------------------------
# from Optuna
def test_states_are_counted_and_define_by_run_params_are_inactive() -> None:
    fx = D.FloatDistribution(0.0, 1.0)
    fc = D.CategoricalDistribution(["a", "b"])
    fz = D.IntDistribution(1, 8, log=True)
    State = optuna.trial.TrialState
    study = optuna.create_study()
    study.add_trials(
        [
            _trial({"x": 0.1, "c": "a", "z": 2}, {"x": fx, "c": fc, "z": fz}, 1.0),
            _trial({"x": 0.2, "c": "b"}, {"x": fx, "c": fc}, 2.0),
            _trial({"x": 0.3, "c": "a", "z": 4}, {"x": fx, "c": fc, "z": fz}, 3.0),
            _trial({"x": 0.4, "c": "b"}, {"x": fx, "c": fc}, state=State.PRUNED),
            _trial({"x": 0.5, "c": "b"}, {"x": fx, "c": fc}, state=State.FAIL),
            _trial({"x": 0.6, "c": "b"}, {"x": fx, "c": fc}, float("inf")),
        ]
    )
    study.ask()  # a RUNNING trial
    h = hp.adapters.from_optuna(study)
    assert h.space.names == ("x", "c", "z")
    assert isinstance(h.space["z"], hp.Int)
    assert h.space["z"].log
    assert h.trial_ids == (0, 1, 2)
    assert dict(h.excluded) == {"PRUNED": 1, "FAIL": 1, "RUNNING": 1, "non-finite value": 1}
    assert h.n_excluded == 4
    assert "4 trial(s) excluded" in h.excluded_summary()
    X = h.space.encode(h.configs)
    assert np.isnan(X[:, 2]).tolist() == [False, True, False]
    np.testing.assert_array_equal(h.y, [1.0, 2.0, 3.0])


def test_changed_distributions_are_merged_with_one_warning() -> None:
    study = optuna.create_study()

    def objective(t: Any) -> float:
        x = t.suggest_float("x", 0.0, 1.0 + t.number)  # widens every trial
        k = t.suggest_int("k", 0, 4 + 2 * (t.number % 2), step=2)
        return x + k  # (Optuna itself refuses categoricals whose choices change)

    study.optimize(objective, n_trials=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = hp.adapters.from_optuna(study)
    changed = [w for w in caught if issubclass(w.category, ChangedDistributionWarning)]
    assert len(changed) == 1
    assert "'x' had 6 distributions" in str(changed[0].message)
    assert h.space["x"].high == 6.0
    assert h.space["x"].low == 0.0
    assert (h.space["k"].low, h.space["k"].high, h.space["k"].step) == (0, 6, 2)
    assert h.n_trials == 6
    # the history keeps which distributions changed, in words, for the report to say so
    assert h.sampling is not None
    assert h.sampling.changed["x"] == tuple(f"float in [0, {k}]" for k in range(1, 7))
    assert h.sampling.changed["k"] == ("int in [0, 4], step 2", "int in [0, 6], step 2")
    assert h.sampling.to_dict()["changed"]["k"] == ["int in [0, 4], step 2",
                                                  "int in [0, 6], step 2"]
    page = hp.report(h, top=1, subspace=False).html()
    assert "The distribution of these parameters changed during the study" in page
    assert "<li>k: int in [0, 4], step 2; int in [0, 6], step 2</li>" in page


@pytest.mark.parametrize(
    ("dists", "expected"),
    [
        ([D.IntDistribution(0, 4, step=2), D.IntDistribution(1, 5, step=2)], D.IntDistribution(0, 5)),
        ([D.FloatDistribution(1e-3, 1, log=True), D.FloatDistribution(1e-4, 0.5, log=True)],
         D.FloatDistribution(1e-4, 1, log=True)),
        ([D.FloatDistribution(1e-3, 1, log=True), D.FloatDistribution(0.0, 0.5)],
         D.FloatDistribution(0.0, 1)),
        ([D.IntDistribution(0, 4), D.FloatDistribution(0.5, 2.5)], D.FloatDistribution(0.0, 4.0)),
        ([D.FloatDistribution(0, 1, step=0.25), D.FloatDistribution(0, 2, step=0.25)],
         D.FloatDistribution(0, 2, step=0.25)),
        ([D.CategoricalDistribution(["a", "b"]), D.CategoricalDistribution(["c", "a"])],
         D.CategoricalDistribution(["a", "b", "c"])),
        # 0.3 / 0.1 is 2.9999999999999996: the grids were taken for two, and the step lost
        ([D.FloatDistribution(0, 1, step=0.1), D.FloatDistribution(0.3, 1.5, step=0.1)],
         D.FloatDistribution(0, 1.5, step=0.1)),
        # True == 1: merged by ==, (0, 1) and (False, True) gave (0, 1)
        ([D.CategoricalDistribution([0, 1]), D.CategoricalDistribution([False, True])],
         D.CategoricalDistribution([0, 1, False, True])),
    ],
    ids=["int-misaligned-steps", "log", "log-and-linear", "int-and-float", "float-steps", "cat",
         "float-steps-inexact", "cat-bool-and-int"],
)
def test_merge_distributions(dists: list[Any], expected: Any) -> None:
    from hpinsight.adapters._optuna import merge_distributions

    merged = merge_distributions(optuna, "p", dists)
    assert merged == expected
    assert repr(merged) == repr(expected)  # (Optuna finds (0, 1) equal to (False, True))


def test_choices_that_optuna_finds_equal_are_two_distributions_of_a_study() -> None:
    study = optuna.create_study()
    study.add_trial(_trial({"bias": 1}, {"bias": D.CategoricalDistribution([0, 1])}, 1.0))
    for i in range(6):
        study.add_trial(_trial({"bias": bool(i % 2)},
                               {"bias": D.CategoricalDistribution([False, True])}, float(i)))
    with pytest.warns(ChangedDistributionWarning):
        h = hp.adapters.from_optuna(study)
    assert h.space["bias"].choices == (0, 1, False, True)
    assert h.encoded()[:3, 0].tolist() == [1.0, 2.0, 3.0]


def test_a_target_that_gives_none_leaves_the_trial_out_and_counts_it() -> None:
    # a user attribute some trials did not log: float(None) raised a bare TypeError
    study = optuna.create_study()
    for i in range(8):
        study.add_trial(_trial({"x": i / 8}, {"x": D.FloatDistribution(0, 1)}, float(i),
                               user_attrs={"acc": i / 10} if i % 2 else {}))
    h = hp.adapters.from_optuna(study, target=lambda t: t.user_attrs.get("acc"))
    assert h.trial_ids == (1, 3, 5, 7)
    assert h.excluded == {"no value (target gave None)": 4}
    with pytest.raises(InvalidDataError, match=r"The value of trial 0 is 'n/a', not a number"):
        hp.adapters.from_optuna(study, target=lambda t: t.user_attrs.get("acc", "n/a"))


def test_a_parameter_only_in_trials_left_out_is_not_analysed_and_said_so() -> None:
    # a branch that always diverged: momentum only in trials of value inf, and the history
    # refused the space ("add their column"), also through Optuna's importance functions
    study = optuna.create_study()
    for i in range(12):
        sgd = i % 3 == 0
        params = {"x": i / 12, "opt": "sgd" if sgd else "adam"} | ({"m": 0.5} if sgd else {})
        dists = {"x": D.FloatDistribution(0, 1), "opt": D.CategoricalDistribution(["sgd", "adam"])}
        dists |= {"m": D.FloatDistribution(0, 1)} if sgd else {}
        study.add_trial(_trial(params, dists, math.inf if sgd else i / 12))
    with pytest.warns(hp.exceptions.ExcludedTrialsWarning,
                      match=r"\['m'\] appear only in trials that are left out \(non-finite "
                            r"value: 4\), so they are not analysed"):
        h = hp.adapters.from_optuna(study)
    assert h.space.names == ("x", "opt")
    with pytest.raises(InvalidDataError, match=r"leave them out of params"):
        hp.adapters.from_optuna(study, params=["x", "m"])


def test_categorical_and_numeric_cannot_merge() -> None:
    from hpinsight.adapters._optuna import merge_distributions

    with pytest.raises(InvalidDataError, match="new name"):
        merge_distributions(
            optuna, "p", [D.CategoricalDistribution(["a"]), D.FloatDistribution(0, 1)]
        )


def _two_objective_study() -> Any:
    study = optuna.create_study(directions=["minimize", "maximize"])
    study.optimize(
        lambda t: (t.suggest_float("x", 0, 1), 2 * t.suggest_float("y", 0, 1)), n_trials=8
    )
    return study


def test_a_multi_objective_study_is_read_for_its_front_unless_told_otherwise() -> None:
    study = _two_objective_study()
    front = hp.adapters.from_optuna(study)
    assert front.direction == "minimize"
    assert front.objective_name == "share of trials dominating it"
    # x is minimized and y maximized (the objective is 2y): brute force over the trials
    values = [(t.values[0], -t.values[1]) for t in study.trials]
    expected = [sum(all(o <= m for o, m in zip(other, mine, strict=True)) and other != mine
                    for other in values) / len(values) for mine in values]
    np.testing.assert_allclose(front.y, expected)
    assert min(front.y) == 0.0
    h1 = hp.adapters.from_optuna(study, objective=1)
    assert h1.direction == "maximize"
    assert h1.objective_name == "values_1"
    np.testing.assert_allclose(h1.y, [t.values[1] for t in study.trials])
    ht = hp.adapters.from_optuna(study, target=lambda t: t.values[0] * 10)
    assert ht.direction == "minimize"
    assert ht.objective_name == "target"
    np.testing.assert_allclose(ht.y, [10 * t.values[0] for t in study.trials])
    with pytest.raises(ValueError, match=r"index in \[0, 1\]"):
        hp.adapters.from_optuna(study, objective=2)


def test_objectives_go_by_the_study_s_metric_names() -> None:
    study = _two_objective_study()
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        study.set_metric_names(["error", "accuracy"])
    h = hp.adapters.from_optuna(study, objective="accuracy")
    assert h.objective_name == "accuracy"
    assert h.direction == "maximize"
    np.testing.assert_array_equal(h.y, hp.adapters.from_optuna(study, objective="values_1").y)
    with pytest.raises(ValueError, match=r"\('error', 'accuracy', 'front'\)"):
        hp.adapters.from_optuna(study, objective="loss")


def test_a_trial_with_a_non_finite_objective_is_left_out_of_the_front() -> None:
    study = _two_objective_study()
    study.add_trial(optuna.create_trial(
        values=[float("inf"), 1.0], params={"x": 0.5, "y": 0.5},
        distributions={"x": D.FloatDistribution(0, 1), "y": D.FloatDistribution(0, 1)}))
    front = hp.adapters.from_optuna(study)
    assert front.n_trials == 8
    assert front.excluded == {"non-finite value": 1}
    # the other trials' shares are those of the study without it
    np.testing.assert_array_equal(front.y, hp.adapters.from_optuna(_same_trials(study)).y)


def _same_trials(study: Any) -> Any:
    """A new study holding the finite trials of ``study``."""
    copy = optuna.create_study(directions=study.directions)
    copy.add_trials([t for t in study.trials if all(np.isfinite(t.values))])
    return copy


def test_a_target_follows_the_direction_of_what_it_reads() -> None:
    study = _two_objective_study()
    # what plot_param_importances passes per objective: each keeps its objective's direction
    assert hp.adapters.from_optuna(study, target=lambda t: t.values[1]).direction == "maximize"
    assert hp.adapters.from_optuna(study, target=lambda t: t.values[0]).direction == "minimize"
    up = optuna.create_study(direction="maximize")
    up.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=5)
    # a single-objective study: its direction, for any target
    seconds = hp.adapters.from_optuna(up, target=lambda t: t.params["x"] ** 2)
    assert seconds.direction == "maximize"
    assert hp.adapters.from_optuna(up, target=lambda t: t.params["x"] ** 2,
                                       direction="minimize").direction == "minimize"


@pytest.mark.parametrize("surrogate", [hp.Forest(n_trees=16), hp.GP()], ids=["forest", "gp"])
def test_maximize_direction_is_kept_and_capping_keeps_the_best(surrogate) -> None:
    """A maximize study and its negated minimize twin give the same capped importances."""
    sampler_seed = 3

    def f(t: Any) -> float:
        x, z = t.suggest_float("x", 0, 1), t.suggest_float("z", 0, 1)
        return (x - 0.8) ** 2 + 0.3 * (x < 0.3) * z  # z matters only where x is bad

    up = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(sampler_seed))
    up.optimize(lambda t: -f(t), n_trials=120)
    down = optuna.create_study(sampler=optuna.samplers.RandomSampler(sampler_seed))
    down.optimize(f, n_trials=120)
    hu, hd = hp.adapters.from_optuna(up), hp.adapters.from_optuna(down)
    assert hu.direction == "maximize"
    assert hu.best()[0] == hd.best()[0]
    ru = hp.fanova(hu, surrogate=surrogate, seed=0, cap_quantile=0.25)
    rd = hp.fanova(hd, surrogate=surrogate, seed=0, cap_quantile=0.25)
    assert ru.cap_value == pytest.approx(-rd.cap_value)
    np.testing.assert_allclose(ru.fractions, rd.fractions, atol=1e-12)
    # capped at the best quarter, the x<0.3 region is flat, so z loses its share
    full = hp.fanova(hu, surrogate=surrogate, seed=0)
    assert ru.importance("z").mean < full.importance("z").mean


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        (["nope"], ValueError, r"\['nope'\]"),
        ("x", TypeError, "list of parameter names"),
        ([1], TypeError, "as strings"),
    ],
    ids=["unknown", "string", "not-str"],
)
def test_params_are_checked(params: Any, error: type, match: str) -> None:
    study = optuna.create_study()
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    with pytest.raises(error, match=match):
        hp.adapters.from_optuna(study, params=params)


def test_params_select_a_subspace() -> None:
    study = optuna.create_study()
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=4)
    h = hp.adapters.from_optuna(study, params=["y"])
    assert h.space.names == ("y",)
    assert all(set(c) == {"y"} for c in h.configs)


def test_study_without_complete_trials_is_a_clear_error() -> None:
    study = optuna.create_study()
    study.optimize(lambda t: (_ for _ in ()).throw(optuna.TrialPruned()), n_trials=2)
    with pytest.raises(InvalidDataError, match="2 PRUNED"):
        hp.adapters.from_optuna(study)
    with pytest.raises(TypeError, match="load_study"):
        hp.adapters.from_optuna("sqlite:///x.db")


@pytest.mark.parametrize("surrogate", [hp.GP(), hp.Forest(n_trees=16)], ids=["gp", "forest"])
def test_define_by_run_conditions_reach_the_pdp_regions(surrogate) -> None:
    """A parameter suggested only under SGD gets its condition in the result's space, so
    regions never split on it where it does not exist and the best trial has a region."""
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(t: Any) -> float:
        lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
        opt = t.suggest_categorical("optimizer", ["sgd", "adam"])
        momentum = t.suggest_float("momentum", 0.0, 0.99) if opt == "sgd" else 0.9
        return (math.log10(lr) + 2) ** 2 + (0.9 - momentum) ** 2 + 0.2 * (opt == "sgd")

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=80)
    history = hp.adapters.from_optuna(study)
    assert not history.space.conditions  # Optuna knows no conditions
    result = hp.fanova(history, surrogate=surrogate, seed=0)
    (cond,) = result.space.conditions
    assert (cond.child, cond.parent) == ("momentum", "optimizer")
    tree = hp.confidence_split(hp.partial_dependence(result, "lr", n_samples=200, seed=0),
                               max_splits=4)
    on_momentum = [leaf for leaf in tree.leaves()
                   if any(rule.startswith("momentum") for rule in leaf.conditions)]
    assert on_momentum  # the split this test is about happens (momentum matters under SGD)
    for leaf in on_momentum:  # and only inside the SGD side
        assert "optimizer in {'sgd'}" in leaf.conditions
    adam = next(t.params for t in study.trials if t.params["optimizer"] == "adam")
    assert tree.leaf_for(adam) is not None  # no momentum needed
    assert tree.leaf_for(study.best_params) is not None


def test_objectives_that_share_a_metric_name_stay_apart() -> None:
    # keyed by the bare name, two objectives called "loss" were one: the report lost the
    # first, and its parameter was called safe to fix
    study = _two_objective_study()
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        study.set_metric_names(["loss", "loss"])
    from hpinsight.adapters._doors import as_objectives

    histories = as_objectives(study, "report")
    assert histories is not None
    assert list(histories) == ["loss (values_0)", "loss (values_1)"]
    np.testing.assert_array_equal(histories["loss (values_0)"].y, [t.values[0] for t in study.trials])
    np.testing.assert_array_equal(histories["loss (values_1)"].y, [t.values[1] for t in study.trials])
    assert hp.adapters.from_optuna(study, objective="loss (values_1)").objective_name == "loss (values_1)"
    with pytest.raises(ValueError, match=r"'loss \(values_0\)', 'loss \(values_1\)', 'front'"):
        hp.adapters.from_optuna(study, objective="loss")


def test_a_metric_named_like_the_front_or_another_objective_is_told_apart() -> None:
    study = _two_objective_study()
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        study.set_metric_names(["front", "values_0"])
    from hpinsight.adapters._doors import as_objectives

    histories = as_objectives(study, "report")
    assert histories is not None
    assert list(histories) == ["front (values_0)", "values_0 (values_1)"]
    # "values_1" is the second objective, whatever the first is called
    np.testing.assert_array_equal(hp.adapters.from_optuna(study, objective="values_1").y,
                                  histories["values_0 (values_1)"].y)


def test_an_enqueued_value_outside_its_range_is_left_out_counted_and_named():
    # Optuna runs it with a warning only; the history took it, and every analysis of the
    # study then failed ("outside [-5.0, 5.0] ... Widen the search space or drop those
    # trials", neither of which a define-by-run study can do)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.enqueue_trial({"x": 10.0})

    def objective(t: optuna.Trial) -> float:
        return t.suggest_float("x", -5, 5) ** 2 + t.suggest_float("y", 0, 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Optuna's own, for the enqueued value
        study.optimize(objective, n_trials=30)
    with pytest.warns(hp.exceptions.ExcludedTrialsWarning, match=r"trial 0 \(x=10\.0, not a value of Float"):
        history = hp.adapters.from_optuna(study)
    assert history.n_trials == 29
    assert 0 not in history.trial_ids
    assert dict(history.excluded) == {"value outside the search space": 1}
    assert hp.fanova(history, seed=0).ranking()[0].params == ("x",)


@pytest.mark.parametrize(("suggest", "value"), [
    (lambda t: t.suggest_int("n", 0, 10, step=2), 3),
    (lambda t: t.suggest_float("n", 0, 1, step=0.1), 0.35),
])
def test_an_enqueued_value_off_the_step_grid_is_left_out_too(suggest, value):
    # inside the range but off the grid: kept, and every analysis failed ("must be on the
    # grid 0 + k*2. Got 3")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.enqueue_trial({"n": value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        study.optimize(lambda t: suggest(t) + t.suggest_float("y", 0, 1), n_trials=20)
    with pytest.warns(hp.exceptions.ExcludedTrialsWarning, match=rf"trial 0 \(n={value}, not a value"):
        history = hp.adapters.from_optuna(study)
    assert dict(history.excluded) == {"value outside the search space": 1}
    hp.fanova(history, seed=0)  # analysed


def test_a_trial_left_out_for_its_value_does_not_shape_the_pareto_front():
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.enqueue_trial({"x": -10.0})  # would dominate every other trial

    def objective(t: optuna.Trial) -> tuple[float, float]:
        x = t.suggest_float("x", 0, 1)
        return x, 1 - x + t.suggest_float("y", 0, 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        study.optimize(objective, n_trials=20)
    with pytest.warns(hp.exceptions.ExcludedTrialsWarning):
        front = hp.adapters.from_optuna(study, objective="front")
    kept = [t for t in study.trials if t.number != 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        alone = optuna.create_study(directions=["minimize", "minimize"])
        alone.add_trials(kept)
    expected = hp.adapters.from_optuna(alone, objective="front")
    np.testing.assert_array_equal(front.y, expected.y)


def test_an_exploring_trial_is_said_to_move_only_what_it_moved():
    # an enqueued trial with an exploring number ran 'junk' at its held value, and a
    # categorical's spread value can land on its held choice: neither moved it, yet both
    # were recorded as having moved it, and a gain made by a free parameter released it
    from hpinsight.integrations.optuna import ShrinkingSampler, restrict

    def objective(t):
        t.suggest_categorical("k", ["p", "q"])
        return t.suggest_float("x", 0, 1) + 0 * t.suggest_float("junk", 0, 1)

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=20)
    restrict(study, {"junk": 0.5, "k": "p"}, why="by hand")
    study.optimize(objective, n_trials=9)  # trials 20..28
    study.enqueue_trial({"x": 0.1, "junk": 0.5, "k": "p"})
    study.optimize(objective, n_trials=60)  # trial 29 (enqueued) and 39, 49, ... explore
    explored = hp.adapters.from_optuna(study).sampling.explored
    assert 29 not in explored
    for number in (39, 49, 59, 69, 79):
        params = study.trials[number].params
        moved = tuple(n for n, held in (("junk", 0.5), ("k", "p")) if params[n] != held)
        assert set(explored.get(number, ())) == set(moved)
    # the categorical's spread value landed on its held choice in some of them
    assert any(study.trials[n].params["k"] == "p" for n in (39, 49, 59, 69, 79))


def test_a_fixed_parameter_the_latest_trials_ran_elsewhere_is_not_called_fixed():
    # the objective's range of w moved past its fixed value at trial 80, so the sampler
    # let w vary; every surface went on saying "Fixed at 0.25 since trial 40"
    from hpinsight._decisions import decide
    from hpinsight.integrations.optuna import ShrinkingSampler, restrict

    def objective(t):
        low = 0.0 if t.number < 80 else 0.5
        return (t.suggest_float("x", 0, 1) - 0.3) ** 2 + 0 * t.suggest_float("w", low, low + 1)

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=40)
    restrict(study, {"w": 0.25}, why="by hand", after_trial=39)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChangedDistributionWarning)
        study.optimize(objective, n_trials=60)
        history = hp.adapters.from_optuna(study)
    assert len({t.params["w"] for t in study.trials[80:]}) == 20
    assert history.sampling.unheld == ("w",)
    assert history.sampling.n_held["w"] == 36  # trials 40..79 held it, but the 4 exploring
    d = decide(hp.fanova(history, seed=0), sampling=history.sampling, margin=0.01)["w"]
    assert d.state not in ("fixed", "release")
    assert d.since_trial is None


def test_a_held_parameter_is_still_held_when_the_latest_trial_explored_it():
    # an exploring trial runs the held parameters elsewhere on purpose: when it is the
    # latest, the sampler still follows the restriction, and 'junk' must not be read as
    # unheld (and judged free) at the next decision
    from hpinsight.integrations.optuna import ShrinkingSampler, restrict

    def objective(t):
        return t.suggest_float("x", 0, 1) + 0 * t.suggest_float("junk", 0, 1)

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=20)
    restrict(study, {"junk": 0.5}, why="by hand", after_trial=19)
    study.optimize(objective, n_trials=20)  # trials 20..39; 29 and 39 explore
    history = hp.adapters.from_optuna(study)
    assert 39 in history.sampling.explored  # the latest trial moved junk
    assert study.trials[39].params["junk"] != 0.5
    assert history.sampling.unheld == ()


def test_an_enqueued_trial_off_the_held_value_does_not_release_it():
    # a trial the user enqueued at another value of a fixed parameter was read as the
    # sampler no longer holding it: the next decision released it for good, and the
    # report said both "fix at 0.9" and "y fixed at 0.5 by the restriction in force"
    from hpinsight._decisions import decide
    from hpinsight.integrations.optuna import ShrinkingSampler, read_restriction, restrict

    def objective(t):
        return (t.suggest_float("x", 0, 1) - 0.2) ** 2 + 0 * t.suggest_float("y", 0, 1)

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=60)
    restrict(study, {"y": 0.5}, why="by hand", after_trial=59)
    study.optimize(objective, n_trials=30)
    study.enqueue_trial({"x": 0.2, "y": 0.9})  # the best trial of the study, off y's value
    study.optimize(objective, n_trials=1)
    assert study.best_trial.params["y"] == 0.9
    assert study.best_trial.number == 90
    history = hp.adapters.from_optuna(study)
    assert history.sampling.unheld == ()
    d = decide(hp.fanova(history, seed=0), sampling=history.sampling, margin=0.01)["y"]
    assert d.state == "fixed"
    assert d.since_trial == 60
    assert read_restriction(study) == {"y": 0.5}


def test_choices_that_compare_equal_are_one_choice() -> None:
    # Optuna keeps 1 and 1.0 apart; the space refused "the choice 1.0 twice", and
    # optuna's get_param_importances with our evaluator raised
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_categorical("s", [1, 1.0, 2]),
                   n_trials=20)
    h = hp.adapters.from_optuna(study)
    assert h.space["s"].choices == (1, 2)
    assert sorted(set(h.encoded()[:, 1])) == [0.0, 1.0]


def test_complete_trials_without_parameters_are_counted_in_the_refusal() -> None:
    # "5 trial(s) in all: none" for five COMPLETE trials of an objective suggesting nothing
    study = optuna.create_study()
    study.optimize(lambda t: 1.0, n_trials=5)
    with pytest.raises(InvalidDataError, match=r"5 trial\(s\) in all: 5 COMPLETE without "
                                               r"parameters\)"):
        hp.adapters.from_optuna(study)


def test_the_call_that_loads_a_study_again_hides_a_password() -> None:
    # the report's "Reproduce in Python" loads the study from its storage; a password in
    # the URL is not written into a page that is meant to be shared
    from types import SimpleNamespace

    from hpinsight.adapters._optuna import _study_expression

    stored = SimpleNamespace(study_name="s", _storage=SimpleNamespace(
        _backend=SimpleNamespace(url="postgresql://me:secret@db.example/hpo")))
    written = _study_expression(stored)
    assert "secret" not in written
    assert written == ("optuna.load_study(study_name='s', "
                       "storage='postgresql://me:***@db.example/hpo')")
    assert _study_expression(SimpleNamespace(study_name="m", _storage=object())) == "study"


def test_a_report_of_several_objectives_loads_its_study_from_its_storage(tmp_path) -> None:
    # its "Reproduce in Python" read `optuna.load_study(study_name=..., storage=...)`
    import html
    import re

    import hpinsight as hp

    url = f"sqlite:///{tmp_path / 'two.db'}"
    study = optuna.create_study(study_name="two :)", storage=url,  # a parenthesis alone
                                directions=["minimize"] * 2,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
                   n_trials=20)
    page = hp.report(study, seed=0, top=1).html()
    snippet = html.unescape(re.search(r"Reproduce in Python</h2><pre>(.*?)</pre>", page,
                                      re.S).group(1))
    assert f"study = optuna.load_study(study_name='two :)', storage={url!r})\n" in snippet
