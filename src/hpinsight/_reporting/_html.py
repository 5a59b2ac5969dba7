"""Render a :class:`~hpinsight._reporting.Report` as one self-contained HTML page.

No computation happens here: figures are drawn from the report's results with the
plotting layer and embedded as inline SVG, so the page needs no network and no files.
The page's frame and style live in ``report.html`` and ``report.css`` beside this
module; the sections are built here from the report's data.
"""

from __future__ import annotations

import ast
import html
import io
import math
import string
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from .._decision_result import (
    CONSTANT,
    EXPLORED,
    FORBIDDEN,
    NEGLIGIBLE_SD,
    NO_SIGNAL_AMONG_BEST,
    OUTSIDE,
    SINGLE,
    UNTRIED,
    UNVARIED,
    ParameterDecision,
    answer_groups,
    fmt_cost,
    fmt_share,
    member_note,
    no_matters_line,
)
from .._fanova_result import (
    INTERVAL_LEVEL,
    INTERVAL_Z,
    MATTERS_SHARE,
    MIN_TRIALS_HELD_OUT,
    NEGLIGIBLE_SHARE,
    UNSHOWN_LEVEL,
    VERDICTS,
)
from .._optional import import_optional
from .._sampling import action_label
from .._shared import (
    NO_CLEAR_SIGNAL,
    fmt_best,
    fmt_r2,
    fmt_value,
    no_signal_words,
    taken_out_words,
)
from ..surrogates import GP, Forest
from ..surrogates.gp import FLAT_REFIT

if TYPE_CHECKING:
    from .._decision_result import DecisionResult
    from .._fanova_result import FanovaResult
    from .._history import TrialHistory
    from .._regions_result import RegionsResult
    from .._subspace import SubspaceResult

__all__ = ["render_html"]

class Report(Protocol):
    """What the page reads of a :class:`hpinsight.results.Report` (named here, not
    imported, so that the report can render itself without an import circle)."""

    @property
    def title(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def history(self) -> TrialHistory: ...
    @property
    def result(self) -> FanovaResult: ...
    @property
    def capped(self) -> FanovaResult: ...
    @property
    def top(self) -> tuple[str, ...]: ...
    @property
    def regions(self) -> dict[str, RegionsResult]: ...
    @property
    def subspace(self) -> SubspaceResult | None: ...
    @property
    def decisions(self) -> DecisionResult: ...
    @property
    def notes(self) -> tuple[str, ...]: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def surrogate(self) -> GP | Forest: ...
    @property
    def pdp_samples(self) -> int: ...
    def inactive_counts(self) -> dict[str, int]: ...


def _resource(name: str) -> str:
    """A file shipped next to this module (the page template, its style sheet)."""
    from importlib.resources import files

    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def _page() -> string.Template:
    return string.Template(_resource("report.html"))


#: Main effects are all listed; interactions that are not "indistinguishable from nothing"
#: up to this many (the rest are counted under the table, and all are in the JSON).
MAX_INTERACTIONS_SHOWN = 10


def _svg(fig: Any) -> str:
    """The figure as inline SVG with real text (sharp at any zoom and on HiDPI screens,
    searchable, and its tick labels are elements a browser test can measure); heat maps
    stay rasters inside it, at 200 dpi.

    Saved at its own size, without ``bbox_inches="tight"``: every figure is laid out by
    matplotlib's constrained layout, which already keeps titles, legends and labels
    inside it, and the tight box cost one more draw of each figure (a tenth of the
    page's time).

    Drawn once, by the SVG canvas itself, not through ``savefig``: for a figure with a
    layout engine ``savefig`` first draws it without output to lay it out, then draws it
    again for the file with the layout held, so every artist was drawn twice and every
    text measured twice (the cache of text extents is per renderer). One draw that lays
    the figure out as it goes, as a window's canvas does, writes the same SVG to the byte
    (the demo's page, checked) in three quarters of the time. ``savefig``'s own settings
    (``savefig.*`` in matplotlib's rcParams) do not apply to the page's figures."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buf = io.StringIO()
    with _svg_settings():
        fig.set_dpi(200)  # the resolution of rasters inside the SVG (heat maps)
        canvas: Any = FigureCanvasSVG(fig)
        canvas.print_svg(buf, metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):].strip()  # without the XML prolog and DOCTYPE


#: What the SVG canvas reads from matplotlib's settings while it draws: text as text,
#: and ids that are the same in every run (no random salt).
_SVG_SETTINGS = {"svg.fonttype": "none", "svg.hashsalt": "hpinsight"}
_svg_lock = threading.Lock()


@contextmanager
def _svg_settings() -> Iterator[None]:
    """:data:`_SVG_SETTINGS` in matplotlib's settings while a page's figure is drawn, and
    the user's values of those keys after.

    ``matplotlib.rc_context`` copies every setting in and every one back out: a setting
    the user changed meanwhile (``font.size`` in their own thread) was undone, and two
    pages drawn in two threads at once crossed their restores and left these two keys
    at ours for good. Here only the two keys are touched, one page's figure at a time,
    and each is put back only where it still holds ours."""
    import matplotlib

    settings: Any = matplotlib.rcParams
    with _svg_lock:
        saved = {key: settings[key] for key in _SVG_SETTINGS}
        settings.update(_SVG_SETTINGS)
        try:
            yield
        finally:
            for key, value in saved.items():
                if settings[key] == _SVG_SETTINGS[key]:
                    settings[key] = value


def _figure(draw: Any, size: tuple[float, float], caption: str) -> str:
    """One figure drawn on a stand-alone matplotlib Figure (no pyplot, no backend), as
    inline SVG with its caption.

    Drawing on :class:`matplotlib.figure.Figure` directly leaves the user's backend and
    pyplot's figure list alone, in a notebook as in a script.
    """
    mfigure = import_optional("matplotlib.figure", "Report.html")
    fig = mfigure.Figure(figsize=size, layout="constrained")
    draw(fig.subplots())
    return (f'<figure role="img" aria-label="{html.escape(caption)}">{_svg(fig)}'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def render_html(report: Report) -> str:
    """The page of one objective."""
    import_optional("matplotlib.figure", "Report.html")
    esc = html.escape
    tagline = "Which hyperparameters matter, how they act, and which ones you can stop tuning."
    if report.source not in report.title:  # a custom title: say what was analysed
        tagline = f"{report.source}. {tagline}"
    parts = [f"<h1>{esc(report.title)}</h1>", f'<p class="sub">{esc(tagline)}</p>']
    parts.append(_cards(report))
    parts.extend(_summary(report))
    parts.extend(_sampling_section(report))
    parts.extend(_analysis(report))
    parts.extend(_advice("Which ones you can stop tuning", report.subspace is not None,
                         report.decisions, lambda name: _details(report, name)))
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in report.notes)
                     + "</ul>")
    parts.append("<h2>Reproduce in Python</h2><pre>" + esc(_snippet(report)) + "</pre>")
    return _page().substitute(title=esc(report.title), css=_resource("report.css"),
                              body="\n".join(parts))


def render_multi_html(report: Any) -> str:
    """The page of a study of several objectives (a
    :class:`~hpinsight._reporting._multi.MultiObjectiveReport`): the one answer over every
    objective, what can be fixed with each objective's cost, then a section per objective
    and one for reaching the Pareto front."""
    import_optional("matplotlib.figure", "MultiObjectiveReport.html")
    esc = html.escape
    front = report.front
    objectives = ", ".join(f"{o} ({report.sections[o].history.direction})"
                           for o in report.objectives)
    parts = [f"<h1>{esc(report.title)}</h1>",
             f'<p class="sub">{esc(report.source)}: {len(report.objectives)} objectives, '
             f"{esc(objectives)}. Which hyperparameters matter, for each objective and for "
             "reaching the Pareto front, and which ones you can stop tuning for all of "
             "them.</p>"]
    parts.append('<nav class="sections">Sections: ' + " · ".join(
        f'<a href="#{_anchor(name)}">{esc(_section_name(name))}</a>'
        for name in report.sections) + "</nav>")
    parts.extend(_summary(front, decisions=report.decisions))
    parts.extend(_sampling_section(front))
    parts.extend(_advice("Which ones you can stop tuning, for every objective",
                         report.subspace is not None, report.decisions,
                         lambda name: _joint_details(report, name)))
    for name, section in report.sections.items():
        parts.append(f'<section id="{_anchor(name)}" data-objective="{esc(name)}">'
                     f"<h2>{esc(_section_name(name))}</h2>")
        parts.append(_cards(section))
        parts.extend(p.replace("<h2>", "<h3>").replace("</h2>", "</h3>")
                     for p in _analysis(section))
        parts.append("</section>")
    notes = [*report.notes, *(f"{name}: {n}" for name, s in report.sections.items()
                              for n in s.notes)]
    parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    parts.append("<h2>Reproduce in Python</h2><pre>" + esc(_multi_snippet(report)) + "</pre>")
    return _page().substitute(title=esc(report.title), css=_resource("report.css"),
                              body="\n".join(parts))


def _section_name(name: str) -> str:
    from .._pareto import FRONT

    return "Reaching the Pareto front" if name == FRONT else f"Objective {name}"


def _anchor(name: str) -> str:
    return "section-" + "".join(c if c.isalnum() else "-" for c in name)


def _cards(report: Report) -> str:
    """The cards under a heading: trials, what was left out, the best value, the fit."""
    esc = html.escape
    h = report.history
    r = report.result
    trial_id, _, best_value = h.best()
    excluded = ", ".join(f"{n} {why}" for why, n in h.excluded.items()) or "none"
    oob = fmt_r2(r.fit_r2)
    refits = r.n_refits
    also = f", {refits} hyperparameter refits of the fit to all trials" if refits else ""
    fit_card = (f"Gaussian process fit (leave-one-out R²)<b>{oob}</b>{r.n_draws} bootstrap draws{also}"
                if r.surrogate.kind == "gp" else f"forest fit (out-of-bag R²)<b>{oob}</b>{r.n_draws} trees")
    return ('<div class="cards">'
            f"<div class=card>trials analysed<b>{h.n_trials}</b></div>"
            f"<div class=card>left out<b>{h.n_excluded}</b>{esc(excluded)}</div>"
            f"<div class=card>best {esc(h.objective_name)}<b>{fmt_best(best_value)}</b>"
            f"trial {trial_id} ({esc(h.direction)})</div>"
            f"<div class=card>{fit_card}</div></div>")


def _spread(report: Report) -> str:
    r = report.result
    refits = r.n_refits
    return ((("draws and hyperparameter refits" if refits else "draws") + " of the Gaussian process")
            if r.surrogate.kind == "gp" else "trees")


def _analysis(report: Report) -> list[str]:
    """What matters and how it acts: the table of effects and the figures."""
    from .. import plotting

    esc = html.escape
    h = report.history
    r = report.result
    _, best_config, _ = h.best()
    spread = _spread(report)
    parts = ["<h2>What matters</h2>"]
    parts.extend(_effects_table(report, spread))
    parts.append('<div class="grid">' + _figure(
        lambda ax: plotting.plot_importance(r, ax=ax, top=8, capped=report.capped),
        (6.0, 4.0), f"The largest effects (the title says how many of all), over all "
                    f"trials and over the best {_quantile(report)}"
                    + (f"; there {no_signal_words(report.capped.n_flat_refits, report.capped.n_refits)}, "
                       "so their shares, of next to nothing, are not drawn"
                       if report.capped.signal_doubtful else ""))
        + "</div>")
    held = _held(report)
    if held:
        # of the trials it was active in: a conditional parameter inactive in some was
        # counted as varied there ("varied in 60 of 150" where 57 were)
        inactive = report.inactive_counts()
        parts.append('<p class="note">Held fixed by a restriction in some trials, so their '
                     "shares rest on the trials where they varied: " + "; ".join(
                         f"{esc(n)} varied in {h.n_trials - inactive.get(n, 0) - k} of "
                         f"{h.n_trials}" for n, k in held.items()) + ".</p>")

    if report.top:
        parts.append("<h2>How the top parameters act</h2><div class=grid>")
    for name in report.top:
        marks = {"incumbent": best_config.get(name)}
        default = h.space[name].default
        if default is not None:
            marks["default"] = default
        said = ("its declared default and " if default is not None else "")
        parts.append(_figure(
            lambda ax, n=name, m=marks: plotting.plot_marginal(r, n, ax=ax, marks=m),
            (4.6, 3.2), f"{name}: the predicted {h.objective_name} averaged over all other "
                        f"parameters (mean ± std over {spread}); lines mark {said}the best "
                        f"trial's value"))
    if report.top:
        parts.append("</div>")
    # the interactions the table resolves: an uncertain one (say, a pair that came back
    # when it was taken out of the data) is not drawn as if it were known
    pairs = ([i for i in r.ranking(order=2) if i.verdict == "resolved"][:2]
             if r.max_order >= 2 and not r.is_constant else [])
    if pairs:
        parts.append("<h2>Strongest interactions</h2><div class=grid>")
        for imp in pairs:
            a, b = imp.params
            parts.append(_figure(lambda ax, a=a, b=b: plotting.plot_interaction(r, a, b, ax=ax),
                                 (4.8, 3.8), f"{a} and {b} together: the predicted "
                                             f"{h.objective_name} averaged over the others"))
        parts.append("</div>")

    if report.regions:
        parts.append("<h2>Partial dependence you can trust</h2>"
                     '<p class="note">Partial dependence with 95 % bands (Moosbauer et al. '
                     "2021), split into regions of the space where the model is more "
                     "certain; the best trial's region is drawn thicker.</p><div class=grid>")
        for name, tree in report.regions.items():
            parts.append(_figure(lambda ax, t=tree: plotting.plot_regions(
                t, ax=ax, highlight=dict(best_config)), (8.5, 3.4),
                f"{name}: partial dependence by confidence region"))
        parts.append("</div>")
    return parts


def _advice(heading: str, costed: bool, decisions: DecisionResult, details: Any) -> list[str]:
    """The "stop tuning" section: the table, one row per parameter with ``details(name)``
    behind a toggle, and the rules behind it (``costed``: whether the cost of fixing
    was estimated)."""
    esc = html.escape
    items = "".join(_advice_row(decisions[d.param], details(d.param)) for d in decisions)
    note = ([] if costed else
            ['<p class="note">The cost of fixing a parameter was not estimated (see the notes '
             "below), so none is called safe to fix yet.</p>"])
    return [f"<h2>{esc(heading)}</h2>", *note, f"<table class=advice><tr><th>parameter</th><th>decision</th><th>why</th>"
            f"</tr>{items}</table>",
            '<p class="note">The rules behind every decision: '
            + " ".join(esc(rule) for rule in decisions.rules) + "</p>"]


def _summary(report: Report, decisions: DecisionResult | None = None) -> list[str]:
    """The answer: every parameter in exactly one group of its decision (what matters,
    what is small but real, what you can stop tuning, ...), in the decisions' own order
    (``decisions``: those over several objectives, else the report's own)."""
    esc = html.escape
    r = report.result
    constant = decisions is None and r.is_constant
    decisions = decisions or report.decisions
    # every parameter in its group, also where every trial has the same value
    lines = (["<p>Every trial has the same value: there is nothing to explain.</p>"]
             if constant else [])
    for state, heading, members in answer_groups(decisions):
        lines.append(f'<p data-state="{state}"><b>{esc(heading)}:</b> '
                     + "; ".join(f'<span class="param" data-param="{esc(d.param)}">'
                                 f"{esc(d.param)} {esc(member_note(d))}".rstrip() + "</span>"
                                 for d in members) + ".</p>")
    nothing = no_matters_line(decisions)
    if nothing is not None:
        lines.insert(0, f"<p><b>Matters:</b> {esc(nothing)}</p>")
    lines.append("<p>Why, parameter by parameter, is below.</p>")
    return ['<div class="answer">' + "".join(lines) + "</div>"]


def _effects_table(report: Report, spread: str) -> list[str]:
    """Every main effect, and the interactions that are not nothing; what is left out is
    counted, not dropped silently."""
    esc = html.escape
    r = report.result
    q = _quantile(report)
    mains = list(r.ranking(order=1))
    pairs = list(r.ranking(order=2)) if r.max_order >= 2 else []
    shown_pairs = [i for i in pairs if i.verdict != VERDICTS[2]]
    rest = len(shown_pairs) - MAX_INTERACTIONS_SHOWN
    shown_pairs = shown_pairs[:MAX_INTERACTIONS_SHOWN]

    def row(i: Any) -> str:
        capped = (_capped(report, i.params) if len(i.params) <= report.capped.max_order
                  else '<span class="na">main effects only</span>')
        css = i.verdict.split()[0]
        # an interaction judged against what came back when it was taken out says so
        back = ("" if i.regrown is None or i.verdict == "resolved" or i.regrown <= (i.shadow or 0.0)
                else f'<span class="why">: {fmt_share(i.regrown)} came back without it</span>')
        if i.before_pruning is not None:  # its share is 0 because it was taken out
            back += f'<span class="why">: {taken_out_words(i.before_pruning)}</span>'
        return (f"<tr><td>{esc(' x '.join(i.params))}</td><td>{fmt_share(i.mean)} ± "
                f"{fmt_share(i.std)}</td><td class=\"verdict {css}\">{esc(i.verdict)}{back}</td>"
                f"<td>{capped}</td></tr>")

    head = (f"<table class=effects><tr><th>effect</th><th>share of variance</th>"
            f"<th>verdict</th><th>share among the best {q}</th></tr>")
    body = "".join(row(i) for i in mains)
    if shown_pairs:
        body += "<tr><th colspan=4>interactions</th></tr>" + "".join(row(i) for i in shown_pairs)
    out = [head + body + "</table>"]
    counted = []
    if pairs:
        n_nothing = sum(i.verdict == VERDICTS[2] for i in pairs)
        if n_nothing:
            counted.append(f"{n_nothing} of the {len(pairs)} interactions are indistinguishable "
                           "from nothing and not listed")
        if rest > 0:
            counted.append(f"{rest} further interactions are not listed")
    elif len(report.history.space) > 1:
        counted.append("interactions were not computed (see the notes)")
    for where, res in (("over all trials", r), (f"among the best {q}", report.capped)):
        if res.n_flat_refits and not res.is_constant:  # of a constant objective: no news
            counted.append(f"{where}, {res.n_flat_refits} of the {res.n_refits} hyperparameter refits "
                           f"find no signal (their prediction varies by at most {100 * FLAT_REFIT:g} % "
                           "of the model's), and their shares, of next to nothing, are left out of "
                           "the spreads" + (": the differences between these trials may be noise, "
                                            "and no effect there is judged (every verdict uncertain)"
                                            + ("; the column shows no shares" if res is report.capped
                                               else "")
                                            if res.signal_doubtful else ""))
        pruned = [i for i in res.ranking(order=1) if i.before_pruning is not None]
        if pruned:
            counted.append(f"{where}, {len(pruned)} of the {len(res.space)} parameters were taken "
                           "out of the model: removing each cost its likelihood less than the price "
                           "of a parameter (log(n) / 2 nats on the n trials it is fit on). Their "
                           "shares are what is left to them (a length scale at its bound still "
                           "holds a gentle trend over the range) and their verdicts read the "
                           "share the fit gave them before (at most "
                           f"{fmt_share(max(i.before_pruning or 0.0 for i in pruned))}); a "
                           "trend too cheap to keep is no resolved effect, and being taken out "
                           "is not evidence of doing nothing, so none is resolved")
        if res.signal_unshown and res.model.kind == "forest":
            counted.append(f"{where}, the forest's out-of-bag R² is {fmt_r2(res.fit_r2)}: it "
                           "predicts the trials its trees did not see no better than their "
                           "mean, and no effect there is resolved")
        elif res.signal_unshown and not res.signal_doubtful and not math.isfinite(res.held_out_rank or 0.0):
            counted.append(f"{where}, there are too few trials ({res.n_trials}) to fit the "
                           "hyperparameters on half of them and check the fit on the other half "
                           f"(at least {MIN_TRIALS_HELD_OUT} are needed): the model has not shown "
                           "that it predicts anything, and no effect there is resolved")
        elif res.signal_unshown and not res.signal_doubtful:
            counted.append(f"{where}, the hyperparameter refits, each fit on half of the trials, rank "
                           f"the other half with a median correlation of "
                           f"{_two_apart(res.held_out_rank, res.held_out_bound)}, not above the "
                           f"{_two_apart(res.held_out_bound, res.held_out_rank)} that values unrelated to the parameters "
                           f"exceed {100 * UNSHOWN_LEVEL:g} % of the time: the model has not shown that it "
                           "predicts anything, and no effect there is resolved")
    null = r.shadow_fraction(1)
    pair_null = r.shadow_fraction(2) if shown_pairs else None
    # the best-q column is judged against its own analysis's shadow, printed beside
    top_null = None if report.capped.signal_doubtful else report.capped.shadow_fraction(1)
    here = "" if null is None else f"{fmt_share(null)} here" + (
        "" if pair_null is None else f", {fmt_share(pair_null)} for an interaction") + (
        "" if top_null is None else f", {fmt_share(top_null)} among the best {q}")
    interval = f"{100 * INTERVAL_LEVEL:g} % interval (mean ± {INTERVAL_Z:.3f} std)"
    verdicts = ("<i>indistinguishable from nothing</i>: explains no more than a parameter "
                f"whose values were shuffled among nearby trials ({here}), "
                f"or less than {100 * NEGLIGIBLE_SHARE:g} %, where the trials could not hide "
                f"an effect of {fmt_share(MATTERS_SHARE)} and its {interval} stays below that plus "
                "the null; <i>negligible</i>: the same, but with the interval's lower end above "
                f"the null: an effect the trials show, below {100 * NEGLIGIBLE_SHARE:g} %, which "
                "counts as none; <i>uncertain</i>: more than that, but with the interval's lower end at "
                "or below the null, or where the trials could hide one or the interval does not "
                "stay below; <i>resolved</i>: the rest. An interaction that would be resolved is also "
                "taken out of every trial's value, as fitted, and the model fit again: a real one "
                "is gone, one the model makes up from two parameters that act alone comes back, "
                "and it is judged against the share that came back"
                if null is not None else
                # without shadows (the forest) every verdict is still one of the four
                f"<i>indistinguishable from nothing</i>: explains less than "
                f"{100 * NEGLIGIBLE_SHARE:g} % and its {interval} stays below "
                f"{fmt_share(MATTERS_SHARE)}, with its lower end at 0; <i>negligible</i>: the "
                "same, but with the interval's lower end above 0: an effect the trials show, "
                f"below {100 * NEGLIGIBLE_SHARE:g} %, which counts as none; <i>uncertain</i>: "
                "its interval reaches 0, or reaches "
                f"{fmt_share(MATTERS_SHARE)} below {100 * NEGLIGIBLE_SHARE:g} %; "
                "<i>resolved</i>: the rest")
    out.append(f'<p class="note">Shares of the {"model" if r.surrogate.kind == "gp" else "forest"}'
               f"'s prediction variance over the whole search space, mean ± std over "
               f"{spread}. {verdicts}. The best-{q} column repeats the analysis with the "
               f"objective capped at its best {q} of trials (Hutter et al. 2014, Sec. 3.3); "
               "it has main effects only, and calls one indistinguishable from nothing only "
               "where the analysis of all trials does too (the few trials in the good part "
               "leave an effect there hard to tell from nothing)."
               + ("".join(f" {c[0].upper()}{c[1:]}." for c in counted))
               + " Every effect is in the JSON report.</p>")
    return out


#: Where trials after a restriction carry no mark of it (``SamplingRecord.n_held`` None).
_UNMARKED = ("the latest trials analysed after the restriction do not say they were sampled "
             "under it: the study's sampler is not (or no longer) hpinsight's ShrinkingSampler "
             "(which holds a restriction and marks the trials it holds), or an hpinsight "
             "before 0.1 restricted it. The decisions read such a parameter as tuned.")


def _held(report: Report) -> dict[str, int]:
    """Parameters held fixed in some analysed trials, with how many."""
    record = report.history.sampling
    if record is None or not record.n_held:
        return {}
    return {n: k for n, k in record.n_held.items() if n in report.history.space}


def _advice_row(d: Any, details: str) -> str:
    """One row of the "stop tuning" table: the decision, its sentence, and the numbers
    behind it in a toggle."""
    esc = html.escape
    css = "keep" if d.tuned else "fix"
    toggle = f"<details><summary>numbers</summary>{details}</details>" if details else ""
    objective = "" if d.objective is None else f' data-objective="{esc(d.objective)}"'
    return (f'<tr data-param="{esc(d.param)}" data-state="{d.state}"{objective}>'
            f"<td>{esc(d.param)}</td><td class={css}>{esc(d.action)}</td>"
            f"<td>{esc(d.sentence)}{toggle}</td></tr>")


def _details(report: Report, name: str) -> str:
    """The decision's inputs for one parameter: the cost of fixing it, with where its
    value came from, and what was held fixed."""
    esc = html.escape
    sub = report.subspace
    d = report.decisions[name]
    items = []
    if sub is not None and name in sub.risks:  # the decision's own cost, and its spread
        items.append(
            f"Cost of fixing it at {fmt_value(sub.defaults[name], quote=True)} "
            f"({sub.default_origin(name)}): {fmt_cost(d.cost, sub.margin)} ± "
            f"{fmt_cost(sub.risks[name].std)} in {report.history.objective_name}, at most "
            f"{fmt_cost(d.cost_upper, sub.margin)} in {sub.confidence:.0%} of the model's "
            f"draws; allowed: {fmt_cost(sub.margin)} (a fraction of the spread of the trials "
            "near the best).")
    record = report.history.sampling
    if record is not None and name in record.fixed:
        items.append(
            f"Held at {fmt_value(record.fixed[name], quote=True)} by the restriction in force; "
            f"held by this or an earlier restriction in {record.held(name)} of "
            f"{report.history.n_trials} analysed trials."
            if record.n_held is not None else
            f"Restricted to {fmt_value(record.fixed[name], quote=True)}, but {_UNMARKED}")
    items.append(f"Active in {d.n_active} of {report.history.n_trials} trials; "
                 f"{_grounds(d, report.decisions.margin)}.")
    return "<ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


#: What a decision rests on when that is not one of its effects (``ParameterDecision.grounds``).
_GROUNDS = {
    "cost": "its cost of fixing",
    "size": "an effect's size in objective units",
    "noise": "what the noise could hide",
    "disputed": "the two fits' disagreement about it",
    "missed": "the model's errors on trials left out of its fit",
    "hidden": "how large an effect its trials could hide",
    NO_SIGNAL_AMONG_BEST: ("the analysis among the best trials, where more than a quarter of the "
                           "refits find no signal"),
    CONSTANT: "every trial having the same value",
    FORBIDDEN: "the forbidden clauses it shares with other parameters",
    UNTRIED: "choices of it that no trial tried",
    OUTSIDE: "the value to fix it at lying outside the range its trials ran",
    UNVARIED: "every trial having it at one value",
    SINGLE: "the search space giving it one value",
    EXPLORED: "a trial that explored it doing better than the model predicts",
}


def _two_apart(x: float | None, other: float | None) -> str:
    """``x`` to two decimals, or more (up to six) until it no longer prints equal to
    ``other`` (a correlation of 0.277 against a bound of 0.278 printed "0.28, not above
    the 0.28")."""
    x, other = (math.nan if v is None else v for v in (x, other))
    for digits in range(2, 7):
        if x == other or f"{x:.{digits}f}" != f"{other:.{digits}f}":
            return f"{x:.{digits}f}"
    return f"{x:.6f}"


def _cell(value: Any) -> str:
    """A stored decision's field in a table cell: empty where it is missing or None (a
    restriction written without ``after_trial`` showed "None")."""
    return "" if value is None else str(value)


def _grounds(d: ParameterDecision, margin: float) -> str:
    """What the decision rests on, in words: an effect and its verdict, or another ground;
    and, where that effect is too small in objective units to count, by how much."""
    if d.grounds in _GROUNDS:
        return f"the decision rests on {_GROUNDS[d.grounds]}"
    text = f"its strongest effect ({d.evidence}) is {d.verdict}"
    if d.negligible:
        text += (f", but its standard deviation over the space, "
                 f"{fmt_cost(d.effect_sd, NEGLIGIBLE_SD * margin)}, is at most {NEGLIGIBLE_SD:g} "
                 "of the margin: too small to matter")
    return text


def _joint_details(report: Any, name: str) -> str:
    """The inputs of a decision over several objectives: per objective, the cost of
    fixing the parameter at the common value against that objective's margin, and its
    own decision."""
    esc = html.escape
    sub = report.subspace
    items = []
    if sub is not None:
        items.append(f"Fixed, it would be held at {fmt_value(sub.defaults[name], quote=True)} "
                     f"({sub.default_origin(name)}).")
    for label, own in report.decisions.objectives.items():
        d = own[name]
        line = f"{label}: {d.action}; {_grounds(d, own.margin)}"
        one = None if sub is None else sub.objectives.get(label)
        if one is not None and name in one.risks:
            line += (f"; fixing it costs {fmt_cost(d.cost, one.margin)} ± "
                     f"{fmt_cost(one.risks[name].std)}, at most "
                     f"{fmt_cost(d.cost_upper, one.margin)} in {one.confidence:.0%} of the "
                     f"model's draws; allowed: {fmt_cost(one.margin)}")
        items.append(line + ".")
    n = report.front.history.n_trials
    items.append(f"Active in {report.decisions[name].n_active} of {n} trials.")
    return "<ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


def _study_of(report: Any) -> str:
    """The call that loads the study of a report of several objectives again, as its
    objectives' histories wrote it (:attr:`TrialHistory.loader`). Read as Python, not by
    counting parentheses: a study's name or path may hold one."""
    for sec in report.sections.values():
        loader = getattr(getattr(sec, "history", None), "loader", None) or ""
        try:
            tree = ast.parse(loader, mode="eval")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue  # "target=..." and the like parse; a loader written by hand may not
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "load_study"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "optuna"):
                return ast.get_source_segment(loader, node) or "...  # the Optuna study"
    return "...  # the Optuna study"


def _multi_snippet(report: Any) -> str:
    src = report.source
    study = _study_of(report)
    load = (f"study = {study}" if src.startswith("study ")
            else "histories = {...}  # objective name -> TrialHistory, of the same trials")
    arg = "study" if src.startswith("study ") else "histories"
    model = "" if report.surrogate == GP() else f"surrogate=hp.{report.surrogate!r}, "
    lines = ["import hpinsight as hp", *(["import optuna"] if arg == "study" else []), load,
             f"rep = hp.report({arg}, {model}seed={report.seed})",
             "print(rep.table())",
             f"hp.suggest_subspace({arg}, {model}seed={report.seed}).explain()"]
    return "\n".join(lines) + "\n"


def _sampling_section(report: Report) -> list[str]:
    """What shaped the sampling: restriction in force, decisions, forbidden clauses,
    and how often each conditional parameter was inactive."""
    esc = html.escape
    h = report.history
    record = h.sampling
    inactive = report.inactive_counts()
    if (record is None or record.is_empty) and not inactive:
        return []
    out = ["<h2>How the trials were sampled</h2>"]
    if record is not None and (record.fixed or record.ranges):
        what = [f"{esc(n)} fixed at {esc(fmt_value(v))}" for n, v in record.fixed.items()]
        what += [f"{esc(n)} within [{fmt_value(lo)}, {fmt_value(hi)}]"
                 for n, (lo, hi) in record.ranges.items()]
        out.append(f"<p>Restriction in force: {'; '.join(what)}.</p>")
    elif record is not None and record.decisions:
        out.append("<p>No restriction in force now.</p>")
    if record is not None and record.decisions:
        rows = "".join(
            f"<tr><td>{esc(_cell(d.get('after_trial')))}</td><td>{esc(action_label(d))}"
            f"</td><td>{esc(', '.join(f'{k}={fmt_value(v)}' for k, v in (d.get('params') or {}).items()))}"
            f"</td><td>{esc(_cell(d.get('why')))}</td><td>{esc(_cell(d.get('at')))}</td></tr>"
            for d in record.decisions)
        out.append("<table><tr><th>after trial</th><th>decision</th><th>parameters</th>"
                   f"<th>why</th><th>at (UTC)</th></tr>{rows}</table>")
    if record is not None and (record.fixed or record.decisions):
        if record.n_held is None:
            out.append(f'<p class="note">{_UNMARKED[0].upper()}{_UNMARKED[1:]}</p>')
        elif record.n_held or record.n_narrowed:
            counts = [f"{esc(n)} held fixed in {k}" for n, k in record.n_held.items()]
            counts += [f"{esc(n)} sampled in a narrowed range in {k}"
                       for n, k in (record.n_narrowed or {}).items()]
            out.append(f"<p>Of the {h.n_trials} analysed trials: {'; '.join(counts)}.</p>")
    # conditions declared, or inferred from the trials (a parameter an Optuna objective
    # suggests in one branch only): the space the analysis ran on holds both
    with_condition = set(report.result.space.conditional_names)
    if conditional := {n: k for n, k in inactive.items() if n in with_condition}:
        out.append("<p>Conditional parameters, inactive in: " + "; ".join(
            f"{esc(n)} {k} of {h.n_trials} trials" for n, k in conditional.items()) + ".</p>")
    if unexplained := {n: k for n, k in inactive.items() if n not in with_condition}:
        # a DataFrame's empty cell no condition explains: said, not assumed
        out.append("<p>Without a value in some trials, though neither the search space nor "
                   "the other parameters' values explain it, and analysed as inactive there: "
                   + "; ".join(
                       f"{esc(n)} {k} of {h.n_trials} trials" for n, k in unexplained.items())
                   + ". If a value is missing by mistake, leave those trials out.</p>")
    if record is not None and record.changed:
        out.append("<p>The distribution of these parameters changed during the study (a range "
                   "that depends on another parameter, or an edited objective). Each is "
                   "analysed over the union of its distributions, combinations the study could "
                   "not suggest included, so its numbers are approximate:</p><ul>"
                   + "".join(f"<li>{esc(n)}: {esc('; '.join(v))}</li>"
                             for n, v in record.changed.items()) + "</ul>")
    if record is not None and record.budgets:
        per = ", ".join(f"{fmt_value(b)}: {n}" for b, n in record.budgets.items())
        out.append(f'<p class="note">The configurations reached different budgets and each is '
                   f"valued at its highest (configurations per budget: {esc(per)}), so the "
                   "values mix budgets: an effect can be the budget's rather than the "
                   "parameter's. To analyse one budget, read the run with "
                   f"<code>hp.adapters.from_smac(run, budget={esc(fmt_value(max(record.budgets)))})"
                   "</code>.</p>")
    if record is not None and record.forbidden:
        out.append("<p>Forbidden clauses (the analysis integrates over the whole space, "
                   "forbidden combinations included):</p><ul>"
                   + "".join(f"<li><code>{esc(c)}</code></li>" for c in record.forbidden)
                   + "</ul>")
    return out


def _capped(report: Report, params: tuple[str, ...]) -> str:
    imp = report.capped.importance(*params)
    css, verdict = imp.verdict.split()[0], html.escape(imp.verdict)
    if report.capped.signal_doubtful:
        # where many refits find no signal, a share is a fraction of next to nothing and
        # its spread runs to the whole; every verdict there is "uncertain", and the cell
        # says why in one phrase instead of a share left out beside its verdict (the
        # numbers are in the JSON)
        return f'<span class="verdict {css}" title="{verdict}">{NO_CLEAR_SIGNAL}</span>'
    # its verdict too: a decision may rest on it (``evidence`` "x among the best")
    return (f"{fmt_share(imp.mean)} ± {fmt_share(imp.std)} "
            f'<span class="verdict {css}">{verdict}</span>')


def _quantile(report: Report) -> str:
    q = report.capped.cap_quantile
    return f"{100 * q:.0f} %" if q is not None else "trials"


def _snippet(report: Report) -> str:
    loader = report.history.loader  # what the adapter was called with, written out
    if loader is None:
        load = "history = ...  # the TrialHistory the report was made from"
    elif loader.startswith("load_run("):
        load = f"from hpinsight.integrations.smac import load_run\nhistory = {loader}"
    elif loader.startswith("hp.adapters.from_optuna(study"):  # a study in memory
        load = f"study = ...  # the Optuna study\nhistory = {loader}"
    elif "optuna." in loader:
        load = f"import optuna\nhistory = {loader}"
    else:
        load = f"history = {loader}"
    seed = report.seed
    model = "" if report.surrogate == GP() else f"surrogate=hp.{report.surrogate!r}, "
    lines = ["import hpinsight as hp", load,
             f"result = hp.fanova(history, {model}seed={seed}, "
             f"max_order={report.result.max_order})",
             "result.ranking()"]
    if report.top:
        lines += [f"pd = hp.partial_dependence(result, params={report.top[0]!r}, "
                  f"n_samples={report.pdp_samples}, seed={seed})",
                  "hp.confidence_split(pd, max_splits=3).plot(highlight=dict(history.best()[1]))"]
    if report.subspace is not None:
        lines.append(f"hp.suggest_subspace(history, {model}seed={seed}).explain()")
    return "\n".join(lines) + "\n"
