"""Fixtures of the Optuna end-to-end tests.

``spy_on(base)`` records what a base sampler's own model is handed and proposes, per
trial number, while a ``ShrinkingSampler`` wraps it: what tells "the base sampler
searched the restricted space" from "its proposals were redrawn".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import optuna
import pytest


@dataclass
class Spied:
    """Per trial number, filled as the study runs: the search space handed to
    ``base.sample_relative`` and what it proposed (the sampler's own model)."""

    spaces: dict[int, dict[str, Any]] = field(default_factory=dict)
    proposals: dict[int, dict[str, Any]] = field(default_factory=dict)


@pytest.fixture
def spy_on() -> Callable[[optuna.samplers.BaseSampler], Spied]:
    """``spy_on(base)``: a :class:`Spied` of ``base``'s relative sampling."""

    def spy_on(base: optuna.samplers.BaseSampler) -> Spied:
        spied = Spied()
        sample_relative = base.sample_relative

        def spy(study: optuna.Study, trial: Any, search_space: dict[str, Any]) -> dict[str, Any]:
            spied.spaces[trial.number] = dict(search_space)
            out = sample_relative(study, trial, search_space)
            spied.proposals[trial.number] = dict(out)
            return out

        base.sample_relative = spy  # type: ignore[method-assign]
        return spied

    return spy_on
