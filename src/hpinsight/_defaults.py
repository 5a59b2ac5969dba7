"""Default values from data: the most frequent setting among the best configurations.

Weerts (2018), Sec. 3.2.1. Per study (a dataset, in the paper), take the ``top_n``
configurations with the best objective values; pool them over studies; per
parameter, the default is the setting that occurs most often in the pool:

* categoricals (and booleans): the mode;
* numeric parameters with at most ``max_levels`` values (integers, on a linear or a
  log scale, and floats on a step grid): the mode (the paper discretizes only "large"
  integer domains, more than 50 values);
* other numeric parameters: a histogram with Freedman–Diaconis bins (Eq. 3,
  ``b = 2 IQR / N^(1/3)``, as many as the range of the pooled values needs, at most
  1,000; numpy's ``bins="fd"``) on the parameter's own scale (the logarithm for log parameters), and the centre
  of the fullest bin (the geometric centre for log parameters), moved to the nearest
  value the parameter can take (its step; integers).

With several studies, each study's default is computed *leave-one-out*, from the
other studies' top configurations only, so an experiment that evaluates the default on
a study never uses that study's own best settings (Sec. 3.2.1).

Ties (two levels or bins equally full) go to the first: the first choice in the
parameter's own order, the smallest integer, the lowest bin. When the interquartile
range is zero (at least half the values are one value) the most frequent value is
the default. A configuration in which a parameter is inactive (absent from it, as
:meth:`SearchSpace.encode` reads it) does not vote for it; ``None`` is a vote like any
other setting when it is one of a categorical's choices (scikit-learn's
``class_weight=None``), so it can be the default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ._history import TrialHistory
from ._optional import import_optional
from ._shared import REPR_WIDTH, fmt_value, join_items, json_value
from ._validation import check_int, moved_keywords
from .adapters import as_history
from .exceptions import InvalidArgumentTypeError, InvalidDataError, UnknownNameError
from .space import MISSING, Categorical, Float, Int, is_missing, log_encode, snap

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .space import Parameter

__all__ = ["DefaultValues", "default_values", "most_frequent_setting"]

_FUNC = "default_values"
#: Freedman-Diaconis asks for range / width bins; when the best values cluster tightly
#: (a converged optimizer) that can be billions. Beyond this many, wider bins are used.
_MAX_BINS = 1000


@dataclass(frozen=True, slots=True)
class DefaultValues:
    """Data-driven defaults (see :func:`default_values`).

    There is no ``plot``: the defaults are values of different kinds and scales, and
    the figure that shows where one lies is its parameter's marginal with the default
    marked (``plot_marginal(result, name, marks={"default": value})``).
    :meth:`to_frame` lists parameter, default and support.

    Attributes
    ----------
    values : dict of str to value
        The default of each parameter, from the best configurations of *all* studies
        (``None`` where that categorical choice is the most frequent). A parameter that
        was inactive in every one of them is missing.
    per_study : dict of key to dict of str to value
        With two or more studies: each study's leave-one-out defaults, computed
        without that study. Empty for a single study.
    support : dict of str to float
        Fraction of the pooled top configurations (where the parameter was active)
        that fall on the default's level or bin: how dominant it is.
    n_configs : dict of str to int
        Pooled top configurations in which the parameter was active.
    top_n : int
    n_studies : int

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Categorical("kernel", ["rbf", "linear"]),
    ...                         hp.Int("depth", 1, 10)])
    >>> configs = [{"kernel": "rbf", "depth": 3}, {"kernel": "rbf", "depth": 3},
    ...            {"kernel": "linear", "depth": 7}]
    >>> defaults = hp.default_values(hp.TrialHistory(space, configs, [0.1, 0.2, 0.9]), top_n=3)
    >>> defaults
    DefaultValues(n_studies=1, top_n=3, kernel='rbf' (67%), depth=3 (67%))
    >>> defaults.to_frame()[["param", "default"]].values.tolist()
    [['kernel', 'rbf'], ['depth', 3]]
    """

    values: dict[str, Any]
    per_study: dict[Any, dict[str, Any]]
    support: dict[str, float]
    n_configs: dict[str, int]
    top_n: int
    n_studies: int

    def for_study(self, key: Any) -> dict[str, Any]:
        """The defaults to use when evaluating on study ``key``: leave-one-out if available."""
        if not self.per_study:
            return dict(self.values)
        if key not in self.per_study:
            raise UnknownNameError(f"No study {key!r}; the studies are {list(self.per_study)!r}.")
        return dict(self.per_study[key])

    def __repr__(self) -> str:
        head = f"DefaultValues(n_studies={self.n_studies}, top_n={self.top_n}, "
        shown = [(k, f"={fmt_value(v, quote=True)} ({self.support.get(k, math.nan):.0%})")
                 for k, v in self.values.items()]
        body = join_items(shown, REPR_WIDTH - len(head) - 1) if shown else "no defaults"
        return f"{head}{body})"

    def to_frame(self) -> Any:
        """One row per parameter with a default.

        Returns
        -------
        pandas.DataFrame
            Columns ``param``, ``default`` (native values), ``support`` (share of
            the pooled top configurations on the default's level or bin) and
            ``n_configs``. Leave-one-out defaults are in :attr:`per_study`.
        """
        pd = import_optional("pandas", "DefaultValues.to_frame")
        rows = [{"param": k, "default": v, "support": self.support.get(k, math.nan),
                 "n_configs": self.n_configs.get(k, 0)} for k, v in self.values.items()]
        return pd.DataFrame(rows, columns=["param", "default", "support", "n_configs"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation."""
        return {
            "values": {k: json_value(v) for k, v in self.values.items()},
            "per_study": {
                str(s): {k: json_value(v) for k, v in d.items()} for s, d in self.per_study.items()
            },
            "support": {k: json_value(v) for k, v in self.support.items()},
            "n_configs": dict(self.n_configs),
            "top_n": self.top_n,
            "n_studies": self.n_studies,
        }


@moved_keywords({"studies": "history=... (the first argument)"})
def default_values(
    history: TrialHistory | Any | Sequence[Any] | Mapping[Any, Any],
    *,
    top_n: int = 10,
    max_levels: int = 50,
) -> DefaultValues:
    """Defaults from the best configurations of one or several studies (Weerts 2018).

    Parameters
    ----------
    history : TrialHistory or optuna.Study, or a sequence or mapping of them
        One history (or study) per data set. All must share the parameter names of the
        first history's search space. A mapping's keys name the studies in
        ``per_study``; a sequence's positions do.
    top_n : int, default=10
        Best configurations taken from each study (the paper's n = 10).
    max_levels : int, default=50
        Numeric parameters with at most this many values (integers, floats on a step
        grid) are treated as discrete (mode); larger ones are binned.

    Returns
    -------
    DefaultValues

    Raises
    ------
    InvalidDataError
        No study, an empty study, or studies over different parameters.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Categorical("kernel", ["rbf", "linear"]),
    ...                         hp.Int("depth", 1, 10)])
    >>> configs = [{"kernel": "rbf", "depth": 3}, {"kernel": "rbf", "depth": 3},
    ...            {"kernel": "linear", "depth": 7}]
    >>> history = hp.TrialHistory(space, configs, [0.1, 0.2, 0.9])
    >>> hp.default_values(history, top_n=2).values
    {'kernel': 'rbf', 'depth': 3}
    """
    top_n = check_int(top_n, "top_n", _FUNC, minimum=1)
    max_levels = check_int(max_levels, "max_levels", _FUNC, minimum=2)
    keys, histories = _as_studies(history)
    space = histories[0].space
    tops = [_top_configs(h, top_n) for h in histories]

    def pooled_defaults(
        groups: list[tuple[Mapping[str, Any], ...]],
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, int]]:
        values: dict[str, Any] = {}
        support: dict[str, float] = {}
        counts: dict[str, int] = {}
        for param in space.params:
            # inactive means absent (or None/NaN where that is not a choice), as in encoding
            column = [c[param.name] for g in groups for c in g
                      if not is_missing(param, c.get(param.name, MISSING))]
            if not column:
                continue
            values[param.name], support[param.name] = most_frequent_setting(
                param, column, max_levels=max_levels
            )
            counts[param.name] = len(column)
        return values, support, counts

    values, support, counts = pooled_defaults(tops)
    per_study: dict[Any, dict[str, Any]] = {}
    if len(histories) > 1:
        for i, key in enumerate(keys):
            per_study[key] = pooled_defaults(tops[:i] + tops[i + 1 :])[0]
    return DefaultValues(values=values, per_study=per_study, support=support, n_configs=counts,
                         top_n=top_n, n_studies=len(histories))


def most_frequent_setting(
    param: Parameter, values: Sequence[Any], *, max_levels: int = 50
) -> tuple[Any, float]:
    """The most frequent level or Freedman–Diaconis bin centre of ``values``, and its share.

    Parameters
    ----------
    param : Float, Int or Categorical
    values : sequence
        Native values of ``param`` (at least one).
    max_levels : int, default=50
        Numeric parameters with at most this many values (integers, floats on a step
        grid) take the mode.

    Returns
    -------
    value
        A valid value of ``param`` (see the module docstring for the rules).
    share : float
        Fraction of ``values`` on that level or in that bin.
    """
    n = len(values)
    if n == 0:
        raise InvalidDataError(f"No values of {param.name!r} to take a default from.",
                               name=param.name)
    if isinstance(param, Categorical):
        counts = np.zeros(len(param.choices), dtype=np.intp)
        for v in values:
            counts[param.index_of(v)] += 1
        best = int(np.argmax(counts))  # first maximum: the first choice wins ties
        return param.choices[best], float(counts[best]) / n
    assert isinstance(param, Float | Int)
    x = np.asarray(values, dtype=np.float64)
    if _levels(param) <= max_levels:
        return _mode(x, integer=isinstance(param, Int))
    scaled = log_encode(x) if param.log else x
    q25, q75 = np.percentile(scaled, [25, 75])
    if q75 - q25 <= 0.0:
        return _mode(x, integer=isinstance(param, Int))
    # Eq. (3) is numpy's "fd" rule; numpy would allocate all range / width edges, so the
    # cap is checked first with numpy's own expression for the width
    width = 2.0 * float(q75 - q25) * n ** (-1.0 / 3.0)
    capped = math.ceil(float(scaled.max() - scaled.min()) / width) > _MAX_BINS
    counts, edges = np.histogram(scaled, bins=_MAX_BINS if capped else "fd")
    k = int(np.argmax(counts))
    centre = 0.5 * (edges[k] + edges[k + 1])
    # back on the parameter's grid: its own scale, its step, its bounds
    snapped = float(snap(param, np.array([centre]))[0])
    value = math.exp(snapped) if param.log else snapped
    if isinstance(param, Int):
        return round(value), float(counts[k]) / n
    return min(max(value, float(param.low)), float(param.high)), float(counts[k]) / n


def _levels(param: Float | Int) -> float:
    """How many values ``param`` can take: an integer's, a stepped float's grid, else
    infinitely many. A small domain takes the mode: a histogram of a log integer of four
    values or a float on a grid of six (the best five at 1 or 4, at 0.0 or 0.5) had one
    bin, whose centre, 2 and 0.2, no best configuration had."""
    return float(param.n_values)


def _mode(x: NDArray[np.float64], *, integer: bool) -> tuple[Any, float]:
    levels, counts = np.unique(x, return_counts=True)  # sorted: the smallest wins ties
    k = int(np.argmax(counts))
    value = round(float(levels[k])) if integer else float(levels[k])
    return value, float(counts[k]) / x.size


def _as_studies(studies: Any, func: str = _FUNC, *,
                same_params: bool = True) -> tuple[list[Any], list[TrialHistory]]:
    """One key and one history per study: a mapping's keys, else positions. With
    ``same_params`` every study must have the first one's parameter names. Shared with
    :func:`hpinsight.importance_across_studies` (``func`` names the caller)."""
    if isinstance(studies, TrialHistory) or type(studies).__module__.startswith("optuna"):
        keys, given = [0], [studies]
    elif isinstance(studies, Mapping):
        keys, given = list(studies), list(studies.values())
    elif isinstance(studies, Sequence) and not isinstance(studies, str | bytes):
        keys, given = list(range(len(studies))), list(studies)
    else:
        raise InvalidArgumentTypeError(
            f"{func} needs a TrialHistory, or a list or dict of them (one per study); got "
            f"{type(studies).__name__}. Build one with hp.adapters.from_optuna(study)."
        )
    if not given:
        raise InvalidDataError(f"{func} got no studies; pass at least one TrialHistory.")
    histories = []
    for key, h in zip(keys, given, strict=True):
        if not isinstance(h, TrialHistory) and not type(h).__module__.startswith("optuna"):
            raise InvalidArgumentTypeError(f"{func}: study {key!r} is a {type(h).__name__}, "
                                           "not a TrialHistory or an optuna.Study.")
        histories.append(as_history(h, func))
    for key, h in zip(keys, histories, strict=True):
        if h.n_trials == 0:
            raise InvalidDataError(f"{func}: study {key!r} has no trials.")
    names = set(histories[0].space.names)
    for key, h in zip(keys, histories, strict=True):
        if same_params and set(h.space.names) != names:
            raise InvalidDataError(
                f"{func}: study {key!r} has parameters {sorted(h.space.names)!r}, the first "
                f"study {sorted(names)!r}; defaults pool studies over the same parameters."
            )
        # the same parameters over the same values: a value of one study's range snapped
        # into the first one's was a default no study's best trials had
        for name in h.space.names if same_params else ():
            ours, first = h.space[name], histories[0].space[name]
            if replace(ours, default=None) != replace(first, default=None):
                raise InvalidDataError(
                    f"{func}: parameter {name!r} of study {key!r} is {ours!r}, that of the "
                    f"first study {keys[0]!r} {first!r}; defaults pool studies over the same "
                    "search space. Give every study the same range and choices for it (the "
                    "union of theirs).", name=name)
    return keys, histories


def _top_configs(history: TrialHistory, top_n: int) -> tuple[Mapping[str, Any], ...]:
    return tuple(history.configs[int(i)] for i in history.best_indices(top_n))
