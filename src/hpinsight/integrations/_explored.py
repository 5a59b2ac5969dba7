"""The study as TPE sees it under a restriction: without the trials that explored a
narrowed parameter.

An exploring trial of :class:`~hpinsight.integrations.optuna.ShrinkingSampler` spreads
the fixed and narrowed parameters over their whole ranges, to give the checks of
``shrink_to="auto"`` evidence on them. A narrowed parameter is one that matters, so
spread over its whole range it usually makes the trial a poor one, and the base sampler,
which models it only within its range, reads that value as the value of the free
parameters it proposed. Under TPE that taught it to leave the best branch of a
conditional space: on ``benchmarks/bench_shrink.py``'s ``optim`` the trials after the
first decision took a worse optimizer in up to 45 % of them where the full space's took
none, and a run ended 190 times the full space's best. So TPE is not shown an exploring
trial while any parameter it spread is still narrowed; once those ranges are released,
the trial is an ordinary one again (a trial that found a better region outside a
range, which is what widens it, then teaches the sampler as any other). A trial that
spread fixed parameters alone stays in view: they were fixed for doing nothing, and on
a study where they do nothing, such trials are ordinary samples of the free ones (hiding
them too left TPE without improvement for 60 trials on one seed where it improved).
Other samplers are shown every trial until the same is measured for them (the genetic
ones index the study's trials by number and cannot be shown a part of them)."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import TYPE_CHECKING

from ..adapters._optuna import TRIAL_KEY
from ._study_view import StudyView

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

__all__ = ["explored_names", "unexplored"]


def explored_names(trial: FrozenTrial) -> list[str]:
    """The parameters ``trial`` spread as an exploring trial (empty for any other)."""
    mark = trial.system_attrs.get(TRIAL_KEY)
    names = mark.get("explored") if isinstance(mark, Mapping) else None
    return [str(n) for n in names] if isinstance(names, list) else []


class _Unexplored(StudyView):
    """``study`` without the trials that explored a parameter in ``restricted``."""

    def __init__(self, study: optuna.Study, restricted: Set[str]) -> None:
        super().__init__(study)
        self._restricted = restricted

    def _shown(self, trials: list[FrozenTrial]) -> list[FrozenTrial]:
        return [t for t in trials if not any(n in self._restricted for n in explored_names(t))]


def unexplored(study: optuna.Study, restricted: Set[str]) -> optuna.Study:
    """``study`` without the trials that explored a parameter in ``restricted`` (the
    narrowed ones; itself when there are none), typed as what samplers read of a study."""
    if not restricted:
        return study
    return _Unexplored(study, restricted)  # type: ignore[return-value]  # duck-typed
