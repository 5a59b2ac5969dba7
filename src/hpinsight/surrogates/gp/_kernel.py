"""The Gaussian-process surrogate's kernel and its one-dimensional integrals.

See the package docstring (``hpinsight.surrogates.gp``) for the model. Columns are rescaled to ``[0, 1]`` by their measure's bounds;
each contributes one factor to a product kernel, and each factor's integrals over the
column's measure are in closed form (continuous) or finite sums (discrete, categorical).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import erf

from ...space import Categorical, Measure, encoded_bounds, measure_of

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from numpy.typing import NDArray

    from ...space import SearchSpace

#: Discrete columns with more values are integrated as continuous (see ``hpinsight.surrogates.gp``).
MAX_EXACT_POINTS = 1024
#: The shortest length scale a fit may give (``_likelihood.LENGTH_BOUNDS``), in units of
#: the rescaled range [0, 1].
LENGTH_MIN = 1e-2
_SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True, slots=True)
class Column:
    """How one encoded column enters the kernel: its rescaling and its measure."""

    categorical: bool
    low: float
    span: float  # 0 for a single-valued column
    n_choices: int  # categoricals only
    # discrete support on [0, 1], or None if continuous; for a categorical, the codes of
    # the choices measured (None: all ``n_choices`` of them)
    points: NDArray[np.float64] | None
    weights: NDArray[np.float64] | None

    @classmethod
    def of(cls, param: Any) -> Column:
        m: Measure = measure_of(param)
        if isinstance(param, Categorical):
            k = len(param.choices)
            return cls(True, 0.0, 1.0, k, None, None)
        span = m.high - m.low
        if m.points is not None and m.points.size > MAX_EXACT_POINTS:
            # scaled over what the values' measure covers: each value's half step beyond
            # the ends (on [log 1, log 3000] a log integer lost the mass of 1, and 13 %
            # of its variance)
            low, high = encoded_bounds(param, float(param.step or 1) / 2)
            assert m.weights is not None
            head = _wide_cells(m.weights / m.weights.sum())
            if not head:  # every value's cell narrow: integrated as continuous
                return cls(False, low, high - low, 0, None, None)
            points, weights = _head_and_tail(m.points, m.weights, head, low, high)
            return cls(False, low, high - low, 0, points, weights)
        if m.points is None or span == 0:
            return cls(False, m.low, span, 0, None, None)
        assert m.weights is not None
        return cls(False, m.low, span, 0, (m.points - m.low) / span, m.weights / m.weights.sum())

    def scale(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.categorical:
            return x
        if self.span == 0:
            return np.zeros_like(x)
        return (x - self.low) / self.span


#: A discrete column of more than ``MAX_EXACT_POINTS`` values keeps as points those whose
#: cell (the measure's share of each value, Optuna's: on a log scale ``log(v + 1/2) -
#: log(v - 1/2)``) is wider than this share of the range, the head of a log scale; the
#: others are integrated as continuous over their cells, as every value of a linear
#: scale of so many values is. Replacing a value by its cell moves an integral of the
#: kernel by about ``w^2 / (24 l^2)`` of it for a cell of width ``w`` (the midpoint
#: rule): at most 4e-4 at the shortest length scale (``LENGTH_MIN``).
TAIL_CELL = 1.0 / MAX_EXACT_POINTS


def _wide_cells(shares: NDArray[np.float64]) -> int:
    """How many of the first values have a cell wider than :data:`TAIL_CELL` (of a
    range whose cells sum to 1): the values of a log scale's head, each of which holds
    more of the measure than the next; none on a linear scale of so many values."""
    narrow = np.flatnonzero(shares <= TAIL_CELL)
    return int(narrow[0]) if narrow.size else shares.size


def _head_and_tail(
    points: NDArray[np.float64], weights: NDArray[np.float64], head: int, low: float, high: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights (summing to 1, inputs scaled to ``[low, high]``) of a discrete
    measure of many values: its first ``head`` values as they are, and the rest uniform
    over their cells, by composite Gauss-Legendre panels of ``_PANEL_WIDTH`` times the
    shortest length scale (as :func:`_nodes` integrates a continuous column)."""
    span = high - low
    shares = weights / weights.sum()
    start = float(shares[:head].sum())  # the tail's first edge: the head's cells end there
    panels = max(1, math.ceil((1.0 - start) / (_PANEL_WIDTH * LENGTH_MIN)))
    x, w = _GL
    h = (1.0 - start) / panels
    edges = start + np.arange(panels) * h
    tail = (edges[:, None] + 0.5 * h * (x + 1.0)).ravel()
    tail_weights = np.tile(0.5 * h * w, panels) * (float(shares[head:].sum()) / (1.0 - start))
    return (np.concatenate(((points[:head] - low) / span, tail)),
            np.concatenate((shares[:head], tail_weights)))


def make_columns(space: SearchSpace, X: NDArray[np.float64] | None = None,
             keep: Collection[int] = ()) -> tuple[Column, ...]:
    """Every parameter's column; with encoded trials ``X``, a categorical column outside
    ``keep`` is measured uniformly over the choices the trials contain (see ``hpinsight.surrogates.gp``)."""
    out = [Column.of(p) for p in space.params]
    if X is None:
        return tuple(out)
    for j, col in enumerate(out):
        if not col.categorical or j in keep:
            continue
        seen = np.unique(X[~np.isnan(X[:, j]), j])
        if 0 < seen.size < col.n_choices:
            out[j] = Column(True, 0.0, 1.0, int(seen.size), seen.astype(np.float64), None)
    return tuple(out)


def scale_columns(cols: Sequence[Column], X: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.column_stack([c.scale(X[:, j]) for j, c in enumerate(cols)]) if cols else X


def _sq_dist(
    cols: Sequence[Column], A: NDArray[np.float64], B: NDArray[np.float64], ell: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``sum_j D_j / l_j^2``: squared differences (numerical) or mismatches (categorical)."""
    out = np.zeros((A.shape[0], B.shape[0]))
    num = [j for j, c in enumerate(cols) if not c.categorical]
    if num:
        a, b = A[:, num] / ell[num], B[:, num] / ell[num]
        out += (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
        np.maximum(out, 0.0, out=out)
    for j, c in enumerate(cols):
        if c.categorical:
            out += (A[:, j][:, None] != B[:, j][None, :]) / ell[j] ** 2
    return out


def kernel_matrix(cols: Sequence[Column], A: NDArray[np.float64], B: NDArray[np.float64], ell: NDArray[np.float64]) -> NDArray[np.float64]:
    """The product kernel between the rows of ``A`` and of ``B`` (rescaled inputs).

    A NaN entry is an *inactive* parameter. Its factor is 1 against another inactive
    entry and 0 against an active one: the kernel is then a direct sum of the kernel on
    active values and a constant on "inactive", so it stays positive semi-definite, and
    trials where a parameter is inactive say nothing about its effect where it is active.
    """
    nan_a, nan_b = np.isnan(A), np.isnan(B)
    if not (nan_a.any() or nan_b.any()):
        return np.exp(-0.5 * _sq_dist(cols, A, B, ell))
    K = np.exp(-0.5 * _sq_dist(cols, np.where(nan_a, 0.0, A), np.where(nan_b, 0.0, B), ell))
    for j in np.flatnonzero(nan_a.any(axis=0) | nan_b.any(axis=0)):
        K *= nan_a[:, j][:, None] == nan_b[:, j][None, :]
    return K


#: Continuous columns' second moments by composite Gauss-Legendre quadrature: this many
#: nodes per panel, panels of width ``_PANEL_WIDTH`` length scales. Against the closed
#: form, the centred second moment agrees to 5e-12 of its largest entry for every length
#: scale in ``[0.01, 100]`` (``tests/test_gp.py``).
_GL_ORDER = 10
_PANEL_WIDTH = 2.0
#: Columns with more quadrature nodes, choices or values than this get the closed form.
MAX_ROOT_RANK = 128
_GL = np.polynomial.legendre.leggauss(_GL_ORDER)


def _mean(col: Column, ell: float, u: NDArray[np.float64]) -> NDArray[np.float64]:
    """``z_i = E[k(T, u_i)]`` for ``T`` drawn from the column's measure."""
    if col.categorical:
        k = col.n_choices
        return np.full(u.size, (1.0 + (k - 1) * math.exp(-0.5 / ell**2)) / k)
    if col.span == 0:
        return np.ones(u.size)
    if col.points is not None:
        assert col.weights is not None
        return col.weights @ np.exp(-0.5 * ((col.points[:, None] - u[None, :]) / ell) ** 2)
    a = _SQRT2 * ell
    z: NDArray[np.float64] = ell * math.sqrt(math.pi / 2.0) * (erf((1.0 - u) / a) + erf(u / a))
    return z


def _nodes(col: Column, ell: float) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """Points and weights (summing to 1) whose sum integrates products of two kernel
    factors over the column's measure, or None where more than ``MAX_ROOT_RANK`` are needed.

    Exact for discrete columns (their values) and choices; composite Gauss-Legendre on
    panels a few length scales wide for continuous ones, where the integrand is a Gaussian
    of width ``ell / sqrt(2)``.
    """
    if col.categorical:
        k = col.n_choices
        choices = col.points if col.points is not None else np.arange(k, dtype=np.float64)
        return (choices, np.full(k, 1.0 / k)) if k <= MAX_ROOT_RANK else None
    if col.span == 0:
        return np.empty(0), np.empty(0)
    if col.points is not None:
        assert col.weights is not None
        return (col.points, col.weights) if col.points.size <= MAX_ROOT_RANK else None
    panels = math.ceil(1.0 / (_PANEL_WIDTH * ell))
    if panels * _GL_ORDER > MAX_ROOT_RANK:
        return None
    x, w = _GL
    h = 1.0 / panels
    starts = np.arange(panels) * h
    return (starts[:, None] + 0.5 * h * (x + 1.0)).ravel(), np.tile(0.5 * h * w, panels)


def root(col: Column, ell: float, u: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """``A`` of shape (Q, n) with ``A' A`` the centred second moment ``C`` of
    :func:`kernel_integrals`, or None where the column needs more than ``MAX_ROOT_RANK`` nodes.

    ``A[q, i] = sqrt(w_q) (k(t_q, u_i) - z_i)`` over the nodes of :func:`_nodes`, centred
    by the same sum, so ``A' A`` is positive semi-definite and no two nearly equal
    products are subtracted. Effects of one or two columns need only ``A``: their
    variances are ``|A v|^2`` and ``|A_j diag(v) A_k'|_F^2``, with no (n, n) matrix.
    """
    nodes = _nodes(col, ell)
    return None if nodes is None else _root_at(col, ell, u, *nodes)


def _root_at(col: Column, ell: float, u: NDArray[np.float64], t: NDArray[np.float64],
             w: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`root` over the nodes ``t`` with weights ``w``, however many there are."""
    if col.categorical:
        K = np.where(t[:, None] == u[None, :], 1.0, math.exp(-0.5 / ell**2))
    else:
        K = np.exp(-0.5 * ((t[:, None] - u[None, :]) / ell) ** 2)
    K -= w @ K
    K *= np.sqrt(w)[:, None]
    return K


def kernel_integrals(
    col: Column, ell: float, u: NDArray[np.float64], *, second: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``z_i = E[k(T, u_i)]`` and ``C[i, l] = E[k(T, u_i) k(T, u_l)] - z_i z_l`` for ``T``
    drawn from the column's measure."""
    z = _mean(col, ell, u)
    if not second:
        return z, np.empty((0, 0))
    A = root(col, ell, u)
    if A is not None:
        return z, A.T @ A
    if col.categorical:
        k = col.n_choices
        rho = math.exp(-0.5 / ell**2)
        same = u[:, None] == u[None, :]
        W = np.where(same, (1.0 + (k - 1) * rho**2) / k, (2.0 * rho + (k - 2) * rho**2) / k)
        return z, W - np.outer(z, z)
    if col.points is not None:  # more values than a root is worth, but still a finite sum
        assert col.weights is not None
        A = _root_at(col, ell, u, col.points, col.weights)
        return z, A.T @ A
    m = 0.5 * (u[:, None] + u[None, :])
    diff = u[:, None] - u[None, :]
    W = np.exp(-(diff**2) / (4.0 * ell**2)) * (0.5 * ell * math.sqrt(math.pi)) * (erf((1.0 - m) / ell) + erf(m / ell))
    return z, W - np.outer(z, z)


#: Rows per block of a symmetric kernel computed below the diagonal only (``kernel_parts``).
_SYMMETRIC_BLOCK = 256


def _mirror(total: NDArray[np.float64], blocks: Sequence[tuple[int, int]] | None) -> None:
    """Copies the entries above the diagonal blocks from below them (``kernel_parts``)."""
    for lo, hi in blocks or ():
        total[:lo, lo:hi] = total[lo:hi, :lo].T


def kernel_parts(cols: Sequence[Column], A: NDArray[np.float64], B: NDArray[np.float64],
                 ell: NDArray[np.float64], units: Sequence[Sequence[int]],
                 weights: NDArray[np.float64] | None = None, norm: float | None = None,
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The product kernel and the sum of the units' kernels with ``weights`` (units of
    weight 0 left out; all 1 by default) over ``norm`` (by default the number of units
    summed), between the rows of ``A`` and ``B``, without an (n_units, n_A, n_B) array.

    The units' kernels are summed in two threads, half of the units each (numpy releases
    the interpreter lock in its loops): at 2,000 rows and 30 columns this is 120 million
    exponentials, the largest cost of the posterior. Between a set of rows and itself,
    where every unit is one continuous column, its kernels, symmetric to the bit, are
    computed below the diagonal only, in blocks of rows (:data:`_SYMMETRIC_BLOCK`), and
    mirrored: about half the exponentials, the same bits.
    """
    prod = kernel_matrix(cols, A, B, ell)
    w = np.ones(len(units)) if weights is None else np.asarray(weights, dtype=np.float64)

    def one_column(unit: Sequence[int]) -> bool:  # a continuous column without NaN
        j = unit[0]
        return len(unit) == 1 and not cols[j].categorical and not (
            np.isnan(A[:, j]).any() or np.isnan(B[:, j]).any())

    # each unit summed, with its weight and whether it is one continuous column
    summed = [(u, float(w[k]), one_column(u)) for k, u in enumerate(units) if w[k] != 0]
    if not summed:
        return prod, np.zeros_like(prod)
    divisor = float(len(summed)) if norm is None else norm
    n = A.shape[0]
    # between the rows and themselves, (start, end) of each block of rows, computed against
    # the rows up to its end
    blocks = ([(r, min(r + _SYMMETRIC_BLOCK, n)) for r in range(0, n, _SYMMETRIC_BLOCK)]
              if A is B or np.array_equal(A, B, equal_nan=True) else None)

    def partial(group: Sequence[tuple[Sequence[int], float, bool]]) -> NDArray[np.float64]:
        total = np.zeros((A.shape[0], B.shape[0]))
        buf = np.empty(total.size)
        # mirrored only where every term is symmetric to the bit (a kernel of several
        # columns goes through a matrix product, whose sums need not be)
        rows = blocks if blocks and all(single for _, _, single in group) else None
        for unit, weight, single in group:
            m = list(unit)
            if single:
                j = m[0]
                for lo, hi in rows or [(0, A.shape[0])]:
                    stop = hi if rows else B.shape[0]
                    part = buf[:(hi - lo) * stop].reshape(hi - lo, stop)
                    np.subtract.outer(A[lo:hi, j], B[:stop, j], out=part)
                    np.multiply(part, part, out=part)
                    np.multiply(part, -0.5 / ell[j] ** 2, out=part)
                    np.exp(part, out=part)
                    if weight != 1.0:
                        part *= weight
                    total[lo:hi, :stop] += part
            else:
                total += weight * kernel_matrix([cols[i] for i in m], A[:, m], B[:, m], ell[m])
        # every term is symmetric to the bit, so the entries below the diagonal blocks hold
        # what the whole computation puts above them
        _mirror(total, rows)
        return total

    half = (len(summed) + 1) // 2
    if len(summed) > 1 and A.shape[0] * B.shape[0] >= 250_000:
        with ThreadPoolExecutor(max_workers=1) as pool:
            other = pool.submit(partial, summed[half:])
            total = partial(summed[:half])
            total += other.result()
    else:
        total = partial(summed)
    total /= divisor
    return prod, total
