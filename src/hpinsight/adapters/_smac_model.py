"""SMAC's own random forest, re-expressed in hpinsight's encoding so it can be decomposed exactly.

SMAC 2.4 trains a scikit-learn forest (``EPMRandomForest``) on ConfigSpace's vector
encoding: every numerical parameter scaled to ``[0, 1]`` (in log space where
``log=True``), categorical and ordinal parameters as their index, columns in
ConfigSpace's order, and inactive entries imputed with ``-1`` (numerical) or the
number of choices (categorical, ordinal). hpinsight encodes log parameters as their
natural log and integers as themselves. Both encodings are monotone in each
parameter, so each split ``z_j <= t`` of a SMAC tree is the same split
``x_j <= t'`` in hpinsight's encoding:

* continuous parameters: ``t'`` is the affine image of ``t``;
* integer, stepped and categorical parameters: ``t'`` lies halfway between the
  last grid value that goes left and the first that goes right, after the same
  float32 rounding scikit-learn applies, so every grid value is routed as SMAC's
  tree routes it;
* thresholds outside ``[0, 1]`` (splits that only separate SMAC's imputed value
  from the active ones) send every active value the same way.

Where a conditional parameter is inactive SMAC feeds its imputed value, which goes
one fixed way at every split on that parameter. Each converted tree routes it the
same way: splits on the parameter's ancestors are inserted wherever its activity is
not yet decided (:func:`hpinsight.surrogates.forest.route_inactive`). The converted
forest therefore predicts what SMAC's forest predicts at every configuration of the
space, inactive entries included (tests check this tree by tree on random
configurations of conditional spaces with forbidden clauses), and, as a function on
the product space the functional ANOVA integrates over, it ignores a parameter
wherever the parameter is inactive. Forbidden configurations are part of that
product space (SMAC's forest predicts there too). The leaves hold what SMAC trained
on: with the HPO facade's defaults that is the log of the normalized cost
(``log_y=True``), so importances are fractions of that transformed target's variance.

Private attributes read (SMAC 2.4.x; pinned in the ``smac`` extra):
``smbo.intensifier.config_selector._model`` and the model's ``_rf``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._shared import readonly
from ..exceptions import HPInsightError
from ..space import Categorical, Float, Int, encode_value
from ..surrogates.forest import FittedForest, TreeArrays, copy_tree, route_inactive

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ..space import SearchSpace

__all__ = ["SmacModelUnavailable", "forest_from_smac_model", "smac_model_of", "smac_target_of"]


class SmacModelUnavailable(HPInsightError, RuntimeError):
    """SMAC's surrogate cannot be analysed now; the message says why.

    A :class:`~hpinsight.exceptions.HPInsightError` and a ``RuntimeError``.
    """


def smac_model_of(smbo_or_facade: Any) -> Any:
    """SMAC's surrogate model object (private path, see the module notes)."""
    intensifier = getattr(smbo_or_facade, "intensifier", None)
    try:
        return intensifier.config_selector._model  # type: ignore[union-attr]
    except (AttributeError, AssertionError) as exc:
        raise SmacModelUnavailable(
            "SMAC's surrogate model was not found at intensifier.config_selector._model; "
            "this SMAC version is not supported for surrogate='smac' (hpinsight supports "
            "SMAC 2.4.x)"
        ) from exc


def smac_target_of(smbo_or_facade: Any) -> str:
    """What SMAC's forest was trained on, in words (its runhistory encoder and ``log_y``)."""
    selector = getattr(getattr(smbo_or_facade, "intensifier", None), "config_selector", None)
    encoder = type(getattr(selector, "_runhistory_encoder", None)).__name__
    log_y = bool(getattr(getattr(selector, "_model", None), "_log_y", False))
    kind = {
        "RunHistoryLogScaledEncoder": "the log of the cost scaled to [0, 1]",
        "RunHistoryLogEncoder": "the log of the cost",
        "RunHistoryScaledEncoder": "the cost scaled to [0, 1]",
        "RunHistoryInverseScaledEncoder": "the inverse of the cost scaled to [0, 1]",
        "RunHistorySqrtScaledEncoder": "the square root of the cost scaled to [0, 1]",
        "RunHistoryEncoder": "the cost",
    }.get(encoder, f"the cost as {encoder} encodes it")
    # SMAC's encoder trains the forest on crashed runs at crash_cost; a history leaves them out
    runhistory = getattr(smbo_or_facade, "runhistory", None)
    crashed = 0 if runhistory is None else sum(
        1 for v in runhistory.values() if getattr(v.status, "name", None) == "CRASHED")
    return (f"{kind} ({encoder}{', log_y' if log_y else ''})"
            + (f"; {crashed} crashed run(s) counted at crash_cost" if crashed else ""))


def forest_from_smac_model(model: Any, space: SearchSpace, configspace: Any) -> FittedForest:
    """Convert SMAC's fitted random forest into a :class:`FittedForest` over ``space``.

    Raises
    ------
    SmacModelUnavailable
        The model is not a random forest (e.g. the Gaussian process of the
        black-box facade), is not trained yet, or was trained with instance
        features.
    """
    rf = getattr(model, "_rf", None)
    if rf is None:
        kind = type(model).__name__
        why = ("it is not trained yet (SMAC trains it after its initial design)"
               if hasattr(model, "_rf") else f"it is a {kind}, not a random forest")
        raise SmacModelUnavailable(f"SMAC's surrogate cannot be analysed: {why}")
    estimators = getattr(rf, "estimators_", None)
    if not estimators:
        raise SmacModelUnavailable("SMAC's random forest has no fitted trees yet")
    names = list(configspace.keys())
    if int(rf.n_features_in_) != len(names):
        raise SmacModelUnavailable(
            f"SMAC's forest has {rf.n_features_in_} input columns for {len(names)} parameters: "
            "it was trained with instance features, which hpinsight does not integrate over; "
            "use the default surrogate, hp.GP(), refit on each configuration's mean cost"
        )
    if sorted(names) != sorted(space.names):
        raise SmacModelUnavailable(
            "SMAC's configuration space and the analysed space have different parameters"
        )
    maps = [_threshold_map(space[name], configspace[name]) for name in names]
    ours = [space.names.index(name) for name in names]  # SMAC column -> our column
    imputed = np.array([_imputed_value(configspace, name) for name in names])
    trees = []
    for e in estimators:
        smac_tree = copy_tree(e)
        inner = smac_tree.left >= 0
        # where SMAC's imputed value for an inactive entry goes (float32, as trees compare)
        at = imputed[np.where(inner, smac_tree.feature, 0)].astype(np.float32)
        inactive_left = inner & (at.astype(np.float64) <= smac_tree.threshold)
        trees.append(route_inactive(_convert(smac_tree, maps, ours), space, inactive_left))
    return FittedForest(tuple(trees), len(space.names), None)


def _imputed_value(configspace: Any, name: str) -> float:
    """The value SMAC 2.4's forest puts in place of an inactive entry
    (``AbstractRandomForest._impute_inactive``); NaN for unconditional parameters."""
    if not configspace.parents_of[name]:
        return np.nan
    hp = configspace[name]
    if hasattr(hp, "choices"):
        return float(len(hp.choices))
    if hasattr(hp, "sequence"):
        return float(len(hp.sequence))
    if hasattr(hp, "value"):  # Constant
        return 1.0
    return -1.0


#: Discrete parameters with more values are mapped by bisection instead of a listed grid.
MAX_LISTED = 100_000


def _convert(tree: TreeArrays, maps: list[Any], ours: list[int]) -> TreeArrays:
    inner = tree.left >= 0
    feature = tree.feature.copy()
    threshold = tree.threshold.copy()
    for j, to_ours in enumerate(maps):
        at = inner & (tree.feature == j)
        if at.any():
            threshold[at] = to_ours(tree.threshold[at])
            feature[at] = ours[j]
    return TreeArrays(tree.left, tree.right, readonly(feature), readonly(threshold), tree.value)


def _threshold_map(param: Any, hp: Any) -> Any:
    """A function mapping SMAC thresholds of one column to hpinsight thresholds."""
    if isinstance(param, Float) and param.step is None:
        low, high = (np.log(param.low), np.log(param.high)) if param.log else (param.low, param.high)

        def continuous(t: NDArray[np.float64]) -> NDArray[np.float64]:
            out = low + np.clip(t, 0.0, 1.0) * (high - low)
            out = np.where(t < 0.0, low - 1.0, out)
            return np.where(t >= 1.0, high + 1.0, out)

        return continuous
    if not isinstance(param, Categorical) and _n_values(param) > MAX_LISTED:
        return _bisected_map(param, hp)
    values = _grid(param)
    z = _smac_vector(hp, values, categorical=isinstance(param, Categorical))
    x = np.array([encode_value(param, v) for v in values], dtype=np.float64)
    order = np.argsort(z, kind="stable")
    z, x = z[order], x[order]
    if np.any(np.diff(x) <= 0):  # pragma: no cover - both encodings are monotone
        raise SmacModelUnavailable(f"the encodings of {param.name!r} are not monotone")
    cut = np.concatenate([[x[0] - 1.0], (x[:-1] + x[1:]) / 2.0, [x[-1] + 1.0]])

    def discrete(t: NDArray[np.float64]) -> NDArray[np.float64]:
        n_left = np.searchsorted(z.astype(np.float64), t, side="right")  # grid values with z <= t
        return cut[n_left]

    return discrete


def _smac_vector(hp: Any, values: list[Any], *, categorical: bool) -> NDArray[np.float32]:
    """ConfigSpace's encoding of ``values`` (one ``to_vector`` call), as float32 like trees.

    ``np.asarray`` would turn mixed choices such as ``[1, "a"]`` into strings that are not
    choices any more: categorical values go in as an object array, each value as it is.
    """
    arr = np.fromiter(values, dtype=object, count=len(values)) if categorical else np.asarray(values)
    return np.asarray(hp.to_vector(arr), dtype=np.float32)


def _n_values(param: Any) -> int:
    return int(param.n_values)


def _bisected_map(param: Any, hp: Any) -> Any:
    """The threshold map of a numerical parameter with too many values to list (an
    integer up to 10^7, say): for every threshold, the number of values SMAC's tree sends
    left is found by bisection over the value index, all thresholds at once."""
    n = _n_values(param)
    step = param.step or 1
    integer = isinstance(param, Int)

    def value(k: NDArray[np.int64]) -> NDArray[Any]:
        v = np.asarray(param.low + k * step)
        return v.astype(np.int64) if integer else v.astype(np.float64)

    def ours(k: NDArray[np.int64]) -> NDArray[np.float64]:  # hpinsight's encoding
        v = value(k).astype(np.float64)
        return np.log(v) if param.log else v

    def discrete(t: NDArray[np.float64]) -> NDArray[np.float64]:
        t = np.asarray(t, dtype=np.float64)
        lo = np.zeros(t.shape, np.int64)  # n_left lies in [lo, hi]
        hi = np.full(t.shape, n, np.int64)
        while (open_ := lo < hi).any():
            mid = (lo + hi) // 2
            # as in the listed case: SMAC's value, rounded to float32 as trees see it
            z = np.asarray(hp.to_vector(value(np.minimum(mid, n - 1))), dtype=np.float32)
            left = z.astype(np.float64) <= t
            lo = np.where(open_ & left, mid + 1, lo)
            hi = np.where(open_ & ~left, mid, hi)
        below = ours(np.maximum(lo - 1, 0))
        above = ours(np.minimum(lo, n - 1))
        return np.where(lo == 0, above - 1.0, np.where(lo == n, below + 1.0, (below + above) / 2.0))

    return discrete


def _grid(param: Any) -> list[Any]:
    if isinstance(param, Categorical):
        return list(param.choices)
    if isinstance(param, Int):
        return list(range(param.low, param.high + 1, param.step or 1))
    n = round((param.high - param.low) / param.step)
    return [param.low + k * param.step for k in range(n + 1)]
