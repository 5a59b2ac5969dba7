"""Publishing live importances into optuna-dashboard: the note says what the decisions
say, the figure's bars are the result's numbers, saves replace each other, failures
never reach the study, and a missing package is named with its extra."""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import math
import re
from typing import Any

import numpy as np
import pytest

import hpinsight as hp
from hpinsight._decision_result import answer_groups, member_note
from hpinsight._decisions import decide
from hpinsight.integrations._dashboard import (
    NOTE_HEADING,
    check_publish,
    figure_id_for,
    importance_figure,
    merged_note,
    summary_note,
)
from hpinsight.integrations._live import LiveFanova, RefitOptions

optuna = pytest.importorskip("optuna")
optuna_dashboard = pytest.importorskip("optuna_dashboard")
pytest.importorskip("plotly")

from hpinsight.integrations.optuna import ImportanceCallback  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)


# ---------------------------------------------------------------- helpers
def _history(n: int = 80) -> hp.TrialHistory:
    space = hp.SearchSpace([hp.Float("lr", 1e-4, 1, log=True), hp.Float("a_b", 0, 1),
                            hp.Categorical("opt", ["sgd", "adam"])])
    configs = space.sample(n, seed=1)
    y = [(math.log10(c["lr"]) + 2) ** 2 + 0.3 * (c["opt"] == "sgd") for c in configs]
    return hp.TrialHistory(space, configs, y)


def _snapshot(history: hp.TrialHistory, result: Any) -> Any:
    fitter = LiveFanova(RefitOptions(isolation="thread"), logger=logging.getLogger("test"))
    return fitter.summarize(history, result)[1]


def _objective(trial: Any) -> float:
    x = trial.suggest_float("x", -1, 1)
    y = trial.suggest_float("y", -1, 1)
    return x**2 + 0.01 * y


def _plot_keys(study: Any) -> list[str]:
    attrs = study._storage.get_study_system_attrs(study._study_id)
    return sorted(k for k in attrs if k.startswith("dashboard:plot_data:") and attrs[k])


@pytest.fixture(scope="module")
def analysed() -> tuple[hp.TrialHistory, Any]:
    history = _history()
    return history, hp.fanova(history, seed=0)


# ---------------------------------------------------------------- the note
def test_the_note_gives_each_parameter_its_decisions_group_and_words(analysed) -> None:
    history, result = analysed
    decisions = decide(result, sampling=history.sampling)
    note = summary_note(result, _snapshot(history, result), decisions)
    assert note.startswith(NOTE_HEADING)
    lines = {m.group(1): m.group(2) for m in re.finditer(r"^- \*\*(.+?):\*\* (.*)$", note, re.M)}
    for _, heading, members in answer_groups(decisions):
        shown = lines[heading].replace("\\", "")  # Markdown escapes: a_b is written a\_b
        for d in members:
            assert f"{d.param} {member_note(d)}".rstrip() in shown
    placed = [n for _, _, ms in answer_groups(decisions) for n in (d.param for d in ms)]
    assert sorted(placed) == sorted(history.space.names)  # each once
    assert decisions["lr"].state == "matters"
    assert "a\\_b" in note  # Markdown would otherwise read a_b's underscore
    # no costs were estimated: stopping is not judged, and the note says so
    assert "**You can stop tuning:** not judged here" in note
    assert f"{history.n_trials} trials analysed (0 left out)" in note
    assert f"leave-one-out R²) {result.fit_r2:.2f}" in note
    assert "\n---\n" not in note  # the rule below it is the user's boundary


def test_with_a_subspace_the_note_says_what_you_can_stop_tuning(analysed) -> None:
    history, result = analysed
    sub = hp.suggest_subspace(history, seed=0)
    note = summary_note(result, _snapshot(history, result), sub.decisions)
    fixable = sub.decisions.in_state("fix")
    assert fixable  # a_b does nothing
    line = next(ln for ln in note.splitlines() if ln.startswith("- **You can stop tuning:**"))
    for name in fixable:
        assert f"{name} ({sub.decisions[name].action})" in line.replace("\\", "")
    assert "not judged" not in note


def test_decisions_over_several_objectives_are_judged_though_they_have_no_margin_of_their_own(
        analysed) -> None:
    # a decision over several objectives has margin NaN (each objective has its own): the
    # note said "not judged here: that needs shrink_to='auto'" while that ran
    history, result = analysed
    sub = hp.suggest_subspace(history, seed=0)
    nothing_fixed = {n: dataclasses.replace(d, state="not_yet_safe")
                     for n, d in sub.decisions.decisions.items()}
    each = dataclasses.replace(sub.decisions, decisions=nothing_fixed)
    joint = dataclasses.replace(each, margin=math.nan, objectives={"a": each, "b": each})
    note = summary_note(result, _snapshot(history, result), joint)
    assert "- **You can stop tuning:** none yet." in note
    assert "not judged" not in note


def test_a_capped_refit_gives_its_verdicts_among_the_best_and_decides_nothing(
        analysed) -> None:
    # a capped refit alone is no analysis of all trials: the note says what it shows
    # among the best and that stopping is not judged, never "stop tuning"
    history, _ = analysed
    capped = hp.fanova(history, seed=0, cap_quantile=0.25)
    note = summary_note(capped, _snapshot(history, capped), None)
    lines = {m.group(1): m.group(2) for m in re.finditer(r"^- \*\*(.+?):\*\* (.*)$", note, re.M)}
    shown = {n: v for v, heading in (("resolved", "Matters among the best 25 %"),
                                     ("uncertain", "Uncertain among the best 25 %"))
             for n in [i.params[0] for i in capped.ranking(order=1) if i.verdict == v]
             if heading in lines and n in lines[heading].replace("\\", "")}
    assert set(shown) == set(history.space.names)  # each parameter under its verdict
    assert shown["lr"] == "resolved"
    assert lines["You can stop tuning"].startswith("not judged here")
    assert "nothing" not in note
    with pytest.raises(hp.exceptions.InvalidArgumentError, match="capped"):
        decide(capped)  # a capped refit is not decided as if it were all trials
    # most refits flat: every verdict uncertain, every share a fraction of next to
    # nothing; the note says there is no clear signal and quotes no share
    shares = np.array(capped.refit_fractions)
    shares[: shares.shape[0] // 2 + 1] = np.nan
    doubtful = dataclasses.replace(capped, refit_fractions=shares)
    note = summary_note(doubtful, _snapshot(history, doubtful), None)
    lines = {m.group(1): m.group(2) for m in re.finditer(r"^- \*\*(.+?):\*\* (.*)$", note, re.M)}
    assert lines["Among the best 25 %"] == (
        f"no clear signal ({shares.shape[0] // 2 + 1} of {shares.shape[0]} refits find no signal); "
        "no effect is judged there yet.")
    assert not any(k.startswith(("Matters", "Uncertain")) for k in lines)
    assert lines["You can stop tuning"].startswith("not judged here")
    # the snapshot beside it: the status line quotes no share, the stored summary and
    # the snapshot's JSON carry the flag, and a pickled snapshot keeps it
    import pickle

    from hpinsight.integrations._live import compact_summary

    snap = _snapshot(history, doubtful)
    assert snap.doubtful
    assert not _snapshot(history, capped).doubtful
    assert not _snapshot(history, hp.fanova(history, seed=0)).doubtful
    k = shares.shape[0]  # the counts themselves: "most" claimed more than 4 of 12 flat
    assert snap.ranking_line() == f"no clear signal among the best ({k // 2 + 1} of {k} refits find no signal)"
    assert "%" not in snap.ranking_line()
    assert compact_summary(snap)["no_clear_signal"] is True
    assert "no_clear_signal" not in compact_summary(_snapshot(history, capped))
    assert snap.to_dict()["doubtful"] is True
    assert pickle.loads(pickle.dumps(snap)).doubtful
    assert pickle.loads(pickle.dumps(snap)).flat_refits == (k // 2 + 1, k)
    # and the figure beside the note draws no bars of its shares, and says why
    fig = importance_figure(doubtful)
    assert all(math.isnan(x) for x in fig.data[0].x)
    assert [a.text for a in fig.layout.annotations] == [
        f"among the best 25 %, no clear signal: not drawn<br>({shares.shape[0] // 2 + 1} of "
        f"{shares.shape[0]} refits find no signal)"]
    assert not importance_figure(capped).layout.annotations


def test_a_capped_live_refit_publishes_its_note_among_the_best() -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    with ImportanceCallback(every_n_trials=30, min_trials=30, seed=0, publish="dashboard",
                            cap_quantile=0.5, isolation="thread", max_refit_share=1.0) as cb:
        study.optimize(_objective, n_trials=30, callbacks=[cb])
        assert cb.wait(60)
    assert cb.errors == ()
    note = optuna_dashboard.get_note(study)
    assert note.startswith(NOTE_HEADING)
    latest = cb.latest
    assert latest is not None
    assert latest.cap_quantile == 0.5
    # 30 random trials: most refits of the best half find no signal here, and the note
    # quotes no share of theirs (with a signal it lists x's: the test above)
    assert latest.signal_doubtful
    assert "**Among the best 50 %:** no clear signal" in note
    assert "among the best 50 %:** x (" not in note
    assert "**You can stop tuning:** not judged here" in note
    assert "30 trials analysed" in note


S = f"{NOTE_HEADING}\nnew"
B = f"{NOTE_HEADING} for b\nfor b"


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        ("", S),
        ("my own text", f"{S}\n\n---\n\nmy own text"),
        (f"{NOTE_HEADING}\nold summary", S),
        (f"{NOTE_HEADING}\nold\n\n---\n\nmine, kept", f"{S}\n\n---\n\nmine, kept"),
        # two callbacks on different objectives: each replaced the other's summary
        (B, f"{B}\n\n---\n\n{S}"),
        (f"{NOTE_HEADING}\nold\n\n---\n\n{B}\n\n---\n\nmine",
         f"{S}\n\n---\n\n{B}\n\n---\n\nmine"),
    ],
    ids=["empty", "a-users-note", "an-old-summary", "an-old-summary-and-a-users-text",
         "another-objectives-summary", "two-summaries-and-a-users-text"],
)
def test_the_summary_replaces_the_old_one_and_keeps_a_users_text(current: str,
                                                                   expected: str) -> None:
    assert merged_note(current, S) == expected


# ---------------------------------------------------------------- the figure
def test_the_figures_bars_are_the_results_numbers(analysed) -> None:
    _, result = analysed
    fig = importance_figure(result)
    bars = fig.data[0]
    ranked = result.ranking()[:10]
    assert list(bars.y) == [" x ".join(i.params) for i in ranked]
    np.testing.assert_array_equal(bars.x, [i.mean for i in ranked])
    np.testing.assert_array_equal(bars.error_x.array, [i.std for i in ranked])
    assert f"after {result.n_trials} trials" in fig.layout.title.text
    assert len(fig.to_json()) < 2045  # one system attribute of the dashboard's


def test_the_figure_id_is_an_html_id_per_summary_key() -> None:
    assert figure_id_for("hpinsight:importance") == "hpinsight-importance"
    assert figure_id_for("hpinsight:importance:target") == "hpinsight-importance-target"


# ---------------------------------------------------------------- the option
@pytest.mark.parametrize(
    ("value", "expected"),
    [("attrs", "attrs"), ("dashboard", "dashboard"), (None, None), (True, "attrs"),
     (False, None)],
    ids=["attrs", "dashboard", "none", "true", "false"],
)
def test_publish_takes_a_place_or_its_earlier_boolean(value: Any, expected: Any) -> None:
    assert check_publish(value, "f") == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"publish": "dashbord"}, ValueError, r"'publish' parameter of ImportanceCallback must "
                                              r"be 'attrs'.*Got 'dashbord' instead"),
        ({"publish": 1.5}, ValueError, "Got 1.5 instead"),
    ],
    ids=["typo", "number"],
)
def test_publish_errors(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ImportanceCallback(**kwargs)


@pytest.mark.parametrize("missing", ["optuna_dashboard", "plotly"])
def test_a_missing_dashboard_is_named_with_its_extra_at_construction(
        monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == missing else find(name, *a))
    with pytest.raises(ImportError, match=rf"ImportanceCallback\(publish='dashboard'\) needs "
                                          rf"the optional dependency '{missing}'.*"
                                          r'pip install "hpinsight\[dashboard\]"'):
        ImportanceCallback(publish="dashboard")
    ImportanceCallback(publish="attrs").close()  # the attribute needs neither


# ---------------------------------------------------------------- in a study
def test_each_refit_replaces_the_figure_and_the_summary_and_keeps_the_users_note() -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    optuna_dashboard.save_note(study, "Run on the new cluster.")
    with ImportanceCallback(every_n_trials=10, min_trials=20, seed=0, publish="dashboard",
                            isolation="thread", max_refit_share=1.0) as cb:
        study.optimize(_objective, n_trials=20, callbacks=[cb])
        assert cb.wait(60)
        first = optuna_dashboard.get_note(study)
        keys = _plot_keys(study)
        study.optimize(_objective, n_trials=10, callbacks=[cb])
        assert cb.wait(60)
    assert cb.errors == ()
    assert first.startswith(NOTE_HEADING)
    assert "20 trials analysed" in first
    assert first.endswith("\n\n---\n\nRun on the new cluster.")
    second = optuna_dashboard.get_note(study)
    assert "30 trials analysed" in second
    assert "20 trials analysed" not in second
    assert second.endswith("\n\n---\n\nRun on the new cluster.")
    assert _plot_keys(study) == keys  # one figure, replaced: nothing piles up
    assert {k.rsplit(":", 1)[0] for k in keys} == {"dashboard:plot_data:hpinsight-importance"}
    attrs = study._storage.get_study_system_attrs(study._study_id)
    stored = "".join(attrs[k] for k in keys)
    assert "after 30 trials" in stored
    assert study.user_attrs["hpinsight:importance"]["n_trials"] == 30  # the attribute too
    # the note shows decisions: the refit weighs the pairs, as a report's does
    assert cb.latest is not None
    assert cb.latest.max_order == 2


def test_a_failing_dashboard_never_reaches_the_study_and_is_said_once(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("dashboard storage is read-only")

    monkeypatch.setattr(optuna_dashboard, "save_plotly_graph_object", broken)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    with caplog.at_level(logging.WARNING, logger="optuna.hpinsight"), ImportanceCallback(
            every_n_trials=10, min_trials=20, seed=0, publish="dashboard", isolation="thread",
            max_refit_share=1.0) as cb:
        for n in (20, 10, 10):
            study.optimize(_objective, n_trials=n, callbacks=[cb])
            assert cb.wait(60)
    assert [s.n_trials for s in cb.history] == [20, 30, 40]  # the refits went on
    assert len(cb.errors) == 3
    assert all("read-only" in str(e) for e in cb.errors)
    said = [r for r in caplog.records if "optuna-dashboard" in r.getMessage()]
    assert len(said) == 1


def test_watch_publishes_into_the_dashboard(tmp_path: Any, capsys: Any) -> None:
    from hpinsight.cli import main

    url = f"sqlite:///{tmp_path / 'w.db'}"
    storage = optuna.storages.RDBStorage(url)
    try:
        study = optuna.create_study(study_name="w", storage=storage,
                                    sampler=optuna.samplers.RandomSampler(seed=0))
        study.optimize(_objective, n_trials=25)
        assert main(["watch", "--storage", url, "--study", "w", "--once",
                     "--publish", "dashboard"]) == 0
        note = optuna_dashboard.get_note(study)
        assert note.startswith(NOTE_HEADING)
        assert "25 trials analysed" in note
        assert _plot_keys(study)
    finally:
        storage.engine.dispose()


def test_the_note_shows_the_latest_shrink_decision_even_between_refits() -> None:
    # a decision is taken in the trial's thread; the dashboard shows it from the refit
    # thread, even when no refit is due then or a refit already read those trials
    from hpinsight.integrations.optuna import ShrinkingSampler

    def objective(trial: Any) -> float:
        lr = trial.suggest_float("lr", 1e-4, 1, log=True)
        return (math.log10(lr) + 2) ** 2 + 0 * trial.suggest_float("a", 0, 1)

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0, publish="dashboard",
                            isolation="thread", max_refit_share=1.0, shrink_to="auto",
                            shrink_after=20, narrow_quantile=None)  # fixing alone
    study.optimize(objective, n_trials=61, callbacks=[cb])  # decided as trial 60 starts
    assert cb.close(wait=60)
    assert cb.errors == ()
    assert cb.subspace is not None
    assert cb.subspace.n_trials == 60
    note = optuna_dashboard.get_note(study)
    assert "61 trials analysed" in note  # the last refit, at close
    assert "decisions on the first 60;" in note  # the decision at 60 is the one shown
    assert f"**Fixed:** a ({cb.subspace.decisions['a'].action})." in note
    assert study.user_attrs["hpinsight:importance"]["decisions"] == {"lr": "matters",
                                                                     "a": "fixed"}
