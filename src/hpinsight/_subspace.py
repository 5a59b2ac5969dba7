"""Which parameters may be fixed: surrogate tuning risk and the subspace suggestion.

Two questions decide whether a parameter can leave the search:

1. **Does it have any effect?** fANOVA (Hutter, Hoos & Leyton-Brown 2014) over all
   trials and among the best ``top_quantile`` (capped, Sec. 3.3), each effect judged
   against the analysis's shadow null (:attr:`hpinsight.results.Importance.verdict`).
   Smallness is judged in objective units, not in shares: a narrow dip near the
   optimum holds little variance and still costs much to miss, so an effect above its
   shadow keeps its parameter unless its standard deviation over the space is at most
   a quarter of the margin (:data:`hpinsight._decision_result.NEGLIGIBLE_SD`).
2. **What does fixing it cost?** Tuning risk (Weerts 2018, Eq. 4) estimated on one
   study's surrogate instead of paired experiments: for each of the model's draws, its
   best value with the parameter fixed and all others free, minus its best with
   everything free.

:func:`surrogate_tuning_risk` answers (2). The search on the surrogate is a documented
random search: ``n_candidates`` configurations drawn from the space's measure plus the
study's own configurations and the points of a coordinate search on the model's mean
from the best of them (:func:`hpinsight._surrogate_risk.refined_optima`: random
candidates seldom hold a good value of every parameter at once, and a free optimum found
short of the best undercounted every cost) for the free condition, and for parameter
``i`` the same candidates with ``i`` set to its value (paired, as Weerts pairs seeds).
Each draw (a tree of a forest, a bootstrap draw of a Gaussian process) finds its own two
optima, so the risk's spread says how sure the model is of where the optimum lies; both
searches are equally large, so both optima are equally optimistic. A configuration with
``i`` fixed is one of the free space too, so each draw's free optimum is the better of
both: no cost is negative.

:func:`suggest_subspace` combines both into one decision per parameter
(:mod:`hpinsight._decisions`): fixed only when every effect it takes part in is
indistinguishable from nothing and the ``confidence`` quantile of its cost is within
the margin. The value it is fixed at is a given or declared default, else its value in
the best trial at the decision (else, inactive there, where the model predicts the best).
Fixing at the best trial's value keeps the best configuration found inside the
restricted space, so a restriction never makes it unreachable, and it leaves an
optimizer that follows its good trials (CMA-ES's mean, TPE's good group) where it was:
fixed at an arbitrary value, even a parameter that does nothing made CMA-ES worse
(``benchmarks/bench_shrink.py``). The cost is estimated at that value, so a best trial's
value that is costly to fix at keeps its parameter tuned.

Deviation from Weerts (2018): the paper's margin is on the *relative* risk
``(x_f - x_nf) / x_nf``, which needs a loss >= 0. A live study's objective can be
anything (a negative log-likelihood, a score to maximize), so the margin here is
relative to the spread of the trials *near the best* (the best 10 %): what the study can
still gain where it searches now. The spread of merely good trials (the best 25 %) is
wide early in a study; measured against it, a parameter whose wrong setting costs more
than the whole remaining gap to the optimum was fixed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ._decision_result import MIN_TRIALS_FOR_COST, DecisionResult
from ._decisions import decide, decision_order, explored_gains, outside_trials
from ._defaults import DefaultValues
from ._fanova import fanova
from ._fanova_result import FanovaResult, other_history
from ._history import TrialHistory
from ._joint import compromise_trial, decide_jointly
from ._optional import import_optional
from ._shared import REPR_WIDTH, fmt_value, join_items, json_value
from ._surrogate_risk import SurrogateRisk, defaults_for, surrogate_tuning_risk
from ._validation import MODEL_KEYWORDS, check_int, check_real, check_seed, moved_keywords
from ._warn import held_back
from .adapters import as_history
from .adapters._doors import as_objectives
from .exceptions import (
    HPInsightWarning,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDataError,
)
from .surrogates import GP, Forest, as_surrogate, refuse_fitted

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["SubspaceResult", "suggest_subspace"]


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class SubspaceResult:
    """Which parameters to keep searching and which to fix (see :func:`suggest_subspace`).

    The decision for each parameter is in :attr:`decisions`; ``keep`` and ``fixed`` are
    its two halves, and every other view (``reasons``, the report, the live callback's
    log, shrinking) reads the same decisions.

    Attributes
    ----------
    keep : tuple of str
        Parameters to keep tuning (every state but "fix" and "fixed"), largest share first.
    fixed : dict of str to value
        Parameters that are safe to fix (or already held fixed), and their values.
    decisions : DecisionResult
        One decision per parameter, with its sentence.
    risks : dict of str to SurrogateRisk
    defaults : dict of str to value
        The value each parameter would be fixed at, and ``default_sources`` where it
        came from.
    default_sources : dict of str to str
        "given", "space" (declared in the search space), "incumbent" (the best trial's
        value), "held" (the value a restriction holds it at), "model" (inactive in the
        best trial: its value where the model predicts the best) or "inactive" (inactive
        there too: the middle of its range, or its first choice).
    margin : float
        The most fixing may cost, in objective units: ``risk_margin`` times the spread of
        the trials near the best (the best ``NEAR_BEST`` of them; where they tie, the
        step from the best to the next value: :func:`near_best_spread`).
    n_trials : int
    confidence : float
        The quantile of the cost of fixing that had to stay within ``margin``.
    top_quantile : float
        "Among the best": the quantile the capped analysis used.
    objectives : dict of str to SubspaceResult
        For several objectives, each objective's own suggestion at the common values
        (its costs against its own margin), which :attr:`decisions` combine: a parameter
        is fixed only when it is safe to fix for every objective. ``risks`` is then
        empty and ``margin`` NaN (each objective has its own, here). Empty for one
        objective.

    Examples
    --------
    >>> import math
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("lr", 1e-4, 1, log=True), hp.Float("a", 0, 1)])
    >>> configs = space.sample(100, seed=1)
    >>> y = [(math.log10(c["lr"]) + 2) ** 2 for c in configs]
    >>> sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    >>> sub.to_frame()[["param", "keep"]].values.tolist()
    [['lr', True], ['a', False]]
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> [t.get_text() for t in sub.plot(ax=Figure().add_subplot()).get_yticklabels()][0]
    'lr  (keep)'
    """

    keep: tuple[str, ...]
    fixed: dict[str, Any]
    decisions: DecisionResult = field(repr=False)
    risks: dict[str, SurrogateRisk] = field(repr=False)
    defaults: dict[str, Any] = field(repr=False)
    default_sources: dict[str, str] = field(repr=False)
    margin: float = float("nan")
    n_trials: int = 0
    confidence: float = 0.9
    top_quantile: float = 0.25
    objectives: dict[str, SubspaceResult] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        head = f"SubspaceResult(n_trials={self.n_trials}, margin={self.margin:.4g}, keep=["
        middle, tail = "], fixed={", "})"
        keep = [repr(n) for n in self.keep]
        fixed = [(repr(n), f": {fmt_value(v, quote=True)}") for n, v in self.fixed.items()]
        room = REPR_WIDTH - len(head) - len(middle) - len(tail)
        # kept names first: fixed ones get what is left, at least a third if they need it
        full_fixed = ", ".join(n + v for n, v in fixed)
        shown_keep = join_items(keep, room - min(len(full_fixed), room // 3))
        shown_fixed = join_items(fixed, room - len(shown_keep))
        return f"{head}{shown_keep}{middle}{shown_fixed}{tail}"

    @property
    def reasons(self) -> dict[str, str]:
        """One sentence per parameter: its decision and why (``decisions``' sentences)."""
        return {d.param: d.sentence for d in self.decisions}

    @property
    def not_yet_safe(self) -> tuple[str, ...]:
        """Kept parameters that show no effect, but whose cost of fixing is not yet shown
        to be within the margin."""
        return self.decisions.in_state("not_yet_safe")

    @property
    def importance_all(self) -> dict[str, float]:
        """Each parameter's main-effect share over all trials (as the decisions use it)."""
        return {d.param: d.share for d in self.decisions}

    @property
    def importance_top(self) -> dict[str, float]:
        """Each parameter's main-effect share among the best ``top_quantile`` of trials."""
        return {d.param: d.share_top for d in self.decisions}

    def default_origin(self, name: str) -> str:
        """Where the value ``name`` would be fixed at came from, in words."""
        return default_origin(self.default_sources[name])

    def explain(self) -> str:
        """The reasons, one line per parameter, kept ones first."""
        names = list(self.keep) + list(self.fixed)
        reasons = self.reasons
        return "\n".join(f"{n}: {reasons[n]}" for n in names)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        return {
            "keep": list(self.keep),
            "fixed": {k: json_value(v) for k, v in self.fixed.items()},
            "decisions": self.decisions.to_dict(),
            "risks": {k: r.to_dict() for k, r in self.risks.items()},
            "defaults": {k: json_value(v) for k, v in self.defaults.items()},
            "default_sources": dict(self.default_sources),
            "margin": json_value(self.margin),
            "n_trials": self.n_trials,
            "confidence": self.confidence,
            "top_quantile": self.top_quantile,
            "objectives": {k: v.to_dict() for k, v in self.objectives.items()},
        }

    def to_frame(self) -> Any:
        """One row per parameter, kept ones first (the order of :meth:`explain`).

        Returns
        -------
        pandas.DataFrame
            Columns ``param``, ``keep`` (bool), ``state`` (the decision), ``default``
            (the value a fixed parameter is fixed at), ``default_source``,
            ``importance_all``, ``importance_top``, ``risk_mean`` and ``risk_std``
            (:class:`SurrogateRisk`, objective units) and ``reason``.
        """
        pd = import_optional("pandas", "SubspaceResult.to_frame")
        rows = []
        for name in (*self.keep, *self.fixed):
            risk = self.risks.get(name)
            d = self.decisions[name]
            rows.append({
                "param": name, "keep": name in self.keep, "state": d.state,
                "default": self.defaults.get(name),
                "default_source": self.default_sources.get(name),
                "importance_all": d.share, "importance_top": d.share_top,
                "risk_mean": math.nan if risk is None else risk.mean,
                "risk_std": math.nan if risk is None else risk.std,
                "reason": d.sentence,
            })
        return pd.DataFrame(rows, columns=[
            "param", "keep", "state", "default", "default_source", "importance_all",
            "importance_top", "risk_mean", "risk_std", "reason"])

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Importance and cost of fixing per parameter, with the risk margin as a line;
        see :func:`hpinsight.plotting.plot_subspace`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            Passed on to ``plot_subspace`` (it takes none today).

        Returns
        -------
        matplotlib.axes.Axes
        """
        if self.objectives:
            raise InvalidArgumentError(
                "A subspace decided over several objectives has no cost axis of its own (each "
                "objective has its own units and margin): plot one objective's, e.g. "
                f"result.objectives[{next(iter(self.objectives))!r}].plot().")
        from .plotting import plot_subspace

        return plot_subspace(self, ax=ax, **kwargs)


#: The margin is a fraction of the spread of the trials near the best: from the best
#: trial to the ``NEAR_BEST`` quantile (at least the third best).
NEAR_BEST = 0.1


def near_best_spread(y: NDArray[np.float64]) -> float:
    """What the study can still gain near its best (``y`` signed so lower is better):
    from the best trial to the ``NEAR_BEST`` quantile (at least the third best); where
    those trials tie (an objective of a few levels, as an accuracy on a small test set),
    the step from the best to the next value up. Only an objective whose every trial has
    the same value gives 0.

    With the tie a margin of 0, no cost, however small, was within it: no parameter
    of such a study could ever be fixed, and a parameter the objective does not read was
    kept tuned with sentences such as "more trials will tell" that more trials could not
    make true."""
    ordered = np.sort(np.asarray(y, dtype=np.float64))
    near = min(len(ordered) - 1, max(2, math.ceil(NEAR_BEST * len(ordered)) - 1))
    spread = float(ordered[near] - ordered[0])
    if spread == 0.0:
        above = ordered[ordered > ordered[0]]
        spread = float(above[0] - ordered[0]) if above.size else 0.0
    return spread


class Span(NamedTuple):
    """Where a parameter's main effect is best (:func:`main_effect_spans`)."""

    #: the grid point below the best one (the best one at the lower bound)
    low: float
    #: the grid point where the main effect is best
    best: float
    #: the grid point above the best one (the best one at the upper bound)
    high: float


def main_effect_spans(result: FanovaResult, names: list[str]) -> dict[str, Span]:
    """Per numerical parameter in ``names``: where its main effect is best, as its best
    grid point and the span between the grid points either side of it (the marginal
    prediction, Eq. 1 of Hutter et al. 2014, on :meth:`FanovaResult.marginal`'s grid:
    the lowest mean for ``"minimize"``, the highest for ``"maximize"``).

    A range narrowed to the best trials can leave out a parameter's optimum when the
    optimizer gathered its best trials on one side of it; widened to this span, it
    holds the value the model predicts best, with room either side for the grid's
    resolution.
    """
    from .space import Float, Int

    spans: dict[str, Span] = {}
    for name in names:
        if not isinstance(result.space[name], Float | Int):
            continue
        curve = result.marginal(name)
        mean = curve.mean if result.direction == "minimize" else -curve.mean
        grid = curve.grid[0]
        at = int(np.argmin(mean))
        spans[name] = Span(float(grid[max(at - 1, 0)]), float(grid[at]),
                           float(grid[min(at + 1, len(grid) - 1)]))
    return spans


def decision_fit(history: TrialHistory, *, surrogate: GP | Forest | None = None,
                 seed: int | None = None) -> FanovaResult:
    """The analysis over all trials a decision rests on: with the pairs up to 12
    parameters (:func:`hpinsight._decisions.decision_order`), as a report's."""
    return fanova(history, max_order=decision_order(len(history.space)), surrogate=surrogate,
                  seed=seed)


def subspace_and_spans(
    history: TrialHistory, **kwargs: Any
) -> tuple[SubspaceResult, dict[str, Span]]:
    """:func:`suggest_subspace` of one objective's ``history`` and, from the same fit,
    :func:`main_effect_spans` of the parameters it finds to matter: what a decision
    that narrows ranges needs, for one fit. ``kwargs`` are ``suggest_subspace``'s."""
    with held_back(HPInsightWarning):  # as suggest_subspace fits it
        fitted = decision_fit(history, surrogate=kwargs.get("surrogate"), seed=kwargs.get("seed"))
    subspace = suggest_subspace(history, fitted=fitted, **kwargs)
    names = [n for n in subspace.keep if subspace.decisions[n].state == "matters"]
    return subspace, main_effect_spans(fitted, names)


@moved_keywords({**MODEL_KEYWORDS, "source": "history=... (the first argument)"})
def suggest_subspace(
    history: TrialHistory | Any,
    *,
    fitted: FanovaResult | Mapping[str, FanovaResult] | None = None,
    capped: FanovaResult | Mapping[str, FanovaResult] | None = None,
    defaults: Mapping[str, Any] | DefaultValues | None = None,
    top_quantile: float = 0.25,
    risk_margin: float = 0.05,
    confidence: float = 0.9,
    min_keep: int = 1,
    surrogate: GP | Forest | None = None,
    n_candidates: int = 2000,
    seed: int | None = None,
) -> SubspaceResult:
    """Suggest the parameters to keep tuning and the ones that are safe to fix.

    Each parameter gets one decision (:func:`hpinsight._decisions.decide`): it is fixed
    only when no effect it takes part in is distinguishable from nothing (fANOVA with
    its shadow null, over all trials and among the best ``top_quantile``) *and* the
    ``confidence`` quantile of its predicted cost of fixing (:func:`surrogate_tuning_risk`)
    is within the margin: ``risk_margin`` times the spread of the trials near the best.
    A parameter with a resolved effect is kept unless that effect is too small in
    objective units to cost the margin (standard deviation at most a quarter of it), and
    so is one whose mean cost exceeds the margin.

    Parameters
    ----------
    history : TrialHistory, optuna.Study or mapping of str to TrialHistory
        The trials so far (a study is read with ``hp.adapters.from_optuna``). A study of
        several objectives, or a mapping of objective names to histories of the same
        trials, is decided for every objective (:mod:`hpinsight._joint`): a parameter is
        safe to fix only when it is safe for each objective at one common value (its
        value in the compromise trial on the Pareto front, unless given or declared),
        each cost against that objective's own margin; :attr:`SubspaceResult.objectives`
        holds each objective's suggestion. The Pareto front alone cannot show that
        fixing is safe, and is refused.
    fitted, capped : FanovaResult, optional
        The analyses of these trials over all of them and among the best
        ``top_quantile`` (``fanova(history, max_order=2)`` on 2 to 12 parameters, else
        ``fanova(history)``, and ``fanova(history, cap_quantile=top_quantile)``), when
        already computed (a report passes its own): the decisions then rest on the very
        numbers shown beside them, and nothing is fitted twice. A ``fitted`` without the
        pairs on 2 to 12 parameters is refused: it would decide otherwise than a report.
        Fitted here with ``surrogate`` and ``seed`` when not given, over all trials with
        the pairs up to 12 parameters, as a report's (``_decisions.decision_order``),
        so that both decide alike. With several objectives, a mapping of each
        objective's name to its result.
    defaults : mapping or DefaultValues, optional
        Values to fix parameters at. Missing parameters take the search space's
        declared default, else their value in the best trial (so the best configuration
        stays inside the restricted space), else, inactive there, their value where the
        model predicts the best.
    top_quantile : float in (0, 1), default=0.25
        "Among the best" for the capped analysis (Sec. 3.3).
    risk_margin : float, default=0.05
        Fixing must cost at most this fraction of the spread of the trials near the
        best (best trial to the 10 % quantile, at least the third best; where those tie,
        the step from the best to the next value): what the study can still gain where
        it searches now, not the much wider spread of merely good trials.
    confidence : float in (0.5, 1), default=0.9
        ... in this quantile of the cost over the model's draws.
    min_keep : int, default=1
        Keep at least this many parameters tuned (the largest shares among the best).
    surrogate : GP or Forest, default=GP()
        The model behind every importance and risk (see :func:`hpinsight.fanova`), when
        ``fitted`` and ``capped`` are not given.
    n_candidates, seed
        Configurations searched for the best with and without fixing, and the seed.

    Returns
    -------
    SubspaceResult

    Raises
    ------
    InvalidDataError
        Fewer than 10 trials, a default outside the space, or fitted results that are
        not of these trials or lack the pairs a decision weighs.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("lr", 1e-4, 1, log=True), hp.Float("a", 0, 1),
    ...                         hp.Float("b", 0, 1)])
    >>> configs = space.sample(150, seed=1)
    >>> import math
    >>> y = [(math.log10(c["lr"]) + 2) ** 2 for c in configs]
    >>> sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    >>> sub.keep, sorted(sub.fixed)
    (('lr',), ['a', 'b'])
    """
    func = "suggest_subspace"
    histories = as_objectives(history, func)
    if histories is not None:
        return _joint_subspace(
            histories, fitted=fitted, capped=capped, defaults=defaults,
            top_quantile=top_quantile, risk_margin=risk_margin, confidence=confidence,
            min_keep=min_keep, surrogate=surrogate, n_candidates=n_candidates, seed=seed)
    history = as_history(history, func)
    if history.is_front:
        raise InvalidDataError(
            f"{func} cannot decide what to fix from the Pareto front: its analysis does not "
            "see a parameter that moves trials along the front, and fixing one would lose "
            "the front. Pass the study itself (every objective is then decided, and a "
            "parameter is fixed only when it is safe for each) or one objective's history.")
    top_quantile = check_real(top_quantile, "top_quantile", func, low=0.0, high=1.0, low_open=True)
    risk_margin = check_real(risk_margin, "risk_margin", func, low=0.0, high=math.inf)
    confidence = check_real(confidence, "confidence", func, low=0.5, high=1.0)
    min_keep = check_int(min_keep, "min_keep", func, minimum=0)
    seed = check_seed(seed, func)
    model = refuse_fitted(as_surrogate(surrogate, func), func,
                          "over all trials and over the capped objective")
    if history.n_trials < MIN_TRIALS_FOR_COST:
        raise InvalidDataError(f"{func} needs at least {MIN_TRIALS_FOR_COST} trials to judge "
                               f"importance and risk; the history has {history.n_trials}. "
                               "Run more trials.")
    opts: dict[str, Any] = {"surrogate": model, "seed": seed}
    with held_back(HPInsightWarning):  # a constant capped objective is expected here
        result = _checked_fit(fitted, history, None, "fitted", func) if fitted is not None \
            else decision_fit(history, **opts)
        top = _checked_fit(capped, history, top_quantile, "capped", func) if capped is not None \
            else fanova(history, cap_quantile=top_quantile, **opts)
    chosen, sources = defaults_for(history, defaults, result, n_candidates, seed)
    held = {} if history.sampling is None or history.sampling.n_held is None else {
        n: v for n, v in history.sampling.fixed.items()
        if n in chosen and n not in history.sampling.unheld}  # as ``decide`` reads it
    for name, value in held.items():  # a held parameter's cost is that of its held value
        chosen[name], sources[name] = value, "held"
    risks = surrogate_tuning_risk(result, chosen, configs=history.configs,
                                  n_candidates=n_candidates, seed=seed)
    sign = 1.0 if history.direction == "minimize" else -1.0
    margin = risk_margin * near_best_spread(sign * history.y)
    decisions = decide(result, capped=top, risks=risks, values=chosen, margin=margin,
                       confidence=confidence, sampling=history.sampling, min_keep=min_keep,
                       explored=explored_gains(history, result.model),
                       tried=outside_trials(history, chosen))
    keep = tuple(d.param for d in decisions if d.tuned)
    fixed = {d.param: d.value for d in decisions if not d.tuned}
    return SubspaceResult(
        keep=keep, fixed=fixed, decisions=decisions, risks=risks, defaults=dict(chosen),
        default_sources=sources, margin=float(margin), n_trials=history.n_trials,
        confidence=float(confidence), top_quantile=float(top_quantile),
    )


def _joint_subspace(
    histories: Mapping[str, TrialHistory], *, fitted: Any, capped: Any, defaults: Any,
    **options: Any,
) -> SubspaceResult:
    """:func:`suggest_subspace` over several objectives (:mod:`hpinsight._joint`): each
    objective decided at the common values, then combined."""
    func = "suggest_subspace"
    labels = list(histories)
    fronts = [k for k, h in histories.items() if h.is_front]
    if fronts:
        raise InvalidDataError(
            f"{func} decides what to fix for every objective; {fronts[0]!r} is the Pareto "
            "front, which cannot show that fixing a parameter is safe. Give the objectives' "
            "own histories only.")
    first = histories[labels[0]]
    for k, h in histories.items():
        if h.space.names != first.space.names:
            raise InvalidDataError(
                f"The histories given to {func} must be of the same parameters; "
                f"{labels[0]!r} has {list(first.space.names)} and {k!r} "
                f"{list(h.space.names)}.")
    fits = {name: _per_objective(given, labels, name, func)
            for name, given in (("fitted", fitted), ("capped", capped))}
    given = dict(defaults.values) if isinstance(defaults, DefaultValues) else dict(defaults or {})
    trial = compromise_trial(histories)
    config = first.configs[first.trial_ids.index(trial)]
    declared = first.space.defaults
    chosen = {n: v for n, v in config.items() if n not in given and n not in declared}
    subs: dict[str, SubspaceResult] = {}
    for k in labels:
        subs[k] = suggest_subspace(histories[k], fitted=fits["fitted"][k],
                                   capped=fits["capped"][k], defaults={**chosen, **given},
                                   **options)
        if k == labels[0]:  # the others fix what the first could not take from the trial
            chosen = {n: v for n, v in subs[k].defaults.items() if n not in given}
    sources = {n: "compromise" if src == "given" and n not in given and n in config else src
               for n, src in subs[labels[0]].default_sources.items()}
    decisions = decide_jointly({k: sub.decisions for k, sub in subs.items()})
    head = subs[labels[0]]
    return SubspaceResult(
        keep=tuple(d.param for d in decisions if d.tuned),
        fixed={d.param: d.value for d in decisions if not d.tuned},
        decisions=decisions, risks={}, defaults=dict(head.defaults), default_sources=sources,
        margin=math.nan, n_trials=decisions.n_trials, confidence=head.confidence,
        top_quantile=head.top_quantile, objectives=subs)


def _per_objective(given: Any, labels: list[str], name: str, func: str) -> dict[str, Any]:
    """``fitted=`` or ``capped=`` of a study of several objectives: one per objective."""
    if given is None:
        return dict.fromkeys(labels)
    if not isinstance(given, Mapping) or set(given) != set(labels):
        raise InvalidArgumentTypeError(
            f"With several objectives, the {name!r} parameter of {func} must map each "
            f"objective ({', '.join(map(repr, labels))}) to its FanovaResult. Got "
            f"{type(given).__name__} instead.")
    return dict(given)


def _checked_fit(result: Any, history: TrialHistory, cap_quantile: float | None, name: str,
                 func: str) -> FanovaResult:
    """A fANOVA result handed to :func:`suggest_subspace`, checked to be of ``history``."""
    if not isinstance(result, FanovaResult):
        raise InvalidArgumentTypeError(
            f"The {name!r} parameter of {func} must be a FanovaResult (from hpinsight.fanova). "
            f"Got {type(result).__name__} instead.")
    if (differ := other_history(result, history)) is not None:
        raise InvalidDataError(
            f"The {name!r} result given to {func} was fit on {differ[0]}, not on these "
            f"{differ[1]}; pass the results of this history, or none.")
    if result.cap_quantile != cap_quantile or (cap_quantile is None and result.cap_value is not None):
        want = ("the uncapped analysis (fanova(history))" if cap_quantile is None else
                f"the analysis capped at cap_quantile={cap_quantile}")
        raise InvalidDataError(f"The {name!r} result given to {func} must be {want}; it was "
                               f"capped at {result.cap_quantile or result.cap_value}.")
    order = decision_order(len(history.space))
    if cap_quantile is None and result.max_order < order:
        raise InvalidDataError(
            f"The {name!r} result given to {func} analyses main effects only "
            f"(max_order={result.max_order}); on {len(history.space)} parameters every "
            f"decision also weighs the pairs, as a report's does, so that a parameter "
            f"acting through a pair is not fixed. Pass fanova(history, max_order={order}), "
            "or no fitted result (one is then fitted here).")
    return result


def default_origin(source: str) -> str:
    """Where a value to fix at came from, in words (``SubspaceResult.default_sources``)."""
    return {"given": "given", "space": "the space's default",
            "held": "the value a restriction holds it at",
            "incumbent": "the best trial's value",
            "compromise": "its value in the compromise trial on the Pareto front (the best "
                          "mean rank over the objectives)",
            "model": "where the model predicts the best",
            "inactive": "a placeholder, the middle of its range or its first choice: it is "
                        "inactive where the model predicts the best"}[source]
