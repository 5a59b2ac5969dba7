"""The across-studies report: an :class:`~hpinsight.results.AcrossStudiesResult` as one
self-contained HTML page (the single-study report's frame and style) or a JSON document.

No computation happens here; the figure is drawn from the result with the plotting layer
and embedded as inline SVG.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from .._decision_result import fmt_share
from .._optional import import_optional
from .._shared import fmt_value
from ..surrogates import GP
from ._html import _figure, _page, _resource

if TYPE_CHECKING:
    from .._across import AcrossStudiesResult

__all__ = ["ACROSS_SCHEMA", "across_document", "across_html"]

#: Name and version of the JSON document of :func:`across_document`; the version goes up
#: when a key is removed or changes meaning.
ACROSS_SCHEMA = "hpinsight.across/1"


def across_document(result: AcrossStudiesResult, *, title: str, source: str) -> dict[str, Any]:
    """The JSON document: ``schema``, ``title``, ``source`` and then
    :meth:`AcrossStudiesResult.to_dict`."""
    return {"schema": ACROSS_SCHEMA, "title": title, "source": source, **result.to_dict()}


def across_html(result: AcrossStudiesResult, *, title: str, source: str) -> str:
    """The page: headline numbers, each parameter's share across the studies (table and
    figure), the rank agreement, the shares per study, the defaults, the notes."""
    import_optional("matplotlib.figure", "the across-studies report")
    from .. import plotting

    esc = html.escape
    parts = [f"<h1>{esc(title)}</h1>",
             f'<p class="sub">{esc(source)}. Which hyperparameters matter in every study, '
             "and which only in some.</p>"]
    w, p, rho = result.kendall_w, result.kendall_p, result.mean_spearman
    model = result.surrogate.kind if result.surrogate is not None else "n/a"
    parts.append(
        '<div class="cards">'
        f"<div class=card>studies<b>{result.n_studies}</b></div>"
        f"<div class=card>parameters<b>{len(result.params)}</b></div>"
        f"<div class=card>rank agreement (Kendall's W)<b>{_num(w)}</b>p = {_num(p, '.2g')}</div>"
        f"<div class=card>mean Spearman &rho;<b>{_num(rho)}</b>over pairs of studies</div>"
        f"<div class=card>model<b>{esc(model)}</b>seed {result.seed}</div></div>")

    parts.append("<h2>Share of variance across studies</h2>")
    rows = "".join(
        f'<tr data-param="{esc(r["param"])}"><td>{esc(r["param"])}</td>'
        f"<td>{fmt_share(r['median'])}</td>"
        f"<td>{fmt_share(r['q25'])} &ndash; {fmt_share(r['q75'])}</td>"
        f"<td>{fmt_share(r['mean'])} ± {fmt_share(r['std'])}</td>"
        f"<td>{r['n_studies']} of {result.n_studies}</td></tr>"
        for r in result.summary())
    parts.append("<table class=across><tr><th>parameter</th><th>median share</th>"
                 "<th>quartiles</th><th>mean ± std</th><th>studies with it</th></tr>"
                 f"{rows}</table>")
    caption = "Each parameter's main-effect share in every study (a point each), with quartiles"
    figure = _figure(lambda ax: plotting.plot_importance_across(result, ax=ax),
                     (6.4, 0.45 * len(result.params) + 1.6), caption)
    parts.append(f'<div class="grid">{figure}</div>')
    ranked = ", ".join(result.rank_params) or "none"
    parts.append(
        '<p class="note">Shares are each parameter\'s main effect: its fraction of the '
        "variance of the model's prediction over the study's search space (mean over the "
        "model's draws), one functional ANOVA per study (van Rijn &amp; Hutter 2018). Quartiles "
        "and medians are over the studies that have the parameter; the std is the sample "
        "standard deviation over them. Kendall's W (tie-corrected) measures how alike the "
        "studies rank the parameters (1: identically, 0: no agreement); its p-value is "
        "Friedman's chi-squared test. It is computed over the parameters every study has ("
        f"{esc(ranked)}) and the {len(result.rank_studies)} studies with shares.</p>")

    parts.append("<h2>Shares per study</h2>")
    names = result.ranking()
    cols = [result.params.index(n) for n in names]
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    body = "".join(
        f'<tr data-study="{esc(s)}"><td>{esc(s)}</td>'
        + "".join(f"<td>{_share(float(result.shares[i, j]))}</td>" for j in cols)
        + f"<td>{result.results[i].n_trials if i < len(result.results) else ''}</td></tr>"
        for i, s in enumerate(result.studies))
    parts.append(f"<table class=per-study><tr><th>study</th>{head}<th>trials</th></tr>"
                 f"{body}</table>")

    parts.append("<h2>Defaults that hold across studies</h2>")
    d = result.defaults
    if d is None or not d.values:
        parts.append('<p class="note">No defaults were computed (see the notes).</p>')
    else:
        items = "".join(
            f'<tr data-param="{esc(k)}"><td>{esc(k)}</td><td>{esc(fmt_value(v, quote=True))}'
            f"</td><td>{fmt_share(d.support.get(k, float('nan')))}</td>"
            f"<td>{d.n_configs.get(k, 0)}</td></tr>" for k, v in d.values.items())
        parts.append("<table class=defaults><tr><th>parameter</th><th>default</th>"
                     "<th>support</th><th>configurations</th></tr>" + items + "</table>")
        parts.append(
            f'<p class="note">The most frequent setting among the {d.top_n} best '
            f"configurations of each of the {d.n_studies} studies, pooled (Weerts 2018); "
            "support is the share of them on that setting. Each study's leave-one-out "
            "defaults are in the JSON report.</p>")
    if result.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in result.notes)
                     + "</ul>")
    parts.append("<h2>Reproduce in Python</h2><pre>" + esc(_snippet(result)) + "</pre>")
    return _page().substitute(title=esc(title), css=_resource("report.css"),
                              body="\n".join(parts))


def _num(x: float, spec: str = ".2f") -> str:
    return "n/a" if x != x else format(x, spec)  # NaN is not equal to itself


def _share(x: float) -> str:
    return '<span class="na">&ndash;</span>' if x != x else fmt_share(x)


def _snippet(result: AcrossStudiesResult) -> str:
    model = ("" if result.surrogate is None or result.surrogate == GP()
             else f"surrogate=hp.{result.surrogate!r}, ")
    return ("import hpinsight as hp\n"
            "studies = {...}  # name -> optuna.Study, or hp.adapters.from_smac(path)\n"
            f"across = hp.importance_across_studies(studies, {model}seed={result.seed})\n"
            "across.to_frame()\n")
