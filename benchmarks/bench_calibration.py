#!/usr/bin/env python
"""Are hpinsight's stated uncertainties honest? Intervals and verdicts against known truth.

Functions with known functional ANOVA, optimized by real samplers with noise added to
the objective; the default Gaussian-process fANOVA analyses each study, and every
effect's stated 90 % interval and verdict are scored against the truth.

Functions (the truth: the functional ANOVA of the noiseless function under the space's
measure, computed on a tensor grid over the parameters that act -- midpoints of 48
cells per float in its encoded coordinate, every value of an int -- so main effects and
pairs are exact to the grid's resolution):

* ``additive``: 10 parameters, 3 act additively (a log-scale float with a sine, a
  float with a bowl, an int with a parabola); 7 do nothing.
* ``interaction``: 10 parameters; a pure two-way interaction
  ``16 (a - 1/2)(b - 1/2)`` (no main effects) plus a main effect of ``c``; 7 do nothing.
* ``sparse40``: 40 parameters, 4 act (a log float, a float with a step, a float with
  a bowl, an int), one pair interacts; 36 do nothing.
* ``edge``: an Ishigami-type function, ``sin x1 (1 + 0.1 x3^4) + 2 sin^2 x2`` on
  ``[-pi, pi]^3``, plus 7 do-nothing parameters. x3 acts only through its interaction
  with x1, and most strongly at the edges of its range, where TPE ends up sampling
  almost exclusively: the effect lives where the sampler did not look.

Noise: Gaussian, with variance ``Var(f) / SNR`` (``--snrs``, ``inf`` for none).
Samplers: random, TPE, CMA-ES (Optuna) and SMAC's HPO facade (``smac``).

Scored per (function, sampler, SNR), over seeds, on the main effects of every
parameter and the pairs among the parameters that act (``max_order=2`` for the
10-parameter functions, main effects only on ``sparse40``):

* ``coverage``: share of effects whose true share lies in the stated 90 % interval,
  also split into effects that are zero and effects that are not;
* ``zero resolved``: share of zero effects with the verdict "resolved";
* ``largest nothing``: share of studies whose largest true effect got the verdict
  "indistinguishable from nothing";
* ``nothing mass``: share of the main effects' importance on parameters that do nothing;
* ``top found``: studies whose estimated top main effects are exactly the true ones
  (the parameters with a main effect above 0.02);
* ``seed flips``: share of parameters whose main-effect verdict changes when only the
  analysis seed changes (a second analysis of the same trials).

The stated 90 % interval is ``mean +- 1.645 std`` (the normal interval of the
``mean +- std`` hpinsight prints), clipped at 0: the std over the model's draws and,
as ``hp.GP()`` does by default, over its half-sample hyperparameter refits
(``--refits K`` sets their number, 0 for none).

    python benchmarks/bench_calibration.py --table                       # 5 seeds, everything
    python benchmarks/bench_calibration.py --functions sparse40 --samplers tpe --snrs 4,1 --table
    python benchmarks/bench_calibration.py --studies studies/ ...   # trials kept and reused
    python benchmarks/bench_calibration.py --refits 0 ...           # hp.GP(refits=0)
    python benchmarks/bench_calibration.py --cap 0.25 ...           # among the best 25 %

Capped (``--cap Q``): every study analysed with ``cap_quantile=Q`` (Hutter et al. 2014,
Sec. 3.3), scored against the shares of what that analysis estimates, the expected capped
observation ``E[min(f(x) + e, cap)]`` at the cap the analysis applied
(:func:`capped_truth`). Capping makes the acting parameters interact and gives ``a`` and
``b`` of ``interaction`` main effects; the do-nothing parameters stay at 0. Each run
stores its truth (``truth``), so ``--rescore`` scores it against the same. The capped
analysis is judged as the report and the decisions show it, beside the analysis of all
trials of the same study (``FanovaResult.beside``: nothing among the best only where
nothing over all trials); ``seconds`` is the capped analysis's alone.

One JSON document on stdout (and in ``--out``; every effect of every analysis with its
mean, std, null (``shadow``), interval and verdict, and for main effects the p-value of
the model's leave-one-out errors' dependence on the parameter (``residual_p``) and how
large an effect of it the trials could hide (``hidden``, ``Importance.hidden``), so other
verdict rules can be scored on it); progress on stderr; ``--table`` also prints a
Markdown table on stderr. ``--rescore FILE [FILE ...]`` scores saved JSON again without
refitting, the runs of all files together (the table; the same pooled per sampler and
over every run, function and SNR; what moves the verdicts that flip, :func:`flip_causes`; the rules for "indistinguishable from nothing" of
:data:`RULES`; and how far below the mean the lower end that must clear the null lies for
"resolved", :data:`RESOLVED_KS`):

    python benchmarks/bench_calibration.py --rescore out.json smac.json

A peer with intervals, side by side on the same trials: ``--ax-python PY`` (with
``--studies``) runs ``peer_ax_sobol.py`` under ``PY``, an interpreter whose environment has
Ax (``pip install ax-platform``; not a dependency of hpinsight), on every study: Ax's
first-order Sobol indices from samples of a BoTorch GP's posterior, as a mean and std.
The table ``main effects side by side`` scores both on the main effects only, with the
same 90 % interval (``mean +- 1.645 std``, clipped at 0) and the same rules:

* ``coverage``: as above, main effects only;
* ``zero claimed``: zero main effects whose interval lies above ``CLAIM`` (0.01, one
  percent of the variance): a claim of an effect that is not there;
* ``largest open``: studies whose largest true main effect's interval reaches below
  ``CLAIM``: the one effect that matters most, not shown to matter;
* ``nothing mass``, ``top found`` and seconds as above (negative estimates count as 0).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import pickle
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from scipy import special

import hpinsight as hp
from hpinsight._fanova_result import INTERVAL_Z, MATTERS_SHARE, NO_EFFECT, verdict

optuna.logging.set_verbosity(optuna.logging.WARNING)

U = dict[str, np.ndarray]  # encoded coordinates in [0, 1] (ints: their values)
NOTHING, RESOLVED = "indistinguishable from nothing", "resolved"
#: The share an interval must clear to claim an effect, in the side-by-side table.
CLAIM = 0.01
PEER_SCRIPT = Path(__file__).resolve().parent / "peer_ax_sobol.py"


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[Any, ...]  # hp.Float / hp.Int
    acting: tuple[str, ...]
    f: Callable[[U], np.ndarray]  # vectorized over encoded coordinates
    max_order: int

    @property
    def space(self) -> hp.SearchSpace:
        return hp.SearchSpace(list(self.params))


def _encode(p: Any, x: np.ndarray) -> np.ndarray:
    """Native values -> the coordinate the functions are written in."""
    if isinstance(p, hp.Int):
        return np.asarray(x, dtype=float)
    lo, hi, v = (math.log(p.low), math.log(p.high), np.log(x)) if p.log else (p.low, p.high, x)
    return (np.asarray(v, dtype=float) - lo) / (hi - lo)


def _floats(prefix: str, n: int) -> list[Any]:
    return [hp.Float(f"{prefix}{i}", 0.0, 1.0) for i in range(n)]


def _additive(u: U) -> np.ndarray:
    return np.sin(2 * np.pi * u["lr"]) + 6 * (u["width"] - 0.3) ** 2 + (u["depth"] - 5) ** 2 / 8


def _interaction(u: U) -> np.ndarray:
    return 16 * (u["a"] - 0.5) * (u["b"] - 0.5) + 1.5 * u["c"]


def _sparse40(u: U) -> np.ndarray:
    return (np.sin(2 * np.pi * u["lr"]) + 1.2 * (u["mom"] > 0.6) + 4 * (u["wd"] - 0.4) ** 2
            + (u["layers"] - 3) ** 2 / 4 + 6 * (u["lr"] - 0.5) * (u["wd"] - 0.5))


def _edge(u: U) -> np.ndarray:  # Ishigami's inputs, encoded on [0, 1], back on [-pi, pi]
    x1, x2, x3 = (2 * np.pi * u[k] - np.pi for k in ("x1", "x2", "x3"))
    return np.sin(x1) * (1 + 0.1 * x3**4) + 2 * np.sin(x2) ** 2


FUNCTIONS = {
    "additive": Function("additive", (hp.Float("lr", 1e-4, 1.0, log=True), hp.Float("width", 0.0, 1.0),
                                      hp.Int("depth", 1, 8), *_floats("n", 7)),
                         ("lr", "width", "depth"), _additive, 2),
    "interaction": Function("interaction", (hp.Float("a", 0.0, 1.0), hp.Float("b", 0.0, 1.0),
                                            hp.Float("c", 0.0, 1.0), *_floats("n", 7)),
                            ("a", "b", "c"), _interaction, 2),
    "sparse40": Function("sparse40", (hp.Float("lr", 1e-5, 1e-1, log=True), hp.Float("mom", 0.0, 1.0),
                                      hp.Float("wd", 0.0, 1.0), hp.Int("layers", 1, 6), *_floats("n", 36)),
                         ("lr", "mom", "wd", "layers"), _sparse40, 1),
    "edge": Function("edge", (hp.Float("x1", -math.pi, math.pi), hp.Float("x2", -math.pi, math.pi),
                              hp.Float("x3", -math.pi, math.pi), *_floats("n", 7)),
                     ("x1", "x2", "x3"), _edge, 2),
}
#: Midpoints per float of the truth's tensor grid.
_GRID = 48
#: A share below this is an effect that is zero by construction (``x3`` alone in
#: ``edge``, ``a`` and ``b`` alone in ``interaction``, the pairs that do not interact),
#: which the grid's rounding leaves at about 1e-31: it is scored as zero.
_ZERO = 1e-12
#: An effect above this share counts as real in the tables ("top found", "effects above 0.02").
REAL_SHARE = 0.02


# -- truth --------------------------------------------------------------------------------
@functools.cache
def _grid(name: str) -> np.ndarray:
    """The noiseless function on the truth's tensor grid over the parameters that act."""
    fn = FUNCTIONS[name]
    by_name = {p.name: p for p in fn.params}
    axes = []
    for acting in fn.acting:
        p = by_name[acting]
        axes.append(np.arange(p.low, p.high + 1, dtype=float) if isinstance(p, hp.Int)
                    else (np.arange(_GRID) + 0.5) / _GRID)
    mesh = np.meshgrid(*axes, indexing="ij")
    F: np.ndarray = fn.f(dict(zip(fn.acting, mesh, strict=True)))
    return F


def _shares(acting: tuple[str, ...], F: np.ndarray) -> dict[tuple[str, ...], float]:
    """Shares of variance of the main effects and pairs of ``F``, values on the grid."""
    k, f0, var = len(acting), float(F.mean()), float(F.var())
    mains = {}
    for i in range(k):
        mains[i] = F.mean(axis=tuple(j for j in range(k) if j != i)) - f0
    out: dict[tuple[str, ...], float] = {}
    for i in range(k):
        out[(acting[i],)] = _exact_zero(float((mains[i] ** 2).mean()) / var)
    for i, j in itertools.combinations(range(k), 2):
        pair = F.mean(axis=tuple(m for m in range(k) if m not in (i, j))) - f0
        pure = pair - mains[i][:, None] - mains[j][None, :]
        out[(acting[i], acting[j])] = _exact_zero(float((pure**2).mean()) / var)
    return out


@functools.cache
def truth(name: str) -> tuple[dict[tuple[str, ...], float], float]:
    """Shares of variance of the main effects and pairs of the acting parameters, and the
    function's variance, on a tensor grid (the do-nothing parameters have share 0);
    computed once per function and process."""
    F = _grid(name)
    return _shares(FUNCTIONS[name].acting, F), float(F.var())


def capped_truth(name: str, cap: float, sigma: float) -> dict[tuple[str, ...], float]:
    """The shares a capped analysis (``--cap``) estimates: those of the expected capped
    observation ``g(x) = E[min(f(x) + e, cap)]``, ``e ~ N(0, sigma^2)``. The studies
    minimize, and the analysis caps the noisy values it is given, so the noise enters
    the truth: ``g = f - (f - cap) Phi(z) - sigma phi(z)`` with ``z = (f - cap) / sigma``
    (``E[max(Z - cap, 0)]`` of a normal ``Z``), and ``min(f, cap)`` without noise."""
    F = _grid(name)
    if sigma > 0:
        z = (F - cap) / sigma
        G = F - (F - cap) * special.ndtr(z) - sigma * np.exp(-0.5 * z**2) / math.sqrt(2 * math.pi)
    else:
        G = np.minimum(F, cap)
    return _shares(FUNCTIONS[name].acting, G)


def run_truth(run: dict[str, Any]) -> dict[tuple[str, ...], float]:
    """The truth a run's analyses are scored against: the function's, or, for a capped
    analysis, the one stored with the run (:func:`capped_truth`)."""
    if run.get("truth") is None:
        return truth(run["function"])[0]
    return {tuple(k.split(" x ")): float(v) for k, v in run["truth"].items()}


def largest_main(true: dict[tuple[str, ...], float]) -> str:
    """The parameter with the largest true main effect in ``true`` (a run's truth)."""
    return max((k[0] for k in true if len(k) == 1), key=lambda p: true[(p,)])


def true_top(true: dict[tuple[str, ...], float]) -> set[str]:
    """The parameters whose true main effect in ``true`` exceeds ``REAL_SHARE`` (the
    "top" the tables look for)."""
    return {k[0] for k, v in true.items() if len(k) == 1 and v > REAL_SHARE}


def _exact_zero(share: float) -> float:
    return 0.0 if share < _ZERO else share


# -- studies ------------------------------------------------------------------------------
def _objective(fn: Function, sigma: float, rng: np.random.Generator) -> Callable[[dict[str, Any]], float]:
    def value(config: dict[str, Any]) -> float:
        u = {p.name: _encode(p, np.asarray([config[p.name]], dtype=float)) for p in fn.params}
        return float(fn.f(u)[0]) + (float(rng.normal(0.0, sigma)) if sigma > 0 else 0.0)
    return value


def run_study(fn: Function, sampler: str, seed: int, n_trials: int, sigma: float) -> hp.TrialHistory:
    rng = np.random.default_rng(10_000 + seed)
    value = _objective(fn, sigma, rng)
    if sampler == "smac":
        from smac import HyperparameterOptimizationFacade, Scenario

        cs = hp.adapters.to_configspace(fn.space, seed=seed)
        with tempfile.TemporaryDirectory() as tmp:
            scen = Scenario(cs, deterministic=True, n_trials=n_trials, seed=seed, output_directory=tmp)
            smac = HyperparameterOptimizationFacade(scen, lambda config, seed=0: value(dict(config)),
                                                    overwrite=True, logging_level=40)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                smac.optimize()
            return hp.adapters.from_smac(smac)
    samplers = {"random": lambda: optuna.samplers.RandomSampler(seed=seed),
                "tpe": lambda: optuna.samplers.TPESampler(seed=seed),
                "cmaes": lambda: optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=10)}
    study = optuna.create_study(sampler=samplers[sampler]())

    def objective(trial: optuna.Trial) -> float:
        config = {}
        for p in fn.params:
            if isinstance(p, hp.Int):
                config[p.name] = trial.suggest_int(p.name, p.low, p.high)
            else:
                config[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
        return value(config)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=n_trials)
    return hp.adapters.from_optuna(study)


# -- scoring ------------------------------------------------------------------------------
def analyse(fn: Function, history: hp.TrialHistory, seed: int, refits: int | None = None,
            cap: float | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = hp.GP() if refits is None else hp.GP(refits=refits)
        r = hp.fanova(history, surrogate=model, seed=seed, max_order=fn.max_order, cap_quantile=cap)
        seconds = time.perf_counter() - started
        if cap is not None:  # judged as every surface shows it: beside all trials' analysis
            r = r.beside(hp.fanova(history, surrogate=model, seed=seed, max_order=fn.max_order))
    effects: dict[str, Any] = {}
    keys = [(p.name,) for p in fn.params]
    if fn.max_order >= 2:
        keys += itertools.combinations(fn.acting, 2)
    # per parameter: does the model's leave-one-out error depend on it (unadjusted p)?
    residual = r.model.residual_pvalues
    names = list(history.space.names)
    for key in keys:
        imp = r.importance(*key)
        effects[" x ".join(key)] = {"mean": imp.mean, "std": imp.std, "shadow": imp.shadow, "verdict": imp.verdict,
                                    "hidden": imp.hidden, "regrown": imp.regrown,
                                    "low": imp.interval[0], "high": imp.interval[1]}
        if len(key) == 1 and residual is not None:
            p = float(residual[names.index(key[0])])
            effects[key[0]]["residual_p"] = p if math.isfinite(p) else None
    ranks = [m.held_out_rank for m in getattr(r.model, "refits", ())]
    return {"effects": effects, "seconds": seconds, "cap_value": r.cap_value,
            "held_out_ranks": [None if v is None else round(v, 4) for v in ranks],
            "held_out_rank": r.held_out_rank, "held_out_bound": r.held_out_bound, "n_refits": r.n_refits,
            "signal_unshown": r.signal_unshown}


def run_peer(python: str, name: str, saved: Path) -> dict[str, Any]:
    """Ax's indices on one saved study (``peer_ax_sobol.py`` under ``python``), or the
    error it gave."""
    done = subprocess.run([python, str(PEER_SCRIPT), name, str(saved)], capture_output=True, text=True,
                          timeout=1800, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    out: dict[str, Any] = json.loads(lines[-1])
    return out


def run_one(job: tuple[str, str, str, int, int, str | None, int | None, str | None, float | None]) -> dict[str, Any]:
    name, sampler, snr_text, seed, n_trials, studies, refits, ax_python, cap = job
    snr = float(snr_text)
    fn = FUNCTIONS[name]
    _, var = truth(name)
    sigma = 0.0 if math.isinf(snr) else math.sqrt(var / snr)
    saved = Path(studies, f"{name}_{sampler}_snr{snr_text}_seed{seed}_{n_trials}.pkl") if studies else None
    study_seconds = None  # a reused study was not run here: its time is not known
    if saved is not None and saved.exists():
        with saved.open("rb") as fh:
            history = pickle.load(fh)  # written by this script, below
    else:
        started = time.perf_counter()
        history = run_study(fn, sampler, seed, n_trials, sigma)
        study_seconds = time.perf_counter() - started
        if saved is not None:
            saved.parent.mkdir(parents=True, exist_ok=True)
            with saved.open("wb") as fh:
                pickle.dump(history, fh)
    first, second = analyse(fn, history, seed, refits, cap), analyse(fn, history, seed + 1000, refits, cap)
    row = {"function": name, "sampler": sampler, "snr": snr_text, "seed": seed, "n_trials": n_trials,
           "study_seconds": study_seconds, "analysis": first, "reanalysis": second}
    if cap is not None:  # both analyses cap the same values at the same value
        true = capped_truth(name, first["cap_value"], sigma)
        row["truth"] = {" x ".join(k): v for k, v in true.items()}
    if ax_python is not None and saved is not None:
        row["peers"] = {"ax": run_peer(ax_python, name, saved)}
    return row


#: The label of a pooled column in a table's cell (every function, sampler or SNR).
POOLED = "all"


def _cells(rows: list[dict[str, Any]], pooled: bool = False) -> list[tuple[tuple[str, str, str], list[dict[str, Any]]]]:
    """The runs grouped by (function, sampler, SNR), in the tables' order; with ``pooled``,
    by sampler over every function and SNR, then all runs together."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if pooled:
            for sampler in (row["sampler"], POOLED):
                groups.setdefault((POOLED, sampler, POOLED), []).append(row)
        else:
            groups.setdefault((row["function"], row["sampler"], row["snr"]), []).append(row)
    return sorted(groups.items(), key=lambda g: (g[0][0], g[0][1] == POOLED, g[0][1],
                                                 -float(g[0][2]) if g[0][2] != POOLED else 0.0))


def _mass_and_top(fn: Function, mains: dict[str, float], top_set: set[str]) -> tuple[float, bool]:
    """The share of the main effects' total on parameters that do nothing (negative
    estimates count as 0), and whether the largest ones are exactly ``top_set``."""
    mains = {k: max(v, 0.0) for k, v in mains.items()}
    total = sum(mains.values())
    mass = sum(v for k, v in mains.items() if k not in fn.acting) / total if total > 0 else 1.0
    return mass, set(sorted(mains, key=mains.get, reverse=True)[: len(top_set)]) == top_set


def summarize(rows: list[dict[str, Any]], pooled: bool = False) -> list[dict[str, Any]]:
    """Per (function, sampler, SNR), or with ``pooled`` per sampler and over all runs,
    the scores of the module docstring ("seeds": the studies in the row)."""
    table = []
    for (name, sampler, snr), runs in _cells(rows, pooled):
        cover = {"zero": [], "nonzero": []}
        zero_resolved, largest_nothing, mass, top, flips, seconds = [], [], [], [], [], []
        for run in runs:
            fn = FUNCTIONS[run["function"]]
            true = run_truth(run)
            largest, top_set = largest_main(true), true_top(true)
            eff = run["analysis"]["effects"]
            seconds.append(run["analysis"]["seconds"])
            for key, e in eff.items():
                t = true.get(tuple(key.split(" x ")), 0.0)
                cover["zero" if t == 0 else "nonzero"].append(e["low"] <= t <= e["high"])
                if t == 0:
                    zero_resolved.append(e["verdict"] == RESOLVED)
            largest_nothing.append(eff[largest]["verdict"] in NO_EFFECT)
            m, found = _mass_and_top(fn, {p.name: eff[p.name]["mean"] for p in fn.params}, top_set)
            mass.append(m)
            top.append(found)
            other = run["reanalysis"]["effects"]
            flips.extend(eff[p.name]["verdict"] != other[p.name]["verdict"] for p in fn.params)
        allc = cover["zero"] + cover["nonzero"]
        table.append({
            "function": name, "sampler": sampler, "snr": snr, "seeds": len(runs),
            "coverage": float(np.mean(allc)), "coverage_nonzero": float(np.mean(cover["nonzero"])),
            "coverage_zero": float(np.mean(cover["zero"])),
            "zero_resolved": float(np.mean(zero_resolved)), "largest_nothing": float(np.mean(largest_nothing)),
            "nothing_mass": float(np.median(mass)), "top_found": int(sum(top)),
            "seed_flips": float(np.mean(flips)), "seconds": float(np.median(seconds)),
        })
    return table


def score_pair_check(runs: list[dict[str, Any]]) -> str:
    """Pairs resolved with the analysis's removal check (``Importance.regrown``) and
    against the shadows alone, per sampler and over all runs: with true share 0 and
    with a real interaction (a Markdown table)."""
    lines = ["| sampler | zero pairs | resolved: shadows alone -> with the check | real pairs "
             "| resolved: shadows alone -> with the check |", "|---|---|---|---|---|"]
    groups: dict[str, list[tuple[float, dict[str, Any]]]] = {}
    for run in runs:
        true = run_truth(run)
        for key, e in run["analysis"]["effects"].items():
            if " x " in key:
                groups.setdefault(run["sampler"], []).append((true.get(tuple(key.split(" x ")), 0.0), e))
    groups["all"] = [x for g in list(groups.values()) for x in g]
    for sampler, pairs in groups.items():
        cells = []
        for real in (False, True):
            sel = [e for t, e in pairs if (t > 0) == real]
            before = sum(verdict(e["mean"], e["std"], e["shadow"]) == RESOLVED for e in sel)
            after = sum(e["verdict"] == RESOLVED for e in sel)
            cells += [str(len(sel)), f"{before} -> {after}"]
        lines.append(f"| {sampler} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _default_nothing(e: dict[str, Any]) -> bool:
    """hpinsight's rule for "nothing" before the check of what the trials could hide."""
    return verdict(e["mean"], e["std"], e["shadow"]) in NO_EFFECT


def _could_hide(e: dict[str, Any], limit: float) -> bool:
    return e["hidden"] is not None and e["hidden"] > limit


#: Rules for "indistinguishable from nothing" scored by ``--rescore``: a name, and a test
#: of one main effect's record (the rest of the verdict as hpinsight's, see
#: :func:`_rule_verdict`).
RULES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "share below the null (before the check of what the trials could hide)": _default_nothing,
    "mean + std below the null": lambda e: _default_nothing(e) and e["mean"] + e["std"] <= e["shadow"],
    "mean + 1.645 std below the null": lambda e: _default_nothing(e) and e["mean"] + INTERVAL_Z * e["std"] <= e["shadow"],
    f"share below the null, trials could hide at most {MATTERS_SHARE:g} (hpinsight's)":
        lambda e: _default_nothing(e) and not _could_hide(e, MATTERS_SHARE),
    "share below the null, trials could hide at most 0.1": lambda e: _default_nothing(e) and not _could_hide(e, 0.1),
    "share below the null, trials could hide at most the null":
        lambda e: _default_nothing(e) and not _could_hide(e, e["shadow"]),
}


def _rule_verdict(e: dict[str, Any], nothing: Callable[[dict[str, Any]], bool]) -> str:
    """An effect's verdict with ``nothing`` as the rule for "nothing": hpinsight's
    otherwise, and "uncertain" where hpinsight's rule alone would say "nothing"."""
    if e["shadow"] is None:
        return e["verdict"]
    if nothing(e):
        return NOTHING
    base = verdict(e["mean"], e["std"], e["shadow"])
    return "uncertain" if base in NO_EFFECT else base


def score_rules(doc: dict[str, Any]) -> str:
    """A Markdown table: each rule in :data:`RULES` on every main effect of a saved run."""
    lines = ["| rule for \"nothing\" | largest effect \"nothing\", SNR 4 / 1 | effects above 0.02 "
             "\"nothing\", SNR 4 / 1 | zero effects \"nothing\", SNR inf / 4 / 1 | seed flips |",
             "|---|---|---|---|---|"]
    runs = [r for r in doc["runs"] if all(r[a]["effects"][p.name].get("hidden") is not None
                                          for a in ("analysis", "reanalysis") for p in FUNCTIONS[r["function"]].params)]
    for label, rule in RULES.items():
        largest: dict[str, list[bool]] = {"4": [], "1": []}
        real: dict[str, list[bool]] = {"4": [], "1": []}
        zero: dict[str, list[bool]] = {"inf": [], "4": [], "1": []}
        flips = []
        for run in runs:
            true = run_truth(run)
            top = largest_main(true)
            a, b = run["analysis"]["effects"], run["reanalysis"]["effects"]
            for p in FUNCTIONS[run["function"]].params:
                v, t = _rule_verdict(a[p.name], rule), true.get((p.name,), 0.0)
                flips.append(v != _rule_verdict(b[p.name], rule))
                if run["snr"] in zero and t == 0:
                    zero[run["snr"]].append(v in NO_EFFECT)
                if run["snr"] in real and t > REAL_SHARE:
                    real[run["snr"]].append(v in NO_EFFECT)
                if run["snr"] in largest and p.name == top:
                    largest[run["snr"]].append(v in NO_EFFECT)

        def pct(xs: list[bool]) -> str:
            return f"{np.mean(xs):.1%}" if xs else "-"
        lines.append(f"| {label} | {pct(largest['4'])} / {pct(largest['1'])} | {pct(real['4'])} / "
                     f"{pct(real['1'])} | {pct(zero['inf'])} / {pct(zero['4'])} / {pct(zero['1'])} "
                     f"| {pct(flips)} |")
    return "\n".join(lines)


def _main_effects(row: dict[str, Any], source: str) -> dict[str, dict[str, float]] | None:
    """One study's main effects from hpinsight (``source="hpinsight"``) or a peer, each
    with its 90 % interval; None where that peer gave none."""
    if source == "hpinsight":
        effects = row["analysis"]["effects"]
    else:
        effects = row.get("peers", {}).get(source, {}).get("effects")
        if effects is None:
            return None
    out = {}
    for p in FUNCTIONS[row["function"]].params:
        mean, std = float(effects[p.name]["mean"]), float(effects[p.name]["std"])
        out[p.name] = {"mean": mean, "low": max(mean - INTERVAL_Z * std, 0.0), "high": max(mean + INTERVAL_Z * std, 0.0)}
    return out


def summarize_mains(rows: list[dict[str, Any]], sources: tuple[str, ...] = ("hpinsight", "ax"),
                    pooled: bool = False) -> list[dict[str, Any]]:
    """Per (function, sampler, SNR), or with ``pooled`` per sampler and over all runs, and
    per source, the main effects scored with one rule for all (see the module docstring:
    ``zero claimed``, ``largest open``)."""
    table = []
    for (name, sampler, snr), runs in _cells(rows, pooled):
        for source in sources:
            cover: dict[str, list[bool]] = {"zero": [], "nonzero": []}
            claimed, open_, mass, top, seconds = [], [], [], [], []
            for run in runs:
                eff = _main_effects(run, source)
                if eff is None:
                    continue
                fn = FUNCTIONS[run["function"]]
                true = run_truth(run)
                largest, top_set = largest_main(true), true_top(true)
                seconds.append(run["analysis"]["seconds"] if source == "hpinsight" else run["peers"][source]["seconds"])
                for p in fn.params:
                    t, e = true.get((p.name,), 0.0), eff[p.name]
                    cover["zero" if t == 0 else "nonzero"].append(e["low"] <= t <= e["high"])
                    if t == 0:
                        claimed.append(e["low"] > CLAIM)
                open_.append(eff[largest]["low"] <= CLAIM)
                m, found = _mass_and_top(fn, {k: v["mean"] for k, v in eff.items()}, top_set)
                mass.append(m)
                top.append(found)
            if not seconds:
                continue
            table.append({
                "function": name, "sampler": sampler, "snr": snr, "source": source, "seeds": len(seconds),
                "coverage": float(np.mean(cover["zero"] + cover["nonzero"])),
                "coverage_nonzero": float(np.mean(cover["nonzero"])), "coverage_zero": float(np.mean(cover["zero"])),
                "zero_claimed": float(np.mean(claimed)), "largest_open": float(np.mean(open_)),
                "nothing_mass": float(np.median(mass)), "top_found": int(sum(top)),
                "seconds": float(np.median(seconds)),
            })
    return table


def markdown_mains(table: list[dict[str, Any]]) -> str:
    lines = ["| function | sampler | SNR | source | seeds | 90 % coverage of main effects (all / nonzero / zero) "
             f"| zero claimed (> {CLAIM:g}) | largest open | nothing mass (median) | top found | s per analysis |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in table:
        lines.append(
            f"| {t['function']} | {t['sampler']} | {t['snr']} | {t['source']} | {t['seeds']} | "
            f"{t['coverage']:.0%} / {t['coverage_nonzero']:.0%} / {t['coverage_zero']:.0%} | "
            f"{t['zero_claimed']:.1%} | {t['largest_open']:.0%} | {t['nothing_mass']:.3f} | "
            f"{t['top_found']}/{t['seeds']} | {t['seconds']:.2f} |")
    return "\n".join(lines)


#: Rules for "resolved" scored by ``--rescore``: the lower end ``mean - k std`` must clear
#: the null; 1.645, the lower end of the 90 % interval the tables score, is hpinsight's
#: (``INTERVAL_Z``; ``k = 1`` was, before product refits widened the spread where the
#: trials cannot tell main effects from an interaction).
RESOLVED_KS = (1.0, 1.2816, INTERVAL_Z, 2.0)


def _verdict_k(e: dict[str, Any], k: float) -> str:
    """hpinsight's verdict with ``mean - k std`` as the lower end that must clear the null."""
    base = verdict(e["mean"], e["std"], e["shadow"], e.get("hidden"))
    if verdict(e["mean"], 0.0, e["shadow"]) in NO_EFFECT:  # too small for the lower end to matter
        return base
    return "uncertain" if e["mean"] - k * e["std"] <= (e["shadow"] or 0.0) else RESOLVED


def score_resolved_rules(doc: dict[str, Any]) -> str:
    """A Markdown table: each rule of :data:`RESOLVED_KS` on every effect of a saved run."""
    lines = ["| lower end that must clear the null | zero effects resolved: pairs / main effects of parameters "
             "that act / parameters that do nothing | effects above 0.02 resolved | largest effect resolved "
             "| seed flips |", "|---|---|---|---|---|"]
    for k in RESOLVED_KS:
        zero: dict[str, list[bool]] = {"pair": [], "acting": [], "nothing": []}
        real, largest, flips = [], [], []
        for run in doc["runs"]:
            fn = FUNCTIONS[run["function"]]
            true = run_truth(run)
            top = (largest_main(true),)
            a, b = run["analysis"]["effects"], run["reanalysis"]["effects"]
            for name, e in a.items():
                key = tuple(name.split(" x "))
                t, v = true.get(key, 0.0), _verdict_k(e, k)
                if len(key) == 1:
                    flips.append(v != _verdict_k(b[name], k))
                if t == 0:
                    zero["pair" if len(key) == 2 else "acting" if name in fn.acting else "nothing"].append(v == RESOLVED)
                elif t > REAL_SHARE:
                    real.append(v == RESOLVED)
                if key == top:
                    largest.append(v == RESOLVED)
        label = f"mean - {k:.4g} std" + (" (hpinsight's)" if k == INTERVAL_Z else "")
        lines.append(f"| {label} | {np.mean(zero['pair']):.1%} / {np.mean(zero['acting']):.1%} / "
                     f"{np.mean(zero['nothing']):.1%} | {np.mean(real):.1%} | {np.mean(largest):.1%} "
                     f"| {np.mean(flips):.1%} |")
    return "\n".join(lines)


#: What an analysis's verdict of an effect is made of, in the order ``verdict`` takes them.
VERDICT_INPUTS = ("mean", "std", "shadow", "hidden")


def flip_causes(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Of the main effects whose verdict differs between a study's two analyses, how many
    take the second analysis's verdict when only one of :data:`VERDICT_INPUTS` is taken
    from it (a flip can count under several, or none), and ``"flips"``, how many differ."""
    counts = dict.fromkeys(("flips", *VERDICT_INPUTS), 0)
    for run in rows:
        a, b = run["analysis"]["effects"], run["reanalysis"]["effects"]
        for p in FUNCTIONS[run["function"]].params:
            first, second = a[p.name], b[p.name]
            if first["verdict"] == second["verdict"]:
                continue
            counts["flips"] += 1
            for name in VERDICT_INPUTS:
                swapped = {k: (second if k == name else first).get(k) for k in VERDICT_INPUTS}
                if verdict(swapped["mean"], swapped["std"], swapped["shadow"], swapped["hidden"]) == second["verdict"]:
                    counts[name] += 1
    return counts


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| function | sampler | SNR | seeds | 90 % coverage (all / nonzero / zero) | zero resolved "
             "| largest nothing | nothing mass (median) | top found | seed flips | s per analysis |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in table:
        lines.append(
            f"| {t['function']} | {t['sampler']} | {t['snr']} | {t['seeds']} | "
            f"{t['coverage']:.0%} / {t['coverage_nonzero']:.0%} / {t['coverage_zero']:.0%} | "
            f"{t['zero_resolved']:.1%} | {t['largest_nothing']:.0%} | {t['nothing_mass']:.3f} | "
            f"{t['top_found']}/{t['seeds']} | {t['seed_flips']:.1%} | {t['seconds']:.2f} |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument("--samplers", default="random,tpe,cmaes,smac")
    ap.add_argument("--snrs", default="inf,16,4,1")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2, help="studies run at once (processes)")
    ap.add_argument("--out")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--studies", metavar="DIR",
                    help="keep each study's trials here and reuse them when present, so that two "
                         "versions of the analysis are scored on the same trials")
    ap.add_argument("--refits", type=int, default=None,
                    help="hp.GP(refits=K) (default: hp.GP()'s): K half-sample hyperparameter fits "
                         "widen the spread; 0 for none")
    ap.add_argument("--cap", type=float, default=None, metavar="Q",
                    help="analyse among the best: hp.fanova(..., cap_quantile=Q), scored against the "
                         "capped truth (capped_truth)")
    ap.add_argument("--ax-python", metavar="PY",
                    help="interpreter of an environment with Ax: adds Ax's Sobol indices from GP posterior "
                         "samples on every study, side by side (needs --studies)")
    ap.add_argument("--rescore", metavar="JSON", nargs="+",
                    help="score these saved outputs again, their runs together (the table, the table "
                         "pooled per sampler and over all, and the verdict rules of RULES; no fitting)")
    args = ap.parse_args(argv)
    if args.ax_python and not args.studies:
        ap.error("--ax-python needs --studies DIR: the peer reads each study's saved trials")
    if args.cap is not None and not 0 < args.cap < 1:
        ap.error(f"--cap takes a quantile in (0, 1), got {args.cap}")
    if args.cap is not None and args.ax_python:
        ap.error("--cap scores hpinsight alone: the peer's indices are of the uncapped objective")
    for name in args.functions.split(","):
        if name not in FUNCTIONS:
            ap.error(f"unknown function {name!r}; choose from {', '.join(FUNCTIONS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.rescore:
        runs: list[dict[str, Any]] = []
        for path in args.rescore:
            with open(path) as fh:
                runs.extend(json.load(fh)["runs"])
        saved = {"runs": runs}
        causes = flip_causes(runs)
        sys.stdout.write(markdown(summarize(runs)) + "\n\n" + markdown(summarize(runs, pooled=True)) + "\n\n"
                         + f"seed flips: {causes.pop('flips')}; each taking the other analysis's verdict with "
                         + "only this from it: " + ", ".join(f"{k} {v}" for k, v in causes.items()) + "\n\n"
                         + score_rules(saved) + "\n\n" + score_resolved_rules(saved) + "\n\n"
                         + score_pair_check(runs) + "\n")
        if any("peers" in r for r in runs):
            sys.stdout.write("\n" + markdown_mains(summarize_mains(runs)) + "\n\n"
                             + markdown_mains(summarize_mains(runs, pooled=True)) + "\n")
        return 0
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    jobs = [(f, s, snr, seed, args.trials, args.studies, args.refits, args.ax_python, args.cap) for f in args.functions.split(",")
            for s in args.samplers.split(",") for snr in args.snrs.split(",") for seed in range(args.seeds)]
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for i, row in enumerate(pool.map(run_one, jobs), 1):
            rows.append(row)
            sys.stderr.write(f"[{i}/{len(jobs)} {time.perf_counter() - started:.0f}s] {row['function']} "
                             f"{row['sampler']} snr={row['snr']} seed {row['seed']}\n")
    table = summarize(rows)
    doc = {"settings": vars(args), "summary": table, "runs": rows,
           "main_effects": summarize_mains(rows) if args.ax_python else None,
           "versions": {"hpinsight": hp.__version__, "optuna": optuna.__version__}}
    text = json.dumps(doc, indent=1, default=float)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    sys.stdout.write(text + "\n")
    if args.table:
        sys.stderr.write(markdown(table) + "\n\n" + score_pair_check(rows) + "\n")
        if args.ax_python:
            sys.stderr.write("\n" + markdown_mains(doc["main_effects"]) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
