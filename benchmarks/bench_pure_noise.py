#!/usr/bin/env python
"""What does a report claim about an objective that none of its parameters affect?

The objective is Gaussian noise alone: every parameter does nothing, so every effect is
zero, and a report that says a parameter "matters" (or is "small but real") claims what
the trials cannot show. Optimizers make this harder than it looks: a sampler that
chases the lucky draws clusters its trials, and a model that fits the noise finds
structure in it. Ten parameters of the kinds tuning studies have (floats, a log-scale
float, an int, a log-scale int, a categorical of three), optimized by Optuna's random
search, TPE and CMA-ES, each study reported with ``hp.report(study, seed=0)`` as a user
would.

Scored per (sampler, trials), over seeds:

* ``claims``: studies in which the decisions call a parameter "matters" or "small but
  real" (the states that say an effect is real), and how many parameters they name;
* ``resolved``: studies with an effect (a main effect or a pair, over all trials) whose
  verdict is "resolved";
* ``safe``: parameters called "safe to fix" (right here: fixing any of them costs
  nothing), of all;
* peers: the largest share Optuna's ``PedAnovaImportanceEvaluator`` and
  ``FanovaImportanceEvaluator`` give one parameter (their importances sum to 1 and
  carry no interval or verdict; the median over studies).

    python benchmarks/bench_pure_noise.py --seeds 10 --table          # about 20 min on 2 cores
    python benchmarks/bench_pure_noise.py --samplers tpe --trials 100 --seeds 3 --table

One JSON document on stdout (and in ``--out``): every study's decisions, the verdicts of
its resolved effects and the peers' shares; ``--table`` also prints a Markdown table on
stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import optuna

import hpinsight as hp

optuna.logging.set_verbosity(optuna.logging.WARNING)

CLAIMS = ("matters", "small")


def run_study(sampler: str, n_trials: int, seed: int) -> optuna.Study:
    """``n_trials`` of ``sampler`` on pure noise (standard normal, its own generator)."""
    rng = np.random.default_rng(20_000 + seed)

    def objective(trial: optuna.Trial) -> float:
        for j in range(4):
            trial.suggest_float(f"f{j}", 0.0, 1.0)
        trial.suggest_float("lr", 1e-5, 1e-1, log=True)
        trial.suggest_int("layers", 1, 8)
        trial.suggest_int("units", 16, 512, log=True)
        trial.suggest_categorical("optimizer", ["adam", "sgd", "rmsprop"])
        for j in range(2):
            trial.suggest_float(f"g{j}", -3.0, 3.0)
        return float(rng.normal())

    samplers = {"random": lambda: optuna.samplers.RandomSampler(seed=seed),
                "tpe": lambda: optuna.samplers.TPESampler(seed=seed),
                "cmaes": lambda: optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=10,
                                                              warn_independent_sampling=False)}
    study = optuna.create_study(sampler=samplers[sampler]())
    study.optimize(objective, n_trials=n_trials)
    return study


def run_one(job: tuple[str, int, int]) -> dict[str, Any]:
    sampler, n_trials, seed = job
    study = run_study(sampler, n_trials, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hp.report(study, seed=0)
        peers = {}
        for name, evaluator in (("ped_anova", optuna.importance.PedAnovaImportanceEvaluator()),
                                ("optuna_fanova", optuna.importance.FanovaImportanceEvaluator(seed=0))):
            shares = optuna.importance.get_param_importances(study, evaluator=evaluator, normalize=True)
            peers[name] = max(shares.values()) if shares else 0.0
    resolved = [" x ".join(i.params) for i in rep.result.ranking() if i.verdict == "resolved"]
    return {"sampler": sampler, "n_trials": n_trials, "seed": seed,
            "states": {k: d.state for k, d in rep.decisions.decisions.items()},
            "resolved": resolved, "fit_r2": rep.result.fit_r2, "peers": peers,
            "held_out_ranks": [round(m.held_out_rank, 4) for m in getattr(rep.result.model, "refits", ())
                               if m.held_out_rank is not None],
            "held_out_rank": rep.result.held_out_rank, "held_out_bound": rep.result.held_out_bound,
            "n_refits": rep.result.n_refits}


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (sampler, trials): the scores of the module docstring."""
    cells: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        cells.setdefault((row["sampler"], row["n_trials"]), []).append(row)
    table = []
    for (sampler, n_trials), runs in sorted(cells.items()):
        claimed = [sum(s in CLAIMS for s in r["states"].values()) for r in runs]
        states = Counter(s for r in runs for s in r["states"].values())
        table.append({
            "sampler": sampler, "trials": n_trials, "studies": len(runs),
            "studies_with_claims": sum(c > 0 for c in claimed), "params_claimed": sum(claimed),
            "studies_with_resolved": sum(bool(r["resolved"]) for r in runs),
            "safe_share": states["fix"] / max(sum(states.values()), 1),
            "ped_anova_top": float(np.median([r["peers"]["ped_anova"] for r in runs])),
            "optuna_fanova_top": float(np.median([r["peers"]["optuna_fanova"] for r in runs])),
        })
    return table


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| sampler | trials | studies | claims (studies / parameters) | a resolved effect | safe to fix | PED-ANOVA top share | Optuna fANOVA top share |",
             "|---|---|---|---|---|---|---|---|"]
    for t in table:
        lines.append(f"| {t['sampler']} | {t['trials']} | {t['studies']} | {t['studies_with_claims']} / "
                     f"{t['params_claimed']} | {t['studies_with_resolved']} | {t['safe_share']:.0%} | "
                     f"{t['ped_anova_top']:.2f} | {t['optuna_fanova_top']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samplers", default="random,tpe,cmaes")
    ap.add_argument("--trials", default="100,200")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="studies run at once (processes)")
    ap.add_argument("--out")
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args(argv)
    jobs = [(s, int(n), seed) for s in args.samplers.split(",") for n in args.trials.split(",")
            for seed in range(args.first_seed, args.first_seed + args.seeds)]
    rows = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for k, row in enumerate(pool.map(run_one, jobs), 1):
            rows.append(row)
            print(f"[{k}/{len(jobs)}] {row['sampler']} {row['n_trials']} seed {row['seed']}: "
                  f"{sum(s in CLAIMS for s in row['states'].values())} claimed, "
                  f"{len(row['resolved'])} resolved", file=sys.stderr, flush=True)
    doc = {"hpinsight": hp.__version__, "optuna": optuna.__version__, "runs": rows, "table": summarize(rows)}
    text = json.dumps(doc, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)
    if args.table:
        print(markdown(doc["table"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
