"""The Gaussian process's likelihood and the fit of its hyperparameters.

The kernel's structure (units, the additive part's mask, the signal kernel) and the
marginal likelihood with its gradient, maximized over the length scales, the product
and additive variances and the noise (see the package docstring for the model).
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from scipy.linalg import LinAlgError
from scipy.optimize import minimize
from scipy.special import ndtri
from scipy.stats import rankdata

from ...exceptions import InvalidArgumentError
from ._blocks import Block
from ._kernel import LENGTH_MIN, Column, kernel_parts
from ._lapack import cholesky, cholesky_inverse, cholesky_solve

if TYPE_CHECKING:
    from collections.abc import Sequence
    from concurrent.futures import Executor

    from numpy.typing import NDArray

#: Length-scale bounds, in units of the rescaled range [0, 1].
LENGTH_BOUNDS = (LENGTH_MIN, 1e2)
#: Bounds of the product variance, in units of the standardized objective.
VARIANCE_BOUNDS = (1e-4, 1e2)
#: Bounds of each unit's additive variance times ``#A`` (the number of additive units).
UNIT_BOUNDS = (1e-6, 1e2)
#: Bounds of the noise variance, in units of the standardized objective's variance: at
#: the lower one the fit found no noise.
NOISE_BOUNDS = (1e-6, 2.0)
#: Standard deviation of the prior on each log length scale (mean log 1).
LENGTH_PRIOR_SD = 1.5
#: A column whose removal costs, with nothing refit, at most this many times the
#: threshold of :func:`prune_columns` has its cost measured again with the variances
#: refit; one that costs more stays without that check.
PRUNE_CHECK_FACTOR = 8.0


def inverse(L: NDArray[np.float64]) -> NDArray[np.float64]:
    """``K^-1`` from the lower Cholesky factor of ``K`` (LAPACK potri: a third of the work
    of solving against the identity)."""
    inv = cholesky_inverse(L)
    out: NDArray[np.float64] = np.tril(inv) + np.tril(inv, -1).T
    return out


# -- hyperparameters ----------------------------------------------------------------------
class Likelihood:
    """The negative log marginal likelihood on fixed inputs, with its gradient.

    ``theta`` = (log l_1..l_d, log product variance, log noise variance, then for every
    unit ``u`` the log of its additive variance times ``#A``; the entries of units
    outside the additive part stay where they start). The prior, ``log l_j ~ N(log 1, 1.5^2)``, only keeps the optimizer away
    from the bounds when the data say nothing about a column; it is weak against any
    real signal.

    Each column's squared distances (mismatches for choices) are computed once, for the
    pairs of rows below the diagonal only: every matrix here is symmetric and every
    kernel is 1 on the diagonal, so the other half is a copy and the diagonal is known.
    An evaluation is then one exponential per column and pair and a few matrix-vector
    products, with no Python loop over columns (the kernel's units are one column each
    unless there are conditional blocks); half the pairs halve that work (at 256 rows
    and 20 columns an evaluation took 10.8 ms on full matrices).
    """

    #: Distance standing for "one entry active, the other inactive": a zero factor.
    _APART = 1e30

    def __init__(self, cols: Sequence[Column], U: NDArray[np.float64], units: Sequence[tuple[int, ...]]) -> None:
        n, d = U.shape
        self.d, self.units = d, units
        self.singletons = all(len(u) == 1 for u in units)
        # the units' kernels gathered from the columns': each unit's first column, times
        # its others (units of several columns are the few conditional blocks), into a
        # buffer of its own; the product over each unit's rows, stacked anew each time,
        # made an evaluation 1.0 or 2.0 ms by turns at 150 rows x 12, now 0.95 ms
        self._first = np.array([unit[0] for unit in units], dtype=np.intp)
        self._more = [(at, unit[1:]) for at, unit in enumerate(units) if len(unit) > 1]
        # each column's unit (``unit_members``: the disjoint conditional blocks, then every
        # other column alone): the gradient's sums over units are then one product
        members = [j for unit in units for j in unit]
        if sorted(members) != list(range(d)):
            raise InvalidArgumentError(f"Likelihood: the units {units!r} must hold each of the {d} "
                                       "columns exactly once (as unit_members gives them).")
        self._owner = np.empty(d, dtype=np.intp)
        self._owner[members] = [at for at, unit in enumerate(units) for _ in unit]
        self.mask = additive_mask(cols, units)  # which units the additive part sums
        self.n_additive = max(float(self.mask.sum()), 1.0)
        # the pairs as a mask, in the same (row-major) order: scattering into and gathering
        # from a matrix by a mask is 5-9 times faster than by index pairs
        self.below = np.tri(n, k=-1, dtype=bool)
        i, k = np.tril_indices(n, -1)
        D = np.empty((d, i.size))
        for j, col in enumerate(cols):
            u = U[:, j]
            nan = np.isnan(u)
            v = np.where(nan, 0.0, u)
            D[j] = (v[i] != v[k]) if col.categorical else (v[i] - v[k]) ** 2
            if nan.any():
                D[j][nan[i] != nan[k]] = self._APART
        self.D = D
        self._buffers()

    def _buffers(self) -> None:
        # every evaluation writes into these: no new array of the pairs' size per call
        self._K = np.empty_like(self.D)
        self._Ku = None if self.singletons else np.empty((len(self.units), self.D.shape[1]))
        self._Kc = None if self.singletons else np.empty_like(self.D)

    def twin(self) -> Likelihood:
        """The same likelihood with buffers of its own, for another thread."""
        other = copy.copy(self)
        other._buffers()
        return other

    def kernels(self, ell: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The product kernel and the units' kernels on the pairs below the diagonal
        (where ``below`` is true): (m,), (units, m). On the diagonal every kernel is 1.
        The units' kernels are a buffer of this likelihood's that the next call overwrites."""
        c = -0.5 / ell**2
        np.multiply(self.D, c[:, None], out=self._K)
        np.exp(self._K, out=self._K)
        Kt = np.exp(c @ self.D)
        if self.singletons:
            return Kt, self._K
        Ku = np.take(self._K, self._first, axis=0, out=self._Ku, mode="clip")  # "raise" buffers `out`
        for k, rest in self._more:
            for j in rest:
                Ku[k] *= self._K[j]
        return Kt, Ku

    def __call__(self, theta: NDArray[np.float64], y: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        d = self.d
        ell = np.exp(theta[:d])
        s, noise = math.exp(theta[d]), math.exp(theta[d + 1])
        r = self.mask * np.exp(theta[d + 2:]) / self.n_additive  # each unit's additive variance
        Kt, Ku = self.kernels(ell)
        solved = _solve_pairs(self.below, s * Kt + r @ Ku, s + float(r.sum()) + noise, y)
        if solved is None:
            return _FAILED, np.zeros_like(theta)
        nll, a, trace = solved
        # d nll / d log l_j = -1/(2 l_j^2) sum(A o (s K_t + r K_u(j)) o D_j), twice the
        # sum over the pairs (D_j is 0 on the diagonal)
        raw = self.D @ (a * (s * Kt))
        if self.singletons:
            raw += r * np.einsum("jk,jk,k->j", Ku, self.D, a)
        else:
            Kc = np.take(Ku, self._owner, axis=0, out=self._Kc, mode="clip")  # each column's unit's
            raw += r[self._owner] * np.einsum("jk,jk,k->j", Kc, self.D, a)
        grad = np.empty_like(theta)
        grad[:d] = -raw / ell**2
        grad[d] = -0.5 * s * (2.0 * float(a @ Kt) + trace)
        grad[d + 1] = -0.5 * noise * trace
        grad[d + 2:] = -0.5 * r * (2.0 * (Ku @ a) + trace)
        nll += length_prior(theta[:d])
        grad[:d] += theta[:d] / LENGTH_PRIOR_SD**2
        return nll, grad

    def data_nll(self, theta: NDArray[np.float64], y: NDArray[np.float64]) -> float:
        """The negative log marginal likelihood of ``y`` alone, without the length scales'
        prior (``inf`` where the kernel does not factorize)."""
        nll = self(theta, y)[0]
        return math.inf if nll >= _FAILED else nll - length_prior(theta[:self.d])


#: What :meth:`Likelihood.__call__` returns where the kernel does not factorize.
_FAILED = 1e25


def length_prior(log_ell: NDArray[np.float64]) -> float:
    """The negative log prior of the log length scales, ``log l_j ~ N(0, LENGTH_PRIOR_SD^2)``
    (without its constant)."""
    return float(0.5 * (log_ell**2).sum() / LENGTH_PRIOR_SD**2)


def _solve_pairs(
    below: NDArray[np.bool_], K_pairs: NDArray[np.float64], diagonal: float,
    y: NDArray[np.float64],
) -> tuple[float, NDArray[np.float64], float] | None:
    """The negative log likelihood of ``y`` under ``N(0, K)``, ``K`` given by its entries
    below the diagonal (where ``below`` is true, in row-major order, as ``np.tril_indices(n, -1)``)
    and its constant diagonal; with ``A = alpha alpha^T - K^-1`` on the same entries and
    ``trace(A)``. ``None`` when ``K`` is not positive definite."""
    n = y.size
    K = np.zeros((n, n), order="F")  # column-major: LAPACK factorizes it in place
    K[below] = K_pairs  # the Cholesky factorization reads the lower triangle only
    K[np.diag_indices(n)] = diagonal
    try:
        c = cholesky(K, overwrite=True)
        alpha = cholesky_solve(c, y)
        nll = 0.5 * float(y @ alpha) + float(np.log(np.diag(c)).sum()) + 0.5 * n * math.log(2 * math.pi)
        inv = cholesky_inverse(c, overwrite=True)  # K^-1, its lower triangle
    except LinAlgError:
        return None
    a = np.outer(alpha, alpha)[below]
    a -= inv[below]
    return nll, a, float(alpha @ alpha - np.diag(inv).sum())


def variance_nll(
    theta: NDArray[np.float64], Kt: NDArray[np.float64], Ku: NDArray[np.float64],
    weights: NDArray[np.float64], y: NDArray[np.float64], below: NDArray[np.bool_],
) -> tuple[float, NDArray[np.float64]]:
    """:class:`Likelihood` in the variances alone, the length scales held: ``Kt`` the
    product kernel and ``Ku`` the units' kernels (units, m) on the entries ``below`` the
    diagonal, as :meth:`Likelihood.kernels` gives them; ``weights`` each unit's factor
    on its variance (``mask / #A``)."""
    s, noise = math.exp(theta[0]), math.exp(theta[1])
    r = weights * np.exp(theta[2:])
    solved = _solve_pairs(below, s * Kt + r @ Ku, s + float(r.sum()) + noise, y)
    if solved is None:
        return _FAILED, np.zeros_like(theta)
    nll, a, trace = solved
    grad = np.empty_like(theta)
    grad[0] = -0.5 * s * (2.0 * float(a @ Kt) + trace)
    grad[1] = -0.5 * noise * trace
    grad[2:] = -0.5 * r * (2.0 * (Ku @ a) + trace)
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
    lik: Likelihood, y: NDArray[np.float64], x0: NDArray[np.float64],
    free: slice | NDArray[np.intp],
) -> tuple[float, NDArray[np.float64]]:
    """L-BFGS-B on the entries ``free`` of ``theta`` (a slice, or their indices), the
    others held at ``x0``. With the length scales held (every free entry at ``d`` or
    after), the value is the likelihood without the length scales' prior."""
    d = lik.d
    lo, hi = math.log(LENGTH_BOUNDS[0]), math.log(LENGTH_BOUNDS[1])
    variance = (math.log(VARIANCE_BOUNDS[0]), math.log(VARIANCE_BOUNDS[1]))
    unit = (math.log(UNIT_BOUNDS[0]), math.log(UNIT_BOUNDS[1]))
    every = [(lo, hi)] * d + [variance, (math.log(NOISE_BOUNDS[0]), math.log(NOISE_BOUNDS[1]))] + [unit] * (x0.size - d - 2)
    if isinstance(free, slice):
        bounds = every[free]
        held_lengths = free.start is not None and free.start >= d
        pick: slice | NDArray[np.intp] = slice(free.start - d if held_lengths else None,
                                               free.stop - d if held_lengths and free.stop is not None else None)
    else:
        bounds = [every[i] for i in free]
        held_lengths = bool(free.size) and int(free.min()) >= d
        pick = free - d
    held = x0.copy()
    if held_lengths:  # length scales held: the kernels are fixed
        Kt, Ku = (k.copy() for k in lik.kernels(np.exp(x0[:d])))  # `kernels` reuses its buffer
        weights = lik.mask / lik.n_additive

        def objective(t: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            held[free] = t
            value, grad = variance_nll(held[d:], Kt, Ku, weights, y, lik.below)
            return value, grad[pick]
    else:
        def objective(t: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            held[free] = t
            value, grad = lik(held, y)
            return value, grad[free]

    # numpy's floating-point warnings off (an overflow in a step L-BFGS-B then rejects)
    # by errstate, which holds for this thread alone: ``warnings.catch_warnings`` swaps
    # the process's filter list, and two fits entering and leaving it in two threads at
    # once left "ignore RuntimeWarning" in the user's filters for good
    with np.errstate(all="ignore"):
        # a longer memory than L-BFGS-B's default of 10 pairs: with a few tens of length
        # scales it converges in fewer iterations (10,000 x 30: 5.8 s -> 4.4 s end to end).
        # It stops once an iteration gains less than 1e-6 of the likelihood (about 1e-4
        # nats on 256 rows), not scipy's 2e-9: the last iterations only slide the variance
        # of units that explain nothing towards its bound (the calibration benchmark: the
        # same do-nothing mass, 0.061 against 0.062; 1,000 x 10 end to end 1.9 s -> 1.3 s)
        res = minimize(objective, x0[free], jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 100, "maxcor": 50, "ftol": 1e-6})
    out = x0.copy()
    out[free] = res.x
    return float(res.fun), out


def prune_threshold(n: int) -> float:
    """The nats a column's removal must cost for it to stay (:func:`prune_columns`):
    ``log(n) / 2`` on ``n`` rows, the Bayesian information criterion's price of one
    parameter (Schwarz 1978)."""
    return 0.5 * math.log(max(n, 2))


def prune_columns(
    lik: Likelihood, y: NDArray[np.float64], theta: NDArray[np.float64], threshold: float,
    variances: slice | None = None, pool: Executor | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Take out of the fitted ``theta`` every column whose removal costs less than
    ``threshold`` nats of the marginal likelihood of ``y``; return the new ``theta`` and
    which columns went.

    Taking a column out sets its length scale to the upper bound (its factor is 1 in
    the product part) and its unit's additive variance to the lower bound; the variances
    are then refit with the length scales held, and the cost is how much worse the
    likelihood (without the length scales' prior) gets. A column whose cost with
    nothing refit is already below ``threshold`` goes without a refit (a refit can only
    lower it); one whose cost is more than ``PRUNE_CHECK_FACTOR`` times it stays. Every
    column below it goes at once and the variances are refit. (Putting back a column
    that costs more than ``threshold`` in that smaller model was measured and not taken:
    on the 40-parameter studies it put back do-nothing columns that had shared a chance
    correlation with others, and it saved no real effect on the calibration
    functions.) ``variances`` are the entries refit (default: every
    variance; the product part alone's fit holds the units' at their bound). Only
    columns that are units of their own are candidates
    (a conditional block stays whole), and where every column would go, nothing does:
    that case is the held-out check's (pure noise). With ``pool``, half of the columns'
    refits run there, beside the others (each is independent: the same result).

    Why. With many parameters and a noisy objective, the likelihood's optimum gives
    some of those that do nothing a share of the variance: their values correlate with
    the objective by chance (on 200 TPE trials of 40 parameters, 36 of which do nothing,
    up to 0.34 of it). Each such column buys a few nats at most (0.1-2.5 in those
    studies), while the parameters that act cost 3-60 to remove, so a price per column
    separates them where the shares alone cannot (``benchmarks/README.md``).
    """
    d = lik.d
    unit_of = {u[0]: k for k, u in enumerate(lik.units) if len(u) == 1}
    base = lik.data_nll(theta, y)
    if not math.isfinite(base):
        return theta, np.zeros(d, bool)
    long_ell, low_unit = math.log(LENGTH_BOUNDS[1]), math.log(UNIT_BOUNDS[0])

    def without(t: NDArray[np.float64], cols: Sequence[int]) -> NDArray[np.float64]:
        out = t.copy()
        for j in cols:
            out[j] = long_ell
            if lik.mask[unit_of[j]]:
                out[d + 2 + unit_of[j]] = low_unit
        return out

    refit_entries = range(theta.size)[variances if variances is not None else slice(d, None)]

    def refit(t: NDArray[np.float64], out: NDArray[np.bool_],
              lik: Likelihood = lik) -> tuple[float, NDArray[np.float64]]:
        held = {d + 2 + unit_of[int(j)] for j in np.flatnonzero(out)}
        free = np.array([i for i in refit_entries if i not in held], dtype=np.intp)
        return _minimize_nll(lik, y, t, free)

    def refit_alone(j: int, lik: Likelihood = lik) -> float:
        alone = np.zeros(d, bool)
        alone[j] = True
        return refit(without(theta, (j,)), alone, lik)[0] - base

    off = np.zeros(d, bool)
    checked = []  # the columns whose cost is measured again with the variances refit
    for j in unit_of:
        cost = lik.data_nll(without(theta, (j,)), y) - base
        if cost < threshold:
            off[j] = True
        elif cost < PRUNE_CHECK_FACTOR * threshold:
            checked.append(j)
    # every other one in the pool's thread (on a likelihood of its own), the rest here
    there = {j: pool.submit(refit_alone, j, lik.twin()) for j in checked[1::2]} if pool is not None else {}
    costs = {j: refit_alone(j) for j in checked if j not in there}
    costs.update((j, f.result()) for j, f in there.items())
    for j, cost in costs.items():
        off[j] = cost < threshold
    if not off.any() or off.all():
        return theta, np.zeros(d, bool)
    gone = [int(j) for j in np.flatnonzero(off)]
    return refit(without(theta, gone), off)[1], off


def fit_hyperparameters(
    cols: Sequence[Column], U: NDArray[np.float64], y: NDArray[np.float64],
    units: Sequence[tuple[int, ...]], start: NDArray[np.float64] | None = None,
    product_only: bool = False, prune: bool = False,
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
    right, where ranks would distort them. The variances (product, noise, each unit's additive) are
    then fit on the objective itself with the length scales held. ``start`` (log length
    scales, then the log variances) replaces the two default starting points. With
    ``product_only`` every unit's additive variance is held at its lower bound: the
    kernel is the product part alone, the other structure the trials may support (the
    refits of :func:`~._fit.fit_gp`).
    """
    return fit_hyperparameters_and_raw(cols, U, y, units, start, product_only, prune=prune).theta


class HyperFit(NamedTuple):
    """What :func:`fit_hyperparameters_and_raw` returns."""

    #: the hyperparameters (``theta``)
    theta: NDArray[np.float64]
    #: the length scales of the fit to the objective's values before each parameter kept
    #: the longer of it and the rank fit's (``FittedGP.raw_length_scales``)
    raw: NDArray[np.float64]
    #: the columns taken out (``prune``), and ``theta`` before that (None where none was)
    pruned: tuple[int, ...] = ()
    before: NDArray[np.float64] | None = None


def fit_hyperparameters_and_raw(
    cols: Sequence[Column], U: NDArray[np.float64], y: NDArray[np.float64],
    units: Sequence[tuple[int, ...]], start: NDArray[np.float64] | None = None,
    product_only: bool = False, pool: Executor | None = None, prune: bool = False,
) -> HyperFit:
    """:func:`fit_hyperparameters`, with the raw fit's length scales and what pruning
    took out (:class:`HyperFit`). With ``pool``, the fit to the ranks from the second
    starting point runs there while this thread runs the first (numpy's loops and the
    factorizations of ``_lapack`` release the interpreter lock; the result is the same).
    With ``prune``, the columns whose removal costs less than :func:`prune_threshold` of
    the rows are then taken out (:func:`prune_columns`)."""
    d = U.shape[1]
    lik = Likelihood(cols, U, units)
    all_params, variances = slice(0, None), slice(d, None)
    z = _normal_scores(y)
    starts = default_starts(d, len(units)) if start is None else (start,)
    if product_only:  # the units' additive variances (the last entries) held at their bound
        all_params, variances = slice(0, d + 2), slice(d, d + 2)
        starts = tuple(np.r_[x[:d + 2], np.full(x.size - d - 2, math.log(UNIT_BOUNDS[0]))] for x in starts)
    if pool is not None and len(starts) > 1:
        others = [pool.submit(_minimize_nll, lik.twin(), z, x, all_params) for x in starts[1:]]
        fits = [_minimize_nll(lik, z, starts[0], all_params), *(f.result() for f in others)]
    else:
        fits = [_minimize_nll(lik, z, x, all_params) for x in starts]
    ranked = min(fits, key=lambda f: f[0])[1]
    theta = _minimize_nll(lik, y, ranked, all_params)[1]  # the raw fit starts where ranks ended
    raw = np.exp(theta[:d])
    theta[:d] = np.maximum(ranked[:d], theta[:d])
    theta = _minimize_nll(lik, y, theta, variances)[1]
    if prune:
        pruned, off = prune_columns(lik, y, theta, prune_threshold(y.size), variances, pool)
        if off.any():
            return HyperFit(pruned, raw, tuple(int(j) for j in np.flatnonzero(off)), theta)
    return HyperFit(theta, raw)


def default_start(d: int, n_units: int) -> NDArray[np.float64]:
    """``theta`` with every length scale 1, product variance 0.5, noise 0.1 and every
    unit's additive variance ``0.5 / #A``."""
    out: NDArray[np.float64] = np.r_[np.zeros(d), math.log(0.5), math.log(0.1), np.full(n_units, math.log(0.5))]
    return out


def default_starts(d: int, n_units: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two points :func:`fit_hyperparameters` starts from: :func:`default_start`, and
    the same with every length scale 0.3."""
    x0 = default_start(d, n_units)
    return x0, x0 + math.log(0.3) * (np.arange(x0.size) < d)


def split_theta(theta: NDArray[np.float64], d: int) -> tuple[NDArray[np.float64], float, float, NDArray[np.float64]]:
    """Length scales, product variance, noise variance and each unit's additive variance
    (times ``#A``) of ``theta`` with ``d`` length scales."""
    return np.exp(theta[:d]), math.exp(theta[d]), math.exp(theta[d + 1]), np.exp(theta[d + 2:])


def signal_kernel(cols: Sequence[Column], A: NDArray[np.float64], B: NDArray[np.float64],
                   units: Sequence[tuple[int, ...]], ell: NDArray[np.float64], s: float,
                   a: NDArray[np.float64]) -> NDArray[np.float64]:
    """The kernel without noise, ``s prod_u k_u + sum_{u in A} (a_u / #A) k_u``, between
    the rows of ``A`` and ``B`` (rescaled inputs); ``a`` holds every unit's ``a_u``."""
    mask = additive_mask(cols, units)
    prod, mean = kernel_parts(cols, A, B, ell, units, mask * a, norm=max(float(mask.sum()), 1.0))
    prod *= s
    prod += mean
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
