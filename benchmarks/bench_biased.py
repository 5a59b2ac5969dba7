#!/usr/bin/env python
"""Importances on the samples optimizers produce: do they credit parameters that do nothing?

Functions with known truth, each with parameters that do nothing, optimized by real
samplers; every estimator analyses the *same* trials, side by side, at several points
of the same study (the first 100, 150 and 200 trials of one run are exactly what a
100-, 150- or 200-trial run would have produced).

Functions (the truth is the functional ANOVA of the function itself under the space's
measure: first-order Sobol indices by pick-freeze on 2^17 uniform samples, Saltelli
2010, Eq. (b) of Table 2):

* ``quad10``: 10 floats in [-3, 3], ``4a^2 + 2b^2 + c^2``; d0..d6 do nothing.
* ``rough``: the same space, ``4|a| + 2[b > 0.5] + floor(c)^2 + N(0, 0.5^2)`` noise.
* ``mixed``: a 3-choice and a 60-choice categorical, two ints, a log float, and
  do-nothing parameters of every kind (a 50-choice categorical, an int, floats).
* ``conditional``: ``model`` in {svm, tree}; ``gamma`` (log) matters under svm,
  ``depth`` (int) under tree, ``C`` and ``min_leaf`` are conditional and do nothing;
  plus do-nothing floats.
* ``dynamic``: ``model`` in {small, large} and ``width``, suggested under that one name
  as an int on a log scale in [8, 64] for small and in [64, 1024] for large (a dynamic
  parameter: its distribution depends on another parameter's value);
  ``1.5 + (log2 width - 5)^2`` for small, ``(log2 width - 8)^2`` for large, plus
  ``(log10 lr + 2.5)^2`` with ``lr`` in [1e-4, 0.1] (log); ``batch``, dynamic in the
  same way ([16, 64] for small, [64, 512] for large, both log), and floats ``d0``..``d2``
  do nothing. Truth, by the convention of ``conditional`` (a conditional parameter is
  drawn from its own measure in every sample and ignored where inactive): each regime of
  a dynamic parameter is a conditional parameter of its own (``width|small`` active
  under small, ``width|large`` under large, each uniform on its log range), and the
  parameter's index is the closed first-order index of its regimes together (both
  re-drawn in pick-freeze). No regime interacts with another (one is active at a time),
  so that is the sum of the regimes' first-order indices: model 0.161, width 0.317
  (0.158 from each regime), lr 0.192, the rest (0.33) the model x width
  interaction; batch and d0..d2 are 0. hpinsight's Optuna adapter analyses each
  dynamic parameter over the union of its ranges instead (width in [8, 1024] under
  both models, the pairs the study cannot suggest included); condPED-ANOVA splits its
  trials by regime.
* ``sklearn`` and ``sklearn_rf``: real tuning of an SVC on scikit-learn's bundled
  breast-cancer data and of a random forest on its wine data (3-fold CV error), each
  with three do-nothing parameters in the objective's signature (no analytic truth:
  only the do-nothing mass is scored).

Samplers: random, TPE, multivariate TPE, CMA-ES (continuous functions only), Optuna's
GPSampler (``gp``; needs torch) and SMAC's HPO facade (``--smac``; not on ``dynamic``,
which ConfigSpace cannot express). Estimators: hpinsight's forest fANOVA (the former default),
hpinsight's Gaussian-process fANOVA (the default), Optuna's fANOVA and PED-ANOVA.
Optuna's ``PedAnovaImportanceEvaluator`` is condPED-ANOVA since Optuna 5.0 (Optuna PR
#6682; Conditional PED-ANOVA, KDD 2026, arXiv 2601.20800): its trials are split by the
distribution each had for a parameter (inactive being one regime); the rows keep the
estimator name ``optuna_ped_anova`` and carry a ``label``, ``condPED-ANOVA`` where the
analysed trials have conditional or dynamic parameters (``conditional_params``,
``dynamic_params``) and the installed evaluator splits by regime, else ``PED-ANOVA``; the
document's ``versions`` record Optuna's version and which of the two it computes.
``hp_gp_split`` (functions with dynamic parameters only) is hpinsight's GP on the same
trials with each dynamic parameter renamed per regime (``width|small``,
``width|large``: conditional parameters, which hpinsight models as such), its importance
the sum of its regimes'.

Metrics per (function, sampler, trials, estimator), over seeds: do-nothing mass (share
of the normalized importances credited to parameters that do nothing; truth 0), top-3
found (all three of the truly largest main effects in the estimated top 3), top-3
recall, Spearman rank correlation with the truth, misplaced share (half the L1 distance
between the normalized importances and the normalized truth: 0 the same shares, 1
disjoint), seconds per analysis; for hpinsight's
estimators also the share of do-nothing parameters whose verdict is "indistinguishable
from nothing", and the share of parameters with a true main effect above 0.02 that got
that verdict.

    python benchmarks/bench_biased.py --out biased.json          # 5 seeds (about 30 min)
    python benchmarks/bench_biased.py --quick                    # 2 seeds, 100 trials
    python benchmarks/bench_biased.py --functions quad10 --samplers tpe --seeds 5
    python benchmarks/bench_biased.py --speed 1000,10000    # seconds per analysis

``--speed`` times each estimator end to end (history in, importances out; best of 3) on
uniform samples of ``quad10`` (10 parameters) at the given sizes, side by side, with the
ratio of every peer's time to the default Gaussian process's. Optuna's fANOVA is left out
above 2,000 trials (minutes per analysis).

One JSON document on stdout (and in ``--out``); progress on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import optuna
from scipy.stats import spearmanr

import hpinsight as hp

Cols = dict[str, np.ndarray]


@dataclass(frozen=True)
class Function:
    name: str
    space: hp.SearchSpace
    f: Callable[[Cols, np.random.Generator | None], np.ndarray]  # vectorized, native values
    nothing: tuple[str, ...]
    continuous: bool  # CMA-ES applies
    #: Dynamic parameters: name -> (parent, {parent's value: the column of ``truth_space``
    #: that holds the parameter's distribution under that value}).
    dynamic: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    #: The space the truth is drawn from where it is not ``space`` (dynamic parameters
    #: there are one conditional column per regime).
    truth_space: hp.SearchSpace | None = None


def _quad(c: Cols, rng: np.random.Generator | None) -> np.ndarray:
    return 4 * c["a"] ** 2 + 2 * c["b"] ** 2 + c["c"] ** 2


def _rough(c: Cols, rng: np.random.Generator | None) -> np.ndarray:
    y = 4 * np.abs(c["a"]) + 2.0 * (c["b"] > 0.5) + np.floor(c["c"]) ** 2
    return y if rng is None else y + rng.normal(0, 0.5, size=y.shape)


_CAT60 = np.sin(np.arange(60) * 1.7) * 2.0  # a fixed, non-monotone effect of each choice


def _mixed(c: Cols, rng: np.random.Generator | None) -> np.ndarray:
    opt = np.select([c["opt"] == "adam", c["opt"] == "sgd"], [0.0, 1.5], 3.0)
    emb = _CAT60[c["emb"].astype(int)] if c["emb"].dtype.kind in "iu" else _CAT60[np.array([int(v[1:]) for v in c["emb"]])]
    return opt + emb + 0.08 * (c["layers"] - 4.0) ** 2 + (np.log10(c["lr"]) + 2.5) ** 2 + 0.02 * c["width"]


def _conditional(c: Cols, rng: np.random.Generator | None) -> np.ndarray:
    svm = c["model"] == "svm"
    g = np.where(svm, (np.log10(np.where(svm, c["gamma"], 1.0)) + 1.0) ** 2, 0.0)
    t = np.where(~svm, 0.3 * (np.where(~svm, c["depth"], 5) - 5.0) ** 2, 0.0)
    return 1.0 * svm + g + t


def _dynamic(c: Cols, rng: np.random.Generator | None) -> np.ndarray:
    small = c["model"] == "small"
    lw = np.log2(c["width"].astype(float))
    return (np.where(small, 1.5 + (lw - 5.0) ** 2, (lw - 8.0) ** 2)
            + (np.log10(c["lr"].astype(float)) + 2.5) ** 2)


def _ishigami(c: Cols, rng: np.random.Generator | None) -> np.ndarray:
    return np.sin(c["x1"]) + 7 * np.sin(c["x2"]) ** 2 + 0.1 * c["x3"] ** 4 * np.sin(c["x1"])


G_A = (0.0, 1.0, 4.5, 9.0, 99.0, 99.0, 99.0, 99.0)


def _gfunc(c: Cols, rng: np.random.Generator | None) -> np.ndarray:
    out = np.ones_like(c["x1"], dtype=float)
    for i, a in enumerate(G_A):
        out = out * (np.abs(4 * c[f"x{i + 1}"] - 2) + a) / (1 + a)
    return out


def analytic_truth(name: str) -> dict[str, float] | None:
    """First-order Sobol indices in closed form (Saltelli et al. 2008, Sec. 4.9)."""
    if name == "ishigami":
        a, b = 7.0, 0.1
        v1 = 0.5 * (1 + b * math.pi**4 / 5) ** 2
        v2 = a**2 / 8
        v13 = b**2 * math.pi**8 * (1 / 18 - 1 / 50)
        v = v1 + v2 + v13
        return {"x1": v1 / v, "x2": v2 / v, "x3": 0.0}
    if name == "gfunc":
        vi = [1 / (3 * (1 + a) ** 2) for a in G_A]
        v = math.prod(1 + x for x in vi) - 1
        return {f"x{i + 1}": x / v for i, x in enumerate(vi)}
    return None


def _floats(names: list[str], low: float = -3, high: float = 3) -> list[hp.Float]:
    return [hp.Float(n, low, high) for n in names]


FUNCTIONS: dict[str, Function] = {
    "quad10": Function(
        "quad10", hp.SearchSpace(_floats(["a", "b", "c"] + [f"d{i}" for i in range(7)])), _quad,
        tuple(f"d{i}" for i in range(7)), True),
    "rough": Function(
        "rough", hp.SearchSpace(_floats(["a", "b", "c"] + [f"d{i}" for i in range(7)])), _rough,
        tuple(f"d{i}" for i in range(7)), True),
    "mixed": Function(
        "mixed",
        hp.SearchSpace([
            hp.Categorical("opt", ["adam", "sgd", "rmsprop"]),
            hp.Categorical("emb", [f"e{i}" for i in range(60)]),
            hp.Int("layers", 1, 8),
            hp.Int("width", 16, 512, log=True),
            hp.Float("lr", 1e-5, 1.0, log=True),
            hp.Categorical("seed_tag", [f"s{i}" for i in range(50)]),
            hp.Int("workers", 1, 16),
            hp.Float("d0", 0, 1),
            hp.Float("d1", 0, 1),
        ]),
        _mixed, ("seed_tag", "workers", "d0", "d1"), False),
    "conditional": Function(
        "conditional",
        hp.SearchSpace(
            [
                hp.Categorical("model", ["svm", "tree"]),
                hp.Float("gamma", 1e-4, 10, log=True),
                hp.Float("C", 1e-2, 1e2, log=True),
                hp.Int("depth", 1, 12),
                hp.Int("min_leaf", 1, 20),
                hp.Float("d0", 0, 1),
                hp.Float("d1", 0, 1),
                hp.Float("d2", 0, 1),
            ],
            conditions=[
                hp.Condition("gamma", "model", values=["svm"]),
                hp.Condition("C", "model", values=["svm"]),
                hp.Condition("depth", "model", values=["tree"]),
                hp.Condition("min_leaf", "model", values=["tree"]),
            ],
        ),
        _conditional, ("C", "min_leaf", "d0", "d1", "d2"), False),
    "dynamic": Function(
        "dynamic",
        # what hpinsight's Optuna adapter makes of the study: each dynamic parameter over
        # the union of its ranges (names and fallback values only; the truth uses
        # truth_space, the studies suggest each regime's own range)
        hp.SearchSpace([
            hp.Categorical("model", ["small", "large"]),
            hp.Int("width", 8, 1024, log=True),
            hp.Float("lr", 1e-4, 1e-1, log=True),
            hp.Int("batch", 16, 512, log=True),
            hp.Float("d0", 0, 1),
            hp.Float("d1", 0, 1),
            hp.Float("d2", 0, 1),
        ]),
        _dynamic, ("batch", "d0", "d1", "d2"), False,
        dynamic={
            "width": ("model", {"small": "width|small", "large": "width|large"}),
            "batch": ("model", {"small": "batch|small", "large": "batch|large"}),
        },
        truth_space=hp.SearchSpace(
            [
                hp.Categorical("model", ["small", "large"]),
                hp.Int("width|small", 8, 64, log=True),
                hp.Int("width|large", 64, 1024, log=True),
                hp.Float("lr", 1e-4, 1e-1, log=True),
                hp.Int("batch|small", 16, 64, log=True),
                hp.Int("batch|large", 64, 512, log=True),
                hp.Float("d0", 0, 1),
                hp.Float("d1", 0, 1),
                hp.Float("d2", 0, 1),
            ],
            conditions=[
                hp.Condition("width|small", "model", values=["small"]),
                hp.Condition("width|large", "model", values=["large"]),
                hp.Condition("batch|small", "model", values=["small"]),
                hp.Condition("batch|large", "model", values=["large"]),
            ],
        )),
    # uniform-sample accuracy checks (run with --samplers random --sizes 1000)
    "ishigami": Function(
        "ishigami", hp.SearchSpace(_floats(["x1", "x2", "x3"], -math.pi, math.pi)), _ishigami, (), True),
    "gfunc": Function(
        "gfunc", hp.SearchSpace(_floats([f"x{i + 1}" for i in range(8)], 0, 1)), _gfunc, (), True),
}


# -- truth -------------------------------------------------------------------------------
def uniform_columns(space: hp.SearchSpace, n: int, rng: np.random.Generator) -> Cols:
    """Draws from the space's measure, every parameter drawn (the function ignores the
    inactive ones), written here without hpinsight's own measure code."""
    out: Cols = {}
    for p in space.params:
        if isinstance(p, hp.Categorical):
            out[p.name] = np.asarray(p.choices, dtype=object)[rng.integers(0, len(p.choices), n)]
        elif isinstance(p, hp.Int):
            if p.log:
                u = rng.uniform(math.log(p.low - 0.5), math.log(p.high + 0.5), n)
                out[p.name] = np.clip(np.round(np.exp(u)), p.low, p.high)
            else:
                out[p.name] = rng.integers(p.low, p.high + 1, n).astype(float)
        else:
            lo, hi = (math.log(p.low), math.log(p.high)) if p.log else (p.low, p.high)
            u = rng.uniform(lo, hi, n)
            out[p.name] = np.exp(u) if p.log else u
    return out


def active_columns(fn: Function, raw: Cols) -> Cols:
    """The function's inputs from draws of its truth space: a dynamic parameter takes
    the value of the regime its parent selects."""
    cols = {n: raw[n] for n in fn.space.names if n not in fn.dynamic}
    for name, (parent, regimes) in fn.dynamic.items():
        cols[name] = np.select([raw[parent] == v for v in regimes],
                               [raw[col] for col in regimes.values()], np.nan)
    return cols


def true_first_order(fn: Function, n: int = 1 << 17, seed: int = 0) -> dict[str, float]:
    """First-order indices by pick-freeze; a dynamic parameter's index is the closed
    first-order index of its regimes' columns together (they are re-drawn together)."""
    rng = np.random.default_rng(seed)
    space = fn.truth_space or fn.space
    A, B = uniform_columns(space, n, rng), uniform_columns(space, n, rng)
    fA, fB = fn.f(active_columns(fn, A), None), fn.f(active_columns(fn, B), None)
    var = float(np.var(np.concatenate((fA, fB))))
    out = {}
    for name in fn.space.names:
        ABj = dict(A)
        for col in fn.dynamic[name][1].values() if name in fn.dynamic else (name,):
            ABj[col] = B[col]
        out[name] = max(float(np.mean(fB * (fn.f(active_columns(fn, ABj), None) - fA))) / var, 0.0)
    return out


# -- studies ------------------------------------------------------------------------------
def suggest(trial: Any, fn: Function) -> dict[str, Any]:
    space = fn.space
    v: dict[str, Any] = {}
    for p in space.params:
        name = p.name
        parents = space.conditions_of(name)
        if parents and not space.is_active(name, v):
            continue
        if name in fn.dynamic:  # the distribution of the regime its parent selects
            parent, regimes = fn.dynamic[name]
            assert fn.truth_space is not None
            p = fn.truth_space.params[fn.truth_space.index(regimes[v[parent]])]
        if isinstance(p, hp.Categorical):
            v[name] = trial.suggest_categorical(name, list(p.choices))
        elif isinstance(p, hp.Int):
            v[name] = trial.suggest_int(name, p.low, p.high, log=p.log)
        else:
            v[name] = trial.suggest_float(name, p.low, p.high, log=p.log)
    return v


def evaluate(fn: Function, v: dict[str, Any], rng: np.random.Generator) -> float:
    cols = {}
    for p in fn.space.params:
        val = v.get(p.name)
        if val is None:  # inactive: any value, the function ignores it
            val = p.choices[0] if isinstance(p, hp.Categorical) else p.low
        cols[p.name] = np.asarray([val], dtype=object if isinstance(p, hp.Categorical) else float)
    return float(fn.f(cols, rng)[0])


def make_sampler(kind: str, seed: int) -> optuna.samplers.BaseSampler:
    if kind == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if kind == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if kind == "tpe_mv":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if kind == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=10)
    if kind == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    raise ValueError(kind)


def optuna_study(fn: Function, sampler: str, seed: int, n_trials: int) -> optuna.Study:
    rng = np.random.default_rng(10_000 + seed)
    study = optuna.create_study(sampler=make_sampler(sampler, seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(lambda t: evaluate(fn, suggest(t, fn), rng), n_trials=n_trials)
    return study


def smac_study(fn: Function, seed: int, n_trials: int, workdir: str) -> optuna.Study:
    """A SMAC HPO run, its trials copied into an in-memory Optuna study for the peers."""
    from smac import HyperparameterOptimizationFacade, Scenario

    rng = np.random.default_rng(10_000 + seed)
    cs = hp.adapters.to_configspace(fn.space, seed=seed)

    def train(config: Any, seed: int = 0) -> float:
        return evaluate(fn, dict(config), rng)

    scen = Scenario(cs, deterministic=True, n_trials=n_trials, seed=seed,
                    output_directory=f"{workdir}/smac_{fn.name}_{seed}")
    smac = HyperparameterOptimizationFacade(scen, train, overwrite=True, logging_level=40)
    smac.optimize()
    history = hp.adapters.from_smac(smac)
    return history_to_study(fn.space, history)


def distributions(space: hp.SearchSpace) -> dict[str, Any]:
    D = optuna.distributions
    out: dict[str, Any] = {}
    for p in space.params:
        if isinstance(p, hp.Categorical):
            out[p.name] = D.CategoricalDistribution(list(p.choices))
        elif isinstance(p, hp.Int):
            out[p.name] = D.IntDistribution(p.low, p.high, log=p.log)
        else:
            out[p.name] = D.FloatDistribution(p.low, p.high, log=p.log)
    return out


def history_to_study(space: hp.SearchSpace, history: hp.TrialHistory) -> optuna.Study:
    dists = distributions(space)
    study = optuna.create_study()
    for cfg, y in zip(history.configs, history.y, strict=True):
        params = {k: v for k, v in cfg.items() if v is not None}
        study.add_trial(optuna.trial.create_trial(
            params=params, distributions={k: dists[k] for k in params}, value=float(y)))
    return study


# -- estimators ---------------------------------------------------------------------------
def split_regimes(fn: Function, study: optuna.Study, seed: int) -> tuple[dict[str, float], dict[str, str]]:
    """hpinsight's GP with each dynamic parameter given one conditional parameter per
    regime (the columns of ``fn.truth_space``), as a user can name them in the objective;
    a dynamic parameter's importance is the sum of its regimes' (one is active at a
    time), its verdict the strongest of theirs."""
    assert fn.truth_space is not None
    configs, y = [], []
    for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        cfg = dict(t.params)
        for name, (parent, regimes) in fn.dynamic.items():
            cfg[regimes[cfg[parent]]] = cfg.pop(name)
        configs.append(cfg)
        y.append(float(t.value))
    r = hp.fanova(hp.TrialHistory(fn.truth_space, configs, y), seed=seed)
    imp, verdicts = {}, {}
    order = ("resolved", "uncertain", "negligible", NOTHING)
    for name in fn.space.names:
        cols = tuple(fn.dynamic[name][1].values()) if name in fn.dynamic else (name,)
        imp[name] = sum(r.importance(c).mean for c in cols)
        verdicts[name] = min((r.importance(c).verdict for c in cols), key=order.index)
    return imp, verdicts


def estimate(
    name: str, study: optuna.Study, space: hp.SearchSpace, seed: int, fn: Function | None = None
) -> tuple[dict[str, float], dict[str, str] | None]:
    """Main-effect importances, and hpinsight's verdicts where the estimator has them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "hp_gp_split":
            assert fn is not None
            return split_regimes(fn, study, seed)
        if name in ("hp_forest", "hp_gp"):
            history = hp.adapters.from_optuna(study)
            r = hp.fanova(history, seed=seed, surrogate=hp.Forest() if name == "hp_forest" else hp.GP())
            return ({n: r.importance(n).mean for n in space.names},
                    {n: r.importance(n).verdict for n in space.names})
        if name == "optuna_fanova":
            ev = optuna.importance.FanovaImportanceEvaluator(seed=seed)
        elif name == "optuna_ped_anova":
            ev = optuna.importance.PedAnovaImportanceEvaluator()
        else:
            raise ValueError(name)
        imp = optuna.importance.get_param_importances(study, evaluator=ev, normalize=False)
        return {n: float(imp.get(n, 0.0)) for n in space.names}, None


def score(imp: dict[str, float], truth: dict[str, float] | None, nothing: tuple[str, ...]) -> dict[str, Any]:
    total = sum(max(v, 0.0) for v in imp.values())
    norm = {k: (max(v, 0.0) / total if total > 0 else 0.0) for k, v in imp.items()}
    out: dict[str, Any] = {"nothing_mass": sum(norm[n] for n in nothing)}
    if truth is not None:
        # how much of the normalized importance sits on the wrong parameters: half the L1
        # distance to the normalized truth (0 the same shares, 1 disjoint)
        true_total = sum(truth.values())
        out["misplaced"] = 0.5 * sum(abs(norm[n] - truth[n] / true_total) for n in truth)
        # raw (unnormalized) first-order fractions against the true indices
        out["max_abs_error"] = max(abs(imp[n] - truth[n]) for n in truth)
        names = list(truth)
        top_true = set(sorted(names, key=lambda n: -truth[n])[:3])
        top_est = set(sorted(names, key=lambda n: (-norm[n], n))[:3])
        out["top3_recall"] = len(top_true & top_est) / 3
        out["top3_found"] = top_true == top_est
        rho = spearmanr([truth[n] for n in names], [norm[n] for n in names]).statistic
        out["spearman"] = None if not np.isfinite(rho) else float(rho)
    return out


NOTHING = "indistinguishable from nothing"
#: What counts as calling a parameter nothing: "negligible" too (shown, below the floor)
NO_EFFECT = (NOTHING, "negligible")
#: A true first-order index above this is an effect a verdict should not call nothing.
REAL_EFFECT = 0.02


def verdict_score(verdicts: dict[str, str], truth: dict[str, float] | None,
                  nothing: tuple[str, ...]) -> dict[str, float]:
    """Share of the do-nothing parameters called "indistinguishable from nothing", and
    share of the parameters with a true main effect above ``REAL_EFFECT`` called so."""
    out = {}
    if nothing:  # (Ishigami and G have no parameter that does nothing)
        out["nothing_flagged"] = sum(verdicts[n] in NO_EFFECT for n in nothing) / len(nothing)
    if truth is not None:
        real = [n for n, v in truth.items() if v > REAL_EFFECT]
        out["real_called_nothing"] = sum(verdicts[n] in NO_EFFECT for n in real) / len(real)
    return out


# -- sklearn tuning with do-nothing parameters ----------------------------------------------
SKLEARN_NOTHING = ("data_shuffle_seed", "unused_scale", "unused_tag")
_NOTHING_PARAMS = [hp.Int("data_shuffle_seed", 0, 1000), hp.Float("unused_scale", 0, 1),
                   hp.Categorical("unused_tag", ["x", "y", "z"])]


def _suggest_nothing(trial: optuna.Trial) -> None:
    """The do-nothing parameters: in the objective's signature, never used."""
    trial.suggest_int("data_shuffle_seed", 0, 1000)
    trial.suggest_float("unused_scale", 0, 1)
    trial.suggest_categorical("unused_tag", ["x", "y", "z"])


def _svc_objective(trial: optuna.Trial) -> float:
    """An SVC on the breast-cancer data, 3-fold CV error."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    X, y = load_breast_cancer(return_X_y=True)
    C = trial.suggest_float("C", 1e-3, 1e3, log=True)
    gamma = trial.suggest_float("gamma", 1e-5, 1e0, log=True)
    tol = trial.suggest_float("tol", 1e-5, 1e-1, log=True)
    _suggest_nothing(trial)
    model = make_pipeline(StandardScaler(), SVC(C=C, gamma=gamma, tol=tol))
    return 1.0 - float(cross_val_score(model, X, y, cv=3).mean())


def _forest_objective(trial: optuna.Trial) -> float:
    """A 30-tree random forest on the wine data, 3-fold CV error (fixed forest seed)."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import cross_val_score

    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(
        n_estimators=30, random_state=0,
        max_depth=trial.suggest_int("max_depth", 1, 20),
        min_samples_leaf=trial.suggest_int("min_samples_leaf", 1, 30),
        max_features=trial.suggest_float("max_features", 0.05, 1.0),
        criterion=trial.suggest_categorical("criterion", ["gini", "entropy"]),
    )
    _suggest_nothing(trial)
    return 1.0 - float(cross_val_score(model, X, y, cv=3).mean())


#: Real tuning tasks: their search space and objective; the do-nothing parameters are
#: SKLEARN_NOTHING in each.
REAL_TASKS: dict[str, tuple[hp.SearchSpace, Callable[[optuna.Trial], float]]] = {
    "sklearn": (hp.SearchSpace([
        hp.Float("C", 1e-3, 1e3, log=True), hp.Float("gamma", 1e-5, 1e0, log=True),
        hp.Float("tol", 1e-5, 1e-1, log=True), *_NOTHING_PARAMS]), _svc_objective),
    "sklearn_rf": (hp.SearchSpace([
        hp.Int("max_depth", 1, 20), hp.Int("min_samples_leaf", 1, 30),
        hp.Float("max_features", 0.05, 1.0), hp.Categorical("criterion", ["gini", "entropy"]),
        *_NOTHING_PARAMS]), _forest_objective),
}


# -- speed ---------------------------------------------------------------------------------
def speed(sizes: tuple[int, ...], repeats: int = 3) -> list[dict[str, Any]]:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    fn = FUNCTIONS["quad10"]
    dists = distributions(fn.space)
    out = []
    for n in sizes:
        configs = fn.space.sample(n, seed=0)
        cols = {name: np.array([c[name] for c in configs]) for name in fn.space.names}
        y = fn.f(cols, None)
        study = optuna.create_study()
        study.add_trials([optuna.trial.create_trial(params=c, distributions=dists, value=float(v))
                          for c, v in zip(configs, y, strict=True)])
        runs: dict[str, Callable[[], Any]] = {
            "hp_gp": lambda study=study: hp.fanova(hp.adapters.from_optuna(study), seed=0),
            "hp_forest": lambda study=study: hp.fanova(hp.adapters.from_optuna(study),
                                                       surrogate=hp.Forest(), seed=0),
            "optuna_ped_anova": lambda study=study: optuna.importance.get_param_importances(
                study, evaluator=optuna.importance.PedAnovaImportanceEvaluator()),
        }
        if n <= 2000:
            runs["optuna_fanova"] = lambda study=study: optuna.importance.get_param_importances(
                study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0))
        times = {}
        for name, run in runs.items():
            best = math.inf
            for _ in range(repeats):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    run()
                    best = min(best, time.perf_counter() - t0)
            times[name] = best
            print(f"speed {n:6d} trials x 10: {name:18s} {best:8.2f} s", file=sys.stderr, flush=True)
        for name, best in times.items():
            out.append({"n_trials": n, "n_params": 10, "estimator": name, "best_s": best,
                        "ratio_to_hp_gp": best / times["hp_gp"]})
    return out


# -- driver -------------------------------------------------------------------------------
ESTIMATORS = ("hp_forest", "hp_gp", "optuna_fanova", "optuna_ped_anova", "hp_gp_split")


def ped_anova_kind() -> str:
    """What Optuna's PedAnovaImportanceEvaluator computes in the installed version: since
    Optuna 5.0 it is condPED-ANOVA (Optuna PR #6682), which splits each parameter's
    trials into regimes by the distribution they had for it (inactive being one) and
    sums the regimes' weighted Pearson divergences; before, plain PED-ANOVA."""
    try:
        from optuna.importance._ped_anova import evaluator
    except ImportError:
        return "PED-ANOVA"
    return "condPED-ANOVA" if hasattr(evaluator, "_partition_by_regime") else "PED-ANOVA"


def space_kind(trials: list[Any]) -> dict[str, list[str]]:
    """The study's conditional parameters (missing from some trials) and dynamic ones
    (more than one distribution across its trials)."""
    dists: dict[str, list[Any]] = {}
    for t in trials:
        for name, d in t.distributions.items():
            if d not in dists.setdefault(name, []):
                dists[name].append(d)
    return {"conditional": sorted(n for n in dists if any(n not in t.params for t in trials)),
            "dynamic": sorted(n for n, ds in dists.items() if len(ds) > 1)}


def label(estimator: str, kind: dict[str, list[str]]) -> str:
    """The estimator's name in tables: Optuna's PED-ANOVA evaluator is named for what it
    computes on the study's space."""
    if estimator == "optuna_ped_anova":
        ped = ped_anova_kind()
        return ped if kind["conditional"] or kind["dynamic"] else "PED-ANOVA"
    return estimator


def run_one(job: tuple[str, str, int, tuple[int, ...], tuple[str, ...], str]) -> list[dict[str, Any]]:
    fname, sampler, seed, sizes, estimators, workdir = job
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    t0 = time.perf_counter()
    if fname in REAL_TASKS:
        space, real_objective = REAL_TASKS[fname]
        study = optuna.create_study(sampler=make_sampler(sampler, seed))
        study.optimize(real_objective, n_trials=max(sizes))
        full = study
        fn = None
    else:
        fn = FUNCTIONS[fname]
        space = fn.space
        full = (smac_study(fn, seed, max(sizes), workdir) if sampler == "smac"
                else optuna_study(fn, sampler, seed, max(sizes)))
    study_s = time.perf_counter() - t0
    trials = [t for t in full.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.COMPLETE]
    rows = []
    for n in sizes:
        prefix = optuna.create_study(direction=full.direction)
        prefix.add_trials(trials[:n])
        kind = space_kind(trials[:n])
        for est in estimators:
            if est == "hp_gp_split" and (fn is None or not fn.dynamic):
                continue  # the same as hp_gp where no parameter is dynamic
            t1 = time.perf_counter()
            imp, verdicts = estimate(est, prefix, space, seed, fn)
            secs = time.perf_counter() - t1
            rows.append({"function": fname, "sampler": sampler, "seed": seed, "n_trials": n,
                         "estimator": est, "label": label(est, kind), "seconds": secs,
                         "importances": imp, "verdicts": verdicts, "study_s": study_s,
                         "conditional_params": kind["conditional"],
                         "dynamic_params": kind["dynamic"]})
    print(f"{fname:12s} {sampler:7s} seed {seed}: study {study_s:.1f}s", file=sys.stderr, flush=True)
    return rows


def summarize(rows: list[dict[str, Any]], truths: dict[str, dict[str, float] | None]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, int, str], list[dict[str, Any]]] = {}
    for r in rows:
        nothing = SKLEARN_NOTHING if r["function"] in REAL_TASKS else FUNCTIONS[r["function"]].nothing
        r["score"] = score(r["importances"], truths[r["function"]], nothing)
        if r.get("verdicts"):
            r["score"].update(verdict_score(r["verdicts"], truths[r["function"]], nothing))
        groups.setdefault((r["function"], r["sampler"], r["n_trials"], r["estimator"]), []).append(r)
    table = []
    for (f, s, n, e), rs in sorted(groups.items()):
        sc = [r["score"] for r in rs]
        entry: dict[str, Any] = {
            "function": f, "sampler": s, "n_trials": n, "estimator": e,
            "label": " / ".join(sorted({r["label"] for r in rs})), "seeds": len(rs),
            "nothing_mass": statistics.fmean(x["nothing_mass"] for x in sc),
            "seconds": statistics.fmean(r["seconds"] for r in rs),
        }
        if "top3_found" in sc[0]:
            entry["top3_found"] = sum(bool(x["top3_found"]) for x in sc)
            entry["top3_recall"] = statistics.fmean(x["top3_recall"] for x in sc)
            rhos = [x["spearman"] for x in sc if x["spearman"] is not None]
            entry["spearman"] = statistics.fmean(rhos) if rhos else None
            entry["max_abs_error"] = statistics.fmean(x["max_abs_error"] for x in sc)
            entry["misplaced"] = statistics.fmean(x["misplaced"] for x in sc)
        for key in ("nothing_flagged", "real_called_nothing"):
            if key in sc[0]:
                entry[key] = statistics.fmean(x[key] for x in sc)
        table.append(entry)
    return table


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| function | sampler | trials | estimator | do-nothing mass | top 3 found | Spearman "
             "| misplaced | max abs error | nothing flagged | real called nothing | s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in table:
        top = f"{e['top3_found']}/{e['seeds']}" if "top3_found" in e else "-"
        rho = f"{e['spearman']:.2f}" if e.get("spearman") is not None else "-"
        err = f"{e['max_abs_error']:.3f}" if "max_abs_error" in e else "-"
        mis = f"{e['misplaced']:.3f}" if "misplaced" in e else "-"
        flagged = f"{e['nothing_flagged']:.2f}" if "nothing_flagged" in e else "-"
        missed = f"{e['real_called_nothing']:.2f}" if "real_called_nothing" in e else "-"
        est = e["estimator"] if e["label"] == e["estimator"] else f"{e['label']} ({e['estimator']})"
        lines.append(f"| {e['function']} | {e['sampler']} | {e['n_trials']} | {est} | "
                     f"{e['nothing_mass']:.3f} | {top} | {rho} | {mis} | {err} | {flagged} | {missed} | "
                     f"{e['seconds']:.2f} |")
    return "\n".join(lines)


def versions() -> dict[str, str]:
    """The versions the numbers belong to (Optuna's PED-ANOVA changed meaning in 5.0)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0], "optuna": optuna.__version__,
           "hpinsight": hp.__version__, "optuna_ped_anova": ped_anova_kind()}
    with contextlib.suppress(PackageNotFoundError):  # not installed: no SMAC rows
        out["smac"] = version("smac")
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--functions", default="quad10,rough,mixed,conditional,dynamic,sklearn,sklearn_rf")
    p.add_argument("--samplers", default="random,tpe,tpe_mv,cmaes")
    p.add_argument("--smac", action="store_true", help="add SMAC's HPO facade")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--sizes", default="100,150,200")
    p.add_argument("--estimators", default=",".join(ESTIMATORS))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="2 seeds, 100 trials")
    p.add_argument("--out")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown on stderr")
    p.add_argument("--workdir", default="bench-biased-work")
    p.add_argument("--speed", metavar="SIZES", help="only time the estimators at these sizes")
    args = p.parse_args(argv)
    for option, given, known in (
        ("--samplers", args.samplers, ("random", "tpe", "tpe_mv", "cmaes", "gp")),
        ("--functions", args.functions, (*FUNCTIONS, *REAL_TASKS)),
        ("--estimators", args.estimators, tuple(ESTIMATORS)),
    ):
        unknown = [v for v in given.split(",") if v and v not in known]
        if unknown:
            p.error(f"{option}: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.speed:
        doc = {"speed": speed(tuple(int(n) for n in args.speed.split(",")))}
        print(json.dumps(doc, indent=1))
        return 0
    if args.quick:
        args.seeds, args.sizes = 2, "100"
    sizes = tuple(int(s) for s in args.sizes.split(","))
    samplers = [s for s in args.samplers.split(",") if s] + (["smac"] if args.smac else [])
    estimators = tuple(args.estimators.split(","))
    jobs = []
    for f in args.functions.split(","):
        for s in samplers:
            if s == "cmaes" and (f in REAL_TASKS or not FUNCTIONS[f].continuous):
                continue
            # ConfigSpace has no parameter whose range depends on another's value
            if s == "smac" and (f in REAL_TASKS or FUNCTIONS[f].dynamic):
                continue
            jobs.extend((f, s, seed, sizes, estimators, args.workdir) for seed in range(args.seeds))
    truths: dict[str, dict[str, float] | None] = {
        f: (None if f in REAL_TASKS else analytic_truth(f) or true_first_order(FUNCTIONS[f]))
        for f in args.functions.split(",")
    }
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(run_one, jobs):
            rows.extend(r)
    table = summarize(rows, truths)
    doc = {"truth": truths, "summary": table, "runs": rows,
           "settings": dict(vars(args).items()), "versions": versions()}
    text = json.dumps(doc, indent=1, default=float)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)
    if args.markdown:
        print(markdown(table), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
