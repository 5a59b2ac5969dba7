#!/usr/bin/env python
"""Does an effect come back when it is taken out of the data? A check for effects the
model makes up, measured on functions with known truth.

For every effect the default analysis calls "resolved" (main effects of the acting
parameters and their pairs), the effect as fitted (for a pair, its pure interaction:
the joint marginal minus both main effects) is subtracted from every trial's objective
value, and the whole analysis (hyperparameters, shadows, refits) is run again on those
values. A real effect is gone from the new data, and the new fit gives it almost
nothing; an effect the model's form produces from the rest of the data (a product
kernel's interaction between two parameters that each act alone) comes back. Reported
per effect: its true share, the share the analysis gave it, and the share that came
back; then, for main effects and for pairs, how many effects with true share 0 and
how many real ones come back above a fraction of their share.

The studies are the calibration benchmark's (``bench_calibration.py``: the same
functions, samplers, seeds and noise), 200 trials each; ``demo`` is the README demo's
study (150 TPE trials, seed 0, its own noise), whose only real interactions are
``learning_rate x optimizer`` and ``optimizer x momentum``.

    python benchmarks/bench_effect_removal.py --functions interaction,edge,additive --samplers tpe,random --snrs 4,inf --seeds 3 --out removal.json
    python benchmarks/bench_effect_removal.py --functions demo
    python benchmarks/bench_effect_removal.py ... --cheap    # the check from one fit, no shadows or refits
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
          cheap: bool = False) -> list[dict[str, Any]]:
    """Every resolved effect among ``keys``: its share, and the share that came back (with
    ``cheap``, from one fit of the model without shadows or refits)."""
    result = hp.fanova(history, seed=seed, max_order=2)
    model = hp.GP(shadows=False, refits=0) if cheap else hp.GP()
    encoded, names, y = history.encoded(), list(history.space.names), np.asarray(history.y, float)
    rows = []
    for key in keys:
        imp = result.importance(*key)
        if imp.verdict != "resolved" or np.isnan(encoded[:, [names.index(k) for k in key]]).any():
            continue  # conditional parameters are left out: their effect is not defined everywhere
        removed = y - fitted_effect(result, encoded, names, key)
        again = hp.fanova(hp.TrialHistory(history.space, history.configs, removed), surrogate=model,
                          seed=seed, max_order=2)
        back = again.importance(*key)
        rows.append({"key": " x ".join(key), "mean": imp.mean, "std": imp.std, "shadow": imp.shadow,
                     "back": back.mean, "back_std": back.std})
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    lines = ["| effects | true share | resolved | came back above 10 / 20 / 30 / 50 % of their share |",
             "|---|---|---|---|"]
    for kind in ("main", "pair"):
        for label, pick in (("0", lambda t: t == 0.0), ("> 0", lambda t: t > 0 or math.isnan(t))):
            sel = [r for r in rows if (" x " in r["key"]) == (kind == "pair") and pick(r["truth"])]
            if not sel:
                continue
            came = " / ".join(str(sum(r["back"] > f * r["mean"] for r in sel)) for f in FRACTIONS)
            lines.append(f"| {'pairs' if kind == 'pair' else 'main effects'} | {label} | {len(sel)} | {came} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--functions", default="interaction,edge,additive")
    p.add_argument("--samplers", default="tpe,random")
    p.add_argument("--snrs", default="4,inf")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", type=Path)
    p.add_argument("--cheap", action="store_true",
                   help="check with one fit of the model, without shadows or refits")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    rows: list[dict[str, Any]] = []
    for name in args.functions.split(","):
        if name == "demo":
            history, keys, truth = _demo()
            for r in check(history, keys, 0, args.cheap):
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
            for r in check(history, keys, seed, args.cheap):
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
