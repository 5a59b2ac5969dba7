"""Search-space shrinking for Optuna: fix unimportant parameters while a base sampler runs on.

The restriction lives in the study's user attributes, so every process whose
study uses a :class:`ShrinkingSampler` on the same storage follows it, and
every decision is recorded next to it. Trials are never altered: a fixed
parameter is still suggested by the objective and stored as usual; the sampler
just returns the fixed value.

Why not ``optuna.samplers.PartialFixedSampler``: it is built with a fixed set
of parameters, so it cannot follow a restriction that changes mid-study or is
decided by another process, and swapping samplers of a running study is not
possible from other processes. Here the restriction is read once per trial
(``before_trial``) into a per-trial snapshot, so a trial never sees half of a
change, also with ``n_jobs > 1``; fixed parameters are removed from the base
sampler's relative search space, so multivariate TPE, QMC or GPSampler model only
the free ones, and answered in ``sample_independent`` before the base sampler is
asked.

CMA-ES is the exception: its state (mean, covariance, step size) is tied to the
space it started in, and handed a smaller space, Optuna's sampler gives up and
samples at random for the rest of the study. So plain CMA-ES carries on in each new
space from the marginal of its last state on the free parameters, the generation
under way included (``_cma_restart``). On the 10-parameter problem of
``benchmarks/bench_shrink.py`` (20 seeds), the median best at 200 trials was then
0.14 times the full space's, against 0.58 kept in its whole space with fixed values
overwritten in what it proposes (earlier versions). Restarted in the smaller space
from its defaults instead (the centre of the free ranges, which forgets where the
good region is), it was 2.5 on seeds 0-9, where keeping the whole space gave 0.79.
Separable CMA-ES and CMA-ES with margin keep their whole space, with fixed
values overwritten and proposals outside a narrowed range clipped into it.
Whatever a base sampler
proposes is checked against the restriction, since some ignore the space they
are given (``TPESampler(group=True)`` uses its own, NSGA-II's crossover leaves
the bounds): a proposal for a fixed
parameter is replaced, and one outside a narrowed range is left to
``sample_independent``, which samples within the range. Samplers that walk a
fixed grid (``GridSampler``, ``BruteForceSampler``) cannot follow a restriction
and are refused.

While a restriction holds, every ``explore_every``-th trial (by trial number; one in ten
by default) explores: each restricted parameter (fixed or narrowed) takes a value spread
over its whole range, and the base sampler samples the free ones as in any other trial,
still handed the restricted space. Those trials keep the evidence on the fixed
parameters coming, so a later check can release one whose cost of fixing turns out above
the margin (the full-space fallback of importance-guided search), and every parameter
such a trial moved when it did better than the model predicts from the other trials by
more than the margin (``hpinsight._decisions.explored_gains``); a narrowed parameter it
ran outside its range is widened to the whole range again on the same evidence. The
``k``-th exploring trial puts a parameter at the ``k``-th point of a golden-ratio
sequence over its range, shifted by the parameter's name, so a few exploring trials
already cover the range evenly. The base sampler's own model is not asked to explore:
handed the whole space for one trial in ten, Optuna's multivariate TPE fell behind the
full space on the conditional problem of ``benchmarks/bench_shrink.py`` (median best at
100 trials 3.0 times the full space's, 1.02 without exploring). Which trials explore,
and what they try, depends on trial numbers and names only, so a seeded study explores
the same way in every run. Such a trial records ``"explored"`` (the names it spread) in
its ``sampled_under`` mark.

A restriction can also narrow the range of numerical parameters. The base sampler then
gets the narrowed distribution (same kind, log scale and step, bounds moved inwards
onto the step grid) in ``sample_independent``. In its relative search space only plain
CMA-ES (it restarts in the space of each restriction) and ``GPSampler`` do: the
Gaussian process is still fit on every trial (those outside the range lie outside its
unit cube) and its acquisition is optimized within the range. Handed the whole range,
``GPSampler``'s proposals outside it were drawn again by its independent sampler, which
is random search, and narrowing ended 2.68 times the full space's best (paired median,
5 seeds of ``benchmarks/bench_shrink.py``'s ``v10`` at 200 trials); handed the range,
0.73 (20 seeds). ``QMCSampler`` is handed the range too: it has no model, and its
sequence mapped onto the narrowed bounds stays low-discrepancy there (handed the whole
range, most of its points fell outside, and each was drawn again at random with a
warning per trial). The others model the whole
range, and a proposal outside the range is left to ``sample_independent``: TPE handed
the narrowed bounds was trapped at a range's edge that its good trials lay beyond
(``benchmarks/README.md``, the ``narrow`` arm). The trial still stores the
distribution the objective asked for, so the study's data stay comparable and a
release simply widens the range again. Earlier trials outside the narrowed range stay
in the base sampler's history: TPE, for instance, keeps learning from them.
"""

from __future__ import annotations

import math
import numbers
import threading
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import optuna
from optuna.samplers import BaseSampler

from .._shared import step_index
from .._validation import check_int, check_mapping
from .._warn import warn
from ..adapters._optuna import DECISIONS_KEY, RESTRICTION_KEY, TRIAL_KEY, distribution_text
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ._cma_restart import cma_view, restarts, same_space, space_key

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.trial import FrozenTrial, TrialState

__all__ = [
    "DECISIONS_KEY",
    "RESTRICTION_KEY",
    "TRIAL_KEY",
    "ShrinkingSampler",
    "read_decisions",
    "read_ranges",
    "read_restriction",
    "release",
    "restrict",
]


# (fixed values, narrowed ranges) as one per-trial snapshot
_Restriction = tuple[dict[str, Any], dict[str, tuple[float, float]]]


def read_restriction(study: optuna.Study) -> dict[str, Any]:
    """The parameters currently fixed for ``study`` as ``{name: value}`` (empty if none)."""
    return _read(study)[0]


def read_ranges(study: optuna.Study) -> dict[str, tuple[float, float]]:
    """The narrowed ranges of ``study`` as ``{name: (low, high)}`` (empty if none)."""
    return _read(study)[1]


def read_decisions(study: optuna.Study) -> list[dict[str, Any]]:
    """Every restriction decision recorded for ``study``, oldest first (empty if none)."""
    log = study.user_attrs.get(DECISIONS_KEY)
    return [d for d in log if isinstance(d, dict)] if isinstance(log, list) else []


def restrict(
    study: optuna.Study,
    fixed: Mapping[str, Any],
    *,
    why: str,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    after_trial: int | None = None,
) -> dict[str, Any]:
    """Fix and narrow parameters for the following trials of ``study`` and log the decision.

    Replaces any earlier restriction of the study.

    Parameters
    ----------
    study : optuna.Study
    fixed : mapping of str to value
        Parameter name to the value later trials get. JSON values only
        (what Optuna's categorical choices and numbers are).
    why : str
        The reason, recorded with the decision.
    ranges : mapping of str to (low, high), optional
        Numerical parameters to sample only within ``[low, high]`` (in the
        parameter's own units). A range that misses a trial's distribution,
        or holds none of its step values, is ignored for that trial.
    after_trial : int, optional
        Number of the last finished trial the decision was based on. Default: the
        study's last finished trial, so that a report can tell the trials that ran
        under the restriction from those before it.

    Returns
    -------
    dict
        The decision as recorded.

    Examples
    --------
    >>> import optuna
    >>> from hpinsight.integrations.optuna import ShrinkingSampler, restrict, release
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    >>> _ = restrict(study, {"kind": "b"}, ranges={"lr": (1e-3, 1e-2)}, why="by hand")
    >>> study.optimize(
    ...     lambda t: t.suggest_float("lr", 1e-5, 1, log=True) * len(t.suggest_categorical("kind", ["a", "b"])),
    ...     n_trials=5,
    ... )
    >>> all(1e-3 <= t.params["lr"] <= 1e-2 and t.params["kind"] == "b" for t in study.trials)
    True
    >>> _ = release(study)
    """
    func = "restrict"
    check_mapping(fixed, "fixed", func, of="parameter names to the values later trials get",
                  example="{'dropout': 0.1} ({} to narrow only)")
    if ranges is not None:
        check_mapping(ranges, "ranges", func, of="parameter names to (low, high)",
                      example="{'lr': (1e-4, 1e-2)}")
    if not isinstance(why, str):
        raise InvalidArgumentTypeError(
            f"The 'why' parameter of {func} must be a str, the reason recorded with the "
            f"decision. Got {type(why).__name__} instead.")
    after_trial = check_int(after_trial, "after_trial", func, minimum=-1, allow_none=True)
    if after_trial is None:
        after_trial = _last_finished(study)
    return record_restriction(study, fixed, why=why, ranges=ranges, after_trial=after_trial,
                              check=True)


def record_restriction(
    study: optuna.Study, fixed: Mapping[str, Any], *, why: str,
    ranges: Mapping[str, tuple[float, float]] | None = None, after_trial: int | None = None,
    check: bool = False,
) -> dict[str, Any]:
    """:func:`restrict`; with ``check``, the values are also checked against the study's
    trials (the user's restrictions). The live decisions write values of the study's own
    trials or of the model's candidates without that: in a dynamic space a candidate can
    fall between two trials' ranges, where the sampler leaves it to the trials that can
    take it, and a refused decision would stop the decisions after it."""
    fixed = {str(k): _storable(k, v) for k, v in fixed.items()}
    narrowed = {str(k): _json_range(k, v) for k, v in dict(ranges or {}).items()}
    both = sorted(set(fixed) & set(narrowed))
    if both:
        raise InvalidArgumentError(
            f"The parameter(s) {both} of restrict are both fixed and narrowed; "
            "give each parameter in 'fixed' or in 'ranges', not both."
        )
    if check:
        _check_against_trials(study, fixed, narrowed)
    decision = _decision("fix", fixed, why, after_trial, narrowed)
    restriction: dict[str, Any] = {"fixed": fixed, "ranges": narrowed, "since": decision}
    if check and (fixed or narrowed) and not study.get_trials(deepcopy=False):
        # no trial to check the names against yet: the sampler checks them at the first
        restriction["unchecked"] = sorted({*fixed, *narrowed})
    study.set_user_attr(RESTRICTION_KEY, restriction)
    _append_decision(study, decision)
    return decision


def release(study: optuna.Study, *, why: str = "released by the user") -> dict[str, Any]:
    """Undo any restriction of ``study``: later trials sample the full space again."""
    previous, ranges = _read(study)
    decision = _decision("release", previous, why, _last_finished(study), ranges)
    study.set_user_attr(RESTRICTION_KEY, {"fixed": {}, "ranges": {}, "since": decision})
    _append_decision(study, decision)
    return decision


class ShrinkingSampler(BaseSampler):
    """Wrap a sampler so that parameters fixed in the study's restriction keep their value.

    Parameters
    ----------
    base_sampler : optuna.samplers.BaseSampler, optional
        Samples every parameter that is not fixed. Default: ``TPESampler()``.
    explore_every : int or None, default=10
        While a restriction holds, trials whose number ``n`` has ``(n + 1) %
        explore_every == 0`` spread the restricted parameters over their whole range
        (the free ones are sampled as usual), so the fixed parameters keep being
        checked (see the module docstring). None: never.

    Notes
    -----
    Use it as the study's sampler; restrictions come from
    :class:`~hpinsight.integrations.optuna.ImportanceCallback` with
    ``shrink_to=k``, from ``hpinsight watch --shrink-to k`` in another
    process, or from :meth:`restrict` by hand. A fixed value outside the
    distribution a trial asks for (the objective changed it) is not forced:
    the base sampler is asked instead.

    Examples
    --------
    >>> import optuna
    >>> from hpinsight.integrations.optuna import ShrinkingSampler
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> sampler = ShrinkingSampler(optuna.samplers.RandomSampler(seed=0))
    >>> study = optuna.create_study(sampler=sampler)
    >>> _ = ShrinkingSampler.restrict(study, {"y": 0.5}, why="y does not matter")
    >>> study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=3)
    >>> {t.params["y"] for t in study.trials}
    {0.5}
    >>> _ = ShrinkingSampler.release(study)
    """

    restrict = staticmethod(restrict)
    release = staticmethod(release)
    read_restriction = staticmethod(read_restriction)
    read_ranges = staticmethod(read_ranges)

    def __init__(self, base_sampler: BaseSampler | None = None, *,
                 explore_every: int | None = 10) -> None:
        given: Any = explore_every  # an int by its annotation; numpy's integers too
        if given is not None and (isinstance(given, bool) or not isinstance(
                given, numbers.Integral) or given < 2):
            raise InvalidArgumentError(
                "The 'explore_every' parameter of ShrinkingSampler must be an int >= 2 (one "
                "trial in that many samples the whole space while a restriction holds) or "
                f"None (never). Got {explore_every!r} instead.")
        self.explore_every = None if explore_every is None else int(explore_every)
        if base_sampler is None:
            base_sampler = optuna.samplers.TPESampler()
        if not isinstance(base_sampler, BaseSampler):
            raise InvalidArgumentTypeError(
                "The 'base_sampler' parameter of ShrinkingSampler must be an Optuna sampler "
                f"(e.g. optuna.samplers.TPESampler()). Got {type(base_sampler).__name__} instead."
            )
        if isinstance(base_sampler, optuna.samplers.GridSampler | optuna.samplers.BruteForceSampler):
            raise InvalidArgumentTypeError(
                f"ShrinkingSampler cannot restrict a {type(base_sampler).__name__}: it walks a "
                "fixed grid of configurations and would count fixed or narrowed ones as visited. "
                "Shrink the grid itself instead (pass a smaller search_space), or use "
                "TPESampler, CmaEsSampler, QMCSampler, RandomSampler or GPSampler."
            )
        # CMA-ES keeps its state in the space it started in (see the module docstring)
        self._restarts = restarts(base_sampler)
        self._keeps_space = isinstance(base_sampler, optuna.samplers.CmaEsSampler) and not (
            self._restarts)
        # samplers handed the narrowed bounds in their relative search space
        self._narrows_space = self._restarts or isinstance(
            base_sampler, optuna.samplers.GPSampler | optuna.samplers.QMCSampler)
        self._base = base_sampler
        self._lock = threading.Lock()
        self._snapshots: dict[tuple[str, int], _Restriction] = {}
        self._names_checked: set[str] = set()  # studies whose restricted names were checked
        # work due before the next trial of a study is sampled (a shrink decision), by
        # owner: (study name, task); run in before_trial under _due_lock, so a trial that
        # starts in another thread meanwhile waits for it and is sampled under its outcome
        self._due: dict[int, tuple[str, Callable[[optuna.Study], None]]] = {}
        self._due_lock = threading.RLock()

    def __repr__(self) -> str:
        return f"ShrinkingSampler({self._base!r}, explore_every={self.explore_every})"

    def __getstate__(self) -> dict[str, Any]:
        # pickled as Optuna's own samplers are (a study saved with its sampler, or the
        # sampler alone to resume a seeded study): without its lock, which cannot be, and
        # without the restrictions of trials under way, which end with this process
        state = self.__dict__.copy()
        del state["_lock"], state["_due_lock"]
        state["_snapshots"] = {}
        state["_due"] = {}  # a callback's pending decision belongs to its process
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._due_lock = threading.RLock()

    @property
    def base_sampler(self) -> BaseSampler:
        """The wrapped sampler."""
        return self._base

    def reseed_rng(self) -> None:
        self._base.reseed_rng()

    def explores(self, number: int) -> bool:
        """Whether trial ``number`` samples the whole space while a restriction holds."""
        return self.explore_every is not None and (number + 1) % self.explore_every == 0

    def _defer(self, owner: object, study_name: str, task: Callable[[optuna.Study], None]) -> None:
        """Run ``task(study)`` before the next trial of study ``study_name`` is sampled
        (one task per ``owner``; a later one replaces it).

        :class:`~hpinsight.integrations.optuna.ImportanceCallback` hands its due shrink
        decisions here, so a decision that falls due at a study's last trial costs
        nothing: it is taken when, and only if, another trial starts.
        """
        with self._due_lock:
            self._due[id(owner)] = (study_name, task)

    def _cancel(self, owner: object) -> None:
        """Drop the task ``owner`` deferred, if it has not run."""
        with self._due_lock:
            self._due.pop(id(owner), None)

    def _run_due(self, study: optuna.Study, trial: FrozenTrial) -> None:
        if not self._due:
            return
        with self._due_lock:  # held while a task runs: other trials wait for its outcome
            for owner in [k for k, (name, _) in self._due.items() if name == study.study_name]:
                _, task = self._due[owner]
                try:
                    task(study)
                except BaseException:
                    # interrupted (Ctrl-C while a decision is fitted): the trial never ran,
                    # and is not left RUNNING in the study for ever
                    study._storage.set_trial_state_values(
                        trial._trial_id, optuna.trial.TrialState.FAIL)
                    raise
                finally:
                    # removed once done, not before: until then a trial starting in
                    # another thread sees it due and waits on the lock
                    del self._due[owner]

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._run_due(study, trial)
        snapshot = _read(study)
        fixed, ranges = snapshot
        mark: dict[str, Any] = {"fixed": dict(fixed),
                                "ranges": {k: list(v) for k, v in ranges.items()},
                                "space": space_key(fixed, ranges)}
        if (fixed or ranges) and self.explores(trial.number):
            # what it spreads is judged against what was held when it ran ("held"), not
            # against a later restriction
            mark.update(fixed={}, ranges={}, explored=sorted({*fixed, *ranges}),
                        held={"fixed": mark["fixed"], "ranges": mark["ranges"]})
        with self._lock:
            self._snapshots[_key(study, trial)] = snapshot
        if fixed or ranges:  # the trial says what it was sampled under (reports count it)
            study._storage.set_trial_system_attr(trial._trial_id, TRIAL_KEY, mark)
        self._base.before_trial(study, trial)

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        space = self._base.infer_relative_search_space(study, trial)
        if self._keeps_space:
            return space
        fixed, ranges = self._snapshot(study, trial)
        if not self._narrows_space:
            # the whole range of a narrowed parameter: a model fit within narrowed bounds
            # (TPE's kernels, whose width scales with the range) was trapped at an edge
            # its history pointed past; a proposal outside the range is left to
            # sample_independent, which draws within it
            return {name: d for name, d in space.items() if name not in fixed}
        # CMA-ES restarts in the space of each restriction, GPSampler optimizes its
        # acquisition within the narrowed bounds, QMC maps its points onto them
        return narrowed_space(space, fixed, ranges)

    def sample_relative(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        search_space: dict[str, BaseDistribution],
    ) -> dict[str, Any]:
        fixed, ranges = self._snapshot(study, trial)
        seen = study
        if self._restarts and search_space:
            assert isinstance(self._base, optuna.samplers.CmaEsSampler)
            seen = cma_view(self._base, study, trial, space_key(fixed, ranges), search_space,
                            narrowed_space)
        proposed = self._base.sample_relative(seen, trial, search_space)
        if not (fixed or ranges):
            return proposed
        exploring = self.explores(trial.number)
        out = {}
        for name, value in proposed.items():
            dist = search_space.get(name)
            if dist is None:  # proposed outside the space it was given: checked independently
                continue
            if exploring and (name in fixed or name in ranges):
                continue  # spread over its whole range by sample_independent
            if name in fixed and _fits(dist, fixed[name]):
                out[name] = _native(dist, fixed[name])
                continue
            narrowed = _narrow(dist, ranges.get(name))
            if _fits(narrowed, value) or not isinstance(
                    narrowed, optuna.distributions.FloatDistribution | optuna.distributions.IntDistribution):
                out[name] = value
            elif self._keeps_space:
                out[name] = _clip(narrowed, value)
            # else: left out, so sample_independent draws it within the narrowed range
        return out

    def sample_independent(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        fixed, ranges = self._snapshot(study, trial)
        if (param_name in fixed or param_name in ranges) and self.explores(trial.number):
            assert self.explore_every is not None
            k = (trial.number + 1) // self.explore_every  # the k-th exploring trial
            return _spread(param_distribution, k, param_name)
        if param_name in fixed and _fits(param_distribution, fixed[param_name]):
            return _native(param_distribution, fixed[param_name])
        narrowed = _narrow(param_distribution, ranges.get(param_name))
        if narrowed.single():  # a range of one value: no sampler is asked (TPE drew NaN)
            assert isinstance(narrowed, optuna.distributions.FloatDistribution
                              | optuna.distributions.IntDistribution)
            return _native(narrowed, narrowed.low)
        # a restarted CMA-ES counts its startup trials in its own space
        seen = same_space(study, space_key(fixed, ranges)) if self._restarts else study
        return self._base.sample_independent(seen, trial, param_name, narrowed)

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        try:
            self._base.after_trial(study, trial, state, values)
        finally:
            with self._lock:
                snapshot = self._snapshots.pop(_key(study, trial), None)
                due = (snapshot is not None and bool(snapshot[0] or snapshot[1])
                       and state == optuna.trial.TrialState.COMPLETE
                       and study.study_name not in self._names_checked)
                if due:
                    self._names_checked.add(study.study_name)
            if due:
                _check_names_once_run(study, trial)

    def _snapshot(self, study: optuna.Study, trial: FrozenTrial) -> _Restriction:
        with self._lock:
            return self._snapshots.get(_key(study, trial), ({}, {}))


#: 1 / golden ratio: successive multiples modulo 1 spread over [0, 1) as evenly as any
#: sequence can (the Kronecker or "golden ratio" low-discrepancy sequence)
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _spread(dist: BaseDistribution, k: int, name: str) -> Any:
    """The ``k``-th exploring value of parameter ``name``: the ``k``-th point of a
    golden-ratio sequence over the whole of ``dist`` (on its log scale for ``log=True``,
    onto its step grid), shifted by a hash of the name so parameters do not move in step."""
    D = optuna.distributions
    u = (k * _GOLDEN + zlib.crc32(name.encode()) / 2.0**32) % 1.0
    if isinstance(dist, D.CategoricalDistribution):
        return dist.choices[min(int(u * len(dist.choices)), len(dist.choices) - 1)]
    assert isinstance(dist, D.FloatDistribution | D.IntDistribution)
    if dist.log:
        value = math.exp(math.log(dist.low) + u * (math.log(dist.high) - math.log(dist.low)))
    elif isinstance(dist, D.IntDistribution):  # every integer equally often
        value = dist.low + math.floor(u * ((dist.high - dist.low) // dist.step + 1)) * dist.step
    else:
        value = dist.low + u * (dist.high - dist.low)
    return _clip(dist, value)


def _stored(study: optuna.Study) -> Any:
    """The restriction stored in ``study``, read from its storage: a sampler may be handed
    a view of the study that has no ``user_attrs`` (``HyperbandPruner`` gives it one per
    bracket, which refused the attribute and stopped the first trial); the storage and
    the study's id are what every view keeps."""
    return study._storage.get_study_user_attrs(study._study_id).get(RESTRICTION_KEY)


def _read(study: optuna.Study) -> _Restriction:
    """(fixed values, narrowed ranges) stored in the study; anything malformed is ignored."""
    return _parsed(_stored(study))


def _parsed(stored: Any) -> _Restriction:
    """(fixed values, narrowed ranges) of a stored restriction (:func:`_stored`)."""
    if not isinstance(stored, Mapping):
        return {}, {}
    fixed = stored.get("fixed")
    ranges = stored.get("ranges")
    narrowed: dict[str, tuple[float, float]] = {}
    if isinstance(ranges, Mapping):
        for name, bounds in ranges.items():
            if (isinstance(bounds, list | tuple) and len(bounds) == 2
                    and all(isinstance(b, int | float) for b in bounds)):
                narrowed[str(name)] = (float(bounds[0]), float(bounds[1]))
    return (dict(fixed) if isinstance(fixed, Mapping) else {}), narrowed


def narrowed_space(space: Mapping[str, BaseDistribution], fixed: Collection[str],
                   ranges: Mapping[str, tuple[float, float]]) -> dict[str, BaseDistribution]:
    """``space`` less the fixed parameters, each other one narrowed to its range, and
    those narrowed to a single value left out, as Optuna leaves out a distribution of one
    value: such a range handed to CMA-ES divided by its zero width, and the value is
    :meth:`ShrinkingSampler.sample_independent`'s to give."""
    out = {}
    for name, dist in space.items():
        if name not in fixed:
            narrowed = _narrow(dist, ranges.get(name))
            if not narrowed.single():
                out[name] = narrowed
    return out


def _narrow(dist: BaseDistribution, bounds: tuple[float, float] | None) -> BaseDistribution:
    """``dist`` with its bounds moved inwards to ``bounds`` (onto its step grid), if they overlap."""
    D = optuna.distributions
    if bounds is None or not isinstance(dist, D.FloatDistribution | D.IntDistribution):
        return dist
    low, high = max(bounds[0], dist.low), min(bounds[1], dist.high)
    if dist.step is not None:
        low, high = _on_grid(dist, low, "ceil"), _on_grid(dist, high, "floor")
    if low > high or (low, high) == (dist.low, dist.high):
        return dist
    if isinstance(dist, D.IntDistribution):
        return D.IntDistribution(round(low), round(high), log=dist.log, step=dist.step)
    return D.FloatDistribution(low, high, log=dist.log, step=dist.step)


def _on_grid(dist: Any, value: float, how: str) -> float:
    """The value of the step grid of ``dist`` next to ``value`` (``how``: "ceil" or
    "floor"), as the grid's own decimal number: ``low + k * step`` computed in binary
    gave 0.30000000000000004 for 0.3 on a grid of 0.1, whose range to 0.5 Optuna then
    found not divisible by the step and cut to 0.4, so the top value was never sampled."""
    k = step_index(dist.low, dist.step, value, how)
    exact = Decimal(repr(dist.low)) + k * Decimal(repr(dist.step))
    return int(exact) if isinstance(dist.low, int) and isinstance(dist.step, int) else float(exact)


def _holds_a_value(dist: Any, low: float, high: float) -> bool:
    """Whether [``low``, ``high``] holds a value ``dist`` can take (one of its step grid)."""
    low, high = max(low, dist.low), min(high, dist.high)
    if low > high:
        return False
    return dist.step is None or _on_grid(dist, low, "ceil") <= _on_grid(dist, high, "floor")


def _clip(dist: BaseDistribution, value: Any) -> Any:
    """``value`` moved into the bounds of the numerical ``dist``, onto its step grid."""
    D = optuna.distributions
    assert isinstance(dist, D.FloatDistribution | D.IntDistribution)
    v = min(max(value, dist.low), dist.high)
    if dist.step is not None:
        v = dist.low + step_index(dist.low, dist.step, v, "nearest") * dist.step
        v = min(max(v, dist.low), dist.high)
    return round(v) if isinstance(dist, D.IntDistribution) else float(v)


def _key(study: optuna.Study, trial: FrozenTrial) -> tuple[str, int]:
    return study.study_name, trial.number


def _fits(dist: BaseDistribution, value: Any) -> bool:
    D = optuna.distributions
    if isinstance(dist, D.CategoricalDistribution):
        return value in dist.choices
    if isinstance(dist, D.FloatDistribution | D.IntDistribution):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if not dist.low <= value <= dist.high:
            return False
        step = dist.step  # always set for IntDistribution
        if step is None:
            return True
        k = (value - dist.low) / step
        return math.isclose(k, round(k), abs_tol=1e-8)
    return False


def _native(dist: BaseDistribution, value: Any) -> Any:
    D = optuna.distributions
    if isinstance(dist, D.IntDistribution):
        return int(value)
    if isinstance(dist, D.FloatDistribution):
        return float(value)
    return next((c for c in dist.choices if c == value), value)  # type: ignore[attr-defined]


def _storable(name: Any, value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "item"):  # NumPy scalar
        return value.item()
    raise InvalidArgumentTypeError(
        f"Parameter {name!r} can only be fixed to a number, string, bool or None "
        f"(what Optuna stores). Got {type(value).__name__} instead."
    )


def _json_range(name: Any, bounds: Any) -> list[float]:
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        low = high = math.nan
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise InvalidArgumentError(
            f"The range of {name!r} in restrict must be a pair (low, high) of finite numbers "
            f"with low <= high. Got {bounds!r} instead."
        )
    return [low, high]


def _check_against_trials(study: optuna.Study, fixed: Mapping[str, Any],
                          narrowed: Mapping[str, list[float]]) -> None:
    """Refuse a fixed value, or a range, that no trial of the study could take (no
    distribution any trial sampled the parameter from holds it): the sampler would skip
    it in every trial, while the study's reports said the parameter was fixed. A value
    one of a dynamic space's distributions holds is accepted (trials drawn from that one
    take it). Warn about a name no trial has (a parameter not yet suggested, or a
    misspelt one, which no trial ever takes)."""
    names = set(fixed) | set(narrowed)
    if not names:
        return
    trials = study.get_trials(deepcopy=False)
    problem = next(iter(_untakeable(study.study_name, trials, fixed, narrowed)), None)
    if problem is not None:
        raise InvalidArgumentError(f"restrict cannot {problem}")
    known = {name for trial in trials for name in trial.distributions}
    unseen = sorted(names - known)
    if unseen and known:
        warn(
            f"restrict: no trial of study {study.study_name!r} has the parameter(s) {unseen} "
            f"(its trials have {sorted(known)}); the restriction holds for a trial that "
            "suggests one, and a misspelt name is never held.", UserWarning, stacklevel=4)


def _untakeable(study_name: str, trials: Sequence[FrozenTrial], fixed: Mapping[str, Any],
                narrowed: Mapping[str, Sequence[float]]) -> list[str]:
    """What of a restriction no trial of ``trials`` could take, each as the end of a
    sentence that begins "restrict cannot" (a fixed value no distribution of the
    parameter holds, a range on a categorical or holding none of its values)."""
    names = set(fixed) | set(narrowed)
    seen: dict[str, list[BaseDistribution]] = {}
    for trial in trials:
        for name in names & trial.distributions.keys():
            dist = trial.distributions[name]
            if dist not in seen.setdefault(name, []):
                seen[name].append(dist)
    out = []
    for name, value in fixed.items():
        if name in seen and not any(_fits(d, value) for d in seen[name]):
            out.append(f"fix {name!r} at {value!r}: the trials of study {study_name!r} sample "
                       f"it from {_describe_all(seen[name])}, so no trial could take that "
                       "value. Give a value of that distribution.")
    D = optuna.distributions
    for name, (low, high) in narrowed.items():
        dists = seen.get(name, [])
        if dists and all(isinstance(d, D.CategoricalDistribution) for d in dists):
            out.append(f"narrow {name!r}: it is categorical ({_describe_all(dists)}); a range "
                       "narrows a number. Fix it with 'fixed' instead.")
            continue
        numeric = [d for d in dists if isinstance(d, D.FloatDistribution | D.IntDistribution)]
        if numeric and not any(_holds_a_value(d, low, high) for d in numeric):
            # (a range between two values of a step grid was taken, ignored by the
            # sampler, and counted as narrowing in the reports)
            out.append(f"narrow {name!r} to [{low:g}, {high:g}]: the trials of study "
                       f"{study_name!r} sample it from {_describe_all(numeric)}, and that "
                       "range holds none of its values. Give a range that holds at least one.")
    return out


def _describe_all(dists: Sequence[BaseDistribution]) -> str:
    """Distributions in words, joined by "or"."""
    return " or ".join(distribution_text(optuna, d) for d in dists)


def _decision(action: str, params: Mapping[str, Any], why: str, after_trial: int | None,
              ranges: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One entry of the study's decision log; ``ranges`` (the narrowed ranges it
    concerns, as lists) only where there are any."""
    decision = {
        "action": action,
        "params": dict(params),
        "why": str(why),
        "after_trial": after_trial,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if ranges:
        decision["ranges"] = {k: list(v) for k, v in ranges.items()}
    return decision


def _append_decision(study: optuna.Study, decision: dict[str, Any]) -> None:
    log = study.user_attrs.get(DECISIONS_KEY)
    log = list(log) if isinstance(log, list) else []
    log.append(decision)
    study.set_user_attr(DECISIONS_KEY, log)


def record_decision(
    study: optuna.Study, action: str, params: Mapping[str, Any], why: str,
    after_trial: int | None, *, ranges: Mapping[str, tuple[float, float]] | None = None,
) -> None:
    """Append a decision that changes no restriction (e.g. "keep") to the study's log;
    ``ranges``: the narrowed ranges it concerns (a release widens them)."""
    _append_decision(study, _decision(action, params, why, after_trial, ranges))


def _check_names_once_run(study: optuna.Study, trial: FrozenTrial) -> None:
    """Warn about restricted names no trial has, for a restriction :func:`restrict` wrote
    before the study had a trial (its ``"unchecked"`` names; one written later was
    checked then, and the live decisions name the trials' own parameters): a misspelt
    name was held in no trial, and nothing said so."""
    stored = _stored(study)
    names = stored.get("unchecked") if isinstance(stored, Mapping) else None
    if not isinstance(names, list) or not names:
        return
    # every trial of the study, not those of a view's (a Hyperband bracket's) alone, and
    # this one, not yet stored as finished
    trials = [*study._storage.get_all_trials(study._study_id, deepcopy=False), trial]
    known = {name for t in trials for name in t.distributions}
    # what restrict refuses once the study has a trial, said now (not raised: the study runs)
    fixed, ranges = _parsed(stored)  # (read once: the storage holds it)
    for problem in _untakeable(study.study_name, trials, fixed, ranges):
        warn(f"ShrinkingSampler: the restriction of study {study.study_name!r}, written "
             f"before its first trial, cannot {problem} (Meanwhile the sampler leaves the "
             "parameter free in the trials that cannot take it.)", UserWarning,
             stacklevel=None)
    unseen = sorted(set(map(str, names)) - known)
    if unseen:
        warn(f"ShrinkingSampler: the restriction of study {study.study_name!r} names "
             f"{unseen}, which no finished trial has (its trials have {sorted(known)}); a "
             "misspelt name is never held (one suggested only by some trials is held in "
             "those). Restrict the name the objective suggests.", UserWarning,
             stacklevel=None)


def _last_finished(study: optuna.Study) -> int | None:
    finished = [t.number for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
    return max(finished) if finished else None
