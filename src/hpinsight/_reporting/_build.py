"""Build a report: every analysis of a study, computed once, held in one frozen object.

The computation lives in the library's own functions (fANOVA, PDPs, confidence
splitting, subspace suggestions); this module only decides what a report contains.
Rendering (HTML, JSON) is in :mod:`hpinsight._reporting._html`; figures are drawn
from the held results when the page is rendered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._decision_result import DecisionResult
from .._decisions import MAX_PARAMS_FOR_PAIRS, decide, decision_order
from .._fanova import fanova
from .._fanova_result import FanovaResult
from .._history import TrialHistory
from .._optional import import_optional
from .._pdp import PartialDependenceResult, partial_dependence
from .._regions import confidence_split
from .._regions_result import RegionsResult
from .._shared import REPR_WIDTH, clip_text, join_items, json_value
from .._validation import MODEL_KEYWORDS, check_int, check_seed, moved_keywords
from .._warn import collected
from ..adapters import as_history, from_optuna
from ..adapters._doors import as_objectives
from ..exceptions import (
    FewTrialsWarning,
    HPInsightError,
    InvalidArgumentTypeError,
    InvalidDataError,
)
from ..surrogates import GP, Forest, as_surrogate, describe, refuse_fitted
from ._multi import MultiObjectiveReport, multi_report

if TYPE_CHECKING:
    from pathlib import Path

    from .._subspace import SubspaceResult

__all__ = ["Report", "report"]

#: Monte Carlo samples behind each PDP of a report.
PDP_SAMPLES = 500
#: Name and version of the JSON document :meth:`Report.to_dict` returns. The version
#: goes up when a key is removed or changes meaning; new keys may appear within a version.
SCHEMA = "hpinsight.report/2"

#: Report attributes of earlier releases, and what replaced them.
_RENAMED = {"pdps": "regions", "n_trees": "surrogate (an hp.Forest holds n_trees)"}


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class Report:
    """What hpinsight found in one study (see :func:`hpinsight.report`).

    There is no ``plot``: a report is many figures, drawn into the page by
    :meth:`html` (or one by one from the held results: ``report.result.plot()``,
    ``report.regions[name].plot()``, ``report.subspace.plot()``). :meth:`to_frame` is the
    table of effects.

    Attributes
    ----------
    title : str
    source : str
        Where the trials came from (storage and study, or a SMAC run folder).
    history : TrialHistory
    result : FanovaResult
        All trials, main effects and (up to 12 parameters) pairwise interactions.
    capped : FanovaResult
        The best ``cap_quantile`` of trials (Hutter et al. 2014, Sec. 3.3).
    top : tuple of str
        The most important parameters, shown in detail.
    regions : dict of str to RegionsResult
        PDP with confidence bands of each top parameter, split into regions where it
        can be trusted (:func:`hpinsight.confidence_split`).
    subspace : SubspaceResult or None
        Which parameters could be fixed, with the cost of fixing each (None with fewer
        than 10 trials).
    decisions : DecisionResult
        One decision per parameter, which the page, the JSON and the terminal table all
        show: the subspace's when there is one, else from the effects alone (nothing is
        then safe to fix).
    notes : tuple of str
        What could not be computed, and why.
    seed : int or None
    surrogate : GP or Forest
        The model behind every number.
    pdp_samples : int
        Monte Carlo samples behind each PDP.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(40, seed=0)
    >>> history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    >>> rep = hp.report(history, top=1, surrogate=hp.Forest(n_trees=8), subspace=False)
    >>> frame = rep.to_frame()
    >>> frame.loc[0, "params"], list(frame.columns)[-2:]
    ('x', ['capped_mean', 'capped_std'])
    """

    title: str
    source: str
    history: TrialHistory = field(repr=False)
    result: FanovaResult = field(repr=False)
    capped: FanovaResult = field(repr=False)
    top: tuple[str, ...]
    regions: dict[str, RegionsResult] = field(repr=False)
    subspace: SubspaceResult | None = field(repr=False)
    decisions: DecisionResult = field(repr=False)
    notes: tuple[str, ...]
    seed: int | None
    surrogate: GP | Forest
    pdp_samples: int = 500

    def __getattr__(self, name: str) -> Any:
        if name in _RENAMED:
            raise AttributeError(f"Report.{name} is now Report.{_RENAMED[name]}")
        raise AttributeError(f"'Report' object has no attribute {name!r}")

    def __repr__(self) -> str:
        tops = [(n, f"={self.result.importance(n).mean:.3f}") for n in self.top]
        keep = ("" if self.subspace is None
                else f", keep={len(self.subspace.keep)}/{len(self.history.space)}")
        body = (f", n_trials={self.history.n_trials}, surrogate={self.surrogate.kind!r}{keep}, "
                f"notes={len(self.notes)}, top=[")
        title = clip_text(repr(self.title), 40)
        head = f"Report({title}{body}"
        return f"{head}{join_items(tops, REPR_WIDTH - len(head) - 2)}])"

    @property
    def incumbent(self) -> dict[str, Any]:
        """The best trial's configuration."""
        return dict(self.history.best()[1])

    def to_frame(self) -> Any:
        """The effects of the analysis of all trials, with the capped analysis beside them.

        Returns
        -------
        pandas.DataFrame
            :meth:`FanovaResult.to_frame` of :attr:`result` (one row per effect,
            largest first) plus ``capped_mean`` and ``capped_std``: the same effect
            among the best trials (:attr:`capped`; NaN for interactions, which the
            capped analysis does not compute).
        """
        import_optional("pandas", "Report.to_frame")
        frame = self.result.to_frame()
        # by name and order: a pair (lr, wd) and a parameter named "lr x wd" are one text
        capped = {(" x ".join(i.params), len(i.params)): i for i in self.capped.ranking()}
        keys = list(zip(frame["params"], frame["order"], strict=True))
        frame["capped_mean"] = [capped[k].mean if k in capped else float("nan") for k in keys]
        frame["capped_std"] = [capped[k].std if k in capped else float("nan") for k in keys]
        return frame

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation of every number the report shows.

        The same document whether written by :meth:`save`, ``hpinsight report --json``
        or the demo; its first key, ``"schema"``, names it and its version
        (``SCHEMA``). The README lists the keys.
        """
        trial_id, config, value = self.history.best()
        return {
            "schema": SCHEMA,
            "title": self.title,
            "source": self.source,
            "n_trials": self.history.n_trials,
            "excluded": dict(self.history.excluded),
            "direction": self.history.direction,
            "best": {"trial": trial_id, "value": value,
                     "params": {k: json_value(v) for k, v in config.items()}},
            "model": {"surrogate": describe(self.surrogate), "n_draws": self.result.n_draws,
                      "fit_r2": json_value(self.result.fit_r2), "seed": self.seed},
            "fanova": self.result.to_dict(),
            "fanova_capped": self.capped.to_dict(),
            "top": list(self.top),
            "regions": {name: {"pd": tree.pd.to_dict(), "tree": tree.to_dict(),
                               "incumbent_region": list(tree.leaf_for(config).conditions)
                               if _routable(tree, config) else None}
                        for name, tree in self.regions.items()},
            "decisions": self.decisions.to_dict(),
            "subspace": None if self.subspace is None else self.subspace.to_dict(),
            "sampling": (None if self.history.sampling is None
                         else self.history.sampling.to_dict()),
            "inactive": self.inactive_counts(),
            "notes": list(self.notes),
        }

    def table(self) -> str:
        """The decisions as a plain-text table for a terminal (what the demo prints): the
        same shares and decisions as the page and the JSON."""
        return self.decisions.table()

    def inactive_counts(self) -> dict[str, int]:
        """Per conditional parameter, in how many analysed trials it was inactive."""
        return {n: int(c) for n, c in self.result.n_inactive.items() if c}

    def html(self) -> str:
        """The report as one self-contained HTML page (figures embedded; needs matplotlib)."""
        from ._html import render_html

        return render_html(self)

    def save(self, path: str | Path) -> Path:
        """Write the report: the page when ``path`` ends in ``.html`` (or ``.htm``), JSON when
        it ends in ``.json``; any other suffix is an error. Returns the path."""
        from ._save import save

        return save(self, path)


@moved_keywords({**MODEL_KEYWORDS, "source": "history=... (the first argument)"})
def report(
    history: TrialHistory | Any,
    *,
    title: str | None = None,
    label: str | None = None,
    top: int = 3,
    cap_quantile: float = 0.25,
    surrogate: GP | Forest | None = None,
    seed: int | None = 0,
    subspace: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
    objective: int | str | None = None,
) -> Report | MultiObjectiveReport:
    """Analyse a finished (or running) study for a report.

    Parameters
    ----------
    history : TrialHistory, optuna.Study or mapping of str to TrialHistory
        The trials (for a SMAC run: ``hp.adapters.from_smac(...)`` or
        ``hpinsight.integrations.smac.load_run(path)``). A study of several objectives
        (or a mapping of objective names to histories of the same trials) gives a
        :class:`MultiObjectiveReport`: a section per objective and one for reaching the
        Pareto front, and one set of decisions safe for every objective.
    title : str, optional
        Heading of the page (default: from ``label``).
    label : str, optional
        What the trials are, in words (default: the history's
        :attr:`~hpinsight.TrialHistory.label`, which the adapters fill: ``"study NAME"``,
        ``"SMAC run PATH"``).
    top : int, default=3
        Parameters shown in detail (marginals, PDPs with regions).
    cap_quantile : float, default=0.25
        The "good part" of the space for the capped importances.
    surrogate : GP or Forest, default=GP()
        The model behind every number (see :func:`hpinsight.fanova`); it is fitted
        twice, on all trials and on the capped objective, and every analysis of the
        report reads those two fits.
    seed : int, optional, default=0
        Same seed, same report.
    subspace : bool, default=True
        Also suggest which parameters could be fixed (:func:`~hpinsight.suggest_subspace`).
    progress : callable, optional
        Called as ``progress(stage, done, total)`` before each step, with a short
        description of the step and the steps done and to do (a progress display).
    objective : int or str, optional
        For a multi-objective Optuna study, one objective to report alone, by index or
        name (``"values_1"``, a metric name; its direction is taken from the study), or
        ``"front"``: reaching the Pareto front, analysed as each trial's share of trials
        that dominate it. Without it, such a study gets a :class:`MultiObjectiveReport`.
        Reported alone, an objective's decisions are its own: what is safe to fix for
        it may cost another objective. For the front no parameter is called safe to fix
        (a parameter that moves trials along the front shows no effect on reaching it);
        the page says so. A ``TrialHistory`` already holds one value.

    Returns
    -------
    Report or MultiObjectiveReport

    Raises
    ------
    InvalidDataError
        Fewer than two usable trials.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(60, seed=0)
    >>> history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    >>> rep = hp.report(history, top=1)
    >>> rep.top, sorted(rep.to_dict())[:3]
    (('x',), ['best', 'decisions', 'direction'])
    """
    func = "report"
    top = check_int(top, "top", func, minimum=1)
    model = refuse_fitted(as_surrogate(surrogate, func), func,
                          "over all trials and over the capped objective")
    seed = check_seed(seed, func)
    opts: dict[str, Any] = {"surrogate": model, "seed": seed}
    source: Any = history
    histories = None if objective is not None else as_objectives(source, func)
    if histories is not None:  # several objectives: a section each, decided over all
        return multi_report(source, histories, single=report, title=title, label=label,
                            top=top, cap_quantile=cap_quantile, surrogate=model, seed=seed,
                            subspace=subspace, progress=progress)
    if objective is not None and isinstance(source, TrialHistory):
        raise InvalidArgumentTypeError(f"{func}: objective= chooses among an optuna.Study's objectives; a "
                        "TrialHistory holds one already (pass objective= to "
                        "hp.adapters.from_optuna instead).")
    history = (from_optuna(source, objective=objective) if objective is not None
               else as_history(source, func))
    where = label or history.label or "the given trials"  # an adapter's label names the study
    if history.n_trials < 2:
        raise InvalidDataError(
            f"{func}: {where} has {history.n_trials} usable trial(s)"
            f"{'; ' + history.excluded_summary() if history.n_excluded else ''}. A report "
            "needs at least 2 finished trials with a finite value; run the study longer.")
    n_steps = 2 + min(top, len(history.space)) + (1 if subspace else 0)
    done = iter(range(n_steps))

    def step(stage: str) -> None:
        if progress is not None:
            progress(stage, next(done), n_steps)

    notes: list[str] = []
    max_order = decision_order(len(history.space))
    if len(history.space) > MAX_PARAMS_FOR_PAIRS:
        notes.append(f"Interactions were not computed: {len(history.space)} parameters "
                     f"(pairs are computed up to {MAX_PARAMS_FOR_PAIRS}).")
    # the package's warnings become the report's notes, or are reported otherwise (a
    # constant capped objective), not given
    with collected() as warned:
        step("fANOVA of all trials")
        result = fanova(history, max_order=max_order, **opts)
        step(f"fANOVA of the best {cap_quantile:.0%}")
        capped = fanova(history, cap_quantile=cap_quantile, **opts).beside(result)
    names = () if result.is_constant else tuple(
        i.params[0] for i in result.ranking(order=1)[:top])
    regions: dict[str, RegionsResult] = {}
    # fanova's own words where every trial has one configuration (said once for both fits)
    one_configuration = list(dict.fromkeys(
        message for category, message in warned if issubclass(category, FewTrialsWarning)))
    if result.is_constant:
        notes.append("Every trial has the same value: there is no variation to explain.")
    elif one_configuration:
        notes.extend(one_configuration)
    else:
        for name in names:
            step(f"partial dependence of {name}")
            pd: PartialDependenceResult = partial_dependence(result, params=name,
                                                             n_samples=PDP_SAMPLES, seed=seed)
            regions[name] = confidence_split(pd, max_splits=3)
    found = None
    if subspace and history.is_front:
        subspace = False
        notes.append("No parameter is called safe to fix from the Pareto front: a parameter "
                     "that moves trials along the front (trading one objective for another) "
                     "shows no effect on reaching it, yet fixing it would lose the front. "
                     "Report each objective (objective=0, 1, ...) to see what each one needs.")
    if subspace:
        step("which parameters could be fixed")
        try:
            from .._subspace import suggest_subspace

            found = suggest_subspace(history, fitted=result, capped=capped,
                                     top_quantile=cap_quantile, **opts)
        except HPInsightError as exc:
            notes.append(f"No subspace suggestion: {exc}")
    decisions = found.decisions if found is not None else decide(
        result, capped=capped, sampling=history.sampling)
    return Report(
        title=title or f"hpinsight report: {where}", source=where, history=history,
        result=result, capped=capped, top=names, regions=regions, subspace=found,
        decisions=decisions,
        notes=tuple(notes), seed=seed, surrogate=model,
        pdp_samples=PDP_SAMPLES,
    )


def _routable(tree: RegionsResult, config: Mapping[str, Any]) -> bool:
    try:
        tree.leaf_for(config)
    except KeyError:
        return False
    return True
