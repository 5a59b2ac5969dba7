"""Exact leaf partitions and marginal predictions of one regression tree.

Hutter, Hoos & Leyton-Brown (ICML 2014), Section 2 (Algorithm 1, Theorem 6).

A tree splits column ``j`` only at its own thresholds ``t_1 < ... < t_K``, so
the column's axis falls into ``K + 1`` *cells* ``(-inf, t_1], ..., (t_K, inf)``
and every leaf covers a contiguous run ``[lo, hi)`` of cells in each column.
A leaf's extent in a column is the measure of its cells (``Measure.cell_weights``),
its volume the product over columns.

The marginal prediction of a subset ``U`` of columns (Eq. 1 / Theorem 6) is
constant on the product of ``U``'s cells; its value on a cell is the sum over
leaves covering it of ``volume * value / prod_{j in U} extent_j``. We build it
with a difference array: each leaf adds its contribution at the ``2^|U|``
corners of its box of cells, and a cumulative sum along each axis of ``U``
spreads it -- ``O(L + prod K_j)`` per subset instead of ``O(L * prod K_j)``,
with no per-cell Python loop.

Leaves with zero volume (a discrete column whose values all fall outside the
leaf) contribute to no marginal at any point of positive mass and are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, product
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from ...space import Measure
    from ._forest import TreeArrays


@dataclass(frozen=True, slots=True)
class Partition:
    """The leaf partition of one tree over the encoded space, with its measure.

    Attributes
    ----------
    thresholds : list of ndarray
        Sorted distinct split thresholds of each column.
    cell_weights : list of ndarray
        Mass of each column's ``K + 1`` cells under the column's measure.
    lo, hi : ndarray of shape (n_leaves, n_columns)
        Each kept leaf covers cells ``lo <= c < hi`` of each column.
    extent : ndarray of shape (n_leaves, n_columns)
        Mass of each leaf's cell run per column.
    volume : ndarray of shape (n_leaves,)
        Product of the extents (the leaf's probability).
    value : ndarray of shape (n_leaves,)
        Leaf predictions.
    mean : float
        The tree's mean prediction over the space, ``f_0``.
    variance : float
        The tree's prediction variance over the space, ``V`` (Eq. 5).
    """

    thresholds: list[NDArray[np.float64]]
    cell_weights: list[NDArray[np.float64]]
    lo: NDArray[np.intp]
    hi: NDArray[np.intp]
    extent: NDArray[np.float64]
    volume: NDArray[np.float64]
    value: NDArray[np.float64]
    mean: float
    variance: float

    def cells_of(self, column: int, x: NDArray[np.float64]) -> NDArray[np.intp]:
        """Cell index of encoded values ``x`` in ``column`` (float32 routing)."""
        x32 = np.asarray(x, dtype=np.float32).astype(np.float64)
        return np.searchsorted(self.thresholds[column], x32, side="left")


def compute_partition(tree: TreeArrays, measures: Sequence[Measure]) -> Partition:
    """Algorithm 1 of the paper, vectorized level by level over the tree.

    Parameters
    ----------
    tree : TreeArrays
    measures : sequence of Measure
        One per encoded column.
    """
    d = len(measures)
    inner = tree.left >= 0
    feat = tree.feature[inner]
    thr = tree.threshold[inner]
    thresholds = [np.unique(thr[feat == j]) for j in range(d)]
    n_cells = np.array([t.size + 1 for t in thresholds], dtype=np.intp)

    # Position of each inner node's threshold among its column's thresholds.
    split_cell = np.zeros(tree.left.size, dtype=np.intp)
    for j in np.unique(feat):
        nodes = np.flatnonzero(inner & (tree.feature == j))
        split_cell[nodes] = np.searchsorted(thresholds[j], tree.threshold[nodes]) + 1

    n_nodes = tree.left.size
    lo = np.zeros((n_nodes, d), dtype=np.intp)
    hi = np.empty((n_nodes, d), dtype=np.intp)
    hi[0] = n_cells
    frontier = np.array([0], dtype=np.intp)
    while frontier.size:
        frontier = frontier[tree.left[frontier] >= 0]
        if not frontier.size:
            break
        left, right, f, k = (
            tree.left[frontier],
            tree.right[frontier],
            tree.feature[frontier],
            split_cell[frontier],
        )
        lo[left] = lo[frontier]
        hi[left] = hi[frontier]
        lo[right] = lo[frontier]
        hi[right] = hi[frontier]
        hi[left, f] = np.minimum(hi[frontier, f], k)
        lo[right, f] = np.maximum(lo[frontier, f], k)
        frontier = np.concatenate((left, right))

    leaves = np.flatnonzero(~inner)
    lo, hi = lo[leaves], hi[leaves]
    weights = [m.cell_weights(t) for m, t in zip(measures, thresholds, strict=True)]
    cum = np.concatenate([np.concatenate(([0.0], np.cumsum(w))) for w in weights])
    offsets = np.concatenate(([0], np.cumsum(n_cells + 1)[:-1]))
    extent = np.maximum(cum[offsets + hi] - cum[offsets + lo], 0.0)
    volume = np.prod(extent, axis=1)
    keep = volume > 0
    value = tree.value[leaves][keep]
    volume = volume[keep]
    total = volume.sum()
    mean = float(volume @ value / total) if total > 0 else 0.0
    centered = value - mean
    variance = float(volume @ (centered * centered) / total) if total > 0 else 0.0
    if total > 0 and np.ptp(value) == 0:
        variance = 0.0
    return Partition(
        thresholds=thresholds,
        cell_weights=weights,
        lo=lo[keep],
        hi=hi[keep],
        extent=extent[keep],
        volume=volume / total if total > 0 else volume,
        value=value,
        mean=mean,
        variance=variance,
    )


def marginal_grid(part: Partition, columns: Sequence[int]) -> NDArray[np.float64]:
    """Exact marginal prediction ``a_U`` on the product of ``U``'s cells (Theorem 6).

    Parameters
    ----------
    part : Partition
    columns : sequence of int
        The subset ``U`` (distinct columns, any order; axes follow this order).

    Returns
    -------
    ndarray of shape (K_u1 + 1, ..., K_uk + 1)
        ``a_U`` on each cell, in the units of the tree's predictions.
    """
    cols = list(columns)
    shape = tuple(part.thresholds[c].size + 2 for c in cols)
    if not cols:
        return np.array(part.mean)
    r = part.volume * part.value / np.prod(part.extent[:, cols], axis=1)
    size = int(np.prod(shape))
    acc = np.zeros(size)
    for corner in product((0, 1), repeat=len(cols)):
        idx = tuple(
            (part.hi[:, c] if use_hi else part.lo[:, c]) for c, use_hi in zip(cols, corner, strict=True)
        )
        flat = np.ravel_multi_index(idx, shape)
        sign = -1.0 if sum(corner) % 2 else 1.0
        acc += np.bincount(flat, weights=sign * r, minlength=size)
    grid = acc.reshape(shape)
    for axis in range(len(cols)):
        np.cumsum(grid, axis=axis, out=grid)
    return grid[tuple(slice(0, s - 1) for s in shape)]


def main_effects(part: Partition) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
    """Centered main-effect functions ``f_j`` and their variances ``V_j`` for all columns.

    All columns at once: one flat difference array with a segment per column.

    Returns
    -------
    effects : list of ndarray
        ``f_j = a_j - f_0`` on each column's cells.
    variances : ndarray of shape (n_columns,)
        ``V_j = sum_c w_jc f_j(c)^2`` (Eq. 6 for ``|U| = 1``).
    """
    d = part.lo.shape[1]
    seg = np.array([t.size + 2 for t in part.thresholds], dtype=np.intp)
    start = np.concatenate(([0], np.cumsum(seg)[:-1]))
    centered = part.value - part.mean
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (part.volume * centered)[:, None] / part.extent
    idx = np.concatenate(((start + part.lo).ravel(), (start + part.hi).ravel()))
    w = np.concatenate((r.ravel(), -r.ravel()))
    acc = np.cumsum(np.bincount(idx, weights=w, minlength=int(seg.sum())))
    base = np.concatenate(([0.0], acc[start[1:] - 1]))
    effects = [acc[start[j] : start[j] + seg[j] - 1] - base[j] for j in range(d)]
    variances = np.array([float(part.cell_weights[j] @ (effects[j] ** 2)) for j in range(d)])
    return effects, variances


def pair_effects(
    part: Partition,
    mains: Sequence[NDArray[np.float64]],
    pairs: Sequence[tuple[int, int]] | None = None,
    *,
    keep: bool = False,
    max_block: int = 1 << 22,
) -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], NDArray[np.float64]]]:
    """Pure pairwise interaction variances ``V_ij`` (Eq. 4 and 6 for ``|U| = 2``).

    For each first column ``i`` the 2-D difference arrays of all partners ``j``
    are laid side by side in one block (split when it would exceed
    ``max_block`` cells), so the work per tree is a handful of NumPy calls per
    column, not per pair.

    Returns
    -------
    variances : dict
        ``(i, j) -> V_ij`` for ``i < j``.
    effects : dict
        ``(i, j) -> f_ij`` on the cell grid, only when ``keep`` is true.
    """
    d = part.lo.shape[1]
    if pairs is None:
        pairs = list(combinations(range(d), 2))
    partners: dict[int, list[int]] = {}
    for i, j in pairs:
        a, b = (i, j) if i < j else (j, i)
        partners.setdefault(a, []).append(b)
    n_cells = np.array([t.size + 1 for t in part.thresholds], dtype=np.intp)
    centered = part.value - part.mean
    variances: dict[tuple[int, int], float] = {}
    effects: dict[tuple[int, int], NDArray[np.float64]] = {}
    for i, js in partners.items():
        rows = int(n_cells[i]) + 1
        chunk: list[int] = []
        width = 0
        for j in [*sorted(set(js)), -1]:
            w = int(n_cells[j]) + 1 if j >= 0 else 0
            if chunk and (j < 0 or rows * (width + w) > max_block):
                _pair_block(part, mains, centered, i, chunk, variances, effects, keep)
                chunk, width = [], 0
            if j >= 0:
                chunk.append(j)
                width += w
    return variances, effects


def _pair_block(
    part: Partition,
    mains: Sequence[NDArray[np.float64]],
    centered: NDArray[np.float64],
    i: int,
    js: list[int],
    variances: dict[tuple[int, int], float],
    effects: dict[tuple[int, int], NDArray[np.float64]],
    keep: bool,
) -> None:
    ki = part.thresholds[i].size + 1
    seg = np.array([part.thresholds[j].size + 2 for j in js], dtype=np.intp)
    start = np.concatenate(([0], np.cumsum(seg)[:-1]))
    width = int(seg.sum())
    rows = ki + 1
    jj = np.asarray(js)
    r = (part.volume * centered / part.extent[:, i])[:, None] / part.extent[:, jj]
    lo_i, hi_i = part.lo[:, i][:, None], part.hi[:, i][:, None]
    lo_j, hi_j = start + part.lo[:, jj], start + part.hi[:, jj]
    idx = np.concatenate(
        ((lo_i * width + lo_j).ravel(), (lo_i * width + hi_j).ravel(),
         (hi_i * width + lo_j).ravel(), (hi_i * width + hi_j).ravel())
    )
    wts = np.concatenate((r.ravel(), -r.ravel(), -r.ravel(), r.ravel()))
    grid = np.asarray(np.bincount(idx, weights=wts, minlength=rows * width), dtype=np.float64).reshape(rows, width)
    np.cumsum(grid, axis=0, out=grid)
    np.cumsum(grid, axis=1, out=grid)
    grid = grid - np.concatenate((np.zeros((rows, 1)), grid[:, start[1:] - 1]), axis=1).repeat(seg, axis=1)
    wi = part.cell_weights[i]
    fi = mains[i]
    for n, j in enumerate(js):
        a_ij = grid[:ki, start[n] : start[n] + seg[n] - 1]
        f_ij = a_ij - fi[:, None] - mains[j][None, :]
        variances[(i, j)] = float(wi @ (f_ij * f_ij) @ part.cell_weights[j])
        if keep:
            effects[(i, j)] = f_ij


def subset_effect(
    part: Partition,
    columns: tuple[int, ...],
    lower: dict[tuple[int, ...], NDArray[np.float64]],
) -> NDArray[np.float64]:
    """Pure effect ``f_U`` of any subset (Eq. 4), given ``f_W`` for all its proper subsets.

    ``lower`` maps each sorted proper subset ``W`` (non-empty) to its effect on
    ``W``'s cells; the empty set's effect is 0 because values are centered.
    """
    centered_part = Partition(
        part.thresholds, part.cell_weights, part.lo, part.hi, part.extent, part.volume,
        part.value - part.mean, 0.0, part.variance,
    )
    f = marginal_grid(centered_part, columns)
    k = len(columns)
    for size in range(1, k):
        for sub in combinations(range(k), size):
            shape = [1] * k
            for a in sub:
                shape[a] = f.shape[a]
            f = f - lower[tuple(columns[a] for a in sub)].reshape(shape)
    return f


def subset_variance(part: Partition, columns: tuple[int, ...], effect: NDArray[np.float64]) -> float:
    """``V_U = sum over U's cells of (product of cell masses) * f_U^2``."""
    out = effect * effect
    for c in columns:
        out = np.tensordot(part.cell_weights[c], out, axes=([0], [0]))
    return float(out)
