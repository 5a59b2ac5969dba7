"""How large an effect of each parameter the trials could hide from the fitted model.

A parameter is "indistinguishable from nothing" when its share does not exceed a
shadow's (``_fit._shadow_null``). That compares it with a parameter that does nothing; it
does not say whether the trials could have shown an effect of it at all. Where an
optimizer left most of a parameter's range unvisited, or the noise is large against the
trials it has, an effect that matters fits the trials as well as no effect does.

The check asks the fitted model itself. To its covariance of the standardized objective,
``K`` (signal and noise), add a term ``g`` of the one parameter alone: a squared
exponential of length scale ``HIDDEN_LENGTH`` (in units of the parameter's range) with
prior variance ``c``, the model's whole variance over the space -- an effect as large as
everything the model explains. ``g`` is represented by its values on ``T`` quadrature
nodes ``t`` of the parameter's measure (``g(x) = k(x, t) k(t, t)^-1 g(t)``, the nodes of
:func:`nodes`), so that given the trials its values on the nodes have the covariance

    ``C = k_tt (k_tt / c + M)^-1 k_tt``,  ``M = Psi' K^-1 Psi``,
    ``Psi = k(u, t)`` (the trials' values of the parameter against the nodes),

the same as with ``g``'s own kernel on the trials up to the nodes' interpolation (the
tests compare both). The expected variance over the space of what the trials leave
uncertain, ``w' diag(C) - w' C w`` (``w`` the nodes' weights), over ``c``, is the share
an effect could hold that these trials cannot rule out (:meth:`FittedGP.hidden_shares`):
near 0 where they cover the range densely with little noise, up to ``0.43`` where they
leave all of it unvisited (the prior's expected variance over a unit range at this
length scale, as a share of ``c``). Trials where the parameter is inactive say nothing about it (their row of
``Psi`` is 0).

Only ``M`` depends on the trials, through ``K``'s Cholesky factor, which the fit already
has for its leave-one-out errors: one triangular solve with ``T`` columns per parameter.

The same question of a term of two parameters (:func:`shift_shares`) asks how much of a
main effect an interaction that the trials cannot rule out could shift: where an
optimizer clustered one parameter, another's effect is seen only there
(:attr:`~hpinsight.results.Importance.shift`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve, solve_triangular

from ._kernel import Column, kernel_matrix

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

#: The length scale, in units of a parameter's range, of the effect the check asks about:
#: a smooth effect with one or two turns over the range (a bowl, a slope, a V rounded off).
HIDDEN_LENGTH = 0.3
#: Gauss-Legendre nodes per continuous parameter (a squared exponential of length scale
#: 0.3 over a unit range is represented on 12 nodes to about 1e-6).
HIDDEN_NODES = 12
_GL = np.polynomial.legendre.leggauss(HIDDEN_NODES)


@dataclass(frozen=True, slots=True)
class HiddenTerm:
    """What the trials say about an added effect of one parameter: its nodes' weights
    ``w``, the effect's kernel on the nodes ``k_tt`` and ``M = Psi' K^-1 Psi``."""

    weights: NDArray[np.float64]
    k_tt: NDArray[np.float64]
    m: NDArray[np.float64]

    def share(self, c: float) -> float:
        """The expected variance over the space of the part of an effect with prior
        variance ``c`` that the trials leave uncertain, over ``c``."""
        if not c > 0:
            return math.nan
        w, k, m = self.weights, self.k_tt, self.m
        # C = k (k / c + m)^-1 k: no difference of large terms, which noise-free trials
        # (``m`` in the millions) would lose to rounding
        a = k / c + m
        a[np.diag_indices_from(a)] += 1e-12 * max(float(np.trace(a)), 1e-300)
        try:
            cov = k @ solve(a, k, assume_a="pos", check_finite=False)
        except LinAlgError:
            return math.nan
        spread = float(w @ np.diag(cov) - w @ cov @ w)
        return max(spread, 0.0) / c


def nodes(col: Column) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Quadrature nodes of a column's measure (rescaled inputs) and their weights: a
    categorical's choices, a discrete column's values (when few), else Gauss-Legendre."""
    if col.categorical:
        t = col.points if col.points is not None else np.arange(col.n_choices, dtype=np.float64)
        return t, np.full(t.size, 1.0 / t.size)
    if col.points is not None and col.weights is not None and col.points.size <= 2 * HIDDEN_NODES:
        return col.points, col.weights
    return (_GL[0] + 1.0) / 2.0, _GL[1] / 2.0


def hidden_terms(cols: Sequence[Column], U: NDArray[np.float64],
                 chol: NDArray[np.float64]) -> tuple[HiddenTerm, ...]:
    """Every column's :class:`HiddenTerm`, from the rescaled trials ``U`` (NaN: inactive)
    and the lower Cholesky factor ``chol`` of the model's covariance ``K`` on them."""
    ell = np.array([HIDDEN_LENGTH])
    psis, parts = [], []
    for j, col in enumerate(cols):
        t, w = nodes(col)
        u = U[:, j]
        psi = np.zeros((u.size, t.size))
        active = ~np.isnan(u)
        psi[active] = kernel_matrix([col], u[active, None], t[:, None], ell)
        psis.append(psi)
        parts.append((w, kernel_matrix([col], t[:, None], t[:, None], ell)))
    if not psis:
        return ()
    # one solve for every column's nodes: S = L^-1 Psi, M = S' S
    S = solve_triangular(chol, np.hstack(psis), lower=True, check_finite=False)
    out, start = [], 0
    for (w, k_tt), psi in zip(parts, psis, strict=True):
        block = S[:, start:start + psi.shape[1]]
        start += psi.shape[1]
        out.append(HiddenTerm(weights=w, k_tt=k_tt, m=block.T @ block))
    return tuple(out)


# -- what an interaction the trials cannot rule out could shift ----------------------------
#: The bounds, in units of each parameter's range, of the length scales of the term of two
#: parameters that :func:`shift_shares` adds: the model's own length scale of each, within
#: them (shorter than the model's own would ask about detail the model does not resolve;
#: longer than ``HIDDEN_LENGTH``, about nothing an optimizer's gaps could hide).
SHIFT_LENGTHS = (0.1, HIDDEN_LENGTH)


#: Distinct values per parameter beyond which :func:`shift_shares` bins a parameter's
#: trials to this many equal cells of its range (their centres stand for them): the work
#: per pair then no longer grows with the trials, and a cell of 1/256 of the range moves
#: a kernel value of length scale 0.1 by under 2 %.
SHIFT_BINS = 256


@dataclass(frozen=True, slots=True)
class _Values:
    """A column's trials by their distinct (or binned) values: which value each trial has
    (``which``), the node weights ``w``, the kernel on the nodes ``k_tt`` and ``q``, per
    value, the outer product of its kernel row against the nodes with itself (V, T * T)."""

    which: NDArray[np.intp]
    w: NDArray[np.float64]
    k_tt: NDArray[np.float64]
    q: NDArray[np.float64]


def _values(col: Column, u: NDArray[np.float64], ell: float) -> _Values:
    """:class:`_Values` of a column with every trial active, at length scale ``ell``."""
    t, w = nodes(col)
    length = np.array([ell])
    vals, which = np.unique(u, return_inverse=True)
    if vals.size > SHIFT_BINS:
        which = np.minimum((u * SHIFT_BINS).astype(np.intp), SHIFT_BINS - 1)
        vals = (np.arange(SHIFT_BINS) + 0.5) / SHIFT_BINS
    psi = kernel_matrix([col], vals[:, None], t[:, None], length)
    q = (psi[:, :, None] * psi[:, None, :]).reshape(vals.size, t.size * t.size)
    return _Values(which.ravel(), w, kernel_matrix([col], t[:, None], t[:, None], length), q)


def shift_shares(cols: Sequence[Column], U: NDArray[np.float64], length_scales: NDArray[np.float64],
                 noise: float, c: float, candidates: Sequence[int]) -> list[tuple[float, int]]:
    """For each column ``j`` of ``candidates``: how much of its main effect an interaction
    with one other column could shift that the trials cannot rule out, the largest over
    the other columns, and that column (``(nan, -1)`` where none is checked).

    For the pair ``(j, k)``, a term ``g(x_j, x_k)`` of the two alone: a product of
    squared exponentials with the model's own length scales, clipped to
    ``SHIFT_LENGTHS``, represented on the tensor product of both columns' nodes
    (:func:`nodes`) as :class:`HiddenTerm` represents one column's term, with prior
    variance ``c`` (the model's whole variance, standardized). Given the trials' values
    of ``g`` with the model's ``noise`` alone (a term the model would add to what it
    fits: where a trial is, it pins ``g`` down), its values on the nodes have the
    covariance ``C = k_tt (k_tt / c + M)^-1 k_tt``, ``M = Psi' Psi / noise``. The part of
    ``j``'s main effect that ``g`` adds is its average over ``k``, ``m = A g`` (``A``: the
    ``k`` nodes' weights); the expected variance over ``j`` of what the trials leave
    open of it, ``w' diag(A C A') - w' A C A' w``, over ``c``, is the share returned.
    Near 0 where the trials cover the pair's plane at the model's resolution; large where
    an optimizer left part of it empty (a main effect seen only where the other
    parameter's values cluster, which an interaction could cancel elsewhere). Columns with
    inactive trials (conditional parameters) are neither candidates nor partners: their
    plane with any other column is empty wherever they are inactive, which says nothing
    about an interaction where they are active.

    ``M`` sums over the trials by the pair's distinct values (``SHIFT_BINS``), one
    product of a count table with each column's kernel rows, and only ``A C A'`` is
    formed: a Cholesky factorization and a solve with as many columns as ``j`` has nodes.
    """
    n, d = U.shape
    if not c > 0 or not noise > 0 or n == 0:
        return [(math.nan, -1)] * len(candidates)
    low, high = SHIFT_LENGTHS
    complete = [j for j in range(d) if not np.isnan(U[:, j]).any()]
    parts = {j: _values(cols[j], U[:, j], float(np.clip(length_scales[j], low, high))) for j in complete}
    out: list[tuple[float, int]] = []
    for j in candidates:
        if j not in parts:
            out.append((math.nan, -1))
            continue
        pj = parts[j]
        tj = pj.w.size
        best, partner = -math.inf, -1
        for k in complete:
            if k == j:
                continue
            pk = parts[k]
            tk = pk.w.size
            vj, vk = pj.q.shape[0], pk.q.shape[0]
            counts = np.bincount(pj.which * vk + pk.which, minlength=vj * vk).reshape(vj, vk)
            # M over ((a, a'), (b, b')), then ordered as the pair's nodes ((a, b), (a', b'))
            m = (pj.q.T @ (counts @ pk.q)).reshape(tj, tj, tk, tk).transpose(0, 2, 1, 3)
            a = np.kron(pj.k_tt, pk.k_tt) / c + m.reshape(tj * tk, tj * tk) / noise
            a[np.diag_indices_from(a)] += 1e-12 * max(float(np.trace(a)), 1e-300)
            b = np.kron(pj.k_tt, pk.w @ pk.k_tt)  # A k_tt: the term's average over k
            try:
                factor = cho_factor(a, lower=True, check_finite=False)
            except LinAlgError:
                continue
            marg = b @ cho_solve(factor, b.T, check_finite=False)  # A C A'
            share = max(float(pj.w @ np.diag(marg) - pj.w @ marg @ pj.w), 0.0) / c
            if share > best:
                best, partner = share, k
        out.append((best, partner) if partner >= 0 else (math.nan, -1))
    return out
