"""A study as a sampler is shown it: a chosen part of its trials, the rest its own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

__all__ = ["StudyView"]


class StudyView:
    """``study`` with the trials :meth:`_shown` keeps (all of them here); every other
    attribute is the study's own. Samplers read trials through ``_get_trials``,
    ``get_trials`` or ``trials``, which all pass through :meth:`_shown`."""

    def __init__(self, study: optuna.Study) -> None:
        self._study = study

    def __getattr__(self, name: str) -> Any:
        return getattr(self._study, name)

    def _shown(self, trials: list[FrozenTrial]) -> list[FrozenTrial]:
        return trials

    def _get_trials(self, deepcopy: bool = True, states: Any = None,
                    use_cache: bool = False) -> list[FrozenTrial]:
        return self._shown(self._study._get_trials(deepcopy=deepcopy, states=states,
                                                   use_cache=use_cache))

    def get_trials(self, deepcopy: bool = True, states: Any = None) -> list[FrozenTrial]:
        return self._get_trials(deepcopy=deepcopy, states=states)

    @property
    def trials(self) -> list[FrozenTrial]:
        return self.get_trials()
