"""Shared factories for the unit tests."""

from __future__ import annotations

import importlib.util
import math
import sys
from itertools import product
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import numpy as np
import pytest

import hpinsight as hp

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def load_benchmark():
    """``load(name)`` imports ``benchmarks/<name>.py`` as the module ``name``, with the
    folder on ``sys.path`` for its imports of its siblings; both are undone when the test
    module ends."""
    sys.path.insert(0, str(BENCHMARKS))

    def load(name: str) -> Any:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    yield load
    sys.path.remove(str(BENCHMARKS))
    for name, module in list(sys.modules.items()):
        if Path(getattr(module, "__file__", None) or "/").parent == BENCHMARKS:
            sys.modules.pop(name)


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


class ReferenceMeasure(NamedTuple):
    """The measure of one encoded column, written out from the documented estimand.

    Continuous (uniform on ``[low, high]``) when ``points`` is None, otherwise
    ``weights`` (summing to 1) on the encoded ``points``.
    """

    low: float
    high: float
    points: np.ndarray | None = None
    weights: np.ndarray | None = None


#: More valid values than this and an Int or stepped Float counts as continuous
#: (the threshold the ``_encoding`` docstring documents as ``MAX_DISCRETE_VALUES``).
REFERENCE_MAX_DISCRETE = 2**20


def reference_measure(param: Any) -> ReferenceMeasure:
    """What "uniform over the search space" means for ``param``'s encoded column,
    computed here from first principles so that the brute-force checks do not share
    ``hpinsight.space._encoding.measure_of`` with the code they check:

    * Categorical: the choice indices 0..k-1, each with mass 1/k;
    * Float: uniform on [low, high], or on [log low, log high] for log=True;
    * stepped Float, linear Int: the values low, low + step, ... (not above high),
      equal masses;
    * log Int: the value k carries P(k - 1/2 < U <= k + 1/2) for U log-uniform on
      [low - 1/2, high + 1/2], i.e. the log-length of that interval over the whole;
    * more than ``REFERENCE_MAX_DISCRETE`` values: continuous on
      [low - step/2, high + step/2] (in log space for log=True).
    """
    if isinstance(param, hp.Categorical):
        k = len(param.choices)
        return ReferenceMeasure(0.0, k - 1.0, np.arange(k, dtype=float), np.full(k, 1.0 / k))
    if isinstance(param, hp.Float) and param.step is None:
        if param.log:
            return ReferenceMeasure(math.log(param.low), math.log(param.high))
        return ReferenceMeasure(param.low, param.high)
    step = param.step
    if isinstance(param, hp.Int):
        n_values = (param.high - param.low) // step + 1
    else:
        n_values = math.floor((param.high - param.low) / step * (1 + 1e-12)) + 1
    if n_values > REFERENCE_MAX_DISCRETE:
        low, high = param.low - step / 2, param.high + step / 2
        if param.log:
            return ReferenceMeasure(math.log(low), math.log(high))
        return ReferenceMeasure(low, high)
    if isinstance(param, hp.Int):
        values = [float(v) for v in range(param.low, param.high + 1, step)]
    else:
        values = [param.low + k * step for k in range(n_values + 1)]
        values = [v for v in values if v <= param.high + 1e-9 * step]
    if not param.log:
        n = len(values)
        return ReferenceMeasure(values[0], values[-1], np.array(values), np.full(n, 1.0 / n))
    # log Int: the log-uniform mass of each value's unit interval
    whole = math.log(param.high + 0.5) - math.log(param.low - 0.5)
    mass = [(math.log(v + 0.5) - math.log(v - 0.5)) / whole for v in values]
    points = [math.log(v) for v in values]
    return ReferenceMeasure(points[0], points[-1], np.array(points), np.array(mass))


def reference_grid(estimator: Any, space: hp.SearchSpace) -> tuple[list, list]:
    """Per column, the points that represent it exactly for one fitted tree, and their
    masses under :func:`reference_measure`.

    A continuous column is cut at all of the tree's thresholds on it (the tree is
    constant between them) and represented by cell midpoints weighted by cell length;
    a discrete column is enumerated value by value with its mass.
    """
    t = estimator.tree_
    points, weights = [], []
    for j, param in enumerate(space.params):
        m = reference_measure(param)
        if m.points is not None:
            points.append(m.points)
            weights.append(m.weights)
            continue
        thr = np.unique(t.threshold[(t.children_left >= 0) & (t.feature == j)])
        edges = np.unique(np.clip(np.concatenate(([m.low], thr, [m.high])), m.low, m.high))
        points.append((edges[:-1] + edges[1:]) / 2)
        weights.append(np.diff(edges) / (m.high - m.low))
    return points, weights


def brute_force_marginal(estimator: Any, space: hp.SearchSpace, fixed: dict[int, float]) -> float:
    """The tree's mean over the reference measure of every column not in ``fixed``
    (column index -> encoded value), evaluated with scikit-learn's own ``predict``."""
    points, weights = reference_grid(estimator, space)
    for j, value in fixed.items():
        points[j], weights[j] = np.array([value]), np.ones(1)
    grid = np.array(list(product(*points)), dtype=np.float64)
    pred = estimator.predict(grid.astype(np.float32))
    w = np.array([math.prod(ws) for ws in product(*weights)])
    return float((w * pred).sum() / w.sum())


def brute_force_fractions(estimator: Any, space: hp.SearchSpace, subsets) -> dict:
    """Fractions of variance by full-grid integration, independent of hpinsight's algorithm
    and of its measure (the grid and masses of :func:`reference_grid`).

    The tree is evaluated with scikit-learn's own ``predict`` on the full grid.
    """
    d = len(space)
    points, weights = reference_grid(estimator, space)
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
