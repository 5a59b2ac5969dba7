"""Live importances during a SMAC3 run, from hpinsight's Gaussian process and from SMAC's
own forest.

Tunes a synthetic 6-parameter "training job" with SMAC's HPO facade. Two callbacks
watch it: one refits hpinsight's default model (a Gaussian process) on the runs so far,
one decomposes SMAC's own random forest without refitting. Afterwards the saved run is
read back from disk.

    python examples/smac_live_importance.py [--trials 50] [--out smac3_output]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float, Integer
from smac import HyperparameterOptimizationFacade, Scenario

import hpinsight as hp
from hpinsight.integrations.smac import ImportanceCallback, SmacForest, load_run


def configspace() -> ConfigurationSpace:
    cs = ConfigurationSpace(seed=0)
    optimizer = Categorical("optimizer", ["adam", "sgd"])
    momentum = Float("momentum", (0.0, 0.99))
    cs.add([
        Float("learning_rate", (1e-4, 1.0), log=True),
        Integer("layers", (1, 8)),
        optimizer, momentum,
        Float("dropout", (0.0, 0.5)),
        Integer("batch_size", (16, 512), log=True),
        EqualsCondition(momentum, optimizer, "sgd"),
    ])
    return cs


def train(config, seed: int = 0) -> float:
    """A validation error: learning rate matters most, then layers; batch size barely."""
    c = dict(config)
    error = 0.1 + 0.08 * (math.log10(c["learning_rate"]) + 2.5) ** 2
    error += 0.02 * abs(c["layers"] - 4)
    error += 0.05 if c["optimizer"] == "sgd" and c["momentum"] < 0.5 else 0.0
    error += 0.001 * math.log2(c["batch_size"]) + 0.01 * c["dropout"]
    return error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: temporary)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="hpinsight-smac-"))

    scenario = Scenario(configspace(), deterministic=True, n_trials=args.trials, seed=0,
                        output_directory=out, name="example")
    own = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0)
    theirs = ImportanceCallback(every_n_trials=10, min_trials=20, surrogate=SmacForest())
    smac = HyperparameterOptimizationFacade(scenario, train, overwrite=True, logging_level=40,
                                            callbacks=[own, theirs])
    incumbent = smac.optimize()
    print(f"incumbent error {train(incumbent):.4f} after {len(smac.runhistory)} runs")
    for label, cb in (("hpinsight GP", own), ("SMAC's forest", theirs)):
        print(f"{label:<17} " + " -> ".join(f"{s.n_trials}" for s in cb.history) + " configurations")
        print(f"{'':<17} {cb.history[-1].ranking_line(top=4)}")
        cb.close()
    history = load_run(scenario.output_directory)
    print(f"saved run: {history.n_trials} configurations, result in {own.result_path}")
    print(hp.fanova(history, seed=0).importance("learning_rate"))


if __name__ == "__main__":
    main()
