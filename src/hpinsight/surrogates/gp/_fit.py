"""Fitting the Gaussian process: hyperparameters on a subset of rows, the posterior in
every draw, and the shadow null (the share a parameter that does nothing gets)."""

from __future__ import annotations

import contextlib
import math
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.linalg import LinAlgError
from scipy.stats import spearmanr

from ..._shared import readonly, spread_beyond_rounding
from ...surrogates.forest import impute_inactive
from .._residuals import residual_dependence
from ._blas import on_one_blas_thread, one_blas_thread
from ._blocks import Block, conditional_blocks
from ._decompose import cross_pair_variances, decompose_gp
from ._hidden import HiddenTerm, hidden_terms
from ._kernel import Column, make_columns, scale_columns
from ._lapack import cholesky, cholesky_solve, triangular_solve
from ._likelihood import (
    additive_mask,
    default_starts,
    fit_hyperparameters,
    fit_hyperparameters_and_raw,
    inverse,
    signal_kernel,
    split_theta,
    unit_members,
)
from ._model import FittedGP
from ._parallel import two_at_a_time

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ...space import SearchSpace

#: Rows used to fit the hyperparameters (the posterior then uses up to ``max_rows``).
FIT_ROWS = 256
#: Rows each hyperparameter refit's posterior mean is computed on: only the spread of
#: the shares over the refits is used, and every refit has the same rows.
REFIT_ROWS = 500
#: A refit is left out of the spread when, on the half it was not fit on, it predicts
#: this many nats per trial worse than the model's hyperparameters, beyond the refits'
#: median gap (:func:`_plausible`).
REFIT_FAILED_NATS = 1.0
#: This share of the refits (rounded down) fits the product part of the kernel alone,
#: without the additive part, and counts only where it predicts as well as the refits
#: of the whole kernel (:func:`_plausible`).
PRODUCT_REFIT_SHARE = 1 / 3
#: Shadow columns are shuffled within about this many consecutive blocks of trials...
SHADOW_BLOCKS = 15
#: ...of at least this many trials each.
SHADOW_MIN_BLOCK = 5
#: The null is the median over this many shuffles, each fit from one of the model's two
#: starting points in turn: one shuffle's largest shadow moves with the analysis seed
#: enough to flip verdicts (see ``benchmarks/README.md``).
SHADOW_SHUFFLES = 3


def _block_permutation(n: int, rng: np.random.Generator) -> NDArray[np.intp]:
    """Row order shuffled within consecutive blocks of about ``n / SHADOW_BLOCKS`` rows."""
    size = max(SHADOW_MIN_BLOCK, math.ceil(n / SHADOW_BLOCKS))
    order = np.arange(n)
    for start in range(0, n, size):
        rng.shuffle(order[start : start + size])
    return order


@on_one_blas_thread
def fit_gp(
    space: SearchSpace,
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    n_draws: int,
    seed: int | None,
    max_rows: int = 2000,
    shadows: bool = False,
    refits: int = 0,
    prune: bool = False,
    means_only: bool = False,
    maximize: bool = False,
) -> FittedGP:
    """Fit the surrogate on encoded ``X`` (NaN = inactive, rows in trial order) and finite ``y``.

    With ``shadows``, also the null of every effect (``shadow_fractions``, see
    :func:`_shadow_null`). With ``refits``, also that many models whose hyperparameters
    are fit on random halves of the rows the model's were fit on, less those that failed
    on the other half (:func:`_plausible`; ``FittedGP.refits``), each the posterior mean
    on the same ``REFIT_ROWS`` rows (all when there are fewer). Of them, the last
    ``PRODUCT_REFIT_SHARE`` fit the kernel's product part alone; the others the whole
    kernel, from one of the two starting points in turn. With ``prune``, the model's own
    fit takes out the columns whose removal costs the likelihood less than the price of
    a parameter (:func:`~._likelihood.prune_columns`; the shadows' fits and the refits do
    not), and ``FittedGP.unpruned`` is the posterior mean under its hyperparameters
    before that. With ``means_only``, what only verdicts, bands and notes read is left
    out (``unpruned``, the leave-one-out fit, ``hidden_terms``): every draw, and so
    every mean, is the same to the bit, as no random stream is shared with them.
    Of more than ``max_rows`` rows the best tenth is always kept: the lowest values, or
    with ``maximize`` the highest.
    """
    seeds = np.random.SeedSequence(seed).generate_state(6)
    rng_rows = np.random.default_rng(seeds[0])
    n = X.shape[0]
    n_given, kept_rows = n, None
    if n > max_rows:
        n_best = max_rows // 10
        order = np.argsort(-y if maximize else y, kind="stable")
        keep = np.concatenate((order[:n_best], rng_rows.choice(order[n_best:], max_rows - n_best, replace=False)))
        keep.sort()
        X, y = X[keep], y[keep]
        kept_rows = keep
        n = max_rows
    y_mean = float(y.mean())
    # a spread at the rounding of the values themselves is no spread: standardized, the
    # model "explained" it with shares for every parameter (as the forest's fit reads it)
    y_sd = spread_beyond_rounding(y)
    y_scale = 1.0 if y_sd is None else y_sd
    ys = np.zeros_like(y) if y_sd is None else (y - y_mean) / y_scale
    blocks = conditional_blocks(space, X) if np.isnan(X).any() or space.conditional_names else ()
    # a block's parents are enumerated over all their values; other choices over those seen
    cols = make_columns(space, X, keep={p for b in blocks or () for p in b.parents})
    d = len(cols)
    units = unit_members(d, blocks or ())
    # a categorical measured over the choices its active entries took is imputed from
    # those alone: a code outside them broke its kernel mean, (1 + (k-1) rho) / k, which
    # holds only for the measured choices (6.7 % of the total variance off, 20 of 60 rows)
    measured = {j: c.points for j, c in enumerate(cols) if c.categorical and c.points is not None}
    imputed = scale_columns(cols, impute_inactive(space, X, np.random.default_rng(seeds[1]),
                                                  measured))
    # with blocks the kernel knows inactive entries (NaN) and nothing is imputed
    U0 = scale_columns(cols, X) if blocks else imputed
    fit_rows = (np.sort(np.random.default_rng(seeds[2]).choice(n, FIT_ROWS, replace=False))
                if n > FIT_ROWS else np.arange(n))  # sorted: trial order is kept
    # the refits' rows: half the model's each
    rng_half = np.random.default_rng(seeds[5])
    halves = [np.sort(rng_half.choice(fit_rows, max(fit_rows.size // 2, 2), replace=False))
              for _ in range(refits if n > 3 else 0)]
    # each refit from one of the model's two starting points in turn, as the shadows:
    # half the rank fits of both, and where the two land apart the spread shows it.
    # The last ones without the additive part: where the optimizer sampled corners
    # of two parameters, main effects and an interaction between them fit the trials
    # alike, and the model's own fit picks one of the two (see ``_plausible``)
    whole = len(halves) - int(len(halves) * PRODUCT_REFIT_SHARE)
    starts = default_starts(d, len(units))
    shuffles = np.random.default_rng(seeds[4]).spawn(SHADOW_SHUFFLES if shadows and n > 2 else 0)
    aug_starts = default_starts(2 * d, len(unit_members(2 * d, blocks or ())))
    # The fits besides the model's own, the longest (the shadows') first. Each is
    # independent of the others and of the model's (a shadow draws its shuffle from a
    # generator of its own), so who runs it changes no bit.
    tasks = ([partial(_shadow_null, cols, U0[fit_rows], ys[fit_rows], rng, blocks or (),
                      imputed[fit_rows], aug_starts[k % 2]) for k, rng in enumerate(shuffles)]
             + [partial(fit_hyperparameters, cols, U0[half], ys[half], units, starts[k % 2],
                        product_only=k >= whole) for k, half in enumerate(halves)])
    # Hundreds of small factorizations: one BLAS thread is faster for them, and numpy's and
    # scipy's BLAS threads, alternating, would spin against each other on the same cores
    # (measured: a 256-row likelihood 10x slower on 2 cores).
    # Two threads share the fits (numpy's loops and the factorizations of ``_lapack``
    # release the interpreter lock): a second one takes the tasks in turn, and this one,
    # once it has fit the model, the next one not yet begun, so both end within one task
    # of each other (with the shadows in the second thread and the refits here, this one
    # waited for the last shadow: 200 x 40 with noise 15.0 -> 12.7 s, medians of five). Without tasks, the
    # second thread runs the fit to the ranks from the model's second starting point.
    with one_blas_thread(), ThreadPoolExecutor(max_workers=1) as pool:
        futures = [pool.submit(task) for task in tasks]
        try:
            theta, raw_ell, pruned_cols, before = fit_hyperparameters_and_raw(
                cols, U0[fit_rows], ys[fit_rows], units, pool=None if futures else pool,
                prune=prune)
            done: dict[int, Any] = {}
            for k, (task, future) in enumerate(zip(tasks, futures, strict=True)):
                if future.cancel():  # not begun by the second thread: this one runs it
                    done[k] = task()
            results: list[Any] = [done[k] if k in done else future.result()
                                  for k, future in enumerate(futures)]
        except BaseException:  # an error or an interrupt: the queued fits are not run
            for future in futures:
                future.cancel()
            raise
    nulls = np.array(results[:len(shuffles)]).reshape(-1, 2)
    null = (float(np.median(nulls[:, 0])), float(np.median(nulls[:, 1]))) if shuffles else None
    kept = _plausible(cols, units, U0, ys, theta, fit_rows, halves, results[len(shuffles):], whole)
    ell, s, noise, a_units = split_theta(theta, d)
    a, weights = _additive(cols, units, a_units)

    has_inactive = blocks is None and bool(np.isnan(X).any())
    Kt = signal_kernel(cols, U0, U0, units, ell, s, a_units)  # every draw with these inputs takes its rows
    fit_r2: float | None = None
    pvalues: NDArray[np.float64] | None = None
    spread: NDArray[np.float64] | None = None
    hidden: tuple[HiddenTerm, ...] | None = None
    residuals: NDArray[np.float64] | None = None
    residual_sds: NDArray[np.float64] | None = None
    if not means_only and ys.any():  # nothing here reaches a mean; nothing to predict
        with contextlib.suppress(LinAlgError):
            fit_r2, pvalues, spread, hidden, resid, sds = _leave_one_out(
                cols, X, U0 if blocks else scale_columns(cols, X), ys,
                Kt + np.diag(np.full(n, noise)))
            spread = spread * y_scale  # in objective units
            # per row given, in objective units (NaN for rows a large study left out)
            residuals, residual_sds = np.full(n_given, np.nan), np.full(n_given, np.nan)
            at = slice(None) if kept_rows is None else kept_rows
            residuals[at], residual_sds[at] = resid * y_scale, sds * y_scale
    rng_draw = np.random.default_rng(seeds[3])
    Xs = np.empty((n_draws, n, d))
    resamples = []
    for b in range(n_draws):  # the random streams first, in order; the solves two at a time
        Xs[b] = scale_columns(cols, impute_inactive(space, X, rng_draw, measured)) \
            if has_inactive else U0
        resamples.append(np.bincount(rng_draw.integers(0, n, n), minlength=n) if n > 1 else np.ones(n, np.intp))

    def draw(Ub: NDArray[np.float64], counts: NDArray[np.intp]) -> NDArray[np.float64]:
        rows = np.flatnonzero(counts)
        if has_inactive:
            Kb = signal_kernel(cols, Ub[rows], Ub[rows], units, ell, s, a_units)
        else:
            Kb = Kt[np.ix_(rows, rows)]
        Kb[np.diag_indices(rows.size)] += noise / counts[rows]
        beta = np.zeros(n)
        beta[rows] = s * cholesky_solve(cholesky(Kb), ys[rows])
        return beta

    betas = np.array(two_at_a_time(draw, Xs, resamples)).reshape(n_draws, n)
    refit_rows = (np.sort(rng_half.choice(n, REFIT_ROWS, replace=False)) if n > REFIT_ROWS and kept
                  else np.arange(n))

    def refit(t: NDArray[np.float64], rank: float) -> FittedGP | None:
        try:
            return _posterior_mean(cols, units, blocks or (), Xs[0][refit_rows], ys[refit_rows], t, y_mean, y_scale,
                                   held_out_rank=rank, held_out_size=fit_rows.size - halves[0].size)
        except LinAlgError:  # a refit whose kernel does not factorize adds no spread
            return None

    others = tuple(m for m in two_at_a_time(refit, *zip(*kept, strict=True)) if m is not None) if kept else ()
    # the columns taken out, and the model they were taken out of, on the refits' rows
    unpruned = None
    if before is not None and not means_only:
        # one BLAS thread, as every other factorization here: with the threads BLAS has
        # by default, its sums took another order whenever another analysis in the process
        # held the limit, and the same seed gave other last digits
        with contextlib.suppress(LinAlgError), one_blas_thread():  # failed: "uncertain"
            unpruned = _posterior_mean(cols, units, blocks or (), Xs[0][refit_rows], ys[refit_rows],
                                       before, y_mean, y_scale)
    return FittedGP(
        columns=cols, length_scales=readonly(ell), signal_variance=s, noise_variance=noise,
        y_mean=y_mean, y_scale=y_scale, X=readonly(Xs), beta=readonly(betas), fit_r2=fit_r2,
        n_features=d, shadow_fractions=null,
        varying=tuple(int(j) for j in np.flatnonzero(np.isnan(X).any(axis=0))) if has_inactive else (),
        blocks=blocks or (), additive_variance=a, additive_weights=weights, refits=others,
        raw_length_scales=readonly(raw_ell),
        pruned=pruned_cols if prune else None, unpruned=unpruned,
        residual_pvalues=None if pvalues is None else readonly(pvalues),
        residual_spread=None if spread is None else readonly(spread),
        hidden_terms=hidden,
        residuals=None if residuals is None else readonly(residuals),
        residual_sds=None if residual_sds is None else readonly(residual_sds),
    )


def _leave_one_out(
    cols: tuple[Column, ...], X: NDArray[np.float64], U: NDArray[np.float64],
    ys: NDArray[np.float64], K: NDArray[np.float64],
) -> tuple[float | None, NDArray[np.float64], NDArray[np.float64], tuple[HiddenTerm, ...],
           NDArray[np.float64], NDArray[np.float64]]:
    """The leave-one-out R² of the posterior with kernel ``K`` (noise included) on the
    standardized ``ys`` (Rasmussen & Williams Eq. 5.10-5.12), the p-values and spreads of
    its errors' dependence on each parameter (in units of ``ys``), how large an
    effect of each parameter the trials could hide (``U``: inactive entries as NaN), and
    each row's error and predictive standard deviation (units of ``ys``).
    Raises ``LinAlgError`` when ``K`` does not factorize."""
    n = ys.size
    with one_blas_thread():  # the same digits on any machine
        c = cholesky(K)
        Kinv = inverse(c)
        resid = (Kinv @ ys) / np.diag(Kinv)
        hidden = hidden_terms(cols, U, c)
    fit_r2 = float(1.0 - (resid**2).mean() / max(float(ys.var()), 1e-300)) if n > 1 else None
    pvalues, spread = residual_dependence(X, [col.categorical for col in cols], resid)
    return fit_r2, pvalues, spread, hidden, resid, 1.0 / np.sqrt(np.diag(Kinv))


def _posterior_mean(cols: tuple[Column, ...], units: tuple[tuple[int, ...], ...], blocks: tuple[Block, ...],
                    U: NDArray[np.float64], ys: NDArray[np.float64], theta: NDArray[np.float64],
                    y_mean: float = 0.0, y_scale: float = 1.0, held_out_rank: float | None = None,
                    held_out_size: int | None = None) -> FittedGP:
    """The posterior mean on every row ``U`` (one draw, no resample) under ``theta``, for
    the refits (with ``held_out_rank``, see :func:`_held_out`) and the shadows' model.
    Raises ``LinAlgError`` when the kernel does not factorize."""
    d = len(cols)
    ell, s, noise, a_units = split_theta(theta, d)
    a, weights = _additive(cols, units, a_units)
    K = signal_kernel(cols, U, U, units, ell, s, a_units)
    K[np.diag_indices(U.shape[0])] += noise
    beta = s * cholesky_solve(cholesky(K), ys)
    return FittedGP(
        columns=cols, length_scales=readonly(ell), signal_variance=s, noise_variance=noise,
        y_mean=y_mean, y_scale=y_scale, X=readonly(U[None].copy()), beta=readonly(beta[None]), fit_r2=None,
        n_features=d, blocks=blocks, additive_variance=a, additive_weights=weights, held_out_rank=held_out_rank,
        held_out_size=held_out_size,
    )


def _held_out(cols: tuple[Column, ...], units: tuple[tuple[int, ...], ...],
              U: NDArray[np.float64], ys: NDArray[np.float64], theta: NDArray[np.float64],
              train: NDArray[np.intp], test: NDArray[np.intp]) -> tuple[float, float]:
    """How ``theta``, conditioned on ``ys[train]``, predicts ``ys[test]``: the mean log
    predictive density (each row's own normal), and the Spearman correlation of the
    posterior mean with ``ys[test]`` (-inf for both where the kernel does not factorize;
    0 for the correlation where the prediction or the values are constant). The mean
    for the correlation is taken about the mean of ``ys[train]``, what a model that
    finds nothing predicts, not about the prior's 0: far from the training rows it
    returns to that mean, and ``ys``'s own mean holds the values of ``test``.

    Ranks, because squared error is ruled by outliers: on a real study (60 TPE trials,
    two diverged at 0.63 against a median of 0.96) two of seven refits that found its
    largest effect had held-out R² of -0.71 and -0.52, each with both diverged trials
    in its held-out half, and Spearman correlations above 0."""
    ell, s, noise, a_units = split_theta(theta, len(cols))
    K = signal_kernel(cols, U[train], U[train], units, ell, s, a_units)
    K[np.diag_indices(train.size)] += noise
    try:
        c = cholesky(K)
    except LinAlgError:
        return -math.inf, -math.inf
    Ks = signal_kernel(cols, U[test], U[train], units, ell, s, a_units)
    # one solve for both means: K^-1 y and K^-1 1 (the centred mean is their difference)
    w = cholesky_solve(c, np.column_stack([ys[train], np.ones(train.size)]))
    mean = Ks @ w[:, 0]
    v = triangular_solve(c, Ks.T)
    prior = float(signal_kernel(cols, U[test[:1]], U[test[:1]], units, ell, s, a_units)[0, 0])  # every kernel is 1 on the diagonal
    var = np.maximum(prior + noise - np.einsum("ij,ij->j", v, v), 1e-12)
    density = float(np.mean(-0.5 * np.log(2 * math.pi * var) - 0.5 * (ys[test] - mean) ** 2 / var))
    about = Ks @ (w[:, 0] - float(ys[train].mean()) * w[:, 1])
    return density, _rank_correlation(about, ys[test])


def _rank_correlation(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Spearman's correlation of ``a`` and ``b`` (average ranks for ties); 0 where
    either is constant (up to rounding of ``a``'s scale)."""
    scale = float(np.max(np.abs(a))) if a.size else 0.0
    if a.size < 2 or np.ptp(a) <= 1e-12 * max(scale, 1.0) or np.ptp(b) == 0:
        return 0.0
    return float(spearmanr(a, b).statistic)


def _plausible(cols: tuple[Column, ...], units: tuple[tuple[int, ...], ...],
               U: NDArray[np.float64], ys: NDArray[np.float64], theta: NDArray[np.float64],
               rows: NDArray[np.intp], halves: list[NDArray[np.intp]],
               thetas: list[NDArray[np.float64]], whole: int | None = None,
               ) -> list[tuple[NDArray[np.float64], float]]:
    """The refits' hyperparameters less those that failed, each with its rank
    correlation on the half of ``rows`` it was not fit on (:func:`_held_out`; the refit
    model's ``held_out_rank``).

    Each refit and the model's
    hyperparameters, conditioned on the refit's half, predict the other half of ``rows``;
    a refit whose mean log density there falls more than ``REFIT_FAILED_NATS`` further
    below the model's than the refits' median gap has lost what the other half shows
    (on the shrinking example's 60 trials, two of eight refits from one starting point
    lost ``lr``, its largest effect, predicting 6.8 and 7.0 nats per trial worse, the
    others 0.2-0.5; their costs of fixing the knobs, 0.79 against at most 0.01, were
    the whole of the 90 % quantile).

    The refits after the first ``whole`` (all when None) have the kernel's product part
    alone: another structure, not another draw of the same one. One is kept only when
    its gap is no larger than that of a kept refit of the whole kernel, so it counts
    where the trials cannot tell the two structures apart (corners of a pure interaction
    under TPE: the gaps of both kinds within 0.15 nats per trial of each other) and not
    where they can (a sum of main effects under random search: the product part alone
    predicts about 2.3 nats per trial worse). The two closest refits are kept whatever
    their gaps."""
    def check(t: NDArray[np.float64], half: NDArray[np.intp]) -> tuple[float, float]:
        other = np.setdiff1d(rows, half)
        density, rank = _held_out(cols, units, U, ys, t, half, other)
        return _held_out(cols, units, U, ys, theta, half, other)[0] - density, rank

    checks = two_at_a_time(check, thetas, halves)  # 1,000 x 10: 0.29 -> 0.11 s
    ranks = [rank for _, rank in checks]
    if len(thetas) < 2:
        return list(zip(thetas, ranks, strict=True))
    gaps = np.array([gap for gap, _ in checks])
    whole = len(thetas) if whole is None else whole
    keep = gaps <= np.median(gaps[:whole]) + REFIT_FAILED_NATS
    keep[whole:] = gaps[whole:] <= gaps[:whole][keep[:whole]].max()
    keep[np.argsort(gaps, kind="stable")[:2]] = True
    return [(t, rank) for t, rank, k in zip(thetas, ranks, keep, strict=True) if k]


def _additive(cols: tuple[Column, ...], units: tuple[tuple[int, ...], ...],
              a_units: NDArray[np.float64]) -> tuple[float, NDArray[np.float64] | None]:
    """The additive part's variance ``s_a`` (the mean over its units) and each unit's
    weight relative to it."""
    mask = additive_mask(cols, units)
    if not mask.any():
        return 0.0, None
    a = float((a_units * mask).sum() / mask.sum())
    return a, readonly(np.where(mask > 0, a_units / a, 0.0))


def _shadow_null(
    cols: tuple[Column, ...], U: NDArray[np.float64], y: NDArray[np.float64],
    rng: np.random.Generator, blocks: tuple[Block, ...] = (), imputed: NDArray[np.float64] | None = None,
    start: NDArray[np.float64] | None = None,
) -> tuple[float, float]:
    """The share of variance a parameter that does nothing gets from this fit: the
    largest of the shadows' main effects, and the largest interaction a shadow takes
    part in (with a parameter or another shadow).

    Every column gets a *shadow*: its values shuffled among trials close in trial order,
    so the shadow keeps the parameter's marginal -- also as it drifts while a sampler
    converges, the way a parameter that does nothing drifts with the good ones -- and has
    no bearing on the objective. The hyperparameters of columns and shadows are fit
    together, as for the model itself (:func:`fit_hyperparameters`, from ``start``, one
    of its two starting points, or from both), and the largest shares the shadows explain
    in the posterior mean of that augmented model are this shuffle's null; the model's is
    the median over ``SHADOW_SHUFFLES`` shuffles. It is computed on the rows the
    hyperparameters were fit on, apart from the model: with a shadow for every column,
    tens of trials no longer pin the length scales down (on 60 trials of a 10-parameter
    function a joint fit lost a parameter worth 5 % of the variance), so the reported
    importances stay those of the model without shadows. With conditional ``blocks``
    the shadows are made from the ``imputed`` inputs: a shadow is an ordinary column.

    The interactions' null is the largest over every pair with a shadow in it (a
    parameter and a shadow, or two shadows: ``d (3 d - 1) / 2`` pairs), not only the most
    important parameter's ``d``: the verdicts test all ``d (d - 1) / 2`` pairs of
    parameters, and a null drawn from fewer pairs than are tested is beaten by one of them
    by chance. Where the objective is noise the fit puts what it makes of it on one or two
    columns, parameters or shadows alike, and the null is high only when a shadow is among
    them, so the more of the candidates hold a shadow, the more often it is: on pure noise
    (10 parameters, 100 random-search trials) the fit gave a pair of parameters 13-34 % of
    its variance, "resolved" in 7 of 8 studies against the top parameter's pairs with the
    shadows, in 1 of 8 against every pair with a shadow (``benchmarks/README.md``).
    """
    n, d = U.shape
    aug = cols + cols
    units = unit_members(2 * d, blocks)
    Ua = np.hstack((U, (U if imputed is None else imputed)[_block_permutation(n, rng)]))
    # not always from the same one of the model's two starting points: from every length
    # scale 1, a noise-free objective's fit landed where `lr`'s additive variance was 0
    # and a shadow stood in for it (the shrinking example: a null of 0.004, and a real
    # effect of 0.0014 fixed)
    theta = fit_hyperparameters(aug, Ua, y, units, start)
    try:
        model = _posterior_mean(aug, units, blocks, Ua, y, theta)
    except LinAlgError:
        return (0.0, 0.0)
    v, total, _ = decompose_gp(model, [(j,) for j in range(d, 2 * d)])
    if total[0] <= 0:
        return (0.0, 0.0)
    pairs = cross_pair_variances(model, range(2 * d), range(d, 2 * d))  # every column x shadow
    pairs[d:] = np.triu(pairs[d:], k=1)  # each pair of shadows once
    return (float(v[0].max() / total[0]), float(pairs.max() / total[0]))
