#!/usr/bin/env python
"""Importance in multi-objective studies: per objective and for reaching the Pareto front.

Two-objective functions with known structure, optimized by Optuna's multi-objective
samplers; each study is analysed per objective and for the front, and every main effect
is scored against the truth: the functional ANOVA of the noiseless function (or of the
front's target computed on the noiseless function) under the space's measure, on a
tensor grid over the parameters that act (``GRID`` midpoints per float).

Functions (every parameter a float in [0, 1]; five more parameters do nothing):

* ``split``: two objectives driven by different parameters and one that trades them off:
  ``f0 = 4 (a - 0.3)^2 + t``, ``f1 = 3 (b - 0.7)^2 + (1 - t)``. ``a`` acts on ``f0`` only,
  ``b`` on ``f1`` only, ``t`` on both in opposite directions. Every ``t`` is on the front
  once ``a`` and ``b`` are at their best, so reaching the front is mostly ``a`` and ``b``.
* ``zdt``: ZDT1's shape (Zitzler, Deb & Thiele 2000): ``f0 = t``,
  ``f1 = g (1 - sqrt(t / g))`` with ``g = 1 + 4 ((u - 0.2)^2 + (v - 0.6)^2)``: ``t`` is
  the position along the front, ``u`` and ``v`` its distance from it.

Definitions of "reaching the front" compared (each a value per trial, computed from the
trials' objective values, to which the ordinary single-objective analysis is applied):

* ``share``: the share of the trials that dominate the trial (at least as good in every
  objective, better in one). 0 on the front; with one objective it is the trial's rank.
  Ties (discrete objectives) count as they should: a trial that another equals in one
  objective and beats in the other is dominated.
* ``epsilon``: the additive epsilon indicator (Zitzler et al. 2003) of the trial against
  the front, in units of each objective's quantiles among the trials: how much the trial
  must improve in every objective at once to be dominated by no front trial. A trial that
  a front trial equals in one objective needs no improvement there, so it counts as 0.
* ``ped_anova``: the peer, Optuna 5's default ``PedAnovaImportanceEvaluator`` with
  ``target=None`` (its top 10 % by non-domination rank, ties broken by hypervolume
  subset selection). It estimates another quantity, so only its do-nothing mass and
  whether it ranks the acting parameters on top are comparable.

Scored per (function, sampler, noise), over seeds: the do-nothing mass (the importance
on parameters that do nothing: 0 under every definition), the largest error of a main
effect against the definition's own truth, and the share of stated 90 % intervals
(``mean +- 1.645 std``) that hold the truth.

    python benchmarks/bench_multi_objective.py --table
    python benchmarks/bench_multi_objective.py --seeds 2 --samplers random --table   # quick

One JSON document on stdout (``--out`` also writes it); a Markdown table on stderr with
``--table``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna

import hpinsight as hp
from hpinsight import _pareto
from hpinsight._fanova_result import INTERVAL_Z

optuna.logging.set_verbosity(optuna.logging.WARNING)

GRID = 24
N_NUISANCE = 5
Arr = np.ndarray


@dataclass(frozen=True)
class Problem:
    name: str
    acting: tuple[str, ...]
    f: Callable[[dict[str, Arr]], tuple[Arr, Arr]]

    @property
    def names(self) -> tuple[str, ...]:
        return (*self.acting, *(f"n{i}" for i in range(N_NUISANCE)))


def _split(x: dict[str, Arr]) -> tuple[Arr, Arr]:
    return 4 * (x["a"] - 0.3) ** 2 + x["t"], 3 * (x["b"] - 0.7) ** 2 + (1 - x["t"])


def _zdt(x: dict[str, Arr]) -> tuple[Arr, Arr]:
    g = 1 + 4 * ((x["u"] - 0.2) ** 2 + (x["v"] - 0.6) ** 2)
    return x["t"], g * (1 - np.sqrt(x["t"] / g))


PROBLEMS = {"split": Problem("split", ("a", "b", "t"), _split),
            "zdt": Problem("zdt", ("t", "u", "v"), _zdt)}


# -- the definitions ----------------------------------------------------------------------
def dominated_share(F: Arr) -> Arr:
    """Per row of ``F`` (n, k), minimized: the share of rows that dominate it (the
    definition hpinsight takes for ``objective="front"``)."""
    return _pareto.dominated_share(F, ["minimize"] * F.shape[1])


def _quantiles(F: Arr) -> Arr:
    from scipy.stats import rankdata

    return (rankdata(F, axis=0) - 0.5) / F.shape[0]


def epsilon(F: Arr) -> Arr:
    """Per row: the additive epsilon indicator against the front, in quantile units."""
    Q = _quantiles(F)
    front = Q[dominated_share(F) == 0]
    out = np.empty(Q.shape[0])
    for s in range(0, Q.shape[0], 512):
        gap = (Q[s:s + 512, None, :] - front[None, :, :]).min(axis=2)
        out[s:s + 512] = np.maximum(gap.max(axis=1), 0.0)
    return out


DEFINITIONS: dict[str, Callable[[Arr], Arr]] = {"share": dominated_share, "epsilon": epsilon}


# -- truth --------------------------------------------------------------------------------
def _shares(V: Arr, k: int) -> list[float]:
    """Main-effect shares of variance of a function on a k-dimensional tensor grid."""
    v0, var = V.mean(), V.var()
    if var == 0:
        return [0.0] * k
    return [float(((V.mean(axis=tuple(j for j in range(k) if j != i)) - v0) ** 2).mean() / var)
            for i in range(k)]


_TRUTH: dict[str, dict[str, dict[str, float]]] = {}


def truth(problem: Problem) -> dict[str, dict[str, float]]:
    """Per target (``objective 0``, ``objective 1`` and each definition of the front), the
    true main-effect share of every parameter (0 for those that do nothing)."""
    if problem.name in _TRUTH:
        return _TRUTH[problem.name]
    axis = (np.arange(GRID) + 0.5) / GRID
    mesh = np.meshgrid(*([axis] * len(problem.acting)), indexing="ij")
    f0, f1 = problem.f(dict(zip(problem.acting, mesh, strict=True)))
    targets = {"objective 0": f0, "objective 1": f1}
    F = np.column_stack([f0.ravel(), f1.ravel()])
    for name, define in DEFINITIONS.items():
        targets[name] = define(F).reshape(f0.shape)
    out = {}
    for name, V in targets.items():
        shares = dict(zip(problem.acting, _shares(V, len(problem.acting)), strict=True))
        out[name] = {p: shares.get(p, 0.0) for p in problem.names}
    _TRUTH[problem.name] = out
    return out


# -- studies ------------------------------------------------------------------------------
def run_study(problem: Problem, sampler: str, seed: int, n_trials: int, sigmas: tuple[float, float]
              ) -> optuna.Study:
    rng = np.random.default_rng(10_000 + seed)
    make = {"random": lambda: optuna.samplers.RandomSampler(seed=seed),
            "tpe": lambda: optuna.samplers.TPESampler(seed=seed),
            "nsga2": lambda: optuna.samplers.NSGAIISampler(seed=seed)}
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=make[sampler]())

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        x = {p: np.asarray([trial.suggest_float(p, 0.0, 1.0)]) for p in problem.names}
        f0, f1 = problem.f(x)
        return (float(f0[0]) + float(rng.normal(0.0, sigmas[0])) * (sigmas[0] > 0),
                float(f1[0]) + float(rng.normal(0.0, sigmas[1])) * (sigmas[1] > 0))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=n_trials)
    return study


def _history(study: optuna.Study, y: Arr) -> hp.TrialHistory:
    base = hp.adapters.from_optuna(study, objective=0)
    return hp.TrialHistory(base.space, base.configs, y)


def analyse(problem: Problem, study: optuna.Study, seed: int) -> dict[str, Any]:
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    F = np.array([t.values for t in complete])
    targets = {"objective 0": F[:, 0], "objective 1": F[:, 1]}
    targets.update({name: define(F) for name, define in DEFINITIONS.items()})
    out: dict[str, Any] = {}
    for name, y in targets.items():
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = hp.fanova(_history(study, y), seed=seed)
        out[name] = {"seconds": time.perf_counter() - started,
                     "effects": {p: {"mean": r.importance(p).mean, "std": r.importance(p).std,
                                     "verdict": r.importance(p).verdict} for p in problem.names}}
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ped = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.PedAnovaImportanceEvaluator(), normalize=True)
    out["ped_anova"] = {"seconds": time.perf_counter() - started,
                        "effects": {p: {"mean": float(ped.get(p, 0.0))} for p in problem.names}}
    return out


def run_one(job: tuple[str, str, str, int, int]) -> dict[str, Any]:
    name, sampler, snr_text, seed, n_trials = job
    problem, snr = PROBLEMS[name], float(snr_text)
    axis = (np.arange(GRID) + 0.5) / GRID
    mesh = np.meshgrid(*([axis] * len(problem.acting)), indexing="ij")
    variances = [float(v.var()) for v in problem.f(dict(zip(problem.acting, mesh, strict=True)))]
    sigmas = (0.0, 0.0) if math.isinf(snr) else tuple(math.sqrt(v / snr) for v in variances)
    study = run_study(problem, sampler, seed, n_trials, sigmas)  # type: ignore[arg-type]
    return {"problem": name, "sampler": sampler, "snr": snr_text, "seed": seed,
            "n_trials": n_trials, "analyses": analyse(problem, study, seed)}


# -- scoring ------------------------------------------------------------------------------
def score(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    cells = sorted({(r["problem"], r["sampler"], r["snr"]) for r in runs})
    for problem_name, sampler, snr in cells:
        problem = PROBLEMS[problem_name]
        true = truth(problem)
        cell = [r for r in runs if (r["problem"], r["sampler"], r["snr"]) == (problem_name, sampler, snr)]
        for target in ("objective 0", "objective 1", *DEFINITIONS, "ped_anova"):
            mass, err, covered, n_effects, seconds, top = [], [], 0, 0, [], 0
            for r in cell:
                effects = r["analyses"][target]["effects"]
                means = {p: e["mean"] for p, e in effects.items()}
                total = sum(means.values()) or 1.0
                mass.append(sum(means[p] for p in problem.names if p not in problem.acting) / total)
                seconds.append(r["analyses"][target]["seconds"])
                ranked = sorted(means, key=means.get, reverse=True)  # type: ignore[arg-type]
                if target == "ped_anova":
                    top += set(ranked[:len(problem.acting)]) == set(problem.acting)
                    continue
                truth_t = true[target]
                acting = [p for p in problem.acting if truth_t[p] > 0.02]
                top += set(ranked[:len(acting)]) == set(acting)
                err.append(max(abs(means[p] - truth_t[p]) for p in problem.names))
                for p, e in effects.items():
                    low, high = max(e["mean"] - INTERVAL_Z * e["std"], 0.0), e["mean"] + INTERVAL_Z * e["std"]
                    covered += low - 1e-9 <= truth_t[p] <= high + 1e-9
                    n_effects += 1
            rows.append({
                "problem": problem_name, "sampler": sampler, "snr": snr, "target": target,
                "seeds": len(cell), "nothing_mass_median": float(np.median(mass)),
                "nothing_mass_max": float(np.max(mass)),
                "max_error_median": float(np.median(err)) if err else None,
                "coverage_90": covered / n_effects if n_effects else None,
                "top_found": f"{top}/{len(cell)}",
                "seconds_median": float(np.median(seconds)),
            })
    return rows


def markdown(rows: list[dict[str, Any]], problems: list[str]) -> str:
    lines = []
    for name in problems:
        problem = PROBLEMS[name]
        true = truth(problem)
        lines.append(f"truth, {name}: " + "; ".join(
            f"{t}: " + ", ".join(f"{p} {true[t][p]:.3f}" for p in problem.acting) for t in true))
    lines += ["", "| problem | sampler | SNR | target | seeds | do-nothing mass, median (max) | "
              "largest error, median | 90 % coverage | top found | s per analysis |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        err = "-" if r["max_error_median"] is None else f"{r['max_error_median']:.3f}"
        cov = "-" if r["coverage_90"] is None else f"{100 * r['coverage_90']:.0f}%"
        lines.append(f"| {r['problem']} | {r['sampler']} | {r['snr']} | {r['target']} | {r['seeds']} | "
                     f"{r['nothing_mass_median']:.3f} ({r['nothing_mass_max']:.3f}) | {err} | {cov} | "
                     f"{r['top_found']} | {r['seconds_median']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--problems", default="split,zdt")
    p.add_argument("--samplers", default="random,tpe,nsga2")
    p.add_argument("--snrs", default="inf,4")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default=None)
    p.add_argument("--table", action="store_true")
    args = p.parse_args(argv)
    problems = args.problems.split(",")
    jobs = list(itertools.product(problems, args.samplers.split(","), args.snrs.split(","),
                                  range(args.seeds), [args.trials]))
    runs = []
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        for i, run in enumerate(pool.map(run_one, jobs), 1):
            runs.append(run)
            sys.stderr.write(f"[{i}/{len(jobs)} {time.perf_counter() - started:.0f}s] "
                             f"{run['problem']} {run['sampler']} snr {run['snr']} seed {run['seed']}\n")
    rows = score(runs)
    doc = {"settings": vars(args), "optuna": optuna.__version__, "rows": rows, "runs": runs}
    text = json.dumps(doc, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    sys.stdout.write(text + "\n")
    if args.table:
        sys.stderr.write(markdown(rows, problems) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
