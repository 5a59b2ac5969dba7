"""The surrogate models whose functional ANOVA is exact: the Gaussian process (``gp``) and
the random forest of the paper (``forest``), and the objects that choose between them
(:class:`GP`, :class:`Forest`, in ``_models``).
"""

from ._models import (
    GP,
    FittedSurrogate,
    Forest,
    as_surrogate,
    decompose,
    describe,
    means_only,
    predict_fixing,
    refuse_fitted,
)

__all__ = ["GP", "FittedSurrogate", "Forest", "as_surrogate", "decompose", "describe",
           "means_only", "predict_fixing", "refuse_fitted"]
