#!/usr/bin/env python
"""What the live importance callback costs an Optuna study, and how fresh its result is.

For each sampler (random search and TPE) the same study of a cheap objective runs
in one process, interleaved and repeated (best time kept): without callbacks; with
two callbacks that do nothing (Optuna deep-copies the trial for every callback, a
cost any callback pays, and the measured modes run two: ours and a staleness probe); and with ``ImportanceCallback(every_n_trials=10,
min_trials=20)`` refitting in a child process (the default), in a child process
without the refit budget (``max_refit_share=1.0``: every due refit runs, as before
the budget), and in a thread. ``--objective-seconds`` makes every trial sleep that
long (an expensive objective); ``--n-jobs`` runs trials in parallel threads.
Reported per sampler and mode:

* ``wall_ratio``: optimize wall time with the callback / without (target <= 1.1);
  ``wall_ratio_vs_noop`` against the do-nothing callback instead;
  ``wall_ratio_with_close`` also counts ``cb.close()`` (``close_s``: it returns at once,
  target <= 1 s; a refit in progress finishes in the background);
* staleness: after each COMPLETE trial, how many COMPLETE trials the newest
  published result is behind (``cb.history[-1]``), as median / 90th percentile / max;
* refits finished during the study, and their mean wall time.

Then the importance evaluators are timed on the finished studies of both samplers:
hpinsight's ``FanovaImportanceEvaluator`` against Optuna's ``FanovaImportanceEvaluator``
and ``PedAnovaImportanceEvaluator``, with ratios ``peer seconds / hpinsight seconds``.

    python benchmarks/bench_callback_overhead.py            # 1,000 trials per study
    python benchmarks/bench_callback_overhead.py --quick    # 200 trials, no Optuna fANOVA

Prints one JSON document on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna

from hpinsight.integrations.optuna import FanovaImportanceEvaluator, ImportanceCallback

TARGET_WALL_RATIO = 1.1


def log(msg: str) -> None:
    sys.stderr.write(f"[bench_callback_overhead] {msg}\n")
    sys.stderr.flush()


def objective(trial: optuna.Trial) -> float:
    """Six parameters of four kinds; lr, depth and booster matter, the others barely."""
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    depth = trial.suggest_int("depth", 1, 12)
    booster = trial.suggest_categorical("booster", ["gbtree", "dart", "linear"])
    subsample = trial.suggest_float("subsample", 0.5, 1.0)
    n_bins = trial.suggest_int("n_bins", 16, 256, log=True)
    seed = trial.suggest_int("seed", 0, 1000)
    return (
        (math.log10(lr) + 2.0) ** 2
        + 0.08 * (depth - 7) ** 2
        + {"gbtree": 0.0, "dart": 0.4, "linear": 1.5}[booster]
        + 0.05 * subsample
        + 0.01 * math.log2(n_bins)
        + 0.0 * seed
    )


def make_sampler(kind: str) -> optuna.samplers.BaseSampler:
    if kind == "random":
        return optuna.samplers.RandomSampler(seed=0)
    return optuna.samplers.TPESampler(seed=0)


class Staleness:
    """A callback placed after the importance callback: records how far behind it is."""

    def __init__(self, cb: ImportanceCallback) -> None:
        self.cb = cb
        self.lags: list[int] = []
        self.complete = 0

    def __call__(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        if trial.state != optuna.trial.TrialState.COMPLETE:
            return
        self.complete += 1
        if self.complete < self.cb.min_trials:
            return
        history = self.cb.history
        self.lags.append(self.complete - (history[-1].n_trials if history else 0))


def noop(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
    return None


def run_study(kind: str, n_trials: int, mode: str, sleep: float = 0.0,
              n_jobs: int = 1) -> dict[str, Any]:
    """``mode``: "none", "noop", or an ``isolation`` of the importance callback
    ("process_unbudgeted": in a child process with ``max_refit_share=1.0``)."""
    study = optuna.create_study(sampler=make_sampler(kind))
    # as many callbacks as the measured modes have (ours and the staleness probe): Optuna
    # copies the trial once per callback, which on a sub-millisecond trial is not nothing
    callbacks: list[Callable[..., None]] = [noop, noop] if mode == "noop" else []
    cb = None
    staleness = None
    if mode in CALLBACK_MODES:
        cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0,
                                isolation="thread" if mode == "thread" else "process",
                                max_refit_share=1.0 if mode == "process_unbudgeted" else 0.1)
        staleness = Staleness(cb)
        callbacks = [cb, staleness]

    def timed(trial: optuna.Trial) -> float:
        if sleep:
            time.sleep(sleep)
        return objective(trial)

    start = time.perf_counter()
    study.optimize(timed, n_trials=n_trials, callbacks=callbacks, n_jobs=n_jobs)
    optimize_s = time.perf_counter() - start
    out: dict[str, Any] = {"optimize_s": optimize_s, "study": study}
    if cb is not None and staleness is not None:
        refits_during = len(cb.history)
        closing = time.perf_counter()
        cb.close()  # returns at once; a refit in progress ends in the background
        out["close_s"] = time.perf_counter() - closing
        out["with_close_s"] = time.perf_counter() - start
        cb.wait(600)  # (untimed) let that refit end, so its history is complete
        lags = np.asarray(staleness.lags)
        seconds = [s.seconds for s in cb.history]
        out.update(
            refits_during_study=refits_during,
            refit_mean_s=float(np.mean(seconds)) if seconds else None,
            stale_trials_median=float(np.median(lags)),
            stale_trials_p90=float(np.percentile(lags, 90)),
            stale_trials_max=int(lags.max()),
            errors=[repr(e) for e in cb.errors],
            final_ranking=cb.history[-1].ranking_line(top=6) if cb.history else None,
        )
    return out


def time_evaluator(study: optuna.Study, evaluator: Any, repeats: int) -> dict[str, Any]:
    best = math.inf
    result: dict[str, float] = {}
    for _ in range(repeats):
        start = time.perf_counter()
        result = optuna.importance.get_param_importances(study, evaluator=evaluator)
        best = min(best, time.perf_counter() - start)
    return {"seconds": best, "importances": {k: round(v, 4) for k, v in result.items()}}


CALLBACK_MODES = ("process", "process_unbudgeted", "thread")
MODES = ("none", "noop", *CALLBACK_MODES)


def overhead(kind: str, n_trials: int, repeats: int, sleep: float = 0.0,
             n_jobs: int = 1) -> tuple[dict[str, Any], optuna.Study]:
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for r in range(repeats):  # interleaved, so that drifts of the machine hit every mode alike
        for mode in MODES:
            log(f"{kind}: repeat {r + 1}/{repeats}, {mode}")
            runs[mode].append(run_study(kind, n_trials, mode, sleep, n_jobs))
    best = {mode: min(rs, key=lambda run: run["optimize_s"]) for mode, rs in runs.items()}
    base_s, noop_s = best["none"]["optimize_s"], best["noop"]["optimize_s"]
    out: dict[str, Any] = {
        "n_trials": n_trials,
        "objective_seconds": sleep,
        "n_jobs": n_jobs,
        "without_callback_s": base_s,
        "noop_callback_s": noop_s,
        "target_wall_ratio_max": TARGET_WALL_RATIO,
    }
    for mode in CALLBACK_MODES:
        run = best[mode]
        out[f"isolation_{mode}"] = {
            "with_callback_s": run["optimize_s"],
            "wall_ratio": run["optimize_s"] / base_s,
            "wall_ratio_vs_noop": run["optimize_s"] / noop_s,
            "wall_ratio_with_close": run["with_close_s"] / base_s,
            "target_met": run["optimize_s"] / base_s <= TARGET_WALL_RATIO,
            **{k: v for k, v in run.items() if k not in {"study", "optimize_s", "with_close_s"}},
        }
    return out, best["none"]["study"]


def evaluators(study: optuna.Study, quick: bool, repeats: int) -> dict[str, Any]:
    ours = time_evaluator(study, FanovaImportanceEvaluator(seed=0), repeats)
    peers: dict[str, Any] = {
        "optuna_ped_anova": time_evaluator(
            study, optuna.importance.PedAnovaImportanceEvaluator(), repeats
        ),
    }
    if not quick:
        log("Optuna's fANOVA (pure Python per tree; slow)")
        peers["optuna_fanova"] = time_evaluator(
            study, optuna.importance.FanovaImportanceEvaluator(seed=0), 1
        )
    for peer in peers.values():
        peer["ratio_peer_over_hpinsight"] = peer["seconds"] / ours["seconds"]
    return {"hpinsight_fanova": ours, **peers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 trials, no Optuna fANOVA")
    parser.add_argument("--n-trials", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3, help="runs per study, best kept")
    parser.add_argument("--objective-seconds", type=float, default=0.0,
                        help="sleep per trial: an expensive objective (default 0: cheap)")
    parser.add_argument("--n-jobs", type=int, default=1, help="Optuna's n_jobs (threads)")
    parser.add_argument("--samplers", default="random,tpe")
    parser.add_argument("--no-evaluators", action="store_true",
                        help="skip timing the importance evaluators")
    args = parser.parse_args(argv)
    n_trials = args.n_trials or (200 if args.quick else 1000)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    report: dict[str, Any] = {
        "environment": {
            "python": platform.python_version(),
            "optuna": optuna.__version__,
            "cpus": os.cpu_count(),
            "loadavg_at_start": list(os.getloadavg()),
        },
        "callback": {},
        "evaluators": {},
    }
    for kind in args.samplers.split(","):
        summary, study = overhead(kind, n_trials, args.repeats, args.objective_seconds,
                                  args.n_jobs)
        report["callback"][kind] = summary
        log(f"{kind}: wall ratio {summary['isolation_process']['wall_ratio']:.3f} (without the "
            f"budget {summary['isolation_process_unbudgeted']['wall_ratio']:.3f})")
        if not args.no_evaluators:
            report["evaluators"][kind] = evaluators(study, args.quick, args.repeats)
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
