"""A PDP you can trust: bands, confidence regions, and the incumbent's region handed back.

A TPE study samples where it expects good results, so its surrogate is sure there and
guesses elsewhere (Moosbauer et al., 2021). This script

1. runs a TPE study on a 4-parameter function,
2. draws the PDP of the most important parameter with its 95 % band,
3. splits the space into regions where the PDP is more certain and finds the
   incumbent's region,
4. turns that region into a narrowed search space and continues the study in it,
5. saves the figure (PNG) next to the script or where ``--out`` says.

    python examples/pdp_confidence_regions.py [--trials 80] [--out pdp.png]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import optuna

import hpinsight as hp


def objective(trial: optuna.Trial) -> float:
    lr = trial.suggest_float("lr", 1e-5, 1.0, log=True)
    depth = trial.suggest_int("depth", 1, 12)
    dropout = trial.suggest_float("dropout", 0.0, 0.8)
    act = trial.suggest_categorical("activation", ["relu", "tanh", "gelu"])
    bump = {"relu": 0.0, "tanh": 0.3, "gelu": -0.1}[act]
    return ((math.log10(lr) + 2.5) ** 2 + 0.04 * (depth - 6) ** 2
            + 2.0 * (dropout - 0.2) ** 2 * (1 + depth / 6) + bump)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=80)
    p.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".png"))
    args = p.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(objective, n_trials=args.trials)
    result = hp.fanova(hp.adapters.from_optuna(study), seed=0)
    top = result.ranking(order=1)[0].params[0]
    print(f"most important: {top} ({result.importance(top)})")

    pd = hp.partial_dependence(result, params=top, n_samples=1000, seed=0)
    tree = hp.confidence_split(pd, max_splits=3)
    region = tree.leaf_for(study.best_params)
    where = " and ".join(region.conditions) or "the whole space"
    print(f"global PDP: mean confidence (std) {pd.mean_confidence:.3f}")
    print(f"incumbent's region: {where}; {region.n_samples} of {pd.n_samples} samples, "
          f"mean confidence {region.mean_confidence:.3f} "
          f"({tree.delta_improvement(region):.0%} narrower than the global band)")

    fig, axes = plt.subplots(1, 2, figsize=(16, 4.4))
    pd.plot(ax=axes[0], ice=15, marks={"incumbent": study.best_params[top]})
    tree.plot(ax=axes[1], highlight=dict(study.best_params))
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    plt.close(fig)
    print(f"figure: {args.out}")

    narrowed = tree.to_search_space(region)
    before = study.best_value
    # Optuna fixes a parameter's distribution for the life of a study, and the region may
    # narrow a categorical's choices: continue in a new study of the region, started at
    # the incumbent, ask-and-tell
    inside = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1))
    inside.enqueue_trial(dict(study.best_params))
    for _ in range(20):
        trial = inside.ask()
        for param in narrowed.params:
            if isinstance(param, hp.Categorical):
                trial.suggest_categorical(param.name, list(param.choices))
            elif isinstance(param, hp.Int):
                trial.suggest_int(param.name, param.low, param.high, log=param.log)
            else:
                trial.suggest_float(param.name, param.low, param.high, log=param.log)
        inside.tell(trial, objective(optuna.trial.FixedTrial(trial.params)))
    print(f"20 more trials in the region: best {before:.4f} -> {min(before, inside.best_value):.4f}")


if __name__ == "__main__":
    main()
