"""The Gaussian-process surrogate's kernel and its one-dimensional integrals.

See ``_gp`` for the model. Columns are rescaled to ``[0, 1]`` by their measure's bounds;
each contributes one factor to a product kernel, and each factor's integrals over the
column's measure are in closed form (continuous) or finite sums (discrete, categorical).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import erf

from ._encoding import Measure, measure_of
from ._params import Categorical

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from ._space import SearchSpace

#: Discrete columns with more values are integrated as continuous (see ``_gp``).
MAX_EXACT_POINTS = 1024
_SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True, slots=True)
class _Column:
    """How one encoded column enters the kernel: its rescaling and its measure."""

    categorical: bool
    low: float
    span: float  # 0 for a single-valued column
    n_choices: int  # categoricals only
    points: NDArray[np.float64] | None  # discrete support on [0, 1], or None if continuous
    weights: NDArray[np.float64] | None

    @classmethod
    def of(cls, param: Any) -> _Column:
        m: Measure = measure_of(param)
        if isinstance(param, Categorical):
            k = len(param.choices)
            return cls(True, 0.0, 1.0, k, None, None)
        span = m.high - m.low
        if m.points is None or m.points.size > MAX_EXACT_POINTS or span == 0:
            return cls(False, m.low, span, 0, None, None)
        assert m.weights is not None
        return cls(False, m.low, span, 0, (m.points - m.low) / span, m.weights / m.weights.sum())

    def scale(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.categorical:
            return x
        if self.span == 0:
            return np.zeros_like(x)
        return (x - self.low) / self.span


def _columns(space: SearchSpace) -> tuple[_Column, ...]:
    return tuple(_Column.of(p) for p in space.params)


def _scaled(cols: Sequence[_Column], X: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.column_stack([c.scale(X[:, j]) for j, c in enumerate(cols)]) if cols else X


def _sq_dist(
    cols: Sequence[_Column], A: NDArray[np.float64], B: NDArray[np.float64], ell: NDArray[np.float64]
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


def _kernel(cols: Sequence[_Column], A: NDArray[np.float64], B: NDArray[np.float64], ell: NDArray[np.float64]) -> NDArray[np.float64]:
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


def _integrals(
    col: _Column, ell: float, u: NDArray[np.float64], *, second: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``z_i = E[k(T, u_i)]`` and ``C[i, l] = E[k(T, u_i) k(T, u_l)] - z_i z_l`` for ``T``
    drawn from the column's measure."""
    n = u.size
    if col.categorical:
        k = col.n_choices
        rho = math.exp(-0.5 / ell**2)
        z = np.full(n, (1.0 + (k - 1) * rho) / k)
        if not second:
            return z, np.empty((0, 0))
        same = u[:, None] == u[None, :]
        W = np.where(same, (1.0 + (k - 1) * rho**2) / k, (2.0 * rho + (k - 2) * rho**2) / k)
        return z, W - np.outer(z, z)
    if col.span == 0:
        return np.ones(n), np.zeros((n, n)) if second else np.empty((0, 0))
    if col.points is not None:
        assert col.weights is not None
        Kg = np.exp(-0.5 * ((col.points[:, None] - u[None, :]) / ell) ** 2)  # (G, n)
        z = col.weights @ Kg
        if not second:
            return z, np.empty((0, 0))
        centred = Kg - z  # E[(k - z)(k - z)'] directly: no difference of two near-equal products
        return z, centred.T @ (col.weights[:, None] * centred)
    a = _SQRT2 * ell
    z = ell * math.sqrt(math.pi / 2.0) * (erf((1.0 - u) / a) + erf(u / a))
    if not second:
        return z, np.empty((0, 0))
    m = 0.5 * (u[:, None] + u[None, :])
    diff = u[:, None] - u[None, :]
    W = np.exp(-(diff**2) / (4.0 * ell**2)) * (0.5 * ell * math.sqrt(math.pi)) * (erf((1.0 - m) / ell) + erf(m / ell))
    return z, W - np.outer(z, z)
