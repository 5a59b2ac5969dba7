"""ShrinkingSampler over every Optuna sampler: a restriction is followed, and the sampler
keeps its model (its relative proposals go on after the restriction)."""

from __future__ import annotations

import itertools
import math
import statistics
import warnings
from typing import Any

import optuna
import pytest

from hpinsight.exceptions import InvalidArgumentError
from hpinsight.integrations.optuna import (
    ShrinkingSampler,
    read_ranges,
    read_restriction,
    release,
    restrict,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)
LOW, HIGH, FIXED = 0.2, 0.4, 0.5


def _value(t: optuna.Trial) -> tuple[float, float, float]:
    return t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1), t.suggest_float("z", 1e-3, 1, log=True)


def single(t: optuna.Trial) -> float:
    x, y, z = _value(t)
    return (x - 0.3) ** 2 + (y - 0.6) ** 2 + math.log10(z) ** 2


def double(t: optuna.Trial) -> tuple[float, float]:
    x, y, z = _value(t)
    return (x - 0.3) ** 2 + math.log10(z) ** 2, (x - 0.7) ** 2 + (y - 0.6) ** 2


def _gp() -> optuna.samplers.BaseSampler:
    # torch is a test dependency (the "gpsampler" extra): without it this fails, not skips
    return optuna.samplers.GPSampler(seed=0, n_startup_trials=5)


# (base sampler, objective, whether it proposes relatively: its model)
SAMPLERS = {
    "random": (lambda: optuna.samplers.RandomSampler(seed=0), single, False),
    "tpe": (lambda: optuna.samplers.TPESampler(seed=0, n_startup_trials=5), single, False),
    "tpe-multivariate": (lambda: optuna.samplers.TPESampler(
        seed=0, n_startup_trials=5, multivariate=True), single, True),
    "tpe-group": (lambda: optuna.samplers.TPESampler(
        seed=0, n_startup_trials=5, multivariate=True, group=True), single, True),
    "cmaes": (lambda: optuna.samplers.CmaEsSampler(seed=0, n_startup_trials=5), single, True),
    # separable CMA-ES is not restarted in the smaller space: it keeps its whole one
    "cmaes-separable": (lambda: optuna.samplers.CmaEsSampler(
        seed=0, n_startup_trials=5, use_separable_cma=True), single, True),
    "qmc": (lambda: optuna.samplers.QMCSampler(seed=0), single, True),
    "gp": (_gp, single, True),
    "nsga2": (lambda: optuna.samplers.NSGAIISampler(seed=0, population_size=8), double, True),
}


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize("name", list(SAMPLERS))
def test_every_sampler_follows_a_restriction_and_keeps_its_model(name: str, spy_on: Any) -> None:
    make, objective, relative = SAMPLERS[name]
    base = make()
    proposals = spy_on(base).proposals
    directions = ["minimize"] * (2 if objective is double else 1)
    study = optuna.create_study(sampler=ShrinkingSampler(base), directions=directions)
    study.optimize(objective, n_trials=24)
    restrict(study, {"y": FIXED}, ranges={"x": (LOW, HIGH)}, why="sampler matrix")
    assert read_restriction(study) == {"y": FIXED}
    study.optimize(objective, n_trials=24)

    sampler = study.sampler
    later = [t for t in study.trials[24:] if not sampler.explores(t.number)]
    explored = [t for t in study.trials[24:] if sampler.explores(t.number)]
    assert [t.number for t in explored] == [29, 39]  # one in ten: the whole space
    assert all(t.params["y"] != FIXED for t in explored)
    assert [t.params["y"] for t in later] == [FIXED] * len(later)
    assert all(LOW <= t.params["x"] <= HIGH for t in later), [t.params["x"] for t in later]
    if relative:
        # the base sampler's own model still proposes every free parameter in every trial
        # (a CMA-ES handed a smaller space returned {} from then on: random search);
        # NSGA-II leaves each parameter it mutates (probability 1/2 here) to independent
        # sampling, so it proposes in most trials, not all
        # CMA-ES restarted in the smaller space proposes exactly the free parameters
        if name == "nsga2":
            assert sum(bool(proposals.get(t.number)) for t in later) >= len(later) // 2
        elif name == "cmaes":
            assert all(set(proposals.get(t.number, {})) == {"x", "z"} for t in later), proposals
        else:
            assert all("z" in proposals.get(t.number, {}) for t in later), name
    # the unrestricted parameter is still explored, not stuck at one value
    assert len({t.params["z"] for t in later}) > 1


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize("name", ["tpe-multivariate", "cmaes", "gp", "qmc"])
def test_a_narrowed_parameter_is_modelled_over_its_whole_range_but_by_cma_es_gp_and_qmc(
        name: str, spy_on: Any) -> None:
    # TPE modelled a narrowed parameter within the narrowed bounds, where its kernels
    # (their width scales with the range) trapped it at an edge its good trials lay
    # beyond (benchmarks/README.md, the narrow arm); it now models the whole range and a
    # proposal outside the range is drawn again within it. CMA-ES restarts in the space
    # of each restriction, bounds included; GPSampler optimizes its acquisition within
    # the narrowed bounds (a proposal drawn again was a random draw: its independent
    # sampler is random search), so its own proposals land in the range. QMC maps its
    # points onto the range (handed the whole one, most fell outside and were drawn again
    # at random, with a warning each)
    base = SAMPLERS[name][0]()
    spied = spy_on(base)
    spaces, proposed = spied.spaces, spied.proposals
    study = optuna.create_study(sampler=ShrinkingSampler(base))
    study.optimize(single, n_trials=12)
    restrict(study, {}, ranges={"x": (LOW, HIGH)}, why="the models' bounds")
    study.optimize(single, n_trials=6)
    later = [t for t in study.trials[12:] if not study.sampler.explores(t.number)]
    assert all(LOW <= t.params["x"] <= HIGH for t in later)
    handed = {spaces[t.number]["x"] for t in later}
    whole = optuna.distributions.FloatDistribution(0, 1)
    assert handed == ({whole} if name == "tpe-multivariate"
                      else {optuna.distributions.FloatDistribution(LOW, HIGH)})
    if name in ("gp", "qmc"):  # the sampler's own proposals, not redrawn ones
        assert all(LOW <= proposed[t.number]["x"] <= HIGH for t in later), proposed


@pytest.mark.parametrize(
    "grid",
    [
        lambda: optuna.samplers.GridSampler({"x": [0.0, 1.0]}),
        lambda: optuna.samplers.BruteForceSampler(),
    ],
    ids=["grid", "brute-force"],
)
@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_samplers_that_walk_a_grid_are_refused_at_construction(grid: Any) -> None:
    with pytest.raises(TypeError, match=r"cannot restrict a .*Shrink the grid itself"):
        ShrinkingSampler(grid())


def _explore_study() -> tuple[optuna.Study, dict[int, set[str]]]:
    """A multivariate-TPE study restricted after 10 trials (a float, a log float, an int
    and a categorical fixed), run to trial 110: ten exploring trials. Returns the study
    and, per trial, the names in the space its base sampler was handed."""
    base = optuna.samplers.TPESampler(seed=0, n_startup_trials=5, multivariate=True)
    spaces: dict[int, set[str]] = {}
    sample_relative = base.sample_relative

    def spy(study: optuna.Study, trial: Any, search_space: dict[str, Any]) -> dict[str, Any]:
        spaces[trial.number] = set(search_space)
        return sample_relative(study, trial, search_space)

    base.sample_relative = spy  # type: ignore[method-assign]

    def objective(t: optuna.Trial) -> float:
        x = t.suggest_float("x", 0, 1)
        t.suggest_float("y", 0, 10)
        t.suggest_float("z", 1e-4, 1, log=True)
        t.suggest_int("i", 0, 20)
        t.suggest_categorical("k", ["p", "q", "r"])
        return (x - 0.3) ** 2

    study = optuna.create_study(sampler=ShrinkingSampler(base))
    study.optimize(objective, n_trials=10)
    restrict(study, {"y": 5.0, "z": 0.01, "i": 7, "k": "q"}, why="explore test")
    study.optimize(objective, n_trials=100)
    return study, spaces


def test_exploring_trials_spread_the_fixed_parameters_and_leave_the_base_model_restricted() -> None:
    study, spaces = _explore_study()
    sampler = study.sampler
    explored = [t for t in study.trials[10:] if sampler.explores(t.number)]
    assert len(explored) == 10
    # the base sampler models the free parameter only, in exploring trials too (handed the
    # whole space one trial in ten, multivariate TPE fell behind the full space)
    assert all(spaces[t.number] == {"x"} for t in study.trials[15:]), spaces
    # ten exploring trials cover each range evenly: no gap wider than a fifth of it
    ys = sorted([0.0, *(t.params["y"] for t in explored), 10.0])
    assert max(b - a for a, b in itertools.pairwise(ys)) < 2.0, ys
    logs = sorted([-4.0, *(math.log10(t.params["z"]) for t in explored), 0.0])
    assert max(b - a for a, b in itertools.pairwise(logs)) < 0.8, logs  # log scale
    assert len({t.params["i"] for t in explored}) == 10
    assert {t.params["k"] for t in explored} == {"p", "q", "r"}
    rest = [t for t in study.trials[10:] if t not in explored]
    assert all((t.params["y"], t.params["z"], t.params["i"], t.params["k"]) == (5.0, 0.01, 7, "q")
               for t in rest)
    # what an exploring trial tries depends on its number alone: a second run tries the same
    again, _ = _explore_study()
    assert [t.params for t in again.trials] == [t.params for t in study.trials]


def _bowl(t: optuna.Trial) -> float:
    x, y = t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)
    z = t.suggest_float("z", 1e-3, 1, log=True)
    return (x - 0.85) ** 2 + (y - 0.2) ** 2 + (math.log10(z) + 2.5) ** 2 / 9


def _cma_study(n_before: int, spy_on: Any) -> tuple[optuna.Study, dict[int, dict[str, Any]]]:
    base = optuna.samplers.CmaEsSampler(seed=0)
    proposals = spy_on(base).proposals
    study = optuna.create_study(sampler=ShrinkingSampler(base, explore_every=None))
    study.optimize(_bowl, n_trials=n_before)
    return study, proposals


def test_cma_es_carries_on_in_the_smaller_space_from_where_it_stood(spy_on: Any) -> None:
    study, proposals = _cma_study(60, spy_on)
    before = study.best_value
    # CMA-ES has moved far from the centre of the ranges, towards x = 0.85, z = 10^-2.5
    near = [proposals[n] for n in range(50, 60)]
    assert statistics.median(p["x"] for p in near) > 0.7, near
    restrict(study, {"y": 0.2}, ranges={"z": (1e-3, 0.1)}, why="carry-over test")
    study.optimize(_bowl, n_trials=40)
    after = [proposals[n] for n in range(60, 70)]
    # it goes on from its own distribution on the free parameters, within the narrowed
    # range: a restart would propose around the centre (x = 0.5) with a sixth of the
    # range as spread, and a CMA-ES handed a smaller space without its state proposes
    # nothing (random search for the rest of the study)
    assert all(set(p) == {"x", "z"} for p in after), after
    assert all(1e-3 <= p["z"] <= 0.1 for p in after), after
    assert statistics.median(p["x"] for p in after) > 0.7, after
    # and the study keeps improving in the subspace
    assert study.best_value < before / 4, (before, study.best_value)
    # released, the parameter held at 0.2 restarts there with CMA-ES's initial spread
    release(study)
    study.optimize(_bowl, n_trials=10)
    back = [proposals[n] for n in range(100, 110)]
    assert all(set(p) == {"x", "y", "z"} for p in back), back
    assert statistics.median(p["x"] for p in back) > 0.7, back
    assert statistics.median(abs(p["y"] - 0.2) for p in back) < 0.2, back


def test_a_study_with_its_shrinking_sampler_pickles_and_resumes_the_same() -> None:
    # every Optuna sampler pickles (users save study.sampler to resume a seeded study, some
    # from a callback after every trial); this one held a lock and could not be
    import pickle

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.TPESampler(seed=0)))
    restrict(study, {"z": 0.1}, why="pickling")
    saved: list[bytes] = []
    study.optimize(single, n_trials=12, callbacks=[lambda s, t: saved.append(pickle.dumps(s.sampler))])
    assert len(saved) == 12
    copy = pickle.loads(pickle.dumps(study))
    again = pickle.loads(saved[-1])
    assert isinstance(copy.sampler, ShrinkingSampler)
    assert isinstance(again, ShrinkingSampler)
    # the copies go on sampling under the restriction, as the original does
    for sampler in (copy.sampler, again):
        study.sampler = sampler
        study.optimize(single, n_trials=3)
    assert all(t.params["z"] == 0.1 for t in study.trials[12:])



def test_a_range_on_a_step_grid_holds_its_top_value_and_one_between_values_is_refused() -> None:
    # low + k * step in binary gave 0.30000000000000004, Optuna found [that, 0.5] not
    # divisible by 0.1 and cut it to 0.4: the top of the range was never sampled. A range
    # between two grid values was taken, ignored by the sampler and counted as narrowing
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0),
                                                         explore_every=None))

    def objective(t: optuna.Trial) -> float:
        return t.suggest_float("dropout", 0, 1, step=0.1) + t.suggest_int("batch", 16, 256, step=16)

    study.optimize(objective, n_trials=3)
    restrict(study, {}, ranges={"dropout": (0.25, 0.55)}, why="grid")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not divisible by step" from Optuna
        study.optimize(objective, n_trials=60)
    assert {t.params["dropout"] for t in study.trials[3:]} == {0.3, 0.4, 0.5}
    with pytest.raises(InvalidArgumentError, match=r"narrow 'batch' to \[20, 30\].*holds none of"):
        restrict(study, {}, ranges={"batch": (20, 30)}, why="between two values")
    assert read_ranges(study) == {"dropout": (0.25, 0.55)}  # the refused one wrote nothing


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize("name", list(SAMPLERS))
def test_a_range_of_one_value_gives_that_value(name: str) -> None:
    # a float range narrowed to one value (restrict accepts low == high, and a range that
    # meets the parameter's only at its bound): TPE drew NaN ("nan is invalid value") and
    # CMA-ES divided by the zero width, and the study stopped until released
    make, objective, _ = SAMPLERS[name]
    study = optuna.create_study(directions=["minimize"] * (2 if objective is double else 1),
                                sampler=ShrinkingSampler(make()))
    study.optimize(objective, n_trials=15)
    restrict(study, {}, ranges={"x": (0.35, 0.35), "z": (1.0, 5.0)}, why="one value each")
    study.optimize(objective, n_trials=10)
    held = [t for t in study.trials[15:] if (t.number + 1) % 10]  # not the exploring ones
    assert len(held) == 9
    assert {t.params["x"] for t in held} == {0.35}
    assert {t.params["z"] for t in held} == {1.0}
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)


@pytest.mark.parametrize("name", ["tpe", "tpe-multivariate", "cmaes", "random"])
def test_a_study_pruned_by_hyperband_follows_its_restriction(name: str) -> None:
    # HyperbandPruner hands the sampler a view of the study per bracket, which refuses
    # `user_attrs`: the first trial stopped with an AttributeError, restriction or not
    def reported(t: optuna.Trial) -> float:
        value = single(t)
        for step in range(3):
            t.report(value + 1.0 / (step + 1), step)
            if t.should_prune():
                raise optuna.TrialPruned()
        return value

    study = optuna.create_study(sampler=ShrinkingSampler(SAMPLERS[name][0]()),
                                pruner=optuna.pruners.HyperbandPruner(min_resource=1,
                                                                      max_resource=3))
    restrict(study, {"y": FIXED}, why="before the first trial")  # names checked at the first
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 'y' is the objective's: nothing to warn about
        study.optimize(reported, n_trials=25)
    held = [t for t in study.trials if (t.number + 1) % 10]
    assert {t.params["y"] for t in held} == {FIXED}
    assert len(study.trials) == 25
