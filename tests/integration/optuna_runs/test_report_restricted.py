"""A report of a study that ran under a restriction shows the restriction, counts the trials
sampled under it, and never advises tuning or fixing as if nothing were fixed."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

import hpinsight as hp

optuna = pytest.importorskip("optuna")
pytest.importorskip("matplotlib")

from hpinsight.integrations.optuna import ShrinkingSampler, release, restrict  # noqa: E402


def objective(trial: optuna.Trial) -> float:
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    trial.suggest_float("noise", 0.0, 1.0)
    width = trial.suggest_int("width", 1, 64, log=True)
    return (math.log10(lr) + 2.0) ** 2 + {"a": 0.0, "b": 0.5, "c": 1.0}[kind] + 0.01 * width


def _row(page: str, name: str) -> str:
    found = re.search(rf'<tr data-param="{name}" data-state="[a-z_]+"><td>{name}</td>'
                      r"<td class=(keep|fix)>(.*?)</td><td>(.*?)</td></tr>", page)
    assert found, f"no advice row for {name}"
    return found.group(0)


@pytest.mark.slow
def test_report_shows_the_restriction_and_advises_with_it_in_mind(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(  # no exploring trials: every later trial holds both
        storage=storage, study_name="restricted",
        sampler=ShrinkingSampler(optuna.samplers.TPESampler(seed=0), explore_every=None))
    study.optimize(objective, n_trials=40)
    # a restriction by hand that fixes lr, which matters, and noise, which does not
    restrict(study, {"lr": 0.5, "noise": 0.25}, why="by hand, for the test",
             after_trial=study.trials[-1].number)
    study.optimize(objective, n_trials=50)

    history = hp.adapters.from_optuna(optuna.load_study(study_name="restricted",
                                                            storage=storage))
    record = history.sampling
    assert record is not None
    assert dict(record.fixed) == {"lr": 0.5, "noise": 0.25}
    assert dict(record.n_held or {}) == {"lr": 50, "noise": 50}  # only trials 40..89
    assert [d["action"] for d in record.decisions] == ["fix"]

    rep = hp.report(history, top=2, seed=0)
    page = html.unescape(rep.html())
    assert "How the trials were sampled" in page
    assert "Restriction in force: lr fixed at 0.5; noise fixed at 0.25." in page
    assert "lr held fixed in 50; noise held fixed in 50" in page
    assert "by hand, for the test" in page
    assert "lr varied in 40 of 90" in page
    assert rep.subspace is not None
    for name in ("lr", "noise"):
        row = _row(page, name)
        assert "keep tuning" not in row, row
        assert "<td class=fix>fix at" not in row, row
        assert "since trial 40" in row, row
        assert "held by this or an earlier restriction in 50 of 90 analysed trials" in row, row
        assert rep.decisions[name].state in ("fixed", "release")
    lr = _row(page, "lr")
    if rep.decisions["lr"].state == "release":  # it matters: the report says to release it
        assert "release: it has an effect" in lr
    data = rep.to_dict()
    assert data["sampling"]["n_held"] == {"lr": 50, "noise": 50}
    json.dumps(data, allow_nan=False)

    release(study)
    study.optimize(objective, n_trials=5)
    after = hp.adapters.from_optuna(study).sampling
    assert after is not None
    assert not after.fixed
    assert dict(after.n_held or {}) == {"lr": 50, "noise": 50}
    page = html.unescape(hp.report(hp.adapters.from_optuna(study), top=1, seed=0).html())
    assert "No restriction in force now." in page
    assert "keep tuning" in _row(page, "lr") or "fix at" in _row(page, "lr")


def test_an_unrestricted_study_has_no_sampling_record() -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=5)
    assert hp.adapters.from_optuna(study).sampling is None


def test_a_restriction_the_study_s_sampler_never_applied_is_not_called_fixed() -> None:
    # a plain TPESampler ignores the restriction: "noise" keeps varying, and the report said
    # "fixed at 0.25" beside it
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(objective, n_trials=30)
    restrict(study, {"noise": 0.25}, why="by hand", after_trial=study.trials[-1].number)
    study.optimize(objective, n_trials=30)
    assert len({t.params["noise"] for t in study.trials[30:]}) == 30
    history = hp.adapters.from_optuna(study)
    assert history.sampling is not None
    assert history.sampling.n_held is None
    rep = hp.report(history, top=1, seed=0)
    assert rep.decisions["noise"].state not in ("fixed", "release")
    page = html.unescape(rep.html())
    assert "fixed at 0.25" not in _row(page, "noise")
    assert "Restricted to 0.25, but the latest trials analysed after the restriction do not " \
           "say they were sampled under it: the study's sampler is not (or no longer) " \
           "hpinsight's ShrinkingSampler" in page


def test_a_restriction_no_longer_applied_after_a_sampler_change_is_not_called_fixed() -> None:
    # held by a ShrinkingSampler for a while, then the study went on with a plain sampler
    # (loaded without the wrapper): the earlier marks made the report say "Fixed at 0.25"
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0),
                                                         explore_every=None))
    study.optimize(objective, n_trials=30)
    restrict(study, {"noise": 0.25}, why="by hand", after_trial=study.trials[-1].number)
    study.optimize(objective, n_trials=5)
    assert [t.params["noise"] for t in study.trials[30:]] == [0.25] * 5
    study.sampler = optuna.samplers.RandomSampler(seed=1)
    study.optimize(objective, n_trials=25)
    history = hp.adapters.from_optuna(study)
    assert history.sampling is not None
    assert history.sampling.n_held is None
    assert hp.report(history, top=1, seed=0).decisions["noise"].state not in ("fixed", "release")


def test_trials_held_at_an_earlier_value_are_not_counted_as_held_at_todays() -> None:
    # held at 10 for 20 trials, released, held at 40 for 5: the page said "Held at 40 by
    # the restriction in force (25 of 40 analysed trials)", five of which were
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0),
                                                         explore_every=None))
    study.optimize(objective, n_trials=10)
    restrict(study, {"width": 10}, why="first")
    study.optimize(objective, n_trials=20)
    release(study)
    study.optimize(objective, n_trials=5)
    restrict(study, {"width": 40}, why="second")
    study.optimize(objective, n_trials=5)
    assert sum(t.params["width"] == 40 for t in study.trials) == 5
    page = html.unescape(hp.report(study, seed=0).html())
    assert ("Held at 40 by the restriction in force; held by this or an earlier restriction "
            "in 25 of 40 analysed trials.") in page
    assert "(25 of 40 analysed trials)" not in page


def test_a_decision_without_its_trial_and_a_short_study_s_unvaried_value_print_as_values() -> None:
    # restrict() without after_trial (optional, as in the README) put "None" in the table's
    # "after trial" cell; it now records the study's last finished trial. And in a study
    # of 8 trials a parameter left at 64 in all of them "ran it at None" (its value was
    # read only beyond MIN_ACTIVE_TRIALS)
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=20)
    restrict(study, {"noise": 0.5}, why="by hand")
    study.optimize(objective, n_trials=10)
    page = hp.report(study, seed=0).html()
    table = page[page.index("<th>after trial</th>"):]
    assert re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td>", table)[0] == ("19", "fix")

    def short(t: optuna.Trial) -> float:
        t.suggest_int("units", 16, 256)
        return (t.suggest_float("x", 0, 1) - 0.3) ** 2

    few = optuna.create_study()
    for k in range(8):
        few.enqueue_trial({"x": k / 8, "units": 64})
    few.optimize(short, n_trials=8)
    rep = hp.report(few, seed=0)
    units = rep.decisions["units"]
    assert units.value == 64
    assert "ran it at 64" in units.sentence
    assert "None" not in html.unescape(rep.html()).split("ran it at")[1][:10]


def test_a_held_conditional_parameter_varied_only_where_it_was_active() -> None:
    # "beta varied in 60 of 150" counted the trials where beta was inactive as varied
    def conditional(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.suggest_categorical("kind", ["a", "b"]) == "b":
            return (x - 0.3) ** 2 + 0.1 * trial.suggest_float("beta", 0.0, 1.0)
        return (x - 0.3) ** 2 + 0.2

    study = optuna.create_study(sampler=ShrinkingSampler(
        optuna.samplers.RandomSampler(seed=0), explore_every=None))
    study.optimize(conditional, n_trials=40)
    restrict(study, {"beta": 0.5}, why="by hand", after_trial=39)
    study.optimize(conditional, n_trials=40)
    active = sum("beta" in t.params for t in study.trials)
    held = sum(t.params.get("beta") == 0.5 for t in study.trials)
    assert held == sum("beta" in t.params for t in study.trials[40:]) > 0
    assert active - held == sum("beta" in t.params for t in study.trials[:40])
    rep = hp.report(study, top=1, seed=0)
    page = html.unescape(rep.html())
    assert f"beta varied in {active - held} of 80" in page
