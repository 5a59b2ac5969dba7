"""SMAC3 runs in: a live run or a saved output folder -> search space and trial history.

Sources, each read without touching SMAC's private attributes:

* a facade (``HyperparameterOptimizationFacade`` and friends) or anything with
  ``runhistory`` and ``scenario`` attributes;
* a ``smac.RunHistory`` with the ``ConfigurationSpace`` it was run on;
* a saved run: the folder SMAC writes per run (``<output_directory>/<name>/<seed>``,
  holding ``configspace.json``, ``runhistory.json`` and ``scenario.json``), or a
  parent folder that holds exactly one such run. Reading a folder needs
  ConfigSpace only, not SMAC. Both layouts of ``runhistory.json`` written by SMAC
  2.x are read: records as objects with named fields (2.1 and later) and records
  as 10-element lists (2.0).

One configuration is one entry of the history (its ``trial_id`` is SMAC's
``config_id``). SMAC may run a configuration several times -- on several
instances or seeds (algorithm configuration), or on several budgets
(multi-fidelity). Only its successful runs at its highest budget count. Over instances
(``instances=``):

* ``"mean"``: the mean cost of those runs;
* ``"model"``: Hutter et al. (2014, Sec. 3.3): a random forest of the runs,
  ``ŷ'(θ, π)`` on the configuration and the instance's features (or its index),
  predicts each configuration's average over *all* training instances. This
  removes the bias of the plain mean when configurations ran on different
  instances, which SMAC's intensification does;
* ``"auto"`` (default): ``"model"`` when runs are on two or more instances and
  the configurations' instance sets differ, else ``"mean"`` (equal sets make
  the plain mean comparable across configurations). Seeds are averaged either
  way. When the model is used, ``objective_name`` says so.

The instance is not a parameter of the importance analysis. Runs with another
status (CRASHED, TIMEOUT, MEMORYOUT, RUNNING) and runs at lower budgets are
left out and counted by reason in :attr:`~hpinsight.TrialHistory.excluded`.
Parameters inactive in a configuration are missing from it, as everywhere in
hpinsight; ConfigSpace's conditions come with the space, its forbidden clauses
are reported as ignored by :func:`~hpinsight.SearchSpace.from_configspace`.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._optional import import_optional
from .._pareto import FRONT, FRONT_VALUE_NAME, dominated_share
from .._sampling import SamplingRecord
from .._validation import check_real
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError, InvalidDataError
from ._configspace import space_from_configspace

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._history import TrialHistory
    from ..space import SearchSpace

__all__ = [
    "Instances",
    "SmacRun",
    "find_run_folder",
    "history_from_records",
    "history_from_smac",
    "listed_objectives",
    "records_from_runhistory",
    "run_context",
]

_STATUS = {0: "RUNNING", 1: "SUCCESS", 2: "CRASHED", 3: "TIMEOUT", 4: "MEMORYOUT"}
_FUNC = "hp.adapters.from_smac"


@dataclass(frozen=True, slots=True)
class SmacRun:
    """One run of a configuration, the way both SMAC layouts can be read into."""

    config_id: int
    instance: str | None
    seed: int | None
    budget: float | None
    cost: float | list[float]
    status: int


def history_from_smac(
    cls: type[TrialHistory],
    source: Any,
    *,
    configspace: Any = None,
    objective: int | str | None = None,
    instances: str = "auto",
    budget: float | None = None,
) -> TrialHistory:
    """Implement :func:`hpinsight.adapters.from_smac` (see there)."""
    if budget is not None:  # checked, and kept as given (the messages quote it)
        check_real(budget, "budget", _FUNC, low=0.0, high=math.inf)
    if isinstance(source, str | Path):
        return _history_from_folder(cls, Path(source), objective=objective, instances=instances,
                                    budget=budget)
    runhistory = getattr(source, "runhistory", None)
    scenario = getattr(source, "scenario", None)
    if runhistory is None or scenario is None:  # not a facade
        if not _looks_like_runhistory(source):
            raise InvalidArgumentTypeError(
                f"The 'source' parameter of {_FUNC} must be a SMAC facade, a smac.RunHistory "
                "(with configspace=...) or the path of a saved SMAC run. Got "
                f"{type(source).__name__} instead."
            )
        runhistory, scenario = source, None
    own_space, objectives, known = run_context(scenario, runhistory)
    configspace = own_space if configspace is None else configspace
    records, configs = records_from_runhistory(runhistory)
    output = getattr(scenario, "output_directory", None)
    return history_from_records(cls, configspace, records, configs, objective=objective,
                                objectives=objectives, instances=instances, known=known,
                                run=output, budget=budget)


def run_context(scenario: Any, runhistory: Any) -> tuple[Any, list[str] | None, Instances]:
    """A run's ConfigurationSpace, objective names and instances (``scenario`` may be None)."""
    configspace = getattr(scenario, "configspace", None)
    if configspace is None:
        configspace = _configspace_of(runhistory)
    known = Instances.from_scenario(getattr(scenario, "instances", None),
                                    getattr(scenario, "instance_features", None))
    return configspace, listed_objectives(getattr(scenario, "objectives", None)), known


def records_from_runhistory(runhistory: Any) -> tuple[list[SmacRun], dict[int, dict[str, Any]]]:
    """Copy a live ``smac.RunHistory`` into plain records and config dicts (public API only)."""
    records = [
        SmacRun(int(k.config_id), k.instance, k.seed, k.budget, v.cost, int(v.status))
        for k, v in list(runhistory.items())
    ]
    configs = {int(cid): dict(cfg) for cid, cfg in dict(runhistory.ids_config).items()}
    return records, configs


@dataclass(frozen=True, slots=True)
class Instances:
    """The training instances of a run: names in order, and their features if SMAC has them."""

    names: tuple[str, ...] = ()
    features: Mapping[str, Sequence[float]] | None = None

    @classmethod
    def from_scenario(cls, instances: Any, features: Any) -> Instances:
        names = tuple(str(i) for i in instances) if instances else ()
        feats = {str(k): [float(x) for x in v] for k, v in dict(features).items()} if features else None
        return cls(names, feats)


def history_from_records(
    cls: type[TrialHistory],
    configspace: Any,
    records: Iterable[SmacRun],
    configs: Mapping[int, Mapping[str, Any]],
    *,
    objective: int | str | None = None,
    objectives: Sequence[str] | None = None,
    instances: str = "auto",
    known: Instances | None = None,
    seed: int | None = 0,
    run: str | Path | None = None,
    budget: float | None = None,
) -> TrialHistory:
    """Aggregate runs per configuration (see the module notes) into a history (``run``:
    the run's folder, which its :attr:`~TrialHistory.label` names and its
    :attr:`~TrialHistory.loader` reads again)."""
    func = _FUNC
    if instances not in ("auto", "mean", "model"):
        raise InvalidArgumentError(
            f"The 'instances' parameter of {func} must be one of ['auto', 'mean', 'model']. "
            f"Got {instances!r} instead."
        )
    space = space_from_configspace(cls.space_type, configspace)
    records = list(records)
    chosen = _objective_index(records, objective, objectives)
    front = chosen == FRONT
    index = chosen if isinstance(chosen, int) else None
    # the objectives each run's cost is read in: one, or every one for the Pareto front
    read: tuple[int | None, ...] = tuple(range(_n_objectives(records) or 0)) if front else (index,)
    excluded: dict[str, int] = {}

    def exclude(reason: str, n: int = 1) -> None:
        excluded[reason] = excluded.get(reason, 0) + n

    by_config: dict[int, list[SmacRun]] = {}
    for r in records:
        if r.status != 1:
            exclude(_STATUS.get(r.status, f"status {r.status}"))
        else:
            by_config.setdefault(r.config_id, []).append(r)
    if budget is not None and by_config and not any(
            r.budget is not None and math.isclose(r.budget, budget)
            for mine in by_config.values() for r in mine):
        seen = sorted({r.budget for mine in by_config.values() for r in mine if r.budget is not None})
        raise InvalidArgumentError(
            f"{func}: no successful run at budget={budget!r}; the run's budgets are "
            f"{seen or 'none (it is not a multi-fidelity run)'}.")
    ids: list[int] = []
    runs: list[tuple[int, str | None, tuple[float, ...]]] = []  # (position in ids, instance, costs)
    valued_at: dict[float, int] = {}  # configurations per budget they are valued at
    for cid in sorted(by_config):
        mine = by_config[cid]
        if budget is not None:  # one budget: every configuration valued at it, or left out
            kept = [r for r in mine if r.budget is not None and math.isclose(r.budget, budget)]
            if len(kept) < len(mine):
                exclude("other budget", len(mine) - len(kept))
            if not kept:
                continue
        else:
            top = max((-math.inf if r.budget is None else r.budget) for r in mine)
            kept = [r for r in mine if (-math.inf if r.budget is None else r.budget) == top]
            if len(kept) < len(mine):
                exclude("lower budget", len(mine) - len(kept))
        costs = [(r.instance, tuple(_cost(r.cost, i) for i in read)) for r in kept]
        finite = [(inst, c) for inst, c in costs if all(map(math.isfinite, c))]
        if len(finite) < len(costs):
            exclude("non-finite cost", len(costs) - len(finite))
        if not finite:
            continue
        if cid not in configs:
            raise InvalidDataError(
                f"{func}: run(s) of configuration {cid} have no configuration in the "
                "runhistory; the runhistory file is incomplete. Save the run again with SMAC."
            )
        runs.extend((len(ids), None if inst is None else str(inst), c) for inst, c in finite)
        ids.append(cid)
        if kept[0].budget is not None:
            valued_at[float(kept[0].budget)] = valued_at.get(float(kept[0].budget), 0) + 1
    rows = [configs[cid] for cid in ids]
    each = [_aggregate(space, rows, [(at, inst, c[k]) for at, inst, c in runs], instances,
                       known or Instances(), seed) for k in range(len(read))]
    values, how = each[0]
    if front:  # each configuration's share of those that dominate it
        values = dominated_share(np.column_stack([v for v, _ in each]), ["minimize"] * len(read))
        name, how = FRONT_VALUE_NAME, ""
    elif objectives is not None and index is not None:
        name = str(objectives[index])
    elif objectives is not None and len(objectives) == 1:
        name = str(objectives[0])
    else:
        name = "cost"
    if budget is not None:  # one budget of several: the values are of it alone
        name = f"{name} at budget {budget:g}"
    forbidden = tuple(str(c) for c in getattr(configspace, "forbidden_clauses", ()))
    mixed = valued_at if len(valued_at) > 1 else {}  # values from several budgets
    sampling = (SamplingRecord(forbidden=forbidden, linked=_linked(configspace), budgets=mixed)
                if forbidden or mixed else None)
    return cls(space, tuple(rows), values, direction="minimize", trial_ids=tuple(ids),
               excluded=excluded, objective_name=name + how, sampling=sampling,
               # a run of several objectives gives a history per objective: say which
               label=None if run is None else f"SMAC run {run}" + (
                   f", {name}" if objectives and len(objectives) > 1 else ""),
               # the objective as resolved above: by its name where the run names them
               loader=None if run is None else _loader(
                   run, FRONT if front else index if objectives is None or index is None
                   else str(objectives[index]), instances, budget))


def _loader(run: str | Path, objective: int | str | None, instances: str,
            budget: float | None) -> str:
    """The call that reads the same history again (:attr:`TrialHistory.loader`)."""
    args = [repr(str(run))]
    if objective is not None:
        args.append(f"objective={objective!r}")
    if instances != "auto":
        args.append(f"instances={instances!r}")
    if budget is not None:
        args.append(f"budget={budget!r}")
    return f"load_run({', '.join(args)})"


def _linked(configspace: Any) -> tuple[dict[str, tuple[Any, ...] | None], ...]:
    """For each forbidden clause of ``configspace`` that reads two or more parameters,
    each of them with the values at which the clause can rule out others' values
    (``SamplingRecord.linked``): a conjunction of equality and membership tests fires
    only where each holds (``opt = rms and act = tanh``: ``act`` fixed at ``relu`` rules
    nothing out); for a relation, an ``or``, a comparison or a parameter read twice,
    any value (None)."""
    def parts(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return [p for c in node["clauses"] for p in parts(c)] if node["type"] == "AND" else [node]

    def names(node: Mapping[str, Any]) -> list[str]:
        if "clauses" in node:
            return [n for c in node["clauses"] for n in names(c)]
        return [node[k] for k in ("name", "left", "right") if k in node]

    out = []
    for clause in configspace.to_serialized_dict().get("forbiddens", ()):
        read = names(clause)
        if len(set(read)) < 2:
            continue
        at: dict[str, tuple[Any, ...] | None] = dict.fromkeys(sorted(set(read)))
        for part in parts(clause):
            name = part.get("name")
            if name is None or read.count(name) > 1:
                continue
            if part["type"] == "EQUALS":
                at[name] = (part["value"],)
            elif part["type"] == "IN":
                at[name] = tuple(part["values"])
        out.append(at)
    return tuple(out)


def _aggregate(
    space: SearchSpace,
    rows: list[Mapping[str, Any]],
    runs: list[tuple[int, str | None, float]],
    instances: str,
    known: Instances,
    seed: int | None,
) -> tuple[NDArray[np.float64], str]:
    """Per configuration: the mean of its runs, or the instance model's average (see module)."""
    n = len(rows)
    if not runs:
        return np.zeros(0), ""
    config_of = np.array([r[0] for r in runs], dtype=np.intp)
    cost = np.array([r[2] for r in runs], dtype=np.float64)
    seen = sorted({r[1] for r in runs}, key=lambda i: "" if i is None else i)
    names = list(known.names) + [i for i in seen if i is not None and i not in known.names]
    sets: dict[int, set[str | None]] = {}
    for c, inst, _ in runs:
        sets.setdefault(c, set()).add(inst)
    uneven = len({frozenset(v) for v in sets.values()}) > 1
    use_model = instances == "model" or (instances == "auto" and len(seen) > 1 and uneven)
    if not use_model or len(names) < 2 or None in seen:
        mean = np.bincount(config_of, weights=cost, minlength=n) / np.bincount(config_of, minlength=n)
        return mean, ""
    from ..surrogates.forest import average_over_instances

    position = {name: i for i, name in enumerate(names)}
    instance_of = np.array([position[r[1]] for r in runs], dtype=np.intp)  # type: ignore[index]
    feats = known.features
    if feats is not None and all(i in feats for i in names):
        features = np.array([feats[i] for i in names], dtype=np.float64)
    else:
        features = np.arange(len(names), dtype=np.float64)[:, None]
    values = average_over_instances(space, rows, config_of, instance_of, cost, features,
                                    seed=seed)
    return values, f" (averaged over {len(names)} instances by a model of the runs)"


def find_run_folder(path: Path) -> Path:
    """The SMAC run folder at or below ``path`` (the one holding ``runhistory.json``)."""
    if not path.exists():
        raise FileNotFoundError(
            f"{_FUNC}: there is no folder {str(path)!r}. Pass the folder SMAC wrote the run to "
            "(scenario.output_directory, for example smac3_output/<name>/<seed>)."
        )
    if path.is_file():
        path = path.parent
    if (path / "runhistory.json").is_file():
        return path
    found = sorted(p.parent for p in path.glob("**/runhistory.json"))
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(
            f"{_FUNC}: no runhistory.json in {str(path)!r} or below; is this a SMAC output "
            "folder? SMAC writes it to <output_directory>/<name>/<seed>."
        )
    listed = ", ".join(repr(str(p.relative_to(path))) for p in found[:10])
    raise InvalidArgumentError(
        f"{_FUNC}: {len(found)} SMAC runs below {str(path)!r} ({listed}"
        f"{', ...' if len(found) > 10 else ''}); pass the folder of one of them."
    )


# ---------------------------------------------------------------------------- internals
def _history_from_folder(
    cls: type[TrialHistory], path: Path, *, objective: int | str | None, instances: str,
    budget: float | None = None,
) -> TrialHistory:
    configspace, records, configs, objectives, known, folder = _read_folder(path)
    return history_from_records(cls, configspace, records, configs, objective=objective,
                                objectives=objectives, instances=instances, known=known,
                                run=folder, budget=budget)


def objective_histories(cls: type[TrialHistory], path: Path) -> dict[str, TrialHistory] | None:
    """A saved run of several objectives as one history per objective, keyed by the names
    its ``scenario.json`` gives them, from one read of the folder; None when the scenario
    names fewer than two."""
    configspace, records, configs, objectives, known, folder = _read_folder(path)
    if objectives is None or len(objectives) < 2:
        return None
    return {name: history_from_records(cls, configspace, records, configs, objective=i,
                                       objectives=objectives, known=known, run=folder)
            for i, name in enumerate(objectives)}


def _read_folder(path: Path) -> tuple[Any, list[SmacRun], dict[int, dict[str, Any]],
                                      list[str] | None, Instances, Path]:
    """A saved run's space, records, configurations, objective names, instances and
    folder (``path`` or the one run below it)."""
    folder = find_run_folder(path)
    CS = import_optional("ConfigSpace", _FUNC)
    cs_file = folder / "configspace.json"
    if not cs_file.is_file():
        raise FileNotFoundError(
            f"{_FUNC}: {str(folder)!r} has a runhistory.json but no configspace.json, which "
            "holds the search space; copy it from the run's output folder."
        )
    with warnings.catch_warnings():
        # files from SMAC 2.0 use ConfigSpace 0.6's field names, which 1.x reads but warns about
        warnings.filterwarnings("ignore", message="The field 'default' should be",
                                category=UserWarning)
        configspace = CS.ConfigurationSpace.from_json(cs_file)
    try:
        data = json.loads((folder / "runhistory.json").read_text())
    except json.JSONDecodeError as exc:
        raise InvalidDataError(
            f"{_FUNC}: {str(folder / 'runhistory.json')!r} is not valid JSON ({exc}); "
            "was the run interrupted while saving?"
        ) from exc
    records = [_record(entry, i) for i, entry in enumerate(data.get("data", []))]
    configs = {int(k): dict(v) for k, v in dict(data.get("configs", {})).items()}
    objectives = None
    known = Instances()
    scenario_file = folder / "scenario.json"
    if scenario_file.is_file():
        scenario = json.loads(scenario_file.read_text())
        objectives = listed_objectives(scenario.get("objectives"))
        known = Instances.from_scenario(scenario.get("instances"),
                                        scenario.get("instance_features"))
    return configspace, records, configs, objectives, known, folder


def _record(entry: Any, i: int) -> SmacRun:
    if isinstance(entry, Mapping):  # SMAC >= 2.1
        try:
            return SmacRun(int(entry["config_id"]), entry.get("instance"), entry.get("seed"),
                             entry.get("budget"), entry["cost"], int(entry["status"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidDataError(
                f"{_FUNC}: entry {i} of runhistory.json lacks {exc}; expected config_id, cost "
                "and status as SMAC writes them."
            ) from exc
    if isinstance(entry, list | tuple) and len(entry) >= 7:  # SMAC 2.0: a flat list
        config_id, instance, seed, budget, cost, _time, status = entry[:7]
        return SmacRun(int(config_id), instance, seed, budget, cost, int(status))
    raise InvalidDataError(
        f"{_FUNC}: entry {i} of runhistory.json has a layout this version does not know "
        f"({type(entry).__name__} {str(entry)[:80]}); please report it with the SMAC version."
    )


def listed_objectives(objectives: Any) -> list[str] | None:
    """A scenario's objectives (one name or several) as a list of names; None if unnamed."""
    if objectives is None:
        return None
    return [str(objectives)] if isinstance(objectives, str) else [str(o) for o in objectives]


def _n_objectives(records: list[SmacRun]) -> int | None:
    """How many objectives the runs' costs hold (None: one, as a plain number)."""
    return next((len(r.cost) for r in records if isinstance(r.cost, list | tuple)), None)


def _objective_index(
    records: list[SmacRun], objective: int | str | None, objectives: Sequence[str] | None
) -> int | str | None:
    """The objective to analyse: an index, ``FRONT`` for reaching the Pareto front of a
    multi-objective run, or None for a run of one objective."""
    n = _n_objectives(records)
    if n is None:  # single objective
        if objective not in (None, 0) and not (objectives and objective == objectives[0]):
            raise InvalidArgumentError(
                f"The 'objective' parameter of {_FUNC} selects one objective of a multi-objective "
                f"run, but this run has one objective. Got {objective!r} instead; leave it out."
            )
        return None
    known = list(objectives) if objectives is not None else None
    if objective is None:
        raise InvalidArgumentError(
            f"This SMAC run has {n} objectives"
            + (f" ({', '.join(map(repr, known))})" if known else "")
            + f"; {_FUNC} analyses one: pass objective=<index> or objective=<name>, or "
            f"objective={FRONT!r} for reaching the Pareto front."
        )
    if objective == FRONT and not (known and FRONT in known):
        return FRONT
    if isinstance(objective, str):
        if known is None or objective not in known:
            raise InvalidArgumentError(
                f"The 'objective' parameter of {_FUNC} must name one of the run's objectives "
                f"{known!r} or be {FRONT!r}. Got {objective!r} instead."
            )
        return known.index(objective)
    if isinstance(objective, bool) or not isinstance(objective, int) or not 0 <= objective < n:
        raise InvalidArgumentError(
            f"The 'objective' parameter of {_FUNC} must be an index in [0, {n - 1}] or an "
            f"objective name. Got {objective!r} instead."
        )
    return objective


def _cost(cost: Any, index: int | None) -> float:
    try:
        return float(cost if index is None else cost[index])
    except (TypeError, ValueError, IndexError):
        return math.nan


def _looks_like_runhistory(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("items", "ids_config", "get_config"))


def _configspace_of(runhistory: Any) -> Any:
    ids = dict(runhistory.ids_config)
    if not ids:
        raise InvalidDataError(
            f"{_FUNC}: the runhistory has no configurations yet, so the search space is unknown; "
            "pass configspace=..., or read it after SMAC has run some trials."
        )
    return next(iter(ids.values())).config_space
