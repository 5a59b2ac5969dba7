"""Optuna integration: an importance evaluator, a live importance callback and shrinking.

Importing this module imports Optuna (install with ``pip install "hpinsight[optuna]"``);
``import hpinsight`` alone does not.

Examples
--------
>>> from hpinsight.integrations.optuna import FanovaImportanceEvaluator
"""

from __future__ import annotations

from .._optional import import_optional

import_optional("optuna", "hpinsight.integrations.optuna")

from ._optuna_evaluator import FanovaImportanceEvaluator  # noqa: E402

__all__ = ["FanovaImportanceEvaluator"]
