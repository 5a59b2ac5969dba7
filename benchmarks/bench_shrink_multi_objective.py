#!/usr/bin/env python
"""Shrinking a study of two objectives: is fixing only what every objective can spare
safe, and what does fixing by one objective alone do to the other? Known truth.

The problem, ``split10`` (10 floats in [0, 1], both objectives minimized)::

    error   = 10 (a - 0.3)^2 + t       + 0.3 |c - 0.5|
    latency = 10 (b - 0.6)^2 + (1 - t) + 0.3 |c - 0.5|

``a`` drives the first objective alone, ``b`` the second alone, ``t`` trades one for the
other (it moves trials along the front), ``c`` is a small V shared by both, and six
nuisance floats do nothing. The true Pareto front is the segment ``error + latency = 1``
(``a = 0.3``, ``b = 0.6``, ``c = 0.5``, any ``t``); its hypervolume against the
reference point (2, 2) is 3.5. The outcome is the **hypervolume gap** of the trials so
far (3.5 minus their hypervolume; lower is better) at 100 and 200 trials.

Arms, per sampler and seed, on the same sampler seed:

* ``full``: the sampler on the full space;
* ``auto``: ``ShrinkingSampler(sampler)`` with ``ImportanceCallback(shrink_to="auto")``:
  from trial 50, every 50 trials, a parameter is fixed only when it is safe to fix for
  both objectives (:mod:`hpinsight._joint`);
* ``one``: the same schedule, but each decision is ``suggest_subspace`` of the first
  objective alone, as a rule that looks at one objective would take it (what
  ``shrink_to="auto", objective=0`` did before decisions covered every objective): it
  may fix ``b``, which the first objective does not see.

With ``--snr``, the optimizer sees each objective with Gaussian noise of that
signal-to-noise ratio and the gap is measured on the true values. Prints one JSON
document (every study) to stdout, progress and the table to stderr::

    python benchmarks/bench_shrink_multi_objective.py --seeds 10 --table --out mo_shrink.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import optuna

NUISANCE = tuple(f"n{i}" for i in range(6))
PARAMS = ("a", "b", "t", "c", *NUISANCE)
REFERENCE = (2.0, 2.0)
BEST_HYPERVOLUME = 3.5  # the segment error + latency = 1 against (2, 2): 4 - 0.5
ARMS = ("full", "auto", "one")
BUDGETS = (100, 200)


#: Standard deviation of each objective over the space, by Monte Carlo (2^20 uniform
#: points): the noise of ``--snr`` is this over the signal-to-noise ratio.
OBJECTIVE_SD = (1.406, 0.986)


def split10(trial: optuna.Trial) -> tuple[float, float]:
    x = {name: trial.suggest_float(name, 0.0, 1.0) for name in PARAMS}
    shared = 0.3 * abs(x["c"] - 0.5)
    return (10 * (x["a"] - 0.3) ** 2 + x["t"] + shared,
            10 * (x["b"] - 0.6) ** 2 + (1 - x["t"]) + shared)


def noisy(snr: float, seed: int) -> Any:
    """``split10`` observed with Gaussian noise of sd ``OBJECTIVE_SD / snr`` (none for an
    infinite ratio); the true values are kept in the trial's user attribute ``true``,
    which the outcome is measured on."""
    rng = np.random.default_rng([seed, 0x5E])

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        true = split10(trial)
        trial.set_user_attr("true", list(true))
        if math.isinf(snr):
            return true
        return tuple(float(v + rng.normal(0.0, sd / snr))
                     for v, sd in zip(true, OBJECTIVE_SD, strict=True))  # type: ignore[return-value]
    return objective


def hypervolume_2d(points: np.ndarray, reference: tuple[float, float] = REFERENCE) -> float:
    """The area dominated by ``points`` (minimized) and bounded by ``reference``."""
    inside = points[(points[:, 0] < reference[0]) & (points[:, 1] < reference[1])]
    if inside.size == 0:
        return 0.0
    order = np.lexsort((inside[:, 1], inside[:, 0]))
    area, best_second = 0.0, reference[1]
    for first, second in inside[order]:  # by the first objective, each step a rectangle
        if second < best_second:
            area += (reference[0] - first) * (best_second - second)
            best_second = second
    return float(area)


def make_sampler(kind: str, seed: int) -> optuna.samplers.BaseSampler:
    if kind == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


class OneObjectiveShrink:
    """The ``one`` arm: every ``every`` trials, fix what is safe to fix for the first
    objective alone (never released, as the callback never fixes a released one)."""

    def __init__(self, every: int, seed: int) -> None:
        self.every, self.seed = every, seed
        self.decisions: list[dict[str, Any]] = []

    def __call__(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        import hpinsight as hp
        from hpinsight.integrations.optuna import read_restriction, restrict

        n = len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)))
        if n % self.every:
            return
        sub = hp.suggest_subspace(hp.adapters.from_optuna(study, objective=0), seed=self.seed)
        held = read_restriction(study)
        new = {k: v for k, v in sub.fixed.items() if k not in held}
        if new:
            restrict(study, {**held, **new}, why=f"first objective alone after {n} trials",
                     after_trial=trial.number)
        self.decisions.append({"trial": n, "fixed_now": new})


def run(sampler: str, arm: str, seed: int, budget: int, every: int,
        snr: float = math.inf) -> dict[str, Any]:
    from hpinsight.integrations.optuna import ImportanceCallback, ShrinkingSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    started = time.perf_counter()
    base = make_sampler(sampler, seed)
    out: dict[str, Any] = {"sampler": sampler, "arm": arm, "seed": seed,
                           "snr": None if math.isinf(snr) else snr}
    objective = noisy(snr, seed)
    if arm == "full":
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=base)
        study.optimize(objective, n_trials=budget)
    else:
        study = optuna.create_study(directions=["minimize", "minimize"],
                                    sampler=ShrinkingSampler(base))
        if arm == "auto":
            cb: Any = ImportanceCallback(every_n_trials=budget + 1, min_trials=budget + 1,
                                         shrink_to="auto", shrink_after=every, seed=seed,
                                         publish=False)
            study.optimize(objective, n_trials=budget, callbacks=[cb])
            cb.close(600)
            if cb.errors:
                raise RuntimeError(f"{sampler}/{seed}: {cb.errors!r}")
        else:
            cb = OneObjectiveShrink(every, seed)
            study.optimize(objective, n_trials=budget, callbacks=[cb])
        out["log"] = [{k: d.get(k) for k in ("action", "params", "after_trial")}
                      for d in study.user_attrs.get("hpinsight:decisions", [])]
    values = np.array([t.user_attrs["true"] for t in study.trials if t.values is not None])
    out["gap"] = {str(b): BEST_HYPERVOLUME - hypervolume_2d(values[:b]) for b in BUDGETS
                  if b <= budget}
    out["fixed"] = sorted({n for d in out.get("log", []) if d.get("action") == "fix"
                           for n in (d.get("params") or {})})
    out["seconds"] = time.perf_counter() - started
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| sampler | trials | full: HV gap (median) | auto: gap, paired ratio to full, "
             "fixed | one objective: gap, ratio, fixed |", "|---|---|---|---|---|"]
    # gap: median over seeds; ratio: median of each seed's gap over its full arm's;
    # fixed: nuisance parameters fixed per study (mean), others in how many studies
    for sampler in sorted({r["sampler"] for r in rows}):
        by = {(r["arm"], r["seed"]): r for r in rows if r["sampler"] == sampler}
        seeds = sorted({s for _, s in by})
        for b in map(str, BUDGETS):
            cells = []
            full = [by[("full", s)]["gap"][b] for s in seeds if ("full", s) in by]
            cells.append(f"{statistics.median(full):.3f}")
            for arm in ("auto", "one"):
                got = [(by[(arm, s)], by[("full", s)]) for s in seeds
                       if (arm, s) in by and ("full", s) in by]
                if not got:
                    cells.append("-")
                    continue
                ratios = [r["gap"][b] / f["gap"][b] for r, f in got if f["gap"][b] > 0]
                fixed: dict[str, int] = {}
                for r, _ in got:
                    for n in r["fixed"]:
                        if n not in NUISANCE:
                            fixed[n] = fixed.get(n, 0) + 1
                nuisance = statistics.fmean(sum(n in NUISANCE for n in r["fixed"]) for r, _ in got)
                named = ", ".join([f"{nuisance:.1f} of {len(NUISANCE)} nuisance"]
                                  + [f"{n} in {k}/{len(got)}" for n, k in sorted(fixed.items())])
                cells.append(f"{statistics.median(r['gap'][b] for r, _ in got):.3f}, "
                             f"{statistics.median(ratios):.2f}x, {named or 'none'}")
            lines.append(f"| {sampler} | {b} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samplers", default="tpe,nsga2")
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--every", type=int, default=50, help="trials between decisions (50)")
    p.add_argument("--snr", type=float, default=math.inf,
                   help="signal-to-noise ratio of the observed objectives (default: no noise); "
                        "the outcome is measured on the true values")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--table", action="store_true", help="print the table to stderr")
    p.add_argument("--out", default=None, help="also write the JSON here")
    args = p.parse_args(argv)
    jobs = [(s, a, seed, args.budget, args.every, args.snr) for s in args.samplers.split(",")
            for a in args.arms.split(",") for seed in range(args.seeds)]
    rows = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for row in pool.map(run, *zip(*jobs, strict=True)):
            print(f"[mo_shrink] {row['sampler']} {row['arm']} seed {row['seed']}: gap "
                  f"{row['gap']} fixed {row['fixed']} ({row['seconds']:.0f} s)",
                  file=sys.stderr, flush=True)
            rows.append(row)
    doc = {"command": " ".join(sys.argv), "optuna": optuna.__version__, "rows": rows}
    text = json.dumps(doc, indent=1, allow_nan=False, default=lambda o: None
                      if isinstance(o, float) and math.isnan(o) else str(o))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)
    if args.table:
        print(table(rows), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
