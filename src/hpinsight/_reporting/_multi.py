"""A report of a study of several objectives: a section per objective and one for
reaching the Pareto front, and one set of decisions that is safe for every objective.

Each section is the single-objective :class:`~hpinsight._reporting.Report` of one
objective (or of the front, :mod:`hpinsight._pareto`); what can be fixed is decided over
all objectives at once (:mod:`hpinsight._joint`), and that one set of decisions is what
the page's answer, the JSON's ``decisions`` and the terminal table show.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._joint import front_history
from .._optional import import_optional
from .._pareto import FRONT
from .._shared import REPR_WIDTH, clip_text, join_items
from ..exceptions import HPInsightError, InvalidDataError
from ..surrogates import GP, Forest, describe

if TYPE_CHECKING:
    from pathlib import Path

    from .._decision_result import DecisionResult
    from .._history import TrialHistory
    from .._subspace import SubspaceResult

#: A single-objective :class:`~hpinsight._reporting.Report` (not imported: the report
#: module builds this one, and an import back would be a circle).
Report = Any

__all__ = ["MultiObjectiveReport", "multi_report"]

#: The note every multi-objective report carries about the front's section.
FRONT_NOTE = ("The Pareto front's section shows what decides whether a trial reaches the "
              "front; it decides nothing about fixing: a parameter that moves trials along "
              "the front (trading one objective for another) shows no effect on reaching "
              "it, yet fixing it would lose part of the front.")


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class MultiObjectiveReport:
    """What hpinsight found in a study of several objectives (see :func:`hpinsight.report`).

    There is no ``plot``: the report is many figures, drawn into the page by
    :meth:`html` (or from the held results: ``report.sections["loss"].result.plot()``).

    Attributes
    ----------
    title : str
    source : str
        Where the trials came from.
    objectives : tuple of str
        The objectives' names, in the study's order.
    sections : dict of str to Report
        One report per objective, keyed by its name, then one for reaching the Pareto
        front (key ``"front"``). Each objective's report holds that objective's own
        suggestion (``report.subspace``, costs in its own units).
    decisions : DecisionResult
        The one decision per parameter, over every objective: safe to fix only when it
        is safe for each (:mod:`hpinsight._joint`); ``decisions.objectives`` holds each
        objective's own. The page, the JSON and :meth:`table` show these.
    subspace : SubspaceResult or None
        The suggestion over every objective (None when not computed; the notes say why).
    notes : tuple of str
    seed : int or None
    surrogate : GP or Forest
    """

    title: str
    source: str
    objectives: tuple[str, ...]
    sections: dict[str, Report] = field(repr=False)
    decisions: DecisionResult = field(repr=False)
    subspace: SubspaceResult | None = field(repr=False)
    notes: tuple[str, ...]
    seed: int | None
    surrogate: GP | Forest

    def __repr__(self) -> str:
        head = (f"MultiObjectiveReport({clip_text(repr(self.title), 40)}, "
                f"n_trials={self.n_trials}, objectives=[")
        body = join_items([repr(o) for o in self.objectives], max(20, REPR_WIDTH - len(head) - 12))
        fixed = "" if self.subspace is None else f", fixed={len(self.subspace.fixed)}"
        return f"{head}{body}]{fixed})"

    @property
    def n_trials(self) -> int:
        """Trials analysed (those with a finite value in every objective)."""
        return int(self.sections[FRONT].history.n_trials)

    @property
    def front(self) -> Report:
        """The section of reaching the Pareto front."""
        return self.sections[FRONT]

    def to_frame(self) -> Any:
        """Every section's effects, one table: :meth:`Report.to_frame` of each objective
        and of the front, with the section's name in a first column ``objective``.

        Returns
        -------
        pandas.DataFrame
        """
        pd = import_optional("pandas", "MultiObjectiveReport.to_frame")
        frames = []
        for name, rep in self.sections.items():
            frame = rep.to_frame()
            frame.insert(0, "objective", name)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation: the decisions over every objective, and one section
        per objective and for the front, each named.

        Each section is the single-objective document (:meth:`Report.to_dict`) with its
        ``objective`` and without ``decisions`` and ``subspace``: those are decided over
        every objective, here at the top (each objective's own under
        ``decisions.objectives`` and ``subspace.objectives``), so that each number and
        each decision is in the document once.
        """
        sections = {}
        schema = None
        for name, rep in self.sections.items():
            doc = rep.to_dict()
            schema = doc.pop("schema")  # one schema for the document and its sections
            for key in ("decisions", "subspace"):
                doc.pop(key)
            sections[name] = {"objective": name, **doc}
        return {
            "schema": schema,
            "kind": "multi-objective",
            "title": self.title,
            "source": self.source,
            "n_trials": self.n_trials,
            "objectives": list(self.objectives),
            "directions": {o: self.sections[o].history.direction for o in self.objectives},
            "model": {"surrogate": describe(self.surrogate), "seed": self.seed},
            "decisions": self.decisions.to_dict(),
            "subspace": None if self.subspace is None else self.subspace.to_dict(),
            "sections": sections,
            "notes": list(self.notes),
        }

    def table(self) -> str:
        """The decisions as a plain-text table: each objective's share, then the one
        decision (the same as the page and the JSON)."""
        return self.decisions.table()

    def html(self) -> str:
        """The report as one self-contained HTML page (figures embedded; needs matplotlib)."""
        from ._html import render_multi_html

        return render_multi_html(self)

    def save(self, path: str | Path) -> Path:
        """Write the report: the page when ``path`` ends in ``.html`` (or ``.htm``), JSON when
        it ends in ``.json``; any other suffix is an error. Returns the path."""
        from ._save import save

        return save(self, path)


def _shared_label(histories: Mapping[str, TrialHistory]) -> str | None:
    """What the histories are, in words, less each one's objective (an adapter labels
    each ``"study 'x', loss"``), where they agree; else None."""
    stems = {None if h.label is None else h.label.removesuffix(f", {name}")
             for name, h in histories.items()}
    return stems.pop() if len(stems) == 1 else None


def multi_report(
    source: Any,
    histories: Mapping[str, TrialHistory],
    *,
    single: Callable[..., Any],
    title: str | None,
    label: str | None,
    top: int,
    cap_quantile: float,
    surrogate: GP | Forest,
    seed: int | None,
    subspace: bool,
    progress: Callable[[str, int, int], None] | None,
) -> MultiObjectiveReport:
    """Build the report of several objectives (:func:`hpinsight.report` calls this)."""
    where = label or (f"study {source.study_name!r}" if hasattr(source, "study_name")
                      else _shared_label(histories) or "the given trials")
    if FRONT in histories:  # its section would be replaced by the front's, in silence
        raise InvalidDataError(
            f"report: {where} has an objective named {FRONT!r}, the name of the section on "
            "reaching the Pareto front. Rename that objective (the key of its history).")
    front = front_history(histories)
    if front.n_trials < 2:
        raise InvalidDataError(
            f"report: {where} has {front.n_trials} trial(s) with a finite value in every "
            "objective. A report needs at least 2; run the study longer.")
    parts = {**histories, FRONT: front}
    per = 2 + min(top, len(front.space))
    total = per * len(parts) + (1 if subspace else 0)
    done = [0]

    def step_of(name: str) -> Callable[[str, int, int], None] | None:
        if progress is None:
            return None

        def step(stage: str, _done: int, _total: int) -> None:
            progress(f"{name}: {stage}", done[0], total)
            done[0] += 1
        return step

    sections: dict[str, Report] = {}
    for name, h in parts.items():
        one = single(h, label=f"{where}, " + ("reaching the Pareto front" if name == FRONT
                                              else name), top=top, cap_quantile=cap_quantile,
                     surrogate=surrogate, seed=seed, subspace=False, progress=step_of(name))
        assert not isinstance(one, MultiObjectiveReport)  # one history, one objective
        sections[name] = one
    notes = [FRONT_NOTE]
    found = None
    if subspace:
        if progress is not None:
            progress("which parameters could be fixed, for every objective", done[0], total)
        from .._subspace import suggest_subspace

        try:
            found = suggest_subspace(
                dict(histories), fitted={k: sections[k].result for k in histories},
                capped={k: sections[k].capped for k in histories}, top_quantile=cap_quantile,
                surrogate=surrogate, seed=seed)
        except HPInsightError as exc:
            notes.append(f"No subspace suggestion: {exc}")
    if found is not None:
        for name, sub in found.objectives.items():
            sections[name] = replace(sections[name], subspace=sub, decisions=sub.decisions)
        decisions = found.decisions
    else:
        from .._joint import decide_jointly

        decisions = decide_jointly({k: sections[k].decisions for k in histories})
    return MultiObjectiveReport(
        title=title or f"hpinsight report: {where}, {len(histories)} objectives",
        source=where, objectives=tuple(histories), sections=sections, decisions=decisions,
        subspace=found, notes=tuple(notes), seed=seed, surrogate=surrogate)
