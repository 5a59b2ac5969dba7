"""What can be fixed in a study of several objectives: only what is safe for every one.

A parameter is fixed at one value for all objectives at once, so the single-objective
rule (:mod:`hpinsight._decisions`) is applied to each objective and the answers are
combined, never averaged:

* a parameter is **safe to fix** only when it is safe to fix for every objective, at one
  common value, its cost estimated for each objective against that objective's own
  margin (objectives have their own units, so no cost is added across them);
* otherwise it takes the decision of the objective that needs it most: the first of the
  states of :data:`~hpinsight._decision_result.STATES` (matters before small but real
  before not resolved yet ...), and its sentence says for which objective; a parameter
  held fixed is released when any objective releases it.

The common value is the given or declared default, else the parameter's value in the
**compromise trial**: among the trials on the Pareto front, the one with the best mean
rank over the objectives. Fixing at a front trial's values keeps that Pareto-optimal
configuration inside the restricted space (as fixing at the best trial's values does for
one objective); choosing the compromise rather than one objective's best keeps the
restriction from favouring one end of the front. A parameter inactive in that trial
takes the value the first objective's analysis chooses (where its model predicts the
best).

Reaching the front (:mod:`hpinsight._pareto`) is not one of the objectives here: its
analysis does not see a parameter that moves trials along the front, so it cannot show
that fixing one is safe.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import rankdata

from ._decision_result import STATES, DecisionResult, ParameterDecision, fmt_cost
from ._fanova_result import NEGLIGIBLE_SHARE, VERDICTS
from ._history import TrialHistory
from ._pareto import FRONT_VALUE_NAME, dominated_share
from ._shared import fmt_value
from .exceptions import InvalidDataError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["common_trial_ids", "compromise_trial", "decide_jointly", "front_history"]


def common_trial_ids(histories: Mapping[str, TrialHistory]) -> tuple[int, ...]:
    """The trials every objective's history holds, in the first history's order."""
    first, *rest = histories.values()
    shared = set(first.trial_ids)
    for h in rest:
        shared &= set(h.trial_ids)
    return tuple(t for t in first.trial_ids if t in shared)


def compromise_trial(histories: Mapping[str, TrialHistory]) -> int:
    """The trial id of the compromise trial: on the Pareto front of the trials every
    history holds, the one with the best mean rank over the objectives (ties: the first).

    Parameters
    ----------
    histories : mapping of str to TrialHistory
        One history per objective, of the same trials (as ``from_optuna(study,
        objective=i)`` gives them).

    Returns
    -------
    int
    """
    ids, values = _aligned(histories)
    if not ids:
        raise InvalidDataError("The objectives' histories share no trial: a multi-objective "
                               "analysis needs trials with a finite value in every objective.")
    front = dominated_share(values, ["minimize"] * values.shape[1]) == 0.0
    # tied values share their mean rank (ordinal ranks by position made the compromise,
    # and the values decisions fix at, depend on the order of the trials)
    ranks = rankdata(values, axis=0)
    score = np.where(front, ranks.mean(axis=1), np.inf)
    tied = np.flatnonzero(score == score.min())
    return int(min(ids[i] for i in tied))


def _aligned(histories: Mapping[str, TrialHistory]) -> tuple[tuple[int, ...], NDArray[np.float64]]:
    """The trials every history holds (:func:`common_trial_ids`) and their values, one
    column per objective, signed so that lower is better."""
    ids = common_trial_ids(histories)
    columns = []
    for h in histories.values():
        where = {t: i for i, t in enumerate(h.trial_ids)}
        y = h.y[[where[t] for t in ids]]
        columns.append(y if h.direction == "minimize" else -y)
    return ids, np.column_stack(columns)


def decide_jointly(decisions: Mapping[str, DecisionResult]) -> DecisionResult:
    """One decision per parameter from each objective's decisions (the rules: this
    module's docstring).

    Parameters
    ----------
    decisions : mapping of str to DecisionResult
        Each objective's decisions, keyed by the objective's name, for the same
        parameters; a parameter's value to fix must be the same in each (the common
        value).

    Returns
    -------
    DecisionResult
        With ``objectives`` holding the decisions it combined, and each decision's
        ``objective`` naming the objective it rests on.
    """
    by_objective = dict(decisions)
    first = next(iter(by_objective.values()))
    names = list(first.decisions)
    for label, result in by_objective.items():
        if set(result.decisions) != set(names):
            raise InvalidDataError(
                f"The decisions of objective {label!r} are for {sorted(result.decisions)}, "
                f"not for the parameters {sorted(names)} of the others; decide each objective "
                "on the same parameters.")
    rank = {state: i for i, state in enumerate(STATES)}
    out: dict[str, ParameterDecision] = {}
    for name in names:
        each = {label: result[name] for label, result in by_objective.items()}
        states = {d.state for d in each.values()}
        values = [d.value for d in each.values()]
        same_value = all(_same(v, values[0]) for v in values[1:])
        if states == {"fix"} and same_value:
            # the objective whose cost comes closest to its margin
            label = max(each, key=lambda o: _used(each[o], by_objective[o].margin))
            out[name] = replace(each[label], objective=label, sentence=_fix_sentence(
                each, by_objective))
            continue
        if states <= {"fix", "fixed"} and "fixed" in states:
            label = next(o for o, d in each.items() if d.state == "fixed")
        elif "release" in states:
            label = next(o for o, d in each.items() if d.state == "release")
        elif states == {"fix"}:  # safe for each, but at different values: not jointly
            label = next(iter(each))
            d = each[label]
            out[name] = replace(d, state="not_yet_safe", objective=label, sentence=(
                "Keep tuning for now: it is safe to fix for each objective alone, but not "
                "at one common value (" + "; ".join(
                    f"{o} at {fmt_value(x.value, quote=True)}" for o, x in each.items())
                + ")."))
            continue
        else:
            label = min((o for o, d in each.items() if d.tuned),
                        key=lambda o: (rank[each[o].state], -_finite(each[o].evidence_share)))
        d = each[label]
        out[name] = replace(d, objective=label, sentence=_for_objective(d, label, each))
    order = sorted(names, key=lambda n: -max(_finite(r[n].share) for r in by_objective.values()))
    return DecisionResult(
        decisions={n: out[n] for n in order},
        n_trials=min(r.n_trials for r in by_objective.values()),
        margin=math.nan, confidence=first.confidence, shadow=None,
        matters_share=first.matters_share, min_active=first.min_active,
        top_quantile=first.top_quantile, objectives=by_objective,
        # a range one objective's trials show a gain outside of is widened for all
        widen={n: e for r in reversed(by_objective.values()) for n, e in r.widen.items()})


def _finite(x: float) -> float:
    return x if math.isfinite(x) else 0.0


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b) and type(a) is type(b)


def _used(d: ParameterDecision, margin: float) -> float:
    """How much of its margin fixing uses (its cost's quantile over the margin)."""
    if not (math.isfinite(d.cost_upper) and math.isfinite(margin)) or margin <= 0:
        return 0.0
    return d.cost_upper / margin


def _fix_sentence(each: Mapping[str, ParameterDecision],
                  by_objective: Mapping[str, DecisionResult]) -> str:
    """The sentence of a parameter safe to fix for every objective: each cost in its
    objective's units, against that objective's margin."""
    d = next(iter(each.values()))
    costs = " and ".join(
        ("nothing measurable" if x.cost_upper <= 0 else
         f"at most {fmt_cost(x.cost_upper, by_objective[label].margin)}") + f" in {label}"
        for label, x in each.items())
    allowed = " and ".join(fmt_cost(by_objective[label].margin) for label in each)
    confidence = next(iter(by_objective.values())).confidence
    # an objective where its effect is only too small to matter, or shown below the floor
    # of a share ("negligible"), is not called "nothing"
    nothing = "no effect is distinguishable from nothing" + (
        " or large enough to matter" if any(x.negligible for x in each.values()) else "") + (
        f" or above {100 * NEGLIGIBLE_SHARE:g} % of the variance"
        if any(x.verdict == VERDICTS[3] for x in each.values()) else "")
    return (f"You can stop tuning it: {nothing} in any "
            f"objective, and fixing it at {fmt_value(d.value, quote=True)} costs {costs} "
            f"({confidence:.0%} quantile; {allowed} allowed).")


def _for_objective(d: ParameterDecision, label: str,
                   each: Mapping[str, ParameterDecision]) -> str:
    """``d``'s sentence, saying it holds for objective ``label``, and what the other
    objectives alone would do."""
    head, sep, rest = d.sentence.partition(": ")
    sentence = f"{head}: for {label}, {rest}" if sep else f"{d.sentence} (for {label})"
    others = [f"{o}: {x.action}" for o, x in each.items() if o != label]
    if others:
        sentence += " Each other objective alone: " + "; ".join(others) + "."
    return sentence


def front_history(histories: Mapping[str, TrialHistory]) -> TrialHistory:
    """Reaching the Pareto front of the objectives' histories as one history: on the
    trials every history holds, each trial's share of them that dominate it."""
    ids, values = _aligned(histories)
    first = next(iter(histories.values()))
    where = {t: i for i, t in enumerate(first.trial_ids)}
    shares = dominated_share(values, ["minimize"] * values.shape[1])
    excluded = dict(first.excluded)
    dropped = first.n_trials - len(ids)
    if dropped:
        excluded["not finite in every objective"] = dropped
    return TrialHistory(first.space, tuple(first.configs[where[t]] for t in ids), shares,
                        direction="minimize", trial_ids=ids, excluded=excluded,
                        objective_name=FRONT_VALUE_NAME, sampling=first.sampling)
