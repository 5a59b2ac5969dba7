"""Trees trained on constant-imputed inactive values, restated on the product space.

A forest fitted elsewhere (SMAC's, say) was trained with every inactive entry of a
conditional parameter replaced by one constant, so at each split on that parameter an
inactive entry goes one fixed way. The functional ANOVA integrates over the product
space, where every parameter has a value. :func:`route_inactive` rewrites a tree so that,
as a function on the product space, it predicts at every point what the original tree
predicts at the configuration that point stands for: where a split's parameter is
inactive (as the space's conditions decide from its ancestors' values), the point goes
the imputed value's way. Where that is not yet decided by the splits above, splits on the
ancestors are inserted until it is. The rewritten tree never reads a parameter where it is
inactive, so it also predicts correctly on encoded rows with NaN at inactive entries.

Activity is decided on values as the tree sees them (rounded to float32, like every
split): a parent within float32 rounding of a ``gt``/``lt`` bound may be routed as the
other side of the bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..._shared import readonly
from ...space import AnyOf, Categorical, Condition, encode_value, encoded_bounds, log_encode
from ._forest import TreeArrays

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ...space import ConditionLike, SearchSpace

__all__ = ["route_inactive"]

_Box = dict[int, tuple[float, float]]  # column -> (lo, hi]: values x with lo < x <= hi


def route_inactive(
    tree: TreeArrays, space: SearchSpace, inactive_left: NDArray[np.bool_]
) -> TreeArrays:
    """Rewrite ``tree`` so inactive entries follow the imputed value's way at every split.

    Parameters
    ----------
    tree : TreeArrays
        A tree over ``space``'s encoded columns.
    space : SearchSpace
        Its conditions decide where each parameter is active.
    inactive_left : ndarray of bool, shape (n_nodes,)
        At inner nodes splitting on a conditional parameter: whether the constant
        imputed for an inactive entry goes left. Ignored elsewhere.

    Returns
    -------
    TreeArrays
        The same tree where no split reads a conditional parameter without its
        activity decided (``tree`` itself when no split needs it).
    """
    conditional = {space.index(n) for n in space.conditional_names}
    inner = tree.left >= 0
    if not conditional or not np.isin(tree.feature[inner], sorted(conditional)).any():
        return tree
    ancestors = {j: _ancestors(space, j) for j in conditional}
    cuts = _cuts(space)
    tracked = sorted(conditional | {a for anc in ancestors.values() for a in anc})
    left: list[int] = []
    right: list[int] = []
    feature: list[int] = []
    threshold: list[float] = []
    value: list[float] = []
    # (original node, box of the tracked columns, new parent id, is it the left child)
    domain = {a: _domain(space, a) for a in tracked}  # so splits outside it are skipped
    stack: list[tuple[int, _Box, int, bool]] = [(0, domain, -1, True)]
    while stack:
        node, box, parent, is_left = stack.pop()
        split: tuple[int, float] | None = None
        while tree.left[node] >= 0:  # skip splits decided by inactivity or by the box
            f, t = int(tree.feature[node]), float(tree.threshold[node])
            if f in conditional:
                state, split = _activity(space, f, ancestors[f], cuts, box)
                if state is False:
                    node = int(tree.left[node] if inactive_left[node] else tree.right[node])
                    continue
                if state is None:
                    break
            # here the column is active, so its value lies in its domain
            if f in box and t >= box[f][1]:
                node = int(tree.left[node])
            elif f in box and t <= box[f][0]:
                node = int(tree.right[node])
            else:
                break
        me = len(left)
        left.append(-1)
        right.append(-1)
        value.append(float(tree.value[node]))
        if parent >= 0:
            (left if is_left else right)[parent] = me
        if tree.left[node] < 0:
            feature.append(int(tree.feature[node]))
            threshold.append(float(tree.threshold[node]))
            continue
        if split is not None:  # activity undecided: split on an ancestor first
            f, t = split
            children = (node, node)
        else:
            f, t = int(tree.feature[node]), float(tree.threshold[node])
            children = (int(tree.left[node]), int(tree.right[node]))
        feature.append(f)
        threshold.append(t)
        lo, hi = box.get(f, (-np.inf, np.inf))
        narrow = f in tracked
        stack.append((children[1], {**box, f: (t, hi)} if narrow else box, me, False))
        stack.append((children[0], {**box, f: (lo, t)} if narrow else box, me, True))
    return TreeArrays(
        left=readonly(np.array(left, dtype=np.intp)),
        right=readonly(np.array(right, dtype=np.intp)),
        feature=readonly(np.array(feature, dtype=np.intp)),
        threshold=readonly(np.array(threshold, dtype=np.float64)),
        value=readonly(np.array(value, dtype=np.float64)),
    )


# ---------------------------------------------------------------------------- internals
def _f32(x: float) -> float:
    """``x`` as the tree sees it (rounded to float32)."""
    return float(np.float32(x))


def _below(x: float) -> float:
    """The largest float32 value below ``x``'s float32 rounding."""
    return float(np.nextafter(np.float32(x), np.float32(-np.inf)))


def _domain(space: SearchSpace, j: int) -> tuple[float, float]:
    """A box side holding every value of column ``j`` as the tree sees it."""
    param = space.params[j]
    low, high = (0.0, len(param.choices) - 1.0) if isinstance(param, Categorical) else (
        encoded_bounds(param, 0.0))
    return _below(low), _f32(high)


def _parts(cond: ConditionLike) -> tuple[Condition, ...]:
    return cond.conditions if isinstance(cond, AnyOf) else (cond,)


def _ancestors(space: SearchSpace, j: int) -> list[int]:
    """Columns whose values decide whether column ``j`` is active, parents first."""
    found: set[int] = set()
    todo = [space.names[j]]
    while todo:
        for cond in space.conditions_of(todo.pop()):
            for parent in cond.parents:
                p = space.index(parent)
                if p not in found:
                    found.add(p)
                    todo.append(parent)
    return [k for k in space._order if k in found]


def _bound(space: SearchSpace, parent: int, b: float) -> float:
    param = space.params[parent]
    if not getattr(param, "log", False):
        return _f32(b)
    return _f32(log_encode(b)) if b > 0 else -np.inf


def _cuts(space: SearchSpace) -> dict[int, NDArray[np.float64]]:
    """Per parent column, the thresholds between which every condition test is constant:
    ``{e}`` for a listed value ``e``, ``x > b`` and ``x < b`` for bounds (in float32)."""
    out: dict[int, set[float]] = {}
    for cond in space.conditions:
        for part in _parts(cond):
            p = space.index(part.parent)
            at = out.setdefault(p, set())
            if part.values is not None:
                for v in part.values:
                    e = encode_value(space.params[p], v)
                    at.update((_below(e), _f32(e)))
            if part.gt is not None and np.isfinite(b := _bound(space, p, part.gt)):
                at.add(b)
            if part.lt is not None and np.isfinite(b := _bound(space, p, part.lt)):
                at.add(_below(b))
    return {p: np.array(sorted(c), dtype=np.float64) for p, c in out.items()}


def _activity(
    space: SearchSpace,
    j: int,
    ancestors: list[int],
    cuts: dict[int, NDArray[np.float64]],
    box: _Box,
) -> tuple[bool | None, tuple[int, float] | None]:
    """Whether column ``j`` is active everywhere in ``box`` (True), nowhere (False), or
    neither (None, with an ancestor split ``(column, threshold)`` that separates the two)."""
    shape: list[int] = []
    reps: list[NDArray[np.float64]] = []
    uppers: list[NDArray[np.float64]] = []
    for a in ancestors:
        lo, hi = box.get(a, (-np.inf, np.inf))
        c = cuts.get(a, np.empty(0))
        lower = np.concatenate([[-np.inf], c])
        upper = np.concatenate([c, [np.inf]])
        keep = (lower < hi) & (upper > lo)
        lower, upper = np.maximum(lower[keep], lo), np.minimum(upper[keep], hi)
        # a point of each cell within the box: its upper end where that is finite
        rep = np.where(np.isfinite(upper), upper, np.where(np.isfinite(lower), lower + 1.0, 0.0))
        shape.append(rep.size)
        reps.append(rep)
        uppers.append(upper)
    grid = np.meshgrid(*reps, indexing="ij")
    values = {a: g.ravel() for a, g in zip(ancestors, grid, strict=True)}
    active = _active(space, j, values, {}).reshape(shape)
    if active.all():
        return True, None
    if not active.any():
        return False, None
    for axis, a in enumerate(ancestors):
        if shape[axis] < 2:
            continue
        along = np.moveaxis(active, axis, 0)
        changes = (along[1:] != along[:-1]).reshape(shape[axis] - 1, -1).any(axis=1)
        if changes.any():
            return None, (a, float(uppers[axis][int(np.argmax(changes))]))
    raise AssertionError("activity varies but along no ancestor")  # pragma: no cover


def _active(
    space: SearchSpace, j: int, values: dict[int, NDArray[np.float64]],
    memo: dict[int, NDArray[np.bool_]],
) -> NDArray[np.bool_]:
    if j not in memo:
        n = next(iter(values.values())).size
        out = np.ones(n, dtype=bool)
        for cond in space.conditions_of(space.names[j]):
            holds = np.zeros(n, dtype=bool)
            for part in _parts(cond):
                p = space.index(part.parent)
                x = values[p]
                test = _active(space, p, values, memo).copy()
                if part.values is not None:
                    test &= np.isin(x, [_f32(encode_value(space.params[p], v)) for v in part.values])
                if part.gt is not None:
                    test &= x > _bound(space, p, part.gt)
                if part.lt is not None:
                    test &= x < _bound(space, p, part.lt)
                holds |= test
            out &= holds
        memo[j] = out
    return memo[j]
