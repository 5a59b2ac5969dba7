"""What a live refit computes, by name, in this process or in the refit process.

:class:`~._live.LiveFanova` asks for a task by name and :mod:`._worker` runs the same
table in its child process; this module imports neither, so the two do not import
each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._fanova_result import FanovaResult
    from .._regions_result import RegionsResult

__all__ = ["TASKS", "confidence_regions"]


def confidence_regions(
    result: FanovaResult,
    *,
    top: int,
    max_splits: int = 3,
    n_samples: int = 500,
    seed: int | None = None,
) -> dict[str, RegionsResult]:
    """PDPs with bands of the ``top`` most important parameters, split into regions.

    Returns ``{name: RegionsResult}``; ``tree.leaf_for(incumbent)`` is the incumbent's
    region (see :attr:`LiveResults.incumbent_regions`).
    """
    from .._pdp import partial_dependence
    from .._regions import confidence_split

    names = [imp.params[0] for imp in result.ranking(order=1)[:top]]
    return {
        name: confidence_split(
            partial_dependence(result, params=name, n_samples=n_samples, seed=seed),
            max_splits=max_splits,
        )
        for name in names
    }


def _fanova_task(*args: Any, **kwargs: Any) -> Any:
    from .._fanova import fanova

    return fanova(*args, **kwargs)


def _subspace_task(*args: Any, **kwargs: Any) -> Any:
    from .._subspace import suggest_subspace

    return suggest_subspace(*args, **kwargs)


def _subspace_spans_task(*args: Any, **kwargs: Any) -> Any:
    from .._subspace import subspace_and_spans

    return subspace_and_spans(*args, **kwargs)


#: What :class:`LiveFanova` computes, by name, here or in the refit process.
TASKS: dict[str, Callable[..., Any]] = {
    "fanova": _fanova_task, "regions": confidence_regions, "subspace": _subspace_task,
    "subspace_spans": _subspace_spans_task,
}
