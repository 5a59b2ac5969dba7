"""Shared factories for the unit tests."""

from __future__ import annotations

from itertools import product
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import hpinsight as hp
from hpinsight._encoding import measure_of


@pytest.fixture
def make_mixed_space():
    """A space with one parameter of every kind the measure treats differently."""

    def make(*, conditional: bool = False) -> hp.SearchSpace:
        params = [
            hp.Float("x", -1.0, 2.0),
            hp.Float("lr", 1e-3, 10.0, log=True),
            hp.Int("n", 1, 6),
            hp.Categorical("kind", ["a", "b", "c"]),
        ]
        conditions = []
        if conditional:
            params.append(hp.Float("child", 0.0, 1.0))
            conditions.append(hp.Condition("child", "kind", values=["a"]))
        return hp.SearchSpace(params, conditions)

    return make


def fake_tree(left, right, feature, threshold, value, n_features) -> Any:
    """An object shaped like a fitted scikit-learn tree, for hand-built trees."""
    tree_ = SimpleNamespace(
        children_left=np.asarray(left),
        children_right=np.asarray(right),
        feature=np.asarray(feature),
        threshold=np.asarray(threshold, dtype=float),
        value=np.asarray(value, dtype=float).reshape(-1, 1, 1),
    )
    return SimpleNamespace(tree_=tree_, n_features_in_=n_features)


def fake_forest(trees: list[Any], n_features: int) -> Any:
    return SimpleNamespace(estimators_=trees, n_features_in_=n_features)


def brute_force_fractions(estimator: Any, space: hp.SearchSpace, subsets) -> dict:
    """Fractions of variance by full-grid integration, independent of hpinsight's algorithm.

    Each continuous column is cut at all of the tree's thresholds (the tree is
    constant between them) and represented by cell midpoints weighted by cell
    length; each discrete column is enumerated value by value with its mass.
    The tree is evaluated with scikit-learn's own ``predict`` on the full grid.
    """
    t = estimator.tree_
    d = len(space)
    points, weights = [], []
    for j, param in enumerate(space.params):
        m = measure_of(param)
        if m.points is not None:
            points.append(m.points)
            weights.append(m.weights / m.weights.sum())
            continue
        thr = np.unique(t.threshold[(t.children_left >= 0) & (t.feature == j)])
        edges = np.unique(np.clip(np.concatenate(([m.low], thr, [m.high])), m.low, m.high))
        points.append((edges[:-1] + edges[1:]) / 2)
        weights.append(np.diff(edges) / (m.high - m.low))
    grid = np.array(list(product(*points)), dtype=np.float64)
    pred = estimator.predict(grid.astype(np.float32)).reshape([p.size for p in points])
    w = weights[0]
    for wj in weights[1:]:
        w = np.multiply.outer(w, wj)
    f0 = float((w * pred).sum())
    total = float((w * (pred - f0) ** 2).sum())

    def marginal(cols):
        others = tuple(a for a in range(d) if a not in cols)
        a = (w * pred).sum(axis=others) / w.sum(axis=others)
        return a

    out = {}
    for cols in subsets:
        # inclusion-exclusion: f_U = sum_{W subset U} (-1)^{|U|-|W|} a_W
        f = np.zeros([points[c].size for c in cols])
        for mask in product((0, 1), repeat=len(cols)):
            sub = tuple(c for c, keep in zip(cols, mask, strict=True) if keep)
            sign = (-1) ** (len(cols) - len(sub))
            a = marginal(sub) if sub else np.array(f0)
            shape = [points[c].size if c in sub else 1 for c in cols]
            f = f + sign * np.reshape(a, shape)
        wu = weights[cols[0]]
        for c in cols[1:]:
            wu = np.multiply.outer(wu, weights[c])
        out[cols] = float((wu * f * f).sum()) / total
    return out
