#!/usr/bin/env python
"""Benchmark hpinsight's exact fANOVA against Optuna's importance evaluators.

Runs every selected case in one process (case 3 in a child process so that its
peak memory can be measured on its own), on the same data for all tools, and
prints exactly one JSON document to stdout. Progress goes to stderr.

    python benchmarks/bench_fanova.py                 # full run, all cases
    python benchmarks/bench_fanova.py --quick         # small smoke run
    python benchmarks/bench_fanova.py --cases 1,2 --out result.json --profile

See benchmarks/README.md for what each number means.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import math
import os
import platform
import pstats
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import hpinsight as hp

# ----------------------------------------------------------------------------------------
# sizes and targets

FULL = {
    1: {"n_trials": 1_000, "n_params": 8},
    2: {"n_trials": 2_000, "n_params": 30},
    3: {"n_trials": 100_000, "n_params": 100},
}
QUICK = {
    1: {"n_trials": 200, "n_params": 4},
    2: {"n_trials": 300, "n_params": 8},
    3: {"n_trials": 5_000, "n_params": 20},
}
TARGETS = {
    "case1_variance_only_ratio_min": 300.0,
    "case1_end_to_end_ratio_min": 50.0,
    "case2_end_to_end_seconds_max": 10.0,
    "case3_end_to_end_seconds_max": 60.0,
    "case3_peak_rss_mib_max": 2048.0,
}
NOISE_SEED = 12345
DATA_SEED = 0
FOREST_SEED = 0

_REAL_STDOUT = sys.stdout


def log(msg: str) -> None:
    print(f"[bench_fanova] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------
# data


def float_space(d: int) -> hp.SearchSpace:
    """Linear floats with different bounds per column (Optuna sees the same ones)."""
    return hp.SearchSpace([hp.Float(f"x{i:02d}", -float(i), 1.0 + 2.0 * i) for i in range(d)])


def mixed_space(d: int) -> hp.SearchSpace:
    """Cycles through linear float, int, categorical, log float and log int."""
    params: list[Any] = []
    for i in range(d):
        name = f"p{i:03d}"
        kind = i % 5
        if kind == 0:
            params.append(hp.Float(name, -5.0, 5.0))
        elif kind == 1:
            params.append(hp.Int(name, 0, 50))
        elif kind == 2:
            params.append(hp.Categorical(name, ["a", "b", "c", "d"]))
        elif kind == 3:
            params.append(hp.Float(name, 1e-4, 1.0, log=True))
        else:
            params.append(hp.Int(name, 1, 256, log=True))
    return hp.SearchSpace(params)


def _encoded_bounds(param: Any) -> tuple[float, float]:
    if isinstance(param, hp.Categorical):
        return 0.0, float(len(param.choices) - 1)
    low, high = float(param.low), float(param.high)
    return (math.log(low), math.log(high)) if param.log else (low, high)


OBJECTIVE_TEXT = (
    "u_j = encoded value of parameter j rescaled to [0, 1]; "
    "y = 4*(u0-0.3)^2 + 2*sin(3*u1) + 1.0*u2 + 3*(u0-0.5)*(u1-0.5) + 0.1*N(0,1) "
    f"(noise seed {NOISE_SEED}); all other parameters are irrelevant"
)


def objective(space: hp.SearchSpace, X: np.ndarray) -> np.ndarray:
    """Smooth objective: three parameters matter, mild u0 x u1 interaction, small noise."""
    bounds = np.array([_encoded_bounds(p) for p in space.params])
    u = (X[:, :3] - bounds[:3, 0]) / (bounds[:3, 1] - bounds[:3, 0])
    rng = np.random.default_rng(NOISE_SEED)
    y = (
        4.0 * (u[:, 0] - 0.3) ** 2
        + 2.0 * np.sin(3.0 * u[:, 1])
        + 1.0 * u[:, 2]
        + 3.0 * (u[:, 0] - 0.5) * (u[:, 1] - 0.5)
        + 0.1 * rng.standard_normal(X.shape[0])
    )
    return y


def describe_space(space: hp.SearchSpace) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for p in space.params:
        key = type(p).__name__ + ("(log)" if getattr(p, "log", False) else "")
        kinds[key] = kinds.get(key, 0) + 1
    return kinds


# ----------------------------------------------------------------------------------------
# timing / profiling helpers


def measure(
    label: str,
    fn: Callable[[], Any],
    *,
    repeats: int,
    budget: float,
    setup: Callable[[], None] | None = None,
) -> tuple[dict[str, Any], Any]:
    """Best of ``repeats`` wall-clock runs (time.perf_counter).

    Stops repeating early once the runs add up to ``budget`` seconds (0 = never).
    """
    runs: list[float] = []
    result: Any = None
    for r in range(repeats):
        if setup is not None:
            setup()
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - t0
        runs.append(elapsed)
        log(f"  {label}: run {r + 1}/{repeats}: {elapsed:.4f} s")
        if budget > 0 and sum(runs) >= budget and r + 1 < repeats:
            log(f"  {label}: time budget of {budget:.0f} s used up after {r + 1} run(s)")
            break
    return {"best_s": min(runs), "runs_s": runs, "n_runs": len(runs)}, result


def hpinsight_profile(fn: Callable[[], Any], top: int = 10) -> dict[str, Any]:
    """cProfile one call; keep the ``top`` hpinsight functions by cumulative time."""
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    try:
        fn()
    finally:
        prof.disable()
    wall = time.perf_counter() - t0
    stats = pstats.Stats(prof)
    marker = f"{os.sep}hpinsight{os.sep}"
    rows = []
    for (fname, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if marker in fname:
            short = "hpinsight/" + fname.split(marker, 1)[1]
            rows.append(
                {
                    "function": f"{short}:{line}({func})",
                    "ncalls": nc,
                    "tottime_s": tt,
                    "cumtime_s": ct,
                }
            )
    rows.sort(key=lambda r: -r["cumtime_s"])
    return {"profiled_wall_s": wall, "top_by_cumtime": rows[:top]}


def check_min(value: float | None, threshold: float, applies: bool) -> dict[str, Any]:
    met = value is not None and value >= threshold
    out: dict[str, Any] = {
        "threshold_min": threshold,
        "value": value,
        "met": met,
        "applies": applies,
    }
    if value is not None and not met:
        out["shortfall_factor"] = threshold / value  # how many times faster hpinsight must get
    return out


def check_max(value: float | None, threshold: float, applies: bool) -> dict[str, Any]:
    met = value is not None and value <= threshold
    out: dict[str, Any] = {
        "threshold_max": threshold,
        "value": value,
        "met": met,
        "applies": applies,
    }
    if value is not None and not met:
        out["shortfall_factor"] = value / threshold
    return out


def ratio(peer: dict[str, Any], ours: dict[str, Any]) -> float:
    return peer["best_s"] / ours["best_s"]


def top_items(d: dict[str, float], k: int = 5) -> list[list[Any]]:
    return [[name, float(v)] for name, v in sorted(d.items(), key=lambda kv: -kv[1])[:k]]


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# ----------------------------------------------------------------------------------------
# Optuna side


def optuna_study(space: hp.SearchSpace, configs: list[dict[str, Any]], y: np.ndarray) -> Any:
    import optuna

    dists = {p.name: optuna.distributions.FloatDistribution(p.low, p.high) for p in space.params}
    study = optuna.create_study(direction="minimize")
    study.add_trials(
        [
            optuna.trial.create_trial(params=c, distributions=dists, value=float(v))
            for c, v in zip(configs, y, strict=True)
        ]
    )
    return study


def clear_optuna_tree_caches() -> None:
    """``_FanovaTree`` memoizes node accessors with class-level lru_caches; empty them
    between repeats so no run benefits from (or pays for) an earlier one's cache."""
    from optuna.importance._fanova._tree import _FanovaTree

    for name in dir(_FanovaTree):
        attr = getattr(_FanovaTree, name, None)
        if callable(getattr(attr, "cache_clear", None)):
            attr.cache_clear()


def optuna_main_effect_fractions(forest: Any, bounds: np.ndarray) -> np.ndarray:
    """Optuna's own variance code on a given forest: what ``_Fanova.fit`` does after
    fitting (one ``_FanovaTree`` per tree) plus ``get_importance`` for every column.

    Returns per-tree fractions, shape (n_trees, n_columns); NaN for trees with zero
    total variance (Optuna leaves those out of its mean, as hpinsight does)."""
    from optuna.importance._fanova._tree import _FanovaTree

    trees = [_FanovaTree(est.tree_, bounds) for est in forest.estimators_]
    d = bounds.shape[0]
    out = np.full((len(trees), d), np.nan)
    for t, tree in enumerate(trees):
        total = tree.variance
        for j in range(d):
            v = max(tree.get_marginal_variance(np.array([j])), 0.0)
            if total > 0:
                out[t, j] = v / total
    return out


# ----------------------------------------------------------------------------------------
# case 1: main effects vs Optuna


def run_case1(cfg: dict[str, int], args: argparse.Namespace, full: bool) -> dict[str, Any]:
    import optuna
    from optuna._transform import _SearchSpaceTransform
    from sklearn.ensemble import RandomForestRegressor

    n, d, n_trees = cfg["n_trials"], cfg["n_params"], args.n_trees
    log(f"case 1: {n} trials x {d} float params, main effects, {n_trees} trees")
    space = float_space(d)
    configs = space.sample(n, seed=DATA_SEED)
    X = space.encode(configs)
    y = objective(space, X)

    t0 = time.perf_counter()
    study = optuna_study(space, configs, y)
    study_build_s = time.perf_counter() - t0

    # The search space exactly as Optuna's evaluator sees it.
    dists = study.trials[0].distributions
    trans = _SearchSpaceTransform(dists, transform_log=False, transform_step=False)
    optuna_columns = list(dists)
    bounds = np.asarray(trans.bounds, dtype=np.float64)
    assert optuna_columns == list(space.names), (optuna_columns, space.names)
    assert np.array_equal(bounds, np.array([[p.low, p.high] for p in space.params]))

    # Optuna's forest settings, read from its evaluator.
    evaluator = optuna.importance.FanovaImportanceEvaluator(seed=FOREST_SEED)
    optuna_rf = evaluator._evaluator._forest.get_params()
    keys = (
        "n_estimators",
        "max_depth",
        "min_samples_split",
        "min_samples_leaf",
        "max_features",
        "bootstrap",
        "max_samples",
        "n_jobs",
        "random_state",
    )
    optuna_rf_settings = {k: optuna_rf[k] for k in keys}

    # One shared forest for the variance-only comparison: Optuna's settings, fit on
    # space.encode(configs) (= raw values for linear floats, same columns and order).
    shared_kwargs = {k: optuna_rf[k] for k in keys if k != "n_jobs"}
    shared_kwargs["n_jobs"] = -1  # only speeds up this untimed fit; trees are identical
    t0 = time.perf_counter()
    forest = RandomForestRegressor(**shared_kwargs).fit(X, y)
    shared_fit_s = time.perf_counter() - t0
    n_leaves = [int(e.tree_.n_leaves) for e in forest.estimators_]

    rep, budget = args.repeats, args.budget

    # --- variance computation only, same forest ---
    log("case 1: variance computation only (shared forest)")
    hp_var, res_var = measure(
        "hpinsight fanova(forest=...)",
        lambda: hp.fanova(
            hp.TrialHistory(space, configs, y), surrogate=hp.Forest.from_estimator(forest), seed=FOREST_SEED, max_order=1
        ),
        repeats=rep,
        budget=budget,
    )
    opt_var, opt_fracs = measure(
        "optuna _FanovaTree main effects",
        lambda: optuna_main_effect_fractions(forest, bounds),
        repeats=rep,
        budget=budget,
        setup=clear_optuna_tree_caches,
    )
    clear_optuna_tree_caches()

    hp_fracs = np.asarray(res_var.fractions)
    assert list(res_var.subsets) == [(name,) for name in space.names]
    same_nan = bool(np.array_equal(np.isnan(hp_fracs), np.isnan(opt_fracs)))
    both = ~np.isnan(hp_fracs) & ~np.isnan(opt_fracs)
    max_abs_diff = float(np.max(np.abs(hp_fracs[both] - opt_fracs[both]))) if both.any() else None
    opt_mean = np.nanmean(opt_fracs, axis=0)
    hp_mean = np.array([res_var.importance(nm).mean for nm in space.names])

    # --- end to end ---
    log("case 1: end to end")
    hp_e2e, res_e2e = measure(
        "hpinsight fanova (fits its forest, n_jobs=-1)",
        lambda: hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=n_trees), seed=FOREST_SEED, max_order=1),
        repeats=rep,
        budget=budget,
    )
    hp_e2e_1, _ = measure(
        "hpinsight fanova (fits its forest, n_jobs=1)",
        lambda: hp.fanova(
            hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=n_trees, n_jobs=1), seed=FOREST_SEED, max_order=1
        ),
        repeats=rep,
        budget=budget,
    )
    holder: dict[str, Any] = {}

    def new_fanova_evaluator() -> None:
        clear_optuna_tree_caches()
        holder["ev"] = optuna.importance.FanovaImportanceEvaluator(
            seed=FOREST_SEED
        )

    opt_e2e, opt_imp = measure(
        "optuna get_param_importances(FanovaImportanceEvaluator)",
        lambda: optuna.importance.get_param_importances(study, evaluator=holder["ev"]),
        repeats=rep,
        budget=budget,
        setup=new_fanova_evaluator,
    )
    holder.clear()
    clear_optuna_tree_caches()

    def new_ped_evaluator() -> None:
        holder["ev"] = optuna.importance.PedAnovaImportanceEvaluator()

    ped_e2e, ped_imp = measure(
        "optuna get_param_importances(PedAnovaImportanceEvaluator)",
        lambda: optuna.importance.get_param_importances(study, evaluator=holder["ev"]),
        repeats=rep,
        budget=budget,
        setup=new_ped_evaluator,
    )
    holder.clear()

    r_var = ratio(opt_var, hp_var)
    r_e2e = ratio(opt_e2e, hp_e2e)
    hp_e2e_means = {nm: res_e2e.importance(nm).mean for nm in space.names}
    total = sum(hp_e2e_means.values())

    out: dict[str, Any] = {
        "description": "main effects on a float-only linear space, hpinsight vs Optuna",
        "n_trials": n,
        "n_params": d,
        "n_trees": n_trees,
        "space": describe_space(space),
        "objective": OBJECTIVE_TEXT,
        "optuna_study_build_s": study_build_s,
        "optuna_forest_settings": {
            **optuna_rf_settings,
            "source": "optuna/importance/_fanova/_evaluator.py + _fanova.py: RandomForestRegressor("
            "n_estimators=n_trees, max_depth=max_depth, min_samples_split=2, min_samples_leaf=1, "
            "random_state=seed); sklearn defaults otherwise (max_features=1.0, bootstrap=True, "
            "n_jobs=None, i.e. one core)",
        },
        "hpinsight_forest_settings": (
            "RandomForestRegressor(n_estimators=n_trees, min_samples_leaf=1, max_features=1.0, "
            "bootstrap=True, max_samples=None if n<=10000 else 10000, oob_score=True, "
            "n_jobs=n_jobs, random_state=<derived from seed>) (hpinsight/_forest.py:fit_forest)"
        ),
        "variance_only": {
            "what": "same fitted forest (Optuna's forest settings, fit once, untimed) for both; "
            "hpinsight: hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest.from_estimator(forest)) incl. encoding and validating "
            "configs; Optuna: _FanovaTree(tree_, bounds) for every tree + tree.variance + "
            "get_marginal_variance([j]) for every column (what _Fanova.fit/get_importance do "
            "after forest.fit)",
            "shared_forest": {
                "settings": dict(shared_kwargs),
                "fit_s": shared_fit_s,
                "mean_leaves_per_tree": float(np.mean(n_leaves)),
            },
            "hpinsight": hp_var,
            "optuna_fanova": opt_var,
            "ratio_optuna_over_hpinsight": r_var,
            "target": check_min(r_var, TARGETS["case1_variance_only_ratio_min"], full),
        },
        "agreement_same_forest": {
            "max_abs_diff_per_tree_main_effect_fraction": max_abs_diff,
            "max_abs_diff_mean_main_effect_fraction": float(np.max(np.abs(hp_mean - opt_mean))),
            "constant_tree_pattern_identical": same_nan,
            "n_tree_param_pairs_compared": int(both.sum()),
            "ok_at_1e-9": max_abs_diff is not None and max_abs_diff <= 1e-9 and same_nan,
        },
        "end_to_end": {
            "what": "from configs/study to importances, including each tool's own forest fit",
            "hpinsight_n_jobs_all": hp_e2e,
            "hpinsight_n_jobs_1": hp_e2e_1,
            "optuna_fanova": opt_e2e,
            "optuna_ped_anova": ped_e2e,
            "ratio_optuna_fanova_over_hpinsight": r_e2e,
            "ratio_optuna_fanova_over_hpinsight_n_jobs_1": ratio(opt_e2e, hp_e2e_1),
            "ratio_optuna_ped_anova_over_hpinsight": ratio(ped_e2e, hp_e2e),
            "target": check_min(r_e2e, TARGETS["case1_end_to_end_ratio_min"], full),
        },
        "importances_top5": {
            "note": "hpinsight: mean fraction of variance (own forest); normalized: divided by "
            "their sum, comparable with Optuna's normalized output; PED-ANOVA is a different "
            "estimand (importance for the top-10% region)",
            "hpinsight": top_items(hp_e2e_means),
            "hpinsight_normalized": top_items({k: v / total for k, v in hp_e2e_means.items()}),
            "optuna_fanova": top_items(dict(opt_imp)),
            "optuna_ped_anova": top_items(dict(ped_imp)),
        },
        "loadavg_after": loadavg(),
    }
    if args.profile:
        log("case 1: profiling hpinsight")
        out["profile_hpinsight_variance_only"] = hpinsight_profile(
            lambda: hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest.from_estimator(forest), seed=FOREST_SEED)
        )
        out["profile_hpinsight_end_to_end"] = hpinsight_profile(
            lambda: hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=n_trees), seed=FOREST_SEED)
        )
    return out


# ----------------------------------------------------------------------------------------
# case 2: all pairwise interactions, hpinsight only


def run_case2(cfg: dict[str, int], args: argparse.Namespace, full: bool) -> dict[str, Any]:
    from sklearn.ensemble import RandomForestRegressor

    n, d, n_trees = cfg["n_trials"], cfg["n_params"], args.n_trees
    log(f"case 2: {n} trials x {d} mixed params, max_order=2, {n_trees} trees")
    space = mixed_space(d)
    configs = space.sample(n, seed=DATA_SEED)
    X = space.encode(configs)
    y = objective(space, X)
    rep, budget = args.repeats, args.budget

    e2e, res = measure(
        "hpinsight fanova(max_order=2) end to end",
        lambda: hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=n_trees), seed=FOREST_SEED, max_order=2),
        repeats=rep,
        budget=budget,
    )
    fit, forest = measure(
        "sklearn RandomForestRegressor.fit",
        lambda: RandomForestRegressor(
            n_estimators=n_trees, random_state=FOREST_SEED, n_jobs=-1
        ).fit(X, y),
        repeats=rep,
        budget=budget,
    )
    dec, _ = measure(
        "hpinsight fanova(max_order=2, forest=...)",
        lambda: hp.fanova(
            hp.TrialHistory(space, configs, y), surrogate=hp.Forest.from_estimator(forest), seed=FOREST_SEED, max_order=2
        ),
        repeats=rep,
        budget=budget,
    )
    n_leaves = [int(e.tree_.n_leaves) for e in forest.estimators_]
    out: dict[str, Any] = {
        "description": "all main effects and all pairwise interactions, hpinsight only",
        "n_trials": n,
        "n_params": d,
        "n_trees": n_trees,
        "n_subsets": len(res.subsets),
        "space": describe_space(space),
        "objective": OBJECTIVE_TEXT,
        "end_to_end": e2e,
        "split": {
            "what": "forest fit by the benchmark (sklearn RandomForestRegressor(n_estimators="
            f"{n_trees}, random_state={FOREST_SEED}, n_jobs=-1) on space.encode(configs), no OOB "
            "score) then hp.fanova(..., surrogate=hp.Forest.from_estimator(forest)) for the decomposition (incl. encoding)",
            "fit": fit,
            "decomposition": dec,
            "fit_plus_decomposition_best_s": fit["best_s"] + dec["best_s"],
            "mean_leaves_per_tree": float(np.mean(n_leaves)),
        },
        "top5_main_effects": [[list(i.params), i.mean] for i in res.ranking(order=1)[:5]],
        "top5_pairs": [[list(i.params), i.mean] for i in res.ranking(order=2)[:5]],
        "unexplained_fraction": res.unexplained_fraction.mean,
        "fit_r2": res.fit_r2,
        "target": check_max(e2e["best_s"], TARGETS["case2_end_to_end_seconds_max"], full),
        "loadavg_after": loadavg(),
    }
    if args.profile:
        log("case 2: profiling hpinsight")
        out["profile_hpinsight_end_to_end"] = hpinsight_profile(
            lambda: hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=n_trees), seed=FOREST_SEED, max_order=2)
        )
        out["profile_hpinsight_decomposition"] = hpinsight_profile(
            lambda: hp.fanova(
                hp.TrialHistory(space, configs, y), surrogate=hp.Forest.from_estimator(forest), seed=FOREST_SEED, max_order=2
            )
        )
    return out


# ----------------------------------------------------------------------------------------
# case 3: large history, hpinsight only, in a child process


def _proc_status_mib(field: str) -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def case3_child(args: argparse.Namespace) -> dict[str, Any]:
    """Runs inside the child process: make the data, time hp.fanova, report memory."""
    import pandas as pd

    n, d, n_trees = args.child_n, args.child_d, args.n_trees
    t0 = time.perf_counter()
    space = mixed_space(d)
    chunk = 10_000
    frames = []
    for k, start in enumerate(range(0, n, chunk)):
        frames.append(
            pd.DataFrame(
                space.sample(min(chunk, n - start), seed=DATA_SEED + k), columns=list(space.names)
            )
        )
    df = pd.concat(frames, ignore_index=True)
    del frames
    y = objective(space, space.encode(df))
    gc.collect()
    gen_s = time.perf_counter() - t0
    rss_before = _proc_status_mib("VmRSS")
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    e2e, res = measure(
        "hpinsight fanova end to end",
        lambda: hp.fanova(hp.TrialHistory(space, df, y), surrogate=hp.Forest(n_trees=n_trees), seed=FOREST_SEED, max_order=1),
        repeats=args.repeats,
        budget=args.budget,
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    out: dict[str, Any] = {
        "n_trials": n,
        "n_params": d,
        "n_trees": n_trees,
        "space": describe_space(space),
        "configs_container": "pandas.DataFrame (built from space.sample in chunks of 10,000)",
        "data_generation_s": gen_s,
        "end_to_end": e2e,
        "rss_before_call_mib": rss_before,
        "peak_rss_before_call_mib": peak_before,
        "peak_rss_child_self_mib": peak,
        "top5_main_effects": [[list(i.params), i.mean] for i in res.ranking(order=1)[:5]],
        "fit_r2": res.fit_r2,
    }
    del res
    if args.profile:
        out["profile_hpinsight_end_to_end"] = hpinsight_profile(
            lambda: hp.fanova(hp.TrialHistory(space, df, y), surrogate=hp.Forest(n_trees=n_trees), seed=FOREST_SEED, max_order=1)
        )
    return out


def run_case3(cfg: dict[str, int], args: argparse.Namespace, full: bool) -> dict[str, Any]:
    n, d = cfg["n_trials"], cfg["n_params"]
    log(f"case 3: {n} trials x {d} mixed params, main effects, child process")
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--_child-case3",
        "--_child-n",
        str(n),
        "--_child-d",
        str(d),
        "--n-trees",
        str(args.n_trees),
        "--repeats",
        str(args.repeats if not full else 1),
        "--budget",
        str(args.budget),
    ]
    if args.profile:
        cmd.append("--profile")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, text=True, check=False)
    child_wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"error": f"child process exited with code {proc.returncode}", "command": cmd}
    out = json.loads(proc.stdout)
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    peak = out["peak_rss_child_self_mib"]
    out = {
        "description": "large history, main effects, hpinsight only",
        **out,
        "peak_rss_all_children_mib": children_peak,
        "peak_rss_note": "peak_rss_child_self_mib is ru_maxrss of the child running only this "
        "case (Python + numpy/sklearn/pandas imports + the DataFrame + hp.fanova); "
        "peak_rss_all_children_mib is the parent's RUSAGE_CHILDREN (max over all children)",
        "child_wall_s": child_wall,
        "peers": "not run: Optuna's pure-Python fANOVA scales with (tree nodes x split points) "
        "per column; at 100,000 trials x 100 params it would take hours",
        "objective": OBJECTIVE_TEXT,
        "target_time": check_max(
            out["end_to_end"]["best_s"], TARGETS["case3_end_to_end_seconds_max"], full
        ),
        "target_memory": check_max(peak, TARGETS["case3_peak_rss_mib_max"], full),
        "loadavg_after": loadavg(),
    }
    return out


# ----------------------------------------------------------------------------------------


def environment() -> dict[str, Any]:
    import optuna
    import sklearn

    try:
        import pandas

        pd_version = pandas.__version__
    except ImportError:
        pd_version = None
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "hpinsight": hp.__version__,
        "numpy": np.__version__,
        "scikit_learn": sklearn.__version__,
        "optuna": optuna.__version__,
        "pandas": pd_version,
        "loadavg_start": loadavg(),
    }


def _clean(obj: Any) -> Any:
    """JSON-safe: numpy scalars to Python, non-finite floats to None."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    p.add_argument(
        "--cases", default="1,2,3", help="comma-separated subset of 1,2,3 (default: all)"
    )
    p.add_argument("--out", metavar="PATH", help="also write the JSON document to PATH")
    p.add_argument(
        "--repeats", type=int, default=3, help="runs per measurement, best kept (default 3)"
    )
    p.add_argument(
        "--budget",
        type=float,
        default=300.0,
        help="stop repeating a measurement once its runs add up to this many seconds (0: never; default 300)",
    )
    p.add_argument("--n-trees", type=int, default=64, help="trees per forest (default 64)")
    p.add_argument(
        "--profile", action="store_true", help="add cProfile top-10 hpinsight functions per case"
    )
    p.add_argument(
        "--_child-case3", dest="child_case3", action="store_true", help=argparse.SUPPRESS
    )
    p.add_argument("--_child-n", dest="child_n", type=int, help=argparse.SUPPRESS)
    p.add_argument("--_child-d", dest="child_d", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        args.case_list = sorted({int(c) for c in args.cases.split(",") if c.strip()})
    except ValueError:
        p.error(f"--cases must be a comma-separated list of 1, 2, 3; got {args.cases!r}")
    if not args.case_list or any(c not in (1, 2, 3) for c in args.case_list):
        p.error(f"--cases must be a comma-separated list of 1, 2, 3; got {args.cases!r}")
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Anything a library prints goes to stderr; stdout carries only the JSON document.
    sys.stdout = sys.stderr
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

    if args.child_case3:
        doc = case3_child(args)
        _REAL_STDOUT.write(json.dumps(_clean(doc)) + "\n")
        _REAL_STDOUT.flush()
        return 0

    full = not args.quick
    sizes = QUICK if args.quick else FULL
    doc: dict[str, Any] = {
        "benchmark": "hpinsight fANOVA vs Optuna importance evaluators",
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "mode": "quick" if args.quick else "full",
        "targets_apply": full,
        "timing": {
            "clock": "time.perf_counter, wall clock",
            "statistic": f"best of up to {args.repeats} runs (best_s); every run in runs_s",
            "budget_s": args.budget,
            "ratios": "peer best_s / hpinsight best_s (> 1: hpinsight faster)",
        },
        "environment": environment(),
        "cases": {},
    }
    runners = {
        1: ("case1_main_effects_vs_optuna", run_case1),
        2: ("case2_pairwise_interactions", run_case2),
        3: ("case3_large_history", run_case3),
    }
    t_all = time.perf_counter()
    for c in args.case_list:
        key, fn = runners[c]
        doc["cases"][key] = fn(sizes[c], args, full)
    doc["total_wall_s"] = time.perf_counter() - t_all

    summary = []
    for key, case in doc["cases"].items():
        for sub in ("variance_only", "end_to_end"):
            if isinstance(case.get(sub), dict) and "target" in case[sub]:
                summary.append(
                    {
                        "case": key,
                        "metric": f"{sub} ratio (optuna/hpinsight)",
                        **case[sub]["target"],
                    }
                )
        for tk in ("target", "target_time", "target_memory"):
            if tk in case:
                metric = {
                    "target": "end_to_end seconds",
                    "target_time": "end_to_end seconds",
                    "target_memory": "peak RSS MiB",
                }[tk]
                summary.append({"case": key, "metric": metric, **case[tk]})
    doc["summary"] = summary

    text = json.dumps(_clean(doc), indent=2)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
        log(f"wrote {args.out}")
    _REAL_STDOUT.write(text + "\n")
    _REAL_STDOUT.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
