"""Reaching the Pareto front of a multi-objective study, as one value per trial.

Which parameters decide whether a configuration reaches the Pareto front? The analyses
of this package take one value per trial, so the front is turned into one: the **share
of the trials that dominate the trial** (that are at least as good in every objective
and better in one). It is 0 on the front and grows the further behind the front a trial
lies, counted in trials; with one objective it is the trial's rank divided by the
number of trials. The ordinary analysis of that value (minimized) gives the importance
of reaching the front, with the same verdicts and intervals as any objective. It is
SPEA2's raw fitness (Zitzler, Laumanns & Thiele 2001) as a share.

Chosen by ``benchmarks/bench_multi_objective.py`` over the additive epsilon indicator
against the front (Zitzler et al. 2003), in units of each objective's quantiles among
the trials: both find the parameters that act and give the ones that do nothing almost
no importance, and the share's main effects were closer to their truth in 10 of 12
cells. The epsilon indicator counts a trial that a front trial equals in one objective
and beats in the other as on the front (no improvement needed where it is equal), which
discrete objectives (a model size, a count) make common; the share counts it as behind.
Optuna's PED-ANOVA, whose multi-objective default contrasts the top 10 % by
non-domination rank with the rest, put 0.07-0.65 of the importance on parameters that
do nothing in the same benchmark.

The estimand depends on where the trials are, as any front computed from trials does:
"the share of *these* trials that dominate it". A sampler that crowds one stretch of the
front weighs being behind that stretch more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .exceptions import InvalidArgumentError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike, NDArray

__all__ = ["FRONT", "FRONT_VALUE_NAME", "dominated_share"]

#: The name that asks for the front instead of one objective (``objective="front"``).
FRONT = "front"
#: What the analysed value of the front is called on every surface.
FRONT_VALUE_NAME = "share of trials dominating it"
#: Rows compared at once: keeps the (rows x n x objectives) comparison under ~40 MB.
_BLOCK_ELEMENTS = 5_000_000


def dominated_share(values: ArrayLike, directions: Sequence[str]) -> NDArray[np.float64]:
    """The share of the rows of ``values`` that dominate each row.

    Parameters
    ----------
    values : array-like of shape (n_trials, n_objectives)
        Finite objective values, one row per trial.
    directions : sequence of {"minimize", "maximize"}, length n_objectives
        Which way each objective is better.

    Returns
    -------
    ndarray of shape (n_trials,)
        For each trial, the number of trials that are at least as good in every objective
        and better in one, divided by ``n_trials``: 0 exactly for the trials on the
        Pareto front.

    Examples
    --------
    >>> from hpinsight._pareto import dominated_share
    >>> dominated_share([[1, 4], [2, 2], [3, 3], [3, 5]], ["minimize", "minimize"])
    array([0.  , 0.  , 0.25, 0.75])
    """
    F = np.asarray(values, dtype=np.float64)
    if F.ndim != 2 or F.shape[1] != len(directions):
        raise InvalidArgumentError(
            f"The 'values' parameter of dominated_share must have shape (n_trials, "
            f"{len(directions)}), one column per direction. Got shape {F.shape} instead.")
    F = F * np.where(np.asarray(directions) == "maximize", -1.0, 1.0)
    n, k = F.shape
    counts = np.zeros(n, dtype=np.int64)
    step = max(1, _BLOCK_ELEMENTS // max(1, n * k))
    for start in range(0, n, step):
        block = F[start:start + step, None, :]
        weak = (F[None, :, :] <= block).all(axis=2)
        strict = (F[None, :, :] < block).any(axis=2)
        counts[start:start + step] = (weak & strict).sum(axis=1)
    shares: NDArray[np.float64] = counts / max(n, 1)
    return shares
