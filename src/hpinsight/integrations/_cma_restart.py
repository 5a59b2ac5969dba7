"""CMA-ES under a restriction: restarted in the free parameters from where it stood.

Optuna's ``CmaEsSampler`` keeps its state (mean, step size, covariance) pickled in the
system attributes of finished trials, for the space it was started in; handed a
smaller space, it finds a state of the wrong size and samples at random for the rest
of the study. :class:`~hpinsight.integrations.optuna.ShrinkingSampler` therefore shows it
the study through :func:`cma_view`: only the trials sampled in the current space (the
``space`` of their ``sampled_under`` mark) and, before CMA-ES has stored a state in
that space, a stand-in finished trial that holds one: the marginal of its last state
on the parameters still free (the mean and covariance restricted to their coordinates
and rescaled to narrowed ranges, the same step size, generation and population size:
CMA-ES's default population for fewer dimensions is smaller, and with the parameters it
does not model drawn at random, a population of 4 in one dimension took noise for
progress: on the conditional problem of ``benchmarks/bench_shrink.py``, 20 seeds, the
median best at 200 trials was 1.49 times the full space's with the default population
and 0.51 with the carried one). A parameter that
was not in the last state's space (one just released) starts at the value it was held
at, with CMA-ES's own initial spread, a sixth of its range. The trials of the
generation under way when the space changed stay in view, so they are told with the
first trials of the new space (on their free coordinates, which they sampled from the
same marginal) instead of being lost. CMA-ES then goes on as if its search had always
been in the smaller space, without starting again from the centre of the ranges (which
was measured worse than not restarting at all; see ``_optuna_shrink``).

This reads and writes the sampler's stored state in its own format, through its own
methods. Plain CMA-ES only (:func:`restarts`); separable CMA-ES and CMA-ES with margin
keep their whole space. A stored state of an unexpected size (none is known) is not
carried over: CMA-ES then starts afresh in the smaller space.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna
from optuna.trial import TrialState

from ..adapters._optuna import TRIAL_KEY

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.trial import FrozenTrial

__all__ = ["SameSpace", "cma_view", "restarts", "same_space", "space_key", "space_of"]

#: the spread CMA-ES starts a coordinate with, in units of its range (Optuna's default
#: ``sigma0`` is the smallest range over 6 on [0, 1]-scaled coordinates)
_INITIAL_SPREAD = 1.0 / 6.0


def space_key(fixed: Mapping[str, Any], ranges: Mapping[str, tuple[float, float]]
              ) -> list[Any] | None:
    """The base sampler's space under a restriction: its restricted names and ranges
    (JSON-storable, compared by equality); None without a restriction."""
    if not (fixed or ranges):
        return None
    return [sorted(fixed), sorted([k, list(v)] for k, v in ranges.items())]


def space_of(trial: FrozenTrial) -> list[Any] | None:
    """The space a trial was sampled in (its mark), None for an unrestricted trial."""
    mark = trial.system_attrs.get(TRIAL_KEY)
    return mark.get("space") if isinstance(mark, Mapping) else None


class SameSpace:
    """The study as CMA-ES sees it: ``first`` (stand-ins, see the module docstring), then
    the trials numbered above ``after`` sampled in space ``key`` (or ``also``: the space
    the carried state was in); everything else is the study's own."""

    def __init__(self, study: optuna.Study, key: list[Any] | None,
                 first: list[FrozenTrial] | None = None, after: int = -1,
                 also: list[Any] | None = None) -> None:
        self._study = study
        self._keys = [key, also]
        self._first = first or []
        self._after = after

    def __getattr__(self, name: str) -> Any:
        return getattr(self._study, name)

    def _get_trials(self, deepcopy: bool = True, states: Any = None,
                    use_cache: bool = False) -> list[FrozenTrial]:
        trials = self._study._get_trials(deepcopy=deepcopy, states=states, use_cache=use_cache)
        return self._first + [t for t in trials
                              if t.number > self._after and space_of(t) in self._keys]

    def get_trials(self, deepcopy: bool = True, states: Any = None) -> list[FrozenTrial]:
        return self._get_trials(deepcopy=deepcopy, states=states)

    @property
    def trials(self) -> list[FrozenTrial]:
        return self.get_trials()


def restarts(sampler: optuna.samplers.BaseSampler) -> bool:
    """Whether ``sampler`` is plain CMA-ES, restarted in each new space (see the module
    docstring)."""
    return (isinstance(sampler, optuna.samplers.CmaEsSampler)
            and not getattr(sampler, "_use_separable_cma", False)
            and not getattr(sampler, "_with_margin", False))


def same_space(study: optuna.Study, key: list[Any] | None, **kwargs: Any) -> optuna.Study:
    """``study`` as a :class:`SameSpace` view (keywords as there), typed as what samplers
    read of a study."""
    return SameSpace(study, key, **kwargs)  # type: ignore[return-value]  # duck-typed


def cma_view(sampler: optuna.samplers.CmaEsSampler, study: optuna.Study, trial: FrozenTrial,
             key: list[Any] | None, search_space: dict[str, BaseDistribution],
             narrow: Callable[[Mapping[str, BaseDistribution], Collection[str],
                               Mapping[str, tuple[float, float]]], dict[str, BaseDistribution]],
             ) -> optuna.Study:
    """What ``sampler.sample_relative`` should see to sample ``search_space`` for ``trial``,
    the space of restriction ``key``."""
    trials = study._get_trials(deepcopy=False, use_cache=True)
    last = _last_state(sampler, trials)
    if last is None or space_of(last) == key:  # nothing to carry, or its own state
        return same_space(study, key)
    # the space CMA-ES models without a restriction: needed only when carrying over
    whole = sampler.infer_relative_search_space(study, trial)
    standin = _marginal(sampler, last, search_space, whole, narrow, key)
    # as many as its startup trials: it carries on, it does not start again at random
    first = [standin] * max(1, int(sampler._n_startup_trials)) if standin else []
    # the generation under way when the space changed is told with the new one's first
    return same_space(study, key, first=first, after=last.number,
                      also=space_of(last) if standin else key)


def _last_state(sampler: Any, trials: list[FrozenTrial]) -> FrozenTrial | None:
    prefix = sampler._attr_key_optimizer
    for t in reversed(trials):
        if t.state == TrialState.COMPLETE and any(k.startswith(prefix) for k in t.system_attrs):
            return t
    return None


def _marginal(sampler: Any, last: FrozenTrial, search_space: dict[str, BaseDistribution],
              whole: dict[str, BaseDistribution],
              narrow: Callable[[Mapping[str, BaseDistribution], Collection[str],
                               Mapping[str, tuple[float, float]]], dict[str, BaseDistribution]],
              key: list[Any] | None) -> FrozenTrial | None:
    """A finished stand-in trial holding CMA-ES restarted in ``search_space`` from the
    marginal of the state stored in ``last``; None when that state is not plain CMA-ES of
    the size its mark implies."""
    import cmaes
    from optuna._transform import _SearchSpaceTransform

    old = sampler._restore_optimizer([last])
    if type(old) is not cmaes.CMA:  # separable CMA-ES or CMA-ES with margin: not carried
        return None
    old_key = space_of(last) or [[], []]
    old_fixed, old_ranges = set(old_key[0]), {k: tuple(v) for k, v in old_key[1]}
    old_space = narrow(whole, old_fixed, old_ranges)
    if len(old_space) != old.dim or not search_space:
        return None
    raw_old = _SearchSpaceTransform(old_space, transform_step=True).bounds
    raw_new = _SearchSpaceTransform(search_space, transform_step=True).bounds
    where = {n: i for i, n in enumerate(old_space)}
    n_new = len(search_space)
    scale = np.zeros((n_new, old.dim))
    mean = np.empty(n_new)
    fresh = np.zeros(n_new)
    sigma = float(old._sigma)
    for j, name in enumerate(search_space):
        lo, hi = raw_new[j]
        i = where.get(name)
        if i is not None:  # x_new = (lo_old + x_old (hi_old - lo_old) - lo) / (hi - lo)
            scale[j, i] = (raw_old[i, 1] - raw_old[i, 0]) / (hi - lo)
            mean[j] = (raw_old[i, 0] - lo) / (hi - lo) + scale[j, i] * old._mean[i]
        else:  # released: from the value it was held at, with CMA-ES's initial spread
            held = last.params.get(name)
            one = _SearchSpaceTransform({name: search_space[name]}, transform_step=True,
                                        transform_0_1=True)
            mean[j] = one.transform({name: held})[0] if held is not None else 0.5
            fresh[j] = (_INITIAL_SPREAD / sigma) ** 2
    cov = scale @ np.asarray(old._C) @ scale.T + np.diag(fresh)
    new = cmaes.CMA(mean=np.clip(mean, 0.0, 1.0), sigma=sigma, cov=(cov + cov.T) / 2.0,
                    bounds=np.tile([0.0, 1.0], (n_new, 1)),
                    seed=zlib.crc32(repr(key).encode()) % (2**31 - 2) + 1,
                    n_max_resampling=10 * n_new, population_size=old.population_size,
                    lr_adapt=sampler._lr_adapt)
    new._g = old._g  # the generation under way: its trials are told to the new state
    attrs = sampler._split_optimizer_str(pickle.dumps(new).hex())
    return optuna.trial.create_trial(state=TrialState.COMPLETE, value=last.value,
                                     system_attrs=attrs)
