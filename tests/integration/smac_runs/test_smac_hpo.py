"""Real SMAC3 runs: the live callback on both surrogates, SMAC's forest converted exactly,
saved runs read back, and failures that never reach SMAC."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.exceptions import HPInsightWarning

smac = pytest.importorskip("smac")
CS = pytest.importorskip("ConfigSpace")

from hpinsight.integrations.smac import (  # noqa: E402
    RESULT_FILE,
    SMAC_RESULT_FILE,
    ImportanceCallback,
    SmacForest,
    load_run,
    smac_forest,
)

N_TRIALS = 60


def space() -> Any:
    cs = CS.ConfigurationSpace(seed=0)
    optimizer = CS.Categorical("optimizer", ["adam", "sgd"])
    momentum = CS.Float("momentum", (0.0, 0.99))
    cs.add([
        CS.Float("lr", (1e-4, 1.0), log=True),
        CS.Integer("depth", (1, 12)),
        CS.Categorical("kind", ["gbdt", "rf", "linear"]),
        optimizer, momentum,
        CS.Float("n1", (0.0, 1.0)), CS.Float("n2", (0.0, 1.0)),
        CS.Integer("n3", (1, 100), log=True),
        CS.EqualsCondition(momentum, optimizer, "sgd"),
    ])
    return cs


def target(config: Any, seed: int = 0) -> float:
    c = dict(config)
    # variance shares over the space: lr about 0.45, kind about 0.5, depth about 0.02
    return ((math.log10(c["lr"]) + 2.0) ** 2 + 0.02 * (c["depth"] - 6) ** 2
            + {"gbdt": 0.0, "rf": 1.0, "linear": 3.0}[c["kind"]] + 0.01 * c["n1"])


@pytest.fixture
def log_lines(capture_log: Callable[[str], list[str]]) -> list[str]:
    return capture_log("hpinsight.integrations.smac")


@pytest.fixture(scope="module")
def hpo_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    out = tmp_path_factory.mktemp("smac")
    scenario = smac.Scenario(space(), deterministic=True, n_trials=N_TRIALS, seed=0,
                             output_directory=out / "smac3_output", name="hpo")
    own = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0, regions=2)
    theirs = ImportanceCallback(every_n_trials=10, min_trials=20, surrogate=SmacForest())
    facade = smac.HyperparameterOptimizationFacade(
        scenario, target, overwrite=True, logging_level=40, callbacks=[own, theirs])
    facade.optimize()
    yield {"facade": facade, "own": own, "theirs": theirs, "folder": Path(scenario.output_directory)}
    own.close(60)
    theirs.close(60)


@pytest.mark.slow
def test_live_importances_rank_the_known_parameters_and_are_written(hpo_run):
    facade, cb = hpo_run["facade"], hpo_run["own"]
    assert not cb.errors
    counts = [s.n_trials for s in cb.history]
    assert counts == sorted(set(counts))
    assert counts[0] >= 20
    assert counts[-1] == N_TRIALS  # on_end flushed the last runs
    assert cb._fitter.worker_pid is None  # ... and stopped the refit process
    assert set(cb.sources) == {"gp"}
    assert set(list(cb.history[-1].importances)[:2]) == {"lr", "kind"}
    post_hoc = hp.fanova(hp.adapters.from_smac(facade), seed=0, max_order=2)  # as a report
    assert cb.latest is not None
    np.testing.assert_array_equal(cb.latest.variances, post_hoc.variances)
    # the incumbent's confidence regions of the two most important parameters
    incumbent = dict(facade.intensifier.get_incumbent())
    assert set(cb.incumbent_regions) == {"lr", "kind"}
    for name, region in cb.incumbent_regions.items():
        tree = cb.region_trees[name]
        full = {p.name: p.default for p in tree.pd.space.params} | incumbent
        assert tree.leaf_for(full) is region
    written = json.loads((hpo_run["folder"] / RESULT_FILE).read_text())
    assert written["surrogate"]["kind"] == "gp"
    assert written["target"] == "cost"
    assert [s["n_trials"] for s in written["history"]] == counts
    assert written["latest"]["n_trials"] == N_TRIALS


@pytest.mark.slow
def test_smac_surrogate_is_decomposed_without_refit(hpo_run):
    facade, cb = hpo_run["facade"], hpo_run["theirs"]
    assert not cb.errors
    assert set(cb.sources) == {"smac"}
    assert cb.history[-1].n_trials == N_TRIALS
    forest = smac_forest(facade)
    direct = hp.fanova(hp.adapters.from_smac(facade), surrogate=hp.Forest.from_estimator(forest))
    assert cb.latest is not None
    np.testing.assert_array_equal(cb.latest.variances, direct.variances)
    assert direct.n_draws == facade.intensifier.config_selector._model._rf.n_estimators
    written = json.loads((hpo_run["folder"] / SMAC_RESULT_FILE).read_text())
    assert written["surrogate"] == {"kind": "smac", "fallback": hp.GP().to_dict()}
    # the HPO facade trains its forest on log-scaled costs: the result says so
    assert written["target"] == (
        "the log of the cost scaled to [0, 1] (RunHistoryLogScaledEncoder, log_y)")
    # and so does the result itself (it said the history's objective, "cost")
    assert cb.latest.objective_name == written["target"]
    assert written["latest"]["objective"] == written["target"]


def assert_converted_forest_predicts_like_smac(facade: Any, n: int, seed: int) -> Any:
    """SMAC's trees and the converted ones agree exactly at ``n`` random configurations of
    the run's space (inactive entries as SMAC imputes them), and the converted ones ignore
    whatever value an inactive entry holds. Returns the converted forest."""
    from smac.utils.configspace import convert_configurations_to_array

    cs = facade.scenario.configspace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # forbidden clauses are not mapped
        ours = hp.adapters.from_configspace(cs)
    forest = smac_forest(facade, ours)
    model = facade.intensifier.config_selector._model
    cs.seed(seed)
    configs = cs.sample_configuration(n)
    Z = model._impute_inactive(convert_configurations_to_array(configs))
    theirs = np.stack([t.predict(Z) for t in model._rf.estimators_])
    X = ours.encode([dict(c) for c in configs])
    np.testing.assert_array_equal(forest.predict_per_draw(X), theirs)
    inactive = np.isnan(X)
    filled = np.where(inactive, ours.encode(ours.sample(n, seed=seed + 1)), X)
    filled[np.isnan(filled)] = 0.0  # any value: an inactive entry is never read
    np.testing.assert_array_equal(forest.predict_per_draw(filled), theirs)
    return forest


@pytest.mark.slow
def test_the_converted_forest_predicts_what_smacs_trees_predict(hpo_run):
    facade = hpo_run["facade"]
    assert_converted_forest_predicts_like_smac(facade, 1000, seed=1)


def svc_space() -> Any:
    cs = CS.ConfigurationSpace(seed=0)
    kernel = CS.Categorical("kernel", ["rbf", "linear", "poly", "sigmoid"])
    gamma = CS.Float("gamma", (1e-4, 10.0), log=True)
    degree = CS.Integer("degree", (2, 5))
    coef0 = CS.Float("coef0", (0.0, 1.0))
    C = CS.Float("C", (1e-3, 1e3), log=True)
    tol = CS.Float("tol", (1e-5, 1e-1), log=True)
    shrinking = CS.Categorical("shrinking", [True, False])
    cs.add([kernel, gamma, degree, coef0, C, tol, shrinking,
            CS.InCondition(gamma, kernel, ["rbf", "poly", "sigmoid"]),
            CS.EqualsCondition(degree, kernel, "poly"),
            CS.OrConjunction(CS.EqualsCondition(coef0, kernel, "poly"),
                             CS.EqualsCondition(coef0, kernel, "sigmoid")),
            CS.GreaterThanCondition(tol, C, 1.0),  # a numeric parent
            CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(kernel, "sigmoid"),
                                       CS.ForbiddenEqualsClause(shrinking, False))])
    return cs


def svc_target(config: Any, seed: int = 0) -> float:
    c = dict(config)
    kernel = {"rbf": 0.0, "linear": 2.0, "poly": 1.0, "sigmoid": 3.0}[c["kernel"]]
    gamma = (math.log10(c["gamma"]) + 1.0) ** 2 if "gamma" in c else 0.5
    return kernel + 0.3 * gamma + 0.1 * math.log10(c["C"]) ** 2 + 0.2 * c.get("degree", 0)


@pytest.mark.slow
def test_smacs_forest_is_reproduced_on_a_conditional_space_with_forbidden_clauses(tmp_path):
    # SMAC imputes inactive entries (-1, or the number of choices); the converted trees
    # used to read the parameter's active splits there instead: rbf -0.64 became -5.14
    scenario = smac.Scenario(svc_space(), deterministic=True, n_trials=60, seed=0,
                             output_directory=tmp_path / "svc")
    facade = smac.HyperparameterOptimizationFacade(scenario, svc_target, overwrite=True,
                                                   logging_level=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # SMAC's local search, empty means
        facade.optimize()
    forest = assert_converted_forest_predicts_like_smac(facade, 2000, seed=2)
    with pytest.warns(HPInsightWarning, match="forbidden clause") as caught:
        history = hp.adapters.from_smac(facade)
    # at the user's line (it pointed at a line of the package, reached through from_smac)
    assert [w.filename for w in caught if "forbidden clause" in str(w.message)] == [__file__]
    result = hp.fanova(history, surrogate=hp.Forest.from_estimator(forest))
    assert result.ranking()[0].params == ("kernel",)  # the data: kernel matters most


@pytest.mark.slow
def test_the_callback_says_a_runs_forbidden_clauses_once_in_its_log(tmp_path, capture_log):
    # each refit read the space again in its thread and gave the warning there: once per
    # refit, attributed to a line of the threading module
    lines = capture_log("hpinsight.integrations.smac")
    cb = ImportanceCallback(every_n_trials=5, min_trials=10, seed=0)
    scenario = smac.Scenario(svc_space(), deterministic=True, n_trials=30, seed=0,
                             output_directory=tmp_path / "svc")
    facade = smac.HyperparameterOptimizationFacade(scenario, svc_target, overwrite=True,
                                                   logging_level=40, callbacks=[cb])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        facade.optimize()
        assert cb.close(wait=120)
    assert len(cb.history) >= 2  # refit more than once, each reading the space
    assert not [w for w in caught if "forbidden clause" in str(w.message)]
    said = [line for line in lines if "forbidden clause" in line]
    assert len(said) == 1
    assert said[0].startswith("hpinsight: HPInsightWarning: The ConfigurationSpace has")


@pytest.mark.slow
def test_a_saved_run_reads_back_as_the_live_one(hpo_run):
    live = hp.adapters.from_smac(hpo_run["facade"])
    saved = load_run(hpo_run["folder"])
    assert saved.trial_ids == live.trial_ids
    np.testing.assert_array_equal(saved.y, live.y)
    assert [dict(c) for c in saved.configs] == [dict(c) for c in live.configs]
    assert saved.n_trials == N_TRIALS


def test_smacs_private_model_path_still_exists(hpo_run):
    """Fails loudly when a SMAC release moves what surrogate='smac' reads."""
    model = hpo_run["facade"].intensifier.config_selector._model
    assert type(model).__name__ == "RandomForest"
    assert hasattr(model._rf, "estimators_")
    from sklearn.ensemble import BaseEnsemble
    assert isinstance(model._rf, BaseEnsemble)


@pytest.mark.slow
def test_a_gaussian_process_falls_back_and_failures_never_reach_smac(tmp_path, log_lines):
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("x", (-2.0, 2.0)), CS.Float("y", (-2.0, 2.0))])
    scenario = smac.Scenario(cs, deterministic=True, n_trials=24, seed=0,
                             output_directory=tmp_path / "bb")
    fallback = ImportanceCallback(every_n_trials=6, min_trials=12, surrogate=SmacForest(),
                                  seed=0)
    broken = ImportanceCallback(every_n_trials=6, min_trials=12, objective=3)
    facade = smac.BlackBoxFacade(scenario, lambda config, seed=0: config["x"] ** 2 + 0.01 * config["y"],
                                 overwrite=True, logging_level=40, callbacks=[fallback, broken])
    facade.optimize()
    assert len(facade.runhistory) == 24
    assert set(fallback.sources) == {"gp"}
    assert not fallback.errors
    assert next(iter(fallback.history[-1].importances)) == "x"
    assert any("not a random forest" in line for line in log_lines)
    assert broken.errors
    assert all(isinstance(e, ValueError) for e in broken.errors)
    assert any("the optimization goes on" in line for line in log_lines)
    assert fallback.close(60)
    assert broken.close(60)


def test_callback_options_are_checked():
    with pytest.raises(TypeError, match="surrogate"):
        ImportanceCallback(surrogate="hpinsight")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"surrogate=SmacForest\(\) does not do"):
        ImportanceCallback(surrogate=SmacForest(), cap_quantile=0.2)
    with pytest.raises(TypeError, match="parameter of SmacForest takes a model object"):
        SmacForest(fallback="gp")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="objective index or name"):
        ImportanceCallback(objective=1.5)  # type: ignore[arg-type]


@pytest.mark.slow
def test_multi_objective_runs_are_analysed_per_named_objective_or_for_the_front(tmp_path):
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("x", (0.0, 1.0)), CS.Float("y", (0.0, 1.0))])

    def two(config, seed: int = 0) -> dict[str, float]:
        return {"error": (config["x"] - 0.3) ** 2, "seconds": 1.0 + 4.0 * config["y"]}

    scenario = smac.Scenario(cs, deterministic=True, n_trials=30, seed=0,
                             objectives=["error", "seconds"], output_directory=tmp_path / "mo")
    missing = ImportanceCallback(every_n_trials=10, min_trials=10, seed=0)
    by_name = ImportanceCallback(every_n_trials=10, min_trials=10, objective="seconds", seed=0)
    front = ImportanceCallback(every_n_trials=10, min_trials=10, objective="front", seed=0)
    facade = smac.HyperparameterOptimizationFacade(
        scenario, two, overwrite=True, logging_level=40, callbacks=[missing, by_name, front],
        multi_objective_algorithm=smac.HyperparameterOptimizationFacade
        .get_multi_objective_algorithm(scenario, objective_weights=[1, 1]))
    facade.optimize()
    assert missing.close(60)
    assert by_name.close(60)
    assert len(facade.runhistory) == 30
    # without objective=, the run is watched for reaching its Pareto front, as an Optuna
    # study's is (it failed at every refit, naming another function's argument)
    assert not missing.errors
    assert not by_name.errors
    assert next(iter(by_name.history[-1].importances)) == "y"
    saved = load_run(scenario.output_directory, objective=0)
    assert saved.objective_name == "error"
    assert saved.n_trials == 30
    # the code that reads it again names the objective the index chose
    folder = str(scenario.output_directory)
    assert saved.loader == f"load_run({folder!r}, objective='error')"
    # reaching the Pareto front: x and y both decide it, and the status counts its trials
    assert front.close(60)
    assert not front.errors
    assert set(list(front.history[-1].importances)[:2]) == {"x", "y"}
    pareto = load_run(scenario.output_directory, objective="front")
    assert pareto.is_front
    assert pareto.loader == f"load_run({folder!r}, objective='front')"
    assert front.history[-1].front_size == int((pareto.y == 0).sum()) >= 1
    assert missing.history[-1].importances == front.history[-1].importances
    assert missing.history[-1].front_size == front.history[-1].front_size
    # the command line reports every objective and the front, as for an Optuna study
    import json
    import subprocess
    import sys

    target = tmp_path / "mo.json"
    done = subprocess.run([sys.executable, "-m", "hpinsight", "report", "--smac-run",
                           str(scenario.output_directory), "--out", str(target)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(target.read_text())
    assert doc["kind"] == "multi-objective"
    assert doc["objectives"] == ["error", "seconds"]
    assert doc["directions"] == {"error": "minimize", "seconds": "minimize"}
    assert list(doc["sections"]) == ["error", "seconds", "front"]
    assert doc["sections"]["error"]["top"][0] == "x"  # error depends on x alone
    assert doc["sections"]["seconds"]["top"][0] == "y"  # seconds on y alone


@pytest.mark.slow
def test_report_of_the_saved_run_from_the_command_line(hpo_run, tmp_path):
    import subprocess
    import sys

    pytest.importorskip("matplotlib")
    target = tmp_path / "smac.html"
    done = subprocess.run([sys.executable, "-m", "hpinsight", "report", "--smac-run",
                           str(hpo_run["folder"]), "--out", str(target)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = target.read_text(encoding="utf-8")
    assert f"SMAC run {hpo_run['folder']}" in page
    assert page.count("<figure") >= 6  # inline SVG figures
    # the table's first row is the run's most important effect, as the library ranks it
    top = hp.fanova(hp.adapters.from_smac(hpo_run["folder"]), seed=0,
                    max_order=2).ranking()[0]
    assert f"<tr><td>{' x '.join(top.params)}</td>" in page


@pytest.mark.slow
def test_smacs_own_forest_is_labelled_with_what_it_predicts(tmp_path):
    # its marginals are in SMAC's transformed cost, crashed runs at crash_cost, while the
    # result said "cost" and counted the crashes as left out
    cs = CS.ConfigurationSpace({"a": (0.0, 1.0), "b": (0.0, 1.0)}, seed=0)

    def crashes_above(config: Any, seed: int = 0) -> float:
        if config["b"] > 0.7:
            raise RuntimeError("out of memory")
        return (config["a"] - 0.5) ** 2

    scenario = smac.Scenario(cs, deterministic=True, n_trials=30, seed=0, crash_cost=10.0,
                             output_directory=tmp_path / "crash")
    facade = smac.HyperparameterOptimizationFacade(scenario, crashes_above, overwrite=True,
                                                   logging_level=40)
    facade.optimize()
    history = hp.adapters.from_smac(facade)
    crashed = history.excluded["CRASHED"]
    assert crashed > 0
    result = hp.fanova(history, surrogate=smac_forest(facade))
    assert result.to_dict()["objective"] == (
        "the log of the cost scaled to [0, 1] (RunHistoryLogScaledEncoder, log_y); "
        f"{crashed} crashed run(s) counted at crash_cost")
    assert hp.fanova(history, seed=0).to_dict()["objective"] == "cost"  # a refit: the cost


@pytest.mark.slow
def test_a_callback_per_objective_writes_its_own_file(tmp_path):
    # two callbacks on the objectives of one run wrote one file, the last refit's
    cs = CS.ConfigurationSpace({"a": (0.0, 1.0), "b": (0.0, 1.0)}, seed=0)
    scenario = smac.Scenario(cs, deterministic=True, n_trials=25, objectives=["err", "time"],
                             seed=0, output_directory=tmp_path / "two")
    callbacks = {name: ImportanceCallback(min_trials=10, objective=name, seed=0,
                                          isolation="thread") for name in ("err", "time")}
    # the same objective among the best trials: it wrote the first one's file
    capped = ImportanceCallback(min_trials=10, objective="err", cap_quantile=0.25, seed=0,
                                isolation="thread")
    HPO = smac.HyperparameterOptimizationFacade
    facade = HPO(scenario, lambda config, seed=0: {"err": config["a"], "time": config["b"]},
                 multi_objective_algorithm=HPO.get_multi_objective_algorithm(scenario),
                 callbacks=[*callbacks.values(), capped], overwrite=True, logging_level=40)
    facade.optimize()
    assert capped.close(60)
    assert capped.result_path.name == "hpinsight_importance.objective-err.cap-0.25.json"
    assert json.loads(capped.result_path.read_text())["latest"]["cap_quantile"] == 0.25
    for name, driver in (("err", "a"), ("time", "b")):
        cb = callbacks[name]
        assert cb.close(60)
        assert cb.result_path.name == f"hpinsight_importance.objective-{name}.json"
        written = json.loads(cb.result_path.read_text())
        assert written["latest"]["objective"] == name
        assert written["latest"]["effects"][0]["params"] == [driver]
    assert not (Path(scenario.output_directory) / RESULT_FILE).exists()


@pytest.mark.slow
def test_stop_after_below_min_trials_still_refits_last(tmp_path):
    # stop_after=15 with min_trials=20: SMAC stopped with no refit at all, nothing to
    # continue on, and nothing said so
    cs = CS.ConfigurationSpace({"a": (0.0, 1.0), "b": (0.0, 1.0)}, seed=0)
    scenario = smac.Scenario(cs, deterministic=True, n_trials=40, seed=0,
                             output_directory=tmp_path / "stop")
    cb = ImportanceCallback(stop_after=15, seed=0, isolation="thread")
    facade = smac.HyperparameterOptimizationFacade(
        scenario, lambda config, seed=0: (config["a"] - 0.3) ** 2, callbacks=[cb],
        overwrite=True, logging_level=40)
    facade.optimize()
    assert cb.stopped
    assert cb.close(60)
    assert [s.n_trials for s in cb.history] == [15]
    assert cb.latest is not None
    assert cb.latest.ranking()[0].params == ("a",)
