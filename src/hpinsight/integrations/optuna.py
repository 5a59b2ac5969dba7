"""Optuna integration: an importance evaluator, a live importance callback and shrinking.

Importing this module imports Optuna (install with ``pip install "hpinsight[optuna]"``);
``import hpinsight`` alone does not.

* :class:`FanovaImportanceEvaluator` -- for ``optuna.importance.get_param_importances``
  and ``optuna.visualization.plot_param_importances``;
* :class:`ImportanceCallback` -- live importances during ``study.optimize``;
* :class:`ShrinkingSampler` -- follows the study's restriction (fixed parameters),
  set by the callback's ``shrink_to`` or by hand with :func:`restrict` / :func:`release`;

The tuning-risk experiment of Weerts (2018), which runs Optuna studies to produce data,
lives in :mod:`hpinsight.experiments`.

Examples
--------
>>> from hpinsight.integrations.optuna import FanovaImportanceEvaluator, ImportanceCallback
"""

from __future__ import annotations

from .._optional import import_optional

import_optional("optuna", "hpinsight.integrations.optuna")

from ._live import ImportanceSnapshot  # noqa: E402
from ._optuna_callback import ImportanceCallback  # noqa: E402
from ._optuna_evaluator import FanovaImportanceEvaluator  # noqa: E402
from ._optuna_live import SUMMARY_KEY  # noqa: E402
from ._optuna_shrink import (  # noqa: E402
    DECISIONS_KEY,
    RESTRICTION_KEY,
    ShrinkingSampler,
    read_ranges,
    read_restriction,
    release,
    restrict,
)

__all__ = [
    "DECISIONS_KEY",
    "RESTRICTION_KEY",
    "SUMMARY_KEY",
    "FanovaImportanceEvaluator",
    "ImportanceCallback",
    "ImportanceSnapshot",
    "ShrinkingSampler",
    "read_ranges",
    "read_restriction",
    "release",
    "restrict",
]
