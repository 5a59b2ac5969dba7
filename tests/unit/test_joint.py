"""Decisions over several objectives: a parameter is fixed only when it is safe to fix for
every objective, at one common value, each cost against that objective's own margin."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import hpinsight as hp
from hpinsight._decision_result import Explored, fmt_cost
from hpinsight._joint import compromise_trial, decide_jointly
from hpinsight.exceptions import InvalidArgumentTypeError, InvalidDataError


def _space() -> hp.SearchSpace:
    return hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("y", 0, 1), hp.Float("z", 0, 1)])


def _histories(n: int = 60, seed: int = 0) -> dict[str, hp.TrialHistory]:
    """x drives "loss" alone, y drives "speed" alone (maximized), z drives nothing."""
    space = _space()
    configs = space.sample(n, seed=seed)
    loss = [(c["x"] - 0.3) ** 2 for c in configs]
    speed = [-((c["y"] - 0.7) ** 2) for c in configs]
    return {"loss": hp.TrialHistory(space, configs, loss, objective_name="loss"),
            "speed": hp.TrialHistory(space, configs, speed, direction="maximize",
                                     objective_name="speed")}


@pytest.fixture(scope="module")
def joint() -> hp.results.SubspaceResult:
    return hp.suggest_subspace(_histories(), seed=0)


def test_a_parameter_that_matters_for_one_objective_is_never_fixed(joint) -> None:
    # alone, each objective would fix the parameter the other one needs
    assert joint.objectives["speed"].decisions["x"].state == "fix"
    assert joint.objectives["loss"].decisions["y"].state == "fix"
    # together, neither is fixed; each says for which objective it is kept
    assert joint.decisions["x"].tuned
    assert joint.decisions["x"].objective == "loss"
    assert joint.decisions["y"].tuned
    assert joint.decisions["y"].objective == "speed"
    assert "for loss" in joint.decisions["x"].sentence
    assert "speed: fix at" in joint.decisions["x"].sentence  # what the other alone says
    assert set(joint.keep) == {"x", "y"}
    assert set(joint.fixed) == {"z"}


def test_a_fixed_parameter_is_costed_for_every_objective_at_one_value(joint) -> None:
    z = joint.decisions["z"]
    assert z.state == "fix"
    assert {sub.decisions["z"].value for sub in joint.objectives.values()} == {z.value}
    for name, sub in joint.objectives.items():
        own = sub.decisions["z"]
        assert own.cost_upper <= sub.margin
        assert f" in {name}" in z.sentence
    allowed = " and ".join(fmt_cost(sub.margin) for sub in joint.objectives.values())
    assert z.sentence.endswith(f"(90% quantile; {allowed} allowed).")
    # each objective's margin is its own: the two objectives have different units
    margins = [sub.margin for sub in joint.objectives.values()]
    assert margins[0] != margins[1]
    assert math.isnan(joint.margin)
    assert joint.risks == {}


def test_the_common_value_is_that_of_the_compromise_trial(joint) -> None:
    histories = _histories()
    trial = compromise_trial(histories)
    config = histories["loss"].configs[histories["loss"].trial_ids.index(trial)]
    assert joint.defaults == dict(config)
    assert set(joint.default_sources.values()) == {"compromise"}
    assert "Pareto front" in joint.default_origin("z")


def test_the_compromise_trial_is_on_the_front_with_the_best_mean_rank() -> None:
    rng = np.random.default_rng(3)
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    configs = [{"x": float(v)} for v in rng.random(40)]
    a, b = rng.random(40), rng.random(40)
    histories = {"a": hp.TrialHistory(space, configs, a),
                 "b": hp.TrialHistory(space, configs, -b, direction="maximize")}
    # brute force: minimize a, maximize -b, i.e. minimize b
    on_front = [i for i in range(40)
                if not any(a[j] <= a[i] and b[j] <= b[i] and (a[j] < a[i] or b[j] < b[i])
                           for j in range(40))]
    rank_a = {i: sum(a < a[i]) for i in range(40)}
    rank_b = {i: sum(b < b[i]) for i in range(40)}
    best = min(on_front, key=lambda i: (rank_a[i] + rank_b[i], i))
    assert compromise_trial(histories) == best


def test_the_strongest_need_decides_and_a_release_wins(joint) -> None:
    loss, speed = joint.objectives["loss"].decisions, joint.objectives["speed"].decisions
    assert loss["z"].state == speed["z"].state == "fix"
    # z: "small" for one objective beats "fix" for the other
    small = replace(loss, decisions={**loss.decisions, "z": replace(loss["z"], state="small")})
    out = decide_jointly({"loss": small, "speed": speed})
    assert out["z"].state == "small"
    assert out["z"].objective == "loss"
    released = replace(speed, decisions={**speed.decisions,
                                         "z": replace(speed["z"], state="release")})
    out = decide_jointly({"loss": small, "speed": released})
    assert out["z"].state == "release"
    assert out["z"].objective == "speed"
    # safe for each, but at different values: not safe together
    moved = replace(speed, decisions={**speed.decisions, "z": replace(speed["z"], value=0.123)})
    out = decide_jointly({"loss": loss, "speed": moved})
    assert out["z"].state == "not_yet_safe"
    assert "not at one common value" in out["z"].sentence
    assert out.to_fix == {}


def test_the_front_alone_cannot_decide_what_to_fix() -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
                   n_trials=20)
    front = hp.adapters.from_optuna(study, objective="front")
    with pytest.raises(InvalidDataError, match="Pareto front"):
        hp.suggest_subspace(front, seed=0)
    # the study itself is decided for every objective
    sub = hp.suggest_subspace(study, seed=0, surrogate=hp.Forest(n_trees=8))
    assert list(sub.objectives) == ["values_0", "values_1"]


def test_bad_input_names_the_problem() -> None:
    histories = _histories(n=30)
    with pytest.raises(InvalidArgumentTypeError, match="at least two objective names"):
        hp.suggest_subspace({"loss": histories["loss"]})
    with pytest.raises(InvalidArgumentTypeError, match="map each objective"):
        hp.suggest_subspace(histories, fitted=hp.fanova(histories["loss"], seed=0))
    other = hp.TrialHistory(hp.SearchSpace([hp.Float("w", 0, 1)]), [{"w": 0.5}] * 30,
                            list(range(30)))
    with pytest.raises(InvalidDataError, match="same parameters"):
        hp.suggest_subspace({"loss": histories["loss"], "w": other})


def test_a_joint_subspace_points_to_each_objective_s_figure(joint) -> None:
    with pytest.raises(hp.exceptions.InvalidArgumentError, match=r"objectives\['loss'\]\.plot"):
        joint.plot()


def test_a_fixed_parameter_whose_effect_is_only_small_is_not_called_nothing(joint) -> None:
    # one objective fixes z because its effect there is too small to matter, not nothing:
    # the joint sentence must not call every effect "indistinguishable from nothing"
    from hpinsight._joint import _fix_sentence

    each = {label: sub.decisions["z"] for label, sub in joint.objectives.items()}
    assert "distinguishable from nothing in any" in _fix_sentence(each, joint.objectives)
    assert "or large enough to matter" not in _fix_sentence(each, joint.objectives)
    each["loss"] = replace(each["loss"], negligible=True)
    assert ("no effect is distinguishable from nothing or large enough to matter in any objective"
            in _fix_sentence(each, joint.objectives))


def test_a_fixed_parameter_shown_below_the_floor_is_not_called_nothing(joint) -> None:
    # a "negligible" effect (shown, below 0.05 % of the variance) in one objective: the
    # joint sentence must not say no effect is distinguishable from nothing, as the one
    # objective's own sentence does not
    from hpinsight._joint import _fix_sentence

    each = {label: sub.decisions["z"] for label, sub in joint.objectives.items()}
    assert "or above 0.05 % of the variance" not in _fix_sentence(each, joint.objectives)
    each["loss"] = replace(each["loss"], verdict="negligible")
    assert ("no effect is distinguishable from nothing or above 0.05 % of the variance in any "
            "objective" in _fix_sentence(each, joint.objectives))


def test_a_range_one_objective_finds_a_gain_outside_of_is_widened_for_all(joint) -> None:
    loss, speed = joint.objectives["loss"].decisions, joint.objectives["speed"].decisions
    assert decide_jointly({"loss": loss, "speed": speed}).widen == {}
    gain = Explored(59, ("z",), 0.5, 0.1, 1.0)
    out = decide_jointly({"loss": loss, "speed": replace(speed, widen={"z": gain})})
    assert out.widen == {"z": gain}


def test_the_compromise_trial_does_not_depend_on_the_order_of_tied_trials() -> None:
    # ordinal ranks by position: with a discrete objective, the compromise (whose values a
    # joint decision fixes at) was trial 3 with the trials in order and 11 in reverse
    loss = np.array([0.64, 0.27, 0.04, 0.02, 0.81, 0.91, 0.61, 0.73, 0.54, 0.94, 0.82, 0.0])
    size = np.array([2, 3, 2, 1, 3, 3, 3, 1, 1, 3, 1, 2], float)
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    configs = [{"x": i / 20} for i in range(12)]

    def compromise(order: list[int]) -> int:
        return compromise_trial({
            name: hp.TrialHistory(space, [configs[i] for i in order], y[order],
                                  trial_ids=tuple(order)) for name, y in (("loss", loss),
                                                                          ("size", size))})

    # front: 3 (0.02, 1) and 11 (0.0, 2); mean ranks with ties averaged: 2.25 and 3.5
    assert compromise(list(range(12))) == 3
    assert compromise(list(range(11, -1, -1))) == 3
