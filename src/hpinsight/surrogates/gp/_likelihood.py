"""The Gaussian process's likelihood and the fit of its hyperparameters.

The kernel's structure (units, the additive part's mask, the signal kernel) and the
marginal likelihood with its gradient, maximized over the length scales, the product
and additive variances and the noise (see the package docstring for the model).
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lapack
from scipy.optimize import minimize
from scipy.special import ndtri
from scipy.stats import rankdata

from ._blocks import Block
from ._kernel import Column, kernel_parts

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

#: Length-scale bounds, in units of the rescaled range [0, 1].
LENGTH_BOUNDS = (1e-2, 1e2)
#: Bounds of the product and additive variances, in units of the standardized objective.
VARIANCE_BOUNDS = (1e-4, 1e2)


def inverse(L: NDArray[np.float64]) -> NDArray[np.float64]:
    """``K^-1`` from the lower Cholesky factor of ``K`` (LAPACK potri: a third of the work
    of solving against the identity)."""
    inv, info = lapack.dpotri(L, lower=1)
    if info != 0:
        raise LinAlgError(f"potri failed with info={info}")
    out: NDArray[np.float64] = np.tril(inv) + np.tril(inv, -1).T
    return out


# -- hyperparameters ----------------------------------------------------------------------
class Likelihood:
    """The negative log marginal likelihood on fixed inputs, with its gradient.

    ``theta`` = (log l_1..l_d, log product variance, log noise variance, log additive
    variance). The prior, ``log l_j ~ N(log 1, 1.5^2)``, only keeps the optimizer away
    from the bounds when the data say nothing about a column; it is weak against any
    real signal.

    Each column's squared distances (mismatches for choices) are computed once; an
    evaluation is then one exponential per column and entry and a few matrix-vector
    products, with no Python loop over columns (the kernel's units are
    one column each unless there are conditional blocks).
    """

    #: Distance standing for "one entry active, the other inactive": a zero factor.
    _APART = 1e30

    def __init__(self, cols: Sequence[Column], U: NDArray[np.float64], units: Sequence[tuple[int, ...]]) -> None:
        n, d = U.shape
        self.n, self.d, self.units = n, d, units
        self.singletons = all(len(u) == 1 for u in units)
        self.mask = additive_mask(cols, units)  # which units the additive part sums
        self.n_additive = max(float(self.mask.sum()), 1.0)
        D = np.empty((d, n, n))
        for j, col in enumerate(cols):
            u = U[:, j]
            nan = np.isnan(u)
            v = np.where(nan, 0.0, u)
            D[j] = (v[:, None] != v[None, :]) if col.categorical else (v[:, None] - v[None, :]) ** 2
            if nan.any():
                D[j][nan[:, None] != nan[None, :]] = self._APART
        self.D = D.reshape(d, n * n)
        self._K = np.empty_like(self.D)

    def kernels(self, ell: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The product kernel and the units' kernels, flattened: (n * n,), (units, n * n)."""
        c = -0.5 / ell**2
        np.multiply(self.D, c[:, None], out=self._K)
        np.exp(self._K, out=self._K)
        Kt = np.exp(c @ self.D)
        Ku = self._K if self.singletons else np.stack([self._K[list(u)].prod(axis=0) for u in self.units])
        return Kt, Ku

    def __call__(self, theta: NDArray[np.float64], y: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        n, d = self.n, self.d
        ell = np.exp(theta[:d])
        s, noise, r = math.exp(theta[d]), math.exp(theta[d + 1]), math.exp(theta[d + 2]) / self.n_additive
        Kt, Ku = self.kernels(ell)
        Ks = self.mask @ Ku
        K = (s * Kt + r * Ks).reshape(n, n)
        K[np.diag_indices(n)] += noise
        try:
            c = cho_factor(K, lower=True, check_finite=False)
        except LinAlgError:
            return 1e25, np.zeros_like(theta)
        alpha = cho_solve(c, y, check_finite=False)
        nll = 0.5 * float(y @ alpha) + float(np.log(np.diag(c[0])).sum()) + 0.5 * n * math.log(2 * math.pi)
        A = np.outer(alpha, alpha) - inverse(c[0])
        a = A.ravel()
        # d nll / d log l_j = -1/(2 l_j^2) sum(A o (s K_t + r K_u(j)) o D_j)
        raw = self.D @ (a * (s * Kt))
        if self.singletons:
            raw += r * self.mask * np.einsum("jk,jk,k->j", Ku, self.D, a)
        else:
            for k, unit in enumerate(self.units):
                for j in unit:
                    if self.mask[k]:
                        raw[j] += r * float(np.einsum("k,k,k->", Ku[k], self.D[j], a))
        grad = np.empty_like(theta)
        grad[:d] = -0.5 * raw / ell**2
        grad[d] = -0.5 * s * float(a @ Kt)
        grad[d + 1] = -0.5 * noise * float(np.trace(A))
        grad[d + 2] = -0.5 * r * float(a @ Ks)
        prior_sd = 1.5
        nll += float(0.5 * (theta[:d] ** 2).sum() / prior_sd**2)
        grad[:d] += theta[:d] / prior_sd**2
        return nll, grad


def variance_nll(
    theta: NDArray[np.float64], Kt: NDArray[np.float64], Ka: NDArray[np.float64], y: NDArray[np.float64],
) -> tuple[float, NDArray[np.float64]]:
    """:class:`Likelihood` in the three variances alone, the length scales held
    (``Kt`` the product kernel, ``Ka`` the mean of the units' kernels)."""
    s, noise, a = np.exp(theta)
    K = s * Kt + a * Ka
    K[np.diag_indices(y.size)] += noise
    try:
        c = cho_factor(K, lower=True, check_finite=False)
    except LinAlgError:
        return 1e25, np.zeros_like(theta)
    alpha = cho_solve(c, y, check_finite=False)
    nll = 0.5 * float(y @ alpha) + float(np.log(np.diag(c[0])).sum()) + 0.5 * y.size * math.log(2 * math.pi)
    A = np.outer(alpha, alpha) - inverse(c[0])
    grad = -0.5 * np.array([s * float((A * Kt).sum()), noise * float(np.trace(A)), a * float((A * Ka).sum())])
    return nll, grad


def _normal_scores(y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Standardized normal scores of the ranks of ``y`` (ties share their average rank).

    Exactly antisymmetric, so that a maximized objective and its negated minimized twin
    get the same fit: with ``a = 2 rank - 1`` (exact) the upper half is mirrored from
    the lower one instead of computed from ``1 - p``.
    """
    a, two_n = 2.0 * rankdata(y) - 1.0, 2.0 * y.size
    z = np.where(a <= y.size, ndtri(a / two_n), -ndtri((two_n - a) / two_n))
    sd = float(z.std())
    return (z - z.mean()) / sd if sd > 0 else np.zeros_like(z)


def _minimize_nll(
    lik: Likelihood, y: NDArray[np.float64], x0: NDArray[np.float64], free: slice,
) -> tuple[float, NDArray[np.float64]]:
    """L-BFGS-B on the entries ``free`` of ``theta``, the others held at ``x0``."""
    d = lik.d
    lo, hi = math.log(LENGTH_BOUNDS[0]), math.log(LENGTH_BOUNDS[1])
    variance = (math.log(VARIANCE_BOUNDS[0]), math.log(VARIANCE_BOUNDS[1]))
    bounds = ([(lo, hi)] * d + [variance, (math.log(1e-6), math.log(2.0)), variance])[free]
    held = x0.copy()
    if free.start is not None and free.start >= d:  # length scales held: the kernels are fixed
        Kt, Ku = lik.kernels(np.exp(x0[:d]))
        Kt, Ka = Kt.reshape(lik.n, lik.n), ((lik.mask @ Ku) / lik.n_additive).reshape(lik.n, lik.n)

        def objective(t: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            held[free] = t
            value, grad = variance_nll(held[d:], Kt, Ka, y)
            return value, grad[free.start - d : (free.stop or d + 3) - d]
    else:
        def objective(t: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            held[free] = t
            value, grad = lik(held, y)
            return value, grad[free]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # a longer memory than L-BFGS-B's default of 10 pairs: with a few tens of length
        # scales it converges in fewer iterations (10,000 x 30: 5.8 s -> 4.4 s end to end)
        res = minimize(objective, x0[free], jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 100, "maxcor": 50})
    out = x0.copy()
    out[free] = res.x
    return float(res.fun), out


def fit_hyperparameters(
    cols: Sequence[Column], U: NDArray[np.float64], y: NDArray[np.float64],
    units: Sequence[tuple[int, ...]], start: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Length scales that both the objective and its ranks support; then the variances.

    Relevance is decided twice: by the marginal likelihood of the standardized objective,
    and by that of the normal scores of its ranks. Each parameter keeps the *longer* of
    its two length scales, so it counts as relevant only if both agree. The rank fit is
    blind to outliers: on real tuning studies a few diverged trials (an SVC's error
    jumping from 0.03 to 0.37) dominate the variance, and a rarely sampled choice of a
    parameter that does nothing, holding two of them, can then "explain" them (0.15 of
    the variance in one of five TPE studies, 0.04 with this rule; see
    ``benchmarks/README.md``). The raw fit keeps the length scales of smooth effects
    right, where ranks would distort them. The variances (product, noise, additive) are
    then fit on the objective itself with the length scales held. ``start`` (log length
    scales, then the log variances) replaces the two default starting points.
    """
    d = U.shape[1]
    lik = Likelihood(cols, U, units)
    x0 = default_start(d)
    all_params, variances = slice(0, d + 3), slice(d, d + 3)
    z = _normal_scores(y)
    starts = (x0, x0 + math.log(0.3) * np.r_[np.ones(d), 0.0, 0.0, 0.0]) if start is None else (start,)
    ranked = min((_minimize_nll(lik, z, x, all_params) for x in starts), key=lambda f: f[0])[1]
    theta = _minimize_nll(lik, y, ranked, all_params)[1]  # the raw fit starts where ranks ended
    theta[:d] = np.maximum(ranked[:d], theta[:d])
    return _minimize_nll(lik, y, theta, variances)[1]


def default_start(d: int) -> NDArray[np.float64]:
    """``theta`` with every length scale 1, product and additive variance 0.5, noise 0.1."""
    out: NDArray[np.float64] = np.r_[np.zeros(d), math.log(0.5), math.log(0.1), math.log(0.5)]
    return out


def split_theta(theta: NDArray[np.float64]) -> tuple[NDArray[np.float64], float, float, float]:
    """Length scales, product variance, noise variance and additive variance of ``theta``."""
    d = theta.size - 3
    return np.exp(theta[:d]), math.exp(theta[d]), math.exp(theta[d + 1]), math.exp(theta[d + 2])


def signal_kernel(cols: Sequence[Column], A: NDArray[np.float64], B: NDArray[np.float64],
                   units: Sequence[tuple[int, ...]], ell: NDArray[np.float64], s: float,
                   a: float) -> NDArray[np.float64]:
    """The kernel without noise, ``s prod_u k_u + (a / #A) sum_{u in A} k_u``, between the
    rows of ``A`` and ``B`` (rescaled inputs)."""
    prod, mean = kernel_parts(cols, A, B, ell, units, additive_mask(cols, units))
    prod *= s
    prod += a * mean
    return prod


def unit_members(d: int, blocks: Sequence[Block]) -> tuple[tuple[int, ...], ...]:
    """The kernel's units: each block's members, then every other column alone."""
    members = {m for b in blocks for m in b.members}
    return tuple(b.members for b in blocks) + tuple((j,) for j in range(d) if j not in members)


def additive_mask(cols: Sequence[Column], units: Sequence[tuple[int, ...]]) -> NDArray[np.float64]:
    """1 for the units in the additive part, 0 for the others: a categorical column alone
    is in the product part only (see the module docstring)."""
    return np.array([0.0 if len(u) == 1 and cols[u[0]].categorical else 1.0 for u in units])


# -- the fitted surrogate -----------------------------------------------------------------
