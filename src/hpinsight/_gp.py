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
``_encoding``: log parameters in log space). The kernel is a product over
columns, ``k(x, x') = prod_j k_j(x_j, x'_j)``:

* numerical columns: ``exp(-(u - u')^2 / (2 l_j^2))`` (squared exponential);
* categorical columns: ``1`` for equal choices, ``rho_j = exp(-1 / (2 l_j^2))``
  otherwise -- every pair of choices equally similar, so the order of the
  choices plays no role.

The objective is standardized; a constant mean, a signal variance and a
Gaussian noise variance are fit together with the length scales by maximizing
the log marginal likelihood (Rasmussen & Williams, 2006, Eq. 5.8-5.9) with
analytic gradients, on at most ``FIT_ROWS`` rows drawn at random. Relevance must
be supported twice, by the objective and by its ranks (:func:`_fit_hyperparameters`).

Estimand and exactness. The posterior mean is
``m(x) = mu + sum_i beta_i prod_j k_j(x_j, x_ij)``. Under the space's product
measure (uniform in the encoded coordinate, uniform over integer values and
choices), write ``k_j = z_ij + h_ij`` with ``z_ij = E[k_j(X_j, x_ij)]``; the
product expands into the functional ANOVA terms directly,
``f_U(x_U) = sum_i beta_i prod_{j not in U} z_ij prod_{j in U} h_ij(x_j)``,
so the variance of every effect is a quadratic form

    ``V_U = v_U' (C_j1 o C_j2 o ...) v_U``,   ``v_U = beta * prod_{j not in U} z_j``,

with ``C_j[i, l] = E[h_ij h_lj] = W_j[i, l] - z_ij z_lj`` and ``o`` the
elementwise product. ``z`` and ``W`` are one-dimensional integrals in closed
form (error functions) for continuous columns, and finite sums for discrete
ones and choices. Every number is exact for the fitted posterior mean.

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
* Large histories: the posterior uses at most ``max_rows`` trials (default
  2,000), the best tenth of them always included and the rest drawn at random;
  see ``benchmarks/README.md`` for the measured effect.
"""

from __future__ import annotations

import math
import warnings
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
from ._gp_kernel import _Column, _columns, _integrals, _kernel, _scaled, root
from ._shared import readonly

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import NDArray

    from ._space import SearchSpace

#: Rows used to fit the hyperparameters (the posterior then uses up to ``max_rows``).
FIT_ROWS = 256
#: Length-scale bounds, in units of the rescaled range [0, 1].
LENGTH_BOUNDS = (1e-2, 1e2)
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
def _neg_log_likelihood(
    theta: NDArray[np.float64], cols: Sequence[_Column], U: NDArray[np.float64], y: NDArray[np.float64]
) -> tuple[float, NDArray[np.float64]]:
    """Negative log marginal likelihood (plus a weak length-scale prior) and its gradient.

    ``theta`` = (log l_1..l_d, log signal variance, log noise variance). The prior,
    ``log l_j ~ N(log 1, 1.5^2)``, only keeps the optimizer away from the bounds when
    the data say nothing about a column; it is weak against any real signal.
    """
    n, d = U.shape
    ell, s, noise = np.exp(theta[:d]), math.exp(theta[d]), math.exp(theta[d + 1])
    Kt = _kernel(cols, U, U, ell)
    K = s * Kt
    K[np.diag_indices(n)] += noise
    try:
        c = cho_factor(K, lower=True, check_finite=False)
    except LinAlgError:
        return 1e25, np.zeros_like(theta)
    alpha = cho_solve(c, y, check_finite=False)
    nll = 0.5 * float(y @ alpha) + float(np.log(np.diag(c[0])).sum()) + 0.5 * n * math.log(2 * math.pi)
    Kinv = _inverse(c[0])
    A = np.outer(alpha, alpha) - Kinv
    B = A * (s * Kt)
    grad = np.empty_like(theta)
    rows = B.sum(axis=1)
    U = np.where(np.isnan(U), 0.0, U)  # inactive entries: B is 0 against active ones
    for j, col in enumerate(cols):
        u = U[:, j]
        if col.categorical:
            raw = float(B.sum() - B[u[:, None] == u[None, :]].sum())
        else:
            raw = 2.0 * float((u * u) @ rows) - 2.0 * float(u @ (B @ u))
        grad[j] = -0.5 * raw / ell[j] ** 2
    grad[d] = -0.5 * float(B.sum())
    grad[d + 1] = -0.5 * noise * float(np.trace(A))
    prior_sd = 1.5
    nll += float(0.5 * (theta[:d] ** 2).sum() / prior_sd**2)
    grad[:d] += theta[:d] / prior_sd**2
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
    cols: Sequence[_Column], U: NDArray[np.float64], y: NDArray[np.float64],
    x0: NDArray[np.float64], free: slice,
) -> tuple[float, NDArray[np.float64]]:
    """L-BFGS-B on the entries ``free`` of ``theta``, the others held at ``x0``."""
    d = U.shape[1]
    lo, hi = math.log(LENGTH_BOUNDS[0]), math.log(LENGTH_BOUNDS[1])
    bounds = ([(lo, hi)] * d + [(math.log(1e-2), math.log(1e2)), (math.log(1e-6), math.log(2.0))])[free]
    held = x0.copy()

    def objective(t: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        held[free] = t
        value, grad = _neg_log_likelihood(held, cols, U, y)
        return value, grad[free]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = minimize(objective, x0[free], jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 100})
    out = x0.copy()
    out[free] = res.x
    return float(res.fun), out


def _fit_hyperparameters(
    cols: Sequence[_Column], U: NDArray[np.float64], y: NDArray[np.float64],
    start: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Length scales that both the objective and its ranks support; then signal and noise.

    Relevance is decided twice: by the marginal likelihood of the standardized objective,
    and by that of the normal scores of its ranks. Each parameter keeps the *longer* of
    its two length scales, so it counts as relevant only if both agree. The rank fit is
    blind to outliers: on real tuning studies a few diverged trials (an SVC's error
    jumping from 0.03 to 0.37) dominate the variance, and a rarely sampled choice of a
    parameter that does nothing, holding two of them, can then "explain" them (0.15 of
    the variance in one of five TPE studies, 0.04 with this rule; see
    ``benchmarks/README.md``). The raw fit keeps the length scales of smooth effects
    right, where ranks would distort them. Signal and noise variance are then fit on
    the objective itself with the length scales held. ``start`` (log length scales,
    log signal and noise variance) replaces the two default starting points.
    """
    d = U.shape[1]
    x0 = np.array([0.0] * d + [0.0, math.log(0.1)])
    all_params, variances = slice(0, d + 2), slice(d, d + 2)
    z = _normal_scores(y)
    starts = (x0, x0 + math.log(0.3) * np.r_[np.ones(d), 0.0, 0.0]) if start is None else (start,)
    ranked = min((_minimize_nll(cols, U, z, x, all_params) for x in starts), key=lambda f: f[0])[1]
    theta = _minimize_nll(cols, U, y, ranked, all_params)[1]  # the raw fit starts where ranks ended
    theta[:d] = np.maximum(ranked[:d], theta[:d])
    return _minimize_nll(cols, U, y, theta, variances)[1]


# -- the fitted surrogate -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GaussianProcessSurrogate:
    """A fitted product-kernel GP: its posterior mean in every draw.

    Attributes
    ----------
    length_scales : ndarray of shape (n_params,)
        In units of each parameter's rescaled range (categoricals: ``rho = exp(-1/(2 l^2))``).
    signal_variance, noise_variance : float
        In units of the standardized objective.
    y_mean, y_scale : float
        The standardization.
    X : ndarray of shape (n_draws, n_rows, n_params)
        Each draw's rescaled training inputs (they differ only where inactive entries
        were imputed).
    beta : ndarray of shape (n_draws, n_rows)
        Each draw's posterior weights (0 for rows outside its bootstrap resample).
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
        for block in self.blocks:  # members inactive by the conditions are so, whatever their value
            m = list(block.members)
            sub = X[:, m]
            sub[~block.activity(X)] = np.nan
            X[:, m] = sub
            inactive[:, m] = False  # the kernel itself knows what an inactive member means
        patterns, which = np.unique(inactive, axis=0, return_inverse=True)
        out = np.empty((self.n_draws, X.shape[0]))
        varying = list(self.varying)
        fixed = [j for j in range(self.n_features) if j not in varying]

        def factor(Xb: NDArray[np.float64], rows: NDArray[np.intp], pattern: NDArray[np.bool_],
                   columns: list[int]) -> NDArray[np.float64]:
            """Product of the kernel factors of ``columns`` between the queries ``rows``
            (inactive where ``pattern``) and the training inputs ``Xb``."""
            on = np.array([j for j in columns if not pattern[j]], dtype=np.intp)
            cols = [self.columns[j] for j in on]
            K = _kernel(cols, _scaled(cols, X[np.ix_(rows, on)]), Xb[:, on], self.length_scales[on])
            for j in columns:
                if pattern[j]:
                    K *= _integrals(self.columns[j], float(self.length_scales[j]), Xb[:, j], second=False)[0]
            return K

        for p, pattern in enumerate(patterns):
            rows = np.flatnonzero(which.ravel() == p)
            K0 = factor(self.X[0], rows, pattern, fixed)  # the same in every draw
            if not varying:
                out[:, rows] = (K0 @ self.beta.T).T
                continue
            for b in range(self.n_draws):
                out[b, rows] = (K0 * factor(self.X[b], rows, pattern, varying)) @ self.beta[b]
        return self.y_mean + self.y_scale * out

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
        for draws in self._draw_groups():
            units = self.units(int(draws[0]))
            hit = [u for u in units if set(u.members) & set(cols)]
            logz = sum((np.log(u.z) for u in units if u not in hit), np.zeros(self.X.shape[1]))
            w = self.beta[draws].T * np.exp(logz)[:, None]  # (n, draws)
            parts = []
            for u in hit:
                T = [c for c in cols if c in u.members]
                parts.append((T, u.marginal(T, [grids[list(cols).index(c)] for c in T])))
            if len(parts) == 1 and len(cols) == 1:
                out[draws] = (parts[0][1] @ w).T
            elif len(parts) == 1:
                G = parts[0][1] if parts[0][0] == list(cols) else np.swapaxes(parts[0][1], 0, 1)
                out[draws] = np.einsum("acn,nb->bac", G, w)
            else:
                first, second = (parts if parts[0][0] == [cols[0]] else parts[::-1])
                out[draws] = np.einsum("an,cn,nb->bac", first[1], second[1], w)
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
    cols = _columns(space)
    d = len(cols)
    y_mean = float(y.mean())
    y_scale = float(y.std())
    if y_scale == 0 or not math.isfinite(y_scale):
        y_scale = 1.0
    ys = (y - y_mean) / y_scale
    blocks = conditional_blocks(space, X) if np.isnan(X).any() or space.conditional_names else ()
    imputed = _scaled(cols, impute_inactive(space, X, np.random.default_rng(seeds[1])))
    # with blocks the kernel knows inactive entries (NaN) and nothing is imputed
    U0 = _scaled(cols, X) if blocks else imputed
    fit_rows = (np.sort(np.random.default_rng(seeds[2]).choice(n, FIT_ROWS, replace=False))
                if n > FIT_ROWS else np.arange(n))  # sorted: trial order is kept
    # Hundreds of small factorizations: one BLAS thread is faster for them, and numpy's and
    # scipy's BLAS threads, alternating, would spin against each other on the same cores
    # (measured: a 256-row likelihood 10x slower on 2 cores).
    with threadpool_limits(limits=1, user_api="blas"):
        theta = _fit_hyperparameters(cols, U0[fit_rows], ys[fit_rows])
        null = (_shadow_null(cols, U0[fit_rows], ys[fit_rows], np.random.default_rng(seeds[4]),
                             blocks or (), imputed[fit_rows])
                if shadows and n > 2 else None)
    ell, s, noise = np.exp(theta[:d]), math.exp(theta[d]), math.exp(theta[d + 1])

    # leave-one-out R² of the full-data posterior (Rasmussen & Williams Eq. 5.12)
    K = s * _kernel(cols, U0, U0, ell)
    K[np.diag_indices(n)] += noise
    loo_r2: float | None = None
    try:
        c = cho_factor(K, lower=True, check_finite=False)
        Kinv = _inverse(c[0])
        resid = (Kinv @ ys) / np.diag(Kinv)
        loo_r2 = float(1.0 - (resid**2).mean() / max(float(ys.var()), 1e-300)) if n > 1 else None
    except LinAlgError:
        pass

    has_inactive = blocks is None and bool(np.isnan(X).any())
    rng_draw = np.random.default_rng(seeds[3])
    Xs = np.empty((n_draws, n, d))
    betas = np.zeros((n_draws, n))
    for b in range(n_draws):
        Ub = _scaled(cols, impute_inactive(space, X, rng_draw)) if has_inactive else U0
        counts = np.bincount(rng_draw.integers(0, n, n), minlength=n) if n > 1 else np.ones(n, np.intp)
        rows = np.flatnonzero(counts)
        Kb = s * _kernel(cols, Ub[rows], Ub[rows], ell)
        Kb[np.diag_indices(rows.size)] += noise / counts[rows]
        cb = cho_factor(Kb, lower=True, check_finite=False)
        betas[b, rows] = s * cho_solve(cb, ys[rows], check_finite=False)
        Xs[b] = Ub
    return GaussianProcessSurrogate(
        columns=cols, length_scales=readonly(ell), signal_variance=s, noise_variance=noise,
        y_mean=y_mean, y_scale=y_scale, X=readonly(Xs), beta=readonly(betas), loo_r2=loo_r2,
        n_features=d, null_fractions=null,
        varying=tuple(int(j) for j in np.flatnonzero(np.isnan(X).any(axis=0))) if has_inactive else (),
        blocks=blocks or (),
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
    Ua = np.hstack((U, (U if imputed is None else imputed)[_block_permutation(n, rng)]))
    theta = _fit_hyperparameters(aug, Ua, y, np.r_[np.zeros(2 * d), 0.0, math.log(0.1)])
    ell, s, noise = np.exp(theta[: 2 * d]), math.exp(theta[2 * d]), math.exp(theta[2 * d + 1])
    K = s * _kernel(aug, Ua, Ua, ell)
    K[np.diag_indices(n)] += noise
    try:
        beta = s * cho_solve(cho_factor(K, lower=True, check_finite=False), y, check_finite=False)
    except LinAlgError:
        return (0.0, 0.0)
    model = GaussianProcessSurrogate(
        columns=aug, length_scales=ell, signal_variance=s, noise_variance=noise, y_mean=0.0,
        y_scale=1.0, X=Ua[None], beta=beta[None], loo_r2=None, n_features=2 * d, blocks=blocks,
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
        means[draws] = gp.y_mean + gp.y_scale * (np.exp(logp) @ beta)
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
            if k < len(units) - 1:
                before *= C + np.outer(u.z, u.z)
        total[draws] = np.maximum(acc, 0.0) * scale2
        for k, U in enumerate(subsets):
            hit: dict[int, list[int]] = {}
            for j in U:
                hit.setdefault(unit_of[j], []).append(j)
            v = beta * np.exp(logp - logz[list(hit)].sum(axis=0))[:, None]
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
