"""A Gaussian-process surrogate whose functional ANOVA is exact.

Why a second surrogate. Optimizers (TPE, CMA-ES, SMAC) sample densely where
they expect good results, and as they converge they cluster *every* parameter,
also the ones that do nothing. Their values then correlate with the objective
through the sampler, a greedy tree splits on them, and integrating a forest over
the whole space credits them with variance the forest only extrapolated. A
smooth model with one length scale per parameter explains the same data with
the parameters that matter and gives the others length scales far beyond the
space, so their effects vanish.

Model. Columns are rescaled to ``[0, 1]`` by their measure's bounds (see
``_encoding``: log parameters in log space). Each column ``j`` has a kernel factor

* numerical columns: ``k_j(u, u') = exp(-(u - u')^2 / (2 l_j^2))`` (squared exponential);
* categorical columns: ``1`` for equal choices, ``rho_j = exp(-1 / (2 l_j^2))``
  otherwise -- every pair of choices equally similar, so the order of the
  choices plays no role.

A *unit* is a column, or a conditional block of columns (below) with the product of its
members' factors as its factor ``k_u``. The kernel is a product part plus a first-order
additive part (Duvenaud, Nickisch & Rasmussen, 2011, "Additive Gaussian processes", the
orders 1 and D of their Eq. 5, with one length scale per column shared by both):

    ``k(x, x') = s_p prod_u k_u(x_u, x'_u) + (s_a / #A) sum_{u in A} k_u(x_u, x'_u)``,

where ``A`` holds every unit but a categorical column on its own.

Why both. Optimizers leave most of the space empty, and a product kernel alone
explains a trial far from the others by a bump of its own, in every parameter at once:
far from the data its posterior mean falls back to the prior mean, which shows up as
interactions that are not there and as main effects too small. On five 150-trial TPE
studies of ``4|a| + 2[b > 0.5] + floor(c)^2 + noise``, a function without interactions,
the product kernel alone left 0.41-0.91 of the variance to main effects and ranked the
step in ``b`` third in 3 of them; with the additive part the main effects hold
0.99-1.00 of it, and ``b`` is third in 4. The additive part carries an effect learned
anywhere to everywhere, and the marginal likelihood chooses how much of the signal is
additive (``s_a``) and how much is not (``s_p``). See ``benchmarks/README.md``.

Why not a categorical alone. In the additive part each choice gets an offset of its
own, learned from the trials that hold it. A sampler that has settled on one choice
tried the others mostly early, in bad trials, and an offset then explains those trials
cheaply: on five TPE studies tuning a random forest, a three-choice parameter that does
nothing got up to 0.51 of the importance with categoricals in the additive part, and
the parameters that do nothing 0.13-0.23 together at 150-200 trials (0.04 without).
A categorical still has its main effect through the product part.

The objective is standardized; a constant mean, the two signal variances and a Gaussian
noise variance are fit together with the length scales by maximizing the log marginal
likelihood (Rasmussen & Williams, 2006, Eq. 5.8-5.9) with analytic gradients, on at
most ``FIT_ROWS`` rows drawn at random. Relevance must be supported twice, by the
objective and by its ranks (:func:`_fit_hyperparameters`).

Estimand and exactness. The posterior mean is
``m(x) = mu + sum_i beta_i (prod_u k_u(x_u, x_iu) + r sum_{u in A} k_u(x_u, x_iu))`` with
``r = s_a / (s_p #A)``. Under the space's product measure (uniform in the encoded
coordinate, uniform over integer values and choices), write ``k_u = z_iu + h_iu`` with
``z_iu = E[k_u(X_u, x_iu)]``; the product expands into the functional ANOVA terms
directly, ``f_U(x_U) = sum_i beta_i prod_{u not in U} z_iu prod_{u in U} h_iu(x_u)``,
and the additive part adds ``r sum_i beta_i h_iu(x_u)`` to the effects within one unit
``u`` of ``A`` only. So the variance of every effect is a quadratic form

    ``V_U = v_U' (C_j1 o C_j2 o ...) v_U``,   ``v_U = beta * (prod_{u not in U} z_u [+ r])``,

with ``C_j[i, l] = E[h_ij h_lj] = W_j[i, l] - z_ij z_lj``, ``o`` the elementwise
product and ``+ r`` for effects within one unit of ``A``. ``z`` and ``W`` are one-dimensional
integrals in closed form (error functions) for continuous columns, and finite sums for
discrete ones and choices. Every number is exact for the fitted posterior mean.

Uncertainty. Each of ``n_draws`` *draws* refits the posterior on a bootstrap
resample of the trials (hyperparameters fixed; a row drawn ``c`` times enters
once with noise variance divided by ``c``), with its own imputation of inactive
values where they are imputed (below). Means and stds over draws play the role of the forest's over trees.
Whether an effect is distinguishable from nothing is judged against shadow
columns in a second fit (:func:`_shadow_null`).

Where we deviate, and why:

* Second moments of continuous columns (``C_j``) are sums over composite
  Gauss-Legendre nodes where the length scale allows few of them (``_gp_kernel.root``):
  they agree with the closed form to 5e-12 of its largest entry, are positive
  semi-definite by construction, and let main effects and pairs be computed from
  (nodes x n) factors instead of (n x n) matrices. At 10,000 trials x 30 parameters this
  took the decomposition from 5.9 s and 1.3 GB to 0.6 s and 0.3 GB.
* Integer and stepped parameters with more than ``MAX_EXACT_POINTS`` values
  are integrated as continuous over the measure's range (the sum over ``10^5``
  values would cost more than the rest of the analysis); the error is of the
  order of one value's share of the range.
* Conditional parameters: an inactive entry is a state of its own in the kernel
  (factor 1 against another inactive entry, 0 against an active one), so trials
  where a parameter is inactive say nothing about its effect where it is active,
  and nothing is imputed. The posterior mean is then a product over *blocks* (a
  conditional parameter with its parents) instead of over columns, each block
  integrated exactly by enumerating its parents' values (``_gp_blocks``; conditions
  missing from the space, as in Optuna's define-by-run studies, are inferred from
  the trials). On five 150-trial TPE studies of a conditional function this took the
  largest error of a main effect from 0.139 to 0.016 (``benchmarks/README.md``).
  Where a parent is continuous or the parents have more than
  ``_gp_blocks.MAX_COMBINATIONS`` joint values, inactive entries are instead filled
  with draws from the parameter's measure, as in ``_forest``: a new imputation in
  every draw, so no single imputation decides the answer.
* A categorical parameter is measured uniformly over the choices the trials contain,
  not over all of them (a conditional block's parents excepted: they are enumerated over
  all their values). Where no trial has a choice the posterior mean is the prior mean,
  and integrating over it would shrink the effect in proportion to the untried share:
  a 60-choice parameter holding 14 % of the variance came out at 0.08-0.13 when TPE had
  tried 36-38 of its choices, behind a smaller one. Over the choices tried, the variance
  estimates the variance over all of them as far as the trials can tell; the analysis
  cannot know the untried ones either way.
* Large histories: the posterior uses at most ``max_rows`` trials (default
  2,000), the best tenth of them always included and the rest drawn at random;
  see ``benchmarks/README.md`` for the measured effect.
"""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lapack
from scipy.optimize import minimize
from scipy.special import ndtri
from scipy.stats import rankdata
from threadpoolctl import threadpool_limits

from ._forest import impute_inactive
from ._gp_blocks import Block, BlockTerms, conditional_blocks
from ._gp_kernel import (
    _Column,
    _columns,
    _integrals,
    _kernel,
    _scaled,
    kernel_parts,
    root,
)
from ._shared import readonly

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import NDArray

    from ._space import SearchSpace

#: Rows used to fit the hyperparameters (the posterior then uses up to ``max_rows``).
FIT_ROWS = 256
#: Length-scale bounds, in units of the rescaled range [0, 1].
LENGTH_BOUNDS = (1e-2, 1e2)
#: Bounds of the product and additive variances, in units of the standardized objective.
VARIANCE_BOUNDS = (1e-4, 1e2)
#: Shadow columns are shuffled within about this many consecutive blocks of trials...
SHADOW_BLOCKS = 15
#: ...of at least this many trials each.
SHADOW_MIN_BLOCK = 5


def _inverse(L: NDArray[np.float64]) -> NDArray[np.float64]:
    """``K^-1`` from the lower Cholesky factor of ``K`` (LAPACK potri: a third of the work
    of solving against the identity)."""
    inv, info = lapack.dpotri(L, lower=1)
    if info != 0:
        raise LinAlgError(f"potri failed with info={info}")
    out: NDArray[np.float64] = np.tril(inv) + np.tril(inv, -1).T
    return out


# -- hyperparameters ----------------------------------------------------------------------
class _Likelihood:
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

    def __init__(self, cols: Sequence[_Column], U: NDArray[np.float64], units: Sequence[tuple[int, ...]]) -> None:
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
        A = np.outer(alpha, alpha) - _inverse(c[0])
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


def _variance_nll(
    theta: NDArray[np.float64], Kt: NDArray[np.float64], Ka: NDArray[np.float64], y: NDArray[np.float64],
) -> tuple[float, NDArray[np.float64]]:
    """:class:`_Likelihood` in the three variances alone, the length scales held
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
    A = np.outer(alpha, alpha) - _inverse(c[0])
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
    lik: _Likelihood, y: NDArray[np.float64], x0: NDArray[np.float64], free: slice,
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
            value, grad = _variance_nll(held[d:], Kt, Ka, y)
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


def _fit_hyperparameters(
    cols: Sequence[_Column], U: NDArray[np.float64], y: NDArray[np.float64],
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
    lik = _Likelihood(cols, U, units)
    x0 = _default_start(d)
    all_params, variances = slice(0, d + 3), slice(d, d + 3)
    z = _normal_scores(y)
    starts = (x0, x0 + math.log(0.3) * np.r_[np.ones(d), 0.0, 0.0, 0.0]) if start is None else (start,)
    ranked = min((_minimize_nll(lik, z, x, all_params) for x in starts), key=lambda f: f[0])[1]
    theta = _minimize_nll(lik, y, ranked, all_params)[1]  # the raw fit starts where ranks ended
    theta[:d] = np.maximum(ranked[:d], theta[:d])
    return _minimize_nll(lik, y, theta, variances)[1]


def _default_start(d: int) -> NDArray[np.float64]:
    """``theta`` with every length scale 1, product and additive variance 0.5, noise 0.1."""
    out: NDArray[np.float64] = np.r_[np.zeros(d), math.log(0.5), math.log(0.1), math.log(0.5)]
    return out


def _split(theta: NDArray[np.float64]) -> tuple[NDArray[np.float64], float, float, float]:
    """Length scales, product variance, noise variance and additive variance of ``theta``."""
    d = theta.size - 3
    return np.exp(theta[:d]), math.exp(theta[d]), math.exp(theta[d + 1]), math.exp(theta[d + 2])


def _signal_kernel(cols: Sequence[_Column], A: NDArray[np.float64], B: NDArray[np.float64],
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


def additive_mask(cols: Sequence[_Column], units: Sequence[tuple[int, ...]]) -> NDArray[np.float64]:
    """1 for the units in the additive part, 0 for the others: a categorical column alone
    is in the product part only (see the module docstring)."""
    return np.array([0.0 if len(u) == 1 and cols[u[0]].categorical else 1.0 for u in units])


# -- the fitted surrogate -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GaussianProcessSurrogate:
    """A fitted GP (product plus additive kernel): its posterior mean in every draw.

    Attributes
    ----------
    length_scales : ndarray of shape (n_params,)
        In units of each parameter's rescaled range (categoricals: ``rho = exp(-1/(2 l^2))``).
    signal_variance, noise_variance : float
        The product part's variance ``s_p`` and the noise variance, in units of the
        standardized objective.
    y_mean, y_scale : float
        The standardization.
    X : ndarray of shape (n_draws, n_rows, n_params)
        Each draw's rescaled training inputs (they differ only where inactive entries
        were imputed).
    beta : ndarray of shape (n_draws, n_rows)
        Each draw's posterior weights of the product part (0 for rows outside its
        bootstrap resample); the additive part's are ``additive_weight * beta``.
    loo_r2 : float or None
        Leave-one-out R² of the full-data posterior mean (closed form).
    null_fractions : (float, float) or None
        With shadows (see :func:`_shadow_null`): the largest share of variance a shadow
        column's main effect got, and the largest of a shadow's interaction with the
        most important parameter.
    varying : tuple of int
        Columns whose inputs differ between draws (those with imputed inactive
        entries); every other column is the same in every draw, and what depends on
        it alone is computed once.
    blocks : tuple of Block
        Conditional columns integrated jointly with their parents (see ``_gp_blocks``);
        their inactive entries are NaN in ``X`` and nothing is imputed.
    additive_variance : float
        The additive part's variance ``s_a`` (0: the product kernel alone).
    """

    columns: tuple[_Column, ...]
    length_scales: NDArray[np.float64]
    signal_variance: float
    noise_variance: float
    y_mean: float
    y_scale: float
    X: NDArray[np.float64]
    beta: NDArray[np.float64]
    loo_r2: float | None
    n_features: int
    null_fractions: tuple[float, float] | None = None
    varying: tuple[int, ...] = ()
    blocks: tuple[Block, ...] = ()
    additive_variance: float = 0.0

    @property
    def unit_members(self) -> tuple[tuple[int, ...], ...]:
        """The kernel's units: each block's members, then every other column alone."""
        return unit_members(self.n_features, self.blocks)

    @property
    def additive_units(self) -> NDArray[np.float64]:
        """1 for each unit (of ``unit_members``) in the additive part, else 0."""
        return additive_mask(self.columns, self.unit_members)

    @property
    def additive_weight(self) -> float:
        """``r``: the additive part's weights are ``r * beta`` (see the module docstring)."""
        return self.additive_variance / (self.signal_variance * max(float(self.additive_units.sum()), 1.0))

    @property
    def shared_inputs(self) -> bool:
        """Every draw has the same inputs (no inactive entries to impute)."""
        return not self.varying

    @property
    def n_draws(self) -> int:
        return int(self.beta.shape[0])

    def __repr__(self) -> str:
        return (f"GaussianProcessSurrogate(n_rows={self.X.shape[1]}, n_draws={self.n_draws}, "
                f"loo_r2={self.loo_r2})")

    def predict_per_tree(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each draw's posterior mean at encoded ``X``: shape (n_draws, n_rows).

        A member of a conditional block is inactive where its conditions say so (its
        value then plays no role) or where it is NaN. Any other NaN entry is averaged over
        its parameter's measure, as the draws saw it: their inactive entries were imputed
        from that measure, so the kernel factor of such a column is its mean ``z_j``.
        """
        X = np.array(X, dtype=np.float64)
        inactive = np.isnan(X)
        # members inactive by the conditions are so, whatever their value; the kernel itself
        # knows what an inactive member means
        X = self._block_inactive(X)
        for block in self.blocks:
            inactive[:, list(block.members)] = False
        patterns, which = np.unique(inactive, axis=0, return_inverse=True)
        out = np.empty((self.n_draws, X.shape[0]))
        units = self.unit_members
        varying = set(self.varying)
        fixed = [u for u in units if not varying & set(u)]
        moving = [u for u in units if varying & set(u)]
        r = self.additive_weight
        summed = {u for u, w in zip(units, self.additive_units, strict=True) if w}

        def factors(Xb: NDArray[np.float64], rows: NDArray[np.intp], pattern: NDArray[np.bool_],
                    group: list[tuple[int, ...]]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            """Product and sum of the kernel factors of the units ``group`` between the
            queries ``rows`` (inactive where ``pattern``) and the training inputs ``Xb``."""
            prod = np.ones((rows.size, Xb.shape[0]))
            total = np.zeros_like(prod)
            for unit in group:
                if len(unit) == 1 and pattern[unit[0]]:
                    j = unit[0]
                    F = _integrals(self.columns[j], float(self.length_scales[j]), Xb[:, j], second=False)[0]
                else:
                    on = np.array(unit, dtype=np.intp)
                    cols = [self.columns[j] for j in unit]
                    F = _kernel(cols, _scaled(cols, X[np.ix_(rows, on)]), Xb[:, on], self.length_scales[on])
                prod *= F
                if unit in summed:
                    total += F
            return prod, total

        for p, pattern in enumerate(patterns):
            rows = np.flatnonzero(which.ravel() == p)
            P0, S0 = factors(self.X[0], rows, pattern, fixed)  # the same in every draw
            if not moving:
                out[:, rows] = ((P0 + r * S0) @ self.beta.T).T
                continue
            for b in range(self.n_draws):
                P, S = factors(self.X[b], rows, pattern, moving)
                out[b, rows] = (P0 * P + r * (S0 + S)) @ self.beta[b]
        return self.y_mean + self.y_scale * out

    def difference_sd(self, A: NDArray[np.float64], B: NDArray[np.float64]) -> NDArray[np.float64]:
        """Posterior standard deviation of ``f(A_i) - f(B_i)``, in objective units.

        ``A`` and ``B`` are encoded rows with every parameter given (a conditional block's
        members are taken as inactive where its conditions say so). This is the
        uncertainty of the posterior on all trials (draw 0's inputs) about a difference;
        the draws' spread, a bootstrap with the hyperparameters held, leaves it out, and
        where the trials pin a smooth model down the draws can agree closely on a
        difference the trials hardly show.
        """
        cols, units, ell = self.columns, self.unit_members, self.length_scales
        s, r, n_add = self.signal_variance, self.additive_weight, float(self.additive_units.sum())

        def kernel(P: NDArray[np.float64], Q: NDArray[np.float64]) -> NDArray[np.float64]:
            return _signal_kernel(cols, P, Q, units, ell, s, self.additive_variance)

        sa, sb = (_scaled(cols, self._block_inactive(np.array(M, dtype=np.float64))) for M in (A, B))
        X0 = self.X[0]
        K = kernel(X0, X0)
        K[np.diag_indices(X0.shape[0])] += self.noise_variance
        D = kernel(sa, X0) - kernel(sb, X0)  # (m, n)
        prior = 2.0 * s * (1.0 + r * n_add) - 2.0 * np.einsum("ii->i", kernel(sa, sb))
        with threadpool_limits(limits=1, user_api="blas"):
            c = cho_factor(K, lower=True, check_finite=False)
            reduction = np.einsum("mi,im->m", D, cho_solve(c, D.T, check_finite=False))
        out: NDArray[np.float64] = self.y_scale * np.sqrt(np.maximum(prior - reduction, 0.0))
        return out

    def _block_inactive(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``X`` with each block member NaN where its block's conditions leave it inactive."""
        for block in self.blocks:
            m = list(block.members)
            sub = X[:, m]
            sub[~block.activity(X)] = np.nan
            X[:, m] = sub
        return X

    # -- exact integrals --------------------------------------------------------------
    def units(self, draw: int, fixed: dict[int, _Single] | None = None) -> list[_Single | BlockTerms]:
        """The factors of draw ``draw``'s posterior mean: one per block, one per other column.

        ``fixed`` holds already computed single columns that are the same in every draw.
        """
        Xb = self.X[draw]
        members = {m for b in self.blocks for m in b.members}
        out: list[_Single | BlockTerms] = [
            BlockTerms(b, self.columns, self.length_scales, Xb) for b in self.blocks
        ]
        for j in range(self.n_features):
            if j not in members:
                out.append(fixed[j] if fixed is not None and j in fixed
                           else _Single(j, self.columns[j], float(self.length_scales[j]), Xb[:, j]))
        return out

    def _draw_groups(self) -> list[NDArray[np.intp]]:
        # the integrals depend on a draw's inputs only, so draws that share them are done
        # together
        return [np.arange(self.n_draws)] if self.shared_inputs else [np.array([b]) for b in range(self.n_draws)]

    def marginal_per_draw(self, cols: Sequence[int], grids: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
        """Exact marginal prediction of columns ``cols`` on the product of encoded ``grids``:
        shape (n_draws, G1[, G2])."""
        shape = [g.size for g in grids]
        out = np.empty((self.n_draws, *shape))
        r = self.additive_weight
        for draws in self._draw_groups():
            units = self.units(int(draws[0]))
            summed = [bool(m) for m in self.additive_units]  # units() keeps unit_members' order
            hit = [u for u in units if set(u.members) & set(cols)]
            logz = sum((np.log(u.z) for u in units if u not in hit), np.zeros(self.X.shape[1]))
            beta = self.beta[draws].T  # (n, draws)
            w = beta * np.exp(logz)[:, None]
            a = r * beta  # the additive part: other units contribute their means
            rest = sum((u.z for u, m in zip(units, summed, strict=True) if m and u not in hit),
                       np.zeros(self.X.shape[1])) @ a  # (draws,)
            parts = []
            for u in hit:
                T = [c for c in cols if c in u.members]
                add = a if summed[units.index(u)] else np.zeros_like(a)
                parts.append((T, u.marginal(T, [grids[list(cols).index(c)] for c in T]), add))
            if len(parts) == 1 and len(cols) == 1:
                out[draws] = (parts[0][1] @ (w + parts[0][2])).T + rest[:, None]
            elif len(parts) == 1:
                G = parts[0][1] if parts[0][0] == list(cols) else np.swapaxes(parts[0][1], 0, 1)
                out[draws] = np.einsum("acn,nb->bac", G, w + parts[0][2]) + rest[:, None, None]
            else:
                first, second = (parts if parts[0][0] == [cols[0]] else parts[::-1])
                out[draws] = (np.einsum("an,cn,nb->bac", first[1], second[1], w)
                              + (first[1] @ first[2]).T[:, :, None] + (second[1] @ second[2]).T[:, None, :]
                              + rest[:, None, None])
        return self.y_mean + self.y_scale * out


class _Single:
    """An unconditional column's integrals against training inputs ``u`` (as ``BlockTerms``).

    ``root`` (see ``_gp_kernel.root``) stands for the (n, n) centred second moment where
    the column's measure has few nodes; the matrix itself is formed only when asked for,
    and not kept when ``root`` can form it again: at 2,000 rows it takes
    32 MB, and a hundred of them would not fit in memory.
    """

    def __init__(self, j: int, col: _Column, ell: float, u: NDArray[np.float64]) -> None:
        self.members = (j,)
        self.col, self.ell, self.u = col, ell, u
        self.z = _integrals(col, ell, u, second=False)[0]
        self.root = root(col, ell, u)
        self._C: NDArray[np.float64] | None = None

    def centred(self, T: tuple[int, ...]) -> NDArray[np.float64]:
        A = self.root
        if A is not None:
            return A.T @ A
        if self._C is None:
            self._C = _integrals(self.col, self.ell, self.u)[1]
        return self._C

    def pure(self, S: tuple[int, ...]) -> NDArray[np.float64]:
        return self.centred(S)

    def marginal(self, T: Sequence[int], grids: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
        return _kernel((self.col,), self.col.scale(grids[0])[:, None], self.u[:, None], np.array([self.ell]))


def _block_permutation(n: int, rng: np.random.Generator) -> NDArray[np.intp]:
    """Row order shuffled within consecutive blocks of about ``n / SHADOW_BLOCKS`` rows."""
    size = max(SHADOW_MIN_BLOCK, math.ceil(n / SHADOW_BLOCKS))
    order = np.arange(n)
    for start in range(0, n, size):
        rng.shuffle(order[start : start + size])
    return order


def fit_gp(
    space: SearchSpace,
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    n_draws: int,
    seed: int | None,
    max_rows: int = 2000,
    shadows: bool = False,
) -> GaussianProcessSurrogate:
    """Fit the surrogate on encoded ``X`` (NaN = inactive, rows in trial order) and finite ``y``.

    With ``shadows``, also the null of every effect (``null_fractions``, see
    :func:`_shadow_null`).
    """
    seeds = np.random.SeedSequence(seed).generate_state(5)
    rng_rows = np.random.default_rng(seeds[0])
    n = X.shape[0]
    if n > max_rows:
        n_best = max_rows // 10
        order = np.argsort(y, kind="stable")
        keep = np.concatenate((order[:n_best], rng_rows.choice(order[n_best:], max_rows - n_best, replace=False)))
        keep.sort()
        X, y = X[keep], y[keep]
        n = max_rows
    y_mean = float(y.mean())
    y_scale = float(y.std())
    if y_scale == 0 or not math.isfinite(y_scale):
        y_scale = 1.0
    ys = (y - y_mean) / y_scale
    blocks = conditional_blocks(space, X) if np.isnan(X).any() or space.conditional_names else ()
    # a block's parents are enumerated over all their values; other choices over those seen
    cols = _columns(space, X, keep={p for b in blocks or () for p in b.parents})
    d = len(cols)
    units = unit_members(d, blocks or ())
    imputed = _scaled(cols, impute_inactive(space, X, np.random.default_rng(seeds[1])))
    # with blocks the kernel knows inactive entries (NaN) and nothing is imputed
    U0 = _scaled(cols, X) if blocks else imputed
    fit_rows = (np.sort(np.random.default_rng(seeds[2]).choice(n, FIT_ROWS, replace=False))
                if n > FIT_ROWS else np.arange(n))  # sorted: trial order is kept
    # Hundreds of small factorizations: one BLAS thread is faster for them, and numpy's and
    # scipy's BLAS threads, alternating, would spin against each other on the same cores
    # (measured: a 256-row likelihood 10x slower on 2 cores).
    # The null's fit is independent of the model's: it runs in a second thread (numpy and
    # LAPACK release the interpreter lock for their loops), so two cores take half the time.
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=1) as pool:
        pending = (pool.submit(_shadow_null, cols, U0[fit_rows], ys[fit_rows],
                               np.random.default_rng(seeds[4]), blocks or (), imputed[fit_rows])
                   if shadows and n > 2 else None)
        theta = _fit_hyperparameters(cols, U0[fit_rows], ys[fit_rows], units)
        null = pending.result() if pending is not None else None
    ell, s, noise, a = _split(theta)

    # leave-one-out R² of the full-data posterior (Rasmussen & Williams Eq. 5.12)
    has_inactive = blocks is None and bool(np.isnan(X).any())
    Kt = _signal_kernel(cols, U0, U0, units, ell, s, a)  # every draw with these inputs takes its rows
    K = Kt + np.diag(np.full(n, noise))
    loo_r2: float | None = None
    try:
        c = cho_factor(K, lower=True, check_finite=False)
        Kinv = _inverse(c[0])
        resid = (Kinv @ ys) / np.diag(Kinv)
        loo_r2 = float(1.0 - (resid**2).mean() / max(float(ys.var()), 1e-300)) if n > 1 else None
    except LinAlgError:
        pass

    del K
    rng_draw = np.random.default_rng(seeds[3])
    Xs = np.empty((n_draws, n, d))
    betas = np.zeros((n_draws, n))
    for b in range(n_draws):
        Ub = _scaled(cols, impute_inactive(space, X, rng_draw)) if has_inactive else U0
        counts = np.bincount(rng_draw.integers(0, n, n), minlength=n) if n > 1 else np.ones(n, np.intp)
        rows = np.flatnonzero(counts)
        if has_inactive:
            Kb = _signal_kernel(cols, Ub[rows], Ub[rows], units, ell, s, a)
        else:
            Kb = Kt[np.ix_(rows, rows)]
        Kb[np.diag_indices(rows.size)] += noise / counts[rows]
        cb = cho_factor(Kb, lower=True, check_finite=False)
        betas[b, rows] = s * cho_solve(cb, ys[rows], check_finite=False)
        Xs[b] = Ub
    return GaussianProcessSurrogate(
        columns=cols, length_scales=readonly(ell), signal_variance=s, noise_variance=noise,
        y_mean=y_mean, y_scale=y_scale, X=readonly(Xs), beta=readonly(betas), loo_r2=loo_r2,
        n_features=d, null_fractions=null,
        varying=tuple(int(j) for j in np.flatnonzero(np.isnan(X).any(axis=0))) if has_inactive else (),
        blocks=blocks or (), additive_variance=a,
    )


def _shadow_null(
    cols: tuple[_Column, ...], U: NDArray[np.float64], y: NDArray[np.float64],
    rng: np.random.Generator, blocks: tuple[Block, ...] = (), imputed: NDArray[np.float64] | None = None,
) -> tuple[float, float]:
    """The share of variance a parameter that does nothing gets from this fit: of the
    main effects and of the interactions with the most important parameter.

    Every column gets a *shadow*: its values shuffled among trials close in trial order,
    so the shadow keeps the parameter's marginal -- also as it drifts while a sampler
    converges, the way a parameter that does nothing drifts with the good ones -- and has
    no bearing on the objective. The hyperparameters of columns and shadows are fit
    together, as for the model itself (:func:`_fit_hyperparameters`, from one start:
    every length scale 1), and the largest shares the shadows explain in the posterior
    mean of that augmented model are the null. It is computed on the rows the
    hyperparameters were fit on, apart from the model: with a shadow for every column,
    tens of trials no longer pin the length scales down (on 60 trials of a 10-parameter
    function a joint fit lost a parameter worth 5 % of the variance), so the reported
    importances stay those of the model without shadows. With conditional ``blocks``
    the shadows are made from the ``imputed`` inputs: a shadow is an ordinary column.
    """
    n, d = U.shape
    aug = cols + cols
    units = unit_members(2 * d, blocks)
    Ua = np.hstack((U, (U if imputed is None else imputed)[_block_permutation(n, rng)]))
    theta = _fit_hyperparameters(aug, Ua, y, units, _default_start(2 * d))
    ell, s, noise, a = _split(theta)
    K = _signal_kernel(aug, Ua, Ua, units, ell, s, a)
    K[np.diag_indices(n)] += noise
    try:
        beta = s * cho_solve(cho_factor(K, lower=True, check_finite=False), y, check_finite=False)
    except LinAlgError:
        return (0.0, 0.0)
    model = GaussianProcessSurrogate(
        columns=aug, length_scales=ell, signal_variance=s, noise_variance=noise, y_mean=0.0,
        y_scale=1.0, X=Ua[None], beta=beta[None], loo_r2=None, n_features=2 * d, blocks=blocks,
        additive_variance=a,
    )
    v_real, total, _ = decompose_gp(model, [(j,) for j in range(d)])
    if total[0] <= 0:
        return (0.0, 0.0)
    top = int(np.argmax(v_real[0]))
    v, _, _ = decompose_gp(model, [(j,) for j in range(d, 2 * d)] + [(top, j) for j in range(d, 2 * d)])
    return (float(v[0, :d].max() / total[0]), float(v[0, d:].max() / total[0]))


def decompose_gp(
    gp: GaussianProcessSurrogate, subsets: Sequence[tuple[int, ...]]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Exact ``V_U`` for every subset, total variance and mean of each draw's posterior mean.

    Returns
    -------
    variances : ndarray of shape (n_draws, n_subsets)
    total : ndarray of shape (n_draws,)
    means : ndarray of shape (n_draws,)
    """
    B, n, d = gp.X.shape
    variances = np.zeros((B, len(subsets)))
    total = np.zeros(B)
    means = np.zeros(B)
    scale2 = gp.y_scale**2
    # With shared inputs every draw has the same integrals, so each effect's matrix is
    # built once and applied to all draws' weights together; otherwise draw by draw.
    members = {m for b in gp.blocks for m in b.members}
    fixed = {j: _Single(j, gp.columns[j], float(gp.length_scales[j]), gp.X[0, :, j])
             for j in range(d) if j not in gp.varying and j not in members}
    for draws in gp._draw_groups():
        units = gp.units(int(draws[0]), fixed)
        unit_of = {m: k for k, u in enumerate(units) for m in u.members}
        logz = np.stack([np.log(u.z) for u in units]) if units else np.zeros((0, n))
        logp = logz.sum(axis=0)
        beta = gp.beta[draws].T  # (n, draws)
        add = gp.additive_weight * beta  # the additive part's weights
        summed = gp.additive_units  # units() keeps unit_members' order
        means[draws] = gp.y_mean + gp.y_scale * (np.exp(logp) @ beta + (summed @ np.exp(logz)) @ add)
        # the total variance: beta' (prod_u W_u - prod_u z_u z_u') beta over the units u
        # (columns or blocks) with W_u = C_u + z_u z_u', written as
        # sum_u (prod_{v<u} W_v) o C_u o (prod_{v>u} z_v z_v') so that no two large,
        # nearly equal products are subtracted (their difference would lose digits when
        # the posterior weights are large)
        after = np.exp(np.cumsum(logz[::-1], axis=0)[::-1] - logz) if units else logz  # prod_{v>u} z_v
        before = np.ones((n, n))
        acc = np.zeros(len(draws))
        for k, u in enumerate(units):
            C = u.centred(u.members)
            w = beta * after[k][:, None]
            acc += np.einsum("ib,ib->b", w, (before * C) @ w)
            # the additive part adds to the unit's own effects: with v the product part's
            # weights of them, (v + add)' C (v + add) - v' C v
            if gp.additive_variance > 0 and summed[k]:
                v = beta * np.exp(logp - logz[k])[:, None]
                acc += np.einsum("ib,ib->b", add, C @ (2.0 * v + add))
            if k < len(units) - 1:
                before *= C + np.outer(u.z, u.z)
        total[draws] = np.maximum(acc, 0.0) * scale2
        for k, U in enumerate(subsets):
            hit: dict[int, list[int]] = {}
            for j in U:
                hit.setdefault(unit_of[j], []).append(j)
            v = beta * np.exp(logp - logz[list(hit)].sum(axis=0))[:, None]
            if len(hit) == 1 and summed[next(iter(hit))]:  # the additive part holds it too
                v = v + add
            variances[draws, k] = np.maximum(_quadratic_form([units[q] for q in hit], hit.values(), v),
                                             0.0) * scale2
    return variances, total, means


def _quadratic_form(units: Sequence[_Single | BlockTerms], parts: Iterable[list[int]],
                    v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``v_b' (P_1 o P_2 o ...) v_b`` for every column ``b`` of ``v``, with ``P_u`` the pure
    effect of ``parts`` in unit ``u``.

    One or two single columns with a ``root`` need no (n, n) matrix:
    ``v' C v = |A v|^2`` and ``v' (A_1' A_1 o A_2' A_2) v = |A_1 diag(v) A_2'|_F^2``.
    """
    roots = [u.root for u in units if isinstance(u, _Single) and u.root is not None]
    if len(roots) == len(units) == 1:
        out: NDArray[np.float64] = ((roots[0] @ v) ** 2).sum(axis=0)
        return out
    if len(roots) == len(units) == 2:
        (A1, A2), (n, B) = roots, v.shape
        Y = (A1[None, :, :] * v.T[:, None, :]).reshape(-1, n)  # (B * Q1, n)
        out = ((Y @ A2.T) ** 2).reshape(B, -1).sum(axis=1)
        return out
    M: NDArray[np.float64] | None = None
    for u, S in zip(units, parts, strict=True):
        P = u.pure(tuple(S))
        M = P if M is None else M * P
    assert M is not None
    out = np.einsum("ib,ib->b", v, M @ v)
    return out
