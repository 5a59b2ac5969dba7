"""Data in: optimizer and ConfigSpace objects -> hpinsight search spaces and histories.

One door per source (:mod:`._doors`): :func:`from_optuna` and :func:`from_smac` read trials
into a :class:`~hpinsight.TrialHistory`; :func:`from_configspace`, :func:`to_configspace`
and :func:`space_from_optuna` convert search spaces. Every analysis also takes an Optuna
study where it takes a history (:func:`as_history`). Each adapter imports its optimizer
lazily and uses public APIs only.
"""

from ._doors import (
    as_history,
    from_configspace,
    from_optuna,
    from_smac,
    space_from_optuna,
    to_configspace,
)

__all__ = ["as_history", "from_configspace", "from_optuna", "from_smac", "space_from_optuna",
           "to_configspace"]
