"""Live importances in optuna-dashboard: one figure and one note per study.

With ``publish="dashboard"`` the Optuna callback (and ``hpinsight watch --publish
dashboard``) shows each refit in optuna-dashboard through its public functions for
user-defined content: ``save_plotly_graph_object`` (the importance bars with their std,
drawn from the same plot data as :func:`hpinsight.plotting.plot_importance`) and
``save_note`` (the study's Markdown note: the decisions' answer, as the report's answer
box gives it, the trials behind it and the model's fit). Both are stored in the study's
system attributes, so a dashboard started on the same storage, in any process, shows
them; a save replaces the one before (the figure under a fixed id, the note as a new
version of the study's note), it never piles up.

The study's note is shared with its users: the summaries are written at its top, one per
objective a callback analyses, and any text below the last summary's closing rule (or a
note that was there before the first summary) is kept.

Publishing runs where a refit's result is published (the callback's background thread,
or ``watch``'s poll loop); a failure is caught and handed to ``on_error`` and the study
goes on.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from .._decision_result import answer_groups, member_note, no_matters_line
from .._fanova_result import VERDICTS, among_best_label
from .._shared import NO_CLEAR_SIGNAL, fmt_r2, fmt_share, no_signal_words
from ..exceptions import InvalidArgumentError

if TYPE_CHECKING:
    from .._decision_result import DecisionResult
    from .._fanova_result import FanovaResult
    from .._sampling import SamplingRecord
    from .._subspace import SubspaceResult
    from ._live import ImportanceSnapshot

__all__ = ["NOTE_HEADING", "PUBLISH", "DashboardPublisher", "check_publish", "figure_id_for",
           "importance_figure", "require_dashboard", "summary_note"]

#: Where a live summary can be published: the study's user attribute, or that and
#: optuna-dashboard's figure and note.
PUBLISH = ("attrs", "dashboard")

#: Every summary note starts with this (and so is told apart from a user's note).
NOTE_HEADING = "### hpinsight: which parameters matter"
#: Ends the summary; what a user writes below it is kept.
NOTE_END = "\n\n---\n\n"
#: Effects shown in the figure.
TOP = 10
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")

#: ``on_error(exc, when, log)``: keep ``exc``; ``log`` says whether to log it.
ErrorHook = Callable[[Exception, str, bool], None]


def require_dashboard(caller: str) -> None:
    """Raise an ImportError naming the ``dashboard`` extra unless optuna-dashboard and
    plotly can be imported (without importing them: that takes most of a second).

    Parameters
    ----------
    caller : str
        What needs them, e.g. ``"ImportanceCallback(publish='dashboard')"``.
    """
    for module in ("optuna_dashboard", "plotly"):
        if importlib.util.find_spec(module) is None:
            raise ImportError(
                f"{caller} needs the optional dependency {module!r}, which is not installed. "
                'Install it with: pip install "hpinsight[dashboard]"')


def check_publish(value: Any, func: str) -> Literal["attrs", "dashboard"] | None:
    """The ``publish`` option of ``func`` checked: ``"attrs"``, ``"dashboard"`` or None
    (True and False, its earlier spelling, mean ``"attrs"`` and None). ``"dashboard"``
    needs optuna-dashboard and plotly, checked here (:func:`require_dashboard`)."""
    if value is True:
        return "attrs"
    if value is False or value is None:
        return None
    if value not in PUBLISH:
        raise InvalidArgumentError(
            f"The 'publish' parameter of {func} must be 'attrs' (the study's user attribute), "
            "'dashboard' (that, plus a figure and a note in optuna-dashboard) or None "
            f"(nothing). Got {value!r} instead.", argument="publish", function=func)
    if value == "dashboard":
        require_dashboard(f"{func}(publish='dashboard')")
    return "dashboard" if value == "dashboard" else "attrs"


def figure_id_for(summary_key: str) -> str:
    """The dashboard's id of the figure published for ``summary_key`` (an HTML id: the
    key with every run of other characters made a hyphen), so that callbacks on
    different objectives keep a figure each.

    Examples
    --------
    >>> figure_id_for("hpinsight:importance:objective 1")
    'hpinsight-importance-objective-1'
    """
    return re.sub(r"[^A-Za-z0-9_.]+", "-", summary_key).strip("-")


def importance_figure(result: FanovaResult, *, n_trials: int | None = None) -> Any:
    """The plotly figure of ``result``'s importances: the bars and std whiskers of
    :func:`hpinsight.plotting.importance_plot_data` (top ``TOP`` effects).

    Parameters
    ----------
    result : FanovaResult
    n_trials : int, optional
        Trials behind it, for the title (default: ``result.n_trials``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    from ..plotting._importance_data import importance_plot_data
    from ..plotting._plotly import plotly_importance

    n = result.n_trials if n_trials is None else n_trials
    spread = "trees" if result.surrogate.kind != "gp" else (
        "draws" if not result.n_refits else "draws and refits")
    name = "" if result.objective_name == "objective" else f" of {result.objective_name}"
    return plotly_importance(importance_plot_data(result, top=TOP),
                             title=f"Importance{name} after {n} trials (hpinsight)",
                             spread=spread, caller="the dashboard figure")


def summary_note(
    result: FanovaResult, snapshot: ImportanceSnapshot, decisions: DecisionResult | None,
) -> str:
    """The Markdown summary of one refit: the decisions' answer (what matters, what is
    small but real, ..., what you can stop tuning), each group in the words of the
    report's answer box, then the trials behind it and the model's fit.

    Parameters
    ----------
    result : FanovaResult
        The refit's analysis.
    snapshot : ImportanceSnapshot
        Its summary (trial counts, best value, time).
    decisions : DecisionResult or None
        One decision per parameter (:attr:`SubspaceResult.decisions` of the latest
        ``shrink_to="auto"`` check, else :func:`hpinsight._decisions.decide` of
        ``result``). None for a capped ``result`` without a check: the note then gives
        its verdicts among the best trials, and says that stopping is not judged.

    Returns
    -------
    str
        Starts with ``NOTE_HEADING``; no horizontal rule inside.
    """
    lines = [NOTE_HEADING if result.objective_name == "objective"
             else f"{NOTE_HEADING} for {_md(result.objective_name)}", ""]
    if result.is_constant:
        lines.append("Every trial has the same value: there is nothing to explain."
                     if result.cap_value is None else
                     "Every trial among the best has the same value once capped: there is "
                     "nothing to explain there.")
    elif decisions is None:
        lines += _among_best_lines(result)
    else:
        nothing = no_matters_line(decisions)
        if nothing is not None:
            lines.append(f"- **Matters:** {_md(nothing)}")
        for _, heading, members in answer_groups(decisions):
            lines.append(f"- **{_md(heading)}:** " + "; ".join(
                f"{_md(d.param)} {_md(member_note(d))}".rstrip() for d in members) + ".")
        # costs were judged: against one margin, or each objective's (a decision over
        # several objectives has none of its own, and said "not judged" under "auto")
        judged = math.isfinite(decisions.margin) or any(
            math.isfinite(each.margin) for each in decisions.objectives.values())
        if not decisions.in_state("fix", "fixed"):
            lines.append("- **You can stop tuning:** " + (
                "none yet." if judged else
                "not judged here: that needs each parameter's cost of fixing "
                "(`shrink_to=\"auto\"`, or `hpinsight report`)."))
    fit = fmt_r2(result.fit_r2)
    model = ("Gaussian process fit (leave-one-out R²)" if result.surrogate.kind == "gp"
             else "forest fit (out-of-bag R²)")
    decided = ("" if decisions is None or decisions.n_trials == snapshot.n_trials
               else f"; decisions on the first {decisions.n_trials}")
    lines += [
        "",
        f"{snapshot.n_trials} trials analysed ({snapshot.n_excluded} left out){decided}; "
        f"{snapshot.best_text()}; {model} {fit}; updated {snapshot.created}.",
    ]
    return "\n".join(lines)


def _among_best_lines(result: FanovaResult) -> list[str]:
    """A capped refit's main effects by verdict, and why stopping is not judged: a
    capped analysis calls nothing nothing without the analysis of all trials beside it
    (:meth:`FanovaResult.beside`), and no cost of fixing was estimated. Where more than
    a quarter of its refits find no signal, every verdict is uncertain and its shares are fractions
    of next to nothing: the note says so and quotes none."""
    where = among_best_label(result)
    lines = []
    if result.signal_doubtful:
        lines.append(f"- **{_md(where[0].upper() + where[1:])}:** {NO_CLEAR_SIGNAL} "
                     f"({no_signal_words(result.n_flat_refits, result.n_refits)}); "
                     "no effect is judged there yet.")
    else:
        for said, heading in ((VERDICTS[0], "Matters"), (VERDICTS[1], "Uncertain")):
            members = [i for i in result.ranking(order=1) if i.verdict == said]
            if members:
                lines.append(f"- **{heading} {_md(where)}:** " + ", ".join(
                    f"{_md(i.params[0])} ({fmt_share(i.mean)})" for i in members) + ".")
    lines.append("- **You can stop tuning:** not judged here: that takes the analysis of "
                 "all trials beside the capped one (`shrink_to=\"auto\"`, or "
                 "`hpinsight report`).")
    return lines


def _md(text: str) -> str:
    """``text`` with Markdown's special characters escaped (a parameter named
    ``a_b*`` shows as written)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def merged_note(current: str, summary: str) -> str:
    """The study's new note: ``summary`` in place of the summary with its heading, the
    summaries of other objectives as they were (callbacks on different objectives share
    the study's note), and below the last one's closing rule whatever a user wrote (the
    text below it, or a note without a summary).

    Examples
    --------
    >>> old = f"{NOTE_HEADING}\\nA{NOTE_END}{NOTE_HEADING} for b\\nB{NOTE_END}mine"
    >>> for part in merged_note(old, f"{NOTE_HEADING} for b\\nB, later").split(NOTE_END):
    ...     print(part.splitlines()[-1])
    A
    B, later
    mine
    """
    sections: list[str] = []
    kept = current
    while kept.startswith(NOTE_HEADING):
        section, _, kept = kept.partition(NOTE_END)
        sections.append(section)
    heading = summary.partition("\n")[0]
    same = [i for i, section in enumerate(sections) if section.partition("\n")[0] == heading]
    if same:
        sections[same[0]] = summary
    else:
        sections.append(summary)
    return NOTE_END.join(sections + ([kept] if kept.strip() else []))


class DashboardPublisher:
    """Save a refit's figure and note into a study for optuna-dashboard; never raises.

    Parameters
    ----------
    summary_key : str
        The summary's user attribute; names the figure (:func:`figure_id_for`).
    on_error : callable, optional
        ``on_error(exc, when, log)``: called with each failure; ``log`` is True for the
        first of a run of failures only (the next success starts a new run).
    logger : logging.Logger, optional
        Where a failure goes when there is no ``on_error``.
    """

    def __init__(self, summary_key: str, *, on_error: ErrorHook | None = None,
                 logger: logging.Logger | None = None) -> None:
        self.figure_id = figure_id_for(summary_key)
        self.on_error = on_error
        self.logger = logger or logging.getLogger(__name__)
        self._lock = threading.Lock()  # one save at a time: a note is read, then written
        self._failing = False

    def publish(
        self, study: Any, result: FanovaResult, snapshot: ImportanceSnapshot, *,
        sampling: SamplingRecord | None = None, subspace: SubspaceResult | None = None,
    ) -> bool:
        """Save the figure and the note of one refit into ``study``.

        Returns
        -------
        bool
            True if both were saved; False if it failed (reported to ``on_error``).
        """
        try:
            with self._lock:
                import optuna_dashboard

                from .._decisions import decide

                # a capped refit alone decides nothing: that takes all trials (decide)
                decisions = subspace.decisions if subspace is not None else (
                    None if result.cap_value is not None else decide(result, sampling=sampling))
                optuna_dashboard.save_plotly_graph_object(
                    study, importance_figure(result, n_trials=snapshot.n_trials),
                    graph_object_id=self.figure_id)
                summary = summary_note(result, snapshot, decisions)
                current = optuna_dashboard.get_note(study)
                note = merged_note(current, summary)
                if note != current:
                    optuna_dashboard.save_note(study, note)
                self._failing = False
            return True
        except Exception as exc:  # never into the study
            first = not self._failing
            self._failing = True
            when = "while publishing to optuna-dashboard"
            try:
                if self.on_error is not None:
                    self.on_error(exc, when, first)
                elif first:
                    self.logger.warning("hpinsight: %s: %s: %s (the optimization goes on)",
                                        when, type(exc).__name__, exc)
            except Exception:  # pragma: no cover - reporting itself failed; stay silent
                pass
            return False
