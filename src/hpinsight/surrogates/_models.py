"""The model behind every number, as an object: :class:`GP` and :class:`Forest`.

A model object says *which* surrogate to fit and how; it holds no data. Each has
``fit(space, X, y, seed=...)``, which returns the fitted model whose functional ANOVA
is exact (:class:`~hpinsight.surrogates.gp.FittedGP`,
:class:`~hpinsight.surrogates.forest.FittedForest`). Both fitted models follow one
protocol, :class:`FittedSurrogate`: ``predict_per_draw``, ``n_draws``, ``fit_r2`` and
``shadow_fractions``; a *draw* is one bootstrap posterior mean of the GP or one tree of
the forest, and every mean and standard deviation hpinsight reports is taken over draws.

Every function that fits a model (``fanova``, ``report``, ``suggest_subspace``,
``surrogate_tuning_risk``, the callbacks and the evaluator) takes one of these as
``surrogate=``; the command line builds the same objects from ``--surrogate`` and
``--n-trees``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from .._validation import check_int, check_real
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from .forest import FittedForest, decompose_forest, fit_forest, forest_from_estimator
from .gp import FittedGP, decompose_gp, fit_gp, infer_conditions
from .gp._model import predict_changed_rows

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from ..space import SearchSpace

__all__ = ["GP", "FittedSurrogate", "Forest", "as_surrogate", "decompose", "describe",
           "means_only", "predict_fixing", "refuse_fitted"]


def _changed_only(model: GP | Forest) -> str:
    """``Forest(n_trees=8)``: the options that differ from their defaults, as scikit-learn
    prints estimators, so a printed model object is also the code that makes it."""
    changed = [f"{f.name}={getattr(model, f.name)!r}" for f in fields(model)
               if getattr(model, f.name) != f.default]
    return f"{type(model).__name__}({', '.join(changed)})"


@runtime_checkable
class FittedSurrogate(Protocol):
    """What every fitted model offers the analyses."""

    @property
    def n_draws(self) -> int: ...

    @property
    def fit_r2(self) -> float | None: ...

    @property
    def shadow_fractions(self) -> tuple[float, float] | None: ...

    @property
    def kind(self) -> Literal["gp", "forest"]: ...

    def predict_per_draw(self, X: NDArray[np.float64]) -> NDArray[np.float64]: ...


@dataclass(frozen=True, slots=True, repr=False)
class GP:
    """A Gaussian process with one length scale per parameter: hpinsight's default model.

    Its decomposition is exact for its posterior mean, and it stays right on the
    clustered samples optimizers produce, where forests credit parameters that do
    nothing (``hpinsight.surrogates.gp`` explains the design; ``benchmarks/bench_biased.py``
    measures it).

    Parameters
    ----------
    n_draws : int, default=16
        Bootstrap draws of the posterior mean; every importance is the mean and standard
        deviation over them.
    shadows : bool, default=True
        Fit the model three more times, each with a *shadow* of every parameter (its
        values shuffled among trials close in trial order, a new shuffle each time), and
        call an effect that explains no more than the median over the three fits of the
        largest shadow "indistinguishable from nothing". Two to three times the cost.
        An interaction of two parameters that would then be resolved is also taken out
        of the trials' values, as fitted, and the model fit again: one the product
        kernel makes up comes back, and the pair is judged against the share that came
        back too (:attr:`~hpinsight.results.Importance.regrown`; one more fit per such pair).
    refits : int, default=12
        Fit the hyperparameters this many more times, each on a random half of the
        trials they are fit on (about half the cost of a fit of the model's own), and
        widen every importance's standard deviation by the spread of its share under
        those hyperparameters (a delete-half jackknife: a half-sample fit varies about
        as much as the full fit would over new trials). Two thirds of them fit the whole
        kernel, from one of the model's two starting points in turn; a refit that
        predicts the other half of the trials far worse than the others (more than 1 nat
        per trial beyond their median, against the model's hyperparameters on the same
        half) has lost an effect those trials show, and is left out. The other third fit
        the kernel's product part alone, and count only where they predict the other
        half as well as a kept refit of the whole kernel: where an optimizer sampled
        corners of two parameters, main effects and an interaction fit its trials alike,
        and the spread then says so. At least two refits are kept.
        The draws hold the hyperparameters, so without refits the ± leaves their
        uncertainty out (``benchmarks/README.md``, ``bench_calibration.py``). 0, or at
        least 2. The verdicts, the marginals' bands and the tuning risk's quantiles use
        the widened spread.
    prune : bool, default=True
        Take out of the model every parameter whose removal costs its marginal
        likelihood less than the price of one parameter, ``log(n) / 2`` nats on the
        ``n`` trials the hyperparameters are fit on (the Bayesian information
        criterion), and fit the rest again. With many parameters and a noisy objective
        the likelihood's optimum otherwise hands some that do nothing a share of the
        variance, where their values correlate with the objective by chance: on 200
        TPE trials of 40 parameters at a signal-to-noise ratio of 4, the median share
        of those that do nothing fell from 0.20 to 0.00 (``bench_calibration.py``). A
        parameter taken out keeps what its length scale and additive variance at their
        bounds still hold, at most a gentle trend over its range (a linear effect of
        0.2 % of the variance kept its 0.2 %), and is never resolved; its spread still
        comes from the refits,
        which are not pruned, so where the trials cannot tell, its verdict says so.

    Examples
    --------
    >>> import hpinsight as hp
    >>> hp.GP(n_draws=8)
    GP(n_draws=8)
    """

    n_draws: int = 16
    shadows: bool = True
    refits: int = 12
    prune: bool = True
    kind: ClassVar[Literal["gp"]] = "gp"
    #: fit for the means alone (:func:`means_only`)
    _means_only: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_int(self.n_draws, "n_draws", "GP", minimum=1)
        check_int(self.refits, "refits", "GP", minimum=0)
        if self.refits == 1:
            raise InvalidArgumentError(
                "The 'refits' parameter of GP must be 0 or at least 2: a spread needs two "
                "refits. Got 1.")
        for name in ("shadows", "prune"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgumentTypeError(
                    f"The {name!r} parameter of GP must be True or False. Got {getattr(self, name)!r}.")

    def __repr__(self) -> str:
        return _changed_only(self)

    def fit(self, space: SearchSpace, X: NDArray[np.float64], y: NDArray[np.float64], *,
            seed: int | None, maximize: bool = False) -> FittedGP:
        """Fit on encoded ``X`` (NaN = inactive, rows in trial order) and finite ``y``;
        ``maximize``: higher values are better (of a large history the best tenth of the
        trials is always kept, and the rest drawn at random).

        Parameters inactive in some trials but without a condition get the conditions
        the trials imply (Optuna's define-by-run studies), which the kernel's blocks need.
        """
        if np.isnan(X).any():
            space = infer_conditions(space, X) or space
        return fit_gp(space, X, y, n_draws=self.n_draws, seed=seed, shadows=self.shadows,
                      refits=self.refits, prune=self.prune, means_only=self._means_only,
                      maximize=maximize)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe description: the kind and every option."""
        return {"kind": self.kind, "n_draws": self.n_draws, "shadows": self.shadows,
                "refits": self.refits, "prune": self.prune}


@dataclass(frozen=True, slots=True, repr=False)
class _MeansOnlyGP(GP):
    """A :class:`GP` whose fit leaves out what no mean reads (:func:`means_only`)."""

    _means_only: ClassVar[bool] = True


def means_only(model: GP) -> GP:
    """The model whose analysis has ``model``'s means to the bit, at a fraction of the cost:
    without shadows and refits (their random streams are their own), and whose fit skips
    the rest that only verdicts, bands and notes read (the posterior before pruning, the
    leave-one-out fit; ``fit_gp``'s ``means_only``). For callers that return means alone,
    such as Optuna's evaluator interface."""
    return _MeansOnlyGP(n_draws=model.n_draws, shadows=False, refits=0, prune=model.prune)


@dataclass(frozen=True, slots=True, repr=False)
class Forest:
    """A random forest, the model of the functional ANOVA paper (exact for the forest).

    Parameters
    ----------
    n_trees : int, default=64
        Trees in the forest; each is one draw.
    min_samples_leaf : int, default=1
    max_features : float in (0, 1], default=1.0
        Passed to scikit-learn's ``RandomForestRegressor``.
    max_samples : int, float, "auto" or None, default="auto"
        Rows per bootstrap sample; "auto" is ``min(n_trials, 10000)``.
    n_jobs : int, optional
        Cores used to fit, as in scikit-learn: None means 1, -1 all.

    Examples
    --------
    >>> import hpinsight as hp
    >>> hp.Forest(n_trees=32)
    Forest(n_trees=32)
    """

    n_trees: int = 64
    min_samples_leaf: int = 1
    max_features: float = 1.0
    max_samples: int | float | Literal["auto"] | None = "auto"
    n_jobs: int | None = field(default=None, compare=False)
    kind: ClassVar[Literal["forest"]] = "forest"

    def __post_init__(self) -> None:
        func = "Forest"
        check_int(self.n_trees, "n_trees", func, minimum=1)
        check_int(self.min_samples_leaf, "min_samples_leaf", func, minimum=1)
        check_real(self.max_features, "max_features", func, low=0.0, high=1.0, low_open=True)
        check_int(self.n_jobs, "n_jobs", func, allow_none=True)
        # (scikit-learn's own error came at the first fit, naming RandomForestRegressor)
        given: Any = self.max_samples  # checked at run time: callers may pass anything
        if isinstance(given, bool) or not (given is None or given == "auto"
                                           or isinstance(given, numbers.Real)):
            raise InvalidArgumentTypeError(
                f"The 'max_samples' parameter of {func} must be 'auto', None (every row), a "
                f"number of rows >= 1 or a fraction in (0, 1]. Got {given!r} instead.")
        if isinstance(given, numbers.Integral):
            check_int(given, "max_samples", func, minimum=1)
        elif isinstance(given, numbers.Real):
            check_real(given, "max_samples", func, low=0.0, high=1.0, low_open=True)

    def __repr__(self) -> str:
        return _changed_only(self)

    def fit(self, space: SearchSpace, X: NDArray[np.float64], y: NDArray[np.float64], *,
            seed: int | None, maximize: bool = False) -> FittedForest:
        """Fit on encoded ``X`` (NaN = inactive, imputed from each parameter's measure);
        ``maximize`` changes nothing (every tree sees every row), and is taken as the
        Gaussian process's is."""
        return fit_forest(space, X, y, n_trees=self.n_trees, seed=seed,
                          min_samples_leaf=self.min_samples_leaf,
                          max_features=self.max_features, max_samples=self.max_samples,
                          n_jobs=self.n_jobs)

    @staticmethod
    def from_estimator(estimator: Any) -> FittedForest:
        """A fitted scikit-learn forest as a model to decompose as it is.

        Parameters
        ----------
        estimator : fitted tree ensemble
            A ``RandomForestRegressor``, ``ExtraTreesRegressor``, a ``BaggingRegressor``
            of regression trees on all columns, or one regression tree, trained on
            ``space.encode(configs)`` with inactive entries filled in.

        Returns
        -------
        FittedForest
            Pass it as ``fanova(history, surrogate=...)``; capping is then not possible.

        Raises
        ------
        InvalidDataError
            A model that does not predict the plain mean of its regression trees.
        """
        return forest_from_estimator(estimator, None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe description: the kind and every option."""
        return {"kind": self.kind, "n_trees": self.n_trees,
                "min_samples_leaf": self.min_samples_leaf, "max_features": self.max_features,
                "max_samples": self.max_samples}


#: What ``surrogate=`` accepts, for error messages.
_ACCEPTED = "hp.GP(), hp.Forest(n_trees=...), or a fitted model (hp.Forest.from_estimator(est))"


def as_surrogate(surrogate: Any, func: str) -> GP | Forest | FittedForest | FittedGP:
    """``surrogate`` checked: a model object (None means ``GP()``) or a fitted model.

    A string, the way models were chosen before, is refused with the object to pass.
    """
    if surrogate is None:
        return GP()
    if isinstance(surrogate, GP | Forest | FittedForest | FittedGP):
        return surrogate
    if isinstance(surrogate, str):
        hint = {"gp": "hp.GP()", "forest": "hp.Forest()"}.get(surrogate, _ACCEPTED)
        raise InvalidArgumentTypeError(
            f"The 'surrogate' parameter of {func} takes a model object, not a string: "
            f"pass surrogate={hint} instead of {surrogate!r}.")
    if hasattr(surrogate, "estimators_") or hasattr(surrogate, "tree_"):
        raise InvalidArgumentTypeError(
            f"The 'surrogate' parameter of {func} got a scikit-learn "
            f"{type(surrogate).__name__}; wrap it: surrogate=hp.Forest.from_estimator(model).")
    raise InvalidArgumentTypeError(
        f"The 'surrogate' parameter of {func} must be {_ACCEPTED}. Got "
        f"{type(surrogate).__name__} instead.")


def describe(surrogate: GP | Forest | FittedForest | FittedGP) -> dict[str, Any]:
    """JSON-safe description of a model object, or of a fitted model given as it is."""
    if isinstance(surrogate, GP | Forest):
        return surrogate.to_dict()
    return {"kind": surrogate.kind, "fitted": "given", "n_draws": surrogate.n_draws}


def refuse_fitted(surrogate: GP | Forest | FittedForest | FittedGP, func: str,
                  why: str) -> GP | Forest:
    """A model to fit, or an error saying why ``func`` cannot use a fitted one."""
    if isinstance(surrogate, GP | Forest):
        return surrogate
    raise InvalidArgumentError(
        f"{func} fits its own models ({why}); pass hp.GP() or hp.Forest(...), not a "
        "fitted model.")


def decompose(model: FittedForest | FittedGP, space: SearchSpace,
              index_subsets: Sequence[tuple[int, ...]], max_order: int
              ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The exact decomposition of a fitted model, per draw: ``V_U`` for every subset
    (shape (n_draws, n_subsets)), the total variance and the mean of each draw."""
    if isinstance(model, FittedGP):
        return decompose_gp(model, index_subsets)
    # its width and its column names checked against the space
    forest = forest_from_estimator(model, len(space), space.names)
    return decompose_forest(forest, space, index_subsets, max_order)


def predict_fixing(model: FittedSurrogate, X: NDArray[np.float64],
                   fixes: Sequence[tuple[int, float]], *,
                   free: bool = False) -> list[NDArray[np.float64]]:
    """Each draw's prediction at encoded ``X`` with column ``j`` set to the encoded value
    ``v``, per ``(j, v)`` of ``fixes``: one array of shape (n_draws, n_rows) each; with
    ``free``, first the prediction at ``X`` itself. A Gaussian process computes every
    other column's kernel terms once for all the fixes
    (:meth:`~hpinsight.surrogates.gp.FittedGP.predict_fixing`); a forest predicts each
    changed copy of ``X``."""
    if isinstance(model, FittedGP):
        return model.predict_fixing(X, fixes, free=free)
    return predict_changed_rows(model, X, fixes, free=free)
