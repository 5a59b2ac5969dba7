"""The exact functional ANOVA of a fitted Gaussian process: the variance of every
subset's effect in every draw."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...exceptions import InvalidArgumentError
from ._blas import on_one_blas_thread
from ._model import SingleTerm
from ._parallel import two_at_a_time

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import NDArray

    from ._blocks import BlockTerms
    from ._model import FittedGP


@on_one_blas_thread
def decompose_gp(
    gp: FittedGP, subsets: Sequence[tuple[int, ...]]
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
    fixed = {j: SingleTerm(j, gp.columns[j], float(gp.length_scales[j]), gp.X[0, :, j])
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
        acc = (_product_terms(units, [beta * after[k][:, None] for k in range(len(units))]) if units
               else np.zeros(len(draws)))
        # the additive part adds to each unit's own effects: with v the product part's
        # weights of them, (v + add)' C (v + add) - v' C v
        if gp.additive_variance > 0:
            for k, u in enumerate(units):
                if summed[k]:
                    own = summed[k] * add
                    acc += _bilinear(u, own, 2.0 * beta * np.exp(logp - logz[k])[:, None] + own)
        total[draws] = np.maximum(acc, 0.0) * scale2
        for k, U in enumerate(subsets):
            hit: dict[int, list[int]] = {}
            for j in U:
                hit.setdefault(unit_of[j], []).append(j)
            v = beta * np.exp(logp - logz[list(hit)].sum(axis=0))[:, None]
            if len(hit) == 1 and summed[next(iter(hit))]:  # the additive part holds it too
                v = v + summed[next(iter(hit))] * add
            variances[draws, k] = np.maximum(_quadratic_form([units[q] for q in hit], hit.values(), v),
                                             0.0) * scale2
    return variances, total, means


def _root(u: SingleTerm | BlockTerms) -> NDArray[np.float64] | None:
    """The unit's ``root`` (``C = A' A``), None where it has none."""
    return u.root if isinstance(u, SingleTerm) else None


def _bilinear(u: SingleTerm | BlockTerms, a: NDArray[np.float64],
              b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``a_k' C_u b_k`` for every column ``k`` of ``a`` and ``b``, ``C_u`` the unit's
    centred second moment: through its root where it has one (``(A a)' (A b)``, which
    keeps the digits a product with the formed (n, n) matrix loses when the weights are
    large and of both signs), else through ``C_u``."""
    A = _root(u)
    out: NDArray[np.float64] = (np.einsum("qb,qb->b", A @ a, A @ b) if A is not None
                                else np.einsum("ib,ib->b", a, u.centred(u.members) @ b))
    return out


#: Entries of the row blocks of :func:`_product_terms`: a block and its products (three
#: arrays, 768 KB) stay in a core's cache (2**14 and 2**15 measured best with a 2 MB one)
_BLOCK_ENTRIES = 2**15


def _product_terms(units: Sequence[SingleTerm | BlockTerms],
                   weights: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
    """``sum_u w_u' ((prod_{v<u} W_v) o C_u) w_u`` for every column of the weights
    ``w_u`` (n, draws), with ``W_v = C_v + z_v z_v'``: the product part's total variance.

    The first unit's term has no product and goes through its root (:func:`_bilinear`).
    The others are summed over blocks of rows: a block of every ``W_v`` and ``C_u`` holds
    all that its rows of the products need, so no (n, n) matrix is formed (at 2,000 rows
    and 30 columns the whole products took 1.5 s, mostly memory traffic; blocks 0.45 s).
    """
    acc = _bilinear(units[0], weights[0], weights[0])
    if len(units) == 1:
        return acc
    n = units[0].z.size
    roots = [_root(u) for u in units]
    formed = {k: u.centred(u.members) for k, u in enumerate(units) if roots[k] is None}
    step = max(1, _BLOCK_ENTRIES // n)
    C, scratch = np.empty((min(step, n), n)), np.empty((min(step, n), n))
    for lo in range(0, n, step):
        rows = slice(lo, lo + step)
        m = min(step, n - lo)
        before: NDArray[np.float64] | None = None  # the block's rows of prod_{v<u} W_v
        for k, u in enumerate(units):
            A = roots[k]
            if A is not None:
                np.matmul(A[:, rows].T, A, out=C[:m])
            else:
                C[:m] = formed[k][rows]
            if before is not None:
                acc += np.einsum("ib,ib->b", weights[k][rows],
                                 np.multiply(before, C[:m], out=scratch[:m]) @ weights[k])
            if k < len(units) - 1:
                np.multiply.outer(u.z[rows], u.z, out=scratch[:m])
                scratch[:m] += C[:m]
                if before is None:
                    before = scratch[:m].copy()
                else:
                    before *= scratch[:m]
    return acc


def _quadratic_form(units: Sequence[SingleTerm | BlockTerms], parts: Iterable[list[int]],
                    v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``v_b' (P_1 o P_2 o ...) v_b`` for every column ``b`` of ``v``, with ``P_u`` the pure
    effect of ``parts`` in unit ``u``.

    One or two single columns with a ``root`` need no (n, n) matrix:
    ``v' C v = |A v|^2`` and ``v' (A_1' A_1 o A_2' A_2) v = |A_1 diag(v) A_2'|_F^2``.
    """
    roots = [u.root for u in units if isinstance(u, SingleTerm) and u.root is not None]
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


@on_one_blas_thread
def cross_pair_variances(gp: FittedGP, left: Sequence[int], right: Sequence[int]) -> NDArray[np.float64]:
    """``V_U`` of every pair ``U = (i, j)``, ``i`` in ``left`` and ``j`` in ``right``, in the
    one draw of ``gp`` (a posterior mean on fixed inputs, as the shadows' model): shape
    (len(left), len(right)), the numbers :func:`decompose_gp` gives for those pairs.

    Where both columns stand alone and have a ``root`` (see :class:`SingleTerm`), the pair's
    variance is ``|A_i diag(v) A_j'|_F^2`` with ``v = beta prod_{u != i, j} z_u``, so one
    product per column of ``left`` gives its pairs with every column of ``right``
    (``A_j`` scaled by ``1 / z_j`` and stacked): on 200 columns and their 200 shadows,
    40,000 pairs in about 0.2 s instead of 1.6 s through :func:`decompose_gp`. The other
    pairs (a column in a conditional block, or without a root) go through
    :func:`decompose_gp`. A column paired with itself gives 0; pairs of two columns of
    one conditional block are not supported.
    """
    if gp.n_draws != 1 or not gp.shared_inputs:
        raise InvalidArgumentError(
            f"cross_pair_variances takes a model of one draw on fixed inputs; this one has "
            f"{gp.n_draws} draws{'' if gp.shared_inputs else ' whose inputs differ'}: pass a "
            "posterior mean such as a refit or the shadows' model.")
    units = gp.units(0)
    unit_of = {m: k for k, u in enumerate(units) for m in u.members}
    logz = np.stack([np.log(u.z) for u in units])
    logp = logz.sum(axis=0)
    beta = gp.beta[0]

    def root(j: int) -> NDArray[np.float64] | None:
        u = units[unit_of[j]]
        return u.root if isinstance(u, SingleTerm) else None

    out = np.full((len(left), len(right)), np.nan)
    roots = {b: A for b, j in enumerate(right) if (A := root(j)) is not None}
    if roots:
        rooted = list(roots)
        stacked = np.vstack([A * np.exp(-logz[unit_of[right[b]]]) for b, A in roots.items()])
        starts = np.r_[0, np.cumsum([A.shape[0] for A in roots.values()])[:-1]]
        for a, i in enumerate(left):
            A = root(i)
            if A is None:
                continue
            k = unit_of[i]
            squares = ((A * (beta * np.exp(logp - logz[k]))) @ stacked.T) ** 2
            out[a, rooted] = np.add.reduceat(squares.sum(axis=0), starts) * gp.y_scale**2
    out[np.equal.outer(np.asarray(left), np.asarray(right))] = 0.0
    missing = np.argwhere(np.isnan(out))
    if missing.size:
        v, _, _ = decompose_gp(gp, [(left[a], right[b]) for a, b in missing])
        out[missing[:, 0], missing[:, 1]] = v[0]
    return out


#: A refit whose prediction varies over the space by less than this share of the model's
#: variance finds no signal in the trials: its hyperparameters put everything in the noise
#: (the signal variance at its lower bound, every length scale where the fit started).
#: Its shares are those of next to nothing, as arbitrary as a constant's (the demo's
#: best-25 % analysis: 10 of 12 refits at 1e-6 of the model's variance gave ``optimizer``
#: 0.80 against the signal refits' 0.02), so it gives none.
FLAT_REFIT = 1e-3


@on_one_blas_thread
def refit_fractions(gp: FittedGP, subsets: Sequence[tuple[int, ...]], *,
                    total: float) -> NDArray[np.float64] | None:
    """Each refit's share of variance of every subset (``gp.refits``): shape (n_refits,
    n_subsets), or None without refits. A refit whose prediction variance is at most
    ``FLAT_REFIT * total`` (``total``: the model's, the mean over its draws) finds no
    signal and has NaN shares, as has one whose prediction is constant."""
    if not gp.refits:
        return None
    out = np.full((len(gp.refits), len(subsets)), np.nan)
    # one draw each, on a few hundred rows (the demo's twelve: 0.4-1.0 s -> 0.2 s)
    parts = two_at_a_time(lambda refit: decompose_gp(refit, subsets), gp.refits)
    for k, (variances, refit_total, _) in enumerate(parts):
        if refit_total[0] > FLAT_REFIT * max(total, 0.0):
            out[k] = variances[0] / refit_total[0]
    return out
