"""Fit or accept scikit-learn forests and copy their trees into frozen arrays.

This is the only module that reads ``estimator.tree_``: each tree's arrays are
copied once into a :class:`TreeArrays`, and every analysis works on those.

Inactive (conditional) entries are NaN in the encoded matrix. Before fitting,
hpinsight replaces each of them with an independent draw from the parameter's
own measure. The forest therefore sees the parameter vary where it is inactive
and learns that it has no effect there, and the forest is a function on the
full product space -- which is what the functional ANOVA integrates over.
(Reference implementations impute a constant instead; the forest then invents
effects for the inactive region from splits it learned elsewhere.)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from ..._shared import readonly, spread_beyond_rounding
from ...exceptions import InvalidDataError
from ...space import Categorical, measure_of
from .._residuals import residual_dependence

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray

    from ...space import SearchSpace

#: Each tree is grown on a bootstrap sample of at most this many rows by default
#: (see ``fit_forest``); below it, the ordinary bootstrap of all rows is used.
AUTO_MAX_SAMPLES = 10_000


@dataclass(frozen=True, slots=True)
class TreeArrays:
    """One regression tree as plain read-only arrays (scikit-learn's layout).

    ``left``/``right`` are child node ids (-1 at leaves), ``feature`` and
    ``threshold`` the split (``x <= threshold`` goes left, with ``x`` rounded to
    float32 as scikit-learn does), ``value`` each node's prediction.
    """

    left: NDArray[np.intp]
    right: NDArray[np.intp]
    feature: NDArray[np.intp]
    threshold: NDArray[np.float64]
    value: NDArray[np.float64]

    def apply(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """Leaf id of each row of ``X`` (vectorized routing, level by level)."""
        Xf = np.asarray(X, dtype=np.float32)
        node = np.zeros(Xf.shape[0], dtype=np.intp)
        rows = np.arange(Xf.shape[0])
        inner = self.left[node] >= 0
        while inner.any():
            r, nd = rows[inner], node[inner]
            go_left = Xf[r, self.feature[nd]] <= self.threshold[nd]
            node[r] = np.where(go_left, self.left[nd], self.right[nd])
            inner[r] = self.left[node[r]] >= 0
        return node


@dataclass(frozen=True, slots=True)
class FittedForest:
    """A frozen ensemble of :class:`TreeArrays` over ``n_features`` encoded columns.

    ``fit_r2`` is the out-of-bag R²; ``residual_sd`` the root mean square of the
    out-of-bag residuals in objective units (the noise plus what the trees cannot fit),
    None for an ensemble hpinsight did not fit; ``residual_pvalues`` and
    ``residual_spread`` per parameter, the Kruskal-Wallis p-value of those residuals
    grouped by its values and the standard deviation of the groups' means (see
    ``FittedGP.residual_pvalues``), None likewise; ``residuals`` each row's out-of-bag
    error (NaN where every tree drew the row) and ``residual_sds`` its standard deviation,
    ``residual_sd`` for every row (as ``FittedGP.residuals``), None likewise. ``target`` says what the trees
    predict where that is not the history's objective (an optimizer's own forest, trained
    on a transformed cost), in words; None for the objective itself.
    """

    trees: tuple[TreeArrays, ...]
    n_features: int
    fit_r2: float | None = None
    residual_sd: float | None = None
    residual_pvalues: NDArray[np.float64] | None = None
    residual_spread: NDArray[np.float64] | None = None
    residuals: NDArray[np.float64] | None = None
    residual_sds: NDArray[np.float64] | None = None
    target: str | None = None
    #: The column names a scikit-learn model was fitted with (``feature_names_in_``, a
    #: DataFrame's), checked against the space's parameter names where it is used.
    columns: tuple[str, ...] | None = None
    kind: ClassVar[Literal["forest"]] = "forest"

    @property
    def n_draws(self) -> int:
        """Trees in the forest: each is one draw."""
        return len(self.trees)

    @property
    def shadow_fractions(self) -> None:
        """A forest has no shadow null (see ``hpinsight.GP``)."""
        return None

    def predict_per_draw(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Every tree's prediction at every row of encoded ``X``: shape (n_trees, n_rows)."""
        return np.stack([t.value[t.apply(X)] for t in self.trees])


def copy_tree(estimator: Any) -> TreeArrays:
    """Copy a fitted scikit-learn tree's arrays once into a :class:`TreeArrays`."""
    t = estimator.tree_
    value = np.asarray(t.value)
    if value.ndim == 3 and (value.shape[1] != 1 or value.shape[2] != 1):
        raise InvalidDataError(
            "hpinsight analyses single-output regression forests; this tree predicts "
            f"{value.shape[1]} outputs x {value.shape[2]} classes. Fit one forest per objective."
        )
    return TreeArrays(
        left=readonly(np.array(t.children_left, dtype=np.intp)),
        right=readonly(np.array(t.children_right, dtype=np.intp)),
        feature=readonly(np.array(t.feature, dtype=np.intp)),
        threshold=readonly(np.array(t.threshold, dtype=np.float64)),
        value=readonly(np.array(value.reshape(-1), dtype=np.float64)),
    )


#: What ``forest_from_estimator`` accepts, for its error messages.
_ACCEPTED = (
    "a RandomForestRegressor, an ExtraTreesRegressor, a BaggingRegressor of regression "
    "trees that each see every column, or a single DecisionTreeRegressor/ExtraTreeRegressor"
)
#: What to do instead, for its error messages.
_INSTEAD = (
    "Fit a RandomForestRegressor or ExtraTreesRegressor on space.encode(configs) and pass "
    "that, or let hpinsight fit its own model (surrogate=hp.Forest() fits a random forest)."
)
#: Rows on which a given model's ``predict`` is compared with the mean of its trees.
_N_PROBE_ROWS = 64


def _refused(model: Any, why: str) -> InvalidDataError:
    return InvalidDataError(
        "Forest.from_estimator takes a fitted regression forest whose prediction "
        f"is the plain mean of its trees' predictions on all columns ({_ACCEPTED}). Got "
        f"{type(model).__name__} instead, which cannot be decomposed that way: {why}. "
        + _INSTEAD
    )


def why_not_a_mean_of_trees(model: Any) -> str | None:
    """Why a scikit-learn estimator is not the plain mean of its trees, or None if it is.

    Objects that are not scikit-learn estimators (hand-built or converted trees)
    return None: they are taken as the mean of their ``estimators_``, and their
    ``predict``, if they have one, is checked against that mean afterwards.
    """
    from sklearn.base import BaseEstimator, is_classifier
    from sklearn.ensemble import (
        AdaBoostRegressor,
        BaggingRegressor,
        ExtraTreesRegressor,
        GradientBoostingRegressor,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
    )
    from sklearn.tree import DecisionTreeRegressor

    if not isinstance(model, BaseEstimator):
        return None
    if is_classifier(model):
        return (
            "it is a classifier, whose trees hold class frequencies; hpinsight decomposes a "
            "regression of the objective value"
        )
    if isinstance(model, GradientBoostingRegressor | HistGradientBoostingRegressor):
        return (
            "gradient boosting predicts an initial estimate plus the learning-rate-scaled sum "
            "of its stages, not the mean of its trees"
        )
    if isinstance(model, AdaBoostRegressor):
        return "AdaBoost predicts the weighted median of its trees, not their mean"
    # ExtraTreeRegressor subclasses DecisionTreeRegressor.
    if isinstance(model, DecisionTreeRegressor | RandomForestRegressor | ExtraTreesRegressor):
        return None
    if isinstance(model, BaggingRegressor):
        estimators = getattr(model, "estimators_", None)
        if estimators is None:
            return None  # not fitted: reported as such by the caller
        if not all(isinstance(e, DecisionTreeRegressor) for e in estimators):
            kinds = sorted({type(e).__name__ for e in estimators})
            return f"its estimators are {', '.join(kinds)}, not all regression trees"
        n_in = int(model.n_features_in_)
        for features in model.estimators_features_:
            if not np.array_equal(np.asarray(features), np.arange(n_in)):
                return (
                    "its trees were trained on subsets or resamplings of the columns "
                    "(max_features < 1.0 or bootstrap_features=True), so each tree's column "
                    "j is not the space's column j; refit it with max_features=1.0 and "
                    "bootstrap_features=False"
                )
        return None
    return (
        "only random forests, extra-trees, bagged regression trees and single regression "
        "trees predict the plain mean of their trees"
    )


def _probe_rows(forest: FittedForest, n_rows: int) -> NDArray[np.float64]:
    """Rows that reach many leaves: each column drawn from its split thresholds and between them."""
    rng = np.random.default_rng(0)
    X = np.zeros((n_rows, forest.n_features))
    for j in range(forest.n_features):
        thr = np.unique(
            np.concatenate([t.threshold[(t.left >= 0) & (t.feature == j)] for t in forest.trees])
        )
        if thr.size == 0:
            continue
        candidates = np.concatenate(
            (thr, (thr[:-1] + thr[1:]) / 2, [thr[0] - 1.0, thr[-1] + 1.0])
        )
        X[:, j] = rng.choice(candidates, n_rows)
    return X


def _check_predict_is_mean(model: Any, forest: FittedForest) -> None:
    """Compare ``model.predict`` with the mean of the copied trees on probe rows."""
    predict = getattr(model, "predict", None)
    if not callable(predict):
        return  # hand-built trees: nothing to compare with
    X = _probe_rows(forest, _N_PROBE_ROWS)
    try:
        with warnings.catch_warnings():
            # a model fitted on a DataFrame warns about the plain array's missing column names
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            expected = np.asarray(predict(X), dtype=np.float64).reshape(-1)
    except Exception as exc:
        raise _refused(
            model, f"its predict() failed on {X.shape[1]} encoded columns ({exc})"
        ) from exc
    mean = forest.predict_per_draw(X).mean(axis=0)
    gap = float(np.max(np.abs(mean - expected))) if expected.shape == mean.shape else np.inf
    if not gap <= 1e-9 * (1.0 + float(np.max(np.abs(mean)))):
        raise _refused(
            model,
            f"its predict() differs from the mean of its trees' predictions (by up to {gap:.3g})",
        )


def _freeze(model: Any, estimators: list[Any], n_features: int) -> FittedForest:
    oob = getattr(model, "oob_score_", None)
    names = getattr(model, "feature_names_in_", None)
    return FittedForest(
        tuple(copy_tree(e) for e in estimators), n_features, None if oob is None else float(oob),
        columns=None if names is None else tuple(str(n) for n in names),
    )


def _check_columns(forest: FittedForest, names: Sequence[str]) -> None:
    """Refuse a forest fitted on named columns other than ``names``, in their order: the
    trees read columns by position, and a DataFrame with its columns in another order
    gave one parameter's importance to another, without a word."""
    if forest.columns is None or list(forest.columns) == list(names):
        return
    same = sorted(forest.columns) == sorted(names)
    raise InvalidDataError(
        f"The forest was fitted on the columns {list(forest.columns)}, but the search space's "
        f"parameters are {list(names)}"
        + (" (the same names in another order)" if same else "")
        + ": its trees read columns by position, so its importances would go to the wrong "
        "parameters. Fit it on pd.DataFrame(space.encode(configs), columns=space.names), or "
        "on space.encode(configs) as it is."
    )


def _check_no_missing_value_splits(model: Any, forest: FittedForest) -> None:
    """Refuse trees fitted with missing values (NaN, such as ``space.encode`` gives
    for inactive entries): they send NaN their own way at every split, which the
    decomposition does not follow, so its numbers were not the model's."""
    if any(np.isinf(t.threshold[t.left >= 0]).any() for t in forest.trees):
        raise InvalidDataError(
            f"Forest.from_estimator: this {type(model).__name__} was fitted on data with "
            "missing values (NaN; space.encode(configs) gives NaN where a parameter is "
            "inactive): its splits route NaN their own way, which hpinsight's decomposition "
            "does not follow. Fill the inactive entries before fitting (for example with "
            "a value of the parameter's range), or let hpinsight fit its own forest "
            "(surrogate=hp.Forest()), which does.")


def forest_from_estimator(model: Any, n_features: int | None,
                          names: Sequence[str] | None = None) -> FittedForest:
    """Wrap an already fitted scikit-learn tree ensemble (or a single tree).

    hpinsight decomposes the plain mean of the trees' predictions on all
    columns, so only models that predict exactly that are accepted:
    ``RandomForestRegressor``, ``ExtraTreesRegressor``, a ``BaggingRegressor`` whose
    estimators are regression trees that each see every column in order, and a
    single ``DecisionTreeRegressor``/``ExtraTreeRegressor``. Boosting (a sum of
    stages), AdaBoost (a weighted median), bagging on column subsets and
    classifiers are refused. When the model has a ``predict`` method, it is
    compared with the mean of the copied trees on rows spread over the trees'
    splits. Objects that are not scikit-learn estimators but hold fitted trees
    in ``estimators_`` (hand-built trees) are taken as the mean of those trees.

    Parameters
    ----------
    model : fitted estimator or FittedForest
        The model to decompose.
    n_features : int or None
        The number of encoded columns of the search space; None takes the model's own
        (checked against the space where the model is used).
    names : sequence of str, optional
        The space's parameter names, checked against the columns a model fitted on a
        DataFrame names (where the model is used).

    Returns
    -------
    FittedForest
        The trees, copied once into frozen arrays.

    Raises
    ------
    InvalidDataError
        If ``model`` is not fitted, does not predict the plain mean of its
        regression trees on all columns, or was trained on a different number
        of columns.
    """
    if isinstance(model, FittedForest):  # already frozen (e.g. converted from an optimizer's model)
        if n_features is not None and model.n_features != n_features:
            raise InvalidDataError(
                f"The forest was trained on {model.n_features} columns but the search space "
                f"has {n_features} parameters; train it on space.encode(configs)."
            )
        if names is not None:
            _check_columns(model, names)
        return model
    why = why_not_a_mean_of_trees(model)
    if why is not None:
        raise _refused(model, why)
    estimators = getattr(model, "estimators_", None)
    if estimators is None:
        estimators = [model] if hasattr(model, "tree_") else None
    if estimators is None:
        raise InvalidDataError(
            "Forest.from_estimator takes a fitted scikit-learn tree ensemble "
            "(e.g. RandomForestRegressor) or tree. Got "
            f"{type(model).__name__}, which has neither 'estimators_' nor 'tree_'; call .fit first."
        )
    flat = list(np.ravel(np.asarray(estimators, dtype=object)))
    if not flat or not all(hasattr(e, "tree_") for e in flat):
        raise _refused(model, f"{type(model).__name__}.estimators_ does not hold fitted trees")
    n_in = getattr(model, "n_features_in_", getattr(flat[0], "n_features_in_", n_features))
    if n_in is None:
        raise InvalidDataError(
            f"The {type(model).__name__} does not say how many columns it was trained on "
            "(no n_features_in_); fit it on space.encode(configs) with scikit-learn.")
    if n_features is None:
        n_features = int(n_in)
    elif n_in != n_features:
        raise InvalidDataError(
            f"The forest was trained on {n_in} columns but the search space has {n_features} "
            "parameters; train it on space.encode(configs)."
        )
    forest = _freeze(model, flat, n_features)
    if names is not None:
        _check_columns(forest, names)
    _check_no_missing_value_splits(model, forest)
    _check_predict_is_mean(model, forest)
    return forest


def impute_inactive(
    space: SearchSpace, X: NDArray[np.float64], rng: np.random.Generator,
    codes: Mapping[int, NDArray[np.float64]] | None = None,
) -> NDArray[np.float64]:
    """Return a copy of ``X`` with NaN entries drawn from each parameter's measure; a
    column of ``codes`` (a categorical measured over some of its choices) uniformly from
    those codes."""
    out = X.copy()
    for j, param in enumerate(space.params):
        missing = np.isnan(out[:, j])
        if missing.any():
            if codes is not None and j in codes:
                out[missing, j] = rng.choice(codes[j], int(missing.sum()))
            else:
                out[missing, j] = measure_of(param).sample(rng, int(missing.sum()))
    return out


def fit_forest(
    space: SearchSpace,
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    n_trees: int,
    seed: int | None,
    min_samples_leaf: int = 1,
    max_features: float = 1.0,
    max_samples: int | float | str | None = "auto",
    n_jobs: int | None = None,
) -> FittedForest:
    """Fit a ``RandomForestRegressor`` on encoded configurations and freeze it.

    ``max_samples="auto"`` grows each tree on a bootstrap sample of
    ``min(n, AUTO_MAX_SAMPLES)`` rows: below that size it is the ordinary
    bootstrap; above it, each tree costs about one CPU-second at 100 parameters
    instead of growing with ``n``. Measured on 30,000 trials x 10 parameters
    (32 trees): main-effect fractions moved by at most 0.003 against full
    bootstraps, for 4.8 s instead of 8.1 s.
    The same ``seed`` gives bit-identical trees, whatever ``n_jobs``.
    """
    from sklearn.ensemble import RandomForestRegressor

    seeds = np.random.SeedSequence(seed).generate_state(2)
    X_fit = impute_inactive(space, X, np.random.default_rng(seeds[0]))
    n = X_fit.shape[0]
    if max_samples == "auto":
        max_samples = None if n <= AUTO_MAX_SAMPLES else AUTO_MAX_SAMPLES
    bootstrap = n > 1
    model = RandomForestRegressor(
        n_estimators=n_trees,
        min_samples_leaf=min_samples_leaf,
        max_features=max_features,
        bootstrap=bootstrap,
        max_samples=max_samples if bootstrap else None,
        n_jobs=n_jobs,
        random_state=int(seeds[1]),
    )
    # The trees are grown on the standardized objective and their values mapped back:
    # scikit-learn's squared-error criterion sums squares of the raw values, so an
    # objective of 1e8 + f lost f to rounding (6 of 8 trees grew no split) and one
    # whose variance is below the float epsilon (f * 1e-8) grew none at all. The
    # criterion is invariant to an affine map of the values, so the splits are those
    # exact arithmetic would give the raw objective.
    y = np.asarray(y, dtype=np.float64)
    center = float(y.mean()) if y.size else 0.0
    # a spread at the rounding of the values themselves is no spread: standardized, the
    # trees would split on the last bit
    scale = spread_beyond_rounding(y) or 1.0
    model.fit(X_fit, (y - center) / scale)
    # the mean of its trees by construction: no need to check predict on probe rows
    frozen = _freeze(model, list(model.estimators_), X.shape[1])
    frozen = replace(frozen, trees=tuple(replace(t, value=readonly(center + scale * t.value))
                                         for t in frozen.trees))
    if not bootstrap or n < 5:
        return frozen
    # Each row's out-of-bag prediction: the mean of the trees that did not draw it, as
    # scikit-learn's ``oob_score`` computes it, but here, where a row every tree drew is
    # left out instead of warned about (tiny data) and put at 0 in its score (silencing
    # that warning took a filter of the whole process, from a refit thread too)
    inbag = np.zeros((len(model.estimators_), n), dtype=bool)
    for t, drawn in enumerate(model.estimators_samples_):
        inbag[t, drawn] = True
    total, count = np.zeros(n), (~inbag).sum(axis=0)
    for t, tree in enumerate(model.estimators_):
        rows = np.flatnonzero(~inbag[t])
        if rows.size:
            total[rows] += tree.predict(X_fit[rows])
    seen = count > 0
    if not seen.any():
        return frozen
    residual = y[seen] - (center + scale * (total[seen] / count[seen]))
    pvalues, spread = residual_dependence(X[seen], [isinstance(p, Categorical) for p in space.params],
                                          residual)
    # the out-of-bag R² of the rows that have an out-of-bag prediction (scikit-learn's own
    # score counts the others as predicted 0: with 8 trees on 30 rows, -0.06 where these
    # rows give 0.68)
    spread_y = float(y[seen].var())
    fit_r2 = float(1.0 - np.mean(residual**2) / spread_y) if spread_y > 0 else frozen.fit_r2
    rms = float(np.sqrt(np.mean(residual**2)))
    errors = np.full(n, np.nan)
    errors[seen] = residual
    return replace(frozen, fit_r2=fit_r2, residual_sd=rms,
                   residual_pvalues=readonly(pvalues), residual_spread=readonly(spread),
                   residuals=readonly(errors),
                   residual_sds=readonly(np.where(seen, rms, np.nan)))
