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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import LinAlgError, solve

from ._blas import on_one_blas_thread
from ._kernel import Column, kernel_matrix
from ._lapack import triangular_solve

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


@on_one_blas_thread
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
    S = triangular_solve(chol, np.hstack(psis))
    out, start = [], 0
    for (w, k_tt), psi in zip(parts, psis, strict=True):
        block = S[:, start:start + psi.shape[1]]
        start += psi.shape[1]
        out.append(HiddenTerm(weights=w, k_tt=k_tt, m=block.T @ block))
    return tuple(out)
