"""Does a fitted model miss an effect of a parameter? Its out-of-sample errors tell.

A surrogate that captures a parameter's effect leaves errors that do not depend on that
parameter; one that misses it (a V-shaped effect the fit smoothed away, say) leaves
errors that rise and fall with it. For every column this module groups the trials by
the column's value (fifths of its active trials by rank; a choice's categories) and
tests whether the errors' distributions differ between the groups (Kruskal & Wallis
1952: ranks, so a few extreme errors do not decide it). The errors must be
out-of-sample (leave-one-out for a Gaussian process, out-of-bag for a forest): an
interpolating model's in-sample errors are zero wherever it is wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import kruskal, rankdata

from ..exceptions import InvalidArgumentError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

__all__ = ["RESIDUAL_GROUPS", "residual_dependence"]

#: A numeric column's active trials are split into this many groups of equal size by
#: rank (ties stay together): enough to show a V (two halves of a V have equal means).
RESIDUAL_GROUPS = 5
#: Groups with fewer trials than this are left out of the test.
MIN_GROUP = 3


def residual_dependence(X: NDArray[np.float64], categorical: Sequence[bool], residuals: NDArray[np.float64],
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per column, whether ``residuals`` depend on its values, and by how much.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_columns)
        The rows' values (NaN: inactive; such rows are left out of that column's test).
        Only their order matters, and for a categorical column which rows are equal.
    categorical : sequence of bool
        Per column: group by category instead of by rank.
    residuals : ndarray of shape (n_rows,)
        Out-of-sample errors of the model on the rows.

    Returns
    -------
    pvalues : ndarray of shape (n_columns,)
        The Kruskal-Wallis p-value of the residuals grouped by the column's values.
    spread : ndarray of shape (n_columns,)
        The standard deviation of the groups' mean residuals (weighted by their sizes),
        in the residuals' units: the size of the effect the model missed, as far as the
        groups resolve it.

    Both are NaN where fewer than two groups have ``MIN_GROUP`` rows, or every residual
    in them ties.
    """
    n, d = X.shape
    if len(categorical) != d or residuals.shape != (n,):
        raise InvalidArgumentError(f"residual_dependence: {d} columns, {len(categorical)} flags "
                                   f"and {residuals.shape} residuals for {n} rows; they must match",
                                   function="residual_dependence")
    pvalues, spread = np.full(d, np.nan), np.full(d, np.nan)
    for j in range(d):  # one test per column, each vectorized over its rows
        active = ~np.isnan(X[:, j])
        u, r = X[active, j], residuals[active]
        if u.size < 2 * MIN_GROUP:
            continue
        if categorical[j]:
            group = np.unique(u, return_inverse=True)[1]
        else:
            group = np.minimum((rankdata(u) - 0.5) * RESIDUAL_GROUPS // u.size,
                               RESIDUAL_GROUPS - 1).astype(np.intp)
        sizes = np.bincount(group)
        used = np.flatnonzero(sizes >= MIN_GROUP)
        samples = [r[group == g] for g in used]
        if len(samples) < 2 or np.ptp(np.concatenate(samples)) == 0:
            continue
        pvalues[j] = float(kruskal(*samples).pvalue)
        means = np.array([x.mean() for x in samples])
        w = sizes[used] / sizes[used].sum()
        spread[j] = float(np.sqrt(w @ (means - w @ means) ** 2))
    return pvalues, spread
