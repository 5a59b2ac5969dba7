"""Experiment runners: studies that produce data for the analyses, rather than analyse it.

* :func:`tuning_risk_experiment` -- the fixed/non-fixed experiment of Weerts (2018): per
  data set, tune every parameter with Optuna's random search and tune all but one, so
  :func:`hpinsight.tuning_risk` gets paired risks.

Importing this module imports Optuna (``pip install "hpinsight[optuna]"``); ``import
hpinsight`` alone does not.

Examples
--------
>>> from hpinsight.experiments import tuning_risk_experiment
"""

from __future__ import annotations

from .._optional import import_optional

import_optional("optuna", "hpinsight.experiments")

from ._records import FoldRecord, RunRecord, TuningRiskExperiment  # noqa: E402
from ._tuning_risk import CONFIG_KEY, tuning_risk_experiment  # noqa: E402

__all__ = ["CONFIG_KEY", "FoldRecord", "RunRecord", "TuningRiskExperiment", "tuning_risk_experiment"]
