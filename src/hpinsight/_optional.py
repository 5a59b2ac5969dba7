"""Lazy imports of optional dependencies with an install hint naming the caller."""

from __future__ import annotations

import importlib
from types import ModuleType

_EXTRA = {
    "optuna": "optuna",
    "smac": "smac",
    "ConfigSpace": "configspace",
    "pandas": "pandas",
    "matplotlib": "plot",
    "matplotlib.pyplot": "plot",
    "distributed": "dask",
    "optuna_dashboard": "dashboard",
    "plotly": "dashboard",
}


def import_optional(module: str, caller: str) -> ModuleType:
    """Import ``module`` or raise an ImportError that says how to install it.

    Parameters
    ----------
    module : str
        Module to import, e.g. ``"pandas"``.
    caller : str
        What needs it, e.g. ``"FanovaResult.to_frame"``; named in the message.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra = _EXTRA.get(module, _EXTRA.get(top, top.lower()))
        raise ImportError(
            f"{caller} needs the optional dependency {top!r}, which is not installed. "
            f'Install it with: pip install "hpinsight[{extra}]"'
        ) from exc
