"""Algorithm configuration with instances: SMAC's intensifier runs most configurations on
one instance, so per-instance difficulty swamps the plain mean; the instance model of
Hutter et al. (2014, Sec. 3.3) recovers the parameter that matters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

import hpinsight as hp

smac = pytest.importorskip("smac")
CS = pytest.importorskip("ConfigSpace")

from hpinsight.integrations.smac import ImportanceCallback, SmacForest  # noqa: E402

INSTANCES = [f"i{k}" for k in range(6)]


def solver(config: Any, instance: str, seed: int = 0) -> float:
    # x matters (range 5), k barely (range 0.9), z not at all; instances differ by 20 each
    return 5.0 * config["x"] + 0.1 * config["k"] + 20.0 * int(instance[1:])


# The callback fits its instance model (a scikit-learn forest) on its own thread while
# SMAC's loop predicts with scikit-learn on the main thread: scikit-learn's per-task
# catch_warnings/resetwarnings then race on Python's process-wide filter list (see
# conftest.py) and may leave it empty, after which every task warns. Ignored here only.
@pytest.mark.filterwarnings("ignore:`sklearn.utils.parallel.delayed` should be used with:UserWarning")
@pytest.mark.slow
def test_instance_model_recovers_x_where_the_mean_is_swamped(
    tmp_path: Any, capture_log: Callable[[str], list[str]]
) -> None:
    lines = capture_log("hpinsight.integrations.smac")
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("x", (0.0, 1.0)), CS.Float("z", (0.0, 1.0)), CS.Integer("k", (1, 10))])
    scenario = smac.Scenario(cs, deterministic=True, n_trials=120, seed=0, instances=INSTANCES,
                             instance_features={i: [float(i[1:])] for i in INSTANCES},
                             output_directory=tmp_path / "ac")
    auto = ImportanceCallback(every_n_trials=20, min_trials=20, seed=0)
    # a forest on plain means fits the instances' offsets as if they were effects; the
    # Gaussian process would take them for noise
    mean = ImportanceCallback(every_n_trials=20, min_trials=20, seed=0, surrogate=hp.Forest(n_trees=32),
                              instances="mean")
    theirs = ImportanceCallback(every_n_trials=20, min_trials=20, surrogate=SmacForest(),
                                seed=0)
    facade = smac.AlgorithmConfigurationFacade(scenario, solver, overwrite=True, logging_level=40,
                                               callbacks=[auto, mean, theirs])
    facade.optimize()
    for cb in (auto, mean, theirs):
        assert cb.close(120)
        assert not cb.errors
    runs_per_config = Counter(k.config_id for k in facade.runhistory)
    assert sum(n == 1 for n in runs_per_config.values()) > len(runs_per_config) / 2

    modelled = auto.history[-1].importances
    assert next(iter(modelled)) == "x"
    assert modelled["x"] > 0.8
    assert modelled["z"] < 0.05
    assert mean.history[-1].importances["x"] < 0.6  # instance difficulty dominates the mean
    # SMAC's forest was trained with instance features: the callback refits its own instead
    assert set(theirs.sources) == {"gp"}
    assert any("instance features" in line for line in lines)
    history = hp.adapters.from_smac(facade)
    assert history.objective_name == "cost (averaged over 6 instances by a model of the runs)"
    assert history.n_trials == len(runs_per_config)
