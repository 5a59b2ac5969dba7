"""The search space, free of any optimizer: parameters and their activity conditions
(``_params``), :class:`SearchSpace` (``_space``), the encoding between native values and
the float matrix every model sees, with each parameter's measure (``_encoding``), and
narrowing a space to a region (``_narrowing``).

Dependency direction inside: ``_params`` <- ``_encoding`` <- ``_space`` <- ``_narrowing``.
The encoding reads a space through the :class:`~._encoding.EncodableSpace` protocol, so it
needs no import of ``SearchSpace``. Conversions from and to optimizers' spaces are in
:mod:`hpinsight.adapters`.
"""

from ._encoding import (
    MAX_DISCRETE_VALUES,
    MISSING,
    Measure,
    active_mask,
    empty_cell,
    encode_value,
    encoded_bounds,
    is_missing,
    log_encode,
    measure_of,
    native_value,
    outside_space,
    snap,
)
from ._narrowing import active_everywhere, narrow_space, narrowed
from ._params import (
    AnyOf,
    Categorical,
    Condition,
    ConditionLike,
    Float,
    Int,
    Parameter,
    is_integral,
    is_real,
)
from ._space import SearchSpace

__all__ = [
    "MAX_DISCRETE_VALUES",
    "MISSING",
    "AnyOf",
    "Categorical",
    "Condition",
    "ConditionLike",
    "Float",
    "Int",
    "Measure",
    "Parameter",
    "SearchSpace",
    "active_everywhere",
    "active_mask",
    "empty_cell",
    "encode_value",
    "encoded_bounds",
    "is_integral",
    "is_missing",
    "is_real",
    "log_encode",
    "measure_of",
    "narrow_space",
    "narrowed",
    "native_value",
    "outside_space",
    "snap",
]
