"""Shrink a SMAC run to its important parameters and continue on the subspace.

Hutter et al. (2014) close with configuration procedures that "determine important
hyperparameters on the fly and exploit this information". This module does it for
SMAC in two steps:

* :func:`reduce_configspace` turns the parameters to fix into ConfigSpace
  ``Constant`` s (so the target function still receives every parameter) and
  simplifies conditions and forbidden clauses by evaluating the parts that now
  have a known value: a condition that a fixed parent always satisfies is
  replaced by the parent's own condition, one it never satisfies removes the
  child (it can never be active), and forbidden clauses that can no longer match
  are dropped. A forbidden clause the fixed values always match is an error.
* :func:`shrink_and_continue` builds a new facade of the same kind on the reduced
  space, in a new output folder beside the old run (which is never modified),
  with the same seed. It tells the new run only what was measured: an old run is
  told, with its own cost, when it already lies in the subspace (its values of the
  fixed parameters are the fixed values). Projecting any other run onto the subspace
  gives a configuration nobody evaluated, whose cost is unknown: telling it the old
  cost would hand SMAC an incumbent that may never be beaten. Instead the best
  ``reevaluate`` projections (the old incumbent's first) become the new run's
  initial design, so SMAC evaluates them for real; the other projections are left
  out. (On the benchmark in ``benchmarks/bench_smac_shrink.py``, re-evaluating ten
  beat re-evaluating one: its model then has data in the subspace.) Told runs count towards SMAC's ``n_trials``, so the new scenario's
  ``n_trials`` is the number of told runs plus the ``n_trials`` asked for; the
  re-evaluations are part of the ``n_trials`` asked for.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import ConfigSpace as CS

from .._validation import check_int, check_mapping, check_real
from .._warn import warn
from ..adapters._smac import listed_objectives
from ..exceptions import (
    HPInsightWarning,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidSpaceError,
)

if TYPE_CHECKING:
    from .._subspace import SubspaceResult

__all__ = ["ContinuedRun", "reduce_configspace", "shrink_and_continue"]

_FUNC = "reduce_configspace"
_COMPARE = {
    "EQ": lambda v, c: v == c, "NEQ": lambda v, c: v != c,
    "GT": lambda v, c: v > c, "LT": lambda v, c: v < c,
}
# the serialized clause types of ConfigSpace 1.x (CLAUSE_*, RELATION_LE/GE), and the
# spellings of earlier releases beside them
_FORBID = {
    "EQUALS": lambda v, c: v == c,
    "CLAUSE_GT": lambda v, c: v > c, "CLAUSE_GE": lambda v, c: v >= c,
    "CLAUSE_LT": lambda v, c: v < c, "CLAUSE_LE": lambda v, c: v <= c,
    "GREATER": lambda v, c: v > c, "GREATEREQUAL": lambda v, c: v >= c,
    "LESS": lambda v, c: v < c, "LESSEQUAL": lambda v, c: v <= c,
}
_RELATION = {
    "RELATION_EQ": lambda a, b: a == b, "RELATION_LT": lambda a, b: a < b,
    "RELATION_GT": lambda a, b: a > b, "RELATION_LE": lambda a, b: a <= b,
    "RELATION_GE": lambda a, b: a >= b, "RELATION_LTE": lambda a, b: a <= b,
    "RELATION_GTE": lambda a, b: a >= b,
}


def reduce_configspace(configspace: Any, fixed: Mapping[str, Any]) -> Any:
    """A copy of ``configspace`` with the ``fixed`` parameters held constant.

    Parameters
    ----------
    configspace : ConfigSpace.ConfigurationSpace
        Left unchanged.
    fixed : mapping of str to value
        Parameter name to the value it keeps (a legal value of the parameter).

    Returns
    -------
    ConfigSpace.ConfigurationSpace
        Fixed parameters are ``Constant`` s; parameters that the fixed values
        make inactive everywhere are removed; conditions and forbidden clauses
        are simplified (see the module notes).

    Raises
    ------
    InvalidSpaceError
        An unknown name, an illegal value, or fixed values that a forbidden
        clause always forbids.

    Examples
    --------
    >>> import ConfigSpace as CS
    >>> from hpinsight.integrations.smac import reduce_configspace
    >>> cs = CS.ConfigurationSpace({"lr": (1e-4, 1.0), "optimizer": ["adam", "sgd"]}, seed=0)
    >>> reduced = reduce_configspace(cs, {"optimizer": "adam"})
    >>> type(reduced["optimizer"]).__name__, reduced["optimizer"].value
    ('Constant', 'adam')
    """
    names = list(configspace.keys())
    for name, value in fixed.items():
        if name not in names:
            raise InvalidSpaceError(
                f"The 'fixed' parameter of {_FUNC} names {name!r}, which is not in the "
                f"configuration space (it has {names})."
            )
        if not configspace[name].legal_value(value):
            raise InvalidSpaceError(
                f"The 'fixed' parameter of {_FUNC} gives {name!r} the value {value!r}, which is "
                f"not a legal value of {configspace[name]}."
            )
    data = configspace.to_serialized_dict()
    order = _orders(data)
    values = {k: _own_value(configspace[k], _plain(v)) for k, v in fixed.items()}
    conditions = {c["child"]: c for c in data["conditions"]}
    memo: dict[str, Any] = {}

    def reduced_condition(child: str) -> Any:
        """True (always active), False (never), or the condition that remains."""
        if child not in memo:
            memo[child] = True if child not in conditions else _cond(conditions[child])
        return memo[child]

    def _cond(node: Mapping[str, Any]) -> Any:
        kind = node["type"]
        if kind in ("AND", "OR"):
            return _fold(node, "conditions", [_cond(c) for c in node["conditions"]])
        parent = node["parent"]
        parent_state = reduced_condition(parent)
        if parent_state is False:
            return False
        if parent not in values:
            return dict(node)
        value = values[parent]
        holds = value in node["values"] if kind == "IN" else _COMPARE[kind](
            *_ranked(order, parent, value, node["value"]))
        # a fixed parent that satisfies the condition: the child is active where the parent is
        return _inherit(parent_state, node["child"]) if holds else False

    removed = {n for n in names if reduced_condition(n) is False}
    hps = []
    for h in data["hyperparameters"]:
        if h["name"] in removed:
            continue
        if h["name"] in values:
            hps.append({"type": "constant", "name": h["name"], "value": values[h["name"]],
                        "meta": h.get("meta")})
        else:
            hps.append(h)
    kept_conditions = [c for n in names if n not in removed
                       for c in [reduced_condition(n)] if not isinstance(c, bool)]
    forbiddens = []
    given = list(configspace.forbidden_clauses)  # as the user wrote them, for messages
    # fixed parameters that stay conditional: a clause on one fires only where it is active
    conditional = {n for n in values if n not in removed and reduced_condition(n) is not True}
    for k, clause in enumerate(data["forbiddens"]):
        state = _forbid(clause, values, removed, order, conditional)
        if state is True:
            raise InvalidSpaceError(
                f"{_FUNC}: the fixed values {dict(fixed)} are always forbidden by the clause "
                f"{given[k] if len(given) == len(data['forbiddens']) else clause}; fix those "
                "parameters to other values."
            )
        if state is not False:
            forbiddens.append(state)
    out = {**data, "hyperparameters": hps, "conditions": kept_conditions, "forbiddens": forbiddens}
    return CS.ConfigurationSpace.from_serialized_dict(_legal_defaults(out, fixed))


#: Configurations of the reduced space drawn to find legal defaults (:func:`_legal_defaults`).
DEFAULT_SEARCH = 1000


def _legal_defaults(data: dict[str, Any], fixed: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (a serialized space) with defaults no forbidden clause matches.

    A free parameter's default can become forbidden once others are fixed (``opt`` at
    its default ``"rms"`` with ``act`` fixed at ``"tanh"``, where ``rms`` and ``tanh``
    together are forbidden), and ConfigSpace refuses a space whose default
    configuration is forbidden. Such a space gets the defaults of a legal configuration
    of the free parameters: among ``DEFAULT_SEARCH`` configurations drawn from it
    (seeded, without the forbidden clauses), the first that no clause forbids once only
    the parameters of the clauses the defaults break take its values (the others keep
    their defaults, children their conditions make active theirs), else the first that
    no clause forbids as drawn (a clause a change breaks in turn, a child the change
    makes active)."""
    if not data["forbiddens"]:
        return data
    from ConfigSpace.util import deactivate_inactive_hyperparameters

    free = _without_forbidden(data)

    order = _orders(data)

    def forbidden(values: Mapping[str, Any]) -> bool:
        return any(_forbid(c, values, set(), order) is True for c in data["forbiddens"])

    default = dict(free.get_default_configuration())
    if not forbidden(default):
        return data
    named = {n for c in data["forbiddens"] if _forbid(c, default, set(), order) is True
             for n in _clause_names(c)} - set(fixed)
    free.seed(0)
    drawn = [dict(c) for c in free.sample_configuration(DEFAULT_SEARCH)]

    def few_changed(c: Mapping[str, Any]) -> dict[str, Any]:
        values = {**default, **{n: v for n, v in c.items() if n in named}}
        for n, h in free.items():  # a child the change makes active starts at its default
            values.setdefault(n, h.default_value)
        return dict(deactivate_inactive_hyperparameters(values, free))

    legal = next((c for c in map(few_changed, drawn) if not forbidden(c)), None)
    if legal is None:
        legal = next((c for c in drawn if not forbidden(c)), None)
    if legal is None:
        raise InvalidSpaceError(
            f"{_FUNC}: with {dict(fixed)} fixed, none of {DEFAULT_SEARCH} configurations of the "
            "parameters left free escapes the forbidden clauses; fix those parameters to other "
            "values.")
    hps = [{**h, "default_value": legal[h["name"]]}
           if h["name"] in legal and "default_value" in h and h["name"] not in fixed else h
           for h in data["hyperparameters"]]
    return {**data, "hyperparameters": hps}


#: Old configurations projected and evaluated again by default (see ``reevaluate``).
AUTO_REEVALUATE = 10


@dataclass(frozen=True, slots=True)
class ContinuedRun:
    """A SMAC run continued on a subspace (see :func:`shrink_and_continue`).

    Attributes
    ----------
    facade : SMAC facade
        The new facade; call ``facade.optimize()`` to continue.
    fixed : mapping of str to value
        The parameters held constant, and their values.
    kept : tuple of str
        The parameters still searched.
    n_told : int
        Old runs told to the new facade with their own cost: they already lay in
        the subspace.
    reevaluated : tuple of Configuration
        Projections of the best other old configurations, queued as the new run's
        first evaluations (the old incumbent's first).
    n_left_out : int
        Old runs outside the subspace whose projection was not re-evaluated.
    n_skipped : int
        Old runs left out: not successful, or forbidden in the subspace.
    output_directory : pathlib.Path
        Where the new run writes its files.
    subspace : SubspaceResult or None
        With ``keep="auto"``: the suggestion the choice came from, with its reasons.
    """

    facade: Any
    fixed: Mapping[str, Any]
    kept: tuple[str, ...]
    n_told: int
    reevaluated: tuple[Any, ...]
    n_left_out: int
    n_skipped: int
    output_directory: Path
    subspace: SubspaceResult | None = None

    def __repr__(self) -> str:
        return (f"ContinuedRun(kept={list(self.kept)}, fixed={dict(self.fixed)}, "
                f"n_told={self.n_told}, n_reevaluated={len(self.reevaluated)}, "
                f"n_left_out={self.n_left_out}, n_skipped={self.n_skipped})")


def shrink_and_continue(
    facade: Any,
    target_function: Any,
    *,
    n_trials: int,
    keep: int | Literal["auto"] | None = None,
    fixed: Mapping[str, Any] | None = None,
    importances: Sequence[str] | None = None,
    name: str | None = None,
    callbacks: Sequence[Any] = (),
    seed: int = 0,
    overwrite: bool = False,
    reevaluate: int | Literal["auto"] = "auto",
    risk_margin: float | None = None,
    components: Callable[[Any], Mapping[str, Any]] | None = None,
    budget: float | None = None,
) -> ContinuedRun:
    """Continue a SMAC run on the subspace of its most important parameters.

    Parameters
    ----------
    facade : SMAC facade
        The run so far (finished, or stopped by a callback).
    target_function : callable
        The function SMAC evaluates (facades do not expose it).
    n_trials : int
        New evaluations for the continued run.
    keep : int or "auto", optional
        Keep this many parameters, the most important first; fix the others
        to the incumbent's value (to the parameter's default where the
        incumbent has it inactive). ``"auto"``: fix exactly the parameters
        :func:`hpinsight.suggest_subspace` finds unimportant among good
        configurations and safely cheap to fix, at the configuration space's
        default values (SMAC spaces always declare one); nothing is fixed when
        none qualifies (the run simply continues).
    fixed : mapping of str to value, optional
        Fix exactly these instead of ``keep``.
    importances : sequence of str, optional
        Parameter names, most important first (e.g.
        ``[i.params[0] for i in cb.latest.ranking(order=1)]``); a name given again counts
        at its first place; it must rank at least ``keep`` parameters. Default: a fresh
        ``hpinsight.fanova`` of the run with ``seed``.
    name : str, optional
        Name of the new run (default: the old name + ``"-shrunk"``).
    callbacks : sequence of smac.Callback
        Callbacks of the new facade.
    seed : int, default=0
        Seed of the importance analysis (SMAC keeps the scenario's seed).
    overwrite : bool, default=False
        Replace a run already stored under the new run's name (by default that is an
        error: an earlier continued run is never lost silently).
    reevaluate : int or "auto", default="auto"
        How many of the best old configurations outside the subspace are projected
        onto it and evaluated again as the new run's first trials (the old
        incumbent's projection first; at most ``n_trials``). They give SMAC's model
        measured data in the subspace. ``"auto"``: 10, at most a quarter of
        ``n_trials`` (SMAC's own cap on an initial design) and at least 1. ``0``
        starts the new run from the told runs alone.
    risk_margin : float, optional
        With ``keep="auto"`` only (default 0.05): the most fixing a parameter may
        cost, as a fraction of the spread of the configurations near the best (best to
        the 10 % quantile; ``suggest_subspace``'s ``risk_margin``). The rules are those of
        :func:`hpinsight.suggest_subspace` and the Optuna callback, costed at the
        declared defaults a SMAC space always has: a default that is costly to fix at
        keeps its parameter tuned. Unlike the Optuna callback, the continued run is
        decided once: its smaller configuration space has no exploring trials to release
        a parameter on. Nor does it narrow the parameters that matter (the callback's
        ``narrow_quantile``): the continued run is told only the old runs inside its
        space, and a range around the best quarter would leave most of them out.
    components : callable, optional
        Called with the continued run's scenario; returns keyword arguments for the new
        facade, for components SMAC builds for a scenario (``lambda s: {"intensifier":
        HPO.get_intensifier(s, max_config_calls=1)}``). Without it the new facade has
        its kind's defaults, and a component of the first run that differs from them
        (another intensifier, a ParEGO aggregation) is named in a warning.
    budget : float, optional
        Of a multi-fidelity run, decide on the runs at this budget alone (see
        :func:`hpinsight.adapters.from_smac`); by default each configuration counts at
        its highest budget, and where those differ the values mix budgets.

    Notes
    -----
    SMAC's logging is left as the first facade set it up (the new facade is made with
    ``logging_level=False``). ``keep`` needs a run of one objective (it ranks parameters
    and reads the incumbent); for a run of several, pass ``fixed``.

    Returns
    -------
    ContinuedRun
    """
    if (keep is None) == (fixed is None):
        raise InvalidArgumentError("shrink_and_continue needs exactly one of 'keep' (a number of "
                         "parameters to keep) and 'fixed' (the values to fix).")
    if keep is not None and keep != "auto" and (
            isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
        raise InvalidArgumentError(f"The 'keep' parameter of shrink_and_continue must be a positive int "
                         f"or 'auto'. Got {keep!r} instead.")
    if not isinstance(overwrite, bool):
        raise InvalidArgumentTypeError(f"The 'overwrite' parameter of shrink_and_continue must be a bool. "
                        f"Got {overwrite!r} instead.")
    n_trials = check_int(n_trials, "n_trials", "shrink_and_continue", minimum=1)
    assert n_trials is not None
    if reevaluate == "auto":
        reevaluate = max(1, min(AUTO_REEVALUATE, n_trials // 4))
    if isinstance(reevaluate, bool) or not isinstance(reevaluate, int) or reevaluate < 0:
        raise InvalidArgumentError(f"The 'reevaluate' parameter of shrink_and_continue must be an int "
                         f">= 0 or 'auto'. Got {reevaluate!r} instead.")
    if fixed is not None:
        check_mapping(fixed, "fixed", "shrink_and_continue",
                      of="parameter names to the values to hold", example="{'lr': 0.01}")
    if keep == "auto" and importances is not None:
        raise InvalidArgumentError("shrink_and_continue: keep='auto' decides from its own analysis; "
                         "'importances' only orders parameters for keep=<int>. Pass one.")
    # an argument the chosen way of fixing never reads was accepted and silently unused
    unused = {
        "importances": (fixed is not None and importances is not None,
                        "it orders parameters for keep=<int>, and fixed= names the values "
                        "to hold"),
        "budget": (budget is not None and (fixed is not None or importances is not None),
                   "it chooses the runs an analysis reads (keep='auto', or keep=<int> "
                   "without importances=), and none is run"),
        "risk_margin": (risk_margin is not None and keep != "auto",
                        "it is the tolerance of keep='auto'"),
    }
    for argument, (given, why) in unused.items():
        if given:
            raise InvalidArgumentError(
                f"shrink_and_continue: '{argument}' is given but would go unused: {why}. "
                f"Leave it out, or choose the parameters to fix the way that uses it.")
    scenario = facade.scenario
    objectives = listed_objectives(scenario.objectives) or []
    if keep is not None and len(objectives) > 1:
        raise InvalidArgumentError(
            f"shrink_and_continue: this run has {len(objectives)} objectives ({objectives}); "
            + ("keep='auto' decides from one objective's analysis, and a parameter safe to "
               "fix for one can be needed by another. " if keep == "auto" else
               "keep= ranks parameters by one objective's importance and fixes them at the "
               "incumbent's values, which a run of several objectives does not have. ")
            + "Pass fixed={...} with the values to hold; `hpinsight report --smac-run "
            "RUN_FOLDER` (or, in Python, hp.report({name: hp.adapters.from_smac(run_folder, "
            "objective=name) for name in the objectives})) decides what is safe to fix for "
            "every objective.")
    if components is not None and not callable(components):
        raise InvalidArgumentTypeError(
            "The 'components' parameter of shrink_and_continue must be a callable taking "
            f"the new scenario. Got {type(components).__name__} instead.")
    risk_margin = check_real(0.05 if risk_margin is None else risk_margin, "risk_margin",
                             "shrink_and_continue", low=0.0, high=math.inf)
    fixed, subspace = _chosen_fixed(facade, keep, fixed, importances, seed, risk_margin, budget)
    try:
        reduced = reduce_configspace(scenario.configspace, fixed)
    except InvalidSpaceError as exc:  # named as the function the user called
        raise InvalidSpaceError(str(exc).replace(_FUNC, "shrink_and_continue")) from None
    # parameters the fixed values make inactive everywhere leave the space: neither tuned
    # nor held, said (keep=2 kept one parameter, and the other was in neither list)
    gone = [n for n in scenario.configspace if n not in reduced]
    if gone:
        lost = [n for n in gone if n not in fixed]
        held = ", ".join(f"{k}={v!r}" for k, v in fixed.items() if k in reduced)
        tuned = sum(not isinstance(reduced[n], CS.Constant) for n in reduced)
        warn(f"shrink_and_continue: with {held} held, {', '.join(gone)} can never be "
             f"active, so the continued run leaves {'it' if len(gone) == 1 else 'them'} out"
             + (f"; {', '.join(lost)} will not be tuned"
                + (f" (keep={keep} keeps {tuned})" if isinstance(keep, int) else "")
                + ". To tune it, leave free the parameters its condition reads, or hold "
                "them at values that activate it." if lost else "; it is not held.")
             , HPInsightWarning, stacklevel=2)
        fixed = {k: v for k, v in fixed.items() if k in reduced}
    if all(isinstance(reduced[n], CS.Constant) for n in reduced):
        # SMAC fails on such a space with an empty ConfigurationSpaceExhaustedException
        raise InvalidArgumentError(
            "shrink_and_continue: every parameter would be fixed ("
            + ", ".join(f"{k}={v!r}" for k, v in fixed.items()) + "), so nothing is left to "
            "search. " + ("No parameter shows an effect worth tuning: stop here, or keep some "
                          "with keep=<int>." if keep == "auto" else
                          "Keep at least one parameter free."))
    new_name = name or f"{scenario.name}-shrunk"
    base = Path(scenario.output_directory).parent.parent  # SMAC writes to base/name/seed
    new_scenario = dataclasses.replace(scenario, configspace=reduced, name=new_name,
                                       output_directory=base)
    run_dir = Path(new_scenario.output_directory)
    if run_dir.resolve() == Path(scenario.output_directory).resolve():
        # overwrite=True would replace the run being continued, which is never modified
        raise FileExistsError(
            f"shrink_and_continue: name={new_name!r} is the name of the run being continued, "
            f"stored at {run_dir}, which the continued run must not replace. Pass another "
            f"name (by default {scenario.name + '-shrunk'!r}).")
    if run_dir.is_dir() and any(run_dir.iterdir()) and not overwrite:
        raise FileExistsError(
            f"shrink_and_continue: a run named {new_name!r} is already stored at {run_dir}. "
            "Pass name='...' to continue under another name, or overwrite=True to replace it.")
    told, outside, n_skipped = _sorted_runs(facade, reduced, fixed)
    queued = _best_projections(facade, outside, {_key(c) for c, _, _ in told},
                               min(reevaluate, n_trials))
    new_scenario = dataclasses.replace(new_scenario, n_trials=len(told) + n_trials)
    new = _continued_facade(facade, new_scenario, target_function, callbacks, told, queued,
                            components)
    # what is searched: the fixed parameters are constants now, as are those an earlier
    # continuation (or the user's space) held
    kept = tuple(n for n in reduced if not isinstance(reduced[n], CS.Constant))
    queued_keys = {_key(q) for q in queued}
    n_left_out = sum(1 for _, c in outside if _key(c) not in queued_keys)
    return ContinuedRun(new, MappingProxyType(dict(fixed)), kept, len(told), tuple(queued),
                        n_left_out, n_skipped, Path(new_scenario.output_directory), subspace)


def _chosen_fixed(facade: Any, keep: Any, fixed: Mapping[str, Any] | None,
                  importances: Sequence[str] | None, seed: int,
                  risk_margin: float = 0.05, budget: float | None = None,
                  ) -> tuple[dict[str, Any], SubspaceResult | None]:
    """Step 1: the parameters to fix and their values (and, with ``keep="auto"``, the
    suggestion they came from)."""
    from ..adapters import from_smac

    cs = facade.scenario.configspace
    subspace = None
    if keep == "auto":
        from .._subspace import suggest_subspace

        subspace = suggest_subspace(from_smac(facade, budget=budget), seed=seed,
                                    risk_margin=risk_margin)
        fixed = subspace.fixed
    elif fixed is None and isinstance(keep, int):
        from .._fanova import fanova

        if importances is not None:
            unknown = [n for n in importances if n not in cs]
            if unknown:  # a misspelt name took a place of keep and let a real one be fixed
                raise InvalidArgumentError(
                    f"shrink_and_continue: 'importances' names {unknown}, not parameters of "
                    f"the run's configuration space ({list(cs)}).")
        # a name again after its first place (an interaction's partner, from a ranking
        # of every effect) is not a lower rank: it fixed the top parameters themselves
        ranked = list(dict.fromkeys(importances)) if importances is not None else [
            i.params[0] for i in fanova(from_smac(facade, budget=budget), seed=seed).ranking(order=1)]
        if importances is not None and len(ranked) < min(keep, len(cs)):
            # the places past the ranking went to the space's first parameters, in their
            # order, and the ones that mattered were fixed
            raise InvalidArgumentError(
                f"shrink_and_continue: 'importances' ranks {len(ranked)} parameter(s) "
                f"({ranked}), and keep={keep} needs at least {min(keep, len(cs))}. Rank at "
                "least as many (most important first), or leave importances out to rank by "
                "fANOVA.")
        order = ranked + [n for n in cs if n not in ranked]
        incumbent = facade.intensifier.get_incumbent()
        if incumbent is None:
            raise InvalidArgumentError(
                "shrink_and_continue: the run has no incumbent yet; run it longer.")
        values = dict(incumbent)
        fixed = {n: values.get(n, cs[n].default_value) for n in order[keep:]}
    assert fixed is not None  # one of the three branches above set it
    return {k: _own_value(cs[k], _plain(v)) if k in cs else _plain(v)
            for k, v in fixed.items()}, subspace


def _sorted_runs(facade: Any, reduced: Any, fixed: Mapping[str, Any],
                 ) -> tuple[list[tuple[Any, Any, Any]], list[tuple[Any, Any]], int]:
    """Step 2: the old runs that already lie in the subspace (configuration, run key,
    run value), the others with their projection, and how many were skipped (not
    successful, or forbidden in the subspace)."""
    from smac.runhistory.enumerations import StatusType

    told: list[tuple[Any, Any, Any]] = []
    outside: list[tuple[Any, Any]] = []
    n_skipped = 0
    free = _without_forbidden(reduced.to_serialized_dict())
    for key, value in list(facade.runhistory.items()):
        if value.status != StatusType.SUCCESS:
            n_skipped += 1
            continue
        old_config = facade.runhistory.get_config(key.config_id)
        config = _project(dict(old_config), reduced, fixed, free)
        if config is None:
            n_skipped += 1
        elif dict(config) == dict(old_config):  # it already lay in the subspace
            told.append((config, key, value))
        else:
            outside.append((old_config, config))
    return told, outside, n_skipped


def _continued_facade(facade: Any, scenario: Any, target_function: Any,
                      callbacks: Sequence[Any], told: list[tuple[Any, Any, Any]],
                      queued: list[Any],
                      components: Callable[[Any], Mapping[str, Any]] | None = None) -> Any:
    """Step 3: a facade of the same kind on the reduced scenario, the queued projections
    as its initial design, told the runs that already lay in the subspace."""
    from smac.runhistory import TrialInfo, TrialValue

    for config in queued:
        config.origin = "hpinsight: an old configuration projected onto the subspace, evaluated again"
    kind = type(facade)
    # the facades whose design is the default configuration (algorithm configuration,
    # random search, Hyperband) take no count of random configurations
    count = ({"n_configs": 0} if "n_configs" in inspect.signature(kind.get_initial_design).parameters
             else {})
    design = kind.get_initial_design(scenario, **count, additional_configs=list(queued))
    given = dict(components(scenario)) if components is not None else {}
    new = kind(scenario, target_function, **{"initial_design": design, **given},
               overwrite=True, logging_level=False)
    if components is None:
        _warn_about_defaults(facade, new)
    for config, key, value in told:
        config.origin = "hpinsight: evaluated before shrinking, already in the subspace"
        new.tell(TrialInfo(config=config, instance=key.instance, seed=key.seed, budget=key.budget),
                 TrialValue(cost=value.cost, time=value.time), save=False)
    new.optimizer.save()
    # the user's callbacks see the continued run's own trials only: told the old runs, an
    # ImportanceCallback(stop_after=5) stopped the run before its first trial
    for callback in callbacks:
        new.optimizer.register_callback(callback)
    return new


def _warn_about_defaults(old: Any, new: Any) -> None:
    """Warn where the continued facade's components (its kind's defaults) differ from the
    first run's: SMAC builds them for a scenario, so they cannot be carried over."""
    space_bound = {"types", "bounds"}  # a model's description of the configuration space
    # what SMAC changes as a run goes: its config selector adds the configurations a run
    # started with to its tries (continuing a continued run that had told runs warned
    # that max_new_config_tries was 30 where the default is 16)
    run_state = {"max_new_config_tries"}

    def settings(meta: Any, component: str = "") -> Any:
        # a model's nested parts (a Gaussian process's kernel) hold what it learned
        return ({k: v for k, v in meta.items() if k not in space_bound | run_state and k != "seed"
                 and not (component == "model" and isinstance(v, Mapping))}
                if isinstance(meta, Mapping) else meta)

    before, after = old.meta, dict(new.meta)
    was_model, now_model = before.get("model"), after.get("model")
    if isinstance(was_model, Mapping) and isinstance(now_model, Mapping) and \
            _same_feature_ratio(was_model.get("max_features"), now_model.get("max_features"),
                                len(list(old.scenario.configspace.values())),
                                len(list(new.scenario.configspace.values()))):
        # SMAC's forest stores a share of the space's parameters as a count: the smaller
        # space's count at the same share is no difference (one warned "max_features=6
        # instead of 7" of a run that had only defaults)
        after["model"] = {**now_model, "max_features": was_model.get("max_features")}
    changed = [k for k in before if k not in ("initial_design", "version", "facade", "runner")
               and settings(before.get(k), k) != settings(after.get(k), k)]
    if changed:
        def difference(k: str) -> str:
            was, now = settings(before.get(k), k), settings(after.get(k), k)
            if not (isinstance(was, Mapping) and isinstance(now, Mapping)) \
                    or was.get("name") != now.get("name"):
                def named(m: Any) -> str:
                    return str(m.get("name")) if isinstance(m, Mapping) else str(m)
                return f"{k} {named(now)} instead of {named(was)}"
            keys = [x for x in {**was, **now} if was.get(x) != now.get(x)]
            return f"{k} " + ", ".join(f"{x}={now.get(x)!r} instead of {was.get(x)!r}" for x in keys)

        listed = "; ".join(map(difference, changed))
        warn(
            f"shrink_and_continue: the continued run has {type(new).__name__}'s defaults where "
            f"the first run had its own ({listed}). Pass components=lambda scenario: "
            "{...} to build them for the continued run.", UserWarning, stacklevel=3)


def _same_feature_ratio(was: Any, now: Any, n_was: int, n_now: int) -> bool:
    """Whether SMAC's forest would store ``was`` features of ``n_was`` parameters and
    ``now`` of ``n_now`` at one share (it stores ``max(1, int(n * ratio))``, 0 for all)."""
    if not (isinstance(was, int) and isinstance(now, int)) or n_was < 1 or n_now < 1:
        return False
    if was == 0 or now == 0:
        return was == now

    def shares(count: int, n: int) -> tuple[float, float]:
        # the shares r in (0, 1] with max(1, int(n * r)) == count: [count / n, (count + 1) / n)
        return (0.0 if count == 1 else count / n), (count + 1) / n

    (low_was, high_was), (low_now, high_now) = shares(was, n_was), shares(now, n_now)
    return max(low_was, low_now) < min(high_was, high_now, 1.0 + 1e-12)


# ---------------------------------------------------------------------------- internals
def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _own_value(hp: Any, value: Any) -> Any:
    """A legal ``value`` of ``hp`` as the parameter's own value: ConfigSpace calls 3.0 a
    legal value of an integer parameter and 1 one of a choice of True and False, and
    held as given they reached the target as 3.0 (``range(layers)`` failed) and 1."""
    if isinstance(hp, CS.CategoricalHyperparameter | CS.OrdinalHyperparameter):
        choices = list(hp.choices if isinstance(hp, CS.CategoricalHyperparameter) else hp.sequence)
        same = [c for c in choices if c == value and type(c) is type(value)]
        return same[0] if same else next((c for c in choices if c == value), value)
    # numbers only, and an integer only where the value is one: 3.5 and "3" became 3 and
    # were held without a word, and 9.7, refused, was quoted as 9; as given, the legality
    # check refuses them in the user's own words
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if isinstance(hp, CS.UniformIntegerHyperparameter | CS.NormalIntegerHyperparameter |
                  CS.BetaIntegerHyperparameter):
        return int(value) if number and float(value).is_integer() else value
    if isinstance(hp, CS.UniformFloatHyperparameter | CS.NormalFloatHyperparameter |
                  CS.BetaFloatHyperparameter):
        return float(value) if number else value
    return value


def _inherit(state: Any, child: str) -> Any:
    """The condition ``state`` of a parent, restated for ``child``."""
    if isinstance(state, bool):
        return state
    out = {**state, "child": child}
    if "conditions" in out:
        out["conditions"] = [_inherit(c, child) for c in out["conditions"]]
    return out


def _fold(node: Mapping[str, Any], key: str, parts: list[Any]) -> Any:
    """An AND/OR conjunction whose parts are now True, False or what remains of them."""
    if node["type"] == "AND" and any(p is False for p in parts):
        return False
    if node["type"] == "OR" and any(p is True for p in parts):
        return True
    rest = [p for p in parts if not isinstance(p, bool)]
    if not rest:
        return node["type"] == "AND"  # every part true (AND), or every part false (OR)
    return rest[0] if len(rest) == 1 else {**node, key: rest}


def _orders(data: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Each ordinal parameter of a serialized space, with its sequence."""
    return {h["name"]: list(h["sequence"]) for h in data["hyperparameters"]
            if h.get("type") == "ordinal"}


def _ranked(order: Mapping[str, list[Any]], name: str, *values: Any) -> tuple[Any, ...]:
    """``values`` of parameter ``name`` as they compare: an ordinal's by their place in
    its sequence (as ConfigSpace compares them: "large" > "small" where the sequence is
    small, medium, large, though not as text), any other's as they are."""
    if name not in order:
        return values
    sequence = order[name]
    return tuple(sequence.index(v) if v in sequence else v for v in values)


def _forbid(node: Mapping[str, Any], values: Mapping[str, Any], removed: set[str],
            order: Mapping[str, list[Any]], conditional: AbstractSet[str] = frozenset()) -> Any:
    """True (always forbidden), False (never), or the clause that remains (``order``:
    the ordinal parameters' sequences, see :func:`_ranked`).

    A clause reads a parameter only where it is active (ConfigSpace's rule), so a part
    on a fixed parameter in ``conditional`` (one a condition can still make inactive)
    that holds at the fixed value is not True but "this parameter is active": the
    constant equal to its value. Read as True, a clause on ``b`` (active only for
    ``a = x``) and ``c`` forbade ``c`` everywhere, and a continued run never tried the
    region of ``a = y`` where the old run's best configuration was."""
    kind = node["type"]
    if kind in ("AND", "OR"):
        return _fold(node, "clauses", [_forbid(c, values, removed, order, conditional)
                                       for c in node["clauses"]])
    if kind in _RELATION:
        left, right = node["left"], node["right"]
        if left in removed or right in removed:
            return False
        if left in values and right in values:
            holds = bool(_RELATION[kind](values[left], values[right]))
            return _where_active([n for n in (left, right) if n in conditional], values) \
                if holds else False
        return dict(node)
    name = node["name"]
    if name in removed:
        return False
    if name not in values:
        return dict(node)
    if kind == "IN":
        holds = values[name] in node["values"]
    elif kind not in _FORBID:
        raise InvalidSpaceError(
            f"{_FUNC} cannot simplify the forbidden clause {node} on the fixed parameter "
            f"{name!r}; leave {name!r} free."
        )
    else:
        holds = bool(_FORBID[kind](*_ranked(order, name, values[name], node["value"])))
    return _where_active([name] if name in conditional else [], values) if holds else False


def _where_active(names: list[str], values: Mapping[str, Any]) -> Any:
    """A clause that holds wherever the fixed parameters ``names`` are all active (each
    equal to its fixed value, the only one its constant takes); True for none."""
    leaves = [{"type": "EQUALS", "name": n, "value": values[n]} for n in names]
    if not leaves:
        return True
    return leaves[0] if len(leaves) == 1 else {"type": "AND", "clauses": leaves}


def _clause_names(node: Mapping[str, Any]) -> set[str]:
    """The parameters a serialized forbidden clause reads."""
    if node["type"] in ("AND", "OR"):
        return {n for c in node["clauses"] for n in _clause_names(c)}
    return {node["left"], node["right"]} if node["type"] in _RELATION else {node["name"]}


def _without_forbidden(data: Mapping[str, Any]) -> Any:
    """The space serialized as ``data`` without its forbidden clauses (ConfigSpace's
    decoder pops keys of the dicts it is given: a deep copy)."""
    return CS.ConfigurationSpace.from_serialized_dict(
        copy.deepcopy({**data, "forbiddens": []}))


def _project(values: dict[str, Any], reduced: Any, fixed: Mapping[str, Any], free: Any) -> Any:
    """The configuration of ``reduced`` closest to ``values``: fixed values set, inactive
    parameters dropped, newly active ones at their default. None if forbidden.

    Which parameters are active is found in ``free``, ``reduced`` without its forbidden
    clauses, and only the active values are checked against them: ConfigSpace checks the
    clauses before it drops inactive values, and a clause on a parameter inactive in the
    old configuration (``e < i`` with ``e`` active only for ``f > 0.5``), read at its
    default or a stale value, dropped valid runs even with nothing fixed."""
    from ConfigSpace.exceptions import ForbiddenValueError
    from ConfigSpace.util import deactivate_inactive_hyperparameters

    full = {n: fixed.get(n, values.get(n, hp.default_value)) for n, hp in reduced.items()}
    try:
        active = dict(deactivate_inactive_hyperparameters(full, free))
        config = CS.Configuration(reduced, values=active)
        config.check_valid_configuration()
    except (ValueError, ForbiddenValueError):
        return None
    return config


def _key(config: Any) -> tuple[tuple[str, Any], ...]:
    """A hashable key of a configuration's active values."""
    return tuple(sorted(dict(config).items()))


def _best_projections(facade: Any, outside: list[tuple[Any, Any]], told: set[Any],
                      n: int) -> list[Any]:
    """The projections of the ``n`` best old configurations outside the subspace: the
    incumbents first, then by mean cost (normalized for several objectives), without
    repeats and without configurations told as they were."""
    if n == 0 or not outside:
        return []
    incumbents = {_key(c) for c in facade.intensifier.get_incumbents()}
    runhistory = facade.runhistory

    def rank(pair: tuple[Any, Any]) -> tuple[bool, float]:
        cost = float(runhistory.average_cost(pair[0], normalize=True))
        return _key(pair[0]) not in incumbents, cost if math.isfinite(cost) else math.inf

    queued: list[Any] = []
    seen = set(told)
    for _, config in sorted(outside, key=rank):
        if _key(config) not in seen:
            seen.add(_key(config))
            queued.append(config)
            if len(queued) == n:
                break
    return queued
