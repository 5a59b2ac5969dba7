#!/usr/bin/env python
"""Does an effect come back when it is taken out of the data? The analysis's check of
the interactions it resolves, measured on functions with known truth.

For every pair of acting parameters (and every main effect) that the shadows alone
would call "resolved", the default analysis takes the pair's pure interaction as fitted
(the joint marginal minus both main effects) out of every trial's objective value, fits
the model again and reports the share the pair holds in the new fit
(``Importance.regrown``): a real interaction is gone from the new data; one the model's
product form makes up from two parameters that act alone comes back. Reported per
effect: its true share, its share, what came back, and its verdict; then, for main
effects and pairs, how many with true share 0 and how many real ones came back above a
fraction of their share, and how many stay resolved. ``--full`` also runs the whole
analysis (shadows, refits) again on the values without each effect (``back``), the
reference the analysis's cheaper check is held against; it also checks main effects,
which the analysis does not.

The studies are the calibration benchmark's (``bench_calibration.py``: the same
functions, samplers, seeds and noise), 200 trials each; ``demo`` is the README demo's
study (150 TPE trials, seed 0, its own noise), whose only real interactions are
``learning_rate x optimizer`` and ``optimizer x momentum``.

    python benchmarks/bench_effect_removal.py --functions interaction,edge,additive --samplers tpe,random --snrs 4,inf --seeds 3 --out removal.json
    python benchmarks/bench_effect_removal.py --functions demo
    python benchmarks/bench_effect_removal.py ... --full
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_calibration as bc  # the calibration benchmark's functions

import hpinsight as hp
from hpinsight._fanova_result import verdict  # the library's rule, with the shadow as the null

#: Fractions of an effect's share that "come back" reported in the summary.
FRACTIONS = (0.1, 0.2, 0.3, 0.5)
#: The demo's real interactions (``examples/demo_optuna_sqlite.py``).
DEMO_PAIRS = {("learning_rate", "optimizer"), ("optimizer", "momentum")}


def fitted_effect(result: Any, encoded: np.ndarray, names: list[str], key: tuple[str, ...]) -> np.ndarray:
    """The fitted pure effect of ``key`` (one or two names) at every trial (nearest grid
    point of the model's exact marginals)."""
    cols = [names.index(k) for k in key]

    def nearest(grid: np.ndarray, col: int) -> np.ndarray:
        return np.abs(encoded[:, col][:, None] - grid[None, :]).argmin(axis=1)

    if len(key) == 1:
        m = result.marginal(key[0], grid_size=48)
        return m.mean[nearest(m.encoded_grid[0], cols[0])] - m.mean.mean()
    joint = result.marginal(*key, grid_size=40)
    ma, mb = result.marginal(key[0], grid_size=40), result.marginal(key[1], grid_size=40)
    ia, ib = nearest(joint.encoded_grid[0], cols[0]), nearest(joint.encoded_grid[1], cols[1])
    return (joint.mean[ia, ib] - ma.mean[nearest(ma.encoded_grid[0], cols[0])]
            - mb.mean[nearest(mb.encoded_grid[0], cols[1])] + joint.mean.mean())


def _demo() -> tuple[hp.TrialHistory, list[tuple[str, ...]], dict[tuple[str, ...], float]]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    path = Path(__file__).resolve().parent.parent / "examples" / "demo_optuna_sqlite.py"
    spec = importlib.util.spec_from_file_location("demo", path)
    assert spec is not None
    assert spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(demo.objective, n_trials=150)
    history = hp.adapters.from_optuna(study)
    pairs = list(itertools.combinations(history.space.names, 2))
    # the truth of pairs only: the demo's main-effect shares are not computed here
    truth = {p: (math.nan if tuple(sorted(p)) in {tuple(sorted(q)) for q in DEMO_PAIRS} else 0.0)
             for p in pairs}
    return history, pairs, truth


def check(history: hp.TrialHistory, keys: list[tuple[str, ...]], seed: int,
          full: bool = False) -> list[dict[str, Any]]:
    """Every effect among ``keys`` that the shadows alone would call resolved: its share,
    its null, what the analysis's own check says came back (``regrown``, pairs only) and
    its verdict; with ``full``, also the share that comes back when the whole default
    analysis is run again on the values without the effect (``back``)."""
    result = hp.fanova(history, seed=seed, max_order=2)
    encoded, names, y = history.encoded(), list(history.space.names), np.asarray(history.y, float)
    rows = []
    for key in keys:
        imp = result.importance(*key)
        if not shadow_resolved(imp) or np.isnan(encoded[:, [names.index(k) for k in key]]).any():
            continue  # conditional parameters are left out: their effect is not defined everywhere
        row = {"key": " x ".join(key), "mean": imp.mean, "std": imp.std, "shadow": imp.shadow,
               "regrown": imp.regrown, "verdict": imp.verdict}
        if full:
            removed = y - fitted_effect(result, encoded, names, key)
            again = hp.fanova(hp.TrialHistory(history.space, history.configs, removed), seed=seed, max_order=2)
            row["back"] = again.importance(*key).mean
        rows.append(row)
    return rows


def shadow_resolved(imp: Any) -> bool:
    """The verdict "resolved" against the shadows alone (the analysis before the check)."""
    return verdict(imp.mean, imp.std, imp.shadow) == "resolved"


def summary(rows: list[dict[str, Any]]) -> str:
    lines = ["| effects resolved against the shadows | true share | count | regrown above 10 / 20 / 30 / 50 % "
             "of their share | still resolved with the check |",
             "|---|---|---|---|---|"]
    for kind in ("main", "pair"):
        for label, pick in (("0", lambda t: t == 0.0), ("> 0", lambda t: t > 0 or math.isnan(t))):
            sel = [r for r in rows if (" x " in r["key"]) == (kind == "pair") and pick(r["truth"])]
            if not sel:
                continue
            came = " / ".join(str(sum((r["regrown"] or 0.0) > f * r["mean"] for r in sel)) for f in FRACTIONS)
            kept = sum(r["verdict"] == "resolved" for r in sel)
            lines.append(f"| {'pairs' if kind == 'pair' else 'main effects'} | {label} | {len(sel)} | {came} "
                         f"| {kept} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--functions", default="interaction,edge,additive")
    p.add_argument("--samplers", default="tpe,random")
    p.add_argument("--snrs", default="4,inf")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", type=Path)
    p.add_argument("--full", action="store_true",
                   help="also run the whole analysis again on the values without each effect")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    rows: list[dict[str, Any]] = []
    for name in args.functions.split(","):
        if name == "demo":
            history, keys, truth = _demo()
            for r in check(history, keys, 0, args.full):
                rows.append({"function": "demo", "sampler": "tpe", "snr": "demo", "seed": 0,
                             "truth": truth[tuple(r["key"].split(" x "))], **r})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            continue
        fn = bc.FUNCTIONS[name]
        true, var = bc.truth(name)
        keys = [(a,) for a in fn.acting] + list(itertools.combinations(fn.acting, 2))
        for sampler, snr, seed in itertools.product(args.samplers.split(","), args.snrs.split(","),
                                                    range(args.seeds)):
            sigma = 0.0 if snr == "inf" else math.sqrt(var / float(snr))
            history = bc.run_study(fn, sampler, seed, 200, sigma)
            for r in check(history, keys, seed, args.full):
                rows.append({"function": name, "sampler": sampler, "snr": snr, "seed": seed,
                             "truth": true.get(tuple(r["key"].split(" x ")), 0.0), **r})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    doc = {"rows": rows, "summary": summary(rows)}
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1, default=lambda v: None))
    print(doc["summary"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
