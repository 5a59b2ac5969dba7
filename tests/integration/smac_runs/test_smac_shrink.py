"""Shrink-and-continue on a real SMAC run: stop gracefully after a refit, continue on the
three most important of ten parameters; the new run holds only costs measured on its own
configurations (old runs already in the subspace, and projections evaluated again)."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import pytest

smac = pytest.importorskip("smac")
CS = pytest.importorskip("ConfigSpace")

from hpinsight.integrations.smac import ImportanceCallback, shrink_and_continue  # noqa: E402

NUISANCE = [f"n{i}" for i in range(6)]


def space() -> Any:
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("a", (-3.0, 3.0)), CS.Float("b", (1e-4, 1.0), log=True),
            CS.Integer("c", (0, 20)), CS.Categorical("k", ["p", "q", "r"])]
           + [CS.Float(n, (0.0, 1.0)) for n in NUISANCE])
    return cs


evaluated: list[dict[str, Any]] = []


def cost(c: dict[str, Any]) -> float:
    return ((c["a"] - 1.0) ** 2 + (math.log10(c["b"]) + 2.0) ** 2 + 0.05 * (c["c"] - 7) ** 2
            + 1e-3 * sum(c[n] for n in NUISANCE))


def target(config: Any, seed: int = 0) -> float:
    evaluated.append(dict(config))
    return cost(dict(config))


def assert_every_cost_was_measured(facade: Any) -> None:
    """Every run the facade holds has the cost its configuration really has: nothing
    was told a cost measured on another configuration."""
    for key, value in facade.runhistory.items():
        config = dict(facade.runhistory.get_config(key.config_id))
        assert value.cost == pytest.approx(cost(config), rel=1e-12), config


def _optimized(cs: Any, fn: Any, n_trials: int, out: Path, name: str) -> Any:
    """A finished seeded HPO-facade run of ``fn`` on ``cs``."""
    scenario = smac.Scenario(cs, deterministic=True, n_trials=n_trials, seed=0,
                             output_directory=out, name=name)
    facade = smac.HyperparameterOptimizationFacade(scenario, fn, overwrite=True,
                                                   logging_level=40)
    facade.optimize()
    return facade


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.mark.slow
def test_continued_run_searches_only_new_configurations_of_the_subspace(tmp_path: Path) -> None:
    evaluated.clear()
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0, stop_after=30)
    scenario = smac.Scenario(space(), deterministic=True, n_trials=200, seed=0,
                             output_directory=tmp_path, name="full")
    first = smac.HyperparameterOptimizationFacade(scenario, target, overwrite=True,
                                                  logging_level=40, callbacks=[cb])
    first.optimize()
    assert cb.close(120)
    assert cb.stopped
    assert len(first.runhistory) == 30  # stopped gracefully after the refit, not at 200
    assert cb.history[-1].n_trials == 30
    old_folder = Path(scenario.output_directory)
    before = _digest(old_folder)
    best_before = first.runhistory.get_cost(first.intensifier.get_incumbent())

    ranking = list(cb.history[-1].importances)
    run = shrink_and_continue(first, target, n_trials=30, keep=3, importances=ranking)
    assert run.kept == tuple(sorted(ranking[:3]))
    assert set(run.fixed) == set(ranking[3:])
    incumbent = dict(first.intensifier.get_incumbent())
    assert dict(run.fixed) == {n: incumbent[n] for n in ranking[3:]}
    # only the incumbent already lies in the subspace (the others differ in floats there);
    # the best others (a quarter of the 30 new trials) are projected and queued
    assert (run.n_told, len(run.reevaluated), run.n_left_out, run.n_skipped) == (1, 7, 22, 0)
    [(key, value)] = run.facade.runhistory.items()
    assert dict(run.facade.runhistory.get_config(key.config_id)) == incumbent
    assert value.cost == best_before
    n_before = len(evaluated)

    result = run.facade.optimize()
    new = evaluated[n_before:]
    assert len(new) == 30  # the told run was not evaluated again
    assert new[:7] == [dict(c) for c in run.reevaluated]  # the queued ones come first
    assert dict(first.intensifier.get_incumbent()) not in new
    for config in new:
        assert {n: config[n] for n in run.fixed} == dict(run.fixed)
    assert_every_cost_was_measured(run.facade)
    assert run.facade.runhistory.get_cost(result) <= best_before
    assert _digest(old_folder) == before  # the original run's files are untouched
    assert run.output_directory.parent.parent == old_folder.parent.parent  # beside it
    assert run.output_directory.parent.name == "full-shrunk"
    assert (run.output_directory / "runhistory.json").is_file()


@pytest.mark.slow
def test_auto_fixes_what_the_statistics_call_safe_at_the_space_defaults(tmp_path: Path) -> None:
    evaluated.clear()
    cs = space()
    first = _optimized(cs, target, 60, tmp_path, "full")
    run = shrink_and_continue(first, target, n_trials=20, keep="auto", seed=0)
    sub = run.subspace
    assert sub is not None
    assert dict(run.fixed) == sub.fixed
    assert set(run.kept) == set(sub.keep)
    for name, value in run.fixed.items():
        # ConfigSpace declares every default; "auto" fixes there, and only when safe
        assert value == pytest.approx(cs[name].default_value)
        assert sub.default_sources[name] == "space"
        assert sub.decisions[name].state == "fix"
        risk = sub.risks[name]
        assert risk.mean <= sub.margin
        assert risk.quantile(0.9) <= sub.margin
    for name in sub.keep:
        assert sub.reasons[name].startswith("Keep tuning")
    assert "a" in sub.keep  # the strongest effect, and its default (0) costs 1 per trial
    assert run.fixed  # the nuisance parameters are fixed, so the old runs leave the subspace
    incumbent = dict(first.intensifier.get_incumbent())
    projected = {**incumbent, **run.fixed}
    assert dict(run.reevaluated[0]) == pytest.approx(projected)
    assert run.n_told + len(run.reevaluated) + run.n_left_out + run.n_skipped == 60
    # nothing in the new run has a cost that was not measured on its own configuration:
    # the projected incumbent is not told its old cost
    assert_every_cost_was_measured(run.facade)
    # a tenth of the margin, asked for: the same statistics, a tenth of the tolerance
    strict = shrink_and_continue(first, target, n_trials=20, keep="auto", seed=0,
                                 risk_margin=0.005, name="strict")
    assert strict.subspace is not None
    assert strict.subspace.margin == pytest.approx(sub.margin / 10)
    assert set(strict.fixed) <= set(run.fixed)
    evaluated.clear()
    result = run.facade.optimize()
    assert evaluated[0] == pytest.approx(projected)  # evaluated for real, first
    for config in evaluated:  # the continued run searched only the subspace
        for name, value in run.fixed.items():
            assert config[name] == pytest.approx(value)
    assert_every_cost_was_measured(run.facade)
    best = run.facade.runhistory.get_cost(result)
    assert best == pytest.approx(cost(dict(result)))


def test_an_earlier_continued_run_is_never_replaced_silently(tmp_path: Path) -> None:
    import logging

    scenario = smac.Scenario(space(), deterministic=True, n_trials=15, seed=0,
                             output_directory=tmp_path, name="full")
    first = smac.HyperparameterOptimizationFacade(scenario, target, overwrite=True,
                                                  logging_level=40)
    first.optimize()
    root = logging.getLogger()
    was = root.level
    root.setLevel(logging.DEBUG)  # the user's own logging, after SMAC set its up
    try:
        run = shrink_and_continue(first, target, n_trials=1, keep=3, importances=["a", "b", "c"])
        assert root.level == logging.DEBUG  # SMAC's logging set-up was not run again
    finally:
        root.setLevel(was)
    stored = _digest(run.output_directory)
    with pytest.raises(FileExistsError, match=r"'full-shrunk' is already stored.*name=.*overwrite=True"):
        shrink_and_continue(first, target, n_trials=1, keep=3, importances=["a", "b", "c"])
    assert _digest(run.output_directory) == stored  # the earlier continued run is intact
    other = shrink_and_continue(first, target, n_trials=1, keep=2, importances=["a", "b", "c"],
                                name="full-two")
    assert other.output_directory.parent.name == "full-two"
    again = shrink_and_continue(first, target, n_trials=1, keep=2, importances=["a", "b", "c"],
                                overwrite=True)
    assert again.output_directory == run.output_directory
    with pytest.raises(ValueError, match=r"'reevaluate'.*>= 0 or 'auto'"):
        shrink_and_continue(first, target, n_trials=1, keep=2, reevaluate=-1, name="bad")
    alone = shrink_and_continue(first, target, n_trials=4, keep=2, importances=["a", "b", "c"],
                                reevaluate=0, name="alone")
    assert alone.reevaluated == ()
    assert alone.n_told + alone.n_left_out == 15
    with pytest.raises(TypeError, match="overwrite"):
        shrink_and_continue(first, target, n_trials=1, keep=2, overwrite="yes")  # type: ignore[arg-type]
    # the run being continued is never replaced, not even when asked to overwrite
    source = Path(first.scenario.output_directory)
    kept = _digest(source)
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match=r"name='full' is the name of the run being "
                                                  r"continued.*another name.*'full-shrunk'"):
            shrink_and_continue(first, target, n_trials=1, keep=2, importances=["a", "b", "c"],
                                name="full", overwrite=overwrite)
    assert _digest(source) == kept
    # an error names the function the user called, not the one it calls
    with pytest.raises(ValueError, match=r"'fixed' parameter of shrink_and_continue names 'nope'"):
        shrink_and_continue(first, target, fixed={"nope": 1.0}, n_trials=1, name="bad")
    for bad, error in ((0, ValueError), (-5, ValueError), (2.7, TypeError), ("10", TypeError),
                       (None, TypeError)):
        with pytest.raises(error, match=r"'n_trials' parameter of shrink_and_continue"):
            shrink_and_continue(first, target, n_trials=bad, keep=2, name="bad")  # type: ignore[arg-type]


def test_a_continued_run_continues_again_without_a_false_warning(tmp_path: Path) -> None:
    """SMAC's config selector adds the configurations a run starts with to its own
    max_new_config_tries; a continued run with told runs then looked like a run with
    another config selector, and continuing it warned that its components differ."""
    import warnings

    first = _optimized(space(), target, 15, tmp_path, "full")
    kept_k = dict(first.intensifier.get_incumbent())["k"]
    run = shrink_and_continue(first, target, n_trials=4, fixed={"k": kept_k})
    assert run.n_told > 0  # the runs with that k already lie in the subspace
    run.facade.optimize()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the warning about components
        again = shrink_and_continue(run.facade, target, n_trials=2, fixed={"n0": 0.5},
                                    name="again")
    assert dict(again.fixed) == {"n0": 0.5}
    assert "k" not in again.kept  # a constant since the first continuation


def vee_cost(c: dict[str, Any]) -> float:
    """Three parameters matter; ``v`` is V-shaped and small in variance (about 0.1 %), but
    its declared default 0.0 costs 0.15, several times what the run still gains."""
    return (10.0 * (c["a"] - 0.3) ** 2 + 5.0 * (c["b"] - 0.6) ** 2 + 0.3 * abs(c["v"] - 0.5)
            + 1e-4 * sum(c[n] for n in NUISANCE))


@pytest.mark.slow
def test_auto_never_fixes_a_small_parameter_whose_default_is_costly(tmp_path: Path) -> None:
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("a", (0.0, 1.0)), CS.Float("b", (0.0, 1.0)),
            CS.Float("v", (0.0, 1.0), default=0.0)]
           + [CS.Float(n, (0.0, 1.0)) for n in NUISANCE])

    def vee(config: Any, seed: int = 0) -> float:
        return vee_cost(dict(config))

    first = _optimized(cs, vee, 80, tmp_path, "vee")
    run = shrink_and_continue(first, vee, n_trials=10, keep="auto", seed=0)
    sub = run.subspace
    assert sub is not None
    assert "v" not in run.fixed  # fixing it at 0.0 would cost 0.15 on every later trial
    assert sub.decisions["v"].tuned
    for name, value in run.fixed.items():  # what it fixes truly costs at most the margin
        truth = {"a": 10.0 * (value - 0.3) ** 2, "b": 5.0 * (value - 0.6) ** 2,
                 "v": 0.3 * abs(value - 0.5)}.get(name, 1e-4 * value)
        assert truth <= sub.margin, (name, value, truth, sub.margin)


def _act_space(act_default: str) -> Any:
    """x matters, opt = rms is better by 1, act does nothing, and rms with tanh is
    forbidden: act fixed at tanh rules out the better optimizer."""
    cs = CS.ConfigurationSpace(seed=0)
    opt = CS.Categorical("opt", ["rms", "adam"], default="adam")
    act = CS.Categorical("act", ["relu", "tanh"], default=act_default)
    cs.add([CS.Float("x", (0.0, 1.0)), opt, act] + [CS.Float(n, (0.0, 1.0)) for n in NUISANCE])
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(opt, "rms"),
                                      CS.ForbiddenEqualsClause(act, "tanh")))
    return cs


def act_cost(c: dict[str, Any]) -> float:
    return (10.0 * (c["x"] - 0.3) ** 2 + (0.0 if c["opt"] == "rms" else 1.0)
            + 1e-4 * sum(c[n] for n in NUISANCE))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The ConfigurationSpace has 1 forbidden clause")
def test_a_forbidden_clause_read_from_a_run_keeps_tuned_what_would_rule_out_the_best(
        tmp_path: Path) -> None:
    # act does nothing, but fixed at its default (tanh) it forbids opt = rms, a true cost
    # of 1.0 the model does not see; read from the run, the clause is known by value, so
    # act at relu would rule nothing out
    from hpinsight.adapters import from_smac

    def fn(config: Any, seed: int = 0) -> float:
        return act_cost(dict(config))

    first = _optimized(_act_space("tanh"), fn, 60, tmp_path, "act")
    record = from_smac(first).sampling
    assert record is not None
    assert record.linked_to("act", "tanh") == ("opt",)
    assert record.linked_to("act", "relu") == ()
    assert record.linked_to("opt", "adam") == ()
    best_before = first.runhistory.get_cost(first.intensifier.get_incumbent())
    run = shrink_and_continue(first, fn, n_trials=20, keep="auto", seed=0)
    assert run.subspace is not None
    assert "act" not in run.fixed
    assert run.subspace.decisions["act"].tuned
    assert run.fixed.get("opt") != "adam"
    result = run.facade.optimize()
    best = run.facade.runhistory.get_cost(result)
    assert dict(result)["opt"] == "rms"  # the better optimizer stayed reachable
    assert best <= best_before


@pytest.mark.slow
def test_every_facade_kind_continues_and_its_own_components_are_not_lost_silently(
        tmp_path: Path) -> None:
    # the algorithm-configuration, random and Hyperband facades have a design without a
    # count of random configurations (a raw TypeError); a first run's own intensifier
    # was replaced by the default without a word
    cs = CS.ConfigurationSpace({"a": (0.0, 1.0), "b": (0.0, 1.0)}, seed=0)

    def on_instance(config: Any, instance: str, seed: int = 0) -> float:
        return config["a"] + 0.01 * config["b"] + int(instance[-1])

    def plain(config: Any, seed: int = 0) -> float:
        return config["a"] + 0.01 * config["b"]

    configured = smac.AlgorithmConfigurationFacade(
        smac.Scenario(cs, deterministic=True, n_trials=10, instances=["i0", "i1"],
                      instance_features={"i0": [0.0], "i1": [1.0]}, seed=0,
                      output_directory=tmp_path, name="ac"),
        on_instance, overwrite=True, logging_level=40)
    configured.optimize()
    run = shrink_and_continue(configured, on_instance, fixed={"b": 0.5}, n_trials=3)
    best = run.facade.optimize()
    assert dict(best)["b"] == 0.5
    assert type(run.facade) is smac.AlgorithmConfigurationFacade
    scenario = smac.Scenario(cs, deterministic=True, n_trials=10, seed=0,
                             output_directory=tmp_path, name="own")
    HPO = smac.HyperparameterOptimizationFacade
    own = HPO(scenario, plain, intensifier=HPO.get_intensifier(scenario, max_config_calls=1),
              overwrite=True, logging_level=40)
    own.optimize()
    with pytest.warns(UserWarning, match=r"intensifier max_config_calls=3 instead of 1\)\. Pass "
                                         r"components="):
        shrink_and_continue(own, plain, fixed={"b": 0.5}, n_trials=3)
    kept = shrink_and_continue(own, plain, fixed={"b": 0.5}, n_trials=3, name="kept",
                               components=lambda s: {"intensifier": HPO.get_intensifier(
                                   s, max_config_calls=1)})
    assert kept.facade.intensifier.meta["max_config_calls"] == 1
    # a misspelt name in importances took a place of keep, and a parameter was fixed
    with pytest.raises(ValueError, match=r"'importances' names \['B'\], not parameters"):
        shrink_and_continue(own, plain, keep=1, importances=["B", "a"], n_trials=3, name="x")


@pytest.mark.slow
def test_keep_on_a_run_of_several_objectives_asks_for_fixed(tmp_path: Path) -> None:
    # it said "pass objective=<index>", an argument shrink_and_continue does not have
    cs = CS.ConfigurationSpace({"a": (0.0, 1.0), "b": (0.0, 1.0)}, seed=0)
    scenario = smac.Scenario(cs, deterministic=True, n_trials=8, seed=0, objectives=["e", "t"],
                             output_directory=tmp_path, name="mo")
    HPO = smac.HyperparameterOptimizationFacade

    def two(config: Any, seed: int = 0) -> dict[str, float]:
        return {"e": config["a"], "t": config["b"]}

    first = HPO(scenario, two, overwrite=True, logging_level=40,
                multi_objective_algorithm=HPO.get_multi_objective_algorithm(scenario))
    first.optimize()
    for keep in (1, "auto"):
        # the fix it names must work: report --smac-run, not from_smac without objective=
        with pytest.raises(ValueError, match=r"2 objectives .* Pass fixed=.*hpinsight report "
                                             r"--smac-run RUN_FOLDER.*objective=name"):
            shrink_and_continue(first, two, keep=keep, n_trials=3)
    run = shrink_and_continue(first, two, fixed={"b": 0.25}, n_trials=3)
    assert dict(run.fixed) == {"b": 0.25}



@pytest.mark.slow
def test_a_ranking_that_names_a_parameter_again_keeps_it_at_its_first_place(tmp_path: Path) -> None:
    # the docstring's example, a ranking of every effect, names a parameter again as an
    # interaction's partner: keep=3 then fixed the top three themselves, then every
    # parameter, and SMAC failed with an empty ConfigurationSpaceExhaustedException
    first = _optimized(space(), target, 15, tmp_path, "full")
    ranked = ["a", "b", "c", "a", "k", "b", "c", *NUISANCE]
    run = shrink_and_continue(first, target, keep=3, importances=ranked, n_trials=2)
    assert set(run.kept) == {"a", "b", "c"}
    assert set(run.fixed) == {"k", *NUISANCE}


@pytest.mark.slow
def test_values_and_rankings_that_cannot_be_held_as_given_are_refused(tmp_path: Path) -> None:
    # fixed={"c": 3.5} held c at 3 without a word, "3" as 3, and 9.7 was refused as "9";
    # importances ranking fewer than keep filled the places by the space's order, and
    # fixed the parameters that mattered; a list of pairs failed with an AttributeError
    from hpinsight.exceptions import InvalidSpaceError

    first = _optimized(space(), target, 12, tmp_path, "full")
    for value, shown in ((3.5, "3.5"), ("3", "'3'"), (20.7, "20.7")):
        with pytest.raises(InvalidSpaceError, match=rf"gives 'c' the value {shown},"):
            shrink_and_continue(first, target, fixed={"c": value}, n_trials=2)
    with pytest.raises(ValueError, match=r"'importances' ranks 1 parameter\(s\) \(\['n0'\]\), and "
                                         r"keep=2 needs at least 2"):
        shrink_and_continue(first, target, keep=2, importances=["n0"], n_trials=2)
    with pytest.raises(TypeError, match=r"'fixed' parameter of shrink_and_continue must be a "
                                        r"mapping .* Got list instead"):
        shrink_and_continue(first, target, fixed=[("n0", 0.5)], n_trials=2)
    held = shrink_and_continue(first, target, fixed={"c": 7.0, "n0": 1}, n_trials=2)
    assert held.fixed == {"c": 7, "n0": 1.0}  # legal values in the parameter's own type
    assert type(held.fixed["c"]) is int
    assert type(held.fixed["n0"]) is float


@pytest.mark.slow
def test_fixing_every_parameter_is_refused_with_what_to_do(tmp_path: Path) -> None:
    first = _optimized(space(), target, 15, tmp_path, "full")
    everything = dict(first.intensifier.get_incumbent())
    with pytest.raises(ValueError, match=r"every parameter would be fixed .* nothing is left to "
                                         r"search\. Keep at least one parameter free"):
        shrink_and_continue(first, target, fixed=everything, n_trials=2)


@pytest.mark.slow
def test_a_smaller_space_alone_is_no_difference_in_components(tmp_path: Path) -> None:
    # fixing a parent takes its conditional child out: SMAC's forest then stores one
    # feature fewer, and a run with only defaults warned "max_features=6 instead of 7"
    import warnings

    cs = CS.ConfigurationSpace(seed=0)
    opt, mom = CS.Categorical("opt", ["a", "b"]), CS.Float("mom", (0.0, 1.0))
    cs.add([opt, mom, CS.Float("x", (0.0, 1.0)), CS.Float("y", (0.0, 1.0))])
    cs.add(CS.EqualsCondition(mom, opt, "a"))

    def fn(config: Any, seed: int = 0) -> float:
        c = dict(config)
        return (c["x"] - 0.3) ** 2 + (0.5 if c["opt"] == "a" else 0.0) + 0.1 * c.get("mom", 0.0)

    with warnings.catch_warnings():
        # SMAC's local search averages empty slices on conditional spaces (SMAC's code)
        warnings.simplefilter("ignore", RuntimeWarning)
        first = _optimized(cs, fn, 12, tmp_path, "cond")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = shrink_and_continue(first, fn, fixed={"opt": "b"}, n_trials=2)
    assert "mom" not in run.kept
    assert not [w for w in caught if "where the first run had its own" in str(w.message)]


def test_a_clause_on_a_parameter_inactive_in_a_run_does_not_drop_it(tmp_path: Path) -> None:
    # e is active only for f > 0.5, and e < i is forbidden where e is active: ConfigSpace
    # checked the clause on e's default before dropping it as inactive, and valid runs
    # with e inactive and i > 0 were "forbidden in the subspace", with nothing fixed
    cs = CS.ConfigurationSpace(seed=0)
    f, i, e = (CS.Float("f", (0.0, 1.0), default=0.2), CS.Integer("i", (0, 5), default=0),
               CS.Integer("e", (0, 5), default=0))
    cs.add([CS.Float("x", (-5.0, 5.0), default=0.0), f, i, e,
            CS.GreaterThanCondition(e, f, 0.5), CS.ForbiddenLessThanRelation(e, i)])
    first = _optimized(cs, lambda config, seed=0: (config["x"] - 1) ** 2, 30, tmp_path, "proj")
    configs = [dict(first.runhistory.get_config(k.config_id)) for k in first.runhistory]
    assert any("e" not in c and c["i"] > 0 for c in configs)  # the case that was dropped
    run = shrink_and_continue(first, lambda config, seed=0: (config["x"] - 1) ** 2, fixed={},
                              n_trials=1)
    assert (run.n_told, run.n_skipped) == (30, 0)
    # fixed at f = 0.9, e becomes active at its default 0: a run with i > 0 is then forbidden
    # (e < i), and one with i = 0 is projected
    moved = shrink_and_continue(first, lambda config, seed=0: (config["x"] - 1) ** 2,
                                fixed={"f": 0.9}, n_trials=1, name="f09")
    assert moved.n_told == 0
    assert moved.n_skipped == sum(1 for c in configs if c["i"] > 0 and "e" not in c) + sum(
        1 for c in configs if "e" in c and c["f"] != 0.9 and c["e"] < c["i"])


def test_the_user_s_callbacks_count_only_the_continued_run_s_own_trials(tmp_path: Path) -> None:
    # told the old runs in the subspace, an ImportanceCallback(stop_after=5) counted them as
    # trials and stopped the continued run before its first one
    first = _optimized(space(), target, 40, tmp_path, "cb")
    cb = ImportanceCallback(every_n_trials=10, min_trials=10, stop_after=5, seed=0,
                            isolation="thread")
    run = shrink_and_continue(first, target, fixed={"k": "p"}, n_trials=30, callbacks=[cb],
                              reevaluate=0, name="cb-next")
    assert run.n_told >= 5  # more told runs than stop_after
    assert not cb.stopped
    run.facade.optimize()
    assert cb.stopped
    assert len(run.facade.runhistory) - run.n_told == 5
    cb.close()


def test_a_parameter_the_held_values_deactivate_is_named_not_lost(tmp_path: Path) -> None:
    # momentum is active only under sgd; held at adam (the incumbent's), the continued run
    # left momentum out: keep=2 kept one parameter, and a fixed momentum was listed as
    # held, in neither case with a word
    from hpinsight.exceptions import HPInsightWarning

    cs = CS.ConfigurationSpace(seed=0)
    opt, momentum = CS.Categorical("opt", ["adam", "sgd"]), CS.Float("momentum", (0.0, 1.0))
    cs.add([opt, momentum, CS.Float("x", (-5.0, 5.0)), CS.Float("y", (-5.0, 5.0)),
            CS.EqualsCondition(momentum, opt, "sgd")])

    def fn(config: Any, seed: int = 0) -> float:
        c = dict(config)
        return (c["x"] - 1) ** 2 + 0.1 * c["y"] ** 2 + (0.0 if c["opt"] == "adam" else 50.0)

    first = _optimized(cs, fn, 25, tmp_path, "cond")
    assert dict(first.intensifier.get_incumbent())["opt"] == "adam"
    with pytest.warns(HPInsightWarning, match=r"momentum can never be active.*momentum will "
                                              r"not be tuned \(keep=2 keeps 1\)"):
        run = shrink_and_continue(first, fn, keep=2, importances=["momentum", "x", "opt", "y"],
                                  n_trials=2)
    assert run.kept == ("x",)
    with pytest.warns(HPInsightWarning, match=r"momentum can never be active.*it is not held"):
        held = shrink_and_continue(first, fn, fixed={"opt": "adam", "momentum": 0.3},
                                   n_trials=2, name="held")
    assert held.fixed == {"opt": "adam"}


def test_an_argument_the_chosen_way_of_fixing_never_reads_is_refused(tmp_path: Path) -> None:
    # fixed= with budget= or importances=, and risk_margin= with keep=<int>, were
    # accepted and silently unused (a user who asked for a stricter margin got none)
    first = _optimized(space(), target, 15, tmp_path, "full")
    cases = [({"fixed": {"n0": 0.5}, "importances": ["a"]}, "'importances'"),
             ({"fixed": {"n0": 0.5}, "budget": 1.0}, "'budget'"),
             ({"keep": 3, "importances": ["a", "b", "c"], "budget": 1.0}, "'budget'"),
             ({"keep": 3, "risk_margin": 0.01}, "'risk_margin'"),
             ({"fixed": {"n0": 0.5}, "risk_margin": 0.01}, "'risk_margin'")]
    for kwargs, named in cases:
        with pytest.raises(ValueError, match=f"{named} is given but would go unused"):
            shrink_and_continue(first, target, n_trials=2, name="x", **kwargs)
    assert not (tmp_path / "x").exists()  # refused before anything was written
    # the ways that read them still take them
    run = shrink_and_continue(first, target, n_trials=2, keep=3, budget=None, name="y")
    assert len(run.kept) == 3
