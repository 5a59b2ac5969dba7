#!/usr/bin/env python
"""Optimizing on the suggested subspace against the full space (Hutter et al. 2014, Sec. 4.4).

On a 10-parameter function where three parameters matter (a float, a log float and an
int; six nuisance floats move the value by at most 0.006, one categorical not at all;
the optimum is 0), per sampler (TPE, random search) and seed:

* pilot: ``n_pilot`` random-search trials (the "logged performance data" of Sec. 3.3),
  analysed by ``suggest_subspace`` and by the plain fANOVA ranking;
* full: a fresh study on the full space;
* auto: a fresh study with the parameters ``suggest_subspace`` fixed held at their
  defaults (the pilot's most frequent settings among its best trials);
* top3: a fresh study with all but the pilot's three most important parameters fixed at
  the pilot's best values (Sec. 4.4 keeps the top-k);
* live: one study on the full space with ``ImportanceCallback(shrink_to="auto",
  shrink_after=shrink_at)``, run in chunks of ``every`` trials so the shrink happens at
  the same trial in every run.

All fresh studies use the same sampler seed. Reported per sampler: the mean over seeds
of the best value after ``n_trials`` and after a quarter and half of them, and the
trials each variant needed to reach the full study's best after half the budget and at
the end (``n_trials + 1`` when it never did). One JSON document on stdout; one line per seed on stderr.

    python benchmarks/bench_subspace.py                  # 5 seeds, 200 trials, pilot 100
    python benchmarks/bench_subspace.py --seeds 10 --n-trials 300
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from typing import Any

import numpy as np
import optuna

import hpinsight as hp
from hpinsight.integrations.optuna import (
    ImportanceCallback,
    ShrinkingSampler,
    read_restriction,
    restrict,
)

IMPORTANT = ("a", "b", "c")


def objective(t: optuna.Trial) -> float:
    a = t.suggest_float("a", -3, 3)
    b = t.suggest_float("b", 1e-4, 1, log=True)
    c = t.suggest_int("c", 0, 20)
    rest = [t.suggest_float(f"n{i}", 0, 1) for i in range(6)]
    t.suggest_categorical("k", ["p", "q", "r"])
    return (a - 1) ** 2 + (math.log10(b) + 2) ** 2 + 0.05 * (c - 7) ** 2 + 1e-3 * sum(rest)


def make_sampler(kind: str, seed: int) -> optuna.samplers.BaseSampler:
    if kind == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    return optuna.samplers.RandomSampler(seed=seed)


def best_curve(study: optuna.Study) -> list[float]:
    out, best = [], math.inf
    for t in study.trials:
        best = min(best, t.value if t.value is not None else math.inf)
        out.append(best)
    return out


def fresh(kind: str, seed: int, n_trials: int, fixed: dict[str, Any]) -> list[float]:
    study = optuna.create_study(sampler=ShrinkingSampler(make_sampler(kind, seed)))
    if fixed:
        restrict(study, fixed, why="benchmark")
    study.optimize(objective, n_trials=n_trials)
    return best_curve(study)


def live(kind: str, seed: int, args: argparse.Namespace) -> tuple[list[float], dict[str, Any]]:
    cb = ImportanceCallback(every_n_trials=args.every, min_trials=args.every, seed=seed, shrink_to="auto",
                            shrink_after=args.shrink_at, publish=False)
    study = optuna.create_study(sampler=ShrinkingSampler(make_sampler(kind, seed)))
    while len(study.trials) < args.n_trials:
        study.optimize(objective, n_trials=min(args.every, args.n_trials - len(study.trials)),
                       callbacks=[cb])
        cb.wait(300)
    cb.close(300)
    if cb.errors:
        raise RuntimeError(f"live refits failed: {cb.errors!r}")
    return best_curve(study), read_restriction(study)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--n-trials", type=int, default=200)
    p.add_argument("--n-pilot", type=int, default=100)
    p.add_argument("--shrink-at", type=int, default=100)
    p.add_argument("--every", type=int, default=10)
    p.add_argument("--n-trees", type=int, default=64)
    p.add_argument("--samplers", default="tpe,random")
    args = p.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    report: dict[str, Any] = {"settings": vars(args), "samplers": {}}
    n = args.n_trials
    variants = ("full", "auto", "top3", "live")
    for kind in args.samplers.split(","):
        rows = []
        all_curves: dict[str, list[list[float]]] = {v: [] for v in variants}
        for seed in range(args.seeds):
            pilot = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1000 + seed))
            pilot.optimize(objective, n_trials=args.n_pilot)
            history = hp.adapters.from_optuna(pilot)
            sub = hp.suggest_subspace(history, seed=seed)
            ranked = [i.params[0] for i in hp.fanova(history, seed=seed).ranking(order=1)]
            top3_fixed = {k: pilot.best_params[k] for k in ranked[3:]}
            curves = {
                "full": fresh(kind, seed, n, {}),
                "auto": fresh(kind, seed, n, sub.fixed),
                "top3": fresh(kind, seed, n, top3_fixed),
            }
            curves["live"], live_fixed = live(kind, seed, args)
            for name in variants:
                all_curves[name].append(curves[name])
            targets = {"full": curves["full"][-1], "full_half": curves["full"][n // 2 - 1]}
            row: dict[str, Any] = {"seed": seed}
            for name in variants:
                curve = curves[name]
                row[name] = curve[-1]
                row[f"{name}_quarter"] = curve[n // 4 - 1]
                row[f"{name}_half"] = curve[n // 2 - 1]
                for key, target in targets.items():
                    row[f"{name}_trials_to_{key}"] = next(
                        (i + 1 for i, v in enumerate(curve) if v <= target), n + 1)
            for name, fixed in (("auto", sub.fixed), ("top3", top3_fixed),
                                ("live", live_fixed)):
                row[f"{name}_fixed"] = sorted(fixed)
                row[f"{name}_fixed_important"] = sorted(set(fixed) & set(IMPORTANT))
            rows.append(row)
            print(json.dumps({"sampler": kind, **row}), file=sys.stderr, flush=True)
        summary: dict[str, Any] = {"n_seeds": len(rows)}
        for name in variants:
            for suffix in ("", "_quarter", "_half", "_trials_to_full", "_trials_to_full_half"):
                summary[f"mean_{name}{suffix}"] = statistics.fmean(
                    r[f"{name}{suffix}"] for r in rows)
            if name != "full":
                summary[f"{name}_reached_full"] = sum(
                    r[f"{name}_trials_to_full"] <= n for r in rows)
                summary[f"{name}_better_than_full"] = sum(r[name] < r["full"] for r in rows)
                summary[f"{name}_mean_fixed"] = statistics.fmean(
                    len(r[f"{name}_fixed"]) for r in rows)
                summary[f"{name}_fixed_an_important_one"] = sum(
                    bool(r[f"{name}_fixed_important"]) for r in rows)
        # geometric-mean curves over seeds (the values span orders of magnitude), and the
        # trials each variant's curve needs to reach the full curve's value at n/2 and n
        gm = {v: np.exp(np.mean(np.log(np.maximum(all_curves[v], 1e-12)), axis=0))
              for v in variants}
        for name in variants:
            summary[f"gmean_{name}_quarter_half_end"] = [
                float(gm[name][n // 4 - 1]), float(gm[name][n // 2 - 1]), float(gm[name][-1])]
            for key, t in (("half", n // 2 - 1), ("end", n - 1)):
                hit = np.nonzero(gm[name] <= gm["full"][t])[0]
                summary[f"gmean_{name}_trials_to_full_{key}"] = int(hit[0]) + 1 if hit.size \
                    else n + 1
        report["samplers"][kind] = {"summary": summary, "seeds": rows}
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
