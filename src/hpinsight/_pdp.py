"""Partial dependence of a probabilistic surrogate, with confidence bands.

Moosbauer, Herbinger, Casalicchio, Lindauer & Bischl (NeurIPS 2021), Sec. 4.1. For
the parameters ``S`` and a Monte Carlo sample ``λ_C^(1..n)`` of the other parameters,
the surrogate's predictive mean ``m̂`` and variance ``ŝ²`` at ``(λ_S, λ_C^(i))`` give

* ICE curves: ``m̂(λ_S, λ_C^(i))`` with pointwise variances ``ŝ²(λ_S, λ_C^(i))``;
* the PD estimate, Eq. (3): ``m̂_S(λ_S) = 1/n Σ_i m̂(λ_S, λ_C^(i))``;
* its variance, Eq. (4): ``1/n² 1ᵀ K̂(λ_S) 1`` with the posterior covariance ``K̂`` of
  the n predictions (``variance="covariance"``), or Eq. (5): the mean of the
  pointwise variances ``1/n Σ_i ŝ²(λ_S, λ_C^(i))`` (``variance="pointwise"``, the
  paper's choice in its experiments).

The estimand: ``λ_C`` is drawn from the search space's own measure (log-uniform for
log parameters, uniform over integers and choices; conditional parameters are drawn
everywhere, as for fANOVA), and grids are in native units (log-spaced for log
parameters, every choice of a categorical, integers for integer parameters). The PDP
of a conditional parameter is drawn where it is active: ``λ_C`` is sampled from the
part of the space where its conditions hold (averaged in, the configurations where it
is inactive flattened its curve towards their own mean, and
:func:`~hpinsight.confidence_split` made regions where it does not exist). Where the
conditions read a parameter of ``S`` itself, the sample is the whole space's.

Surrogates:

* an hpinsight forest (a :class:`~hpinsight.results.FanovaResult`): mean and variance over
  trees. Eq. (4) is then exact and cheap: the covariance over trees of the n
  predictions summed up is the variance over trees of each tree's own PD. The
  exact, integrated marginal of the same forest (Hutter et al. 2014) is
  :meth:`FanovaResult.marginal`; the Monte Carlo PD converges to it;
* a scikit-learn ``GaussianProcessRegressor`` fitted on ``space.encode(...)``
  (Eq. 4 through ``return_cov=True``);
* any object with ``predict(X, return_std=True)`` on encoded inputs (Eq. 5 only).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._fanova_result import FanovaResult, native_grid
from ._history import TrialHistory
from ._optional import import_optional
from ._shared import REPR_WIDTH, clip_text, grid_columns, json_array, json_value, readonly
from ._validation import check_choice, check_int, check_seed, moved_keywords
from .exceptions import InvalidArgumentError, InvalidArgumentTypeError
from .space import measure_of
from .surrogates import FittedSurrogate, predict_fixing
from .surrogates.forest import why_not_a_mean_of_trees

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .space import SearchSpace

__all__ = ["PartialDependenceResult", "gaussian_nll", "partial_dependence"]

_FUNC = "partial_dependence"


class PDBand:
    """What a PD estimate with a variance offers: std, mean confidence, NLL of a known PD.

    Shared by :class:`PartialDependenceResult` and the regions of a
    :class:`~hpinsight.results.RegionsResult`; subclasses hold ``mean`` and ``variance``.
    """

    __slots__ = ()
    mean: NDArray[np.float64]
    variance: NDArray[np.float64]

    @property
    def std(self) -> NDArray[np.float64]:
        """``ŝ_S``: the square root of the variance."""
        return np.sqrt(np.maximum(self.variance, 0.0))

    @property
    def mean_confidence(self) -> float:
        """MC: the mean of :attr:`std` over the grid (lower is more confident)."""
        return float(self.std.mean())

    def confidence_band(self, level: float = 0.95) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Pointwise band ``m̂_S ± q_(1-α/2) ŝ_S`` under the normal approximation.

        Parameters
        ----------
        level : float in (0, 1), default=0.95

        Returns
        -------
        lower, upper : ndarray, same shape as :attr:`mean`
        """
        if not 0.0 < float(level) < 1.0:
            raise InvalidArgumentError(
                f"The 'level' parameter of confidence_band must be in (0, 1). Got {level!r} "
                "instead."
            )
        q = NormalDist().inv_cdf(0.5 + float(level) / 2.0)
        return self.mean - q * self.std, self.mean + q * self.std

    def nll(self, true_pd: Any) -> float:
        """Mean pointwise negative log-likelihood of a known PD under this estimate.

        Parameters
        ----------
        true_pd : array-like, same shape as ``mean``
            The true partial dependence at the grid points (e.g. of a
            synthetic benchmark), as the paper's reliability measure.
        """
        return gaussian_nll(self.mean, self.variance, true_pd)


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class PartialDependenceResult(PDBand):
    """A partial dependence estimate with its uncertainty.

    Attributes
    ----------
    params : tuple of str
        The one or two parameters ``S``.
    grid : tuple of tuple
        Grid values per parameter, in native units.
    encoded_grid : tuple of ndarray
        The same grid in the encoded coordinate.
    mean : ndarray of shape (G1,) or (G1, G2)
        PD estimate, Eq. (3).
    variance : ndarray, same shape as ``mean``
        Its variance, Eq. (4) or (5) (see ``variance_method``).
    ice_mean, ice_variance : ndarray of shape (n_samples, G1[, G2])
        Predictive mean and variance of every ICE curve at every grid point.
    samples : ndarray of shape (n_samples, n_params)
        The encoded Monte Carlo sample; the ``params`` columns are ignored.
    variance_method : {"pointwise", "covariance"}
    model_kind : str
        What was asked: "forest" or "gaussian process (draws)" for a ``FanovaResult``
        (variance over its trees or bootstrap draws), "gaussian process" for a fitted
        scikit-learn Gaussian process (its predictive variance), or the model's class name.
    space : SearchSpace

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(100, seed=0)
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] for c in configs]), seed=0)
    >>> pd = hp.partial_dependence(r, params="x", grid_size=4, n_samples=50, seed=0)
    >>> list(pd.to_frame().columns), len(pd.to_frame())
    (['x', 'mean', 'std', 'lower', 'upper'], 4)
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> pd.plot(ax=Figure().add_subplot()).get_xlabel()
    'x'
    """

    params: tuple[str, ...]
    grid: tuple[tuple[Any, ...], ...]
    encoded_grid: tuple[NDArray[np.float64], ...]
    mean: NDArray[np.float64]
    variance: NDArray[np.float64]
    ice_mean: NDArray[np.float64]
    ice_variance: NDArray[np.float64]
    samples: NDArray[np.float64]
    variance_method: str
    model_kind: str
    space: SearchSpace

    def __repr__(self) -> str:
        shape = "x".join(str(len(g)) for g in self.grid)
        head = "PartialDependenceResult(params="
        tail = (f", grid={shape}, n_samples={self.n_samples}, "
                f"variance={self.variance_method!r}, mean_confidence={self.mean_confidence:.4g})")
        return f"{head}{clip_text(repr(self.params), REPR_WIDTH - len(head) - len(tail))}{tail}"

    @property
    def n_samples(self) -> int:
        """Number of Monte Carlo samples (ICE curves)."""
        return int(self.ice_mean.shape[0])

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the PDP with its band; see :func:`hpinsight.plotting.plot_partial_dependence`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            ``level``, ``ice``, ``marks`` and ``seed``, passed on.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plotting import plot_partial_dependence

        return plot_partial_dependence(self, ax=ax, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary: grid, PD mean and std, and the method (no ICE curves)."""
        return {
            "params": list(self.params),
            "grid": [[json_value(v) for v in g] for g in self.grid],
            "mean": json_array(self.mean),
            "std": json_array(self.std),
            "variance_method": self.variance_method,
            "model_kind": self.model_kind,
            "n_samples": self.n_samples,
            "mean_confidence": json_value(self.mean_confidence),
        }

    def to_frame(self, level: float = 0.95) -> Any:
        """Long-format ``pandas.DataFrame``: one row per grid point (no ICE curves).

        Parameters
        ----------
        level : float in (0, 1), default=0.95
            Coverage of the ``lower`` and ``upper`` columns (:meth:`confidence_band`).

        Returns
        -------
        pandas.DataFrame
            One column per parameter (native values), then ``mean``, ``std``,
            ``lower`` and ``upper``.
        """
        pd = import_optional("pandas", "PartialDependenceResult.to_frame")
        lower, upper = self.confidence_band(level)
        data = grid_columns(self.params, self.grid)
        data.update(mean=self.mean.ravel(), std=self.std.ravel(), lower=lower.ravel(),
                    upper=upper.ravel())
        return pd.DataFrame(data)


@moved_keywords({"surrogate": "the fitted result or model as the first argument, model=..."})
def partial_dependence(
    model: Any,
    params: str | tuple[str, ...] | list[str],
    *,
    space: SearchSpace | None = None,
    grid_size: int = 20,
    n_samples: int = 1000,
    seed: int | None = None,
    variance: Literal["pointwise", "covariance"] = "pointwise",
) -> PartialDependenceResult:
    """Partial dependence of ``params`` with its uncertainty (Moosbauer et al. 2021).

    Parameters
    ----------
    model : FanovaResult, GaussianProcessRegressor or model
        A :class:`~hpinsight.results.FanovaResult` (its model: mean and variance
        over draws); a fitted scikit-learn ``GaussianProcessRegressor``; or
        any model with ``predict(X, return_std=True)``. Models must have been
        fitted on ``space.encode(configs)``.
    params : str or sequence of one or two str
        The parameters ``S``.
    space : SearchSpace, optional
        The search space (default: the FanovaResult's; required for other models).
    grid_size : int, default=20
        Grid points per continuous parameter (see
        :meth:`FanovaResult.marginal`; categoricals use all their choices).
    n_samples : int, default=1000
        Monte Carlo samples of the other parameters (ICE curves); for a conditional
        parameter, drawn where it is active (fewer where it is active in less than
        about 2 % of the space: 50 rounds of ``n_samples`` draws are made at most).
        The band is the model's uncertainty about the PD of this sample (Eq. 4 or 5);
        the sample's own error, about the ICE curves' spread over ``sqrt(n_samples)``,
        is not in it. On a near-noiseless model the band can be far narrower than that
        error (``y = x1 + 2 x2**2``, 500 samples: a curve 0.03 above the exact average
        with a band of 3e-5); :meth:`FanovaResult.marginal` averages exactly.
    seed : int, optional
        Seed of the Monte Carlo sample.
    variance : {"pointwise", "covariance"}, default="pointwise"
        Eq. (5), the mean of the pointwise variances, or Eq. (4), the variance
        of the mean under the posterior covariance (forests and Gaussian
        processes only; over a model's draws, the variance of the draws' mean
        curves). :func:`hpinsight.confidence_split` splits Eq. (5) only.

    Returns
    -------
    PartialDependenceResult

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(200, seed=0)
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] ** 2 for c in configs]), seed=0)
    >>> pd = hp.partial_dependence(r, params="x", grid_size=5, n_samples=200, seed=0)
    >>> pd.mean.shape, pd.variance_method
    ((5,), 'pointwise')
    >>> lower, upper = pd.confidence_band(0.9)
    >>> bool((lower <= pd.mean).all() and (pd.mean <= upper).all())
    True
    """
    per_draw: FittedSurrogate | None = None  # a model with draws, predicted per draw
    if isinstance(model, FanovaResult):
        if space is not None and space != model.space:
            # its model knows only the space it was fitted on: another one's ranges were
            # extrapolated without a word, and one with fewer parameters gave an IndexError
            raise InvalidArgumentError(
                f"{_FUNC}: the space given is not the one the FanovaResult's model was "
                f"fitted on ({model.space!r}); a FanovaResult brings its own. Leave space= "
                "out, or fit the model on the space you mean: hp.fanova(TrialHistory(space, "
                "configs, y)).")
        space = model.space
        per_draw = model.model
        predict = _draws_predictor(per_draw)
        # the spread over a forest's trees, or over a Gaussian process's bootstrap draws
        kind = "forest" if model.model.kind == "forest" else "gaussian process (draws)"
    else:
        if isinstance(model, TrialHistory):
            raise InvalidArgumentTypeError(
                f"The 'model' parameter of {_FUNC} takes a fitted model; got the trials "
                "themselves (a TrialHistory). Fit one first: result = hp.fanova(history), "
                f"then {_FUNC}(result, {params!r}).")
        if space is None:
            raise InvalidArgumentTypeError(
                f"The 'space' parameter of {_FUNC} is required for a {type(model).__name__} "
                "model: pass the SearchSpace it was fitted on."
            )
        predict, kind = _model_predictor(model)
    given: Any = params  # typed names; a number or None was "not iterable" (a TypeError)
    names = (given,) if isinstance(given, str) else tuple(given) if isinstance(
        given, tuple | list) else ()
    if len(names) not in (1, 2) or len(set(names)) != len(names) or not all(
            isinstance(n, str) for n in names):
        raise InvalidArgumentError(
            f"The 'params' parameter of {_FUNC} must name one or two distinct parameters "
            f"(a name, or a tuple of two names, e.g. {space.names[0]!r}). Got {params!r} "
            "instead.")
    cols = [space.index(n) for n in names]
    check_int(grid_size, "grid_size", _FUNC, minimum=2)
    n = int(check_int(n_samples, "n_samples", _FUNC, minimum=2))
    method = check_choice(variance, "variance", _FUNC, ("pointwise", "covariance"))
    if method == "covariance" and kind not in ("forest", "gaussian process",
                                               "gaussian process (draws)"):
        raise InvalidArgumentError(
            f"variance='covariance' (Eq. 4) needs the posterior covariance, which a {kind} does "
            "not give; use variance='pointwise' (Eq. 5)."
        )
    rng = np.random.default_rng(check_seed(seed, _FUNC))
    measures = [measure_of(p) for p in space.params]
    samples = _sample_where_active(space, measures, cols, rng, n)
    n = samples.shape[0]
    enc = [measures[c].grid(grid_size) for c in cols]
    points = np.stack(np.meshgrid(*enc, indexing="ij"), axis=-1).reshape(-1, len(cols))

    G = points.shape[0]
    ice_mean = np.empty((n, G))
    ice_var = np.empty((n, G))
    pd_var = np.empty(G)
    cov = method == "covariance"

    def put(g: int, m: NDArray[np.float64], v: NDArray[np.float64], total: float) -> None:
        ice_mean[:, g], ice_var[:, g] = m, v
        pd_var[g] = total if cov else v.mean()

    if per_draw is not None and len(cols) == 1:
        # every grid point at once: a Gaussian process computes the kernel terms of the
        # other parameters once, not once per grid point (the demo report's three PDPs
        # 0.41 -> 0.12 s)
        fixes = [(cols[0], float(p[0])) for p in points]
        step = max(1, 2**22 // (per_draw.n_draws * n))  # grid points held at once: 32 MB
        for lo in range(0, G, step):
            for g, draws in enumerate(predict_fixing(per_draw, samples, fixes[lo:lo + step]), lo):
                put(g, *_over_draws(draws, cov))
    else:
        X = samples.copy()
        for g in range(G):  # one batched prediction of n rows per grid point
            X[:, cols] = points[g]
            put(g, *predict(X, cov))
    shape = tuple(e.size for e in enc)
    return PartialDependenceResult(
        params=names,
        grid=tuple(native_grid(space, c, e) for c, e in zip(cols, enc, strict=True)),
        encoded_grid=tuple(readonly(e) for e in enc),
        mean=readonly(ice_mean.mean(axis=0).reshape(shape)),
        variance=readonly(pd_var.reshape(shape)),
        ice_mean=readonly(ice_mean.reshape(n, *shape)),
        ice_variance=readonly(ice_var.reshape(n, *shape)),
        samples=readonly(samples),
        variance_method=method,
        model_kind=kind,
        space=space,
    )


def _sample_where_active(space: SearchSpace, measures: list[Any], cols: list[int],
                         rng: np.random.Generator, n: int) -> NDArray[np.float64]:
    """``n`` encoded configurations from the space's measure, drawn where every
    parameter of ``cols`` is active (rejection; the whole space's where their conditions
    read one of ``cols``, and then activity changes along the grid)."""
    def draw() -> NDArray[np.float64]:
        return np.column_stack([m.sample(rng, n) for m in measures])

    names = {space.names[c] for c in cols}
    conditional = [c for c in cols if space.conditions_of(space.names[c])]
    parents = {q for c in conditional for cond in space.conditions_of(space.names[c])
               for q in cond.parents}
    if not conditional or parents & names:
        return draw()
    kept: list[NDArray[np.float64]] = []
    have = 0
    for _ in range(_MAX_DRAWS):
        batch = draw()
        batch = batch[space.active_mask(batch)[:, conditional].all(axis=1)]
        kept.append(batch)
        have += batch.shape[0]
        if have >= n:
            break
    if have == 0:
        raise InvalidArgumentError(
            f"{_FUNC}: {', '.join(sorted(space.names[c] for c in conditional))} is active in "
            f"none of {_MAX_DRAWS * n} configurations drawn from the space: its conditions "
            "hold almost nowhere, so there is no PDP to estimate.")
    return np.concatenate(kept)[:n]


#: Rounds of ``n`` draws :func:`_sample_where_active` makes at most (a parameter active in
#: 1 % of the space still gets about ``n / 2`` configurations).
_MAX_DRAWS = 50


def gaussian_nll(mean: Any, variance: Any, truth: Any) -> float:
    """Mean over the grid of ``-log N(truth; mean, variance)``."""
    m = np.asarray(mean, dtype=np.float64)
    t = np.asarray(truth, dtype=np.float64)
    if t.shape != m.shape:
        raise InvalidArgumentError(
            f"The true PD must have the grid's shape {m.shape}. Got shape {t.shape} instead."
        )
    v = np.maximum(np.asarray(variance, dtype=np.float64), np.finfo(float).tiny)
    return float(np.mean(0.5 * np.log(2.0 * np.pi * v) + (t - m) ** 2 / (2.0 * v)))


def _draws_predictor(model: FittedSurrogate) -> Any:
    def predict(X: NDArray[np.float64], cov: bool) -> tuple[Any, Any, float]:
        return _over_draws(model.predict_per_draw(X), cov)

    return predict


def _over_draws(per_draw: NDArray[np.float64], cov: bool) -> tuple[Any, Any, float]:
    """The mean and variance over draws of predictions of shape (n_draws, n), and the
    variance of their mean over the rows (Eq. 4 over draws; 0 unless ``cov``)."""
    total = float(per_draw.mean(axis=1).var()) if cov else 0.0
    return per_draw.mean(axis=0), per_draw.var(axis=0), total


def _takes_return_std(predict: Any) -> bool:
    """Whether ``predict`` accepts ``return_std`` (by name or through ``**kwargs``); True
    where its signature cannot be read (a compiled method)."""
    import inspect

    try:
        params = inspect.signature(predict).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "return_std" or p.kind is p.VAR_KEYWORD for p in params)


def _model_predictor(model: Any) -> tuple[Any, str]:
    if not callable(getattr(model, "predict", None)):
        raise InvalidArgumentTypeError(
            f"The 'model' parameter of {_FUNC} must be a FanovaResult or a fitted model with "
            f"predict(X, return_std=True). Got {type(model).__name__} instead."
        )
    if not _takes_return_std(model.predict):
        # a model hp.Forest.from_estimator takes (not boosting, whose stages add up)
        forest = (hasattr(model, "estimators_") or hasattr(model, "tree_")) and \
            why_not_a_mean_of_trees(model) is None
        raise InvalidArgumentTypeError(
            f"The 'model' parameter of {_FUNC} needs predict(X, return_std=True) for the "
            f"confidence bands; {type(model).__name__}.predict takes no return_std. "
            + ("For a fitted tree ensemble, decompose it through hpinsight, whose bands are the "
               "spread over its trees: result = hp.fanova(history, "
               "surrogate=hp.Forest.from_estimator(model)), then "
               f"{_FUNC}(result, ...)." if forest else
               "Pass a model that gives its predictive standard deviation (e.g. a fitted "
               "sklearn GaussianProcessRegressor), or a FanovaResult from hp.fanova."))
    from sklearn.gaussian_process import GaussianProcessRegressor

    is_gp = isinstance(model, GaussianProcessRegressor)  # subclasses too

    def predict(X: NDArray[np.float64], cov: bool) -> tuple[Any, Any, float]:
        if cov:
            m, K = model.predict(X, return_cov=True)
            return np.asarray(m).reshape(-1), np.diag(K).copy(), float(np.mean(K))
        m, s = model.predict(X, return_std=True)
        return np.asarray(m).reshape(-1), np.asarray(s).reshape(-1) ** 2, 0.0

    return predict, "gaussian process" if is_gp else type(model).__name__
