#!/usr/bin/env python
"""Why ``shrink_to="auto"`` acts, or not, at its first decision: the grounds it keeps
parameters that do nothing tuned on.

Issue 25 asks shrinking to act (fix at least half of the parameters that do nothing) by
trial 100 in 80 % of runs. ``bench_shrink.py`` reports whether it did; this says why not.
For each problem of ``bench_shrink.py`` with known truth, sampler and seed, the base
sampler runs in the full space up to the callback's first decision point
(``--shrink-after`` trials, or the trials the library needs before it can fix,
``min(5 d, max(50, d**2 / 8))`` on d parameters, if that is later: 50 on ``v10``,
``cond``, ``optim`` and ``sparse20``, 200 on ``sparse40``), and :func:`hpinsight.suggest_subspace` decides on those
trials with the callback's settings (its seed is the study's). Every decision on a
parameter whose true cost of fixing is 0 (the problem's ``nuisance``) is tallied by the
ground it rests on (:attr:`ParameterDecision.grounds` and its state):

* ``fixed``: safe to fix (``kept``: safe, but kept so that one parameter stays tuned);
* ``no signal among the best``: most refits of the analysis of the best 25 % find no
  signal, and an effect there is not ruled out;
* ``cost quantile``: no effect found, but the cost's ``confidence`` quantile exceeds the
  margin;
* ``size``: an effect below 0.05 % of the variance but too large in objective units to
  call nothing;
* ``hidden``, ``noise``, ``disputed``, ``missed``: the other grounds of "not yet safe";
* ``uncertain effect`` / ``resolved effect``: an effect it takes part in is uncertain
  ("not resolved yet") or resolved ("small but real", "matters");
* ``not enough data``: active in fewer than 10 of the trials (the sampler left its branch).

Run (10 seeds of three samplers on three problems, about 3 minutes on 2 cores; the
table is in ``benchmarks/README.md``)::

    PYTHONHASHSEED=0 python benchmarks/bench_first_decision.py --problems cond,optim,v10 \\
        --samplers tpe,cmaes,random --seeds 10 --table > first.json

Prints a JSON document (every decision with its state, evidence, cost quantile and
margin) and, with ``--table``, a Markdown table on stderr.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import optuna

from hpinsight._decision_result import min_trials_to_fix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_shrink import PROBLEMS, make_sampler

GROUNDS = ("fixed", "kept", "no signal among the best", "cost quantile", "size", "hidden",
           "noise", "disputed", "missed", "uncertain effect", "resolved effect",
           "not enough data", "other")


def ground(d: Any, margin: float) -> str:
    """The ground a decision on a parameter that does nothing rests on (see above)."""
    from hpinsight._decision_result import NO_SIGNAL_AMONG_BEST

    if d.state in ("fix", "kept"):
        return "fixed" if d.state == "fix" else "kept"
    if d.state == "no_data":
        return "not enough data"
    if d.grounds == NO_SIGNAL_AMONG_BEST:  # "unresolved" or "not_yet_safe"
        return "no signal among the best"
    if d.state == "unresolved":
        return "uncertain effect"
    if d.state in ("small", "matters"):
        return "resolved effect" if d.grounds != "cost" else "cost quantile"
    if d.grounds in ("size", "hidden", "noise", "disputed", "missed"):
        return str(d.grounds)
    if math.isfinite(d.cost_upper) and d.cost_upper > margin:
        return "cost quantile"
    return "other"


def first_decision(problem_name: str, sampler: str, seed: int,
                   shrink_after: int) -> dict[str, Any]:
    """One study up to its first decision point, and the decisions there."""
    import hpinsight as hp

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem = PROBLEMS[problem_name]
    started = time.perf_counter()
    study = optuna.create_study(sampler=make_sampler(sampler, seed))
    study.optimize(problem, n_trials=shrink_after)
    n_params = len({n for t in study.trials for n in t.params})
    first = max(shrink_after, min_trials_to_fix(n_params))
    study.optimize(problem, n_trials=first - shrink_after)
    decisions = hp.suggest_subspace(study, seed=seed).decisions
    rows = {d.param: {"state": d.state, "evidence": d.evidence,
                      "cost_upper": d.cost_upper if math.isfinite(d.cost_upper) else None,
                      "ground": ground(d, decisions.margin)}
            for d in decisions if d.param in problem.nuisance}
    return {"problem": problem_name, "sampler": sampler, "seed": seed, "trials": first,
            "margin": decisions.margin, "decisions": rows,
            "seconds": time.perf_counter() - started}


def table(runs: list[dict[str, Any]]) -> str:
    """Per problem and sampler: how often the first decision acts, and the grounds."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for r in runs:
        cells[(r["problem"], r["sampler"])].append(r)
    shown = [g for g in GROUNDS if any(d["ground"] == g for r in runs
                                       for d in r["decisions"].values())]
    lines = ["| problem | sampler | trials | acts (half or more fixed) | margin (median) | "
             + " | ".join(shown) + " |", "|---" * (5 + len(shown)) + "|"]
    for (problem, sampler), rs in sorted(cells.items()):
        counts = collections.Counter(d["ground"] for r in rs for d in r["decisions"].values())
        acts = sum(2 * sum(d["ground"] == "fixed" for d in r["decisions"].values())
                   >= len(r["decisions"]) for r in rs)
        margins = sorted(r["margin"] for r in rs)
        lines.append(f"| {problem} | {sampler} | {rs[0]['trials']} | {acts} of {len(rs)} | "
                     f"{margins[len(margins) // 2]:.3g} | "
                     + " | ".join(str(counts.get(g, 0)) for g in shown) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problems", default="cond,optim,v10")
    p.add_argument("--samplers", default="tpe")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--shrink-after", type=int, default=50)
    p.add_argument("--workers", type=int, default=2, help="studies run at once (processes)")
    p.add_argument("--table", action="store_true", help="also print a Markdown table (stderr)")
    args = p.parse_args(argv)
    for name in args.problems.split(","):
        if not getattr(PROBLEMS.get(name), "known_truth", False):
            p.error(f"{name!r} has no known truth; choose among "
                    f"{[n for n, x in PROBLEMS.items() if x.known_truth]}")
    jobs = [(prob, smp, seed, args.shrink_after) for prob in args.problems.split(",")
            for smp in args.samplers.split(",") for seed in range(args.seeds)]
    runs = []
    with concurrent.futures.ProcessPoolExecutor(args.workers) as pool:
        for i, run in enumerate(pool.map(first_decision, *zip(*jobs, strict=True)), 1):
            runs.append(run)
            print(f"[{i}/{len(jobs)}] {run['problem']} {run['sampler']} seed {run['seed']}",
                  file=sys.stderr, flush=True)
    print(json.dumps({"settings": vars(args), "runs": runs, "optuna": optuna.__version__},
                     indent=1))
    if args.table:
        print(table(runs), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
