"""Hyperparameter importance across studies: one functional ANOVA per study, then how
the studies agree.

van Rijn & Hutter, "Hyperparameter Importance Across Datasets", KDD 2018, Sec. 3-4:
one study per data set, the functional ANOVA of each, and the distribution of each
parameter's share over the studies; Weerts (2018, Sec. 3.2.1) for defaults from the best
configurations of several studies.

Estimand. Per study ``s``, parameter ``i``'s share is its main-effect fraction
``F_i = V_i / V`` of the surrogate's prediction variance over that study's own search
space (the measure of :func:`hpinsight.fanova`: log-uniform for ``log=True``, uniform
over integer values and choices), the mean over the model's draws. Across studies,
per parameter: the median and quartiles (NumPy's linear interpolation), the
interquartile range, the mean and the sample standard deviation (``ddof=1``) of the
shares of the studies that have the parameter and a non-constant objective.

Rank agreement, over the parameters that every such study has: Kendall's coefficient of
concordance ``W`` with the correction for ties (Kendall & Babington Smith 1939; ranks
of the shares within each study, average ranks for ties), its chi-squared test
(``m (n - 1) W`` with ``n - 1`` degrees of freedom, which is Friedman's test), and the
mean Spearman correlation over all pairs of studies. Without ties the two agree:
``mean_spearman = (m W - 1) / (m - 1)`` for ``m`` studies.

Where we differ from van Rijn & Hutter: they fit random forests (``hp.Forest``); the
default model here is the Gaussian process (``hp.GP``, see :mod:`hpinsight._fanova`).
They show violin plots of the shares; we report their quartiles and rank agreement, so
that "the same parameters matter everywhere" is a number. A study without a parameter
(different search spaces) has no share for it (NaN), which is not the same as a share
of 0; the summaries use the studies that have it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._defaults import DefaultValues, _as_studies, default_values
from ._execution import progress_bar, run_jobs
from ._fanova import fanova_quietly
from ._fanova_result import FanovaResult
from ._history import TrialHistory
from ._optional import import_optional
from ._shared import REPR_WIDTH, join_items, json_array, json_value, readonly
from ._validation import check_int, check_seed
from .exceptions import (
    HPInsightError,
    InvalidArgumentTypeError,
    InvalidDataError,
)
from .space import SearchSpace
from .surrogates import GP, Forest, as_surrogate, describe, refuse_fitted

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["AcrossStudiesResult", "importance_across_studies", "kendall_w", "mean_spearman"]

_FUNC = "importance_across_studies"
#: The usable trials a study needs by default to be compared with others.
MIN_TRIALS = 10
_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class AcrossStudiesResult:
    """Each parameter's share of variance in each study, and how the studies agree (see
    :func:`importance_across_studies`).

    Attributes
    ----------
    studies : tuple of str
        The studies' names, in the order given.
    params : tuple of str
        Every parameter of any study, in order of first appearance.
    shares : ndarray of shape (n_studies, n_params)
        Main-effect share of each parameter in each study (mean over the model's draws);
        NaN where the study has no such parameter or its objective is constant (the
        :attr:`notes` say which).
    share_stds : ndarray of shape (n_studies, n_params)
        The standard deviation of each share over the model's draws (NaN as ``shares``).
    results : tuple of FanovaResult
        Each study's analysis, in the order of :attr:`studies`.
    defaults : DefaultValues or None
        Defaults from the best configurations of all studies (Weerts 2018), over the
        parameters every study has; ``defaults.per_study[name]`` is a study's
        leave-one-out default. None when they could not be computed (see :attr:`notes`).
    notes : tuple of str
        What is missing where, and why.
    seed : int or None
        The seed every study's analysis used.
    surrogate : GP or Forest
        The model fitted to each study.

    Notes
    -----
    The summaries (:attr:`median`, :attr:`quartiles`, :attr:`mean`, :attr:`std`) and the
    rank agreement (:attr:`kendall_w`, :attr:`kendall_p`, :attr:`mean_spearman`) are
    computed from :attr:`shares` when read. :meth:`to_frame` has one row per parameter;
    :meth:`plot` draws the spread of each parameter's shares over the studies.

    Examples
    --------
    >>> import numpy as np
    >>> from hpinsight.results import AcrossStudiesResult
    >>> r = AcrossStudiesResult(studies=("a", "b", "c"), params=("x", "z"),
    ...                         shares=np.array([[0.9, 0.1], [0.7, 0.3], [0.8, 0.2]]))
    >>> r.median.tolist(), float(r.kendall_w)
    ([0.8, 0.2], 1.0)
    """

    studies: tuple[str, ...]
    params: tuple[str, ...]
    shares: NDArray[np.float64]
    share_stds: NDArray[np.float64] | None = field(default=None, repr=False)
    results: tuple[FanovaResult, ...] = field(default=(), repr=False)
    defaults: DefaultValues | None = field(default=None, repr=False)
    notes: tuple[str, ...] = ()
    seed: int | None = None
    surrogate: GP | Forest | None = None

    def __post_init__(self) -> None:
        shares = np.array(self.shares, dtype=np.float64)
        if shares.shape != (len(self.studies), len(self.params)):
            raise InvalidDataError(
                f"AcrossStudiesResult: shares must have shape (n_studies, n_params) = "
                f"({len(self.studies)}, {len(self.params)}). Got {shares.shape} instead.")
        object.__setattr__(self, "shares", readonly(shares))
        stds = (np.full_like(shares, np.nan) if self.share_stds is None
                else np.array(self.share_stds, dtype=np.float64))
        object.__setattr__(self, "share_stds", readonly(stds))

    # -- per parameter, over the studies ---------------------------------------------------
    @property
    def n_studies(self) -> int:
        """Number of studies."""
        return len(self.studies)

    @property
    def n_present(self) -> NDArray[np.intp]:
        """Per parameter, the studies with a share for it, shape (n_params,)."""
        return readonly(np.isfinite(self.shares).sum(axis=0))

    def _over_studies(self, stat: Callable[[NDArray[np.float64]], float],
                      least: int = 1) -> NDArray[np.float64]:
        out = np.full(len(self.params), np.nan)
        for j in range(len(self.params)):
            column = self.shares[:, j]
            column = column[np.isfinite(column)]
            if column.size >= least:
                out[j] = stat(column)
        return readonly(out)

    @property
    def median(self) -> NDArray[np.float64]:
        """Median share of each parameter over the studies, shape (n_params,)."""
        return self._over_studies(lambda c: float(np.median(c)))

    @property
    def quartiles(self) -> NDArray[np.float64]:
        """First and third quartile of each parameter's shares, shape (n_params, 2)."""
        q25 = self._over_studies(lambda c: float(np.percentile(c, 25)))
        q75 = self._over_studies(lambda c: float(np.percentile(c, 75)))
        return readonly(np.column_stack([q25, q75]))

    @property
    def iqr(self) -> NDArray[np.float64]:
        """Interquartile range of each parameter's shares, shape (n_params,)."""
        q = self.quartiles
        return readonly(q[:, 1] - q[:, 0])

    @property
    def mean(self) -> NDArray[np.float64]:
        """Mean share of each parameter over the studies, shape (n_params,)."""
        return self._over_studies(lambda c: float(c.mean()))

    @property
    def std(self) -> NDArray[np.float64]:
        """Sample standard deviation (``ddof=1``) of each parameter's shares over the
        studies, shape (n_params,); NaN with fewer than two studies."""
        return self._over_studies(lambda c: float(c.std(ddof=1)), least=2)

    def ranking(self) -> tuple[str, ...]:
        """The parameters by median share, largest first (ties by name; no share last)."""
        med = self.median
        keyed = [(-m if math.isfinite(m) else math.inf, name)
                 for m, name in zip(med.tolist(), self.params, strict=True)]
        return tuple(name for _, name in sorted(keyed))

    # -- rank agreement ----------------------------------------------------------------------
    @property
    def rank_studies(self) -> tuple[str, ...]:
        """The studies the rank agreement is computed over: those with shares (a constant
        objective has none)."""
        rows = np.flatnonzero(~np.isnan(self.shares).all(axis=1))
        return tuple(self.studies[int(i)] for i in rows)

    @property
    def rank_params(self) -> tuple[str, ...]:
        """The parameters the rank agreement is computed over: those with a share in every
        study of :attr:`rank_studies`."""
        rows = ~np.isnan(self.shares).all(axis=1)
        if not rows.any():
            return ()
        cols = np.flatnonzero(np.isfinite(self.shares[rows]).all(axis=0))
        return tuple(self.params[int(j)] for j in cols)

    def _rank_matrix(self) -> NDArray[np.float64]:
        rows = [self.studies.index(s) for s in self.rank_studies]
        cols = [self.params.index(p) for p in self.rank_params]
        return self.shares[np.ix_(rows, cols)]

    @property
    def kendall_w(self) -> float:
        """Kendall's W of the studies' rankings of :attr:`rank_params` (tie-corrected): 1
        when every study ranks them alike, 0 when there is no agreement; NaN with fewer
        than two studies or parameters."""
        return kendall_w(self._rank_matrix())[0]

    @property
    def kendall_p(self) -> float:
        """p-value of the chi-squared test of W (Friedman's test): small when the studies
        agree more than unrelated rankings would."""
        return kendall_w(self._rank_matrix())[1]

    @property
    def mean_spearman(self) -> float:
        """Mean Spearman correlation of the shares of :attr:`rank_params` over all pairs of
        :attr:`rank_studies` (pairs where a study ranks every parameter alike are left out)."""
        return mean_spearman(self._rank_matrix())

    # -- export ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        med = dict(zip(self.params, self.median.tolist(), strict=True))
        tops = [(n, f"={med[n]:.3f}") for n in self.ranking()[:3]]
        w = self.kendall_w
        head = (f"AcrossStudiesResult(n_studies={self.n_studies}, n_params={len(self.params)}, "
                f"kendall_w={w:.3f}, median=[" if math.isfinite(w) else
                f"AcrossStudiesResult(n_studies={self.n_studies}, n_params={len(self.params)}, "
                "kendall_w=nan, median=[")
        return f"{head}{join_items(tops, REPR_WIDTH - len(head) - 2)}])"

    def summary(self) -> list[dict[str, Any]]:
        """One dict per parameter, by :meth:`ranking`: ``param``, ``median``, ``q25``,
        ``q75``, ``iqr``, ``mean``, ``std`` and ``n_studies`` (studies with a share)."""
        med, q, mean, std, n = self.median, self.quartiles, self.mean, self.std, self.n_present
        rows = {p: {"param": p, "median": float(med[j]), "q25": float(q[j, 0]),
                    "q75": float(q[j, 1]), "iqr": float(q[j, 1] - q[j, 0]),
                    "mean": float(mean[j]), "std": float(std[j]), "n_studies": int(n[j])}
                for j, p in enumerate(self.params)}
        return [rows[p] for p in self.ranking()]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the shares per study, the summary per parameter, the rank agreement,
        the defaults, each study's analysis, and what was done."""
        return {
            "studies": list(self.studies),
            "params": list(self.params),
            "shares": json_array(self.shares),
            "share_stds": json_array(self.share_stds),
            "summary": [{k: json_value(v) for k, v in row.items()} for row in self.summary()],
            "rank_agreement": {
                "kendall_w": json_value(self.kendall_w),
                "p_value": json_value(self.kendall_p),
                "mean_spearman": json_value(self.mean_spearman),
                "params": list(self.rank_params),
                "studies": list(self.rank_studies),
            },
            "defaults": None if self.defaults is None else self.defaults.to_dict(),
            "per_study": {s: r.to_dict() for s, r in zip(self.studies, self.results,
                                                          strict=False)},
            "notes": list(self.notes),
            "seed": self.seed,
            "surrogate": None if self.surrogate is None else describe(self.surrogate),
        }

    def to_frame(self) -> Any:
        """``pandas.DataFrame`` with one row per parameter, by :meth:`ranking`: the columns
        of :meth:`summary`. The shares per study are :attr:`shares`."""
        pd = import_optional("pandas", "AcrossStudiesResult.to_frame")
        columns = ["param", "median", "q25", "q75", "iqr", "mean", "std", "n_studies"]
        return pd.DataFrame(self.summary(), columns=columns)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Each parameter's shares over the studies: a box per parameter, the studies as
        points; see :func:`hpinsight.plotting.plot_importance_across`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            ``top``, passed on.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plotting import plot_importance_across

        return plot_importance_across(self, ax=ax, **kwargs)


def kendall_w(shares: NDArray[np.float64]) -> tuple[float, float]:
    """Kendall's coefficient of concordance of the rows' rankings of the columns, and the
    p-value of its chi-squared test.

    Parameters
    ----------
    shares : ndarray of shape (m, n)
        One row per study (a "judge"), one column per parameter; larger ranks higher.
        Finite values.

    Returns
    -------
    w : float
        ``12 S / (m^2 (n^3 - n) - m T)``: ``S`` the sum of squared deviations of the
        columns' rank sums from their mean, ``T`` the sum over rows and groups of tied
        values of ``t^3 - t``. NaN for fewer than two rows or columns, or when every row
        ties every column.
    p_value : float
        Of ``m (n - 1) W`` under chi-squared with ``n - 1`` degrees of freedom.
    """
    from scipy import stats

    x = np.asarray(shares, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        return math.nan, math.nan
    m, n = x.shape
    ranks = np.vstack([stats.rankdata(row) for row in x])
    totals = ranks.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    ties = 0.0
    for row in x:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    denominator = m**2 * (n**3 - n) - m * ties
    if denominator <= 0:
        return math.nan, math.nan
    w = 12.0 * s / denominator
    return w, float(stats.chi2.sf(m * (n - 1) * w, n - 1))


def mean_spearman(shares: NDArray[np.float64]) -> float:
    """Mean Spearman correlation over all pairs of rows of ``shares`` (m, n); pairs with a
    row whose values are all equal are left out. NaN when no pair is left."""
    from scipy import stats

    x = np.asarray(shares, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        return math.nan
    ranks = np.vstack([stats.rankdata(row) for row in x])
    centred = ranks - ranks.mean(axis=1, keepdims=True)
    norms = np.sqrt((centred**2).sum(axis=1))
    values = [float(centred[a] @ centred[b] / (norms[a] * norms[b]))
              for a in range(len(x)) for b in range(a + 1, len(x))
              if norms[a] > 0 and norms[b] > 0]
    return float(np.mean(values)) if values else math.nan


def importance_across_studies(
    history: Sequence[Any] | Mapping[Any, Any],
    *,
    surrogate: GP | Forest | None = None,
    seed: int | None = 0,
    min_trials: int = MIN_TRIALS,
    top_n: int = 10,
    client: Any = None,
    n_jobs: int | None = None,
    progress: bool | Callable[[str, int, int], None] = True,
) -> AcrossStudiesResult:
    """Functional ANOVA of each of several studies, each parameter's share across them,
    how the studies agree, and the defaults that hold across them.

    See the module docstring (:mod:`hpinsight._across`) for what is computed: van Rijn &
    Hutter (2018) for the shares per study, Kendall's W for their agreement, Weerts
    (2018) for the defaults.

    Parameters
    ----------
    history : sequence or mapping of TrialHistory or optuna.Study
        Two or more studies, one per data set (or task). A mapping's keys name the
        studies; in a sequence, an Optuna study is named by its ``study_name`` and a
        history by its position (``"study 0"``). SMAC runs come in through
        ``hp.adapters.from_smac(path)``. The studies may differ in their parameters: a
        study without a parameter has no share for it (NaN), and the defaults and the
        rank agreement use the parameters the studies share.
    surrogate : GP or Forest, default=GP()
        The model fitted to each study (see :func:`hpinsight.fanova`).
    seed : int, optional, default=0
        The seed of every study's analysis: the same seed gives the same result, on
        this machine or on a cluster.
    min_trials : int, default=10
        Fewest usable trials a study must have.
    top_n : int, default=10
        Best configurations of each study that vote for the defaults
        (:func:`hpinsight.default_values`).
    client : dask.distributed.Client or str, optional
        Analyse the studies on this Dask cluster (a client, or a scheduler address such
        as ``"tcp://10.0.0.5:8786"``) instead of on this machine; ``n_jobs`` is then not
        used. The result is identical.
    n_jobs : int, optional
        Studies analysed in parallel on this machine by joblib (``-1``: all cores;
        ``None``: one).
    progress : bool or callable, default=True
        Show a progress bar on stderr (needs ``tqdm``; none without it). A callable is
        called instead as ``progress(desc, done, total)`` each time a study is done.

    Returns
    -------
    AcrossStudiesResult

    Raises
    ------
    InvalidDataError
        Fewer than two studies, a study with fewer than ``min_trials`` usable trials
        (the message names it), studies that share no parameter, or names that repeat.
    TypeError
        A study that is neither a TrialHistory nor an Optuna study, or a fitted model as
        ``surrogate``.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> studies = {}
    >>> for k in range(3):
    ...     configs = space.sample(30, seed=k)
    ...     y = [(k + 2) * c["x"] + 0.3 * c["z"] for c in configs]
    ...     studies[f"task {k}"] = hp.TrialHistory(space, configs, y)
    >>> across = hp.importance_across_studies(studies, progress=False)
    >>> across.ranking(), across.kendall_w
    (('x', 'z'), 1.0)
    >>> across.defaults.values["x"] < 0.5
    True
    """
    model = refuse_fitted(as_surrogate(surrogate, _FUNC), _FUNC, "one per study")
    seed = check_seed(seed, _FUNC)
    min_trials = check_int(min_trials, "min_trials", _FUNC, minimum=2)
    top_n = check_int(top_n, "top_n", _FUNC, minimum=1)
    n_jobs = check_int(n_jobs, "n_jobs", _FUNC, allow_none=True)
    if not (isinstance(progress, bool) or callable(progress)):
        raise InvalidArgumentTypeError(
            f"The 'progress' parameter of {_FUNC} must be True, False or a callable "
            f"progress(desc, done, total). Got {type(progress).__name__} instead.")
    if isinstance(history, TrialHistory) or type(history).__module__.startswith("optuna"):
        raise InvalidDataError(
            f"{_FUNC} got one study; it compares two or more (a list or dict of them). "
            "For one study, use hp.fanova(study).")
    names = _study_names(history)
    _, histories = _as_studies(history, _FUNC, same_params=False)
    if len(histories) < 2:
        raise InvalidDataError(
            f"{_FUNC} got {len(histories)} study; it compares two or more. For one study, "
            "use hp.fanova(study).")
    for name, h in zip(names, histories, strict=True):
        if h.n_trials < min_trials:
            left = f" ({h.excluded_summary()})" if h.n_excluded else ""
            raise InvalidDataError(
                f"{_FUNC}: study {name!r} has {h.n_trials} usable trial(s){left}; each study "
                f"needs at least min_trials={min_trials}. Run it longer, leave it out, or "
                "pass a smaller min_trials (to importance_across_studies).")
    params = list(dict.fromkeys(p for h in histories for p in h.space.names))
    shared = [p for p in params if all(p in h.space.names for h in histories)]
    if not shared:
        listed = "; ".join(f"{n!r}: {list(h.space.names)}" for n, h in zip(names, histories,
                                                                              strict=True))
        raise InvalidDataError(
            f"{_FUNC}: the studies share no parameter ({listed}), so their importances "
            "cannot be compared; pass studies of the same search space (or of overlapping "
            "ones).")

    jobs = [(h, model, seed) for h in histories]
    order = sorted(range(len(jobs)), key=lambda i: -histories[i].n_trials * len(
        histories[i].space))
    _logger.info("%s: %d studies, %d parameters", _FUNC, len(jobs), len(params))
    with progress_bar(progress, len(jobs), "fANOVA per study") as bar:
        results: list[FanovaResult] = run_jobs(
            _study_fanova, jobs, n_jobs=n_jobs, client=client, store=None,
            desc="fANOVA per study", order=order, done=lambda i: bar.update(1), caller=_FUNC)

    notes: list[str] = []
    objectives = {name: h.objective_name for name, h in zip(names, histories, strict=True)}
    if len(set(objectives.values())) > 1:
        # a study of several objectives read for its front beside one read for its value:
        # one median and one rank agreement over both, and nothing said which was which
        notes.append("The studies are compared on different values: " + "; ".join(
            f"{name!r} on {what}" for name, what in objectives.items())
            + ". Their shares are of different quantities; pass objective= (or "
            "--objective) to compare them on one.")
    for p in shared:
        declared = {name: h.space[p] for name, h in zip(names, histories, strict=True)}
        if len(set(map(repr, declared.values()))) > 1:
            # a share is of the variance over the parameter's own range: over [-5, 5] and
            # over [0, 1] they are different quantities, pooled into one median unsaid
            notes.append(f"{p!r} is declared differently across the studies ("
                         + "; ".join(f"{name!r}: {d!r}" for name, d in declared.items())
                         + "): each share is over its study's own range, so they measure "
                         "different things.")
    shares = np.full((len(names), len(params)), np.nan)
    stds = np.full_like(shares, np.nan)
    voting: list[int] = []  # the studies whose best trials say something: the defaults'
    for s, (name, r) in enumerate(zip(names, results, strict=True)):
        missing = [p for p in params if p not in r.space.names]
        if missing:
            notes.append(f"Study {name!r} has no parameter {', '.join(map(repr, missing))}: "
                         "no share there (NaN).")
        if r.is_constant:
            notes.append(f"Study {name!r}: the model's prediction is constant (a constant "
                         "objective), so it has no shares and is left out of the summaries "
                         "and the defaults (its best trials are ties).")
            continue
        if r.signal_unshown or r.signal_doubtful:
            # its shares are fractions of what may be noise: the single study's report
            # calls none of them resolved, and here they counted as any other study's
            notes.append(f"Study {name!r}: the model has not shown that it predicts its "
                         "trials (its effects are all uncertain), so its shares may be "
                         "noise; it is left out of the summaries and the defaults.")
            continue
        voting.append(s)
        for j, p in enumerate(params):
            if p in r.space.names:
                imp = r.importance(p)
                shares[s, j], stds[s, j] = imp.mean, imp.std
    keys = _study_keys(history, names)
    voters = [histories[s] for s in voting]
    common = [p for p in params if all(p in h.space.names for h in voters)]
    defaults = _defaults([keys[s] for s in voting], voters, common, params, top_n, notes)
    return AcrossStudiesResult(
        studies=tuple(names), params=tuple(params), shares=shares, share_stds=stds,
        results=tuple(results), defaults=defaults, notes=tuple(notes), seed=seed,
        surrogate=model)


def _study_fanova(history: TrialHistory, surrogate: GP | Forest,
                  seed: int | None) -> FanovaResult:
    """One study's main effects (a job: runs here or on a Dask worker). A constant
    objective is reported by the result's notes, not by a warning lost on a worker."""
    return fanova_quietly(history, surrogate=surrogate, seed=seed, max_order=1)


def _study_names(given: Any) -> list[str]:
    """The studies' names: a mapping's keys, else an Optuna study's name or the position."""
    if isinstance(given, Mapping):
        names = [str(k) for k in given]
    elif isinstance(given, Sequence) and not isinstance(given, str | bytes):
        names = [str(getattr(g, "study_name", None) or f"study {i}")
                 if type(g).__module__.startswith("optuna") else f"study {i}"
                 for i, g in enumerate(given)]
    else:
        return []  # _as_studies says what is wrong
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidDataError(
            f"{_FUNC}: several studies are named {', '.join(map(repr, repeated))}; pass a "
            "dict {name: study} with a distinct name for each.")
    return names


def _study_keys(given: Any, names: list[str]) -> list[Any]:
    """The studies' own keys where a mapping gave them (an OpenML task id stays an int,
    and ``defaults.for_study(31)`` finds it), else their names."""
    return list(given) if isinstance(given, Mapping) else list(names)


def _defaults(names: list[Any], histories: list[TrialHistory], shared: list[str],
              params: list[str], top_n: int, notes: list[str]) -> DefaultValues | None:
    """Weerts' defaults over the studies given, on the parameters they share."""
    if not histories:
        notes.append("No defaults: no study has best trials that say anything.")
        return None
    if len(shared) < len(params):
        notes.append("Defaults are over the parameters every study has: "
                     f"{', '.join(shared)}.")
        histories = [_restricted(h, shared) for h in histories]
    try:
        return default_values(dict(zip(names, histories, strict=True)), top_n=top_n)
    except HPInsightError as exc:
        notes.append(f"No defaults: {exc}")
        return None


def _restricted(history: TrialHistory, names: list[str]) -> TrialHistory:
    """``history`` over the parameters ``names`` only (their conditions dropped: a
    parameter inactive in a trial is absent from it, which is all the defaults read)."""
    space = SearchSpace([history.space[n] for n in names])
    configs = tuple({n: c[n] for n in names if n in c} for c in history.configs)
    return TrialHistory(space, configs, history.y, direction=history.direction,
                        trial_ids=history.trial_ids, objective_name=history.objective_name)
