#!/usr/bin/env python
"""Speed at every size: hpinsight's surrogates next to the fANOVA peers, in one run.

Every (cell, tool) pair runs in its own child process, so each gets a clean interpreter,
its own peak memory and a wall-clock limit. A cell is a number of trials, a number of
parameters and the effects asked for (main effects, or all pairs). The clock runs from
the data in memory (a pandas DataFrame and the objective values; for Optuna's
evaluators, a study that already holds the trials) to the importances; each child first
makes one untimed call on 50 trials, so every tool is timed warm. With PED-ANOVA among the
peers, the table gives the default's time as a multiple of PED-ANOVA's in the same run.
Prints one JSON document to stdout; progress goes to stderr.

    python benchmarks/bench_scale.py                                   # ours only
    python benchmarks/bench_scale.py --cells main_1k_x8,main_1k_x10,noisy_200_x40,main_10k_x30 \
        --tools hp_gp,hp_evaluator,hp_forest --peers ped_anova --markdown   # the default / PED-ANOVA
    python benchmarks/bench_scale.py --cells main_200_x20,noisy_200_x40 --tools hp_gp,hp_subspace --markdown
    python benchmarks/bench_scale.py --cells demo_150,report_50_x200 --tools hp_gp,hp_report \
        --peers ped_anova --markdown                                    # the reports' targets
    python benchmarks/bench_scale.py --peers optuna_fanova,fast_fanova,ped_anova \\
        --automl-python /path/to/venv/bin/python --markdown            # with the peers

See benchmarks/README.md ("bench_scale.py") for the table and how to install the peers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_fanova import float_space, objective  # the same data as bench_fanova

#: name: (trials, parameters, largest order, target seconds; NaN: a target relative to
#: PED-ANOVA's time, ``PED_TARGET``)
CELLS: dict[str, tuple[int, int, int, float]] = {
    "main_1k_x8": (1_000, 8, 1, float("nan")),
    "main_1k_x10": (1_000, 10, 1, float("nan")),
    "main_200_x20": (200, 20, 1, float("nan")),
    # the demo's study (examples/demo_optuna_sqlite.py: 150 TPE trials, seed 0, six
    # parameters, one conditional) and 50 trials of 200 parameters: the report's targets
    "demo_150": (150, 6, 1, 2.0),
    "report_50_x200": (50, 200, 1, 15.0),
    "noisy_200_x40": (200, 40, 1, float("nan")),
    "main_10k_x30": (10_000, 30, 1, 5.0),
    "pairs_2k_x10": (2_000, 10, 2, 5.0),
    "pairs_5k_x76": (5_000, 76, 2, 60.0),
    "main_100k_x100": (100_000, 100, 1, 60.0),
}
MEMORY_TARGET_MIB = {"main_100k_x100": 2048.0}
#: Noise added to a cell's objective, as a multiple of the objective's standard deviation
#: (0.5: a signal-to-noise ratio of 4, by variance).
NOISE = {"noisy_200_x40": 0.5}
#: The default's time as a multiple of PED-ANOVA's, measured in the same run, that the
#: cells without a target in seconds aim at (issue: at most 10x; 4x at 10,000 x 30).
PED_TARGET = {"main_1k_x8": 10.0, "main_1k_x10": 10.0, "noisy_200_x40": 10.0, "main_10k_x30": 4.0}
#: Trials of the untimed warm-up call each child makes first, so that both sides are
#: timed warm (imports and first-call set-up are not the analysis; PED-ANOVA's first
#: call costs about 0.18 s of them, more than ten of its analyses at 1,000 x 8).
WARM_UP_TRIALS = 50
OURS = ("hp_gp", "hp_forest", "hp_forest_one_core", "hp_subspace", "hp_report", "hp_evaluator")
PEERS = ("optuna_fanova", "fast_fanova", "ped_anova", "automl_fanova")
#: these give main effects only (Optuna's evaluator interface)
MAIN_ONLY = {"optuna_fanova", "fast_fanova", "ped_anova", "hp_evaluator"}
TOOL_TEXT = {
    "hp_gp": "hpinsight, default (Gaussian process, 16 draws, with verdicts)",
    "hp_evaluator": "hpinsight's Optuna evaluator, default model, through "
                    "optuna.importance.get_param_importances as the Optuna peers are timed",
    "hp_forest": "hpinsight, surrogate=hp.Forest(n_jobs=-1) (64 trees)",
    "hp_forest_one_core": "hpinsight, surrogate=hp.Forest() (64 trees, one core)",
    "hp_subspace": "hpinsight.suggest_subspace, default model: what a shrink decision costs "
                   "(the importances, then every parameter's cost of fixing)",
    "hp_report": "hpinsight.report and its HTML page, default model (analysis + page)",
    "optuna_fanova": "Optuna FanovaImportanceEvaluator (64 trees, one core)",
    "fast_fanova": "optuna-fast-fanova FanovaImportanceEvaluator (64 trees)",
    "ped_anova": "Optuna PedAnovaImportanceEvaluator (no forest; main effects of the top 10 %)",
    "automl_fanova": "automl/fanova (pyrfr forest, its defaults: 16 trees)",
}


def log(msg: str) -> None:
    print(f"[bench_scale] {msg}", file=sys.stderr, flush=True)


def cell_data(cell: str) -> tuple[Any, Any, np.ndarray]:
    """The cell's space, configurations (a DataFrame) and objective values."""
    n, d, _, _ = CELLS[cell]
    return _data(n, d, NOISE.get(cell, 0.0))


def _data(n: int, d: int, noise: float = 0.0) -> tuple[Any, Any, np.ndarray]:
    import pandas as pd

    space = float_space(d)
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(p.low, p.high, n) for p in space.params])
    y = objective(space, X)
    if noise:
        y = y + noise * float(y.std()) * np.random.default_rng(1).standard_normal(n)
    return space, pd.DataFrame(X, columns=list(space.names)), y


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _on_alarm(signum: int, frame: Any) -> None:
    raise TimeoutError


def run_child(cell: str, tool: str, limit: float) -> dict[str, Any]:
    """Inside the child: set up, then time one analysis, stopped after ``limit`` seconds
    (0: never); report time and memory. The set-up is not counted against the limit."""
    signal.signal(signal.SIGALRM, _on_alarm)
    try:
        return _run_child(cell, tool, limit)
    except TimeoutError:
        return {"status": "timeout", "limit_s": limit}


def _start_clock(limit: float) -> float:
    if limit > 0:
        signal.setitimer(signal.ITIMER_REAL, limit)
    return time.perf_counter()


def _demo_study() -> Any:
    """The demo's study, in memory: its objective, 150 TPE trials, seed 0."""
    import optuna

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "examples"))
    from demo_optuna_sqlite import objective as demo_objective

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(demo_objective, n_trials=CELLS["demo_150"][0])
    return study


def _run_child(cell: str, tool: str, limit: float) -> dict[str, Any]:
    import hpinsight as hp

    order = CELLS[cell][2]
    demo = _demo_study() if cell == "demo_150" else None
    if demo is not None:
        history = hp.adapters.from_optuna(demo)
    else:
        space, frame, y = cell_data(cell)
        history = hp.TrialHistory(space, frame, y)
    small, small_frame, small_y = _data(WARM_UP_TRIALS, 3)
    warm = hp.TrialHistory(small, small_frame, small_y)
    if tool == "hp_subspace":
        hp.suggest_subspace(warm, seed=0)  # warm-up, untimed
        rss_before = _peak_mib()
        t0 = _start_clock(limit)
        sub = hp.suggest_subspace(history, seed=0)
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "peak_rss_mib": _peak_mib(), "peak_rss_before_mib": rss_before,
                "top3": [[[n], 1.0] for n in list(sub.keep)[:3]], "n_effects": len(sub.fixed)}
    if tool == "hp_report":
        hp.report(warm, top=1, seed=0).html()  # warm-up (matplotlib's first figure), untimed
        rss_before = _peak_mib()
        t0 = _start_clock(limit)
        rep = hp.report(history, seed=0)
        t1 = time.perf_counter()
        rep.html()
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "analysis_s": t1 - t0, "page_s": seconds - (t1 - t0),
                "peak_rss_mib": _peak_mib(), "peak_rss_before_mib": rss_before,
                "top3": [[[n], 1.0] for n in rep.top], "n_effects": len(history.space)}
    if tool in ("hp_gp", "hp_forest", "hp_forest_one_core"):
        kwargs: dict[str, Any] = {"max_order": order, "seed": 0}
        if tool != "hp_gp":
            kwargs.update(surrogate=hp.Forest(n_jobs=-1 if tool == "hp_forest" else None))
        hp.fanova(warm, **kwargs)  # warm-up, untimed
        rss_before = _peak_mib()
        t0 = _start_clock(limit)
        result = hp.fanova(history, **kwargs)
        seconds = time.perf_counter() - t0
        top = [[list(i.params), i.mean] for i in result.ranking(order=1)[:3]]
        return {"seconds": seconds, "peak_rss_mib": _peak_mib(), "peak_rss_before_mib": rss_before,
                "top3": top, "n_effects": len(result.ranking())}
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def study_of(space: Any, frame: Any, y: np.ndarray) -> Any:
        dists = {p.name: optuna.distributions.FloatDistribution(p.low, p.high)
                 for p in space.params}
        study = optuna.create_study(direction="minimize")
        study.add_trials([optuna.trial.create_trial(params=c, distributions=dists, value=float(v))
                          for c, v in zip(frame.to_dict("records"), y, strict=True)])
        return study

    study = demo if demo is not None else study_of(space, frame, y)
    if tool == "hp_evaluator":
        from hpinsight.integrations.optuna import FanovaImportanceEvaluator as Ours

        evaluator: Any = Ours(seed=0)
    elif tool == "optuna_fanova":
        evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
    elif tool == "fast_fanova":
        from optuna_fast_fanova import FanovaImportanceEvaluator

        evaluator = FanovaImportanceEvaluator(seed=0)
    else:
        evaluator = optuna.importance.PedAnovaImportanceEvaluator()
    optuna.importance.get_param_importances(study_of(*_data(WARM_UP_TRIALS, 3)),
                                            evaluator=evaluator)  # warm-up, untimed
    t0 = _start_clock(limit)
    imp = optuna.importance.get_param_importances(study, evaluator=evaluator)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "peak_rss_mib": _peak_mib(),
            "top3": [[[k], v] for k, v in list(imp.items())[:3]], "n_effects": len(imp)}


AUTOML_SCRIPT = """
import itertools, json, resource, signal, sys, time
import numpy as np
from fanova import fANOVA
data = np.load(sys.argv[1])
X, y, order = data["X"], data["y"], int(data["order"])
limit = float(sys.argv[2])
def on_alarm(signum, frame):
    print(json.dumps({"status": "timeout", "limit_s": limit}))
    sys.exit(0)
signal.signal(signal.SIGALRM, on_alarm)
if limit > 0:
    signal.setitimer(signal.ITIMER_REAL, limit)
t0 = time.perf_counter()
f = fANOVA(X, y, seed=0)
d = X.shape[1]
subsets = [(j,) for j in range(d)] + (list(itertools.combinations(range(d), 2)) if order > 1 else [])
imp = {s: f.quantify_importance(s)[s]["individual importance"] for s in subsets}
seconds = time.perf_counter() - t0
top = sorted(((v, s) for s, v in imp.items() if len(s) == 1), reverse=True)[:3]
print(json.dumps({"seconds": seconds, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "top3": [[["x%02d" % s[0]], v] for v, s in top], "n_effects": len(imp)}))
"""


def measure(cell: str, tool: str, args: argparse.Namespace) -> dict[str, Any]:
    """One (cell, tool) in a child process, with the wall-clock limit for peers (the
    child stops its own clock; the parent kills it only if set-up takes far longer)."""
    limit = args.peer_timeout if tool in PEERS else 0.0
    with tempfile.TemporaryDirectory() as tmp:
        if tool == "automl_fanova":
            _, frame, y = cell_data(cell)
            path = os.path.join(tmp, "data.npz")
            np.savez(path, X=frame.to_numpy(), y=y, order=CELLS[cell][2])
            script = os.path.join(tmp, "run.py")
            with open(script, "w") as fh:
                fh.write(AUTOML_SCRIPT)
            cmd = [args.automl_python, script, path, str(limit)]
        else:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", cell, tool, str(limit)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3 * limit + 600 if limit else None)
        except subprocess.TimeoutExpired:
            return {"status": "killed", "limit_s": limit}
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        return {"status": "error", "stderr_tail": proc.stderr.strip().splitlines()[-3:]}
    out: dict[str, Any] = {"status": "ok", **json.loads(proc.stdout.strip().splitlines()[-1])}
    out["child_wall_s"] = wall
    return out


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Of one (cell, tool)'s runs, the one of median time (the first failure, if any
    failed), with every run's time beside it."""
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        return failed[0]
    ordered = sorted(runs, key=lambda r: r["seconds"])
    return {**ordered[(len(ordered) - 1) // 2], "seconds_each_run": [r["seconds"] for r in runs]}


def table(results: dict[str, dict[str, dict[str, Any]]], tools: list[str]) -> str:
    """Markdown: one row per cell, seconds per tool, and each peer's time as a multiple
    of the default's."""
    with_ped = any(by.get("ped_anova", {}).get("status") == "ok" for by in results.values())
    with_evaluator = with_ped and "hp_evaluator" in tools
    extra = (["default / PED-ANOVA"] if with_ped else []) + (
        ["evaluator / PED-ANOVA"] if with_evaluator else [])
    lines = ["| cell | target | " + " | ".join(tools + extra) + " |",
             "|---" * (len(tools) + len(extra) + 2) + "|"]
    for cell, by_tool in results.items():
        n, d, order, target = CELLS[cell]
        ref = by_tool.get("hp_gp", {}).get("seconds")
        ped = by_tool.get("ped_anova", {})
        cells = []
        for tool in tools:
            r = by_tool.get(tool)
            if r is None:
                cells.append("-")
            elif r["status"] == "n/a":
                cells.append("n/a (main effects only)")
            elif r["status"] in ("timeout", "killed"):
                cells.append(f"> {r['limit_s']:.0f} s")
            elif r["status"] != "ok":
                cells.append("error")
            else:
                text = f"{r['seconds']:.2f} s" if r["seconds"] >= 0.1 else f"{r['seconds']:.3f} s"
                if "page_s" in r:
                    text += f" ({r['analysis_s']:.2f} + {r['page_s']:.2f} page)"
                if cell in MEMORY_TARGET_MIB:
                    text += f", {r['peak_rss_mib']:.0f} MiB"
                if tool in PEERS and ref:
                    ratio = r["seconds"] / ref
                    text += f" ({ratio:.0f}x)" if ratio >= 10 else f" ({ratio:.2g}x)"
                cells.append(text)
        for mine, shown in ((ref, with_ped),
                            (by_tool.get("hp_evaluator", {}).get("seconds"), with_evaluator)):
            if shown:
                ok = ped.get("status") == "ok" and mine
                cells.append(f"**{mine / ped['seconds']:.0f}x**" if ok else "-")
        what = ("main effects" if order == 1 else "all pairs") + (", noisy" if cell in NOISE else "")
        goals = ([] if target != target else [f"< {target:.0f} s"])  # NaN: relative only
        goals += [f"< {MEMORY_TARGET_MIB[cell] / 1024:.0f} GB"] if cell in MEMORY_TARGET_MIB else []
        goals += [f"<= {PED_TARGET[cell]:.0f}x PED-ANOVA"] if cell in PED_TARGET else []
        lines.append(f"| {n:,} x {d}, {what} | {', '.join(goals)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", default=",".join(CELLS), help="comma-separated cells (default all)")
    p.add_argument("--tools", default=",".join(OURS[:3]),
                   help="hpinsight variants (default: the three fANOVA ones; hp_subspace, "
                        "a shrink decision, is for the small cells)")
    p.add_argument("--peers", default="", help=f"comma-separated peers from {','.join(PEERS)}")
    p.add_argument("--automl-python", default=None,
                   help="interpreter of an environment with automl/fanova (adds that peer)")
    p.add_argument("--peer-timeout", type=float, default=600.0, help="seconds per peer run (default 600)")
    p.add_argument("--repeats", type=int, default=1,
                   help="runs of every (cell, tool), each in its own process, the tools in turn; "
                        "the table gives the median (default 1)")
    p.add_argument("--out", default=None, help="also write the JSON here")
    p.add_argument("--markdown", action="store_true", help="print the table to stderr")
    p.add_argument("--child", nargs=3, metavar=("CELL", "TOOL", "LIMIT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for cell in args.cells.split(","):
        if cell not in CELLS:
            p.error(f"unknown cell {cell!r}; choose from {', '.join(CELLS)}")
    for tool in [t for t in args.tools.split(",") + args.peers.split(",") if t]:
        if tool not in OURS + PEERS:
            p.error(f"unknown tool {tool!r}; choose from {', '.join(OURS + PEERS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        cell, tool, limit = args.child
        print(json.dumps(run_child(cell, tool, float(limit))))
        return 0
    tools = [t for t in args.tools.split(",") if t] + [t for t in args.peers.split(",") if t]
    if args.automl_python and "automl_fanova" not in tools:
        tools.append("automl_fanova")
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for cell in args.cells.split(","):
        results[cell] = {}
        runs: dict[str, list[dict[str, Any]]] = {}
        for rep in range(args.repeats):  # the tools in turn, so that a drifting load hits all alike
            for tool in tools:
                if (tool in MAIN_ONLY and CELLS[cell][2] > 1) or (
                        tool == "automl_fanova" and cell == "demo_150"):  # no data frame for it
                    results[cell][tool] = {"status": "n/a"}
                    continue
                log(f"{cell}: {tool} ({rep + 1} of {args.repeats}) ...")
                runs.setdefault(tool, []).append(r := measure(cell, tool, args))
                log(f"{cell}: {tool}: {r.get('seconds', r['status'])}")
        for tool, done in runs.items():
            results[cell][tool] = median_run(done)
    doc = {
        "cells": {c: {**dict(zip(("n_trials", "n_params", "max_order", "target_s"), CELLS[c],
                                  strict=True)),
                      "target_s": CELLS[c][3] if CELLS[c][3] == CELLS[c][3] else None,
                      "noise_sd_over_objective_sd": NOISE.get(c, 0.0),
                      "target_times_ped_anova": PED_TARGET.get(c)}
                  for c in results},
        "tools": {t: TOOL_TEXT[t] for t in tools},
        "results": results,
        "table": table(results, tools),
        "environment": {"python": platform.python_version(), "cpus": os.cpu_count(),
                        "machine": platform.machine(), "loadavg_end": os.getloadavg()},
    }
    text = json.dumps(doc, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    if args.markdown:
        print(doc["table"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
