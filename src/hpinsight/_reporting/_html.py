"""Render a :class:`~hpinsight._reporting.Report` as one self-contained HTML page.

No computation happens here: figures are drawn from the report's results with the
plotting layer and embedded as inline SVG, so the page needs no network and no files.
The page's frame and style live in ``report.html`` and ``report.css`` beside this
module; the sections are built here from the report's data.
"""

from __future__ import annotations

import html
import io
import math
import string
from typing import TYPE_CHECKING, Any

from .._optional import import_optional
from .._shared import fmt_value

if TYPE_CHECKING:
    from ._build import Report

__all__ = ["render_html"]

def _resource(name: str) -> str:
    """A file shipped next to this module (the page template, its style sheet)."""
    from importlib.resources import files

    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def _page() -> string.Template:
    return string.Template(_resource("report.html"))


#: Main effects are all listed; interactions that are not "indistinguishable from nothing"
#: up to this many (the rest are counted under the table, and all are in the JSON).
MAX_INTERACTIONS_SHOWN = 10
#: The summary's "what matters" names resolved effects with at least this share; smaller
#: resolved ones are named as small but real.
MATTERS_SHARE = 0.05


def _share(x: float) -> str:
    """A share of variance, the one way the page writes it (table and sentences alike)."""
    return f"{100 * x:.1f} %"


def _svg(fig: Any) -> str:
    """The figure as inline SVG with real text (sharp at any zoom and on HiDPI screens,
    searchable, and its tick labels are elements a browser test can measure); heat maps
    stay rasters inside it, at 200 dpi."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "hpinsight"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", dpi=200, metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):].strip()  # without the XML prolog and DOCTYPE


def render_html(report: Report) -> str:
    """The page; figures drawn on stand-alone matplotlib Figures (no pyplot, no backend).

    Drawing on :class:`matplotlib.figure.Figure` directly leaves the user's backend and
    pyplot's figure list alone, in a notebook as in a script.
    """
    mfigure = import_optional("matplotlib.figure", "Report.html")
    from .. import plotting

    def figure(draw: Any, size: tuple[float, float], caption: str) -> str:
        fig = mfigure.Figure(figsize=size, layout="constrained")
        draw(fig.subplots())
        return (f'<figure role="img" aria-label="{html.escape(caption)}">{_svg(fig)}'
                f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    esc = html.escape
    h = report.history
    r = report.result
    trial_id, best_config, best_value = h.best()
    tagline = "Which hyperparameters matter, how they act, and which ones you can stop tuning."
    if report.source not in report.title:  # a custom title: say what was analysed
        tagline = f"{report.source}. {tagline}"
    parts = [f"<h1>{esc(report.title)}</h1>", f'<p class="sub">{esc(tagline)}</p>']

    excluded = ", ".join(f"{n} {why}" for why, n in h.excluded.items()) or "none"
    oob = "n/a" if r.oob_r2 is None else f"{r.oob_r2:.2f}"
    gp = r.surrogate == "gp"
    fit_card = (f"Gaussian process fit (leave-one-out R²)<b>{oob}</b>{r.n_trees} bootstrap draws"
                if gp else f"forest fit (out-of-bag R²)<b>{oob}</b>{r.n_trees} trees")
    spread = "draws of the Gaussian process" if gp else "trees"
    parts.append('<div class="cards">'
                 f"<div class=card>trials analysed<b>{h.n_trials}</b></div>"
                 f"<div class=card>left out<b>{h.n_excluded}</b>{esc(excluded)}</div>"
                 f"<div class=card>best {esc(h.objective_name)}<b>{best_value:.6g}</b>"
                 f"trial {trial_id} ({esc(h.direction)})</div>"
                 f"<div class=card>{fit_card}</div></div>")
    parts.extend(_summary(report))
    parts.extend(_sampling_section(report))

    parts.append("<h2>What matters</h2>")
    parts.extend(_effects_table(report, spread))
    parts.append('<div class="grid">' + figure(
        lambda ax: plotting.plot_importance(r, ax=ax, top=8, capped=report.capped),
        (6.0, 4.0), f"The largest effects (the title says how many of all), over all "
                    f"trials and over the best {_quantile(report)}") + "</div>")
    held = _held(report)
    if held:
        parts.append('<p class="note">Held fixed by a restriction in some trials, so their '
                     "shares rest on the trials where they varied: " + "; ".join(
                         f"{esc(n)} varied in {h.n_trials - k} of {h.n_trials}"
                         for n, k in held.items()) + ".</p>")

    if report.top:
        parts.append("<h2>How the top parameters act</h2><div class=grid>")
    for name in report.top:
        marks = {"incumbent": best_config.get(name)}
        default = h.space[name].default
        if default is not None:
            marks["default"] = default
        said = ("its declared default and " if default is not None else "")
        parts.append(figure(
            lambda ax, n=name, m=marks: plotting.plot_marginal(r, n, ax=ax, marks=m),
            (4.6, 3.2), f"{name}: the predicted {h.objective_name} averaged over all other "
                        f"parameters (mean ± std over {spread}); lines mark {said}the best "
                        f"trial's value"))
    if report.top:
        parts.append("</div>")
    pairs = list(r.ranking(order=2)[:2]) if r.max_order >= 2 and not r.is_constant else []
    if pairs:
        parts.append("<h2>Strongest interactions</h2><div class=grid>")
        for imp in pairs:
            a, b = imp.params
            parts.append(figure(lambda ax, a=a, b=b: plotting.plot_interaction(r, a, b, ax=ax),
                                (4.8, 3.8), f"{a} and {b} together: the predicted "
                                            f"{h.objective_name} averaged over the others"))
        parts.append("</div>")

    if report.pdps:
        parts.append("<h2>Partial dependence you can trust</h2>"
                     '<p class="note">Partial dependence with 95 % bands (Moosbauer et al. '
                     "2021), split into regions of the space where the model is more "
                     "certain; the best trial's region is drawn thicker.</p><div class=grid>")
        for name, tree in report.pdps.items():
            parts.append(figure(lambda ax, t=tree: plotting.plot_regions(
                t, ax=ax, highlight=dict(best_config)), (8.5, 3.4),
                f"{name}: partial dependence by confidence region"))
        parts.append("</div>")

    parts.append("<h2>Which ones you can stop tuning</h2>")
    if report.subspace is None:
        parts.append('<p class="note">No suggestion (see notes below).</p>')
    else:
        sub = report.subspace
        items = "".join(_advice_row(report, n) for n in (*sub.keep, *sub.fixed))
        parts.append(f"<table class=advice><tr><th>parameter</th><th>suggestion</th><th>why</th>"
                     f"</tr>{items}</table>")

    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in report.notes)
                     + "</ul>")
    parts.append("<h2>Reproduce in Python</h2><pre>" + esc(_snippet(report)) + "</pre>")
    return _page().substitute(title=esc(report.title), css=_resource("report.css"),
                              body="\n".join(parts))


def _names(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _summary(report: Report) -> list[str]:
    """The answer in three sentences: what matters, what shows no effect, what to stop tuning."""
    esc = html.escape
    r = report.result
    if r.is_constant:
        return ['<p class="answer">Every trial has the same value: there is nothing to explain.</p>']
    effects = r.ranking()
    resolved = [i for i in effects if i.verdict == "resolved"]
    matters = [f"<b>{esc(' x '.join(i.params))}</b> {_share(i.mean)}"
               for i in resolved if i.mean >= MATTERS_SHARE]
    small = [esc(" x ".join(i.params)) for i in resolved if i.mean < MATTERS_SHARE]
    unsure = [esc(" x ".join(i.params)) for i in effects
              if i.verdict == "uncertain" and len(i.params) == 1]
    # nothing: neither alone nor in any interaction distinguishable from nothing
    some = {p for i in effects if i.verdict != "indistinguishable from nothing" for p in i.params}
    nothing = [esc(n) for n in report.history.space.names if n not in some]
    lines = []
    if matters:
        lines.append(f"<b>What matters</b> (share of the variation of the predicted "
                     f"{esc(report.history.objective_name)}): {_names(matters)}.")
    else:
        lines.append("<b>What matters:</b> no effect is resolved yet that explains "
                     f"{_share(MATTERS_SHARE)} or more; run more trials.")
    if small:
        lines.append(f"<b>Small but real</b> (under {_share(MATTERS_SHARE)} each): {_names(small)}.")
    if unsure:
        lines.append(f"<b>Not resolved yet:</b> {_names(unsure)} (an effect, but smaller than "
                     "its spread over the model's draws).")
    if nothing:
        lines.append(f"<b>No effect found:</b> {_names(nothing)} (each explains no more than a "
                     "parameter whose values were shuffled).")
    sub = report.subspace
    if sub is not None:
        fixed = [f"{esc(n)} (at {esc(fmt_value(v, quote=True))})" for n, v in sub.fixed.items()]
        lines.append(f"<b>You can stop tuning:</b> {_names(fixed)}." if fixed else
                     "<b>You can stop tuning:</b> none of the parameters yet.")
        unsafe = sub.not_yet_safe
        keep = [esc(n) for n in sub.keep if n not in unsafe]
        if keep:
            lines.append(f"<b>Keep tuning:</b> {_names(keep)}.")
        if unsafe:
            lines.append(f"<b>Not yet safe to fix:</b> {_names([esc(n) for n in unsafe])} "
                         "(little or no effect, but the model cannot yet rule out that fixing "
                         "it costs more than allowed; more trials will tell).")
        lines.append("Why, parameter by parameter, is below.")
    return ['<div class="answer">' + "".join(f"<p>{line}</p>" for line in lines) + "</div>"]


def _effects_table(report: Report, spread: str) -> list[str]:
    """Every main effect, and the interactions that are not nothing; what is left out is
    counted, not dropped silently."""
    esc = html.escape
    r = report.result
    q = _quantile(report)
    mains = list(r.ranking(order=1))
    pairs = list(r.ranking(order=2)) if r.max_order >= 2 else []
    shown_pairs = [i for i in pairs if i.verdict != "indistinguishable from nothing"]
    rest = len(shown_pairs) - MAX_INTERACTIONS_SHOWN
    shown_pairs = shown_pairs[:MAX_INTERACTIONS_SHOWN]

    def row(i: Any) -> str:
        capped = (_capped(report, i.params) if len(i.params) <= report.capped.max_order
                  else '<span class="na">main effects only</span>')
        css = i.verdict.split()[0]
        return (f"<tr><td>{esc(' x '.join(i.params))}</td><td>{_share(i.mean)} ± "
                f"{_share(i.std)}</td><td class=\"verdict {css}\">{esc(i.verdict)}</td>"
                f"<td>{capped}</td></tr>")

    head = (f"<table class=effects><tr><th>effect</th><th>share of variance</th>"
            f"<th>verdict</th><th>share among the best {q}</th></tr>")
    body = "".join(row(i) for i in mains)
    if shown_pairs:
        body += "<tr><th colspan=4>interactions</th></tr>" + "".join(row(i) for i in shown_pairs)
    out = [head + body + "</table>"]
    counted = []
    if pairs:
        n_nothing = sum(i.verdict == "indistinguishable from nothing" for i in pairs)
        if n_nothing:
            counted.append(f"{n_nothing} of the {len(pairs)} interactions are indistinguishable "
                           "from nothing and not listed")
        if rest > 0:
            counted.append(f"{rest} further interactions are not listed")
    elif len(report.history.space) > 1:
        counted.append("interactions were not computed (see the notes)")
    null = r.null_fraction(1)
    verdicts = ("<i>indistinguishable from nothing</i>: explains no more than a parameter "
                f"whose values were shuffled among nearby trials ({100 * null:.2g} % here); "
                "<i>uncertain</i>: more than that, but by less than its std; "
                "<i>resolved</i>: the rest"
                if null is not None else
                "<i>uncertain</i>: its std exceeds its mean; <i>resolved</i>: the rest")
    out.append(f'<p class="note">Shares of the {"model" if r.surrogate == "gp" else "forest"}'
               f"'s prediction variance over the whole search space, mean ± std over "
               f"{spread}. {verdicts}. The best-{q} column repeats the analysis with the "
               f"objective capped at its best {q} of trials (Hutter et al. 2014, Sec. 3.3); "
               "it has main effects only."
               + ("".join(f" {c[0].upper()}{c[1:]}." for c in counted))
               + " Every effect is in the JSON report.</p>")
    return out


def _held(report: Report) -> dict[str, int]:
    """Parameters held fixed in some analysed trials, with how many."""
    record = report.history.sampling
    if record is None or not record.n_held:
        return {}
    return {n: k for n, k in record.n_held.items() if n in report.history.space}


def _since(report: Report, name: str) -> str:
    """When the restriction in force began to hold ``name`` fixed, in words."""
    record = report.history.sampling
    assert record is not None
    for d in reversed(record.decisions):
        if d.get("action") == "fix" and name in (d.get("params") or {}):
            after = d.get("after_trial")
            return f"since trial {after + 1}" if isinstance(after, int) else "since a decision"
    return "by the restriction"


def _advice_row(report: Report, name: str) -> str:
    """One row of the "stop tuning" table: a plain sentence, the numbers behind a toggle,
    aware of a restriction already in force."""
    esc = html.escape
    sub = report.subspace
    assert sub is not None
    record = report.history.sampling
    keep = name in sub.keep
    suggestion = ("fix at " + esc(fmt_value(sub.fixed[name], quote=True)) if not keep
                  else "keep tuning for now" if name in sub.not_yet_safe else "keep tuning")
    sentence = _sentence(report, name)
    css = "keep" if keep else "fix"
    if record is not None and name in record.fixed:
        value = fmt_value(record.fixed[name], quote=True)
        counted = record.held(name)
        trials = (f"{counted} of {report.history.n_trials} analysed trials"
                  if record.n_held is not None else "trials not recorded")
        fixed_since = f"Fixed at {value} {_since(report, name)} ({trials})"
        if keep:
            suggestion = "release: it matters"
            sentence = (f"{fixed_since}, but the analysis says it matters: release the "
                        f"restriction to tune it again. {sentence}")
        else:
            suggestion = f"already fixed at {esc(value)}"
            other = fmt_value(sub.fixed[name], quote=True)
            if other != value:
                suggestion += f" (the analysis would pick {esc(other)})"
            sentence = f"{fixed_since}. {sentence}"
    details = f"<details><summary>numbers</summary>{_details(report, name)}</details>"
    return (f"<tr><td>{esc(name)}</td><td class={css}>{suggestion}</td>"
            f"<td>{esc(sentence)}{details}</td></tr>")


def _sentence(report: Report, name: str) -> str:
    """Why a parameter is kept or may be fixed, in one plain sentence with the page's numbers."""
    sub = report.subspace
    assert sub is not None
    imp = report.result.importance(name)
    q = _quantile(report)
    capped = report.capped.importance(name).mean
    share = f"{_share(imp.mean)} of the variation ({_share(capped)} among the best {q})"
    risk = sub.risks[name]
    upper = risk.quantile(sub.confidence)
    value = fmt_value(sub.defaults[name], quote=True)
    ground = sub.grounds.get(name, "important" if name in sub.keep else "safe")
    if ground == "important":
        return f"Keep tuning: it explains {share}."
    if ground == "risky":
        effect = ("it shows no effect distinguishable from nothing"
                  if imp.verdict == "indistinguishable from nothing" else f"it explains only {share}")
        return (f"Keep tuning for now: {effect}, but by the model's estimate fixing it at "
                f"{value} could cost up to {upper:.3g}, more than the {sub.margin:.3g} allowed; "
                "more trials will settle it.")
    if ground == "min_keep":
        return (f"Keep tuning: at least one parameter stays tuned, and this one explains "
                f"the most among the best {q}.")
    cost = ("nothing measurable" if upper <= 0 else f"at most {upper:.3g}")
    return (f"You can stop tuning it: it explains {share}, and fixing it at {value} "
            f"costs {cost} by the model's estimate.")


def _details(report: Report, name: str) -> str:
    """The decision rule's inputs for one parameter, labelled as the rule's own."""
    esc = html.escape
    sub = report.subspace
    assert sub is not None
    risk = sub.risks[name]
    q = _quantile(report)
    notion = ("improvement over the default configuration" if sub.notion == "default"
              else f"the best {q} of trials")
    items = [
        f"Cost of fixing it at {fmt_value(sub.defaults[name], quote=True)} "
        f"({sub.default_origin(name)}): {risk.mean:.3g} ± "
        f"{risk.std:.3g} in {report.history.objective_name}, at most "
        f"{risk.quantile(sub.confidence):.3g} in {sub.confidence:.0%} of the model's draws; "
        f"allowed: {sub.margin:.3g}.",
        "The rule's own estimate of its importance, from a refit with columns of random "
        f"numbers as a yardstick: {_share(sub.importance_all[name])} overall (counts above "
        f"{_share(sub.thresholds.get('all', math.nan))}), "
        f"{_share(_deciding(sub)[name])} for {notion} (counts above "
        f"{_share(sub.thresholds.get('capped', math.nan))}).",
    ]
    return "<ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


def _deciding(sub: Any) -> dict[str, float]:
    return dict(sub.importance_default if sub.notion == "default" else sub.importance_top)


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
            f"<tr><td>{esc(str(d.get('after_trial', '')))}</td><td>{esc(str(d.get('action')))}"
            f"</td><td>{esc(', '.join(f'{k}={fmt_value(v)}' for k, v in (d.get('params') or {}).items()))}"
            f"</td><td>{esc(str(d.get('why', '')))}</td><td>{esc(str(d.get('at', '')))}</td></tr>"
            for d in record.decisions)
        out.append("<table><tr><th>after trial</th><th>decision</th><th>parameters</th>"
                   f"<th>why</th><th>at (UTC)</th></tr>{rows}</table>")
    if record is not None and (record.fixed or record.decisions):
        if record.n_held is None:
            out.append('<p class="note">Which trials were sampled under a restriction is not '
                       "recorded in this study (it was restricted by an earlier hpinsight).</p>")
        elif record.n_held or record.n_narrowed:
            counts = [f"{esc(n)} held fixed in {k}" for n, k in record.n_held.items()]
            counts += [f"{esc(n)} sampled in a narrowed range in {k}"
                       for n, k in (record.n_narrowed or {}).items()]
            out.append(f"<p>Of the {h.n_trials} analysed trials: {'; '.join(counts)}.</p>")
    if inactive:
        out.append("<p>Conditional parameters, inactive in: " + "; ".join(
            f"{esc(n)} {k} of {h.n_trials} trials" for n, k in inactive.items()) + ".</p>")
    if record is not None and record.forbidden:
        out.append("<p>Forbidden clauses (the analysis integrates over the whole space, "
                   "forbidden combinations included):</p><ul>"
                   + "".join(f"<li><code>{esc(c)}</code></li>" for c in record.forbidden)
                   + "</ul>")
    return out


def _capped(report: Report, params: tuple[str, ...]) -> str:
    imp = report.capped.importance(*params)
    return f"{_share(imp.mean)} ± {_share(imp.std)}"


def _quantile(report: Report) -> str:
    q = report.capped.cap_quantile
    return f"{100 * q:.0f} %" if q is not None else "trials"


def _snippet(report: Report) -> str:
    src = report.source
    if src.startswith("study "):
        load = "history = hp.TrialHistory.from_optuna(study)"
    elif src.startswith("SMAC run "):
        load = ("from hpinsight.integrations.smac import load_run\n"
                f"history = load_run({src.removeprefix('SMAC run ')!r})")
    else:
        load = "history = ...  # the TrialHistory the report was made from"
    seed = report.seed
    model = (f"surrogate='forest', n_trees={report.n_trees}, " if report.surrogate == "forest"
             else "")
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
