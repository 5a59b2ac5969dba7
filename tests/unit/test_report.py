"""Reports: what a report holds, the self-contained HTML page, JSON, and the CLI's exit codes."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np
import pytest

import hpinsight as hp
from hpinsight._shared import fmt_share
from hpinsight.cli import main

pytest.importorskip("matplotlib")

SMAC_RUN = Path(__file__).parent / "data" / "smac20_run"


@pytest.fixture(scope="module")
def history():
    space = hp.SearchSpace([hp.Float("lr", 1e-4, 1.0, log=True, default=1e-3),
                            hp.Float("x", -1.0, 1.0), hp.Categorical("kind", ["a", "b", "c"]),
                            hp.Int("depth", 1, 10)])
    configs = space.sample(120, seed=1)
    y = [(math.log10(c["lr"]) + 2) ** 2 + {"a": 0.0, "b": 1.0, "c": 2.0}[c["kind"]] * c["x"]
         for c in configs]
    return hp.TrialHistory(space, configs, y, excluded={"FAIL": 3})


@pytest.fixture(scope="module")
def rep(history):
    calls: list[tuple[str, int, int]] = []
    out = hp.report(history, top=2, progress=lambda *call: calls.append(call))
    steps = [stage for stage, _, _ in calls]
    assert steps[0] == "fANOVA of all trials"
    assert "which parameters could be fixed" in steps
    # one progress signature: (stage, done, total), done counting up to the total
    assert [done for _, done, _ in calls] == list(range(len(calls)))
    assert {total for _, _, total in calls} == {len(calls)} == {2 + 2 + 1}
    return out


def test_report_holds_the_analyses_it_shows(rep, history):
    assert rep.top == ("lr", "x")
    assert rep.result.max_order == 2
    assert rep.capped.cap_quantile == 0.25
    assert set(rep.regions) == {"lr", "x"}
    with pytest.raises(AttributeError, match=r"Report\.pdps is now Report\.regions"):
        rep.pdps  # noqa: B018
    assert rep.subspace is not None
    same = hp.fanova(history, seed=0, max_order=2)
    assert rep.result.to_dict() == same.to_dict()  # the report adds no numbers of its own


def test_json_is_strict_and_says_what_was_excluded(rep, tmp_path):
    data = rep.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert data["n_trials"] == 120
    assert data["excluded"] == {"FAIL": 3}
    assert data["top"] == ["lr", "x"]
    assert data["regions"]["lr"]["incumbent_region"] is not None
    path = rep.save(tmp_path / "r.json")
    assert json.loads(path.read_text()) == json.loads(text)


def test_html_page_is_self_contained_with_every_figure_decodable(rep, tmp_path):
    page = rep.save(tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    for heading in ("What matters", "How the top parameters act", "Strongest interactions",
                    "Partial dependence you can trust", "Which ones you can stop tuning",
                    "Reproduce in Python"):
        assert f"<h2>{heading}" in page
    figures = re.findall(r"<figure[^>]*>(<svg.*?</svg>)<figcaption>", page, flags=re.S)
    # importance + 2 marginals + the one resolved interaction + 2 PDPs, each an SVG
    # document with text: a pair the table calls nothing is not drawn as an interaction
    assert len(figures) == 6
    drawn = re.findall(r"<figcaption>([^<]*) together: the predicted", page)
    assert drawn == ["x and kind"]
    for svg in figures:
        root = ElementTree.fromstring(svg)
        assert root.tag.endswith("svg")
        assert root.iter("{http://www.w3.org/2000/svg}text")  # real text, not glyph paths
    assert "<img" not in page  # heat maps are rasters inside their SVG, at 2x resolution
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched from a network
    assert "3 FAIL" in page  # excluded trials are named, with the reason
    assert "keep tuning" in page
    # every effect in the table carries its verdict; depth does nothing here
    rows = dict(re.findall(r'<tr><td>([^<]+)</td><td>[^<]+</td><td class="verdict [a-z]+">'
                           r'([^<]+)(?:<span class="why">[^<]*</span>)*</td>', page))
    assert rows["lr"] == rep.result.importance("lr").verdict == "resolved"
    assert rows["depth"] == "indistinguishable from nothing"
    assert set(rep.history.space.names) <= set(rows)  # every main effect is listed
    assert "Gaussian process fit (leave-one-out R²)" in page
    # the ± holds the hyperparameter refits too, and the page says so where it says what ± is
    assert f"{rep.result.n_draws} bootstrap draws, {len(rep.result.refit_fractions)} hyperparameter refits of the fit to all trials" in page
    assert "mean ± std over draws and hyperparameter refits of the Gaussian process" in page


def test_the_page_answers_first_and_says_each_number_once(rep):
    page = html.unescape(rep.html())
    answer = re.search(r'<div class="answer">(.*?)</div>', page, flags=re.S)
    assert answer is not None
    box = answer.group(1)
    # every parameter stands in exactly one group, the group of its one decision
    placed = re.findall(r'<p data-state="([a-z_]+)">(.*?)</p>', box, flags=re.S)
    where = {}
    for state, line in placed:
        for name in re.findall(r'data-param="([^"]+)"', line):
            assert name not in where, f"{name} is in two groups"
            where[name] = state
    assert where == {d.param: d.state for d in rep.decisions}
    assert where["lr"] == "matters"
    assert where["depth"] in ("fix", "not_yet_safe")  # does nothing here
    text = re.sub(r"<[^>]+>", "", box)
    assert text.startswith("Matters:")
    for name in rep.decisions.to_fix:
        assert where[name] == "fix"
    # the share in the table is the share in the stop-tuning sentence, written the same way
    lr = rep.result.importance("lr")
    shown = f"{100 * lr.mean:.1f} %"
    assert page.count(shown) >= 2
    advice = page.split("<h2>Which ones you can stop tuning</h2>")[1].split("</table>")[0]
    assert f"it explains {shown} of the variation" in advice
    # the table says what the answer box says: the decision's own action, per parameter
    rows = dict(re.findall(r'<tr data-param="([^"]+)" data-state="([a-z_]+)">', advice))
    assert rows == {d.param: d.state for d in rep.decisions}
    # jargon sits behind a toggle: one details element per parameter
    assert advice.count("<details>") == len(rep.history.space)
    assert "margin" not in re.sub(r"<details>.*?</details>", "", advice, flags=re.S)
    # the capped analysis has main effects only, and the table says so instead of a blank
    assert "main effects only" in page.split("<h2>What matters</h2>")[1].split("</table>")[0]
    # every share among the best carries its verdict: a decision may rest on it
    table = page.split("<h2>What matters</h2>")[1].split("</table>")[0]
    for i in rep.capped.ranking(order=1):
        cell = f"{fmt_share(i.mean)} ± {fmt_share(i.std)} "
        assert re.search(re.escape(cell) + r'<span class="verdict [a-z]+">' + re.escape(i.verdict),
                         table), (i, cell)
    # the shadow is written one way, in the table's note and in the rules
    shadow = fmt_share(rep.result.shadow_fraction(1))
    assert f"nearby trials ({shadow}" in page
    assert f"a shadow got {shadow} here" in page
    # a sentence's verdict follows the share over all trials it is about, before the
    # share among the best
    resolved_alone = [d for d in rep.decisions if d.state == "matters" and d.evidence == d.param]
    assert resolved_alone  # lr
    for d in resolved_alone:
        assert f"of the variation, resolved ({fmt_share(d.share_top)} among the best" in d.sentence
    # left-out interactions are counted, not dropped silently
    pairs = rep.result.ranking(order=2)
    nothing = sum(i.verdict == "indistinguishable from nothing" for i in pairs)
    if nothing:
        assert f"{nothing} of the {len(pairs)} interactions are indistinguishable" in page


def test_few_trials_and_wrong_sources_are_clear_errors(history):
    one = hp.TrialHistory(history.space, history.configs[:1], history.y[:1])
    with pytest.raises(hp.exceptions.InvalidDataError, match="at least 2 finished trials"):
        hp.report(one)
    with pytest.raises(TypeError, match="load_run"):
        hp.report([1, 2])
    small = hp.TrialHistory(history.space, history.configs[:5], history.y[:5])
    rep = hp.report(small)
    assert rep.subspace is None
    assert any("at least 10 trials" in note for note in rep.notes)


def test_cli_writes_a_report_of_a_saved_smac_run(tmp_path, capsys):
    pytest.importorskip("ConfigSpace")
    target = tmp_path / "smac.html"
    assert main(["report", "--smac-run", str(SMAC_RUN), "--out", str(target),
                 "--surrogate", "forest", "--n-trees", "8"]) == 0
    assert capsys.readouterr().out.strip() == f"report: {target.resolve()}"
    assert "SMAC run" in target.read_text(encoding="utf-8")
    assert main(["report", "--smac-run", str(SMAC_RUN), "--json", "--out",
                 str(tmp_path / "smac.json"), "--surrogate", "forest", "--n-trees", "8"]) == 0
    assert json.loads((tmp_path / "smac.json").read_text())["n_trials"] > 0
    page = target.read_text(encoding="utf-8")
    assert "load_run(" in page  # the snippet reproduces a SMAC run, not an Optuna study
    assert "surrogate=hp.Forest(n_trees=8), " in html.unescape(page)  # the snippet's model


def test_cli_exit_codes(tmp_path, capsys):
    assert main(["report"]) == 2  # no source
    assert main(["report", "--smac-run", str(SMAC_RUN), "--storage", "x.db"]) == 2
    assert main(["report", "--storage", "x.db"]) == 2  # no --study
    assert main(["report", "--smac-run", str(SMAC_RUN), "--seed", "-1"]) == 2
    assert main(["report", "--smac-run", str(SMAC_RUN), "--top", "0"]) == 2
    assert main(["report", "--smac-run", str(SMAC_RUN), "--json", "--out", "r.html"]) == 2
    assert "give --out a .json path" in capsys.readouterr().err
    assert main(["report", "--smac-run", str(SMAC_RUN), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["report", "--smac-run", str(SMAC_RUN), "--surrogate", "forest", "--n-trees",
                 "4", "--out", str(blocked / "r.html")]) == 1  # a file where a folder must go
    assert "cannot write" in capsys.readouterr().err
    assert main(["report", "--smac-run", str(tmp_path / "nothing")]) == 1
    err = capsys.readouterr().err
    assert "no SMAC run at" in err


def test_label_and_title_name_what_was_analysed(history):
    rep = hp.report(history, label="my 120 runs", top=1, subspace=False)
    assert rep.title == "hpinsight report: my 120 runs"
    custom = hp.report(history, title="Weekly tuning", label="my 120 runs", top=1,
                       subspace=False)
    page = custom.html()
    assert "<h1>Weekly tuning</h1>" in page
    assert "my 120 runs. Which hyperparameters matter" in page


def test_a_history_an_adapter_read_names_its_study_or_run():
    """``hp.report(hp.adapters.from_optuna(study))`` and ``hp.report(load_run(path))``
    were headed "the given trials": the history now carries what its adapter read."""
    optuna = pytest.importorskip("optuna")
    from hpinsight.integrations.smac import load_run

    study = _two_objective_study(n_trials=12)
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        study.set_metric_names(["loss", "speed"])
    name = study.study_name
    one = hp.adapters.from_optuna(study, objective="speed")
    assert one.label == f"study {name!r}, speed"
    assert hp.report(one, top=1, subspace=False).title == f"hpinsight report: study {name!r}, speed"
    # the same words as for the study itself, and a multi-objective page names it once
    assert hp.report(study, objective="speed", top=1, subspace=False).title == \
        f"hpinsight report: study {name!r}, speed"
    histories = {o: hp.adapters.from_optuna(study, objective=o) for o in ("loss", "speed")}
    assert hp.report(histories, top=1, subspace=False).title.startswith(
        f"hpinsight report: study {name!r}, 2 objectives")
    run = load_run(SMAC_RUN)
    assert run.label == f"SMAC run {SMAC_RUN}"
    assert hp.report(run, top=1, subspace=False).to_dict()["source"] == f"SMAC run {SMAC_RUN}"
    assert hp.adapters.from_smac(SMAC_RUN.parent).label == f"SMAC run {SMAC_RUN}"  # the run found
    # the page's code to reproduce it loads the run with every option that shaped it:
    # the objective chosen of several, the instances' aggregation, one budget
    assert run.loader == f"load_run({str(SMAC_RUN)!r})"
    assert html.escape(f"history = load_run({str(SMAC_RUN)!r})") in hp.report(
        run, top=1, subspace=False).html()
    mean = load_run(SMAC_RUN, instances="mean")
    assert mean.loader == f"load_run({str(SMAC_RUN)!r}, instances='mean')"
    assert html.escape(f"history = {mean.loader}") in hp.report(mean, top=1, subspace=False).html()
    assert one.loader == "hp.adapters.from_optuna(study, objective='speed')"
    assert hp.adapters.from_optuna(study, objective=1, params=["x"]).loader == \
        "hp.adapters.from_optuna(study, objective=1, params=['x'])"
    # a history made by hand has none: the code says where it goes
    own = hp.TrialHistory(run.space, run.configs, run.y, label=f"SMAC run {SMAC_RUN}, time")
    assert own.loader is None
    assert "history = ...  # the TrialHistory" in html.unescape(
        hp.report(own, top=1, subspace=False).html())
    # the label travels with a pickled history (a worker process), and a user's own holds
    import pickle

    assert pickle.loads(pickle.dumps(one)).label == one.label
    assert pickle.loads(pickle.dumps(one)).loader == one.loader
    with pytest.raises(TypeError, match="'label' parameter of TrialHistory must be a str"):
        hp.TrialHistory(one.space, one.configs, one.y, label=3)
    with pytest.raises(TypeError, match="'loader' parameter of TrialHistory must be a str"):
        hp.TrialHistory(one.space, one.configs, one.y, loader=3)


def test_one_parameter_constant_and_maximized_studies_render(history):
    one = hp.SearchSpace([hp.Float("x", 0.0, 1.0)])
    configs = one.sample(30, seed=0)
    rep = hp.report(hp.TrialHistory(one, configs, [c["x"] ** 2 for c in configs]))
    assert rep.result.max_order == 1
    assert rep.top == ("x",)
    assert "<h2>What matters" in rep.html()
    flat = hp.report(hp.TrialHistory(history.space, history.configs, [1.0] * 120))
    assert flat.top == ()
    page = flat.html()
    assert "How the top parameters act" not in page
    assert "Strongest interactions" not in page
    assert "no variation to explain" in page
    maxi = hp.TrialHistory(history.space, history.configs, -history.y, direction="maximize")
    assert hp.report(maxi, top=1).to_dict()["best"]["value"] == max(-history.y)


def test_rendering_leaves_the_users_matplotlib_alone(rep):
    import matplotlib
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    open_before = plt.get_fignums()
    rep.html()
    assert matplotlib.get_backend() == before
    assert plt.get_fignums() == open_before


def test_user_strings_are_escaped():
    space = hp.SearchSpace([hp.Categorical("<b>kind</b>", ["<script>x</script>", "ok"]),
                            hp.Float("x", 0.0, 1.0)])
    configs = space.sample(40, seed=0)
    y = [c["x"] + (c["<b>kind</b>"] == "ok") for c in configs]
    page = hp.report(hp.TrialHistory(space, configs, y), label="<i>runs</i>",
                     top=2).html()
    assert "<script>x</script>" not in page
    assert "<b>kind</b>" not in page
    assert "&lt;i&gt;runs&lt;/i&gt;" in page


def _two_objective_study(storage: str | None = None, n_trials: int = 30) -> Any:
    """x drives the first objective (minimized), y the second (maximized), z does nothing."""
    import optuna

    study = optuna.create_study(study_name="mo", storage=storage,
                                directions=["minimize", "maximize"],
                                sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(t: Any) -> tuple[float, float]:
        t.suggest_float("z", 0, 1)
        return t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1) ** 2

    study.optimize(objective, n_trials=n_trials)
    return study


def test_cli_takes_an_objective_by_the_names_optuna_uses(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'mo.db'}"
    _two_objective_study(url, n_trials=12)
    base = ["report", "--storage", url, "--study", "mo", "--json", "--top", "1"]
    documents = {}
    for chosen in (None, "front", "values_1", "1"):
        out = tmp_path / f"{chosen}.json"
        extra = [] if chosen is None else ["--objective", chosen]
        assert main([*base, *extra, "--out", str(out)]) == 0, capsys.readouterr().err
        documents[chosen] = json.loads(out.read_text())
    # without --objective: one document, a section per objective and one for the front,
    # each holding the same analysis as that objective's own report
    whole = documents[None]
    assert whole["kind"] == "multi-objective"
    assert whole["objectives"] == ["values_0", "values_1"]
    assert list(whole["sections"]) == ["values_0", "values_1", "front"]
    assert whole["sections"]["front"]["fanova"]["objective"] == "share of trials dominating it"
    assert whole["sections"]["front"]["fanova"] == documents["front"]["fanova"]
    assert whole["sections"]["values_1"]["fanova"] == documents["values_1"]["fanova"]
    assert documents["values_1"]["fanova"]["objective"] == "values_1"
    assert documents["values_1"]["fanova"] == documents["1"]["fanova"]
    # one page per objective, and the title and source say which
    assert documents["values_1"]["title"] != documents["front"]["title"]
    assert "values_1" in documents["values_1"]["source"]
    assert "share of trials dominating it" in documents["front"]["source"]


@pytest.mark.parametrize(("extra", "message"), [
    (["--objective", "2"], "--objective 2 is out of range"),
    (["--objective", "loss"], "--objective 'loss' names no objective of study 'mo'; use one of "
                              "values_0, values_1, front or an index 0 to 1."),
], ids=["index", "name"])
def test_cli_refuses_an_objective_the_study_does_not_have(tmp_path, capsys, extra, message):
    url = f"sqlite:///{tmp_path / 'mo.db'}"
    _two_objective_study(url, n_trials=3)
    for command in (["report", "--storage", url, "--study", "mo"],
                    ["watch", "--storage", url, "--study", "mo", "--once"]):
        assert main([*command, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err
        assert "lambda" not in err


def test_watch_shrinks_a_multi_objective_study_only_for_every_objective(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'mo.db'}"
    _two_objective_study(url, n_trials=3)
    command = ["watch", "--storage", url, "--study", "mo", "--once", "--publish",
               "--shrink-to"]
    assert main([*command, "2", "--objective", "0"]) == 2
    err = capsys.readouterr().err
    assert "--shrink-to 2 cannot shrink study 'mo', which has 2 objectives" in err
    assert "Use --shrink-to auto" in err
    assert main([*command, "auto"]) == 0  # decided over both objectives when due


def test_report_of_a_multi_objective_study_takes_objective():
    study = _two_objective_study()
    rep = hp.report(study, objective=1, top=1, subspace=False)
    assert rep.history.direction == "maximize"
    assert rep.top == ("y",)
    by_name = hp.report(study, objective="values_1", top=1, subspace=False)
    assert by_name.to_dict()["fanova"] == rep.to_dict()["fanova"]
    # the page's "reproduce" snippet reads the same objective
    assert "from_optuna(study, objective='values_1')" in html.unescape(by_name.html())
    with pytest.raises(TypeError, match="holds one already"):
        hp.report(rep.history, objective=0)


def test_the_pareto_front_report_calls_no_parameter_safe_to_fix():
    # y trades nothing off here, but the rule is general: from the front alone, a parameter
    # that moves trials along it would look like nothing
    rep = hp.report(_two_objective_study(n_trials=40), top=1, objective="front")
    assert rep.history.objective_name == "share of trials dominating it"
    assert rep.subspace is None
    assert not any(d.state == "fix" for d in rep.decisions)
    assert any("No parameter is called safe to fix from the Pareto front" in n for n in rep.notes)
    assert set(rep.result.ranking(order=1)[0].params) <= {"x", "y"}


def test_forbidden_clauses_and_inactive_counts_are_shown() -> None:
    space = hp.SearchSpace(
        [hp.Categorical("kernel", ["rbf", "linear"]), hp.Float("gamma", 1e-3, 1.0, log=True),
         hp.Float("C", 0.1, 10.0)],
        conditions=[hp.Condition("gamma", "kernel", values=["rbf"])])
    configs = space.sample(60, seed=0)
    y = [c["C"] + (math.log(c["gamma"]) if "gamma" in c else 1.0) for c in configs]
    n_linear = sum("gamma" not in c for c in configs)
    record = hp.SamplingRecord(forbidden=("kernel == 'linear' && C > 5",))
    history = hp.TrialHistory(space, configs, y, sampling=record)
    rep = hp.report(history, top=1, seed=0, subspace=False)
    page = html.unescape(rep.html())
    assert f"inactive in: gamma {n_linear} of 60 trials." in page
    assert "<code>kernel == 'linear' && C > 5</code>" in page
    data = rep.to_dict()
    assert data["inactive"] == {"gamma": n_linear}
    assert data["sampling"]["forbidden"] == ["kernel == 'linear' && C > 5"]
    plain = hp.report(hp.TrialHistory(hp.SearchSpace([hp.Float("x", 0, 1)]),
                                      [{"x": i / 9} for i in range(10)], list(range(10))),
                      top=1, seed=0, subspace=False)
    assert "How the trials were sampled" not in plain.html()  # nothing to say: no section


def test_a_parameter_without_a_condition_left_empty_in_some_trials_is_said_so() -> None:
    # an empty cell of a DataFrame is read as inactive; the page called it a "conditional
    # parameter", which the space does not declare, and gave no hint that a value missing
    # by mistake is analysed as a branch
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"lr": rng.random(40), "dropout": rng.random(40)})
    y = ((frame["lr"] - 0.3) ** 2 + 0.2 * frame["dropout"]).to_numpy()
    frame.loc[:9, "dropout"] = np.nan
    space = hp.SearchSpace([hp.Float("lr", 0, 1), hp.Float("dropout", 0, 1)])
    rep = hp.report(hp.TrialHistory(space, frame, y), top=1, seed=0, subspace=False)
    page = html.unescape(rep.html())
    assert "Conditional parameters" not in page
    assert ("Without a value in some trials, though neither the search space nor the other "
            "parameters' values explain it, and analysed as inactive there: dropout 10 of 40 "
            "trials. If a value is missing by mistake, leave those trials out.") in page
    assert rep.to_dict()["inactive"] == {"dropout": 10}


def test_a_parameter_an_optuna_objective_suggests_in_one_branch_is_conditional() -> None:
    # its condition is inferred from the trials: the page is not to call it missing by
    # mistake, whose advice would drop every trial of the other branch
    optuna = pytest.importorskip("optuna")

    def objective(trial: Any) -> float:
        lr = trial.suggest_float("lr", 0, 1)
        if trial.suggest_categorical("optimizer", ["sgd", "adam"]) == "sgd":
            return lr + trial.suggest_float("momentum", 0, 1)
        return lr

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=30)
    n_adam = sum(t.params["optimizer"] == "adam" for t in study.trials)
    page = html.unescape(hp.report(study, top=1, seed=0, subspace=False).html())
    assert f"Conditional parameters, inactive in: momentum {n_adam} of 30 trials." in page
    assert "missing by mistake" not in page

def test_a_sampling_record_is_checked_and_survives_pickling() -> None:
    import pickle

    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    with pytest.raises(TypeError, match="SamplingRecord"):
        hp.TrialHistory(space, [{"x": 0.5}], [1.0], sampling={"fixed": {}})  # type: ignore[arg-type]
    record = hp.SamplingRecord(fixed={"x": 0.5}, decisions=[{"action": "fix"}], n_held={"x": 2})
    history = hp.TrialHistory(space, [{"x": 0.5}, {"x": 0.5}], [1.0, 2.0], sampling=record)
    again = pickle.loads(pickle.dumps(history))
    assert again.sampling == record
    assert again.sampling.held("x") == 2


def test_the_stop_tuning_rule_uses_the_reports_quantile(history):
    rep = hp.report(history, cap_quantile=0.1, top=1, surrogate=hp.Forest(n_trees=8))
    same = hp.suggest_subspace(history, top_quantile=0.1, surrogate=hp.Forest(n_trees=8), seed=0)
    assert rep.subspace is not None
    assert rep.subspace.margin == same.margin  # the margin is a share of the best 10 %'s spread
    assert rep.subspace.defaults == same.defaults


def test_a_report_fits_each_model_once(history, monkeypatch) -> None:
    # all trials and the best quarter: two fits, which the subspace suggestion, the
    # decisions and the partial dependence all read (none refits)
    import hpinsight.surrogates._models as models

    fitted = []
    real = models.fit_gp

    def counted(*args, **kwargs):
        fitted.append(kwargs.get("shadows"))
        return real(*args, **kwargs)

    monkeypatch.setattr(models, "fit_gp", counted)
    rep = hp.report(history, top=2)
    assert rep.subspace is not None  # the suggestion was made, from the same two fits
    assert fitted == [True, True]


@pytest.fixture(scope="module")
def mo_study() -> Any:
    return _two_objective_study(n_trials=40)


@pytest.fixture(scope="module")
def mo_rep(mo_study) -> Any:
    return hp.report(mo_study, top=1, seed=0)


def test_a_two_objective_study_gets_a_section_per_objective_and_for_the_front(mo_study, mo_rep):
    assert isinstance(mo_rep, hp.results.MultiObjectiveReport)
    assert mo_rep.objectives == ("values_0", "values_1")
    assert list(mo_rep.sections) == ["values_0", "values_1", "front"]
    # each section is the analysis of that objective alone, as its own report has it
    for name in ("values_1", "front"):
        alone = hp.report(mo_study, top=1, seed=0, objective=name, subspace=False)
        assert mo_rep.sections[name].result.to_dict() == alone.result.to_dict()
    assert mo_rep.front.history.objective_name == "share of trials dominating it"
    # x drives the first objective, y the second: each is kept, and says for which
    decisions = mo_rep.decisions
    assert decisions["x"].tuned
    assert decisions["x"].objective == "values_0"
    assert decisions["y"].tuned
    assert decisions["y"].objective == "values_1"
    # what either objective alone would fix, the other may need: never fixed together
    assert mo_rep.subspace is not None
    for name, sub in mo_rep.subspace.objectives.items():
        assert mo_rep.sections[name].decisions is sub.decisions
    assert set(decisions.to_fix) <= {"z"}


def test_the_json_names_the_objective_of_every_number_and_decides_once(mo_rep):
    doc = json.loads(json.dumps(mo_rep.to_dict(), allow_nan=False))
    assert doc["kind"] == "multi-objective"
    assert doc["objectives"] == ["values_0", "values_1"]
    assert doc["directions"] == {"values_0": "minimize", "values_1": "maximize"}
    for name, section in doc["sections"].items():
        assert section["objective"] == name
        assert section["fanova"]["objective"] == (
            "share of trials dominating it" if name == "front" else name)
        # the decisions are made once, over every objective, at the top
        assert "decisions" not in section
        assert "subspace" not in section
    assert set(doc["decisions"]["objectives"]) == {"values_0", "values_1"}
    assert doc["decisions"]["decisions"]["x"]["objective"] == "values_0"
    assert len({s["title"] for s in doc["sections"].values()}) == 3


def test_the_multi_objective_page_answers_once_then_shows_each_section(mo_rep):
    page = html.unescape(mo_rep.html())
    box = re.search(r'<div class="answer">(.*?)</div>', page, flags=re.S).group(1)
    where = {}
    for state, line in re.findall(r'<p data-state="([a-z_]+)">(.*?)</p>', box, flags=re.S):
        for name in re.findall(r'data-param="([^"]+)"', line):
            assert name not in where, f"{name} is in two groups"
            where[name] = state
    assert where == {d.param: d.state for d in mo_rep.decisions}
    assert page.count('<div class="answer">') == 1  # the sections do not answer again
    advice = page.split("<h2>Which ones you can stop tuning, for every objective</h2>")[1]
    rows = dict(re.findall(r'<tr data-param="([^"]+)" data-state="([a-z_]+)"', advice))
    assert rows == {d.param: d.state for d in mo_rep.decisions}
    sections = re.findall(r'<section id="([^"]+)" data-objective="([^"]+)"><h2>([^<]+)</h2>',
                          page)
    assert [(o, h) for _, o, h in sections] == [
        ("values_0", "Objective values_0"), ("values_1", "Objective values_1"),
        ("front", "Reaching the Pareto front")]
    for anchor, _, _ in sections:
        assert f'href="#{anchor}"' in page
    # each section has its own table of effects and its own figures
    for chunk in page.split("<section ")[1:]:
        assert "<table class=effects>" in chunk
        assert chunk.count("<figure") >= 2
    # the terminal table shows each objective's share and the same decisions
    table = mo_rep.table().splitlines()
    assert table[0].split()[:3] == ["parameter", "values_0", "values_1"]
    for d in mo_rep.decisions:
        line = next(t for t in table if t.startswith(d.param + " "))
        assert d.action in line


def test_the_cli_writes_one_multi_objective_page(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'mo.db'}"
    _two_objective_study(url, n_trials=20)
    out = tmp_path / "mo.html"
    assert main(["report", "--storage", url, "--study", "mo", "--top", "1",
                 "--out", str(out)]) == 0, capsys.readouterr().err
    page = html.unescape(out.read_text())
    assert "<title>hpinsight report: study 'mo'" in page
    assert "2 objectives" in page
    assert page.count('<section id="section-') == 3


def test_the_details_name_what_a_decision_rests_on_when_it_is_not_an_effect():
    # "its strongest effect (missed) is indistinguishable from nothing" read as nonsense:
    # the grounds that are not effects are named as such
    from dataclasses import replace

    from hpinsight._decision_result import ParameterDecision
    from hpinsight._reporting._html import _grounds

    d = ParameterDecision(param="c", state="not_yet_safe", share=0.0, share_std=0.0,
                          share_top=math.nan, evidence="missed", evidence_share=0.0,
                          verdict="indistinguishable from nothing", n_active=200,
                          grounds="missed")
    margin = 0.01
    assert _grounds(d, margin) == "the decision rests on the model's errors on trials left out of its fit"
    for evidence, words in (("noise", "what the noise could hide"), ("cost", "its cost of fixing"),
                            ("disputed", "the two fits' disagreement about it")):
        assert _grounds(replace(d, evidence=evidence, grounds=evidence), margin).endswith(words)
    effect = replace(d, state="matters", evidence="c x lr", verdict="resolved", effect_sd=0.5,
                     grounds=None)
    assert _grounds(effect, margin) == "its strongest effect (c x lr) is resolved"
    # an uncertain effect too small in objective units to count says so, with its number
    tiny = replace(d, evidence="c among the best", verdict="uncertain", effect_sd=0.0006,
                   negligible=True, grounds=None)
    assert _grounds(tiny, margin) == (
        "its strongest effect (c among the best) is uncertain, but its standard deviation "
        "over the space, 0.0006, is at most 0.25 of the margin: too small to matter")
    # the page says what the decision found, and computes no rule of its own
    assert "too small" not in _grounds(replace(tiny, negligible=False), margin)


def test_the_page_says_where_the_refits_find_no_signal(rep):
    # the capped analysis with half its refits left without signal (as refit_fractions
    # leaves one whose prediction is next to flat): the note says so, and every effect in
    # the best-25 % column is uncertain; the report as made has none, and no such note
    import dataclasses

    import numpy as np

    capped = rep.capped
    k = capped.n_refits
    assert k >= 2
    assert capped.n_flat_refits == 0
    shares = np.array(capped.refit_fractions)
    shares[: k // 2 + 1] = np.nan
    doubted = dataclasses.replace(rep, capped=dataclasses.replace(capped, refit_fractions=shares))
    text = re.sub(r"<[^>]+>", "", html.unescape(doubted.html()))
    assert (f"Among the best 25 %, {k // 2 + 1} of the {k} hyperparameter refits find no signal "
            "(their prediction varies by at most 0.1 % of the model's)") in text
    assert "no effect there is judged (every verdict uncertain)" in text
    # the figure draws no bars of them, and its caption says why
    drawn = (f"there {k // 2 + 1} of {k} refits find no signal, so their shares, of next to "
             "nothing, are not drawn")
    assert drawn in text
    assert drawn not in html.unescape(rep.html())
    # one phrase per cell, not a share left out beside its verdict: the best column, one
    # cell per main effect, each "no clear signal" and marked uncertain
    cells = re.findall(r'<td><span class="verdict (\w+)" title="([^"]+)">([^<]+)</span></td>',
                       doubted.html())
    assert len(cells) == len(rep.history.space)
    assert set(cells) == {("uncertain", "uncertain", "no clear signal")}
    assert not re.search(r"no clear signal(</span>)? *<span class=\"verdict", doubted.html())
    # with a signal, the column gives each share and its spread
    shown = re.findall(r'<td>([^<]*) <span class="verdict (\w+)">', rep.html())
    assert len(shown) == len(rep.history.space)
    assert all(" ± " in share for share, _ in shown)
    assert "hyperparameter refits find no signal" not in re.sub(r"<[^>]+>", "", html.unescape(rep.html()))


def test_the_best_column_calls_nothing_only_where_all_trials_do(rep):
    # the report's capped analysis is judged beside its analysis of all trials: the page,
    # report.json and the decisions read the same verdicts
    nothing = "indistinguishable from nothing"
    absent = {frozenset(i.params) for i in rep.result.ranking() if i.verdict == nothing}
    assert absent  # the fixture's analysis calls some effects nothing
    assert rep.capped.nothing_over_all == absent
    over_all = {i.params: i.verdict for i in rep.result.ranking(order=1)}
    assert all(over_all[i.params] == nothing for i in rep.capped.ranking(order=1)
               if i.verdict == nothing)
    saved = json.loads(json.dumps(rep.to_dict()))["fanova_capped"]["nothing_over_all"]
    assert len(saved) == len(absent)
    assert {frozenset(names) for names in saved} == absent
    page = re.sub(r"<[^>]+>", "", html.unescape(rep.html()))
    assert "only where the analysis of all trials does too" in page


def test_the_page_says_when_the_model_predicts_nothing_held_out():
    # pure noise whose fit beat the shadows' null with f2 (22 %): the legend says why
    # nothing is resolved, with the count, and no parameter is in the page's "Matters"
    space = hp.SearchSpace([*(hp.Float(f"f{j}", 0, 1) for j in range(4)), hp.Float("lr", 1e-5, 1e-1, log=True),
                            hp.Int("layers", 1, 8), hp.Int("units", 16, 512, log=True),
                            hp.Categorical("opt", ["adam", "sgd", "rms"]),
                            *(hp.Float(f"g{j}", -3, 3) for j in range(2))])
    configs = space.sample(100, seed=6)
    rep = hp.report(hp.TrialHistory(space, configs, list(np.random.default_rng(6).normal(size=100))), seed=0)
    r = rep.result
    assert r.signal_unshown
    assert not r.signal_doubtful
    page = html.unescape(rep.html())
    assert ("Over all trials, the hyperparameter refits, each fit on half of the trials, rank the other "
            f"half with a median correlation of {r.held_out_rank:.2f}, not above the "
            f"{r.held_out_bound:.2f} that values unrelated to the parameters exceed 5 % of the time") in page
    assert not [d for d in rep.decisions.decisions.values() if d.state in ("matters", "small")]
    assert rep.to_dict()["fanova"]["signal_unshown"] is True


@pytest.mark.parametrize("name", ["r.txt", "r.json.gz", "r"])
def test_save_refuses_a_suffix_it_would_not_write(rep, tmp_path, name):
    # "r.json.gz" and "r.txt" got the HTML page without a word
    with pytest.raises(hp.exceptions.InvalidArgumentError, match=r"\.html page or a \.json document"):
        rep.save(tmp_path / "new" / name)
    assert not (tmp_path / "new").exists()  # nothing made for it


def test_drawing_the_page_leaves_the_users_matplotlib_settings(monkeypatch):
    # The page's figures are drawn with text as text and a fixed id salt. The settings
    # were swapped whole (rc_context) around each figure: a setting the user changed
    # meanwhile, from another thread, was undone when the figure was done.
    import matplotlib
    from matplotlib.figure import Figure

    from hpinsight._reporting import _html

    fig = Figure()
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    seen: list[Any] = []
    real_draw = ax.draw

    def draw_and_change(renderer: Any) -> None:  # the user's thread, while the figure draws
        seen.append(matplotlib.rcParams["svg.fonttype"])
        matplotlib.rcParams["font.size"] = 14.0
        real_draw(renderer)

    monkeypatch.setattr(ax, "draw", draw_and_change)
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": None, "font.size": 10.0}):
        svg = _html._svg(fig)
        assert seen == ["none"]  # text as text while the page's figure draws
        assert "<text" in svg
        assert matplotlib.rcParams["font.size"] == 14.0  # the user's change stays
        assert matplotlib.rcParams["svg.fonttype"] == "path"  # theirs again
        assert matplotlib.rcParams["svg.hashsalt"] is None


def test_a_name_with_dollar_signs_is_drawn_as_written():
    # matplotlib reads text between dollar signs as mathematics: "$\frac{1$" stopped the
    # page (and the report command) with a parse error, and "a$b$c" came out in italics
    name = "$\\frac{1$"
    space = hp.SearchSpace([hp.Float(name, 0, 1), hp.Float("a$b$c", 0, 1)])
    configs = space.sample(30, seed=0)
    history = hp.TrialHistory(space, configs, [c[name] ** 2 + 0.3 * c["a$b$c"] for c in configs])
    page = hp.report(history, seed=0, top=2, surrogate=hp.Forest(n_trees=8)).html()
    svg_texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", page)]
    assert any(name in t for t in svg_texts)
    assert any("a$b$c" in t for t in svg_texts)


def test_cli_called_from_python_leaves_the_callers_logging(tmp_path, capsys):
    # the command quiets Optuna's per-trial lines while it reads a study, and logs its own
    # at INFO: called from Python, the caller's trial lines were gone afterwards
    import logging

    import optuna

    url = f"sqlite:///{tmp_path / 'mo.db'}"
    _two_objective_study(url, n_trials=12)
    ours = logging.getLogger("hpinsight")
    before = (optuna.logging.get_verbosity(), ours.level, list(ours.handlers))
    optuna.logging.set_verbosity(optuna.logging.DEBUG)
    try:
        assert main(["report", "--storage", url, "--study", "mo", "--objective", "0", "--json",
                     "--out", str(tmp_path / "r.json")]) == 0, capsys.readouterr().err
        assert optuna.logging.get_verbosity() == optuna.logging.DEBUG
        assert (ours.level, ours.handlers) == before[1:]
    finally:
        optuna.logging.set_verbosity(before[0])


def test_the_held_out_check_never_quotes_two_numbers_that_print_equal():
    # "a median correlation of 0.28, not above the 0.28" (0.2770 against 0.2780)
    from hpinsight._reporting._html import _two_apart

    assert (_two_apart(0.27696, 0.27803), _two_apart(0.27803, 0.27696)) == ("0.277", "0.278")
    assert _two_apart(0.1, 0.5) == "0.10"
    assert _two_apart(0.3, 0.3) == "0.30"
    assert _two_apart(None, 0.3) == "nan"


def test_a_report_of_trials_at_one_configuration_says_so():
    # hp.fanova warns that no parameter was varied; the report held that warning back
    # and said nothing, beside shares of 40.8, 34.3 and 24.7 %
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("y", 0, 1), hp.Int("z", 1, 9)])
    rng = np.random.default_rng(0)
    same = [{"x": 0.5, "y": 0.5, "z": 5}] * 40
    rep = hp.report(hp.TrialHistory(space, same, list(0.75 + 0.1 * rng.standard_normal(40))), seed=0)
    (note,) = [n for n in rep.notes if "same configuration" in n]
    assert note.startswith("Every one of the 40 trials has the same configuration")
    assert "no parameter was varied" in html.unescape(rep.html())
    assert all(d.state != "fix" for d in rep.decisions.decisions.values())


def test_the_forests_page_defines_every_verdict_it_gives():
    # without shadows the legend defined "uncertain" and "resolved" alone, beside effects
    # the table called "negligible" and "indistinguishable from nothing"
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Float("w", 0, 1)])
    configs = space.sample(30, seed=0)
    history = hp.TrialHistory(space, configs, [c["x"] ** 2 + 1e-4 * c["z"] for c in configs])
    rep = hp.report(history, seed=0, top=1, surrogate=hp.Forest(n_trees=8))
    page = rep.html()
    given = {i.verdict for i in rep.result.ranking()}
    assert len(given) >= 2
    for v in given | {"uncertain", "resolved", "negligible", "indistinguishable from nothing"}:
        assert f"<i>{v}</i>" in page, v


def test_drawing_the_page_does_not_import_pyplot():
    # the page draws on stand-alone figures; importing pyplot chooses a backend for the
    # whole process (a server's, a notebook's), which the page never needs
    import subprocess
    import sys

    code = ("import sys, hpinsight as hp\n"
            "space = hp.SearchSpace([hp.Float('x', 0, 1), hp.Float('z', 0, 1)])\n"
            "cf = space.sample(30, seed=0)\n"
            "rep = hp.report(hp.TrialHistory(space, cf, [c['x'] ** 2 for c in cf]), seed=0, top=1,\n"
            "                surrogate=hp.Forest(n_trees=8))\n"
            "assert '<svg' in rep.html()\n"
            "print('matplotlib.pyplot' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_parameter_named_like_a_rule_gets_the_answer_of_its_effect():
    # a parameter named "noise" that matters was said to rest on "what the noise could
    # hide", one named "cost" with a resolved effect on "its cost of fixing": its name,
    # the effect its decision rests on, was read as the rule of that name
    import html as html_module
    import random
    import re
    import warnings

    names = ("noise", "size", "cost", "hidden")
    space = hp.SearchSpace([hp.Float(n, 0, 1) for n in names])
    configs = space.sample(80, seed=0)
    rnd = random.Random(0)
    y = [4 * (c["noise"] - 0.3) ** 2 + 0.3 * c["size"] + 0.08 * c["cost"] + 0.01 * c["hidden"]
         + 0.01 * rnd.gauss(0, 1) for c in configs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hp.report(hp.TrialHistory(space, configs, y), seed=0)
    noise = rep.decisions["noise"]
    assert noise.state == "matters"
    assert noise.grounds is None
    assert noise.evidence == "noise"
    page = html_module.unescape(rep.html())
    row = re.search(r'<tr data-param="noise".*?</tr>', page, re.S).group(0)
    assert "its strongest effect (noise) is resolved" in row
    assert "what the noise could hide" not in row
    for d in rep.decisions:  # the JSON tells a rule from an effect's name too
        assert rep.to_dict()["decisions"]["decisions"][d.param]["grounds"] == d.grounds
    cost = rep.decisions["cost"]
    if cost.verdict == "resolved":
        assert cost.grounds is None
        assert "Keep tuning: it explains" in cost.sentence


def test_the_legend_prints_the_shadow_the_best_column_is_judged_against(rep):
    # the best-25 % column was judged against its own analysis's shadow, which the page
    # never printed (a share of 2.1 % there was "indistinguishable from nothing" beside a
    # legend quoting only the all-trials shadow of 0.0000018 %)
    from hpinsight._shared import fmt_share

    page = html.unescape(rep.html())
    top_null = rep.capped.shadow_fraction(1)
    assert top_null is not None
    assert not rep.capped.signal_doubtful
    assert (f"({fmt_share(rep.result.shadow_fraction(1))} here, "
            f"{fmt_share(rep.result.shadow_fraction(2))} for an interaction, "
            f"{fmt_share(top_null)} among the best 25 %)") in page
