"""SMAC3 integration: live importances during a run, saved runs, and SMAC's own forest.

Importing this module imports SMAC (install with ``pip install "hpinsight[smac]"``,
which pins the SMAC releases whose surrogate hpinsight can read); ``import
hpinsight`` alone does not.

* :class:`ImportanceCallback` -- a ``smac.Callback`` that refits importances in the
  background and writes them into the run's output folder;
* :func:`load_run` -- a saved SMAC output folder as a :class:`~hpinsight.TrialHistory`;
* :func:`smac_forest` -- SMAC's fitted random forest, converted for
  ``hpinsight.fanova(history, surrogate=...)`` with no refit, and :class:`SmacForest`,
  the model choice that has the callback read it at every refit;
* :func:`reduce_configspace` and :func:`shrink_and_continue` -- hold the
  unimportant parameters constant and continue the run on the rest.

Examples
--------
>>> from hpinsight.integrations.smac import ImportanceCallback, load_run, smac_forest
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

from .._optional import import_optional

import_optional("smac", "hpinsight.integrations.smac")

from .._history import TrialHistory  # noqa: E402
from ..adapters import from_configspace, from_smac  # noqa: E402
from ..adapters._smac_model import (  # noqa: E402
    SmacModelUnavailable,
    forest_from_smac_model,
    smac_model_of,
    smac_target_of,
)
from ..space import SearchSpace  # noqa: E402
from ..surrogates.forest import FittedForest  # noqa: E402
from ._smac_callback import (  # noqa: E402
    RESULT_FILE,
    SMAC_RESULT_FILE,
    ImportanceCallback,
    SmacForest,
)
from ._smac_shrink import ContinuedRun, reduce_configspace, shrink_and_continue  # noqa: E402

__all__ = [
    "RESULT_FILE",
    "SMAC_RESULT_FILE",
    "ContinuedRun",
    "ImportanceCallback",
    "SmacForest",
    "SmacModelUnavailable",
    "load_run",
    "reduce_configspace",
    "shrink_and_continue",
    "smac_forest",
]


def load_run(path: str | Path, *, objective: int | str | None = None,
             instances: Literal["auto", "mean", "model"] = "auto",
             budget: float | None = None) -> TrialHistory:
    """Read a SMAC run saved on disk (any SMAC 2.x release).

    Parameters
    ----------
    path : str or pathlib.Path
        The run's folder (``<output_directory>/<name>/<seed>``), or a parent
        that holds exactly one run.
    objective : int or str, optional
        Objective index or name of a multi-objective run.
    instances : {"auto", "mean", "model"}, default="auto"
        How runs on several instances are combined (see
        :func:`hpinsight.adapters.from_smac`).
    budget : float, optional
        Of a multi-fidelity run, the one budget to analyse (default: each
        configuration at its highest).

    Returns
    -------
    TrialHistory
        One entry per configuration; see :func:`hpinsight.adapters.from_smac`.
    """
    return from_smac(Path(path), objective=objective, instances=instances, budget=budget)


def smac_forest(facade: Any, space: SearchSpace | None = None) -> FittedForest:
    """SMAC's current random forest, in hpinsight's encoding, for ``fanova(..., surrogate=)``.

    Parameters
    ----------
    facade : SMAC facade
        After (or during) ``optimize()``, with a random-forest surrogate.
    space : SearchSpace, optional
        Default: ``hp.adapters.from_configspace(facade.scenario.configspace)``.

    Raises
    ------
    SmacModelUnavailable
        The surrogate is not a trained random forest without instance features.

    Examples
    --------
    >>> import hpinsight as hp
    >>> from hpinsight.integrations.smac import smac_forest
    >>> result = hp.fanova(hp.adapters.from_smac(facade), surrogate=smac_forest(facade))  # doctest: +SKIP
    """
    configspace = facade.scenario.configspace
    space = from_configspace(configspace) if space is None else space
    forest = forest_from_smac_model(smac_model_of(facade), space, configspace)
    return dataclasses.replace(forest, target=smac_target_of(facade))  # what the trees predict
