"""What :func:`hpinsight._decisions.decide` returns, and the rules it prints: one
:class:`ParameterDecision` per parameter in a :class:`DecisionResult`, the states of
:data:`STATES`, the thresholds of the rules (see ``_decisions``) and how every surface
prints shares and costs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ._fanova_result import (
    INTERVAL_LEVEL,
    INTERVAL_Z,
    MATTERS_SHARE,
    NEGLIGIBLE_SHARE,
    NO_SIGNAL_SHARE,
    UNSHOWN_LEVEL,
)
from ._optional import import_optional
from ._shared import NO_CLEAR_SIGNAL, REPR_WIDTH, fmt_share, fmt_value, join_items, json_value
from .exceptions import InvalidArgumentError, UnknownNameError

if TYPE_CHECKING:
    pass

__all__ = [
    "CONSTANT",
    "DISPUTED_LENGTH",
    "DISPUTED_RATIO",
    "EXPLORED",
    "EXPLORED_Z",
    "FORBIDDEN",
    "HIDDEN_COST",
    "MATTERS_SHARE",
    "MIN_ACTIVE_TRIALS",
    "MIN_TRIALS_FOR_COST",
    "MIN_TRIALS_PER_PARAM",
    "MIN_TRIALS_TO_FIX",
    "MISSED_ALPHA",
    "NEGLIGIBLE_SD",
    "NO_SIGNAL_AMONG_BEST",
    "OUTSIDE",
    "SINGLE",
    "STATES",
    "TRIALS_SQUARED_DIVISOR",
    "TUNED",
    "UNTRIED",
    "UNVARIED",
    "DecisionResult",
    "Explored",
    "ParameterDecision",
    "answer_groups",
    "fmt_cost",
    "fmt_share",
    "member_note",
    "min_trials_to_fix",
    "no_matters_line",
]

#: :attr:`ParameterDecision.evidence` of a parameter of an objective whose every trial has
#: the same value: nothing can be shown or ruled out, and the margin (what the study can
#: still gain near its best) is 0.
CONSTANT = "constant objective"
#: :attr:`ParameterDecision.evidence` of a parameter kept tuned by the analysis among the
#: best trials where more than a quarter of that analysis's refits find no signal
#: (:attr:`DecisionResult.top_doubtful`): an effect there is neither shown nor ruled out,
#: and its share there, a fraction of next to nothing, is not quoted.
NO_SIGNAL_AMONG_BEST = "no signal among the best"
#: :attr:`ParameterDecision.evidence` of a parameter the model finds safe to fix at a
#: value where a forbidden clause rules out values of other parameters
#: (``SamplingRecord.linked``: ``act`` fixed at ``"tanh"`` forbids ``opt = "rms"``; at
#: ``"relu"``, nothing), a cost the model, which integrates over forbidden combinations,
#: does not see.
FORBIDDEN = "forbidden clause"
#: :attr:`ParameterDecision.evidence` of a parameter the search space gives one value (a
#: ConfigSpace ``Constant``, a one-choice categorical): "fixed" at it, nothing to tune.
SINGLE = "one value"
#: :attr:`ParameterDecision.evidence` of a categorical parameter the model finds safe to
#: fix while some of its choices were never tried (:attr:`FanovaResult.untried`): the
#: model's shares and costs are over the choices the trials took, and one never tried
#: may be the best (an optimizer that never looked there says nothing of it).
UNTRIED = "untried choices"
#: :attr:`ParameterDecision.evidence` of a numerical parameter the model finds safe to fix
#: at a value outside the range its successful trials ran it over (:attr:`tried`, a
#: declared or given default): the model's cost there is extrapolated, and a value no
#: trial reached may be where trials fail (a default of 1.0 where every trial above 0.8
#: crashed was called safe to fix, and every trial of the continued run crashed).
OUTSIDE = "outside the trials"
#: :attr:`ParameterDecision.evidence` of a parameter "release"d because a trial that
#: explored it did better than the model predicts by more than the margin
#: (``EXPLORED_Z``; :attr:`ParameterDecision.explored_trial`).
EXPLORED = "exploring trial"
#: :attr:`ParameterDecision.evidence` of a parameter "not enough data" because every
#: trial that has it ran it at one value (:attr:`FanovaResult.unvaried`, in
#: :attr:`ParameterDecision.value`): the trials say nothing of its effect.
UNVARIED = "never varied"

#: A parameter active in fewer analysed trials than this has "not enough data".
MIN_ACTIVE_TRIALS = 10
#: Costs of fixing are estimated on at least this many trials (``suggest_subspace``).
MIN_TRIALS_FOR_COST = 10
#: Nothing is safe to fix before the analysis has :func:`min_trials_to_fix` trials:
#: fewer cannot show a small effect that is costly near the optimum. The trials needed
#: grow faster than the parameters: ``MIN_TRIALS_PER_PARAM`` per parameter, but no more
#: than ``MIN_TRIALS_TO_FIX`` and ``d**2 / TRIALS_SQUARED_DIVISOR`` on ``d`` parameters,
#: whichever is more (10 parameters: 50; 12-20: 50; 30: 113; 40 and more: 5 per
#: parameter). Measured with every guard below, ``benchmarks/bench_shrink.py``, 20 seeds
#: per sampler: at 1.25 per parameter the V-shaped parameter of the 40-parameter function
#: was fixed above the margin in 7 TPE, 4 CMA-ES and 8 random-search runs; at 2.5 (trial
#: 100) in 1 of 60 runs on 40 parameters and in none of 60 on 20 (first decisions at
#: trial 50); at trial 50 on 12 and 15 parameters (the conditional problems, TPE and
#: CMA-ES), in none of 80; at 5, in none on 10, 20 or 40 parameters. Random search on 40 parameters,
#: first deciding at trial 200, still fixed the V above the margin in 7 of 20 runs of 400
#: trials, 3 once disputed parameters are held (``DISPUTED_LENGTH``), none once missed
#: ones are too (``MISSED_ALPHA``). ``benchmarks/README.md`` has the tables.
MIN_TRIALS_PER_PARAM = 5
#: See ``MIN_TRIALS_PER_PARAM``: on up to 20 parameters, this many trials are enough.
MIN_TRIALS_TO_FIX = 50
#: See ``MIN_TRIALS_PER_PARAM``: between 20 and 40 parameters, ``d**2`` over this.
TRIALS_SQUARED_DIVISOR = 8

#: A parameter is *disputed*, and not safe to fix, when the Gaussian process's fit to the
#: objective's values gives it a length scale below ``DISPUTED_LENGTH`` (columns scaled to
#: a unit range) and the length scale kept (the longer of that fit's and the rank fit's,
#: ``surrogates.gp._likelihood.fit_hyperparameters``) is over ``DISPUTED_RATIO`` times it.
#: The rank fit keeps a few extreme trials from making a parameter that does nothing look
#: important, and it can miss a small effect that is costly near the optimum: under random
#: search on 40 parameters (``benchmarks/bench_shrink.py``, ``sparse40``, 200 trials) it
#: overruled the objective's fit of the V-shaped parameter (length scales 0.57 and 0.72
#: against 5.1 and 4.3 kept), which was then fixed at 2-3 times its margin.
DISPUTED_LENGTH = 1.0
DISPUTED_RATIO = 2.0

#: A parameter whose effect the model *missed* is not safe to fix: the model's
#: leave-one-out errors depend on it (``FittedGP.residual_pvalues``: Kruskal-Wallis over
#: fifths of its range), with a Holm-Bonferroni-adjusted p-value over all parameters below
#: ``MISSED_ALPHA``. Where no fit resolves a V-shaped parameter (random search on 40
#: parameters, 200 trials, ``benchmarks/bench_shrink.py``), its errors still show the V:
#: adjusted p <= 0.001 in each of six studies, every parameter that does nothing >= 0.11.
#: As for effects (``NEGLIGIBLE_SD``), errors whose group means spread by at most
#: ``NEGLIGIBLE_SD`` of the margin (a standard deviation, objective units) are too small
#: to matter.
MISSED_ALPHA = 0.05
#: A parameter held fixed is released when a trial that explored it (one in ten spreads
#: the fixed parameters over their ranges) came out better than the model predicts from
#: every other trial by more than the margin plus this many standard deviations of that
#: prediction (noise included; one-sided, 0.13 % per trial under the model), and by
#: more of them than any trial that did not explore (the model's errors have heavier
#: tails than its normal: on the conditional problem of ``benchmarks/bench_shrink.py`` a
#: trial that explored only parameters that do nothing beat its prediction by 3.4 of
#: them, and one that explored nothing by 3.7). Which of
#: the parameters that trial moved made the gain one trial cannot tell, and the model
#: credited a narrow dip of one of them to others it had moved too
#: (``benchmarks/README.md``, the ``needle`` problem), so all of them are released.
EXPLORED_Z = 3.0

#: An effect whose standard deviation over the space, in objective units, is at most this
#: fraction of the margin is too small to matter for fixing, resolved or not: a smooth
#: effect (linear, V-shaped, a bowl) spans about 3.5 standard deviations, so fixing it
#: anywhere costs less than the margin. Without it, the shadows of a noise-free fit are
#: so small that a parameter adding 1e-4 of its value is "resolved" and kept forever.
NEGLIGIBLE_SD = 0.25

#: What an effect the noise hides could cost, in noise standard deviations over the
#: square root of the trials a parameter was active in: an effect is seen once its
#: standard deviation over the space is about twice the noise's standard error
#: (``2 sd / sqrt(n)``), and fixing a smooth effect can cost its span, about 3.5 of its
#: standard deviations (as for ``NEGLIGIBLE_SD``). Nothing is safe to fix while this
#: exceeds the margin: on two objectives observed at a signal-to-noise ratio of 4, a V
#: the model could not see (0.1 % of the variance) was fixed at a true cost 2.4 and 9
#: times the margins, and the front ended 1.6-1.8 times as far from the truth
#: (``benchmarks/bench_shrink_multi_objective.py --snr 4``).
HIDDEN_COST = 7.0

#: state -> (heading of its group, what to do). The order is the answer box's.
STATES: dict[str, tuple[str, str]] = {
    "matters": ("Matters", "keep tuning"),
    "small": ("Small but real", "keep tuning"),
    "unresolved": ("Not resolved yet", "keep tuning"),
    "no_data": ("Not enough data yet", "keep tuning"),
    "not_yet_safe": ("Not yet safe to fix", "keep tuning for now"),
    "kept": ("Kept so that one stays tuned", "keep tuning"),
    "released": ("Released, not fixed again", "keep tuning"),
    "release": ("Release", "release"),
    "fix": ("You can stop tuning", "fix"),
    "fixed": ("Fixed", "fixed"),
}
#: States in which the parameter is (or stays) tuned.
TUNED = ("matters", "small", "unresolved", "no_data", "not_yet_safe", "kept", "released",
         "release")


def min_trials_to_fix(n_params: int) -> int:
    """Trials an analysis of ``n_params`` parameters needs before it can find one safe to
    fix: ``min(5 d, max(50, d**2 / 8))`` (``MIN_TRIALS_PER_PARAM``).

    Examples
    --------
    >>> [min_trials_to_fix(d) for d in (3, 10, 12, 20, 30, 40, 60)]
    [15, 50, 50, 50, 113, 200, 300]
    """
    d = int(n_params)
    quadratic = math.ceil(d * d / TRIALS_SQUARED_DIVISOR)
    return min(math.ceil(MIN_TRIALS_PER_PARAM * d), max(MIN_TRIALS_TO_FIX, quadratic))


def min_trials_rule() -> str:
    """:func:`min_trials_to_fix` in words, as the rules print it."""
    return (f"min({MIN_TRIALS_PER_PARAM:g} d, max({MIN_TRIALS_TO_FIX}, "
            f"d\u00b2/{TRIALS_SQUARED_DIVISOR})) for d parameters")


def fmt_cost(x: float, threshold: float | None = None) -> str:
    """A cost in objective units to 3 significant digits, or more (up to 8) until it no
    longer prints equal to ``threshold``: ``0.0075`` against ``0.01`` is never "0.01"."""
    if not math.isfinite(x):
        return "n/a"
    for digits in range(3, 9):
        text = f"{x:.{digits}g}"
        if threshold is None or not math.isfinite(threshold) or x == threshold \
                or text != f"{threshold:.{digits}g}":
            return text
    return f"{x:.8g}"


class Explored(NamedTuple):
    """A trial that explored while a restriction held: the parameters it spread over
    their ranges, how much better it did than the model predicts from every other trial
    (objective units, positive is better), that prediction's standard deviation (noise
    included), and the most such standard deviations by which any analysed trial that
    did not explore did better than its prediction (how far the model's errors reach
    where nothing was spread)."""

    trial: int
    params: tuple[str, ...]
    gain: float
    sd: float
    others: float


@dataclass(frozen=True, slots=True)
class ParameterDecision:
    """What to do with one parameter, and why (see :func:`hpinsight._decisions.decide`).

    A value object: one row of :meth:`DecisionResult.to_frame`, with no ``to_frame`` or
    ``plot`` of its own.

    Attributes
    ----------
    param : str
    state : str
        One of ``STATES``: "matters", "small", "unresolved", "no_data", "not_yet_safe",
        "kept", "released", "release", "fix" or "fixed".
    share, share_std : float
        Its main effect's share of the variance over all trials (mean and std over the
        model's draws).
    share_top : float
        Its main effect's share among the best trials (NaN when not computed).
    evidence : str
        The effect the state rests on: ``"lr"`` (its main effect), ``"lr among the best"``
        (its main effect among the best trials), ``"lr x optimizer"`` (an interaction),
        ``"cost"`` (its cost of fixing), or ``"size"`` (an effect's size in objective
        units: too small to matter for "fix", too large to call nothing for
        "not_yet_safe"), and for "not_yet_safe" also ``"noise"`` (an effect the noise
        could hide would cost more than the margin), ``"disputed"`` (the model's two fits
        disagree about it), ``"missed"`` (the model's errors depend on it) or
        ``"hidden"`` (its trials could hide an effect that matters) or ``CONSTANT``,
        ``"constant objective"`` (every trial has the same value), or ``FORBIDDEN``,
        ``"forbidden clause"`` (it is safe to fix by the model but shares a forbidden
        clause with other parameters, whose values fixing it can rule out), or ``UNTRIED``,
        ``"untried choices"`` (safe to fix by the model, but choices of it no trial took
        are unknown to the model: :attr:`untried`), or ``OUTSIDE``, ``"outside the
        trials"`` (safe to fix by the model, but at a value outside the range its
        successful trials ran it over: :attr:`tried`); for "fixed"
        also ``SINGLE``, ``"one value"`` (the search space gives it one value); for
        "release" also ``EXPLORED``, ``"exploring trial"`` (a trial that explored it did
        better than the model predicts: :attr:`explored_trial`); for
        "not_yet_safe" and "unresolved" also ``NO_SIGNAL_AMONG_BEST``,
        ``"no signal among the best"`` (kept tuned by a capped analysis more than a
        quarter of whose refits find no signal: an effect among the best is not ruled out). Where that
        analysis has no signal, no other decision names one of its effects (``"x among
        the best"``), except as ``"size"``.
    evidence_share : float
        That effect's share (NaN for ``"cost"`` and ``NO_SIGNAL_AMONG_BEST``).
    verdict : str
        The strongest verdict among the effects it takes part in.
    n_active : int
        Analysed trials in which the parameter was active.
    value : value or None
        The value to fix it at ("fix"), or the value it is held at ("fixed", "release").
    cost, cost_upper, cost_lower : float
        Predicted cost of fixing it at ``value`` (objective units, positive is worse):
        mean, and the ``confidence`` and ``1 - confidence`` quantiles over the model's
        draws. NaN when not estimated.
    since_trial : int or None
        For "fixed" and "release": the first trial sampled under the restriction.
    effect_sd : float
        The standard deviation over the space, in objective units, of the effect the
        state rests on (for ``"size"``, the effect its size was judged by); NaN when
        there is none.
    hidden_cost : float
        For a parameter with no effect to show: what an effect the noise could hide in
        its trials might cost (``HIDDEN_COST`` noise standard deviations over the square
        root of ``n_active``); with evidence ``"noise"`` it exceeded the margin. NaN when
        not judged (the model has no noise estimate, or the parameter has an effect).
    residual_p : float
        Whether the model misses an effect of it: the Holm-adjusted p-value of its
        leave-one-out errors grouped by its values (``MISSED_ALPHA``); NaN when not tested.
    hidden_share : float
        The share of the variance an effect of it could hold that its trials cannot rule
        out (:attr:`~hpinsight.results.Importance.hidden` of its main effect over all
        trials; a capped analysis has none); NaN when not computed.
    negligible : bool
        The effect the state rests on is too small in objective units to matter, whatever
        its verdict: its standard deviation over the space is at most ``NEGLIGIBLE_SD`` of
        the margin.
    sized_by : str or None
        For evidence ``"size"``: the effect whose size the state rests on, named as
        ``evidence`` names effects (``"lr"``, ``"lr among the best"``, ``"lr x
        optimizer"``); None otherwise.
    linked : tuple of str
        For evidence ``FORBIDDEN``: the parameters whose values a forbidden clause rules
        out where it would be fixed (``SamplingRecord.linked``); empty otherwise.
    untried : tuple
        For evidence ``UNTRIED``: the choices no trial took; empty otherwise.
    tried : tuple
        For evidence ``OUTSIDE``: the lowest and highest value its successful trials ran
        it at; empty otherwise.
    released_after : int or None
        For "released": the last trial of the decision that released it (a released
        parameter is not fixed again, however safe it looks later); None otherwise.
    explored_trial : int or None
        For evidence ``EXPLORED``: the trial that explored it and did better than the
        model predicts from every other trial; None otherwise.
    explored_gain, explored_sd : float
        With ``explored_trial``: by how much it did better than that prediction
        (objective units, positive is better) and the prediction's standard deviation
        (noise included); NaN otherwise.
    partners : tuple of str
        Where ``evidence`` names an interaction: its other parameters, each name whole
        (``evidence`` joins them with ``" x "``, which a name may hold too); empty
        otherwise.
    share_before, evidence_before : float
        For a parameter taken out of the model (``hp.GP(prune=True)``), the share before
        pruning of its main effect over all trials and of the effect the state rests on
        (:attr:`~hpinsight.results.Importance.before_pruning`, which its verdict reads);
        NaN where that effect was not taken out.
    sentence : str
        The one sentence every surface prints.
    objective : str or None
        In a decision over several objectives, the objective it rests on (None for
        one objective).
    grounds : str or None
        ``evidence`` where it names a rule rather than an effect (``"cost"``, ``"size"``,
        ``"noise"``, ``CONSTANT``, ...); None where ``evidence`` is an effect's name. A
        parameter can be named like any rule: read this, not ``evidence``, to tell them
        apart.
    """

    param: str
    state: str
    share: float
    share_std: float
    share_top: float
    evidence: str
    evidence_share: float
    verdict: str
    n_active: int
    value: Any = None
    cost: float = math.nan
    cost_upper: float = math.nan
    cost_lower: float = math.nan
    since_trial: int | None = None
    effect_sd: float = math.nan
    sentence: str = field(default="", repr=False)
    objective: str | None = None
    hidden_cost: float = math.nan
    residual_p: float = math.nan
    hidden_share: float = math.nan
    negligible: bool = False
    share_before: float = math.nan
    evidence_before: float = math.nan
    sized_by: str | None = None
    linked: tuple[str, ...] = ()
    partners: tuple[str, ...] = ()
    untried: tuple[Any, ...] = ()
    tried: tuple[Any, ...] = ()
    released_after: int | None = None
    explored_trial: int | None = None
    explored_gain: float = math.nan
    explored_sd: float = math.nan
    grounds: str | None = None

    def __repr__(self) -> str:
        return f"ParameterDecision({self.param!r}: {self.action})"

    @property
    def heading(self) -> str:
        """The group the state belongs to, as the answer box names it."""
        return STATES[self.state][0]

    @property
    def action(self) -> str:
        """What to do, in a few words: "keep tuning", "fix at 0.25", "release", ..."""
        if self.state == "fix":
            return f"fix at {fmt_value(self.value, quote=True)}"
        if self.state == "fixed":
            since = "" if self.since_trial is None else f" since trial {self.since_trial}"
            return f"fixed at {fmt_value(self.value, quote=True)}{since}"
        if self.state == "release":
            return ("release: fixing it costs " + fmt_cost(self.cost) if self.grounds == "cost"
                    else f"release: exploring trial {self.explored_trial} did "
                         f"{fmt_cost(self.explored_gain)} better" if self.grounds == EXPLORED
                    else "release: it has an effect")
        if self.state == "released":
            return f"keep tuning: released after trial {self.released_after}"
        if self.state == "no_data":
            return ("keep tuning: not enough data (one value in all "
                    f"{self.n_active} trials)" if self.grounds == UNVARIED else
                    f"keep tuning: not enough data (active in {self.n_active} trials)")
        return STATES[self.state][1]

    @property
    def tuned(self) -> bool:
        """Whether the parameter is (or stays) tuned."""
        return self.state in TUNED

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        return {
            "param": self.param, "state": self.state, "heading": self.heading,
            "action": self.action, "share": json_value(self.share),
            "share_std": json_value(self.share_std), "share_top": json_value(self.share_top),
            "evidence": self.evidence, "grounds": self.grounds,
            "evidence_share": json_value(self.evidence_share),
            "verdict": self.verdict, "n_active": self.n_active,
            "value": json_value(self.value), "cost": json_value(self.cost),
            "cost_upper": json_value(self.cost_upper), "cost_lower": json_value(self.cost_lower),
            "since_trial": self.since_trial,
            "effect_sd": json_value(self.effect_sd), "sentence": self.sentence,
            "objective": self.objective, "hidden_cost": json_value(self.hidden_cost),
            "residual_p": json_value(self.residual_p),
            "hidden_share": json_value(self.hidden_share), "negligible": self.negligible,
            "share_before": json_value(self.share_before),
            "evidence_before": json_value(self.evidence_before),
            "sized_by": self.sized_by, "linked": list(self.linked),
            "partners": list(self.partners),
            "untried": [json_value(c) for c in self.untried],
            "tried": [json_value(c) for c in self.tried],
            "released_after": self.released_after,
            "explored_trial": self.explored_trial,
            "explored_gain": json_value(self.explored_gain),
            "explored_sd": json_value(self.explored_sd),
        }


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class DecisionResult:
    """One decision per parameter, the rules' constants beside them.

    Every surface of hpinsight (the report's answer box, table and sentences,
    ``report.json``, the terminal table, the live callback's log and summary, and
    shrinking) shows these; none decides on its own. There is no ``plot``: the costs
    behind the decisions are drawn by :meth:`SubspaceResult.plot`.

    Attributes
    ----------
    decisions : dict of str to ParameterDecision
        In the order of the main effects' shares, largest first.
    n_trials : int
    margin : float
        The most fixing may cost, in objective units (NaN when no cost was estimated).
    confidence : float
        The quantile of the cost that must stay within ``margin``.
    shadow : float or None
        The share a shadow of a parameter got (what "nothing" means).
    matters_share, min_active : float, int
        ``MATTERS_SHARE`` and ``MIN_ACTIVE_TRIALS``.
    top_quantile : float or None
        "Among the best": the capped analysis's quantile.
    top_doubtful : bool
        The capped analysis finds no clear signal
        (:attr:`FanovaResult.signal_doubtful`): its shares, ``share_top``, are
        fractions of next to nothing, and the table and sentences say "no clear
        signal" in their place.
    objectives : dict of str to DecisionResult
        For a study of several objectives, each objective's own decisions, which these
        combine (:func:`hpinsight._joint.decide_jointly`): a parameter is safe to fix
        only when it is for every objective, at one common value. Empty for one
        objective. ``margin`` is then NaN: each objective has its own.
    widen : dict of str to Explored
        The parameters a restriction narrows to a range (``ShrinkingSampler``) that a
        trial exploring them ran outside it, and did better there than the model
        predicts by as much as releases a fixed parameter (the last printed rule),
        each with that trial: live shrinking widens them to their whole range again.
        Empty otherwise.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("lr", 1e-4, 1, log=True), hp.Float("a", 0, 1)])
    >>> configs = space.sample(100, seed=1)
    >>> import math
    >>> y = [(math.log10(c["lr"]) + 2) ** 2 for c in configs]
    >>> sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    >>> [(d.param, d.state) for d in sub.decisions]
    [('lr', 'matters'), ('a', 'fix')]
    """

    decisions: dict[str, ParameterDecision]
    n_trials: int
    margin: float = math.nan
    confidence: float = 0.9
    shadow: float | None = None
    matters_share: float = MATTERS_SHARE
    min_active: int = MIN_ACTIVE_TRIALS
    top_quantile: float | None = None
    top_doubtful: bool = False
    objectives: dict[str, DecisionResult] = field(default_factory=dict, repr=False)
    widen: dict[str, Explored] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        head = f"DecisionResult(n_trials={self.n_trials}, "
        items = [(n, f": {d.state}") for n, d in self.decisions.items()]
        return f"{head}{join_items(items, REPR_WIDTH - len(head) - 1)})"

    def __getitem__(self, name: str) -> ParameterDecision:
        try:
            return self.decisions[name]
        except (KeyError, TypeError):  # a bare KeyError: 0 said nothing of what to pass
            raise UnknownNameError(f"no decision for {name!r}: decisions are looked up by "
                                   f"parameter name, one of {list(self.decisions)!r}") from None

    def __iter__(self) -> Any:
        return iter(self.decisions.values())

    def __len__(self) -> int:
        return len(self.decisions)

    def in_state(self, *states: str) -> tuple[str, ...]:
        """Parameters in any of ``states``, in the order of :attr:`decisions`."""
        unknown = set(states) - set(STATES)
        if unknown:
            raise InvalidArgumentError(
                f"The states given to DecisionResult.in_state must be among {list(STATES)}. "
                f"Got {sorted(unknown)} instead.")
        return tuple(n for n, d in self.decisions.items() if d.state in states)

    @property
    def to_fix(self) -> dict[str, Any]:
        """The parameters that are safe to fix, and their values (what shrinking fixes)."""
        return {n: d.value for n, d in self.decisions.items() if d.state == "fix"}

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules behind every state, in words, with this result's constants."""
        margin = ("each objective has its own margin" if self.objectives
                  else "no cost of fixing was estimated" if not math.isfinite(self.margin)
                  else f"the margin is {fmt_cost(self.margin)}")
        null = ("" if self.shadow is None else
                f" (a shadow got {fmt_share(self.shadow)} here)")
        joint = () if not self.objectives else (
            f"With several objectives ({', '.join(self.objectives)}), each is decided by "
            "these rules on its own, and a parameter is safe to fix only when it is safe to "
            "fix for every objective at one common value, each cost within that objective's "
            "own margin; otherwise it takes the decision of the objective that needs it most.",)
        return (
            *joint,
            f"An effect is resolved when the lower end of its {100 * INTERVAL_LEVEL:g} % interval "
            f"(mean - {INTERVAL_Z:.3f} std) is above the share a shadow of a parameter got{null}; "
            "for an interaction, above the largest share an interaction with a shadow in it "
            "got and above the share that comes back when it is taken out of the trials' "
            "values and the model fit again; "
            f"shares below {100 * NEGLIGIBLE_SHARE:g} % count as nothing; a parameter's effect is indistinguishable from nothing only when its "
            f"trials could not hide one of {fmt_share(self.matters_share)} of the variance "
            f"and the upper end of its interval (mean + {INTERVAL_Z:.3f} std) stays below that plus its null "
            "(where they leave its range unvisited or "
            "are too noisy, or the fits they support disagree about it, it is uncertain); where "
            f"more than {100 * NO_SIGNAL_SHARE:g} % of those fits find no signal, every effect of that "
            "analysis is uncertain, and where their median rank correlation with the trials "
            "they were not fit on is not above what values unrelated to the parameters "
            f"exceed {100 * UNSHOWN_LEVEL:g} % of the time, none of its effects is "
            "resolved; among the best trials, an effect is indistinguishable from "
            "nothing only where it is over all trials too.",
            "Matters: a resolved effect it takes part in (alone, among the best trials or in "
            f"a pair) holds at least {fmt_share(self.matters_share)} of the variance; small "
            "but real: a smaller resolved effect, or an uncertain one whose cost of fixing "
            f"is above the margin even at its {1 - self.confidence:.0%} quantile.",
            f"Not enough data: active in fewer than {self.min_active} of the trials.",
            "Every trial with the same value: no effect is distinguishable from nothing, but "
            "no margin can be set for what fixing may cost: not yet safe to fix.",
            "Fixing is judged in objective units, not in shares: an effect whose standard "
            f"deviation over the space is at most {NEGLIGIBLE_SD:g} of the margin is too small "
            "to matter, whatever its verdict (a smooth effect spans about 3.5 standard "
            "deviations); one over all trials that is above its shadow with a larger "
            f"standard deviation is not nothing, even below {100 * NEGLIGIBLE_SHARE:g} % of "
            "the variance: not yet safe to fix.",
            "Safe to fix: every effect it takes part in is indistinguishable from nothing "
            "or too small to matter, "
            f"the {self.confidence:.0%} quantile of its cost of fixing is within the margin "
            f"({margin}), there are at least {min_trials_to_fix(len(self.decisions))} trials "
            f"({min_trials_rule()}), and "
            "an effect the noise could hide in its trials would cost no more than the margin "
            f"({HIDDEN_COST:g} noise standard deviations over the square root of its trials), "
            "and the Gaussian process's fits to the objective's values and to their ranks do "
            f"not disagree about it (a length scale under {DISPUTED_LENGTH:g} from the values, "
            f"over {DISPUTED_RATIO:g} times that kept from the ranks), and the model's "
            "errors on trials left out of its fit do not depend on it (Kruskal-Wallis over "
            f"fifths of its range, Holm-adjusted p over all parameters at least {MISSED_ALPHA:g}, "
            f"or the errors' group means spread by at most {NEGLIGIBLE_SD:g} of the margin), "
            "and the trials know the value it would be fixed at: every choice of a categorical "
            "was tried, a number lies within the range its trials ran it over (or beyond it "
            "by no more than the widest gap between their values), and no "
            "forbidden clause there rules out values of other parameters. "
            "Otherwise, with no effect found: not yet safe to fix.",
            "Only parameters that are safe to fix are ever fixed; a fixed one is released when "
            "an effect is resolved, its mean cost exceeds the margin, or a trial that explored "
            "it (one in ten spreads the restricted parameters over their ranges) did better than "
            "the model predicts from every other trial by more than the margin plus "
            f"{EXPLORED_Z:g} standard deviations of that prediction, and by more of them "
            "than any trial that did not explore; then every parameter that trial moved is "
            "released, as one trial cannot tell which of them made the gain. A released "
            "parameter is not fixed again, however safe to fix it looks later, so that a "
            "decision cannot go back and forth on noise. A range the restriction narrows is "
            "widened to the whole range again on the same evidence, from a trial that ran "
            "the parameter outside it.",
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        return {
            "decisions": {n: d.to_dict() for n, d in self.decisions.items()},
            "n_trials": self.n_trials, "margin": json_value(self.margin),
            "confidence": self.confidence, "shadow": json_value(self.shadow),
            "matters_share": self.matters_share, "min_active": self.min_active,
            "top_quantile": json_value(self.top_quantile), "top_doubtful": self.top_doubtful,
            "rules": list(self.rules),
            "objectives": {k: v.to_dict() for k, v in self.objectives.items()},
            "widen": {n: {"trial": e.trial, "gain": json_value(e.gain), "sd": json_value(e.sd)}
                      for n, e in self.widen.items()},
        }

    def to_frame(self) -> Any:
        """One row per parameter: ``param``, ``state``, ``action``, the shares, the cost
        and ``sentence``.

        Returns
        -------
        pandas.DataFrame
        """
        pd = import_optional("pandas", "DecisionResult.to_frame")
        columns = ["param", "state", "action", "share", "share_std", "share_top", "evidence",
                   "verdict", "n_active", "value", "cost", "cost_upper", "sentence"]
        return pd.DataFrame([{c: getattr(d, c) for c in columns} for d in self], columns=columns)

    def table(self) -> str:
        """The decisions as a plain-text table for a terminal: one line per parameter
        with its shares and what to do (the report page shows the same)."""
        if self.objectives:
            return self._joint_table()
        q = "best" if self.top_quantile is None else f"best {100 * self.top_quantile:.0f} %"
        width = max([len("parameter"), *(len(n) for n in self.decisions)]) + 2
        shares = {n: f"{fmt_share(d.share)} ± {fmt_share(d.share_std)}" for n, d in self.decisions.items()}
        tops = {n: NO_CLEAR_SIGNAL if self.top_doubtful else fmt_share(d.share_top)
                for n, d in self.decisions.items()}
        # every column at least two spaces from the one before, however long a share gets
        w_all = max([16, *(len(v) for v in shares.values())]) + 2
        w_top = max([len(q), *(len(v) for v in tops.values())]) + 2
        lines = [f"{'parameter':<{width}}{'all trials':>{w_all}}{q:>{w_top}}   decision"]
        for n, d in self.decisions.items():
            lines.append(f"{n:<{width}}{shares[n]:>{w_all}}{tops[n]:>{w_top}}   {d.action}")
        return "\n".join(lines)

    def _joint_table(self) -> str:
        """:meth:`table` over several objectives: each objective's share over all trials
        (mean ± std), then the one decision."""
        width = max([len("parameter"), *(len(n) for n in self.decisions)]) + 2
        cells = {o: {n: f"{fmt_share(r[n].share)} ± {fmt_share(r[n].share_std)}"
                     for n in self.decisions} for o, r in self.objectives.items()}
        widths = {o: max([len(o), *(len(v) for v in c.values())]) + 2 for o, c in cells.items()}
        lines = [f"{'parameter':<{width}}"
                 + "".join(f"{o:>{widths[o]}}" for o in self.objectives) + "   decision"]
        for n, d in self.decisions.items():
            lines.append(f"{n:<{width}}" + "".join(f"{cells[o][n]:>{widths[o]}}"
                                                    for o in self.objectives)
                         + f"   {d.action}" + ("" if d.objective is None or not d.tuned
                                                  else f" (for {d.objective})"))
        return "\n".join(lines)

def member_note(d: ParameterDecision) -> str:
    """What the answer (the report's box, the dashboard's note) says beside a parameter's
    name: its share, or its value; plain text, escaped by whoever renders it."""
    if d.grounds == NO_SIGNAL_AMONG_BEST:
        of = "" if d.objective is None else f" of {d.objective}"
        return f"({NO_CLEAR_SIGNAL} among the best{of})"
    if d.state in ("matters", "small", "unresolved"):
        if d.grounds == "cost":
            return f"(fixing it costs {fmt_cost(d.cost)})"
        # a share among the best says so: beside shares over all trials it read as one
        among = d.grounds is None and d.evidence == f"{d.param} among the best"
        with_ = f" with {', '.join(d.partners)}" if d.partners else ""
        of = "" if d.objective is None else f" of {d.objective}"
        return f"({fmt_share(d.evidence_share)}{' among the best' if among else ''}{with_}{of})"
    if d.state == "no_data":
        return (f"(one value in all {d.n_active} trials)" if d.grounds == UNVARIED
                else f"(active in {d.n_active} trials)")
    if d.state in ("fix", "fixed", "release", "released"):
        return f"({d.action})"
    return ""


def answer_groups(
    decisions: DecisionResult,
) -> list[tuple[str, str, list[ParameterDecision]]]:
    """The answer: ``(state, heading, decisions)`` for every state that has parameters,
    in the order of :data:`STATES` (what matters, what is small but real, ..., what you
    can stop tuning); every parameter in exactly one group."""
    groups = []
    for state, (heading, _) in STATES.items():
        members = [decisions[n] for n in decisions.in_state(state)]
        if members:
            groups.append((state, heading, members))
    return groups


def no_matters_line(decisions: DecisionResult) -> str | None:
    """What the answer says under "Matters" when nothing does (None when something does)."""
    if decisions.in_state("matters"):
        return None
    if any(d.grounds == CONSTANT for d in decisions.decisions.values()):
        return "every trial has the same value, so no effect can be shown; run more varied trials."
    return (f"no effect is resolved yet that explains {fmt_share(decisions.matters_share)} "
            "or more; run more trials.")
