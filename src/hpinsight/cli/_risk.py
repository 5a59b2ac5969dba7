"""``hpinsight risk-experiment CONFIG``: the tuning-risk experiment from a TOML file.

The file names everything a script would build, in TOML (as ``pyproject.toml``): the
estimator by import path and its parameters, the space (one table per parameter, in
order, plus optional conditions), the data sets (loaders returning ``(X, y)``) and the
keywords of :func:`~hpinsight.experiments.tuning_risk_experiment` (``store=`` to resume,
``client=`` for a Dask cluster). ``hpinsight risk-experiment --help`` shows an example
file (``_FORMAT`` below).

It prints the statistics table and writes the experiment and its statistics as JSON.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import math
from pathlib import Path
from typing import Any, TextIO

from ._progress import StageLog, draws_bars

__all__ = ["add_parser"]

_logger = logging.getLogger("hpinsight.cli")

#: An example config, shown by ``--help``.
_FORMAT = """
    [estimator]
    class = "sklearn.tree.DecisionTreeClassifier"   # import path
    params = { random_state = 0 }                   # passed to the constructor

    [space.max_depth]                               # one table per parameter, in order
    type = "int"                                    # "float", "int" or "categorical"
    low = 1
    high = 12
    [space.criterion]
    type = "categorical"
    choices = ["gini", "entropy"]

    # [[conditions]]                                # optional (values, or gt / lt):
    # child = "max_depth"                           #   max_depth tuned only with gini
    # parent = "criterion"
    # values = ["gini"]

    [datasets]                                      # name = loader returning (X, y)
    iris = "sklearn.datasets.load_iris"             # called with return_X_y=True
    wine = "sklearn.datasets.load_wine"

    [experiment]                                    # keywords of tuning_risk_experiment
    n_iter = 30
    seeds = 3
    store = "risk.sqlite"                           # resume after a crash
    # client = "tcp://scheduler:8786"               # run on a Dask cluster
"""

#: [experiment] keys passed on to tuning_risk_experiment.
_KEYS = ("params", "defaults", "n_default_configs", "default_top_n", "default_folds", "n_iter",
         "outer_folds", "inner_folds", "seeds", "scoring", "n_jobs", "random_state", "client",
         "store")


class ConfigError(Exception):
    """The config file cannot be used; the message says where and why."""


def add_parser(sub: Any) -> None:
    """Register the ``risk-experiment`` subcommand."""
    p = sub.add_parser(
        "risk-experiment",
        help="run the tuning-risk experiment of Weerts (2018) described in a TOML file",
        description="Run the fixed/non-fixed tuning-risk experiment (Weerts 2018) from a TOML "
                    "config, on this machine or a Dask cluster, resumable with a store; print "
                    "the statistics, write JSON.",
        epilog="The config file:\n" + _FORMAT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("config", type=Path, help="the TOML file")
    p.add_argument("--out", type=Path, default=Path("risk-experiment.json"),
                   help="the JSON file to write (risk-experiment.json)")
    p.add_argument("--margin", type=float, default=0.01, help="non-inferiority margin (0.01)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate (0.05)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (none is drawn either when stderr is not a terminal)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run the experiment the config describes; the exit status of the command."""
    from ..exceptions import HPInsightError

    if not args.config.is_file():
        _logger.error("the config file %s does not exist.", args.config)
        return 2
    if not args.out.parent.is_dir():
        _logger.error("the folder of --out (%s) does not exist; create it first.", args.out.parent)
        return 2
    if args.out.is_dir():
        _logger.error("--out %s is a folder; name the JSON file to write, e.g. --out %s.",
                      args.out, args.out / "risk-experiment.json")
        return 2
    # checked before the experiment runs (hours, on a real config), not after it
    from .._validation import check_real

    try:
        check_real(args.margin, "margin", "hpinsight risk-experiment --margin",
                   low=-math.inf, high=math.inf)
        check_real(args.alpha, "alpha", "hpinsight risk-experiment --alpha",
                   low=0.0, high=1.0, low_open=True)
    except (HPInsightError, ValueError, TypeError) as exc:
        _logger.error("%s", exc)
        return 2
    try:
        estimator, space, datasets, options = _read(args.config)
    except ConfigError as exc:
        _logger.error("%s: %s", args.config, exc)
        return 2
    from ..experiments import tuning_risk_experiment

    # a bar on a terminal; into a log (stderr not a terminal), a line every 5 % of a stage
    progress: Any = (False if args.no_progress else True if draws_bars()
                     else StageLog(_logger))
    try:
        experiment = tuning_risk_experiment(estimator, space, datasets, progress=progress,
                                            **options)
        stats = experiment.statistics(margin=args.margin, alpha=args.alpha)
    except (HPInsightError, ValueError, TypeError) as exc:
        _logger.error("%s", exc)
        return 2
    out.write(stats.table() + "\n")
    text = json.dumps({"experiment": experiment.to_dict(), "statistics": stats.to_dict()},
                      indent=2)
    try:
        args.out.write_text(text)
    except OSError as exc:  # the results are printed above; say why the file is missing
        _logger.error("could not write %s (%s); the statistics are printed above.",
                      args.out, exc)
        return 1
    _logger.info("wrote %s", args.out)
    return 0


def _read(path: Path) -> tuple[Any, Any, dict[Any, tuple[Any, Any]], dict[str, Any]]:
    import tomllib

    from ..exceptions import HPInsightError
    from ..space import Categorical, Condition, Float, Int, SearchSpace

    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not a TOML file ({exc})") from exc
    for section in ("estimator", "space", "datasets"):
        if not isinstance(config.get(section), dict):
            raise ConfigError(f"the [{section}] table is missing (see `hpinsight "
                              "risk-experiment --help` and the format in the README)")
    est = config["estimator"]
    estimator = _called(_imported(est.get("class"), "[estimator] class"), "[estimator] params",
                        **_table(est.get("params", {}), "[estimator] params",
                                 "params = { max_depth = 3 }"))
    kinds = {"float": Float, "int": Int, "categorical": Categorical}
    params = []
    for name, spec in config["space"].items():
        spec = _table(spec, f"[space.{name}]", f'[space.{name}] with type = "float", low = 0.0, '
                      "high = 1.0")
        kind = kinds.get(str(spec.get("type")))
        if kind is None:
            raise ConfigError(f"[space.{name}] type must be one of {sorted(kinds)}; "
                              f"got {spec.get('type')!r}")
        fields = {k: v for k, v in spec.items() if k != "type"}
        params.append(_called(kind, f"[space.{name}]", name, **fields))
    given = config.get("conditions", [])
    if not isinstance(given, list):  # [conditions], one table, instead of [[conditions]]
        raise ConfigError("each condition is a table of its own: write [[conditions]] (two "
                          "brackets) above each one, not [conditions]")
    conditions = [_called(Condition, "[[conditions]]",
                          **_table(c, "[[conditions]]", 'child = "gamma", parent = "kernel", '
                                   'values = ["rbf"]'))
                  for c in given]
    try:
        space = SearchSpace(params, conditions=conditions)
    except HPInsightError as exc:
        raise ConfigError(f"[space] / [[conditions]]: {exc}") from exc
    datasets: dict[Any, tuple[Any, Any]] = {}
    for name, loader in config["datasets"].items():
        datasets[name] = _called(_imported(loader, f"[datasets] {name}"), f"[datasets] {name}",
                                 return_X_y=True)
    options = dict(_table(config.get("experiment", {}), "[experiment]", "outer_folds = 5"))
    unknown = sorted(set(options) - set(_KEYS))
    if unknown:
        raise ConfigError(f"[experiment] has unknown keys {unknown}; known: {list(_KEYS)}")
    return estimator, space, datasets, options


def _table(value: Any, where: str, example: str) -> dict[str, Any]:
    """``value`` if it is a TOML table; else the error says where and what one looks like."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table of keys and values, e.g. {example}; got "
                          f"{value!r}")
    return value


def _imported(dotted: Any, where: str) -> Any:
    if not isinstance(dotted, str) or "." not in dotted:
        raise ConfigError(f"{where} must be an import path such as "
                          f"'sklearn.datasets.load_iris'; got {dotted!r}")
    module, _, attr = dotted.replace(":", ".").rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{where}: cannot import {dotted!r} ({exc})") from exc


def _called(func: Any, where: str, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)``, with a refused argument reported as the config's fault."""
    from ..exceptions import HPInsightError

    try:
        return func(*args, **kwargs)
    except (TypeError, ValueError, HPInsightError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc
