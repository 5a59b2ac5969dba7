#!/usr/bin/env python
"""Does ``shrink_to="auto"`` help a study, and is it safe? Shrinking against the full space.

Problems with known truth, where few of many parameters matter. Each is a sum of one
term per parameter (the conditional one: per branch), so the true cost of fixing a
parameter at a value is known exactly: the best value reachable with it fixed, minus
the optimum (0 on every problem).

* ``v10``: 10 parameters, three matter: ``10(a-.3)² + 5(b-.6)² + 0.3|c-.5|``. ``c`` is
  V-shaped: about 0.1 % of the variance, yet fixing it away from 0.5 costs up to 0.15,
  several times what a study still gains near its best. Seven nuisance floats do
  nothing.
* ``needle``: 10 parameters, three matter: ``10(a-.3)² + .5(log10 b+2)²`` and a dip of
  depth 1 and width 0.02 at ``z = .8``: ``1 - exp(-((z-.8)/.02)²)``. Fixing ``z`` away
  from the dip costs up to 1, and a study that never sampled near 0.8 has no trace of
  it (an effect where the optimizer did not look; added after an out-of-sample check
  found ``z`` fixed in 5 of 40 runs).
* ``sparse20``: 20 parameters, four matter: a float, a log float, an int and a V-shaped
  float; 16 nuisance floats.
* ``sparse30``: 30 parameters, five matter: the four of ``sparse20`` and a categorical
  with four choices; 25 nuisance floats (between the two below and above it, where the
  trials the library needs before it can fix grow from 2.5 to 5 per parameter).
* ``sparse40``: 40 parameters, the five of ``sparse30``; 35 nuisance floats.
* ``cond``: a conditional space of 12 parameters. ``kind`` picks a branch whose
  parameters exist only there (``a1``, ``a2`` or ``b1``, ``b2``); branch "b" holds the
  optimum, branch "a" is 0.5 worse at best. ``kind``, ``b1`` and ``x`` matter; ``a1``
  and ``a2`` cost nothing to fix (the best branch does not use them); six nuisance floats.
* ``optim``: a second conditional space, 15 parameters. ``opt`` picks "sgd"
  (``momentum``, ``nesterov``), "adam" (``beta1``, ``eps``) or "rmsprop" (``rho``);
  "adam" holds the optimum, the others are 0.3 and 0.6 worse at best; a log learning rate
  ``lr`` acts in every branch. ``opt``, ``lr`` and ``beta1`` matter; the other branches'
  parameters cost nothing to fix, and eight nuisance floats do nothing.
* ``svc`` and ``forest``: two real tunings (:class:`SklearnTuning`), ``1 - ROC AUC`` of an
  ``SVC`` (9 parameters) and a random forest (10, one of them its seed) in 3-fold CV on
  the breast-cancer data. No known truth: only the outcome columns are filled.

Arms, per problem, sampler and seed, on the same sampler seed:

* ``full``: the base sampler on the full space;
* ``auto``: ``ShrinkingSampler(base)`` with ``ImportanceCallback(shrink_to="auto",
  shrink_after=--shrink-after, seed=seed)``, its defaults: decisions at every multiple
  of 50 and at the first trial count from which the library can fix,
  ``min(5 d, max(50, d**2 / 8))`` on d parameters, before which nothing is fixed (50 on
  up to 20 parameters, 113 on ``sparse30``, 200 on ``sparse40``), and none before 2.5
  trials per parameter (75 on ``sparse30``, 100 on ``sparse40``); at the first decision
  (on more than 10 parameters, the first that
  finds an effect that matters, no later than the first that can fix) the parameters
  that matter are also narrowed to the range of the best
  quarter of the trials (``narrow_quantile="auto"``), each range widened to hold where
  the model finds the parameter's main effect best; a later check fixes a narrowed
  parameter found safe to fix, and widens a range when an exploring trial ran the
  parameter outside it and beat the model's prediction; while a restriction holds, one
  trial in ten spreads the fixed parameters over their ranges;
* ``fix`` (only when asked for): ``auto`` with ``narrow_quantile=None``, fixing alone
  (``auto`` before narrowing became its default);
* ``narrow`` (only when asked for): ``auto`` with ``narrow_quantile=0.25`` given, the
  same as ``auto`` since narrowing became its default (the arm of the earlier tables);
  in a JSON document from before that, ``auto`` is fixing alone (today's ``fix``), so
  ``--reuse`` of such a document renames nothing and must not be merged with new ``auto``
  runs;
* ``topk``: the published comparison point: at ``--shrink-after`` trials, Optuna's own
  importance (``optuna.importance.get_param_importances``, its fANOVA) ranks the
  parameters, and ``optuna.samplers.PartialFixedSampler`` fixes all but the top k at the
  best trial's values, k the number of parameters that truly matter (a size no user
  knows; the rule is given its best chance; on the real tunings, k = 3).

* ``oracle`` (only when asked for): every parameter whose fixing costs nothing (the
  nuisance floats; on ``cond`` also ``a1``, unused by the best branch) fixed at 0.5 from
  the first trial, with ``PartialFixedSampler``: the best any shrinking could do with
  this sampler, to tell a bad decision from a subspace the sampler itself is slower in.
* ``oracle_kept`` (only when asked for): the same parameters fixed from the first trial,
  but left in the base sampler's model (:class:`KeptInModel`: it still models them, and
  the fixed values overwrite what it proposes). ``PartialFixedSampler`` and
  ``ShrinkingSampler`` take them out of the base sampler's space; the two oracles side
  by side show what taking them out does to the sampler itself.

SMAC (``--samplers smac``, arms ``full``, ``auto`` and ``restart``; the known-truth problems, each
also declared as a ConfigSpace space by :func:`configspace`): the HPO facade with the
same seed; ``auto`` stops the run at its first decision point (as above) with
``ImportanceCallback(stop_after=...)`` and continues it with
``shrink_and_continue(keep="auto")`` for the rest of the same number of evaluations
(re-evaluations of old configurations count). One decision per run: SMAC has no live
restriction. ``restart`` is the control: the same stop and continuation with nothing
fixed (``fixed={}``: every old run is told, the space is the same), so ``auto`` against
``restart`` is what fixing did, and ``restart`` against ``full`` what continuing in a new
facade costs SMAC. Run it with ``PYTHONHASHSEED=0``: SMAC repeats a seeded run in a new process
only with a fixed hash seed.

Random search is :class:`PairedRandomSampler`: each parameter's draw depends only on
(seed, trial, parameter), so ``full`` and ``auto`` see the same values wherever both
sample, and their difference is what shrinking fixed, not the random stream.

Every trial also sleeps ``--trial-ms`` (20 ms), the cost of a cheap objective. The
callback's routine refits are turned off (``every_n_trials`` above the budget): with
decisions taken at trial counts, they change nothing that is measured here, and two
cores run every arm at once.

Reported per problem and sampler, at each budget: median and quartiles over seeds of the
best value, the ratio of the medians and the median of the per-seed ratios (the paired
one), the win rate of ``auto`` over ``full`` (paired by seed; ties do not win),
the worst seed's ratio, how many runs fixed a parameter that matters, how many fixed one
whose true cost exceeded the margin of the decision that fixed it, how many held one
whose true cost exceeded the margin of a later decision (margins shrink as a study
converges), the run's first fixing trial, the
share of runs that fixed at least half of the do-nothing parameters by trial 100, and
the seconds the study waited for its decisions; the median paired ratio's 90 % confidence
interval (the sign test's, over seeds), and on ``cond`` and ``optim`` the share of trials
after the 50th spent on a branch that cannot hold the optimum (``worse_branch_share``,
JSON only). One JSON document on stdout
(``--out`` also writes it), a Markdown table with ``--table``.

    python benchmarks/bench_shrink.py --seeds 10 --budget 200 --problems v10,sparse20,sparse40,cond --table   # about 35 min on 2 cores
    python benchmarks/bench_shrink.py --seeds 10 --budget 200 --problems svc,forest --samplers tpe,cmaes
    python benchmarks/bench_shrink.py --first-seed 10 --seeds 10 ... --reuse first.json   # seeds 10-19, merged
    PYTHONHASHSEED=0 python benchmarks/bench_shrink.py --seeds 5 --budget 200 --problems v10,sparse20,cond --samplers smac --arms full,auto
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import statistics
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna

# ------------------------------------------------------------------------- problems


def _quad(center: float, weight: float) -> Callable[[float], float]:
    return lambda v: weight * (v - center) ** 2


def _vee(center: float, weight: float) -> Callable[[float], float]:
    return lambda v: weight * abs(v - center)


def _log_quad(center: float, weight: float) -> Callable[[float], float]:
    return lambda v: weight * (math.log10(v) - center) ** 2


def _needle(center: float, width: float) -> Callable[[float], float]:
    return lambda v: 1.0 - math.exp(-(((v - center) / width) ** 2))


def _nuisance(v: float) -> float:
    """A parameter that does nothing. (Earlier versions added ``1e-4`` times its value: a
    real effect below what any model resolves once a study has converged, which turned
    every fixed nuisance into "a cost above the margin" late in a study and made the
    do-nothing parameters of the issue's criteria not do nothing. The small effect that
    is costly near the optimum is the V-shaped ``c``.)"""
    return 0.0 * v


@dataclass(frozen=True)
class Term:
    """One parameter of a separable problem: how it is suggested and what it adds."""

    name: str
    kind: str  # "float", "log", "int", "cat"
    low: Any
    high: Any
    g: Callable[[Any], float]
    minimum: float = 0.0  # the smallest value g takes on the parameter's range

    def suggest(self, t: optuna.Trial) -> Any:
        if self.kind == "float":
            return t.suggest_float(self.name, self.low, self.high)
        if self.kind == "log":
            return t.suggest_float(self.name, self.low, self.high, log=True)
        if self.kind == "int":
            return t.suggest_int(self.name, self.low, self.high)
        return t.suggest_categorical(self.name, self.low)

    def cost(self, value: Any) -> float:
        return float(self.g(value) - self.minimum)


def _nuisances(first: int, count: int) -> list[Term]:
    return [Term(f"n{i}", "float", 0.0, 1.0, _nuisance) for i in range(first, first + count)]


_CAT = {"w": 0.0, "x": 0.4, "y": 0.8, "z": 1.2}


def _core(v_weight: float = 0.3) -> list[Term]:
    return [Term("a", "float", 0.0, 1.0, _quad(0.3, 10.0)),
            Term("b", "log", 1e-4, 1.0, _log_quad(-2.0, 0.5)),
            Term("i", "int", 0, 20, _quad(7, 0.01)),
            Term("c", "float", 0.0, 1.0, _vee(0.5, v_weight))]


class Separable:
    """Sum of one term per parameter."""

    known_truth = True

    def __init__(self, name: str, terms: list[Term]) -> None:
        self.name = name
        self.terms = {t.name: t for t in terms}
        self.matters = tuple(t.name for t in terms if t.g is not _nuisance)
        self.nuisance = tuple(t.name for t in terms if t.g is _nuisance)

    def __call__(self, t: optuna.Trial) -> float:
        return sum(term.g(term.suggest(t)) for term in self.terms.values())

    def true_cost(self, name: str, value: Any) -> float:
        return self.terms[name].cost(value)


class Conditional:
    """``kind`` picks a branch; branch "b" holds the optimum, "a" is 0.5 worse at best."""

    name = "cond"
    known_truth = True
    matters = ("kind", "b1", "x")
    nuisance = ("a1", "a2", "b2", *(f"n{i}" for i in range(6)))

    def __call__(self, t: optuna.Trial) -> float:
        kind = t.suggest_categorical("kind", ["a", "b"])
        x = t.suggest_float("x", 0.0, 1.0)
        rest = sum(_nuisance(t.suggest_float(f"n{i}", 0.0, 1.0)) for i in range(6))
        if kind == "a":
            branch = 0.5 + 4.0 * (t.suggest_float("a1", 0.0, 1.0) - 0.2) ** 2 \
                + _nuisance(t.suggest_float("a2", 0.0, 1.0))
        else:
            branch = 3.0 * (t.suggest_float("b1", 0.0, 1.0) - 0.7) ** 2 \
                + _nuisance(t.suggest_float("b2", 0.0, 1.0))
        return 5.0 * (x - 0.6) ** 2 + branch + rest

    def true_cost(self, name: str, value: Any) -> float:
        if name == "kind":
            return 0.5 if value == "a" else 0.0
        if name == "x":
            return 5.0 * (float(value) - 0.6) ** 2
        if name == "b1":  # with b1 fixed, branch "a" (0.5 at best) may be the better one
            return min(3.0 * (float(value) - 0.7) ** 2, 0.5)
        return 0.0


_OPTIMIZERS = {"sgd": 0.3, "adam": 0.0, "rmsprop": 0.6}


class OptimizerChoice:
    """A second conditional space: ``opt`` picks one of three optimizers, each with its
    own parameters; "adam" holds the optimum, "sgd" is 0.3 worse at best, "rmsprop" 0.6."""

    name = "optim"
    known_truth = True
    matters = ("opt", "lr", "beta1")
    # momentum and rho tune only branches that cannot hold the optimum: fixing them
    # costs nothing, as a1 on cond
    nuisance = ("momentum", "nesterov", "rho", "eps", *(f"n{i}" for i in range(8)))

    def __call__(self, t: optuna.Trial) -> float:
        opt = t.suggest_categorical("opt", list(_OPTIMIZERS))
        lr = t.suggest_float("lr", 1e-5, 1e-1, log=True)
        rest = sum(_nuisance(t.suggest_float(f"n{i}", 0.0, 1.0)) for i in range(8))
        if opt == "sgd":
            branch = 2.0 * (t.suggest_float("momentum", 0.0, 1.0) - 0.9) ** 2 \
                + _nuisance(t.suggest_float("nesterov", 0.0, 1.0))
        elif opt == "adam":
            branch = 3.0 * (t.suggest_float("beta1", 0.0, 1.0) - 0.8) ** 2 \
                + _nuisance(t.suggest_float("eps", 0.0, 1.0))
        else:
            branch = (t.suggest_float("rho", 0.0, 1.0) - 0.5) ** 2
        return 0.5 * (math.log10(lr) + 3.0) ** 2 + _OPTIMIZERS[opt] + branch + rest

    def true_cost(self, name: str, value: Any) -> float:
        if name == "opt":
            return _OPTIMIZERS[value]
        if name == "lr":
            return 0.5 * (math.log10(value) + 3.0) ** 2
        if name == "beta1":  # with beta1 fixed, "sgd" (0.3 at best) may be the better one
            return min(3.0 * (float(value) - 0.8) ** 2, 0.3)
        return 0.0


#: Each conditional problem's branch choice and the choices that cannot hold the optimum.
WORSE_BRANCHES = {"cond": ("kind", {"a"}), "optim": ("opt", {"sgd", "rmsprop"})}


class SklearnTuning:
    """A real tuning: ``1 - ROC AUC`` of a scikit-learn classifier on the breast-cancer
    data, 3-fold stratified CV on one fixed split (what users run; the split's noise is
    the objective's). No known truth: which parameters matter, and what fixing one costs,
    is what the study finds out, so only the outcome columns are reported.

    * ``svc``: ``SVC`` after scaling; ``C``, ``gamma``, ``kernel``, ``degree``,
      ``coef0``, ``tol``, ``shrinking``, ``class_weight`` and ``cache_size`` (a speed knob).
    * ``forest``: ``RandomForestClassifier``; ``n_estimators`` (10-30), ``max_depth``,
      ``min_samples_split``, ``min_samples_leaf``, ``max_features``, ``bootstrap``,
      ``criterion``, ``class_weight`` and ``seed`` (its ``random_state``: noise, no trend).
    """

    matters: tuple[str, ...] = ()
    nuisance: tuple[str, ...] = ()
    known_truth = False

    def __init__(self, name: str) -> None:
        self.name = name
        self._data: Any = None

    def _model(self, t: optuna.Trial) -> Any:
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC

        weight = t.suggest_categorical("class_weight", [None, "balanced"])
        if self.name == "svc":
            return make_pipeline(StandardScaler(), SVC(
                C=t.suggest_float("C", 1e-3, 1e3, log=True),
                gamma=t.suggest_float("gamma", 1e-5, 10.0, log=True),
                kernel=t.suggest_categorical("kernel", ["rbf", "sigmoid", "poly"]),
                degree=t.suggest_int("degree", 2, 5),
                coef0=t.suggest_float("coef0", 0.0, 1.0),
                tol=t.suggest_float("tol", 1e-5, 1e-1, log=True),
                shrinking=t.suggest_categorical("shrinking", [True, False]),
                cache_size=t.suggest_float("cache_size", 100.0, 500.0),
                class_weight=weight, max_iter=20000))
        return RandomForestClassifier(
            n_estimators=t.suggest_int("n_estimators", 10, 30),
            max_depth=t.suggest_int("max_depth", 1, 20),
            min_samples_split=t.suggest_int("min_samples_split", 2, 20),
            min_samples_leaf=t.suggest_int("min_samples_leaf", 1, 20),
            max_features=t.suggest_float("max_features", 0.05, 1.0),
            bootstrap=t.suggest_categorical("bootstrap", [True, False]),
            criterion=t.suggest_categorical("criterion", ["gini", "entropy", "log_loss"]),
            class_weight=weight, random_state=t.suggest_int("seed", 0, 1000), n_jobs=1)

    def __call__(self, t: optuna.Trial) -> float:
        import warnings

        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import StratifiedKFold, cross_val_score

        if self._data is None:
            self._data = load_breast_cancer(return_X_y=True)
        X, y = self._data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a capped SVC iteration count warns
            auc = cross_val_score(self._model(t), X, y, scoring="roc_auc",
                                  cv=StratifiedKFold(3, shuffle=True, random_state=0)).mean()
        return 1.0 - float(auc)

    def true_cost(self, name: str, value: Any) -> float:
        return math.nan


def configspace(problem: Any) -> Any:
    """The problem's search space for SMAC (ConfigSpace), the same as its Optuna suggestions."""
    import ConfigSpace as CS

    cs = CS.ConfigurationSpace(seed=0)
    if isinstance(problem, Separable):
        for term in problem.terms.values():
            if term.kind == "cat":
                cs.add(CS.Categorical(term.name, term.low))
            elif term.kind == "int":
                cs.add(CS.Integer(term.name, (term.low, term.high)))
            else:
                cs.add(CS.Float(term.name, (term.low, term.high), log=term.kind == "log"))
        return cs
    if isinstance(problem, Conditional):
        kind = CS.Categorical("kind", ["a", "b"])
        branch = {n: CS.Float(n, (0.0, 1.0)) for n in ("a1", "a2", "b1", "b2")}
        cs.add([kind, CS.Float("x", (0.0, 1.0)), *branch.values(),
                *(CS.Float(f"n{i}", (0.0, 1.0)) for i in range(6))])
        cs.add([CS.EqualsCondition(branch[n], kind, n[0]) for n in branch])
        return cs
    if isinstance(problem, OptimizerChoice):
        opt = CS.Categorical("opt", list(_OPTIMIZERS))
        owner = {"momentum": "sgd", "nesterov": "sgd", "beta1": "adam", "eps": "adam",
                 "rho": "rmsprop"}
        branch = {n: CS.Float(n, (0.0, 1.0)) for n in owner}
        cs.add([opt, CS.Float("lr", (1e-5, 1e-1), log=True), *branch.values(),
                *(CS.Float(f"n{i}", (0.0, 1.0)) for i in range(8))])
        cs.add([CS.EqualsCondition(branch[n], opt, owner[n]) for n in branch])
        return cs
    raise ValueError(f"no SMAC space for {problem.name}: SMAC runs the known-truth problems")


def _problems() -> dict[str, Any]:
    cat = Term("d", "cat", list(_CAT), None, _CAT.__getitem__)
    return {
        "v10": Separable("v10", [Term("a", "float", 0.0, 1.0, _quad(0.3, 10.0)),
                                 Term("b", "float", 0.0, 1.0, _quad(0.6, 5.0)),
                                 Term("c", "float", 0.0, 1.0, _vee(0.5, 0.3)),
                                 *_nuisances(0, 7)]),
        "needle": Separable("needle", [Term("a", "float", 0.0, 1.0, _quad(0.3, 10.0)),
                                       Term("b", "log", 1e-4, 1.0, _log_quad(-2.0, 0.5)),
                                       Term("z", "float", 0.0, 1.0, _needle(0.8, 0.02)),
                                       *_nuisances(0, 7)]),
        "sparse20": Separable("sparse20", [*_core(), *_nuisances(0, 16)]),
        "sparse30": Separable("sparse30", [*_core(), cat, *_nuisances(0, 25)]),
        "sparse40": Separable("sparse40", [*_core(), cat, *_nuisances(0, 35)]),
        "cond": Conditional(),
        "optim": OptimizerChoice(),
        "svc": SklearnTuning("svc"),
        "forest": SklearnTuning("forest"),
    }


PROBLEMS = _problems()

# ------------------------------------------------------------------------- one run


def make_sampler(kind: str, seed: int) -> optuna.samplers.BaseSampler:
    if kind == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if kind == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    if kind == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    return PairedRandomSampler(seed=seed)


class PairedRandomSampler(optuna.samplers.RandomSampler):
    """Random search whose draw for a parameter depends only on (seed, trial, parameter).

    Common random numbers: the ``full`` and ``auto`` arms draw the same value for every
    parameter both sample, so what differs between them is only what shrinking fixed.
    (Optuna's RandomSampler draws from one stream; a parameter left out shifts every
    later draw, and the paired comparison would then measure luck.) The draws are
    uniform on each distribution as Optuna's own are.
    """

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self._base_seed = seed

    def sample_independent(self, study: optuna.Study, trial: Any, param_name: str,
                           param_distribution: Any) -> Any:
        key = [self._base_seed, trial.number, zlib.crc32(param_name.encode())]
        draw = optuna.samplers.RandomSampler(seed=int(np.random.SeedSequence(key).generate_state(1)[0]))
        return draw.sample_independent(study, trial, param_name, param_distribution)


class KeptInModel(optuna.samplers.BaseSampler):
    """The ``oracle_kept`` arm's sampler: parameters in ``fixed`` keep their value, but the
    base sampler still models them (its relative search space is the whole one, fixed
    values overwrite what it proposes). ``PartialFixedSampler``, like
    ``ShrinkingSampler``, removes them from the base sampler's space instead; the two
    arms side by side show what that removal itself does to a sampler."""

    def __init__(self, fixed: dict[str, Any], base: optuna.samplers.BaseSampler) -> None:
        self._fixed, self._base = fixed, base

    def infer_relative_search_space(self, study: optuna.Study, trial: Any) -> dict[str, Any]:
        return self._base.infer_relative_search_space(study, trial)

    def sample_relative(self, study: optuna.Study, trial: Any,
                        search_space: dict[str, Any]) -> dict[str, Any]:
        proposed = self._base.sample_relative(study, trial, search_space)
        return {n: self._fixed.get(n, v) for n, v in proposed.items()}

    def sample_independent(self, study: optuna.Study, trial: Any, param_name: str,
                           param_distribution: Any) -> Any:
        if param_name in self._fixed:
            return self._fixed[param_name]
        return self._base.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: optuna.Study, trial: Any) -> None:
        self._base.before_trial(study, trial)

    def after_trial(self, study: optuna.Study, trial: Any, state: Any, values: Any) -> None:
        self._base.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self._base.reseed_rng()


def _timed(problem: Any, ms: float) -> Callable[[optuna.Trial], float]:
    def objective(t: optuna.Trial) -> float:
        value = problem(t)
        time.sleep(ms / 1000.0)  # the objective's own cost: the study waits for it
        return float(value)
    return objective


def _best_at(study: optuna.Study, budgets: list[int]) -> dict[str, float]:
    out, best = {}, math.inf
    for t in study.trials:
        if t.value is not None:
            best = min(best, t.value)
        if t.number + 1 in budgets:
            out[str(t.number + 1)] = best
    return out


class _Decisions:
    """A callback after the ImportanceCallback: records each new subspace decision with
    the margin it was taken against, and how long the study waited for it."""

    def __init__(self, cb: Any) -> None:
        self.cb = cb
        self.seen: Any = None
        self.rows: list[dict[str, Any]] = []
        self.last = time.perf_counter()

    def __call__(self, study: optuna.Study, trial: Any) -> None:
        sub = self.cb.subspace
        now = time.perf_counter()
        if sub is not None and sub is not self.seen:
            self.seen = sub
            # the trials it rests on (it is taken as the next trial starts)
            self.rows.append({"trial": sub.n_trials, "margin": sub.margin,
                              "fixed_now": dict(self.read(study)),
                              "ranges_now": dict(self.read_ranges(study)),
                              "seconds": now - self.last})
        self.last = now

    @staticmethod
    def read(study: optuna.Study) -> dict[str, Any]:
        from hpinsight.integrations.optuna import read_restriction

        return read_restriction(study)

    @staticmethod
    def read_ranges(study: optuna.Study) -> dict[str, tuple[float, float]]:
        from hpinsight.integrations.optuna import ShrinkingSampler

        return ShrinkingSampler.read_ranges(study)


def _range_cost(problem: Any, name: str, low: float, high: float) -> float:
    """The true cost of narrowing ``name`` to ``[low, high]``: the least cost of fixing it
    at a value in the range (the best of a fine grid, refined by Brent's method between
    its neighbours, so that an optimum inside the range costs 0 to rounding)."""
    from scipy.optimize import minimize_scalar

    def cost(v: float) -> float:
        return problem.true_cost(name, float(v))

    grid = np.linspace(low, high, 201)
    i = int(np.argmin([cost(v) for v in grid]))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi <= lo:
        return cost(grid[i])
    found = minimize_scalar(cost, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return float(min(found.fun, cost(grid[i])))


def run_smac(problem_name: str, arm: str, seed: int, budget: int, shrink_after: int,
             trial_ms: float) -> dict[str, Any]:
    """One SMAC run (HPO facade): the full space, or ``auto``: stopped at the first decision
    point by ``ImportanceCallback(stop_after=...)`` and continued by
    ``shrink_and_continue(keep="auto")`` for the rest of the same budget of evaluations
    (re-evaluations included). SMAC has one decision per run, not a live restriction."""
    import tempfile
    from pathlib import Path

    import smac

    from hpinsight.integrations.smac import ImportanceCallback, shrink_and_continue

    problem = PROBLEMS[problem_name]
    space = configspace(problem)
    costs: list[float] = []

    def target(config: Any, seed: int = 0) -> float:
        params = {k: v.item() if hasattr(v, "item") else v for k, v in dict(config).items()}
        value = float(problem(optuna.trial.FixedTrial(params)))
        time.sleep(trial_ms / 1000.0)
        costs.append(value)
        return value

    out_dir = Path(tempfile.mkdtemp(prefix="hpinsight-bench-shrink-smac-"))

    def facade(name: str, callbacks: list[Any]) -> Any:
        scenario = smac.Scenario(space, deterministic=True, n_trials=budget, seed=seed,
                                 output_directory=out_dir, name=name)
        return smac.HyperparameterOptimizationFacade(scenario, target, overwrite=True,
                                                     logging_level=40, callbacks=callbacks)

    budgets = [b for b in (100, 200, 400) if b <= budget] or [budget]
    started = time.perf_counter()
    out: dict[str, Any] = {"problem": problem_name, "sampler": "smac", "arm": arm, "seed": seed}
    if arm == "full":
        facade("full", []).optimize()
    elif arm in ("auto", "restart"):
        # the Optuna callback's first decision: at --shrink-after, or once there are
        # the trials from which the library can fix when that is later (nothing is safe
        # to fix before)
        from hpinsight._decision_result import min_trials_to_fix

        first = max(shrink_after, min_trials_to_fix(len(list(space.values()))))
        decisions: list[dict[str, Any]] = []
        if first < budget:
            cb = ImportanceCallback(seed=seed, stop_after=first)
            first_run = facade("first", [cb])
            first_run.optimize()
            cb.close()
            first = len(costs)
            if arm == "auto":
                continued = shrink_and_continue(first_run, target, n_trials=budget - first,
                                                keep="auto", seed=seed)
            else:  # nothing fixed: every old run lies in the (same) space and is told
                continued = shrink_and_continue(first_run, target, n_trials=budget - first,
                                                fixed={}, reevaluate=0)
            margin = continued.subspace.margin if continued.subspace is not None else math.nan
            decisions.append({"trial": first, "margin": margin,
                              "fixed_now": dict(continued.fixed), "seconds": math.nan,
                              "costs": {n: problem.true_cost(n, v)
                                        for n, v in continued.fixed.items()}})
            continued.facade.optimize()
        else:
            facade("full", []).optimize()
        out["decisions"] = decisions
    else:
        raise ValueError(f"SMAC runs the full, auto and restart arms, not {arm!r}")
    out["best"] = {str(b): min(costs[:b]) for b in budgets if len(costs) >= b}
    out["seconds"] = time.perf_counter() - started
    return out


#: The ``narrow_quantile`` each of hpinsight's arms gives the callback (``auto``: its
#: default, ``"auto"``, which narrows the parameters that matter to the range of the best
#: quarter of the trials at the first decision; ``fix``: fixing alone).
NARROW_QUANTILE: dict[str, float | str | None] = {"auto": "auto", "fix": None, "narrow": 0.25}
#: The arms whose decisions are hpinsight's (each decision has a margin).
SHRINKING = tuple(NARROW_QUANTILE)


def run(problem_name: str, sampler: str, arm: str, seed: int, budget: int, shrink_after: int,
        trial_ms: float) -> dict[str, Any]:
    """One study; its best value at each budget and, for ``auto``/``topk``, what was fixed."""
    from hpinsight.integrations.optuna import ImportanceCallback, ShrinkingSampler

    if sampler == "smac":
        return run_smac(problem_name, arm, seed, budget, shrink_after, trial_ms)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem = PROBLEMS[problem_name]
    objective = _timed(problem, trial_ms)
    budgets = [b for b in (100, 200, 400) if b <= budget] or [budget]
    started = time.perf_counter()
    out: dict[str, Any] = {"problem": problem_name, "sampler": sampler, "arm": arm,
                           "seed": seed}
    if arm == "full":
        study = optuna.create_study(sampler=make_sampler(sampler, seed))
        study.optimize(objective, n_trials=budget)
    elif arm in SHRINKING:
        cb = ImportanceCallback(every_n_trials=budget + 1, min_trials=budget + 1,
                                shrink_to="auto", shrink_after=shrink_after, seed=seed,
                                publish=False, narrow_quantile=NARROW_QUANTILE[arm])
        recorder = _Decisions(cb)
        study = optuna.create_study(sampler=ShrinkingSampler(make_sampler(sampler, seed)))
        study.optimize(objective, n_trials=budget, callbacks=[cb, recorder])
        cb.close(600)
        if cb.errors:
            raise RuntimeError(f"{problem_name}/{sampler}/{seed}: {cb.errors!r}")
        out["decisions"] = [dict(d, costs={n: problem.true_cost(n, v)
                                           for n, v in d["fixed_now"].items()},
                                 range_costs={n: _range_cost(problem, n, *r)
                                              for n, r in d["ranges_now"].items()})
                            for d in recorder.rows]
        out["log"] = [{k: d.get(k) for k in ("action", "params", "ranges", "after_trial", "why")}
                      for d in study.user_attrs.get("hpinsight:decisions", [])]
    elif arm in ("oracle", "oracle_kept"):  # what no user has: the parameters that cost
        if not problem.known_truth:          # nothing, fixed from the start
            raise ValueError(f"the oracle arms need known truth; {problem_name} has none")
        fixed = dict.fromkeys(problem.nuisance, 0.5)  # the nuisance parameters: floats in [0, 1]
        base = make_sampler(sampler, seed)
        study = optuna.create_study(
            sampler=optuna.samplers.PartialFixedSampler(fixed, base) if arm == "oracle"
            else KeptInModel(fixed, base))
        study.optimize(objective, n_trials=budget)
    else:  # topk: Optuna's own importance, PartialFixedSampler on the rest
        study = optuna.create_study(sampler=make_sampler(sampler, seed))
        study.optimize(objective, n_trials=shrink_after)
        ranked = list(optuna.importance.get_param_importances(study))
        k = len(problem.matters) or 3  # real tunings: the top 3, a common choice
        best = study.best_trial.params
        fixed = {n: best[n] for n in ranked[k:] if n in best}
        study.sampler = optuna.samplers.PartialFixedSampler(fixed, study.sampler)
        study.optimize(objective, n_trials=budget - shrink_after)
        out["decisions"] = [{"trial": shrink_after, "margin": math.nan, "fixed_now": fixed,
                             "seconds": math.nan,
                             "costs": {n: problem.true_cost(n, v) for n, v in fixed.items()}}]
    out["best"] = _best_at(study, budgets)
    if problem_name in WORSE_BRANCHES:  # how often the sampler still tries a worse branch
        choice, worse = WORSE_BRANCHES[problem_name]
        later = [t.params.get(choice) for t in study.trials[50:]]
        out["worse_branch_share"] = sum(k in worse for k in later) / max(len(later), 1)
    out["seconds"] = time.perf_counter() - started
    return out


# ------------------------------------------------------------------------- summary


def _q(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def summarize(rows: list[dict[str, Any]], budgets: list[int]) -> list[dict[str, Any]]:
    """One entry per (problem, sampler, arm, budget) against the full space."""
    by: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["problem"], r["sampler"], r["arm"]), {})[r["seed"]] = r
    out = []
    for (problem, sampler, arm), runs in sorted(by.items()):
        if arm == "full":
            continue
        full = by.get((problem, sampler, "full"), {})
        seeds = sorted(set(runs) & set(full))
        truth = PROBLEMS[problem]
        known = truth.known_truth
        decided = [runs[s].get("decisions", []) for s in seeds]
        fixed_matter = sum(any(n in truth.matters for d in ds for n in d["fixed_now"])
                           for ds in decided) if known else None
        # against the margin of the decision that fixed it (topk has no margin) ...
        costly = sum(any(c > d["margin"] for d, c in _newly_fixed(ds)) for ds in decided) \
            if arm in SHRINKING and known else None
        # ... and of any later decision that kept it fixed (the margin shrinks as the
        # study converges; a held parameter should then be released)
        held_costly = sum(any(c > d["margin"] for d in ds for c in d["costs"].values())
                          for ds in decided) if arm in SHRINKING and known else None
        # a range that leaves out every value within the margin of the optimum
        narrowed_costly = sum(any(c > d["margin"] for d in ds
                                  for c in d.get("range_costs", {}).values())
                              for ds in decided) if arm in ("auto", "narrow") and known else None
        # a range widened at the first decision to hold where the model finds the main
        # effect best (the best trials lay on one side of it)
        widened = sum(any("widened to hold" in (d.get("why") or "")
                          for d in runs[s].get("log", [])) for s in seeds) \
            if arm in ("auto", "narrow") else None
        half = math.ceil(len(truth.nuisance) / 2)
        acted = sum(any(d["trial"] <= 100 and sum(n in truth.nuisance for n in d["fixed_now"])
                        >= half for d in ds) for ds in decided) if known else None
        first = [next((d["trial"] for d in ds if d["fixed_now"]), None) for ds in decided]
        waits = [d["seconds"] for ds in decided for d in ds if math.isfinite(d["seconds"])]
        for b in budgets:
            key = str(b)
            ours = [runs[s]["best"][key] for s in seeds if key in runs[s]["best"]]
            theirs = [full[s]["best"][key] for s in seeds if key in runs[s]["best"]]
            if not ours:
                continue
            ratios = [(o + 1e-12) / (t + 1e-12) for o, t in zip(ours, theirs, strict=True)]
            out.append({
                "problem": problem, "sampler": sampler, "arm": arm, "budget": b,
                "seeds": len(ours),
                "median": statistics.median(ours), "q25": _q(ours, 0.25), "q75": _q(ours, 0.75),
                "full_median": statistics.median(theirs),
                "full_q25": _q(theirs, 0.25), "full_q75": _q(theirs, 0.75),
                "median_ratio": statistics.median(ours) / statistics.median(theirs),
                "median_paired_ratio": statistics.median(ratios),
                "paired_ratio_ci90": _median_ci(ratios, 0.9),
                "win_rate": sum(o < t for o, t in zip(ours, theirs, strict=True)) / len(ours),
                "worst_ratio": max(ratios),
                "fixed_a_parameter_that_matters": fixed_matter,
                "fixed_above_margin": costly,
                "held_above_margin": held_costly,
                "narrowed_above_margin": narrowed_costly,
                "widened_to_main_effect": widened,
                "acted_by_100": acted,
                "first_fix_median": statistics.median([f for f in first if f is not None])
                if any(f is not None for f in first) else None,
                "never_fixed": sum(f is None for f in first),
                "decision_wait_s_median": statistics.median(waits) if waits else None,
                "worse_branch_share": _mean_of(runs, seeds, "worse_branch_share"),
                "full_worse_branch_share": _mean_of(full, seeds, "worse_branch_share"),
            })
    return out


def _mean_of(runs: dict[int, dict[str, Any]], seeds: list[int], key: str) -> float | None:
    """The mean of ``key`` over the runs of ``seeds`` that have it (None if none has)."""
    values = [runs[s][key] for s in seeds if key in runs[s]]
    return statistics.fmean(values) if values else None


def _median_ci(values: list[float], level: float) -> tuple[float, float]:
    """A distribution-free confidence interval for the median of ``values``: the order
    statistics ``(k, n + 1 - k)``, ``k`` the largest with ``P(Binomial(n, 1/2) < k)`` at
    most ``(1 - level) / 2`` (the interval of the sign test). Whether shrinking is
    "no worse than the full space" needs this: with 20 seeds a median paired ratio of
    1.5 can come from a sampler that is no worse at all."""
    from scipy.stats import binom

    s, n = sorted(values), len(values)
    # the smallest k with P(B <= k) >= (1 - level) / 2, so P(B < k) is below it
    k = int(binom.ppf((1.0 - level) / 2.0, n, 0.5))
    if k < 1:
        return (s[0], s[-1]) if s else (math.nan, math.nan)
    return s[k - 1], s[n - k]


def _newly_fixed(decisions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float]]:
    """(decision, true cost) for each parameter at the decision that fixed it."""
    out, before = [], set()
    for d in decisions:
        out += [(d, c) for n, c in d["costs"].items() if n not in before]
        before = set(d["fixed_now"])
    return out


def _count(k: int | None, n: int) -> str:
    return "-" if k is None else f"{k}/{n}"


def table(summary: list[dict[str, Any]]) -> str:
    # the column of the arms that narrow, only in a table that has one
    narrow = any(s.get("narrowed_above_margin") is not None for s in summary)
    head = ("| problem | sampler | arm | trials | median best (q25-q75) | full space "
            "| ratio of medians | median paired ratio (90% CI) | win rate | worst ratio "
            "| fixed one that matters "
            "| fixed above margin | held above a later margin "
            + ("| narrowed above margin " if narrow else "")
            + "| acted by 100 | first fix "
            "| wait per decision (s) |\n|" + "---|" * (16 + narrow))
    lines = [head]
    for s in summary:
        n = s["seeds"]
        wait = s["decision_wait_s_median"]
        lines.append(
            f"| {s['problem']} | {s['sampler']} | {s['arm']} | {s['budget']} "
            f"| {s['median']:.4g} ({s['q25']:.3g}-{s['q75']:.3g}) "
            f"| {s['full_median']:.4g} ({s['full_q25']:.3g}-{s['full_q75']:.3g}) "
            f"| {s['median_ratio']:.2f} | {s['median_paired_ratio']:.2f} "
            f"({s['paired_ratio_ci90'][0]:.2f}-{s['paired_ratio_ci90'][1]:.2f}) "
            f"| {s['win_rate']:.0%} | {s['worst_ratio']:.2f} "
            f"| {_count(s['fixed_a_parameter_that_matters'], n)} "
            f"| {_count(s['fixed_above_margin'], n)} | {_count(s.get('held_above_margin'), n)} "
            + (f"| {_count(s.get('narrowed_above_margin'), n)} " if narrow else "")
            + f"| {_count(s['acted_by_100'], n)} | {s['first_fix_median'] or '-'} "
            f"| {'-' if wait is None else f'{wait:.1f}'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--first-seed", type=int, default=0,
                   help="run seeds first-seed .. first-seed + seeds - 1 (split a long run; "
                        "merge the JSON documents with --reuse)")
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--shrink-after", type=int, default=50)
    p.add_argument("--trial-ms", type=float, default=20.0)
    p.add_argument("--problems", default=",".join(PROBLEMS))
    p.add_argument("--samplers", default="tpe,cmaes,random")
    p.add_argument("--arms", default="full,auto,topk")
    p.add_argument("--workers", type=int, default=2, help="studies run at once (processes)")
    p.add_argument("--out", default=None)
    p.add_argument("--reuse", action="append", default=[], metavar="JSON",
                   help="add the runs of this earlier output that are not run now (same "
                        "problem, sampler, arm and seed), for the problems and samplers asked "
                        "for; repeat to merge several. Every run is deterministic given its "
                        "seed, and the full and topk arms do not depend on hpinsight's "
                        "decisions, so e.g. '--arms auto --reuse earlier.json' reruns only "
                        "what a change of hpinsight can move")
    p.add_argument("--table", action="store_true", help="also print a Markdown table (stderr)")
    args = p.parse_args(argv)
    jobs = [(prob, smp, arm, seed, args.budget, args.shrink_after, args.trial_ms)
            for prob in args.problems.split(",") for smp in args.samplers.split(",")
            for seed in range(args.first_seed, args.first_seed + args.seeds)
            for arm in args.arms.split(",")]
    rows = []
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(args.workers) as pool:
        futures = {pool.submit(run, *job): job for job in jobs}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            row = fut.result()
            rows.append(row)
            print(f"[{i}/{len(jobs)} {time.perf_counter() - started:.0f}s] {row['problem']} "
                  f"{row['sampler']} {row['arm']} seed {row['seed']}: {row['best']}",
                  file=sys.stderr, flush=True)
    ran = {(r["problem"], r["sampler"], r["arm"], r["seed"]) for r in rows}
    problems, samplers = set(args.problems.split(",")), set(args.samplers.split(","))
    for path in args.reuse:
        with open(path) as fh:
            for r in json.load(fh)["runs"]:
                key = (r["problem"], r["sampler"], r["arm"], r["seed"])
                if key not in ran and r["problem"] in problems and r["sampler"] in samplers:
                    ran.add(key)
                    rows.append(r)
    budgets = sorted({int(b) for r in rows for b in r["best"]})
    summary = summarize(rows, budgets)
    doc = {"settings": vars(args), "summary": summary, "runs": rows,
           "optuna": optuna.__version__}
    text = json.dumps(doc, indent=1, default=str)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    if args.table:
        print(table(summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
