"""Tuning risk and the non-inferiority test of fixing a hyperparameter (Weerts 2018, Sec. 3.3.2).

For a parameter ``i`` and paired runs ``k`` (a dataset and a search seed), ``x_f`` is
the risk (a loss, lower is better) when ``i`` is fixed at its default and the others
are tuned, ``x_nf`` the risk when everything is tuned with the same seed. Then

* tuning risk, Eq. (4)-(5): ``d_k = x_f - x_nf``, its mean ``d_i`` and standard
  deviation ``s_i``;
* relative tuning risk, Eq. (6)-(7): ``d^R_k = (x_f - x_nf) / x_nf``, mean ``d^R_i``,
  standard deviation ``s^R_i``;
* the one-sided non-parametric non-inferiority test on the relative risk with margin
  ``δ``, Eq. (8)-(10): ``H0: median(d^R) >= δ`` against ``H1: median(d^R) < δ``. The
  differences ``d^R_k - δ`` are ranked by absolute value; ``s_nr`` is the sum of the
  ranks of the negative ones and ``z = (s_nr - N(N+1)/4) / sqrt(N(N+1)(2N+1)/24)``.
  A large ``z`` (many pairs clearly below the margin) rejects ``H0``: fixing is
  non-inferior;
* Holm–Bonferroni across parameters (Holm 1979) controls the family-wise error.

What this module does beyond the paper, and why:

* **Zeros** (a pair exactly on the margin, ``d^R_k = δ``) carry no sign. By default
  they are dropped before ranking, Wilcoxon's own rule (``zero_method="wilcox"``);
  ``"pratt"`` ranks them and then drops their ranks, ``"zsplit"`` splits their ranks
  between both signs. ``N`` counts the pairs that remain.
* **Ties** get their average rank, and the variance in ``z`` is corrected for them,
  ``N(N+1)(2N+1)/24 - Σ(t³ - t)/48`` over tie groups of size ``t``. Without ties this
  is exactly Eq. (10). Differences are rounded to 12 significant digits before
  ranking so that mathematically equal relative risks count as ties. Zeros are no
  tie group, except with ``"zsplit"``, where they are ranked like tied pairs and
  their group enters the correction (scipy's convention, which cannot be switched off).
* **Statistic and p-values** come from ``scipy.stats.wilcoxon`` without continuity
  correction. ``s_nr`` and ``z`` are its statistic and z-statistic for ``-(d^R - δ)``
  with ``alternative="greater"`` (for ``d^R - δ`` with ``alternative="less"`` scipy's
  ``z`` is ours with the opposite sign). With ``method="approx"`` (scipy's
  ``"asymptotic"``) the p-value is ``1 - Φ(z)``, the paper's normal approximation.
  The default ``method="auto"`` is scipy's choice (1.15
  or later): for small samples the exact null distribution, or an exact permutation
  test when there are ties or zeros; the normal approximation for large ones. That is
  more accurate for the few datasets a laptop experiment has. ``method="exact"`` is
  scipy's exact table where it holds (no ties, no zeros kept); with ties or kept zeros
  every sign pattern is counted instead (at most ``EXACT_MAX_PAIRS`` pairs), since
  the table, made for distinct ranks, is not their distribution.
* **Undefined relative risk**: a pair whose non-fixed risk is 0 has no relative risk;
  it is excluded from the relative statistics and the test and counted in
  ``n_excluded`` (the paper left such datasets out, Sec. 5.2.1).
* Standard deviations use ``ddof=1`` (the sample standard deviation); the paper does
  not say which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._optional import import_optional
from ._shared import REPR_WIDTH, clip_text, join_items, json_value
from ._validation import check_choice, check_real
from .exceptions import InvalidArgumentError, InvalidDataError, UnknownNameError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "NonInferiorityResult",
    "TuningRiskResult",
    "TuningRiskRow",
    "holm_bonferroni",
    "noninferiority_test",
    "tuning_risk",
]

ZeroMethod = Literal["wilcox", "pratt", "zsplit"]
Method = Literal["auto", "exact", "approx"]


@dataclass(frozen=True, slots=True)
class NonInferiorityResult:
    """One non-inferiority test (see :func:`noninferiority_test`).

    A single test has no figure, so there is no ``plot``; :meth:`to_frame` is its one
    row (several tests in a table: :func:`tuning_risk` and
    :meth:`TuningRiskResult.plot`).

    Attributes
    ----------
    statistic : float
        ``s_nr``: the sum of the ranks of the pairs below the margin.
    zstatistic : float
        Eq. (10) (tie-corrected variance); large means non-inferior. NaN when no pair
        is left to rank.
    pvalue : float
        One-sided p-value of ``H0: median >= margin``.
    n : int
        Pairs ranked (after dropping zeros with ``zero_method="wilcox"``).
    n_zeros : int
        Pairs exactly on the margin.
    n_ties : int
        Pairs that share their absolute difference with another pair.
    margin : float
    method, zero_method : str

    Examples
    --------
    >>> import hpinsight as hp
    >>> test = hp.noninferiority_test([-0.02, -0.05, 0.0, -0.01, -0.03, 0.005],
    ...                               margin=0.01, method="approx")
    >>> test
    NonInferiorityResult(statistic=21, z=2.201, pvalue=0.01385, n=6, margin=0.01, method='approx')
    >>> test.to_frame()[["statistic", "n"]].values.tolist()
    [[21.0, 6.0]]
    """

    statistic: float
    zstatistic: float
    pvalue: float
    n: int
    n_zeros: int
    n_ties: int
    margin: float
    method: str
    zero_method: str

    def __repr__(self) -> str:
        return clip_text(f"NonInferiorityResult(statistic={self.statistic:g}, "
                     f"z={self.zstatistic:.4g}, pvalue={self.pvalue:.4g}, n={self.n}, "
                     f"margin={self.margin:g}, method={self.method!r})", REPR_WIDTH)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        return {f.name: json_value(getattr(self, f.name)) for f in fields(self)}

    def to_frame(self) -> Any:
        """The test as a one-row ``pandas.DataFrame``, one column per attribute."""
        pd = import_optional("pandas", "NonInferiorityResult.to_frame")
        return pd.DataFrame([{f.name: getattr(self, f.name) for f in fields(self)}])


def noninferiority_test(
    differences: ArrayLike,
    *,
    margin: float = 0.01,
    zero_method: ZeroMethod = "wilcox",
    method: Method = "auto",
) -> NonInferiorityResult:
    """One-sided signed-rank test that the median of ``differences`` is below ``margin``.

    Parameters
    ----------
    differences : array-like of shape (n_pairs,)
        Paired differences, for tuning risk the relative risks ``(x_f - x_nf) / x_nf``.
    margin : float, default=0.01
        Non-inferiority margin ``δ`` (the paper's 1 %).
    zero_method : {"wilcox", "pratt", "zsplit"}, default="wilcox"
        What to do with pairs exactly on the margin (module docstring).
    method : {"auto", "exact", "approx"}, default="auto"
        How the p-value is computed; "approx" is the paper's normal approximation.

    Returns
    -------
    NonInferiorityResult

    Examples
    --------
    >>> import hpinsight as hp
    >>> test = hp.noninferiority_test([-0.02, -0.05, 0.0, -0.01, -0.03, 0.005],
    ...                               margin=0.01, method="approx")
    >>> round(test.zstatistic, 3), test.pvalue < 0.05
    (2.201, True)
    """
    func = "noninferiority_test"
    margin = check_real(margin, "margin", func, low=-np.inf, high=np.inf)
    zero_method = check_choice(zero_method, "zero_method", func, ("wilcox", "pratt", "zsplit"))
    method = check_choice(method, "method", func, ("auto", "exact", "approx"))
    x = _numbers(differences, "differences", func)
    if not np.all(np.isfinite(x)):
        raise InvalidDataError(f"{func}: the differences contain NaN or infinite values; "
                               "drop those pairs first (and report them).")
    # round the relative risks first: a pair exactly on the margin (x_f = 1.01 x_nf)
    # must give 0, not a floating-point leftover of either sign
    d = _round_sig(_round_sig(x) - margin)
    n_zeros = int(np.count_nonzero(d == 0.0))
    s_nr, z, p_approx, n_ranked, n_ties = _wilcoxon_z(d, zero_method)
    if n_ranked == 0 or not np.isfinite(z) or n_zeros == d.size:
        # nothing to rank, or only pairs exactly on the margin: no evidence for
        # non-inferiority (zsplit would otherwise rank the zeros against each other)
        return NonInferiorityResult(statistic=float(s_nr), zstatistic=float("nan"), pvalue=1.0,
                                    n=n_ranked, n_zeros=n_zeros, n_ties=n_ties, margin=margin,
                                    method=method, zero_method=zero_method)
    pvalue = p_approx if method == "approx" else _scipy_pvalue(d, zero_method=zero_method,
                                                                method=method)
    return NonInferiorityResult(statistic=float(s_nr), zstatistic=float(z), pvalue=pvalue,
                                n=n_ranked, n_zeros=n_zeros, n_ties=n_ties, margin=margin,
                                method=method, zero_method=zero_method)


def _round_sig(x: NDArray[np.float64], digits: int = 12) -> NDArray[np.float64]:
    out = np.zeros_like(x)
    nz = x != 0.0
    mag = np.floor(np.log10(np.abs(x[nz])))
    scale = 10.0 ** (digits - 1 - mag)
    out[nz] = np.round(x[nz] * scale) / scale
    return out


def _wilcoxon_z(d: NDArray[np.float64],
                   zero_method: str) -> tuple[float, float, float, int, int]:
    """``s_nr``, ``z`` of Eq. (10), its one-sided p-value, ranked pairs and tied pairs.

    The statistic is ``scipy.stats.wilcoxon`` with the normal approximation
    (``method="asymptotic"``, called ``"approx"`` before scipy 1.13) and no continuity
    correction, applied to ``-d`` with ``alternative="greater"``: the sum of the ranks
    of the positive ``-d`` is ``s_nr`` and scipy's z-statistic is ours with the same
    sign, so its p-value is the paper's ``1 - Φ(z)``. scipy treats zeros and ties
    as the module docstring says, with one convention of its own: under
    ``zero_method="zsplit"`` the zeros form one more tie group in the variance (they
    are ranked like tied pairs); "wilcox" and "pratt" leave them out.
    """
    from scipy.stats import wilcoxon

    nonzero = d[d != 0.0]
    n = d.size if zero_method != "wilcox" else nonzero.size
    _, counts = np.unique(np.abs(nonzero), return_counts=True)  # zeros are no tie group
    n_ties = int(counts[counts > 1].sum())
    if nonzero.size == 0 and zero_method != "zsplit":
        # scipy's variance is 0 here (0/0); its statistic is 0 as well
        return 0.0, float("nan"), 1.0, n, n_ties
    res = wilcoxon(-d, zero_method=zero_method, correction=False, alternative="greater",
                   method="asymptotic")
    return float(res.statistic), float(res.zstatistic), float(res.pvalue), n, n_ties


#: Most pairs ``method="exact"`` counts every sign pattern of, where scipy's exact table
#: does not apply (ties, or pairs on the margin that keep a rank): up to 2^50 patterns,
#: whose counts float64 holds exactly.
EXACT_MAX_PAIRS = 50


def _every_sign_pvalue(d: NDArray[np.float64], zero_method: str) -> float:
    """``P(T+ <= observed)`` over all 2^n equally likely signs of the nonzero differences,
    T+ the sum of the (mid)ranks of the positive ones, ranked as ``zero_method`` ranks
    (zeros dropped first for "wilcox"; ranked and then left out for "pratt"; for "zsplit"
    their split ranks add a constant). Counted by dynamic programming over the doubled
    ranks, which are integers: what enumerating every pattern gives (scipy's permutation
    method with every resample), in microseconds where that took 300 s and 1.5 GB for
    20 pairs."""
    from scipy.stats import rankdata

    if zero_method == "wilcox":
        d = d[d != 0.0]
    nonzero = d != 0.0
    twice = np.rint(2.0 * rankdata(np.abs(d))[nonzero]).astype(np.intp)
    observed = int(twice[d[nonzero] > 0.0].sum())
    counts = np.zeros(int(twice.sum()) + 1)
    counts[0] = 1.0
    for w in twice:  # each rank (at least 2, doubled) positive or not: one pass per pair
        counts[w:] += counts[:-w].copy()
    return float(counts[: observed + 1].sum() / counts.sum())


def _scipy_pvalue(d: NDArray[np.float64], *, zero_method: str, method: str) -> float:
    from scipy.stats import wilcoxon

    how: Any = method
    if method == "exact":
        # scipy's exact table is the distribution of n distinct ranks: with ties, or with
        # zeros that keep their ranks (pratt, zsplit), it is not that of the statistic
        # (three signed pairs of five gave 1/32 for a true 1/8, and a parameter "safe
        # to fix"); every sign pattern is enumerated instead, as scipy's "auto" does
        nonzero = np.abs(d[d != 0.0])
        kept = d.size if zero_method != "wilcox" else nonzero.size
        if (kept > nonzero.size) or np.unique(nonzero).size < nonzero.size:
            if kept > EXACT_MAX_PAIRS:
                raise InvalidArgumentError(
                    f"noninferiority_test: method='exact' with tied differences or pairs on "
                    f"the margin counts all 2^n sign patterns, which is too many for "
                    f"{kept} pairs (at most {EXACT_MAX_PAIRS}); use method='auto' or 'approx'.")
            return _every_sign_pvalue(d, zero_method)
    res = wilcoxon(d, alternative="less", zero_method=zero_method, correction=False, method=how)
    return float(res.pvalue)


def holm_bonferroni(pvalues: ArrayLike, alpha: float = 0.05) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Holm's step-down adjusted p-values and rejections (Holm 1979).

    Sort the ``m`` p-values ascending; the k-th smallest (k = 1..m) is compared to
    ``α / (m - k + 1)`` and the procedure stops at the first that is not below. The
    adjusted p-values are ``max_{j <= k} min(1, (m - j + 1) p_(j))`` in that order, so a
    hypothesis is rejected exactly when its adjusted p-value is at most ``α``.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
    alpha : float, default=0.05
        Family-wise error rate.

    Returns
    -------
    adjusted : ndarray of shape (m,)
    reject : ndarray of bool, shape (m,)

    Examples
    --------
    >>> import hpinsight as hp
    >>> adjusted, reject = hp.holm_bonferroni([0.01, 0.04, 0.03], alpha=0.05)
    >>> adjusted.round(3).tolist(), reject.tolist()
    ([0.03, 0.06, 0.06], [True, False, False])
    """
    alpha = check_real(alpha, "alpha", "holm_bonferroni", low=0.0, high=1.0, low_open=True)
    p = _numbers(pvalues, "pvalues", "holm_bonferroni")
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise InvalidDataError("holm_bonferroni: p-values must lie in [0, 1].")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted, adjusted <= alpha


@dataclass(frozen=True, slots=True)
class TuningRiskRow:
    """Tuning risk of one parameter (see :func:`tuning_risk`).

    A value object: it has a ``repr`` and :meth:`to_dict` but no ``to_frame`` or
    ``plot`` of its own, because it is one row of :meth:`TuningRiskResult.to_frame`
    and one bar of :meth:`TuningRiskResult.plot`.

    Attributes
    ----------
    param : str
    n_pairs : int
        Paired runs given.
    n_excluded : int
        Pairs without a relative risk (non-fixed risk 0), left out of the relative
        statistics and the test.
    risk_mean, risk_std : float
        ``d_i`` and ``s_i`` (Eq. 4-5), over all pairs.
    relative_mean, relative_std : float
        ``d^R_i`` and ``s^R_i`` (Eq. 6-7).
    test : NonInferiorityResult
    pvalue_adjusted : float
        Holm-adjusted p-value across the parameters of the table.
    non_inferior : bool
        ``H0`` rejected after Holm: fixing the parameter at its default is
        non-inferior to tuning it, within the margin.

    Examples
    --------
    >>> import hpinsight as hp
    >>> free = [0.10, 0.20, 0.15, 0.30, 0.05, 0.12]
    >>> hp.tuning_risk({"gamma": [0.20, 0.35, 0.15, 0.50, 0.09, 0.20]}, free)["gamma"]
    TuningRiskRow(gamma: d^R=0.6472 ± 0.3400, z=-1.997, p_holm=0.9844, tune it)
    """

    param: str
    n_pairs: int
    n_excluded: int
    risk_mean: float
    risk_std: float
    relative_mean: float
    relative_std: float
    test: NonInferiorityResult
    pvalue_adjusted: float
    non_inferior: bool

    def __repr__(self) -> str:
        verdict = "non-inferior" if self.non_inferior else "tune it"
        tail = (f": d^R={self.relative_mean:.4f} ± {self.relative_std:.4f}, "
                f"z={self.test.zstatistic:.4g}, p_holm={self.pvalue_adjusted:.4g}, {verdict})")
        head = "TuningRiskRow("
        return f"{head}{clip_text(self.param, REPR_WIDTH - len(head) - len(tail))}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        out = {f.name: json_value(getattr(self, f.name)) for f in fields(self)
               if f.name != "test"}
        out["test"] = self.test.to_dict()
        return out


@dataclass(frozen=True, slots=True)
class TuningRiskResult:
    """Tuning risk and non-inferiority of several parameters (Weerts 2018, Tables 5-6).

    Attributes
    ----------
    rows : tuple of TuningRiskRow
        One per parameter, in the order given.
    margin : float
    alpha : float

    Examples
    --------
    >>> import hpinsight as hp
    >>> free = [0.10, 0.20, 0.15, 0.30, 0.05, 0.12]
    >>> result = hp.tuning_risk({"shrinking": [0.10, 0.20, 0.15, 0.30, 0.05, 0.12],
    ...                          "gamma": [0.20, 0.35, 0.15, 0.50, 0.09, 0.20]}, free)
    >>> result
    TuningRiskResult(n_params=2, margin=0.01, alpha=0.05, non_inferior=['shrinking'])
    >>> result.to_frame()["non_inferior"].tolist()
    [True, False]
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> len(result.plot(ax=Figure().add_subplot()).patches)
    2
    """

    rows: tuple[TuningRiskRow, ...]
    margin: float
    alpha: float

    def __repr__(self) -> str:
        head = (f"TuningRiskResult(n_params={len(self.rows)}, margin={self.margin:g}, "
                f"alpha={self.alpha:g}, non_inferior=[")
        tail = "])"
        names = join_items([repr(p) for p in self.non_inferior], REPR_WIDTH - len(head) - len(tail))
        return f"{head}{names}{tail}"

    def __getitem__(self, param: str) -> TuningRiskRow:
        for row in self.rows:
            if row.param == param:
                return row
        raise UnknownNameError(f"No parameter {param!r}; the table has {[r.param for r in self.rows]!r}.")

    @property
    def non_inferior(self) -> tuple[str, ...]:
        """Parameters that may be left at their default (``H0`` rejected after Holm)."""
        return tuple(r.param for r in self.rows if r.non_inferior)

    def table(self) -> str:
        """The result as a fixed-width text table (Tables 5 and 6 of the paper side by side).

        ``pairs`` counts all paired runs (``d`` and ``s`` use them all), ``excl`` those
        without a relative risk (left out of ``d^R``, ``s^R`` and the test).
        """
        head = (f"{'parameter':<24}{'pairs':>6}{'excl':>5}{'d':>10}{'s':>9}{'d^R':>9}"
                f"{'s^R':>9}{'z':>8}{'p':>10}{'p_holm':>10}  H0")
        lines = [head]
        for r in self.rows:
            verdict = "rejected (non-inferior)" if r.non_inferior else "not rejected"
            lines.append(
                f"{r.param:<24}{r.n_pairs:>6}{r.n_excluded:>5}{r.risk_mean:>10.4f}"
                f"{r.risk_std:>9.4f}{r.relative_mean:>9.4f}{r.relative_std:>9.4f}"
                f"{r.test.zstatistic:>8.2f}{r.test.pvalue:>10.2e}{r.pvalue_adjusted:>10.2e}"
                f"  {verdict}"
            )
        lines.append(f"margin {self.margin:g}, Holm-Bonferroni at alpha = {self.alpha:g}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation."""
        return {"margin": json_value(self.margin), "alpha": self.alpha,
                "rows": [r.to_dict() for r in self.rows]}

    def to_frame(self) -> Any:
        """The table as a ``pandas.DataFrame`` indexed by parameter (needs pandas).

        Returns
        -------
        pandas.DataFrame
            One row per :class:`TuningRiskRow`, index ``param``; columns ``n_pairs``,
            ``n_excluded``, ``d``, ``s``, ``d_rel``, ``s_rel``, ``z``, ``p``,
            ``p_holm`` and ``non_inferior`` (the names of :meth:`table`).
        """
        pd = import_optional("pandas", "TuningRiskResult.to_frame")
        records = []
        for r in self.rows:
            records.append({
                "param": r.param, "n_pairs": r.n_pairs, "n_excluded": r.n_excluded,
                "d": r.risk_mean, "s": r.risk_std, "d_rel": r.relative_mean,
                "s_rel": r.relative_std, "z": r.test.zstatistic, "p": r.test.pvalue,
                "p_holm": r.pvalue_adjusted, "non_inferior": r.non_inferior,
            })
        return pd.DataFrame.from_records(records).set_index("param")

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Relative risk per parameter with the margin; see
        :func:`hpinsight.plotting.plot_tuning_risk`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            Passed on to ``plot_tuning_risk`` (it takes none today).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plotting import plot_tuning_risk

        return plot_tuning_risk(self, ax=ax, **kwargs)


def tuning_risk(
    fixed: Mapping[str, ArrayLike],
    free: ArrayLike | Mapping[str, ArrayLike],
    *,
    margin: float = 0.01,
    alpha: float = 0.05,
    zero_method: ZeroMethod = "wilcox",
    method: Method = "auto",
) -> TuningRiskResult:
    """Tuning risk of each parameter from paired fixed/non-fixed runs, with Holm's decisions.

    Parameters
    ----------
    fixed : mapping of str to array-like of shape (n_pairs,)
        Per parameter, the risks (losses, >= 0) of the runs with that parameter fixed
        at its default, one per (dataset, seed).
    free : array-like of shape (n_pairs,), or mapping like ``fixed``
        The risks of the matching runs that tune everything. One array serves all
        parameters when every parameter's pairs share the same non-fixed runs (as in
        the paper's design).
    margin : float, default=0.01
        Non-inferiority margin on the relative risk.
    alpha : float, default=0.05
        Family-wise error rate of the Holm–Bonferroni procedure.
    zero_method, method : see :func:`noninferiority_test`

    Returns
    -------
    TuningRiskResult

    Raises
    ------
    InvalidDataError
        Mismatched lengths, negative or non-finite risks, no parameters.

    Examples
    --------
    >>> import hpinsight as hp
    >>> free = [0.10, 0.20, 0.15, 0.30, 0.05, 0.12]
    >>> result = hp.tuning_risk({"shrinking": [0.10, 0.20, 0.15, 0.30, 0.05, 0.12],
    ...                          "gamma": [0.20, 0.35, 0.15, 0.50, 0.09, 0.20]}, free)
    >>> result.non_inferior
    ('shrinking',)
    """
    func = "tuning_risk"
    if not isinstance(fixed, Mapping) or not fixed:
        raise InvalidDataError(f"{func}: 'fixed' must be a non-empty dict of parameter name "
                               "to the risks of its fixed runs.")
    alpha = check_real(alpha, "alpha", func, low=0.0, high=1.0, low_open=True)
    rows: list[dict[str, Any]] = []
    for name, xf_in in fixed.items():
        if isinstance(free, Mapping) and name not in free:
            raise InvalidDataError(f"{func}: 'free' has no runs for {name!r}.", name=name)
        xnf_in = free[name] if isinstance(free, Mapping) else free
        xf = _risks(xf_in, f"fixed[{name!r}]", func)
        xnf = _risks(xnf_in, f"free for {name!r}", func)
        if xf.size != xnf.size:
            raise InvalidDataError(
                f"{func}: {name!r} has {xf.size} fixed and {xnf.size} non-fixed runs; runs "
                "are paired by (dataset, seed), so the counts must match.", name=name)
        d = xf - xnf
        ok = xnf > 0
        rel = d[ok] / xnf[ok]
        test = noninferiority_test(rel, margin=margin, zero_method=zero_method, method=method)
        rows.append({
            "param": name, "n_pairs": int(xf.size), "n_excluded": int((~ok).sum()),
            "risk_mean": float(d.mean()), "risk_std": _std(d),
            "relative_mean": float(rel.mean()) if rel.size else float("nan"),
            "relative_std": _std(rel), "test": test,
        })
    adjusted, reject = holm_bonferroni([r["test"].pvalue for r in rows], alpha)
    out = tuple(TuningRiskRow(**r, pvalue_adjusted=float(a), non_inferior=bool(rj))
                for r, a, rj in zip(rows, adjusted, reject, strict=True))
    return TuningRiskResult(rows=out, margin=float(margin), alpha=alpha)


def _numbers(values: Any, what: str, func: str) -> NDArray[np.float64]:
    """``values`` as a new 1-D float array; an error naming ``what`` where they are not
    numbers or not one row or column of them (a table would be paired in an order nobody
    chose)."""
    if isinstance(values, str | bytes):
        raise InvalidDataError(f"{func}: {what} must be a sequence of numbers. Got a string, "
                               f"{values!r}.")
    try:
        x = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{func}: {what} must be a sequence of numbers ({exc}).") from None
    if sum(n > 1 for n in x.shape) > 1:  # a row or a column is one sequence; a table is not
        raise InvalidDataError(
            f"{func}: {what} must be one sequence of numbers (a row or a column). Got a "
            f"table of shape {x.shape}; pass one sequence (values.ravel(), if that order is "
            "the one meant).")
    return x.reshape(-1)


def _risks(values: Any, what: str, func: str) -> NDArray[np.float64]:
    x = _numbers(values, what, func)
    if x.size == 0:
        raise InvalidDataError(f"{func}: {what} is empty.")
    if not np.all(np.isfinite(x)):
        raise InvalidDataError(f"{func}: {what} contains NaN or infinite risks; drop those "
                               "pairs from both conditions first.")
    if np.any(x < 0):
        raise InvalidDataError(
            f"{func}: {what} contains negative values. Tuning risk compares losses (lower "
            "is better, >= 0, e.g. 1 - accuracy); convert scores before passing them.")
    return x


def _std(x: NDArray[np.float64]) -> float:
    return float(x.std(ddof=1)) if x.size > 1 else float("nan")
