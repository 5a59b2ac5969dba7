#!/usr/bin/env python
"""Shrink-and-continue against a full-space SMAC run on the same budget.

For each seed, on a 10-parameter function where three parameters matter (a float, a
log float and an int; six nuisance floats move the cost by at most 0.006, one
categorical not at all):

* full: ``HyperparameterOptimizationFacade`` with ``n_trials`` evaluations;
* shrunk: the same scenario (same ``n_trials``, so the same initial design), stopped
  by ``ImportanceCallback(stop_after=shrink_at)`` after a last refit, then
  ``shrink_and_continue(keep=k)`` on the callback's ranking for the remaining
  ``n_trials - shrink_at`` evaluations (old runs already in the subspace are told;
  the incumbent's projection is evaluated again, inside that budget).

Prints one JSON document: per seed the two incumbents' costs (the optimum is 0), the
parameters kept, and the mean over seeds.

    PYTHONHASHSEED=0 python benchmarks/bench_smac_shrink.py          # 3 seeds, 60 trials, shrink at 30
    PYTHONHASHSEED=0 python benchmarks/bench_smac_shrink.py --n-trials 100 --shrink-at 60

SMAC 2.4 repeats a seeded run in a new process only with a fixed hash seed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ConfigSpace as CS
import smac

from hpinsight.integrations.smac import ImportanceCallback, shrink_and_continue

IMPORTANT = ("a", "b", "c")


def space() -> CS.ConfigurationSpace:
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("a", (-3.0, 3.0)), CS.Float("b", (1e-4, 1.0), log=True),
            CS.Integer("c", (0, 20)), CS.Categorical("k", ["p", "q", "r"])]
           + [CS.Float(f"n{i}", (0.0, 1.0)) for i in range(6)])
    return cs


def target(config: Any, seed: int = 0) -> float:
    c = dict(config)
    return (0.25 * (c["a"] - 1.0) ** 2 + (math.log10(c["b"]) + 2.0) ** 2 + 0.02 * (c["c"] - 7) ** 2
            + 1e-3 * sum(c[f"n{i}"] for i in range(6)))


def facade(n_trials: int, seed: int, out: Path, name: str, callbacks: list[Any]) -> Any:
    scenario = smac.Scenario(space(), deterministic=True, n_trials=n_trials, seed=seed,
                             output_directory=out, name=name)
    return smac.HyperparameterOptimizationFacade(scenario, target, overwrite=True,
                                                 logging_level=40, callbacks=callbacks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--n-trials", type=int, default=60)
    parser.add_argument("--shrink-at", type=int, default=30)
    parser.add_argument("--keep", type=int, default=3)
    parser.add_argument("--reevaluate", default="auto", type=lambda v: v if v == "auto" else int(v),
                        help="old configurations projected onto the subspace and evaluated "
                             "again (an int, or 'auto')")
    parser.add_argument("--cap", type=float, default=None,
                        help="rank by importance among the best fraction (cap_quantile)")
    args = parser.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="hpinsight-bench-shrink-"))
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        started = time.perf_counter()
        full = facade(args.n_trials, seed, out, f"full-{seed}", [])
        full_cost = target(full.optimize())
        cb = ImportanceCallback(seed=0, stop_after=args.shrink_at, cap_quantile=args.cap)
        first = facade(args.n_trials, seed, out, f"first-{seed}", [cb])
        first.optimize()
        cb.close()
        ranking = list(cb.history[-1].importances)
        run = shrink_and_continue(first, target, n_trials=args.n_trials - args.shrink_at,
                                  keep=args.keep, importances=ranking,
                                  reevaluate=args.reevaluate)
        shrunk_cost = target(run.facade.optimize())
        rows.append({
            "seed": seed,
            "full_incumbent_cost": full_cost,
            "shrunk_incumbent_cost": shrunk_cost,
            "cost_at_shrink": target(first.intensifier.get_incumbent()),
            "kept": list(run.kept),
            "told": run.n_told,
            "reevaluated": len(run.reevaluated),
            "importances_at_shrink": {n: [round(cb.history[-1].importances[n], 3),
                                          round(cb.history[-1].stds[n], 3)] for n in ranking[:5]},
            "kept_all_important": set(IMPORTANT) <= set(run.kept),
            "seconds": time.perf_counter() - started,
        })
        sys.stderr.write(f"[bench_smac_shrink] {rows[-1]}\n")
    n = len(rows)
    report = {
        "settings": vars(args),
        "runs": rows,
        "mean_full_incumbent_cost": sum(r["full_incumbent_cost"] for r in rows) / n,
        "mean_shrunk_incumbent_cost": sum(r["shrunk_incumbent_cost"] for r in rows) / n,
        "shrunk_at_least_as_good": sum(r["shrunk_incumbent_cost"] <= r["full_incumbent_cost"]
                                       for r in rows),
        "n_seeds": n,
    }
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
