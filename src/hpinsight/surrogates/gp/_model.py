"""The fitted Gaussian process: its posterior mean in every draw, and the terms its
exact decomposition integrates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from ._blas import on_one_blas_thread, one_blas_thread
from ._blocks import Block, BlockTerms
from ._hidden import HiddenTerm
from ._kernel import Column, kernel_integrals, kernel_matrix, root, scale_columns
from ._lapack import cholesky, cholesky_solve
from ._likelihood import additive_mask, signal_kernel, unit_members

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray


def with_column(X: NDArray[np.float64], j: int, v: float) -> NDArray[np.float64]:
    """A copy of the encoded rows (or row) ``X`` with column ``j`` set to ``v``."""
    out = np.array(X, dtype=np.float64)
    out[..., j] = v
    return out


@on_one_blas_thread
def predict_changed_rows(model: Any, X: NDArray[np.float64],
                         fixes: Sequence[tuple[int, float]], *,
                         free: bool = False) -> list[NDArray[np.float64]]:
    """Any model's ``predict_per_draw`` at ``X`` with column ``j`` set to ``v``, per
    ``(j, v)`` of ``fixes``, each on its own changed rows; with ``free``, first at ``X``
    itself (what :meth:`FittedGP.predict_fixing` gives, without sharing any work)."""
    return ([model.predict_per_draw(X)] if free else []) + [
        model.predict_per_draw(with_column(X, j, v)) for j, v in fixes]


@dataclass(frozen=True, slots=True)
class FittedGP:
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
    fit_r2 : float or None
        Leave-one-out R² of the full-data posterior mean (closed form); None for
        refits and shadows' models.
    shadow_fractions : (float, float) or None
        With shadows (see :func:`_shadow_null`): the largest share of variance a shadow
        column's main effect got, and the largest an interaction with a shadow in it got
        (with a parameter or another shadow).
    varying : tuple of int
        Columns whose inputs differ between draws (those with imputed inactive
        entries); every other column is the same in every draw, and what depends on
        it alone is computed once.
    blocks : tuple of Block
        Conditional columns integrated jointly with their parents (see ``_blocks``);
        their inactive entries are NaN in ``X`` and nothing is imputed.
    additive_variance : float
        The additive part's variance ``s_a`` (0: the product kernel alone): the mean of
        its units' variances times ``#A``.
    additive_weights : ndarray of shape (n_units,) or None
        Each unit's additive variance relative to ``s_a`` (None: all 1): unit ``u``
        adds ``(s_a w_u / #A) k_u``.
    refits : tuple of FittedGP
        Models whose hyperparameters were fit on random halves of the rows this model's
        were fit on, each the posterior mean on the same rows (every row, or 500 of
        them when there are more; one draw). Half-sample fits
        vary about as much as the full fit would over new trials (a delete-half
        jackknife), so their spread is the hyperparameters' uncertainty, which the
        draws, a bootstrap with the hyperparameters held, leave out. The last third of
        them are of the kernel's product part alone (``additive_variance`` about 0),
        kept only where the trials support that structure as well as the whole
        kernel's. Empty unless asked; a refit whose kernel does not factorize is left out.
    raw_length_scales : ndarray of shape (n_params,) or None
        The length scales of the fit to the objective's values alone, before each
        parameter kept the longer of it and the rank fit's (``length_scales``): where
        this one is much shorter, the two fits disagree about the parameter. None for
        models fit without it (refits, shadows' models).
    pruned : tuple of int or None
        The columns taken out of the model's own fit (``GP(prune=True)``,
        :func:`~._likelihood.prune_columns`): their length scale is the upper bound and
        their additive variance the lower one, so their share is 0. None for models fit
        without pruning.
    unpruned : FittedGP or None
        Where columns were taken out: the posterior mean under the hyperparameters before
        that (one draw, on the refits' rows), which the verdicts of those columns read
        (:attr:`~hpinsight.results.Importance.before_pruning`) and whose length scales
        are the ones the fit kept. None otherwise.
    residual_pvalues : ndarray of shape (n_params,) or None
        Per parameter, whether the model misses an effect of it: the Kruskal-Wallis
        p-value of the leave-one-out errors grouped by the parameter's values (fifths of
        its active trials; a choice's categories; NaN where there are too few). A small
        one means the errors rise and fall with the parameter, which a model that
        captured its effect would not leave. None for models fit without it.
    residual_spread : ndarray of shape (n_params,) or None
        With ``residual_pvalues``: the standard deviation of those groups' mean errors,
        in objective units (how large the missed effect is).
    hidden_terms : tuple of HiddenTerm or None
        Per parameter, what the trials say about an effect of it the model left out
        (``_hidden``; :meth:`hidden_shares`). None for models fit without it.
    residuals, residual_sds : ndarray of shape (n_rows,) or None
        Per row of the data the model was fit on (in the order given), its leave-one-out
        error in objective units, the value minus the posterior mean given every other
        row (Rasmussen & Williams Eq. 5.12), and that prediction's standard deviation
        with the noise; NaN for rows a large study left out of the fit (``max_rows``).
        None for models fit without them.
    held_out_rank : float or None
        For a refit (``refits``): the Spearman correlation of its posterior mean, given
        the half of the rows it was fit on, with the values of the other half. Ranks,
        not squared error, so that a few diverged trials in the held-out half cannot
        make a model that predicts the rest look worse than a constant. None for other
        models.
    held_out_size : int or None
        With ``held_out_rank``: the number of rows it was computed on (``m``; values
        unrelated to the inputs give correlations of mean 0 and variance
        ``1 / (m - 1)``).
    """

    columns: tuple[Column, ...]
    length_scales: NDArray[np.float64]
    signal_variance: float
    noise_variance: float
    y_mean: float
    y_scale: float
    X: NDArray[np.float64]
    beta: NDArray[np.float64]
    fit_r2: float | None
    n_features: int
    shadow_fractions: tuple[float, float] | None = None
    varying: tuple[int, ...] = ()
    blocks: tuple[Block, ...] = ()
    additive_variance: float = 0.0
    additive_weights: NDArray[np.float64] | None = None
    refits: tuple[FittedGP, ...] = ()
    raw_length_scales: NDArray[np.float64] | None = None
    pruned: tuple[int, ...] | None = None
    unpruned: FittedGP | None = None
    residual_pvalues: NDArray[np.float64] | None = None
    residual_spread: NDArray[np.float64] | None = None
    hidden_terms: tuple[HiddenTerm, ...] | None = None
    residuals: NDArray[np.float64] | None = None
    residual_sds: NDArray[np.float64] | None = None
    held_out_rank: float | None = None
    held_out_size: int | None = None
    kind: ClassVar[Literal["gp"]] = "gp"

    def hidden_shares(self, total_variance: float) -> NDArray[np.float64] | None:
        """Per parameter, the share of ``total_variance`` (objective units: the model's
        variance over the space) an effect of it could hold that the trials cannot rule
        out (see ``_hidden``); None for models fit without it."""
        if self.hidden_terms is None:
            return None
        c = total_variance / self.y_scale**2
        return np.array([term.share(c) for term in self.hidden_terms], dtype=np.float64)

    @property
    def unit_members(self) -> tuple[tuple[int, ...], ...]:
        """The kernel's units: each block's members, then every other column alone."""
        return unit_members(self.n_features, self.blocks)

    @property
    def additive_units(self) -> NDArray[np.float64]:
        """Each unit's (of ``unit_members``) weight ``w_u`` in the additive part, 0 for
        units outside it."""
        mask = additive_mask(self.columns, self.unit_members)
        return mask if self.additive_weights is None else mask * self.additive_weights

    @property
    def additive_weight(self) -> float:
        """``r``: unit ``u``'s additive weights are ``r w_u beta`` (see the module docstring)."""
        n_add = float(additive_mask(self.columns, self.unit_members).sum())
        return self.additive_variance / (self.signal_variance * max(n_add, 1.0))

    @property
    def shared_inputs(self) -> bool:
        """Every draw has the same inputs (no inactive entries to impute)."""
        return not self.varying

    @property
    def n_draws(self) -> int:
        return int(self.beta.shape[0])

    def __repr__(self) -> str:
        return (f"FittedGP(n_rows={self.X.shape[1]}, n_draws={self.n_draws}, "
                f"fit_r2={self.fit_r2})")

    @on_one_blas_thread
    def predict_per_draw(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
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
        summed = {u: float(w) for u, w in zip(units, self.additive_units, strict=True) if w}

        def factors(Xb: NDArray[np.float64], rows: NDArray[np.intp], pattern: NDArray[np.bool_],
                    group: list[tuple[int, ...]]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            """Product and sum of the kernel factors of the units ``group`` between the
            queries ``rows`` (inactive where ``pattern``) and the training inputs ``Xb``."""
            prod = np.ones((rows.size, Xb.shape[0]))
            total = np.zeros_like(prod)
            for unit in group:
                if len(unit) == 1 and pattern[unit[0]]:
                    j = unit[0]
                    F = kernel_integrals(self.columns[j], float(self.length_scales[j]), Xb[:, j], second=False)[0]
                else:
                    on = np.array(unit, dtype=np.intp)
                    cols = [self.columns[j] for j in unit]
                    F = kernel_matrix(cols, scale_columns(cols, X[np.ix_(rows, on)]), Xb[:, on], self.length_scales[on])
                prod *= F
                if unit in summed:
                    total += summed[unit] * F
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

    @on_one_blas_thread
    def predict_fixing(self, X: NDArray[np.float64], fixes: Sequence[tuple[int, float]], *,
                       free: bool = False) -> list[NDArray[np.float64]]:
        """:meth:`predict_per_draw` at ``X`` with column ``j`` set to the encoded value
        ``v``, for each ``(j, v)`` of ``fixes``: one array of shape (n_draws, n_rows) each;
        with ``free``, first the prediction at ``X`` itself (from the same kernel terms).

        Setting a column changes one unit's factor of the product kernel and its term of
        the additive part (a conditional block's members and activity change together),
        so every unit's kernel is computed once per row and each fix recomputes its own
        unit's: the cost of about two predictions, not of one per fix. A model with
        imputed inputs, and a query with NaN entries outside the blocks, take
        :meth:`predict_per_draw` on the changed rows.
        """
        X = np.array(X, dtype=np.float64)
        units = self.unit_members
        unit_of = {j: u for u in units for j in u}
        alone = [u[0] for u in units if len(u) == 1 and not any(u == b.members for b in self.blocks)]
        if self.varying or np.isnan(X[:, alone]).any() or np.isnan(
                [v for j, v in fixes if j in alone]).any():
            return predict_changed_rows(self, X, fixes, free=free)
        weights = dict(zip(units, self.additive_units, strict=True))
        X0, ell, cols, r = self.X[0], self.length_scales, self.columns, self.additive_weight

        def scaled(M: NDArray[np.float64]) -> NDArray[np.float64]:
            return scale_columns(cols, self._block_inactive(M))

        def factor(unit: tuple[int, ...], Q: NDArray[np.float64]) -> NDArray[np.float64]:
            """The unit's kernel factor between the rescaled rows ``Q`` and the training
            inputs: ``D_j / l_j^2`` for a column alone (its squared distance term),
            the kernel itself for a block."""
            on = list(unit)
            if unit[0] in alone:
                j = unit[0]
                d: NDArray[np.float64] = (
                    (Q[:, j, None] != X0[None, :, j]) / ell[j] ** 2 if cols[j].categorical
                    else ((Q[:, j, None] - X0[None, :, j]) / ell[j]) ** 2)
                return d
            return kernel_matrix([cols[i] for i in on], Q[:, on], X0[:, on], ell[on])

        Q = scaled(X.copy())
        changed = [scaled(with_column(X[:1], j, v)) if unit_of[j][0] in alone
                   else scaled(with_column(X, j, v)) for j, v in fixes]
        blocks = [u for u in units if u[0] not in alone]
        preds = [np.empty((self.n_draws, X.shape[0])) for _ in fixes]
        unchanged = np.empty((self.n_draws, X.shape[0])) if free else None
        # the single columns that are fixed: their distance terms and factors are kept
        # for every fix of theirs (a PDP fixes one column at every grid point)
        kept = {unit_of[j] for j, _ in fixes if unit_of[j][0] in alone}
        # The prediction is linear in the kernel: (P + r A) beta, with P the product part
        # and A the additive part. So the additive part is carried as its product with the
        # weights (a few columns), and a fix swaps its unit's term there as a product too,
        # instead of forming and adding matrices of the rows by the training rows (on 40
        # parameters, five such passes per fix and per refit).
        bt = self.beta.T
        # rows per chunk: the blocks' kernels, the kept distance terms and about four other
        # matrices of the chunk's rows by the training rows are held at once, 128 MB in all
        step = max(1, 2**24 // (max(X0.shape[0], 1) * (len(blocks) + len(kept) + 4)))
        for lo in range(0, X.shape[0], step):
            rows = slice(lo, lo + step)
            n_rows = Q[rows].shape[0]
            dist = np.zeros((n_rows, X0.shape[0]))  # the single columns' D
            additive = np.zeros((n_rows, bt.shape[1]))  # the additive part times the weights
            kernel = {}  # the blocks' factors
            own = {}  # the kept columns' distance terms, and their factors times the weights
            for u in units:
                F = factor(u, Q[rows])
                if u[0] in alone:
                    dist += F
                    E = np.exp(-0.5 * F)
                else:
                    kernel[u] = E = F
                if weights[u] or u in kept:
                    term = E @ bt
                    if weights[u]:
                        additive += weights[u] * term
                    if u in kept:
                        own[u] = (F, term)
            others = np.exp(-0.5 * dist)  # everything of the product but the blocks
            additive *= r
            if unchanged is not None:
                K = others * np.prod([kernel[b] for b in blocks], axis=0) if blocks else others
                unchanged[:, rows] = (K @ bt + additive).T
            K = np.empty_like(dist)
            for (j, _), C, pred in zip(fixes, changed, preds, strict=True):
                u = unit_of[j]
                if u[0] in alone:  # swap the column's distance term
                    old_dist, old = own[u]
                    new_dist = factor(u, C)  # one row: the column is the same in every row
                    np.subtract(dist, old_dist, out=K)
                    K += new_dist
                    K *= -0.5
                    np.exp(K, out=K)
                    new = np.exp(-0.5 * new_dist) @ bt
                else:  # swap the block's factor
                    new_factor = factor(u, C[rows])
                    np.multiply(others, new_factor, out=K)
                    old, new = kernel[u] @ bt, new_factor @ bt
                for b in blocks:
                    if b != u:
                        K *= kernel[b]
                out = K @ bt + additive
                if weights[u]:
                    out += (r * weights[u]) * (new - old)
                pred[:, rows] = out.T
        return [self.y_mean + self.y_scale * p
                for p in ([unchanged] if unchanged is not None else []) + preds]

    @on_one_blas_thread
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
            return signal_kernel(cols, P, Q, units, ell, s, self.additive_variance * self.additive_units)

        sa, sb = (scale_columns(cols, self._block_inactive(np.array(M, dtype=np.float64))) for M in (A, B))
        X0 = self.X[0]
        K = kernel(X0, X0)
        K[np.diag_indices(X0.shape[0])] += self.noise_variance
        D = kernel(sa, X0) - kernel(sb, X0)  # (m, n)
        prior = 2.0 * s * (1.0 + r * n_add) - 2.0 * np.einsum("ii->i", kernel(sa, sb))
        with one_blas_thread():
            c = cholesky(K)
            reduction = np.einsum("mi,im->m", D, cholesky_solve(c, D.T))
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
    def units(self, draw: int, fixed: dict[int, SingleTerm] | None = None) -> list[SingleTerm | BlockTerms]:
        """The factors of draw ``draw``'s posterior mean: one per block, one per other column.

        ``fixed`` holds already computed single columns that are the same in every draw.
        """
        Xb = self.X[draw]
        members = {m for b in self.blocks for m in b.members}
        out: list[SingleTerm | BlockTerms] = [
            BlockTerms(b, self.columns, self.length_scales, Xb) for b in self.blocks
        ]
        for j in range(self.n_features):
            if j not in members:
                out.append(fixed[j] if fixed is not None and j in fixed
                           else SingleTerm(j, self.columns[j], float(self.length_scales[j]), Xb[:, j]))
        return out

    def _draw_groups(self) -> list[NDArray[np.intp]]:
        # the integrals depend on a draw's inputs only, so draws that share them are done
        # together
        return [np.arange(self.n_draws)] if self.shared_inputs else [np.array([b]) for b in range(self.n_draws)]

    @on_one_blas_thread
    def marginal_per_draw(self, cols: Sequence[int], grids: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
        """Exact marginal prediction of columns ``cols`` on the product of encoded ``grids``:
        shape (n_draws, G1[, G2])."""
        shape = [g.size for g in grids]
        out = np.empty((self.n_draws, *shape))
        r = self.additive_weight
        for draws in self._draw_groups():
            units = self.units(int(draws[0]))
            summed = [float(m) for m in self.additive_units]  # units() keeps unit_members' order
            hit = [u for u in units if set(u.members) & set(cols)]
            logz = sum((np.log(u.z) for u in units if u not in hit), np.zeros(self.X.shape[1]))
            beta = self.beta[draws].T  # (n, draws)
            w = beta * np.exp(logz)[:, None]
            a = r * beta  # the additive part: other units contribute their means
            rest = sum((m * u.z for u, m in zip(units, summed, strict=True) if m and u not in hit),
                       np.zeros(self.X.shape[1])) @ a  # (draws,)
            parts = []
            for u in hit:
                T = [c for c in cols if c in u.members]
                add = summed[units.index(u)] * a
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


class SingleTerm:
    """An unconditional column's integrals against training inputs ``u`` (as ``BlockTerms``).

    ``root`` (see ``_kernel.root``) stands for the (n, n) centred second moment where
    the column's measure has few nodes; the matrix itself is formed only when asked for,
    and not kept when ``root`` can form it again: at 2,000 rows it takes
    32 MB, and a hundred of them would not fit in memory.
    """

    def __init__(self, j: int, col: Column, ell: float, u: NDArray[np.float64]) -> None:
        self.members = (j,)
        self.col, self.ell, self.u = col, ell, u
        self.z = kernel_integrals(col, ell, u, second=False)[0]
        self.root = root(col, ell, u)
        self._C: NDArray[np.float64] | None = None

    def centred(self, T: tuple[int, ...]) -> NDArray[np.float64]:
        A = self.root
        if A is not None:
            return A.T @ A
        if self._C is None:
            self._C = kernel_integrals(self.col, self.ell, self.u)[1]
        return self._C

    def pure(self, S: tuple[int, ...]) -> NDArray[np.float64]:
        return self.centred(S)

    def marginal(self, T: Sequence[int], grids: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
        return kernel_matrix((self.col,), self.col.scale(grids[0])[:, None], self.u[:, None], np.array([self.ell]))
