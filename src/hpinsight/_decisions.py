"""One decision per parameter: what to do with it, decided once from the evidence.

Which hyperparameters can a user stop tuning? Three kinds of evidence bear on it, and
before this module each surface weighed them in its own way, so one parameter could be
"no effect found", "not yet safe to fix" and "keep tuning" on the same page:

* **variance** -- the functional ANOVA of the surrogate (Hutter, Hoos & Leyton-Brown 2014):
  the share of the prediction variance of every effect the parameter takes part in, over
  all trials and among the best (capped, Sec. 3.3), each with its verdict against the
  shadow null (:attr:`hpinsight.results.Importance.verdict`);
* **cost** -- the predicted loss of fixing it (surrogate tuning risk, after Weerts 2018):
  its mean and its ``confidence`` quantile over the model's draws, against a margin;
* **data and sampling** -- how many trials it was active in, and whether a restriction
  already holds it fixed.

:func:`decide` turns them into one :class:`ParameterDecision` per parameter, in one of
the states of :data:`STATES`, with the one sentence every surface prints. The rules, in
the order they are applied (each is printed with the report):

1. Held fixed by a restriction: **release** if its effect is resolved, its mean cost
   exceeds the margin, or a trial that explored it (:attr:`SamplingRecord.explored`) did
   better than the model predicts from every other trial by more than the margin plus
   ``EXPLORED_Z`` standard deviations of that prediction, and by more of them than any
   trial that did not explore (:func:`explored_gains`; every parameter that trial moved),
   else **fixed**. A parameter the restriction narrows to a range that such a trial ran
   outside it is widened again (:attr:`DecisionResult.widen`); its state is decided by
   the rules below, as for any parameter that is tuned.
2. Active in fewer than ``MIN_ACTIVE_TRIALS`` analysed trials: **not enough data**.
   Every trial with the same value (``CONSTANT``): **not yet safe to fix**, as no effect
   can be shown or ruled out and the margin would be 0.
3. An effect it takes part in (alone, among the best, or in a pair) is resolved:
   **matters** when that effect holds at least ``MATTERS_SHARE`` of the variance, else
   **small but real**.
4. An effect it takes part in is uncertain: **small but real** when the cost of fixing
   it exceeds the margin even at its ``1 - confidence`` quantile (a cost the variance
   does not show: a narrow dip near the optimum holds little variance), else **not
   resolved yet** (a mean cost above the margin alone is the model's doubt, not an
   effect shown). An effect that is uncertain
   only because its trials could hide one that matters (its share no more than the null,
   :attr:`~hpinsight.results.Importance.hidden` over ``MATTERS_SHARE``: they left part of
   its range unvisited, or are too noisy) gives **not yet safe to fix** (rule 5's
   "otherwise"). Where more than a quarter of the refits of the analysis among the best
   find no signal
   (:attr:`~hpinsight.results.FanovaResult.signal_doubtful`), every effect there is
   uncertain; a parameter those effects keep tuned is said to be kept for that reason
   (``NO_SIGNAL_AMONG_BEST``), and its share there, a fraction of next to nothing, is
   not quoted. Where the refits of an analysis do not rank the trials they were not fit
   on better than unrelated values would (:attr:`~hpinsight.results.FanovaResult.signal_unshown`),
   no effect there is resolved, and a parameter kept by an effect above its null says
   so: on pure noise the model's fit of the noise made such effects "matters" in 16 of
   60 studies, and 1 with the check (``benchmarks/bench_pure_noise.py``).
   An effect whose standard deviation over the space, in objective units, is at most
   ``NEGLIGIBLE_SD`` of the margin counts as nothing in rules 1, 3, 4 and 5, whatever its
   verdict: it cannot cost the margin where it is smooth. An effect over all trials that
   is nothing by its share alone (above its shadow, below ``NEGLIGIBLE_SHARE``) with a
   larger standard deviation gives **not yet safe to fix**.
5. Every effect is indistinguishable from nothing: **safe to fix** when the cost's
   ``confidence`` quantile is within the margin, the analysis has at least
   :func:`min_trials_to_fix` trials (``min(5 d, max(50, d**2 / 8))`` on d parameters),
   and an effect the noise could hide in
   the parameter's trials would cost no more than the margin (``HIDDEN_COST`` noise
   standard deviations over the square root of its trials: a cost the data cannot show
   is not a cost shown to be small), and the model neither disputes nor misses an effect
   of it (``DISPUTED_LENGTH``: its fit to the objective's values finds one that the rank
   fit overrules; ``MISSED_ALPHA``: its leave-one-out errors depend on the parameter),
   else **not yet safe to fix** (also when its mean
   cost exceeds the margin: with no effect to show, the model's uncertainty about it is
   not evidence that it is real).
6. Nothing else is tuned: the one with the largest share stays (**kept**), so a study
   always tunes at least ``min_keep`` parameters.

Only **safe to fix** is ever acted on (shrinking fixes those and nothing else), so a
parameter with a resolved effect is never fixed unless that effect is too small, in
objective units, to cost the margin. Smallness is judged in objective units against the
margin, never by share of variance: a V-shaped parameter holding 0.047 % of the variance
cost 2.6 times the margin where it was fixed (``benchmarks/bench_shrink.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ._decision_result import (
    CONSTANT,
    DISPUTED_LENGTH,
    DISPUTED_RATIO,
    EXPLORED,
    EXPLORED_Z,
    FORBIDDEN,
    HIDDEN_COST,
    MATTERS_SHARE,
    MIN_ACTIVE_TRIALS,
    MIN_TRIALS_FOR_COST,
    MISSED_ALPHA,
    NEGLIGIBLE_SD,
    NO_SIGNAL_AMONG_BEST,
    OUTSIDE,
    SINGLE,
    UNTRIED,
    UNVARIED,
    DecisionResult,
    Explored,
    ParameterDecision,
    fmt_cost,
    fmt_share,
    min_trials_rule,
    min_trials_to_fix,
)
from ._fanova_result import (
    INTERVAL_LEVEL,
    NEGLIGIBLE_SHARE,
    NO_EFFECT,
    VERDICTS,
    among_best_label,
    verdict,
)
from ._risk import holm_bonferroni
from ._shared import NO_CLEAR_SIGNAL, fmt_value, no_signal_words, taken_out_words
from .exceptions import InvalidArgumentError
from .space import Categorical, Float, Int, encode_value

if TYPE_CHECKING:
    from ._fanova_result import FanovaResult, Importance
    from ._history import TrialHistory
    from ._sampling import SamplingRecord
    from ._surrogate_risk import SurrogateRisk

__all__ = ["MAX_PARAMS_FOR_PAIRS", "Explored", "decide", "decision_order", "explored_gains",
           "outside_trials"]

#: Pairwise interactions are analysed up to this many parameters (all pairs).
MAX_PARAMS_FOR_PAIRS = 12


def explored_gains(history: TrialHistory, model: Any) -> list[Explored]:
    """The trials of ``history`` that explored the parameters its restriction holds
    fixed or narrowed (:attr:`SamplingRecord.explored`), each with how much better it
    did than ``model``'s out-of-sample prediction of it (``residuals``: leave-one-out
    for a Gaussian process, out-of-bag for a forest). Empty where the model has no such
    prediction or no trial explored a parameter held now."""
    sampling = history.sampling
    residuals = getattr(model, "residuals", None)
    sds = getattr(model, "residual_sds", None)
    held = set() if sampling is None else {*sampling.fixed, *sampling.ranges}
    if sampling is None or not sampling.explored or not held or residuals is None \
            or sds is None or len(residuals) != history.n_trials:
        return []
    sign = 1.0 if history.direction == "minimize" else -1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = -sign * np.asarray(residuals, dtype=np.float64) / np.asarray(sds, dtype=np.float64)
    spread = np.array([t in sampling.explored for t in history.trial_ids])
    regular = z[~spread & np.isfinite(z)]
    others = float(regular.max()) if regular.size else math.inf
    out = []
    for row, trial in enumerate(history.trial_ids):
        names = tuple(n for n in sampling.explored.get(trial, ()) if n in held)
        gain, sd = -sign * float(residuals[row]), float(sds[row])
        if names and math.isfinite(gain) and math.isfinite(sd) and sd > 0:
            out.append(Explored(int(trial), names, gain, sd, others))
    return out


def outside_trials(history: TrialHistory, values: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The numerical parameters whose value in ``values`` lies beyond the values the
    trials of ``history`` (its successful ones) ran it at, where it was active, by more
    than the widest gap between those values (in its encoded scale: logarithms for a log
    scale), each with the lowest and highest of them. Near its trials, as a default at
    the bound of a range sampled up to near it is, the model knows a value as well as
    between them."""
    X = history.encoded()
    out = {}
    for j, param in enumerate(history.space.params):
        value = values.get(param.name)
        if not isinstance(param, Float | Int) or isinstance(value, bool) \
                or not isinstance(value, int | float | np.integer | np.floating):
            continue
        seen = np.unique(X[:, j][~np.isnan(X[:, j])])
        if seen.size == 0:
            continue
        v = encode_value(param, value)
        reach = float(np.diff(seen).max()) if seen.size > 1 else 0.0
        if v < seen[0] - reach or v > seen[-1] + reach:
            ran = [c[param.name] for c in history.configs if param.name in c]
            out[param.name] = (min(ran), max(ran))
    return out


def decision_order(n_params: int) -> int:
    """The largest order of the effects every decision rests on: pairs up to
    ``MAX_PARAMS_FOR_PAIRS`` parameters, main effects beyond.

    One rule for every surface that decides (the report, :func:`~hpinsight.suggest_subspace`
    fitting its own analysis, the live refits and their notes): a parameter that acts
    through a pair ("matters with learning_rate") is not "not resolved yet" elsewhere
    because another surface looked at main effects only.
    """
    return 2 if 2 <= n_params <= MAX_PARAMS_FOR_PAIRS else 1


_NOTHING, NEGLIGIBLE = VERDICTS[2], VERDICTS[3]  # nothing shown; shown, below NEGLIGIBLE_SHARE
#: A cost is the difference of two predictions, so where it is 0 in exact arithmetic it
#: comes out within about 1e-14 of the objective's scale; below this fraction of the
#: margin it is nothing measurable.
_ROUNDING = 1e-9


def decide(
    result: FanovaResult,
    *,
    capped: FanovaResult | None = None,
    risks: Mapping[str, SurrogateRisk] | None = None,
    values: Mapping[str, Any] | None = None,
    margin: float = math.nan,
    confidence: float = 0.9,
    sampling: SamplingRecord | None = None,
    min_keep: int = 0,
    explored: Sequence[Explored] = (),
    tried: Mapping[str, tuple[Any, Any]] | None = None,
) -> DecisionResult:
    """One decision per parameter of ``result`` (the rules: this module's docstring).

    Parameters
    ----------
    result : FanovaResult
        The analysis of all trials (its interactions count where computed).
    capped : FanovaResult, optional
        The analysis among the best trials (main effects), judged beside ``result``
        (:meth:`FanovaResult.beside`).
    risks : mapping of str to SurrogateRisk, optional
        Cost of fixing each parameter at ``values``; without it nothing is safe to fix.
    values : mapping of str to value, optional
        The value each parameter would be fixed at.
    margin : float
        The most fixing may cost (objective units).
    confidence : float
        The quantile of the cost that must stay within ``margin``.
    sampling : SamplingRecord, optional
        The restriction in force, if any (fixed parameters are "fixed" or "release").
    min_keep : int
        Keep at least this many parameters tuned.
    explored : sequence of Explored
        The trials that explored while the restriction held, each with how much better
        it did than the model predicts from every other trial (:func:`explored_gains`);
        one that beats it as rule 1 says also widens the narrowed ranges it ran
        outside of (:attr:`DecisionResult.widen`).
    tried : mapping of str to (value, value), optional
        The parameters whose value in ``values`` lies outside what the analysed trials
        ran them at, each with the lowest and highest value they did
        (:func:`outside_trials`): not safe to fix there.

    Returns
    -------
    DecisionResult

    Raises
    ------
    InvalidArgumentError
        If ``result`` is capped.
    """
    if result.cap_value is not None:
        raise InvalidArgumentError(
            "decide() takes the analysis of all trials (fanova(history)) as its result; the "
            f"one given was capped at {result.cap_value:g}. Pass a capped analysis as "
            "capped=, beside the uncapped one.")
    names = result.space.names
    effects = [] if result.is_constant else list(result.ranking())
    if capped is not None:  # nothing among the best only where nothing over all trials
        capped = capped.beside(result)
    top = {} if capped is None or capped.is_constant else {
        i.params[0]: i for i in capped.ranking(order=1)}
    main = {i.params[0]: i for i in effects if len(i.params) == 1}
    order = sorted(names, key=lambda n: -(main[n].mean if n in main else 0.0))
    # an effect's standard deviation in objective units: its share of its analysis's variance
    scale = {id(i): result.total_variance for i in effects}
    if capped is not None and not capped.is_constant:
        scale.update({id(i): capped.total_variance for i in top.values()})
    tiny = NEGLIGIBLE_SD * margin if math.isfinite(margin) else -math.inf

    def effect_sd(i: Importance) -> float:  # of a parameter taken out, its share before
        return math.sqrt(max(i.judged_share, 0.0) * max(scale.get(id(i), 0.0), 0.0))

    top_doubtful = capped is not None and capped.signal_doubtful
    unshown = (result.signal_unshown, capped is not None and capped.signal_unshown)
    since = _since_trials(sampling)
    released = _released(sampling)
    noise_sd = _noise_sd(result)
    disputed = _disputed(result)
    residual_p, spread = _residual_p(result)
    # a missed effect too small in objective units to cost the margin is nothing for fixing
    missed = {n for n, p in residual_p.items() if p < MISSED_ALPHA and spread[n] > tiny}
    # per parameter held fixed, the exploring trial that beat the model's prediction by
    # the most standard deviations beyond the margin, where that is more than EXPLORED_Z
    # and more than any trial that did not explore beat its own (the model's errors are
    # heavier-tailed than its normal: on the conditional problem of bench_shrink a trial
    # that explored only parameters that do nothing beat its prediction by 3.4 of them,
    # and one that explored nothing by 3.7)
    beaten: dict[str, Explored] = {}
    if math.isfinite(margin):
        for e in sorted(explored, key=lambda e: -(e.gain - margin) / e.sd):
            if e.gain - margin > EXPLORED_Z * e.sd and e.gain > e.others * e.sd:
                for n in e.params:
                    beaten.setdefault(n, e)
    out: dict[str, ParameterDecision] = {}
    for name in order:
        over_all = [i for i in effects if name in i.params]
        own = over_all + ([top[name]] if name in top else [])
        # uncertain only because its trials could hide an effect that matters: nothing
        # shown, and not safe to fix
        unseen = [i for i in own if _unseen(i) and not _inherited(i, top.get(name), top_doubtful)]
        unseen_ids = {id(i) for i in unseen}
        # above the shadow but too small in objective units to cost the margin: nothing
        # for fixing (the table still shows its verdict; the sentence says why)
        negligible = [i for i in own if i.verdict not in NO_EFFECT and effect_sd(i) <= tiny
                      and id(i) not in unseen_ids]
        # "nothing" by its share alone (above the shadow, below NEGLIGIBLE_SHARE) but large
        # enough in objective units to cost the margin: a V-shaped parameter near the
        # optimum. Over all trials only: the capped objective is flat over most of the
        # space, and its fit gives a parameter that does nothing a share above its shadow
        # (0.0054 % among the best against 1e-9 % over all trials, noise-free)
        sizeable = [i for i in over_all if i.verdict in NO_EFFECT and i.null is not None
                    and i.judged_share > i.null and effect_sd(i) > tiny and math.isfinite(tiny)]
        skip = {id(i) for i in negligible} | unseen_ids
        resolved = [i for i in own if i.verdict == "resolved" and id(i) not in skip]
        uncertain = [i for i in own if i.verdict == "uncertain" and id(i) not in skip]
        # with nothing resolved or uncertain on its own, an effect the trials could hide
        # is the evidence: its verdict, uncertain, is the one the table shows
        # of effects not resolved, its own main effect is the evidence before an interaction:
        # an uncertain interaction is often one the product kernel made up (the demo's
        # learning_rate x dropout, above dropout's own uncertain effect, half of which came
        # back when it was taken out)
        alone = [i for i in uncertain if len(i.params) == 1]
        strongest = max(resolved or alone or uncertain or unseen or own, key=lambda i: i.mean, default=None)
        among_best = strongest is not None and strongest is top.get(name)
        hidden_cost = math.nan
        risk = None if risks is None else risks.get(name)
        cost = math.nan if risk is None else risk.mean
        upper = math.nan if risk is None else risk.quantile(confidence)
        lower = math.nan if risk is None else risk.quantile(1.0 - confidence)
        value = None if values is None else values.get(name)
        n_active = result.n_trials - result.n_inactive.get(name, 0)
        costly = math.isfinite(cost) and math.isfinite(margin) and cost > margin
        # held only where the trials say they were sampled under the restriction: a
        # restriction that no later trial carries the mark of (a sampler that is not a
        # ShrinkingSampler ignores it) was reported "fixed" while the parameter varied
        # (nor where the latest trials ran it at another value: an edited range left the
        # fixed value outside, and the sampler let it vary, while it was called "Fixed")
        held = (sampling is not None and name in sampling.fixed and sampling.n_held is not None
                and name not in sampling.unheld)
        param = result.space[name]
        only = param.choices if isinstance(param, Categorical) and len(param.choices) == 1 else ()
        single = bool(only)
        if single:  # a constant of the space (a ConfigSpace Constant): nothing to tune
            state, value = "fixed", only[0]
        elif held:
            assert sampling is not None
            state = "release" if (resolved or costly or name in beaten) else "fixed"
            value = sampling.fixed[name]
        elif name in result.unvaried:  # one value in every trial: nothing to judge it by
            # (also in fewer than MIN_ACTIVE_TRIALS trials: its sentence names the value)
            state, value = "no_data", result.unvaried[name]
        elif n_active < MIN_ACTIVE_TRIALS:
            state = "no_data"
        elif result.is_constant:  # no effect to show or rule out, and a margin of 0
            state = "not_yet_safe"
        elif resolved:
            state = "matters" if strongest is not None and strongest.mean >= MATTERS_SHARE \
                else "small"
        elif uncertain:
            # a cost the model shows (even its low quantile above the margin) makes an
            # uncertain effect small but real; a mean above the margin alone is the
            # model's doubt: on pure noise the model's fit of the noise gave 1-3 of 10
            # parameters mean costs above the margin (benchmarks/bench_pure_noise.py)
            shown = math.isfinite(lower) and math.isfinite(margin) and lower > margin
            state = "small" if shown else "unresolved"
        elif sizeable or name in disputed or name in missed or unseen:
            state = "not_yet_safe"
        elif math.isfinite(upper) and math.isfinite(margin) and upper <= margin \
                and result.n_trials >= min_trials_to_fix(len(names)):
            hidden_cost = HIDDEN_COST * noise_sd / math.sqrt(max(n_active, 1))
            state = "not_yet_safe" if hidden_cost > margin else "fix"
        else:
            state = "not_yet_safe"
        # a parameter sharing a forbidden clause with others: fixed at a value the clause
        # reads, it rules out values of theirs (act fixed at 'tanh' forbids opt = 'rms'; at
        # 'relu' nothing), a cost the model, which integrates over forbidden combinations,
        # does not see
        linked = () if sampling is None else (
            sampling.linked_to(name) if value is None else sampling.linked_to(name, value))
        forbidding = state == "fix" and bool(linked)
        # choices no trial took: the model's cost of fixing is over the choices the trials
        # took, and one never tried may be the best (a categorical whose better choice the
        # optimizer never looked at was called safe to fix)
        untried = result.untried.get(name, ()) if state == "fix" and not forbidding else ()
        # a value outside the range the successful trials ran it over: the model's cost
        # there is extrapolated, and trials may fail there (a declared default of 1.0,
        # where every trial above 0.8 had crashed, was called safe to fix)
        span = None if tried is None else tried.get(name)
        outside = state == "fix" and not forbidding and not untried and span is not None
        if forbidding or untried or outside:
            state = "not_yet_safe"
        # released by a check or by the user: not fixed again (a restriction would not
        # take it back, and the surfaces said "fix" while the study went on tuning it)
        if state == "fix" and name in released:
            state = "released"
        noisy = state == "not_yet_safe" and hidden_cost > margin
        by_size = max(sizeable, key=effect_sd) if state == "not_yet_safe" and sizeable else \
            max(negligible, key=effect_sd) if state in ("fix", "kept") and negligible else None
        if by_size is not None:
            strongest = by_size
            among_best = strongest is top.get(name)
        # kept tuned only by a capped analysis without signal: its verdict there is
        # uncertain because its refits are flat, not because of this parameter's trials,
        # and its share there is a fraction of nothing
        no_signal = top_doubtful and (
            (state == "unresolved" and among_best)
            or (state == "not_yet_safe" and bool(unseen)
                and all(i is top.get(name) for i in unseen)))
        if top_doubtful and among_best and by_size is None and not no_signal \
                and not any(strongest is i for i in negligible):
            # decided on other grounds: its effect over all trials is the one named, not
            # a share among the best that is a fraction of nothing (one too small to
            # matter stays named: its size in objective units is what the rule read)
            strongest = max(over_all, key=lambda i: i.mean, default=None)
            among_best = False
        surprise = beaten.get(name) if state == "release" and not resolved else None
        # the rule the state rests on, where it is not an effect: kept apart from the
        # effect's name, which can be any word (a parameter named "noise" that matters was
        # said to rest on "what the noise could hide")
        grounds = (SINGLE if single else UNVARIED if state == "no_data" and name in result.unvaried
                   else FORBIDDEN if forbidding else UNTRIED if untried
                   else OUTSIDE if outside
                   else EXPLORED if surprise is not None
                   else "cost" if state in ("small", "release") and not resolved
                   else CONSTANT if state == "not_yet_safe" and result.is_constant
                   else "noise" if noisy
                   else "size" if by_size is not None
                   else "disputed" if state == "not_yet_safe" and name in disputed
                   else "missed" if state == "not_yet_safe" and name in missed
                   else NO_SIGNAL_AMONG_BEST if no_signal
                   else "hidden" if state == "not_yet_safe" and unseen
                   else None)
        evidence = grounds if grounds is not None else (
            f"{name} among the best" if among_best
            else " x ".join(strongest.params) if strongest is not None else name)
        # the effect whose share the decision quotes (none for a cost, no signal or a
        # constant objective)
        quoted = None if grounds in ("cost", NO_SIGNAL_AMONG_BEST, CONSTANT, FORBIDDEN, SINGLE,
                                     UNTRIED, OUTSIDE, UNVARIED, EXPLORED) \
            else strongest
        sized_by = None if by_size is None else (
            f"{name} among the best" if among_best else " x ".join(by_size.params))
        out[name] = ParameterDecision(
            param=name, state=state,
            share=main[name].mean if name in main else 0.0,
            share_std=main[name].std if name in main else 0.0,
            share_top=top[name].mean if name in top else math.nan,
            evidence=evidence, grounds=grounds,
            evidence_share=math.nan if quoted is None else quoted.mean,
            verdict=strongest.verdict if strongest is not None else _NOTHING,
            n_active=n_active, value=value, cost=cost, cost_upper=upper, cost_lower=lower,
            since_trial=since.get(name) if held else None,
            effect_sd=spread[name] if grounds == "missed"
            else math.nan if strongest is None else effect_sd(strongest),
            hidden_cost=hidden_cost, residual_p=residual_p.get(name, math.nan),
            hidden_share=max((i.hidden for i in own if i.hidden is not None), default=math.nan),
            negligible=strongest is not None and any(strongest is i for i in negligible),
            share_before=_before(main.get(name)),
            evidence_before=_before(quoted), sized_by=sized_by,
            linked=linked if forbidding else (), untried=tuple(untried),
            tried=tuple(span) if outside and span is not None else (),
            released_after=released[name] if state == "released" else None,
            explored_trial=None if surprise is None else surprise.trial,
            explored_gain=math.nan if surprise is None else surprise.gain,
            explored_sd=math.nan if surprise is None else surprise.sd,
            partners=tuple(p for p in strongest.params if p != name)
            if strongest is not None and len(strongest.params) > 1
            and grounds is None and evidence == " x ".join(strongest.params) else (),
        )
    _keep_some(out, min_keep)
    top_label = among_best_label(capped)
    return DecisionResult(
        decisions={n: replace(d, sentence=_sentence(d, n_trials=result.n_trials,
                                                     n_params=len(names), margin=margin,
                                                     confidence=confidence, top_label=top_label,
                                                     top_doubtful=top_doubtful, unshown=unshown,
                                                     flat=_flat(capped)))
                   for n, d in out.items()},
        n_trials=result.n_trials, margin=float(margin), confidence=float(confidence),
        shadow=result.shadow_fraction(1) if effects else None,
        top_quantile=None if capped is None else capped.cap_quantile, top_doubtful=top_doubtful,
        widen={n: e for n, e in beaten.items() if sampling is not None and n in sampling.ranges})


def _listed(choices: Sequence[Any], shown: int = 5) -> str:
    """Choices in a sentence: the first ``shown`` of them, and how many more."""
    head = ", ".join(fmt_value(c, quote=True) for c in choices[:shown])
    return head + (f" and {len(choices) - shown} more" if len(choices) > shown else "")


def _unseen(i: Importance) -> bool:
    """Uncertain only because the trials could hide an effect that matters
    (:attr:`Importance.hidden`): without that check it would be nothing."""
    return i.verdict == "uncertain" and verdict(i.judged_share, i.std, i.null) in NO_EFFECT


def _inherited(i: Importance, among_best: Importance | None, top_doubtful: bool) -> bool:
    """``i`` is the effect among the best, uncertain only because it is not nothing over
    all trials (:meth:`FanovaResult.beside`): with what its trials could hide counted
    too, its own numbers say nothing. Then what the trials could hide is not why it is
    kept (its decision quoted a hidden share of 0.00011 % as the reason, beside an
    effect over all trials of ±30.6 %). Where the analysis among the best has no signal,
    every verdict there is uncertain for that, which its own evidence says."""
    return (i is among_best and not top_doubtful
            and verdict(i.judged_share, i.std, i.null, i.hidden) in NO_EFFECT)


def _disputed(result: FanovaResult) -> set[str]:
    """The parameters the Gaussian process's fit to the objective's values finds relevant
    (a length scale below ``DISPUTED_LENGTH`` of its unit range) and its fit to their ranks
    overrules (the kept length scale, the longer of the two, over ``DISPUTED_RATIO`` times
    that one). Empty for other models."""
    from .surrogates.gp import FittedGP

    model = result.model
    if not isinstance(model, FittedGP) or model.raw_length_scales is None:
        return set()
    # one column per parameter, in the space's order; a column taken out of the model
    # (GP(prune=True)) is judged on the length scale it had before
    kept = model.length_scales if model.unpruned is None else model.unpruned.length_scales
    return {n for n, r, k in zip(result.space.names, model.raw_length_scales, kept, strict=True)
            if r < DISPUTED_LENGTH and k > DISPUTED_RATIO * r}


def _residual_p(result: FanovaResult) -> tuple[dict[str, float], dict[str, float]]:
    """Per parameter tested, the Holm-Bonferroni-adjusted p-value (over every parameter
    tested) that the model's out-of-sample errors do not depend on it, and the standard
    deviation of their group means in objective units (``residual_pvalues`` and
    ``residual_spread`` of the Gaussian process, leave-one-out, or of the forest,
    out-of-bag). Empty for models without them."""
    pvalues, spreads = result.model.residual_pvalues, result.model.residual_spread
    if pvalues is None or spreads is None:
        return {}, {}
    p = np.asarray(pvalues, dtype=np.float64)  # one per parameter, in order
    tested = np.flatnonzero(np.isfinite(p))
    if tested.size == 0:
        return {}, {}
    adjusted, _ = holm_bonferroni(p[tested], alpha=MISSED_ALPHA)
    names = result.space.names
    return ({names[j]: float(a) for j, a in zip(tested, adjusted, strict=True)},
            {names[j]: float(spreads[j]) for j in tested})


def _noise_sd(result: FanovaResult) -> float:
    """The noise's standard deviation in objective units, as the model estimates it.

    A Gaussian process: its noise variance, 0 when its fit found none (at its lower
    bound). A forest, whose leaves average the noise away and whose fit has no noise
    term: the root mean square of its out-of-bag residuals, the noise plus what the trees
    cannot fit, so larger than the noise (a forest holds more back); 0 for an ensemble
    hpinsight did not fit (no out-of-bag residuals).
    """
    from .surrogates.forest import FittedForest
    from .surrogates.gp import FittedGP
    from .surrogates.gp._likelihood import NOISE_BOUNDS

    model = result.model
    if result.is_constant:
        return 0.0
    if isinstance(model, FittedForest):
        return model.residual_sd or 0.0
    if not isinstance(model, FittedGP) or model.noise_variance <= 1.01 * NOISE_BOUNDS[0]:
        return 0.0
    return math.sqrt(model.noise_variance) * model.y_scale


def _keep_some(out: dict[str, ParameterDecision], min_keep: int) -> None:
    """Turn "fix" into "kept" for the largest shares until ``min_keep`` are tuned."""
    tuned = sum(d.tuned for d in out.values())
    candidates = sorted((d for d in out.values() if d.state == "fix"),
                        key=lambda d: (-(d.share_top if math.isfinite(d.share_top) else 0.0),
                                       -d.share))
    for d in candidates[: max(0, min_keep - tuned)]:
        out[d.param] = replace(d, state="kept")


def _since_trials(sampling: SamplingRecord | None) -> dict[str, int]:
    """Per parameter held fixed now, the first trial sampled under the restriction that
    has held it since (a later restriction that keeps it fixed does not reset it)."""
    if sampling is None:
        return {}
    since: dict[str, int] = {}
    for d in sampling.decisions:  # oldest first
        action, params, after = d.get("action"), dict(d.get("params") or {}), d.get("after_trial")
        if action == "fix":  # a restriction replaces the one before it
            since = {n: t for n, t in since.items() if n in params}
            for name in params:
                if name not in since and isinstance(after, int):
                    since[name] = after + 1
        elif action == "release":
            since = {n: t for n, t in since.items() if n not in params}
    return {n: t for n, t in since.items() if n in sampling.fixed}


def _released(sampling: SamplingRecord | None) -> dict[str, int]:
    """Per parameter a recorded decision released and the restriction in force does not
    hold, the last trial of the latest such decision (-1 where it names none)."""
    if sampling is None:
        return {}
    out: dict[str, int] = {}
    for d in sampling.decisions:  # oldest first
        if d.get("action") == "release":
            after = d.get("after_trial")
            for name in dict(d.get("params") or {}):
                out[name] = after if isinstance(after, int) else -1
    return {n: t for n, t in out.items() if n not in sampling.fixed}


def _before(effect: Importance | None) -> float:
    """An effect's share before pruning, NaN where none of its parameters was taken out."""
    return math.nan if effect is None or effect.before_pruning is None else effect.before_pruning


def _taken(before: float) -> str:
    """What a sentence adds to a share of 0 that pruning gave: the share the verdict read,
    in the words of the page's table of effects."""
    return "" if not math.isfinite(before) else f" ({taken_out_words(before)})"


def _sd_phrase(d: ParameterDecision, margin: float) -> str:
    """The size rule in a decision's own numbers."""
    limit = NEGLIGIBLE_SD * margin
    return (f"standard deviation {fmt_cost(d.effect_sd, limit)} over the space, "
            f"{'at most' if d.effect_sd <= limit else 'more than'} {NEGLIGIBLE_SD:g} of the "
            f"{fmt_cost(margin)} allowed")


def _flat(capped: FanovaResult | None) -> tuple[int, int]:
    """The capped analysis's flat refits, and its refits."""
    return (0, 0) if capped is None else (capped.n_flat_refits, capped.n_refits)


def _sentence(d: ParameterDecision, *, n_trials: int, n_params: int, margin: float,
              confidence: float, top_label: str, top_doubtful: bool,
              unshown: tuple[bool, bool] = (False, False), flat: tuple[int, int] = (0, 0)) -> str:
    """The one sentence of a decision, in its own numbers (``top_doubtful``: the capped
    analysis finds no clear signal, and its share is not quoted, ``flat`` its flat refits
    of how many; ``unshown``: the analysis of all trials and the capped one resolve
    nothing, their refits not ranking trials they were not fit on)."""
    name = d.param
    share = f"{fmt_share(d.share)} of the variation{_taken(d.share_before)}"
    # the share among the best, after the verdict on the share over all trials, so the
    # verdict reads as the latter's
    aside = ("" if not math.isfinite(d.share_top) else f" ({NO_CLEAR_SIGNAL} {top_label})"
             if top_doubtful else f" ({fmt_share(d.share_top)} {top_label})")
    own = share
    share += aside
    value = fmt_value(d.value, quote=True)
    cost = fmt_cost(d.cost, margin)
    upper = fmt_cost(d.cost_upper, margin)
    allowed = fmt_cost(margin)
    if d.grounds is None and d.evidence == f"{name} among the best":
        effect = (f"it explains {fmt_share(d.evidence_share)} of the variation {top_label}"
                  f"{_taken(d.evidence_before)} ({fmt_share(d.share)} over all trials)")
        aside = ""
    elif d.grounds == "cost" or (d.grounds is None and d.evidence == name):
        effect = f"it explains {own}"
    else:
        effect = f"its interaction {d.evidence} explains {fmt_share(d.evidence_share)}{_taken(d.evidence_before)}"
        aside = ""
    since = "" if d.since_trial is None else f" since trial {d.since_trial}"
    if d.grounds == NO_SIGNAL_AMONG_BEST:
        # kept tuned by a capped analysis whose refits are often flat: every verdict there
        # is uncertain, and its shares are fractions of next to nothing
        keep = "Keep tuning" if d.state == "unresolved" else "Keep tuning for now"
        return (f"{keep}: it explains {own}, but {top_label}, {no_signal_words(*flat)}, so "
                "an effect there is not ruled out; more trials will tell.")
    # the effect whose size is read: its main effect, among the best, or an interaction
    among = d.sized_by == f"{name} among the best"
    pair = d.sized_by is not None and not among and d.sized_by != name
    hidden = (f"{f'its interaction {d.sized_by}' if pair else 'it'} explains "
              f"{fmt_share(d.evidence_share)} of the variation"
              f"{f' {top_label}' if among else ''}"
              f"{_taken(d.evidence_before)}, below the "
              f"{100 * NEGLIGIBLE_SHARE:g} % counted as an effect"
              # "more than a shuffled parameter" only where its interval says so: beside a
              # verdict of "indistinguishable from nothing" it told the reader both
              f"{' but more than a shuffled parameter' if d.verdict == NEGLIGIBLE else ''}, "
              "and an effect that size could cost more than the "
              f"margin ({_sd_phrase(d, margin)}); more trials will tell.")
    # an effect beyond nothing that is too small in objective units is named as such: the
    # table shows its verdict ("uncertain"), and "nothing" would contradict it
    nothing = (f"its effects are too small to matter ({_sd_phrase(d, margin)})" if d.negligible
               else f"its effect is below {100 * NEGLIGIBLE_SHARE:g} % of the variance, too "
                    "small a share to count" if d.verdict == NEGLIGIBLE
               else "no effect is distinguishable from nothing")
    # cheap by the model, yet kept for what the model cannot know
    by_model = (f"fixing it at {value} costs "
                + ("nothing measurable" if d.cost_upper <= _ROUNDING * abs(margin)
                   else f"at most {upper}") + " by the model")
    cheap = f"Keep tuning for now: {nothing}, and {by_model}"
    return {
        "matters": f"Keep tuning: {effect}, resolved{aside}.",
        "small": (f"Keep tuning: {effect}, small but resolved{aside}."
                  if d.grounds != "cost" else
                  f"Keep tuning: it explains only {share}, but fixing it at {value} costs "
                  f"{cost} on average and at least {fmt_cost(d.cost_lower, margin)} "
                  f"({1 - confidence:.0%} quantile), more than the {allowed} allowed."),
        "unresolved": (f"Keep tuning: {effect}, but the model does not yet rank trials "
                       "it was not fit on better than chance, so no effect is shown"
                       f"{aside}; more trials will tell."
                       if unshown[d.grounds is None and d.evidence == f"{name} among the best"] else
                       f"Keep tuning: {effect}, but its {100 * INTERVAL_LEVEL:g} % interval "
                       f"does not yet tell it from a shuffled parameter{aside}; more trials "
                       "will tell."),
        "no_data": (f"Keep tuning: every one of the {d.n_active} trials that have it ran it "
                    f"at {value}, so they say nothing of its effect; vary it to measure it."
                    if d.grounds == UNVARIED else
                    f"Keep tuning: it was active in only {d.n_active} of "
                    f"{n_trials} trials, too few to judge (at least "
                    f"{MIN_ACTIVE_TRIALS} are needed)."),
        "not_yet_safe": (f"Keep tuning for now: all {n_trials} trials have the same value, so "
                         "no effect of it is distinguishable from nothing, but no margin can be "
                         "set for what fixing it may cost (the study shows no gain left near "
                         "its best to weigh a cost against); more varied trials will tell."
                         if d.grounds == CONSTANT else
                         f"Keep tuning for now: {nothing}, and fixing it at {value} costs at "
                         f"most {upper} by the model, but there a forbidden clause rules out "
                         f"values of {', '.join(d.linked)}, a cost the model does not see "
                         "(it integrates over forbidden combinations)."
                         if d.grounds == FORBIDDEN else
                         f"{cheap}, but no trial tried "
                         f"{_listed(d.untried)}: the model knows only the "
                         "choices the trials took, and one never tried may be the best; try "
                         "them (enqueue a trial with each) before fixing it."
                         if d.grounds == UNTRIED else
                         f"{cheap}, but no trial ran it there: they ran it from "
                         f"{fmt_value(d.tried[0])} to {fmt_value(d.tried[1])}, and beyond "
                         "them the model's cost is a guess (trials may even fail there); "
                         "fix it within that range, or run a trial at that value first."
                         if d.grounds == OUTSIDE else
                         f"Keep tuning for now: {hidden}" if d.grounds == "size" else
                         f"Keep tuning for now: {nothing} in the importances, which follow "
                         "a fit to the ranks of the objective (a few extreme trials cannot "
                         "sway it), but the fit to the objective's values finds an effect "
                         f"(a length scale under {1 / DISPUTED_RATIO:g} of the one kept); "
                         "a small effect that is costly near the best looks like this, so it "
                         "is not fixed while the two disagree; more trials will tell."
                         if d.grounds == "disputed" else
                         f"Keep tuning for now: {nothing} in the importances, but the model's "
                         "errors on trials left out of its fit change with it (adjusted p = "
                         f"{fmt_cost(d.residual_p, MISSED_ALPHA)}, below {MISSED_ALPHA:g}"
                         + (f"; {_sd_phrase(d, margin)}): " if math.isfinite(margin) else "): ") +
                         "it has an effect the model does not capture, and such an effect "
                         "can be costly near the best; more trials will tell."
                         if d.grounds == "missed" else
                         f"Keep tuning for now: it explains {share}, no more than a shuffled "
                         "parameter, but these trials could hide an effect of it that holds "
                         f"up to {fmt_share(d.hidden_share)} of the "
                         f"variation, and from {fmt_share(MATTERS_SHARE)} an effect matters: "
                         "they leave part of its range unexplored, or their noise is too "
                         "large to show one; more trials will tell."
                         if d.grounds == "hidden" else
                         f"Keep tuning for now: {nothing}, and fixing it at {value} costs at "
                         f"most {upper} by the model, but an effect the noise in these trials "
                         f"hides could cost up to {fmt_cost(d.hidden_cost, margin)}, more than "
                         f"the {allowed} allowed; more trials will tell."
                         if d.grounds == "noise" else
                         f"Keep tuning for now: {nothing}, but "
                         + (f"fixing it at {value} could cost up to {upper} "
                            f"({confidence:.0%} quantile), more than the "
                            f"{allowed} allowed; more trials will tell."
                            if math.isfinite(d.cost_upper) and not d.cost_upper <= margin else
                            f"{n_trials} trials of {n_params} parameters are too few to rule "
                            "out a small effect that is costly near the best (at least "
                            f"{min_trials_to_fix(n_params)}, "
                            f"{min_trials_rule()}, are needed)."
                            if math.isfinite(d.cost_upper) else
                            "the cost of fixing it was not estimated (it needs at least "
                            f"{MIN_TRIALS_FOR_COST} trials).")),
        "released": (f"Keep tuning: {nothing}, and {by_model}, but it was released after "
                     f"trial {d.released_after}, "
                     "and a released parameter is not fixed again, so that a decision "
                     "cannot go back and forth on noise; fix it by hand (restrict) to stop "
                     "tuning it."),
        "kept": (f"Keep tuning: it shows no effect, but at least one parameter stays "
                 f"tuned and this one explains the most ({share})."),
        "fix": (f"You can stop tuning it: {nothing}, it explains {share}, and fixing it at {value} costs "
                + ("nothing measurable" if d.cost_upper <= _ROUNDING * abs(margin)
                   else f"at most {upper}")
                + f" ({confidence:.0%} quantile; {allowed} allowed)."),
        "fixed": (f"Fixed at {value}: the search space gives it no other value, so there is "
                  "nothing to tune." if d.grounds == SINGLE else
                  f"Fixed at {value}{since}; nothing found since says otherwise ({share})."
                  if not (math.isfinite(d.cost) and math.isfinite(margin)) else
                  # the rule that keeps it, in its numbers: its upper quantile, which an
                  # unfixed parameter is judged by, may lie above the margin, and the
                  # sentence read as if that had been checked
                  f"Fixed at {value}{since}; nothing found since says otherwise: none of its "
                  f"effects is resolved, and fixing it costs {cost} on average, within the "
                  f"{allowed} allowed, so it stays fixed ({share})."),
        "release": (f"Fixed at {value}{since}, but "
                    + (f"trial {d.explored_trial}, which moved it and the other fixed "
                       f"parameters over their ranges, did {fmt_cost(d.explored_gain)} better "
                       "than the model predicts from every other trial, more than the "
                       f"{allowed} allowed plus {EXPLORED_Z:g} times that prediction's "
                       f"standard deviation ({fmt_cost(d.explored_sd)}) and by more of them "
                       "than any trial that did not explore; one trial cannot tell which "
                       "parameter it moved made the gain, so each is released"
                       if d.grounds == EXPLORED else
                       f"{effect}, resolved" if d.grounds != "cost" else
                       f"fixing it costs {cost} on average, more than the {allowed} allowed")
                    + ": release the restriction to tune it again."),
    }[d.state]
