"""Conditional parameters in the Gaussian-process surrogate, integrated exactly.

A conditional parameter's kernel factor knows whether it is active (see
``_kernel.kernel_matrix``): trials where it is inactive say nothing about its effect
where it is active. The posterior mean is then no longer a product of one-column
factors -- whether a child's factor is its kernel or a constant depends on its
parents' values. Columns tied by conditions form a *block* (children with their
parents, transitively); the mean is a product of block factors, and each block is
integrated by enumerating its parents' joint values, which must be discrete
(categorical, or at most ``MAX_EXACT_POINTS`` values; at most ``MAX_COMBINATIONS``
joint values). Spaces that do not fit this are imputed instead (``hpinsight.surrogates.gp``).

The estimand is the one used everywhere in the package: the product measure over all
columns, the function not depending on a parameter's value where it is inactive.

For a set ``T`` of a block's columns, the block factor of training row ``i``
averaged over the block's other columns is ``G_i(x_T)``; the variance terms need
``Q_T[i, l] = E[G_i(x_T) G_l(x_T)]``. Children outside ``T`` integrate to
``E_j[c, i] = A_cj a_ij z_ij + (1 - A_cj)(1 - a_ij)`` for the parents' values ``c``
(``A_cj``: the child is active at ``c``; ``a_ij``: it is active in row ``i``).
Grouping the parent combinations by their values on ``T`` and by the activity of
``T``'s children, ``Q_T`` is a short sum of matrix products, each multiplied
elementwise by one of four one-dimensional integrals per child in ``T`` (``a a' W``,
``a z (1 - a')``, its transpose, ``(1 - a)(1 - a')``).

Conditions are those of the space. A column with inactive entries and no condition
(define-by-run spaces such as Optuna's) gets one inferred from the trials: a discrete
parameter whose value decides, in every trial, whether the column is active. Choices
never seen in the trials are taken to leave it inactive.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from ...space import Categorical, Condition, Int, SearchSpace, measure_of
from ._kernel import MAX_EXACT_POINTS, kernel_integrals, kernel_matrix

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from ._kernel import Column

#: A block whose parents have more joint values is imputed instead.
MAX_COMBINATIONS = 4096


@dataclass(frozen=True, slots=True)
class Block:
    """Columns tied by activity conditions, with their parents' joint values.

    Attributes
    ----------
    members : tuple of int
        The block's columns, parents and children, in column order.
    parents : tuple of int
        The members some condition reads; enumerated.
    supports : tuple of ndarray
        Each parent's values (encoded).
    codes : ndarray of shape (n_combinations, n_parents)
        Every joint value, as indices into ``supports`` (C order).
    weights : ndarray of shape (n_combinations,)
        Their probabilities under the product measure.
    active : ndarray of bool, shape (n_combinations, n_members)
        Which members are active at each joint value.
    """

    members: tuple[int, ...]
    parents: tuple[int, ...]
    supports: tuple[NDArray[np.float64], ...]
    codes: NDArray[np.intp]
    weights: NDArray[np.float64]
    active: NDArray[np.bool_]

    @property
    def children(self) -> tuple[int, ...]:
        return tuple(m for m in self.members if m not in self.parents)

    def _nearest(self, k: int, values: NDArray[np.float64]) -> NDArray[np.intp]:
        """Index of the support value nearest to each encoded value (NaN -> 0)."""
        s = self.supports[k]
        v = np.where(np.isnan(values), s[0], values)
        out: NDArray[np.intp] = np.abs(v[:, None] - s[None, :]).argmin(axis=1)
        return out

    def activity(self, X: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Which members each row of encoded ``X`` activates: shape (n, n_members)."""
        idx = [self._nearest(k, X[:, p]) for k, p in enumerate(self.parents)]
        combo = np.ravel_multi_index(idx, tuple(s.size for s in self.supports))
        return self.active[combo]


def infer_conditions(space: SearchSpace, X: NDArray[np.float64]) -> SearchSpace | None:
    """``space`` with a condition for every column that has inactive entries, or None."""
    nan = np.isnan(X)
    names = space.names
    todo = [j for j in range(len(space)) if nan[:, j].any() and not space.conditions_of(names[j])]
    if not todo:
        return space
    new = []
    for j in todo:
        best: tuple[tuple[bool, int, int], int, NDArray[np.float64]] | None = None
        for p, param in enumerate(space.params):
            points = measure_of(param).points
            if p == j or not isinstance(param, Categorical | Int) or points is None:
                continue
            on = ~nan[:, p]
            if (~nan[:, j] & ~on).any():  # active where its would-be parent is not
                continue
            values, group = np.unique(X[on, p], return_inverse=True)
            n_active = np.bincount(group, weights=~nan[on, j], minlength=values.size)
            n_all = np.bincount(group, minlength=values.size)
            if ((n_active > 0) & (n_active < n_all)).any() or not n_active.any():
                continue  # this parameter does not decide the activity
            key = (bool(nan[:, p].any()), points.size - values.size, points.size)
            if best is None or key < best[0]:
                best = (key, p, values[n_active > 0])
        if best is None:
            return None
        _, p, on_values = best
        native = SearchSpace([space.params[p]]).decode(on_values[:, None])
        new.append(Condition(names[j], names[p], values=[c[names[p]] for c in native]))
    try:
        return SearchSpace(space.params, conditions=[*space.conditions, *new])
    except (ValueError, TypeError):  # e.g. two columns inferred as each other's parent
        return None


def conditional_blocks(space: SearchSpace, X: NDArray[np.float64]) -> tuple[Block, ...] | None:
    """The blocks of ``space`` on encoded ``X`` (NaN = inactive); ``()`` without
    conditional columns, None where they cannot be integrated exactly (then impute)."""
    full = infer_conditions(space, X)
    if full is None:
        return None
    names = space.names
    d = len(space)
    parents_of = {j: sorted({full.index(q) for c in full.conditions_of(names[j]) for q in c.parents})
                  for j in range(d) if full.conditions_of(names[j])}
    if not parents_of:
        return ()
    cond = sorted(parents_of)
    if (full.active_mask(X)[:, cond] == np.isnan(X[:, cond])).any():
        return None  # the trials' inactive entries disagree with the conditions
    root = list(range(d))

    def find(a: int) -> int:
        while root[a] != a:
            root[a] = root[root[a]]
            a = root[a]
        return a

    for j, ps in parents_of.items():
        for p in ps:
            root[find(j)] = find(p)
    groups: dict[int, list[int]] = {}
    for c in sorted({c for child, ps in parents_of.items() for c in (child, *ps)}):
        groups.setdefault(find(c), []).append(c)
    blocks = []
    for members in groups.values():
        parents = tuple(sorted({p for m in members for p in parents_of.get(m, ())}))
        measures = [measure_of(space.params[p]) for p in parents]
        if any(m.points is None or m.points.size > MAX_EXACT_POINTS for m in measures):
            return None
        supports = tuple(np.asarray(m.points, dtype=np.float64) for m in measures)
        sizes = tuple(s.size for s in supports)
        if int(np.prod(sizes)) > MAX_COMBINATIONS:
            return None
        codes = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(n) for n in sizes], indexing="ij")],
                         axis=1)
        weights = np.ones(codes.shape[0])
        E = np.full((codes.shape[0], d), np.nan)
        for k, (p, m) in enumerate(zip(parents, measures, strict=True)):
            assert m.weights is not None
            weights *= (m.weights / m.weights.sum())[codes[:, k]]
            E[:, p] = supports[k][codes[:, k]]
        blocks.append(Block(
            members=tuple(members), parents=parents, supports=supports, codes=codes,
            weights=weights, active=full.active_mask(E)[:, members],
        ))
    return tuple(blocks)


class BlockTerms:
    """One block's integrals against training rows ``U`` (rescaled, NaN = inactive)."""

    def __init__(self, block: Block, cols: Sequence[Column], ell: NDArray[np.float64],
                 U: NDArray[np.float64]) -> None:
        self.block, self.cols, self.ell = block, cols, ell
        self.members = block.members
        self._pos = {m: k for k, m in enumerate(block.members)}
        self.a = (~np.isnan(U[:, list(block.members)])).astype(np.float64)  # (n, M)
        self.U = np.where(np.isnan(U), 0.0, U)
        A = block.active.astype(np.float64)
        KP = np.ones((block.codes.shape[0], U.shape[0]))
        for k, p in enumerate(block.parents):
            col = cols[p]
            values = col.scale(block.supports[k][block.codes[:, k]])
            kp = kernel_matrix((col,), values[:, None], self.U[:, p : p + 1], ell[p : p + 1])
            Ac, ai = A[:, self._pos[p]][:, None], self.a[:, self._pos[p]][None, :]
            KP *= Ac * ai * kp + (1.0 - Ac) * (1.0 - ai)
        self.KP = KP
        self._z: dict[int, NDArray[np.float64]] = {}
        self._W: dict[int, NDArray[np.float64]] = {}  # (n, n) second moments, when first needed
        self._E: dict[int, NDArray[np.float64]] = {}
        prod = KP.copy()
        for j in block.children:
            z = self._z[j] = kernel_integrals(cols[j], float(ell[j]), self.U[:, j], second=False)[0]
            Ac, aj = A[:, self._pos[j]][:, None], self.a[:, self._pos[j]][None, :]
            self._E[j] = Ac * aj * z[None, :] + (1.0 - Ac) * (1.0 - aj)
            prod *= self._E[j]
        self.z: NDArray[np.float64] = block.weights @ prod
        self._centred: dict[tuple[int, ...], NDArray[np.float64]] = {}

    def _grouped(self, T: Sequence[int]) -> tuple[
        list[int], list[int], NDArray[np.intp], NDArray[np.float64],
        dict[int, tuple[NDArray[np.float64], NDArray[np.bool_]]],
    ]:
        """For the columns ``T``: its parents and children, the groups of parent
        combinations (one per joint value of ``T``'s parents: their codes and weights), and
        per activity state of ``T``'s children (a bit per child) the group-averaged
        factors (V, n) with the groups that have that state."""
        b = self.block
        TP = [p for p in T if p in b.parents]
        TJ = [j for j in T if j not in b.parents]
        R = self.KP.copy()
        for j in b.children:
            if j not in TJ:
                R *= self._E[j]
        if TP:
            keys = b.codes[:, [b.parents.index(p) for p in TP]]
            uniq, group = np.unique(keys, axis=0, return_inverse=True)
            group = group.ravel()
        else:
            uniq, group = np.zeros((1, 0), np.intp), np.zeros(b.codes.shape[0], np.intp)
        wv = np.bincount(group, weights=b.weights, minlength=uniq.shape[0]).astype(np.float64)
        state = np.zeros(b.codes.shape[0], np.intp)
        for k, j in enumerate(TJ):
            state |= b.active[:, self._pos[j]].astype(np.intp) << k
        S = {}
        for s in np.unique(state):
            m = state == s
            avg = np.zeros((uniq.shape[0], m.sum()))
            avg[group[m], np.arange(m.sum())] = b.weights[m] / wv[group[m]]
            S[int(s)] = (avg @ R[m], np.bincount(group[m], minlength=uniq.shape[0]) > 0)
        return TP, TJ, uniq, wv, S

    def _pair_integral(self, j: int, s: int, t: int) -> NDArray[np.float64]:
        """``E[phi_s(i, x) phi_t(l, x)]`` over child ``j``'s measure, with ``phi_1`` its
        kernel factor where active and ``phi_0`` the constant where inactive."""
        a = self.a[:, self._pos[j]]
        z = self._z[j]
        if s and t:
            if j not in self._W:
                self._W[j] = kernel_integrals(self.cols[j], float(self.ell[j]), self.U[:, j])[1] + np.outer(z, z)
            return np.outer(a, a) * self._W[j]
        if s:
            return np.outer(a * z, 1.0 - a)
        if t:
            return np.outer(1.0 - a, a * z)
        return np.outer(1.0 - a, 1.0 - a)

    def centred(self, T: tuple[int, ...]) -> NDArray[np.float64]:
        """``E[(G_i(x_T) - z_i)(G_l(x_T) - z_l)]`` over ``T``'s measure (n, n)."""
        if T in self._centred:
            return self._centred[T]
        _, TJ, _, wv, S = self._grouped(T)
        n = self.z.size
        Q = np.zeros((n, n))
        for s, (Ss, has_s) in S.items():
            for t, (St, has_t) in S.items():
                if not (has_s & has_t).any():
                    continue  # no joint value of T's parents has both states
                M = (Ss.T * wv) @ St
                for k, j in enumerate(TJ):
                    M *= self._pair_integral(j, (s >> k) & 1, (t >> k) & 1)
                Q += M
        out = Q - np.outer(self.z, self.z)
        self._centred[T] = out
        return out

    def pure(self, S: tuple[int, ...]) -> NDArray[np.float64]:
        """The matrix of the pure effect of ``S`` (Moebius inversion of ``centred``)."""
        out = np.zeros((self.z.size, self.z.size))
        for r in range(1, len(S) + 1):
            sign = (-1.0) ** (len(S) - r)
            for T in combinations(S, r):
                out += sign * self.centred(T)
        return out

    def marginal(self, T: Sequence[int], grids: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
        """``G_i(x_T)`` on the product of encoded ``grids``: shape (G1[, G2], n)."""
        TP, TJ, uniq, _, S = self._grouped(T)
        sizes = [g.size for g in grids]
        mesh = [m.ravel() for m in np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")]
        if TP:
            at = {p: self._nearest_codes(p, grids[list(T).index(p)])[mesh[list(T).index(p)]] for p in TP}
            lookup = {tuple(row): v for v, row in enumerate(uniq.tolist())}
            group = np.array([lookup[c] for c in zip(*(at[p].tolist() for p in TP), strict=True)])
        else:
            group = np.zeros(mesh[0].size, np.intp)
        out = np.zeros((mesh[0].size, self.z.size))
        for s, (Ss, _) in S.items():
            F = Ss[group]
            for k, j in enumerate(TJ):
                a = self.a[:, self._pos[j]]
                if (s >> k) & 1:
                    col, g = self.cols[j], grids[list(T).index(j)]
                    phi = kernel_matrix((col,), col.scale(g)[:, None], self.U[:, j : j + 1], self.ell[j : j + 1]) * a
                    F = F * phi[mesh[list(T).index(j)]]
                else:
                    F = F * (1.0 - a)
            out += F
        return out.reshape(*sizes, self.z.size)

    def _nearest_codes(self, p: int, grid: NDArray[np.float64]) -> NDArray[np.intp]:
        return self.block._nearest(self.block.parents.index(p), grid)
