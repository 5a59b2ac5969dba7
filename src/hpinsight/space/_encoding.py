"""Native values <-> encoded matrix, the measure of each parameter, and activity.

Encoding (one float column per parameter):

* ``Float``/``Int``: the value, or ``log(value)`` when ``log=True`` (always computed by
  :func:`log_encode`, so that encoded values compare exactly);
* ``Categorical``: the index of the choice (``None`` too, when it is a choice);
* inactive or missing: ``NaN`` (see :func:`is_missing`).

Measure (what "uniform over the search space" means for each column):

* continuous ``Float``: uniform on ``[low, high]`` in the encoded coordinate, so
  log-uniform in the value for ``log=True``;
* stepped ``Float`` and linear ``Int``: uniform over the valid values;
* logarithmic ``Int``: the integer ``k`` has the mass a log-uniform law on
  ``[low - 0.5, high + 0.5]`` gives to ``[k - 0.5, k + 0.5]`` -- what Optuna and
  SMAC draw when they round a log-uniform sample;
* ``Categorical``: uniform over choices.

Integer and stepped parameters with more than ``MAX_DISCRETE_VALUES`` values are
treated as continuous on ``[low - step/2, high + step/2]`` (or its log); the
error this makes in any cell's mass is below one value's share.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .._shared import step_index
from .._warn import warn
from ..exceptions import HPInsightWarning, InvalidDataError
from ._params import AnyOf, Categorical, Condition, Float, Int, Parameter

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._params import ConditionLike

MAX_DISCRETE_VALUES = 1 << 20
_BOUND_TOL = 1e-9


class EncodableSpace(Protocol):
    """What the encoding reads of a :class:`~hpinsight.space.SearchSpace`: the
    parameters in column order, their conditions, and an order with parents first."""

    @property
    def params(self) -> tuple[Parameter, ...]: ...
    @property
    def names(self) -> tuple[str, ...]: ...
    @property
    def conditional_names(self) -> tuple[str, ...]: ...
    @property
    def columns_parents_first(self) -> tuple[int, ...]: ...
    def conditions_of(self, name: str) -> tuple[ConditionLike, ...]: ...
    def index(self, name: str) -> int: ...
    def __getitem__(self, name: str) -> Parameter: ...
    def __contains__(self, name: object) -> bool: ...
    def __len__(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Measure:
    """The probability measure of one encoded column.

    Continuous when ``points`` is ``None`` (uniform on ``[low, high]``),
    otherwise discrete on ``points`` (sorted encoded values) with ``weights``.
    """

    low: float
    high: float
    points: NDArray[np.float64] | None = None
    weights: NDArray[np.float64] | None = None
    #: A categorical's choices: unordered, so never thinned (which ones a thinned grid
    #: kept would be arbitrary, and the best could be among those left out).
    unordered: bool = False

    def cell_weights(self, thresholds: NDArray[np.float64]) -> NDArray[np.float64]:
        """Mass of the cells ``(-inf, t1], (t1, t2], ..., (tK, inf)``.

        ``thresholds`` must be sorted ascending. Discrete points are compared
        after rounding to float32, exactly as scikit-learn trees route inputs.
        """
        if self.points is None:
            edges = np.empty(thresholds.size + 2)
            edges[0], edges[-1] = self.low, self.high
            np.clip(thresholds, self.low, self.high, out=edges[1:-1])
            return np.diff(edges) / (self.high - self.low)
        assert self.weights is not None
        cum = np.concatenate(([0.0], np.cumsum(self.weights)))
        cum /= cum[-1]
        routed = self.points.astype(np.float32).astype(np.float64)
        idx = np.empty(thresholds.size + 2, dtype=np.intp)
        idx[0], idx[-1] = 0, self.points.size
        idx[1:-1] = np.searchsorted(routed, thresholds, side="right")
        return np.diff(cum[idx])

    def grid(self, size: int) -> NDArray[np.float64]:
        """Evaluation points: every discrete point (thinned to ``size`` if more), or
        ``size`` evenly spaced encoded values.

        Points are thinned evenly in the encoded coordinate. A log-scale integer's points
        are its integers, crowded at the top of its logarithm, so thinning them evenly by
        index spaced the grid evenly in the value (1, 55, 109, ... for 1-1024), and a
        marginal or PDP of such a parameter skipped the decade where its optimum lay (8).
        Where points coincide after thinning there are fewer than ``size``. A
        categorical's choices are all kept, however many."""
        if self.points is None:
            return np.linspace(self.low, self.high, size)
        if self.points.size <= size or self.unordered:
            return self.points.copy()
        steps = np.diff(self.points)
        if np.allclose(steps, steps[0]):  # evenly spaced: every size-th point or so
            pick = np.unique(np.round(np.linspace(0, self.points.size - 1, size)).astype(np.intp))
            return self.points[pick]
        targets = np.linspace(self.points[0], self.points[-1], size)
        right = np.clip(np.searchsorted(self.points, targets), 1, self.points.size - 1)
        nearer_left = targets - self.points[right - 1] <= self.points[right] - targets
        return self.points[np.unique(right - nearer_left)]

    def sample(self, rng: np.random.Generator, n: int) -> NDArray[np.float64]:
        if self.points is None:
            return rng.uniform(self.low, self.high, size=n)
        assert self.weights is not None
        return rng.choice(self.points, size=n, p=self.weights / self.weights.sum())


def measure_of(param: Parameter) -> Measure:
    """Return the measure of ``param``'s encoded column (see the module docstring)."""
    if isinstance(param, Categorical):
        k = len(param.choices)
        return Measure(0.0, float(k - 1), np.arange(k, dtype=np.float64), np.full(k, 1.0 / k),
                       unordered=True)
    if isinstance(param, Float) and param.step is None:
        return Measure(*encoded_bounds(param, 0.0))
    step = float(param.step or 1)
    n = int(param.n_values)
    if n > MAX_DISCRETE_VALUES:
        return Measure(*encoded_bounds(param, step / 2))
    values = param.low + step * np.arange(n, dtype=np.float64)
    if param.log:
        edges = log_encode(np.concatenate((values - 0.5, [values[-1] + 0.5])))
        points = log_encode(values)
        return Measure(float(points[0]), float(points[-1]), points, np.diff(edges))
    return Measure(float(values[0]), float(values[-1]), values, np.full(n, 1.0 / n))


def log_encode(values: Any) -> Any:
    """The encoded coordinate of a ``log=True`` parameter: ``np.log`` of float64 values.

    Every logarithm of the encoding goes through this one function, because encoded
    values are compared exactly (a parent's column with a condition's targets and its
    ``gt``/``lt`` bounds, data with a measure's points) and ``math.log`` and ``np.log``
    can differ in the last bit: NumPy's SIMD logarithm is not the C library's (on an
    AVX-512 machine, ``np.log(9170.0) < math.log(9170.0)``). NumPy's element-wise result
    does not depend on the array's length, stride or alignment, so a scalar encoded alone
    equals the same value encoded in a column.

    Parameters
    ----------
    values : float or array-like of float
        Positive values (NaN stays NaN).

    Returns
    -------
    numpy.float64 or ndarray of float64
        ``np.log(values)``, of the same shape.
    """
    return np.log(np.asarray(values, dtype=np.float64))


def encoded_bounds(param: Float | Int, pad: float) -> tuple[float, float]:
    low, high = param.low - pad, param.high + pad
    if param.log:
        return float(log_encode(low)), float(log_encode(high))
    return float(low), float(high)


def encode_value(param: Parameter, value: Any) -> float:
    """Encode one valid value of ``param``, exactly as :meth:`SearchSpace.encode` does."""
    if isinstance(param, Categorical):
        return float(param.index_of(value))
    return float(log_encode(value)) if param.log else float(value)


def native_value(param: Parameter, value: Any) -> Any:
    """One valid value of ``param`` as the parameter's own type: an ``int`` for an integer
    parameter (``3.0`` and ``np.int64(3)`` alike), a ``float`` for a float one, and for a
    categorical the choice object itself (``np.str_('a')`` -> the choice ``'a'``). What
    the trials or a user gave may be any of those (a column read back from a CSV file is
    float), and a value handed back to fix a parameter at must be one the user's code
    takes (``n_estimators=475.0`` is refused by scikit-learn)."""
    if isinstance(param, Categorical):
        return param.choices[param.index_of(value)]
    if isinstance(param, Int):
        return round(float(value))
    return float(value)


# --------------------------------------------------------------------------------------
# configs -> matrix
MISSING = object()


def _columns(space: EncodableSpace, configs: Any
             ) -> tuple[int, dict[str, Any], dict[str, NDArray[np.bool_]]]:
    """Gather per-parameter value lists from a DataFrame or a sequence of mappings; and
    per categorical with the choice ``None``, a DataFrame's empty cells in its column
    (pandas 3 stores ``None`` in a column of strings as NaN): that choice where the
    parameter is active, inactive elsewhere."""
    empty: dict[str, NDArray[np.bool_]] = {}
    if hasattr(configs, "columns") and hasattr(configs, "to_dict"):  # pandas DataFrame
        unknown = [str(c) for c in configs.columns if c not in space]
        _raise_unknown(space, unknown)
        n = len(configs)
        cols: dict[str, Any] = {}
        for name in space.names:
            param = space[name]
            if name not in configs.columns:
                cols[name] = [MISSING] * n
            elif configs[name].dtype.kind in "fiu" and not isinstance(param, Categorical):
                cols[name] = configs[name].to_numpy()
            else:
                cols[name] = configs[name].tolist()
                if isinstance(param, Categorical) and param.contains(None):
                    mask = np.array([empty_cell(v) for v in cols[name]], dtype=bool)
                    if mask.any():
                        empty[name] = mask
                        cols[name] = [MISSING if m else v for v, m in zip(cols[name], mask,
                                                                          strict=True)]
        return n, cols, empty
    if isinstance(configs, (Mapping, str | bytes)):
        raise InvalidDataError(
            "configs must be a sequence of mappings (one per trial) or a pandas DataFrame. "
            f"Got a single {type(configs).__name__}; wrap it in a list."
        )
    try:
        rows = list(configs)
    except TypeError:
        raise InvalidDataError(
            "configs must be a sequence of mappings (one per trial) or a pandas DataFrame. "
            f"Got {type(configs).__name__} instead."
        ) from None
    names = set(space.names)
    unknown_set: dict[str, None] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InvalidDataError(
                f"Configuration {i} must be a mapping from parameter name to value. "
                f"Got {type(row).__name__} instead.",
                row=i,
            )
        if not names.issuperset(row):
            unknown_set.update(dict.fromkeys(str(k) for k in row if k not in names))
    _raise_unknown(space, list(unknown_set))
    return (len(rows), {name: [row.get(name, MISSING) for row in rows] for name in space.names},
            empty)


def _raise_unknown(space: EncodableSpace, unknown: Sequence[str]) -> None:
    if unknown:
        raise InvalidDataError(
            f"The configurations name parameters that are not in the search space: "
            f"{sorted(unknown)!r}. Valid names are {list(space.names)!r}; add the missing "
            "parameters to the space or drop those keys.",
            name=sorted(unknown)[0],
        )


def empty_cell(value: Any) -> bool:
    """Whether a DataFrame cell is empty: None, NaN, ``pd.NA`` or ``pd.NaT``."""
    return value is None or (isinstance(value, float) and value != value) or \
        type(value).__name__ in ("NAType", "NaTType")


def is_missing(param: Parameter, value: Any) -> bool:
    """Whether ``value`` marks ``param`` as missing (inactive) rather than setting it.

    A parameter absent from a configuration (``MISSING`` here) is missing. ``None`` and
    ``NaN`` (and pandas' ``pd.NA``) are missing too (what a DataFrame holds in an empty
    cell), *unless* they are one of a categorical's choices: ``class_weight=None`` is a
    setting, not a gap.

    Parameters
    ----------
    param : Float, Int or Categorical
    value : object
        The configuration's entry for ``param``, or ``MISSING`` when it has none.

    Returns
    -------
    bool
    """
    if value is MISSING:
        return True
    if isinstance(param, Categorical) and param.contains(value):
        return False
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        type(value).__name__ == "NAType"  # pandas' missing value


def _off_space(param: Float | Int, col: NDArray[np.float64], present: NDArray[np.bool_]
               ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which present values of ``col`` lie out of ``param``'s bounds (beyond the bound
    tolerance, or infinite), and which, within them, off its step grid."""
    tol = _BOUND_TOL * (param.high - param.low)
    bad = present & ((col < param.low - tol) | (col > param.high + tol) | np.isinf(col))
    off = np.zeros_like(present)
    if param.step is not None:
        with np.errstate(invalid="ignore"):
            k = (np.clip(col, param.low, param.high) - param.low) / param.step
            off = present & ~bad & (np.abs(k - np.round(k)) > (
                1e-9 * np.maximum(1.0, np.abs(k)) if isinstance(param, Float) else 0))
    return bad, off


def outside_space(param: Float | Int, values: Any) -> NDArray[np.bool_]:
    """Which of ``values`` (numbers; None or NaN for missing) the encoding of ``param``
    refuses: out of its bounds or off its step grid. Missing values are not outside."""
    col, _ = _numeric_column(param, values)
    bad, off = _off_space(param, col, ~np.isnan(col))
    return bad | off


def _numeric_column(param: Float | Int, values: Any) -> tuple[NDArray[np.float64], Any]:
    """``values`` as floats, NaN where missing, and the values as given (what messages
    quote); an error naming the first that is not a number."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        raw: Any = values  # a numeric DataFrame column: NaN already marks missing values
    else:
        # is_missing of a number, inline (10,000 x 30 cells: 0.046 s by calls, 0.009 s so); a NaN
        # float is NaN already
        raw = [math.nan if v is MISSING or v is None else v for v in values]
    try:
        col = np.array(raw, dtype=np.float64)
    except (TypeError, ValueError):
        col = np.empty(len(raw))
        for i, v in enumerate(raw):
            try:
                col[i] = float(v)
            except (TypeError, ValueError):
                raise InvalidDataError(
                    f"Parameter {param.name!r} of configuration {i} must be a number. "
                    f"Got {_given(v)!r} instead.",
                    name=param.name,
                    row=i,
                ) from None
    return col, raw


def _given(value: Any) -> Any:
    """A value as the user wrote it, for an error: a NumPy scalar read from a DataFrame's
    column is shown as the number it holds (``5.0``, not ``np.float64(5.0)``)."""
    if isinstance(value, np.floating):  # float32's 1.3 as 1.3, not 1.2999999523162842
        return float(str(value))
    return value.item() if isinstance(value, np.generic) else value


def _encode_numeric(param: Float | Int, values: Any) -> NDArray[np.float64]:
    col, raw = _numeric_column(param, values)
    present = ~np.isnan(col)
    bad, off = _off_space(param, col, present)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidDataError(
            f"Parameter {param.name!r} of configuration {i} is {_given(raw[i])!r}, outside "
            f"[{param.low}, {param.high}] ({int(bad.sum())} value(s) out of bounds in all). "
            "Widen the search space or drop those trials.",
            name=param.name,
            row=i,
        )
    np.clip(col, param.low, param.high, out=col, where=present)
    if off.any():
        i = int(np.flatnonzero(off)[0])
        step = param.step
        kind = "an integer" if isinstance(param, Int) and step == 1 else f"on the grid {param.low} + k*{step}"
        raise InvalidDataError(
            f"Parameter {param.name!r} of configuration {i} must be {kind}. "
            f"Got {_given(raw[i])!r} instead.",
            name=param.name,
            row=i,
        )
    if param.log:
        with np.errstate(invalid="ignore"):
            col = log_encode(col)
    return col


def _encode_categorical(param: Categorical, values: list[Any]) -> NDArray[np.float64]:
    col = np.empty(len(values))
    for i, v in enumerate(values):
        if is_missing(param, v):  # None is a choice where the categorical lists it
            col[i] = math.nan
            continue
        try:
            col[i] = param.index_of(v)
        except KeyError:
            raise InvalidDataError(
                f"Parameter {param.name!r} of configuration {i} is {_given(v)!r}, which is not one "
                f"of its choices {list(param.choices)!r}.",
                name=param.name,
                row=i,
            ) from None
    return col


def encode_configs(space: EncodableSpace, configs: Any) -> NDArray[np.float64]:
    """Encode configurations (see :meth:`SearchSpace.encode`)."""
    n, cols, empty = _columns(space, configs)
    X = np.empty((n, len(space)))
    for j, param in enumerate(space.params):
        if isinstance(param, Categorical):
            X[:, j] = _encode_categorical(param, cols[param.name])
        else:
            X[:, j] = _encode_numeric(param, cols[param.name])
    if empty:  # (a parameter's activity reads its parents only)
        active = active_mask(space, X) if space.conditional_names else None
        for name, mask in empty.items():
            j = space.index(name)
            param = space.params[j]
            assert isinstance(param, Categorical)
            where = mask if active is None else mask & active[:, j]
            X[where, j] = float(param.index_of(None))
    if space.conditional_names:
        _apply_conditions(space, X)
    return X


def _apply_conditions(space: EncodableSpace, X: NDArray[np.float64]) -> None:
    """Check present/missing values against the conditions; blank inactive values."""
    active = active_mask(space, X)
    present = ~np.isnan(X)
    missing_active = active & ~present
    for j in np.flatnonzero(missing_active.any(axis=0)):
        name = space.names[j]
        if name in space.conditional_names:
            i = int(np.flatnonzero(missing_active[:, j])[0])
            raise InvalidDataError(
                f"Configuration {i} has no value for {name!r}, although its conditions make it "
                "active there. Give the value, or fix the space's conditions.",
                name=name,
                row=i,
            )
    ignored = present & ~active
    if ignored.any():
        counts = {space.names[j]: int(c) for j, c in enumerate(ignored.sum(axis=0)) if c}
        warn(
            f"{int(ignored.sum())} value(s) were given for parameters that are inactive under "
            f"the space's conditions and are treated as inactive: {counts}.",
            HPInsightWarning,
            stacklevel=None,  # the user's line, however it was reached
        )
        X[ignored] = math.nan


def _condition_holds(
    space: EncodableSpace, cond: Condition | AnyOf, X: NDArray[np.float64], active: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    if isinstance(cond, AnyOf):
        out = np.zeros(X.shape[0], dtype=bool)
        for part in cond.conditions:
            out |= _condition_holds(space, part, X, active)
        return out
    p = space.index(cond.parent)
    parent = space.params[p]
    col = X[:, p]
    holds = active[:, p] & ~np.isnan(col)
    if cond.values is not None:
        targets = np.array([encode_value(parent, v) for v in cond.values])
        if isinstance(parent, Float) and parent.step is not None:
            # on a step grid by the step: 0.1 * 3, as sampling and decoding give it, and
            # 0.3, as a condition lists it, are one value (compared as numbers, the child
            # was inactive at every trial the space's own sampler drew there)
            col, targets = (np.round((a - parent.low) / parent.step) for a in (col, targets))
        return holds & np.isin(col, targets)
    assert not isinstance(parent, Categorical)
    with np.errstate(invalid="ignore"):
        if cond.gt is not None:
            holds &= col > _encode_bound(parent, cond.gt)
        if cond.lt is not None:
            holds &= col < _encode_bound(parent, cond.lt)
    return holds


def _encode_bound(param: Float | Int, bound: float) -> float:
    if not param.log:
        return float(bound)
    return float(log_encode(bound)) if bound > 0 else -math.inf


def active_mask(space: EncodableSpace, X: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Structural activity of every entry of an encoded matrix under the conditions."""
    if X.ndim != 2 or X.shape[1] != len(space):
        raise InvalidDataError(
            f"The encoded matrix must have shape (n, {len(space)}). Got {X.shape} instead."
        )
    active = np.ones(X.shape, dtype=bool)
    for j in space.columns_parents_first:
        name = space.names[j]
        for cond in space.conditions_of(name):
            active[:, j] &= _condition_holds(space, cond, X, active)
    return active


# --------------------------------------------------------------------------------------
# matrix -> configs, sampling
def snap(param: Parameter, col: NDArray[np.float64]) -> NDArray[np.float64]:
    """Round encoded values to the nearest valid encoded value (NaN stays NaN)."""
    if isinstance(param, Categorical):
        return np.clip(np.round(col), 0, len(param.choices) - 1)
    if isinstance(param, Float) and param.step is None:
        lo, hi = encoded_bounds(param, 0.0)
        return np.clip(col, lo, hi)
    step = float(param.step or 1)
    values = np.exp(col) if param.log else col
    k: NDArray[np.float64] = step_index(param.low, step, values, "nearest")
    values = np.clip(param.low + step * k, param.low, param.high)
    return log_encode(values) if param.log else values


def _exp_exact(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``exp(x)``, moved by an ulp or two where needed so that :func:`log_encode` gives
    ``x`` back: decoding then encoding a log parameter is the identity, which keeps
    values on the right side of ``gt``/``lt`` condition bounds."""
    v = np.exp(x)
    with np.errstate(invalid="ignore"):
        for _ in range(4):
            back = log_encode(v)
            low, high = back < x, back > x
            if not (low.any() or high.any()):
                break
            v = np.where(low, np.nextafter(v, np.inf), np.where(high, np.nextafter(v, 0.0), v))
    return v


def decode_matrix(space: EncodableSpace, X: Any) -> list[dict[str, Any]]:
    """Decode an encoded matrix (see :meth:`SearchSpace.decode`)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != len(space):
        raise InvalidDataError(
            f"decode expects an array of shape (n, {len(space)}). Got {X.shape} instead."
        )
    columns: list[list[Any]] = []
    for j, param in enumerate(space.params):
        col = snap(param, X[:, j])
        present = ~np.isnan(col)
        if isinstance(param, Categorical):
            idx = np.where(present, col, 0).astype(np.intp)
            values: list[Any] = [param.choices[k] for k in idx.tolist()]
        else:
            native = _exp_exact(col) if param.log and not isinstance(param, Int) else (
                np.exp(col) if param.log else col)
            if isinstance(param, Int):
                native = np.round(np.where(present, native, 0))
                values = [int(v) for v in native.tolist()]
            else:
                values = np.clip(native, param.low, param.high).tolist()
        columns.append([v if ok else MISSING for v, ok in zip(values, present.tolist(), strict=True)])
    names = space.names
    return [
        {name: v for name, v in zip(names, row, strict=True) if v is not MISSING}
        for row in zip(*columns, strict=True)
    ] if columns else []


def sample_encoded(space: EncodableSpace, n: int, *, seed: int | None = None) -> NDArray[np.float64]:
    """Draw ``n`` encoded configurations from the space's measure, inactive entries NaN."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise InvalidDataError(f"The 'n' parameter of sample must be an int >= 0. Got {n!r} instead.")
    rng = np.random.default_rng(seed)
    X = np.empty((int(n), len(space)))
    for j, param in enumerate(space.params):
        X[:, j] = snap(param, measure_of(param).sample(rng, int(n)))
    if space.conditional_names:
        X[~active_mask(space, X)] = math.nan
    return X
