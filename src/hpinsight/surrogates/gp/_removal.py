"""Does an interaction come back when it is taken out of the data? The check of the
interactions a Gaussian process calls resolved.

A product kernel can make an interaction up: two parameters that each act alone, sampled
by an optimizer that moved them together, are explained as well by a joint bump as by two
separate effects, and the fitted interaction then holds a share that no shadow reaches
(a shadow is shuffled, so it is never moved together with a good parameter). The check
subtracts the interaction as fitted (its pure effect, the joint marginal minus both main
effects) from every trial's value and fits the model again. A real interaction is gone
from the new data, and the new fit gives the pair almost nothing; one the kernel's form
produces from the rest of the data comes back. The share that comes back is a null for
that pair beside the shadows' (:attr:`hpinsight.results.Importance.regrown`).

Measured on the calibration functions (``benchmarks/bench_effect_removal.py``: 200
trials, TPE and random search, SNR 4 and noise-free, 3 seeds): of 19 pairs with true
share 0 that the shadows alone resolved, 18 came back above a tenth of their share
(median 63 %) and 15 are no longer resolved; of 20 real pairs none came back above a
tenth of theirs (the largest 9.5 %), and all 20 stay resolved. The check costs one fit of
the model without shadows or refits per pair checked, and only pairs the shadows would
resolve are checked. Main effects are not: one that exists only where the optimizer
sampled does not come back when removed (the trials do show it there), so the check
cannot tell it from a real one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import LinAlgError

from ._blas import on_one_blas_thread
from ._decompose import decompose_gp
from ._fit import REFIT_ROWS, fit_gp
from ._parallel import two_at_a_time

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from ...space import SearchSpace
    from ._model import FittedGP


@on_one_blas_thread
def regrown_shares(
    model: FittedGP, space: SearchSpace, X: NDArray[np.float64], y: NDArray[np.float64],
    pairs: Sequence[tuple[int, int]], centre: float, seed: int | None,
) -> NDArray[np.float64]:
    """For every pair of columns, the share of the variance its pure interaction holds in
    a model fit to ``y`` minus the interaction ``model`` fitted; NaN where the check
    does not apply (a column inactive in some trial: the pure interaction is not defined
    at those trials).

    ``X`` (encoded, rows in trial order) and ``y`` are what ``model`` was fit on, and
    ``centre`` its mean prediction over the space (the mean of the draws' ``f_0``). The
    new model is fit as ``model`` was (hyperparameters from both starting points, the
    same number of bootstrap draws, pruned if it was), without shadows or refits, on at most
    ``REFIT_ROWS`` of the rows, and the share is the mean over its draws, as the pair's
    own.
    """
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, REFIT_ROWS, replace=False)) if n > REFIT_ROWS else np.arange(n)
    Xr, yr = X[rows], np.asarray(y, dtype=np.float64)[rows]
    missing = np.isnan(Xr)

    def share(pair: tuple[int, int]) -> float:
        a, b = pair
        if missing[:, a].any() or missing[:, b].any():
            return math.nan
        effect = _pure_pair(model, Xr[:, a], Xr[:, b], a, b, centre)
        try:
            again = fit_gp(space, Xr, yr - effect, n_draws=model.n_draws, seed=seed,
                           prune=model.pruned is not None)
        except LinAlgError:
            return math.nan
        v, total, _ = decompose_gp(again, [(a, b)])
        valid = total > 0
        return float((v[valid, 0] / total[valid]).mean()) if valid.any() else 0.0

    return np.array(two_at_a_time(share, pairs), dtype=np.float64)


def _pure_pair(model: FittedGP, xa: NDArray[np.float64], xb: NDArray[np.float64], a: int, b: int,
               centre: float) -> NDArray[np.float64]:
    """The pure interaction of columns ``a`` and ``b`` (mean over draws, objective units)
    at the encoded points ``(xa[i], xb[i])``: ``f_ab - f_a - f_b + f_0`` from the exact
    marginals on the points' own values."""
    ga, ia = np.unique(xa, return_inverse=True)
    gb, ib = np.unique(xb, return_inverse=True)
    joint = model.marginal_per_draw((a, b), (ga, gb)).mean(axis=0)
    ma = model.marginal_per_draw((a,), (ga,)).mean(axis=0)
    mb = model.marginal_per_draw((b,), (gb,)).mean(axis=0)
    return np.asarray(joint[ia, ib] - ma[ia] - mb[ib] + centre, dtype=np.float64)
