"""Render a :class:`~hpinsight._reporting.Report` as one self-contained HTML page.

No computation happens here: figures are drawn from the report's results with the
plotting layer and embedded as base64 PNG, so the page needs no network and no files.
The page's frame and style live in ``report.html`` and ``report.css`` beside this
module; the sections are built here from the report's data.
"""

from __future__ import annotations

import base64
import html
import io
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


def render_html(report: Report) -> str:
    """The page; figures drawn on stand-alone matplotlib Figures (no pyplot, no backend).

    Drawing on :class:`matplotlib.figure.Figure` directly leaves the user's backend and
    pyplot's figure list alone, in a notebook as in a script.
    """
    mfigure = import_optional("matplotlib.figure", "Report.html")
    from .. import plotting

    def figure(draw: Any, size: tuple[float, float], caption: str) -> str:
        fig = mfigure.Figure(figsize=size)
        draw(fig.subplots())
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90)
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        return (f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                f"</figure>")

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

    parts.extend(_sampling_section(report))
    parts.append("<h2>What matters</h2>")
    rows = "".join(
        f"<tr><td>{esc(' x '.join(i.params))}</td><td>{i.mean:.3f} ± {i.std:.3f}</td>"
        f"<td>{esc(i.verdict)}</td><td>{_capped(report, i.params)}</td></tr>"
        for i in r.ranking()[:10])
    parts.append('<div class="grid"><table><tr><th>effect</th><th>share of variance'
                 f"</th><th>verdict</th><th>best {_quantile(report)}</th></tr>{rows}</table>")
    parts.append(figure(lambda ax: plotting.plot_importance(r, ax=ax, top=8,
                                                            capped=report.capped),
                        (6.0, 4.0), "importance") + "</div>")
    null = r.null_fraction(1)
    verdicts = ("an effect is <i>indistinguishable from nothing</i> when it explains no more "
                f"than a shadow of a parameter (its values shuffled among nearby trials: "
                f"{null:.4f} here), <i>uncertain</i> when it exceeds that by less than its std"
                if null is not None else
                "an effect is <i>uncertain</i> when its std exceeds its mean")
    parts.append(f'<p class="note">Shares are fractions of the {"model" if gp else "forest"}\'s '
                 f"prediction variance over the search space (mean ± std over {spread}); "
                 f"{verdicts}.</p>")
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
        parts.append(figure(lambda ax, n=name, m=marks: plotting.plot_marginal(r, n, ax=ax,
                                                                               marks=m),
                            (4.6, 3.2), f"marginal of {name}"))
    if report.top:
        parts.append("</div>")
    pairs = list(r.ranking(order=2)[:2]) if r.max_order >= 2 and not r.is_constant else []
    if pairs:
        parts.append("<h2>Strongest interactions</h2><div class=grid>")
        for imp in pairs:
            a, b = imp.params
            parts.append(figure(lambda ax, a=a, b=b: plotting.plot_interaction(r, a, b, ax=ax),
                                (4.8, 3.8), f"joint marginal of {a} and {b}"))
        parts.append("</div>")

    if report.pdps:
        parts.append("<h2>Partial dependence you can trust</h2>"
                     '<p class="note">PDPs with 95 % bands (Moosbauer et al. 2021), split '
                     "into regions where the surrogate is more certain; the incumbent's "
                     "region is emphasized.</p><div class=grid>")
        for name, tree in report.pdps.items():
            parts.append(figure(lambda ax, t=tree: plotting.plot_regions(
                t, ax=ax, highlight=dict(best_config)), (8.5, 3.4), f"PDP of {name}"))
        parts.append("</div>")

    parts.append("<h2>Which ones you can stop tuning</h2>")
    if report.subspace is None:
        parts.append('<p class="note">No suggestion (see notes below).</p>')
    else:
        sub = report.subspace
        items = "".join(_advice_row(report, n) for n in (*sub.keep, *sub.fixed))
        parts.append(f"<table><tr><th>parameter</th><th>suggestion</th><th>why</th></tr>"
                     f"{items}</table>")

    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in report.notes)
                     + "</ul>")
    parts.append("<h2>Reproduce in Python</h2><pre>" + esc(_snippet(report)) + "</pre>")
    return _page().substitute(title=esc(report.title), css=_resource("report.css"),
                              body="\n".join(parts))


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
    """One row of the "stop tuning" table, aware of a restriction already in force."""
    esc = html.escape
    sub = report.subspace
    assert sub is not None
    record = report.history.sampling
    keep = name in sub.keep
    suggestion = "keep tuning" if keep else "fix at " + esc(fmt_value(sub.fixed[name]))
    why = esc(sub.reasons[name])
    css = "keep" if keep else "fix"
    if record is not None and name in record.fixed:
        value = fmt_value(record.fixed[name])
        counted = record.held(name)
        trials = (f"{counted} of {report.history.n_trials} analysed trials"
                  if record.n_held is not None else "trials not recorded")
        fixed_since = f"fixed at {esc(value)} {_since(report, name)} ({trials})"
        if keep:
            suggestion = "release: it matters"
            why = (f"{fixed_since}, but the analysis says it matters; release the "
                   f"restriction to tune it again. {why}")
        else:
            suggestion = f"already fixed at {esc(value)}"
            other = sub.fixed[name]
            if fmt_value(other) != value:
                suggestion += f" (the analysis would pick {esc(fmt_value(other))})"
            why = f"{fixed_since}. {why}"
    return (f"<tr><td>{esc(name)}</td><td class={css}>{suggestion}</td>"
            f"<td>{why}</td></tr>")


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
    if len(params) > report.capped.max_order:
        return ""
    imp = report.capped.importance(*params)
    return f"{imp.mean:.3f} ± {imp.std:.3f}"


def _quantile(report: Report) -> str:
    q = report.capped.cap_quantile
    return f"{q:.0%}" if q is not None else "trials"


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
