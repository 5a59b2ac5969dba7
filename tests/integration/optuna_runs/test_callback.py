"""ImportanceCallback in real Optuna studies: results, publishing, threads, failures."""

from __future__ import annotations

import itertools
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import optuna
import pytest

import hpinsight as hp
from hpinsight.integrations.optuna import SUMMARY_KEY, ImportanceCallback


@pytest.fixture
def log_lines(capture_log: Callable[[str], list[str]]) -> Iterator[list[str]]:
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.INFO)
    try:
        yield capture_log("optuna.hpinsight")
    finally:
        optuna.logging.set_verbosity(verbosity)


def _objective(t: optuna.Trial) -> float:
    x = t.suggest_float("x", -2, 2)
    lr = t.suggest_float("lr", 1e-4, 1, log=True)
    kind = t.suggest_categorical("kind", ["a", "b"])
    z = t.suggest_int("z", 0, 9) if kind == "b" else 0
    return x**2 + 0.3 * (np.log10(lr) + 2) ** 2 + 0.01 * z


def test_refits_match_a_post_hoc_analysis_and_are_published(log_lines: list[str]) -> None:
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=3)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_objective, n_trials=65, callbacks=[cb])
    assert cb.close(wait=120)
    snaps = cb.history
    counts = [s.n_trials for s in snaps]
    assert counts == sorted(set(counts))
    assert counts[0] >= 20
    assert counts[-1] == 65  # wait() flushed the trials after the last multiple of 10
    assert not cb.errors

    # a live refit analyses the pairs as a report does (2 to 12 parameters)
    post_hoc = hp.fanova(hp.adapters.from_optuna(study), seed=3, max_order=2)
    latest = cb.latest
    assert latest is not None
    np.testing.assert_array_equal(latest.variances, post_hoc.variances)
    assert snaps[-1].importances["x"] == pytest.approx(post_hoc.importance("x").mean)
    assert next(iter(snaps[-1].importances)) == "x"
    assert dict(snaps[-1].verdicts) == {n: post_hoc.importance(n).verdict
                                        for n in post_hoc.space.names}
    assert snaps[-1].verdicts["x"] == "resolved"

    published = study.user_attrs[SUMMARY_KEY]
    assert published["n_trials"] == 65
    assert published["importance"]["x"][0] == pytest.approx(post_hoc.importance("x").mean, abs=5e-4)
    assert len(json.dumps(published)) <= 1024
    ranking_lines = [line for line in log_lines if line.startswith("hpinsight: ")]
    assert len(ranking_lines) == len(snaps)
    assert "65 trials" in ranking_lines[-1]
    assert "x " in ranking_lines[-1]


def test_the_study_is_not_held_up_by_a_refit() -> None:
    """A refit blocked on purpose: the study still finishes its trials, then wait() flushes."""
    gate = threading.Event()
    entered = threading.Event()

    def slow_target(t: optuna.trial.FrozenTrial) -> float:
        entered.set()
        gate.wait(60)
        return float(t.value)

    # no time budget: the first refit must start at trial 10 of this sub-second study
    cb = ImportanceCallback(every_n_trials=5, min_trials=10, seed=0, target=slow_target,
                            max_refit_share=1.0)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    study.optimize(_objective, n_trials=10, callbacks=[cb])
    assert entered.wait(30)  # the first refit has started and is stuck
    study.optimize(_objective, n_trials=30, callbacks=[cb])  # ... the study runs on meanwhile
    assert len(study.trials) == 40
    assert cb.history == ()  # nothing finished yet
    gate.set()
    assert cb.close(wait=120)
    # the requests made while blocked collapsed into one pending refit, then wait()'s
    counts = [s.n_trials for s in cb.history]
    assert counts[-1] == 40
    assert len(counts) <= 3


@pytest.mark.parametrize("n_jobs", [1, 4], ids=["serial", "threads"])
def test_failures_never_reach_optuna(n_jobs: int, log_lines: list[str]) -> None:
    def broken_target(t: optuna.trial.FrozenTrial) -> float:
        raise RuntimeError("target exploded")

    cb = ImportanceCallback(every_n_trials=5, min_trials=10, target=broken_target)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_objective, n_trials=30, callbacks=[cb], n_jobs=n_jobs)
    assert cb.close(wait=60)
    states = {t.state for t in study.trials}
    assert states == {optuna.trial.TrialState.COMPLETE}
    assert len(study.trials) == 30
    assert cb.errors
    assert all(isinstance(e, RuntimeError) for e in cb.errors)
    assert any("target exploded" in line and "the optimization goes on" in line for line in log_lines)
    assert cb.latest is None


def test_threads_and_multi_objective_choice() -> None:
    study = optuna.create_study(
        directions=["minimize", "maximize"], sampler=optuna.samplers.RandomSampler(seed=0)
    )
    front = ImportanceCallback(every_n_trials=10, min_trials=10, seed=0)
    chosen = ImportanceCallback(every_n_trials=10, min_trials=10, objective="values_1", seed=0)
    first = ImportanceCallback(every_n_trials=10, min_trials=10, objective=0, seed=0)
    shrinking = ImportanceCallback(every_n_trials=10, min_trials=10, shrink_to=2)

    def two(t: optuna.Trial) -> tuple[float, float]:
        a, b = t.suggest_float("a", 0, 1), t.suggest_float("b", 0, 1)
        t.suggest_float("c", 0, 1)
        return a, b**2

    study.optimize(two, n_trials=40, n_jobs=4, callbacks=[front, chosen, first, shrinking])
    for cb in (front, chosen, first, shrinking):
        assert cb.close(60)
    # each objective's callback publishes under its own key, none overwrites another
    assert len({front.summary_key, chosen.summary_key, first.summary_key}) == 3
    assert next(iter(study.user_attrs[chosen.summary_key]["importance"])) == "b"
    assert next(iter(study.user_attrs[first.summary_key]["importance"])) == "a"
    # without objective=, the Pareto front: a and b both decide it, c does nothing
    assert front.summary_key == SUMMARY_KEY
    assert not front.errors
    ranked = list(study.user_attrs[SUMMARY_KEY]["importance"])
    assert set(ranked[:2]) == {"a", "b"}
    assert front.history[-1].n_trials == 40
    # its status says how many trials are on the front, not "best 0"
    on_front = len(study.best_trials)
    assert front.history[-1].front_size == on_front
    # (threads make the front's size vary from run to run; one trial is singular)
    assert front.history[-1].best_text() == ("front of 1 trial" if on_front == 1
                                             else f"front of {on_front} trials")
    assert study.user_attrs[SUMMARY_KEY]["front_size"] == on_front
    assert first.history[-1].front_size is None
    assert first.history[-1].best_text() == f"best {min(t.values[0] for t in study.trials):.6g}"
    # shrinking to the top 2 of one ranking could fix what the other objective needs:
    # refused once, at the first trial, not at every refit ('auto' decides over both)
    assert len(shrinking.errors) == 1
    assert "cannot shrink_to=2 on study" in str(shrinking.errors[0])
    assert shrinking.history == ()
    assert not chosen.errors
    assert next(iter(chosen.history[-1].importances)) == "b"
    assert chosen.history[-1].n_trials == 40


def test_summary_stays_under_the_display_limit_with_many_parameters() -> None:
    def wide(t: optuna.Trial) -> float:
        return sum((i % 7) * t.suggest_float(f"parameter_with_a_long_name_{i:03d}", 0, 1)
                   for i in range(120))

    cb = ImportanceCallback(every_n_trials=30, min_trials=30, seed=0)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(wide, n_trials=30, callbacks=[cb])
    assert cb.close(120)
    published: dict[str, Any] = study.user_attrs[SUMMARY_KEY]
    assert len(json.dumps(published)) <= 1024
    assert published["more"] == 120 - len(published["importance"])
    assert published["more"] > 0
    top = list(cb.history[-1].importances)[: len(published["importance"])]
    assert list(published["importance"]) == top


def test_callback_ignores_unfinished_trials_and_rejects_bad_options() -> None:
    cb = ImportanceCallback(every_n_trials=1, min_trials=2)
    study = optuna.create_study()
    study.optimize(lambda t: (_ for _ in ()).throw(optuna.TrialPruned()), n_trials=5, callbacks=[cb])
    assert cb.close(10)
    assert cb.history == ()
    with pytest.raises(ValueError, match="every_n_trials"):
        ImportanceCallback(every_n_trials=0)
    with pytest.raises(TypeError, match="target"):
        ImportanceCallback(target="value")  # type: ignore[arg-type]


def test_refits_run_in_a_child_process_that_close_stops() -> None:
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=1)
    threaded = ImportanceCallback(every_n_trials=10, min_trials=20, seed=1,
                                  isolation="thread")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_objective, n_trials=30, callbacks=[cb, threaded])
    assert cb.wait(120)
    pid = cb._refitter.fitter.worker_pid
    assert pid is not None
    assert pid != os.getpid()
    assert threaded.close(120)
    assert threaded._refitter.fitter.worker_pid is None  # never started one
    assert cb.close(120)
    assert cb._refitter.fitter.worker_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert cb.latest is not None
    assert threaded.latest is not None
    np.testing.assert_array_equal(cb.latest.variances, threaded.latest.variances)
    # which trial counts refits see depends on timing; the last one is on all trials
    assert cb.history[-1].n_trials == threaded.history[-1].n_trials == 30
    with pytest.raises(ValueError, match="isolation"):
        ImportanceCallback(isolation="subprocess")  # type: ignore[arg-type]


def test_a_cheap_study_is_not_slowed_by_refits_beyond_their_share() -> None:
    # 300 trials with refits due at every one, on injected clocks: each trial is one second
    # of the study's time and each refit five seconds of the refit thread's. A share of
    # 10 % then allows one refit per 50 trials once the first has been paid for: six, plus
    # one running and one pending when their costs were not yet counted, plus the flush at
    # close. (The budget's arithmetic itself is tested in tests/unit/test_callback_budget.)
    cb = ImportanceCallback(every_n_trials=1, min_trials=10, seed=0, max_refit_share=0.1)
    study_seconds = itertools.count()
    cb.clock = lambda: float(next(study_seconds))
    refit_seconds = itertools.count()
    cb._refits.cost_clock = lambda: 5.0 * ((next(refit_seconds) + 1) // 2)  # start, end, ...
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_objective, n_trials=300, callbacks=[cb])
    assert cb.close(120)
    refits = len(cb.history)
    assert cb._refits.busy_seconds == 5.0 * refits  # the refits ran on the injected clock
    assert 1 <= refits <= 300 * 0.1 / 5.0 + 2 + 1  # not one per trial, as were due
    assert cb.history[-1].n_trials == 300  # close() flushed the last one, on every trial

def test_the_callback_is_a_context_manager_that_closes(log_lines: list[str]) -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    with ImportanceCallback(every_n_trials=10, min_trials=20, seed=1) as cb:
        study.optimize(_objective, n_trials=30, callbacks=[cb])
    assert cb._refits.closed  # leaving the block closed it without waiting for a refit
    assert cb._refits.wait(120)  # a refit still running when it closed ends on its own,
    assert cb._refitter.fitter.worker_pid is None  # and then stops the refit process
    refitted = [s.n_trials for s in cb.history]
    assert set(refitted) <= {20, 30}  # no refit was added on the way out
    study.optimize(_objective, n_trials=10, callbacks=[cb])
    assert [s.n_trials for s in cb.history] == refitted  # nor for trials after it closed
    # handed to a resumed study, it said nothing while it did nothing: now once
    closed = [line for line in log_lines if "ImportanceCallback was closed" in line]
    assert len(closed) == 1
    assert "ignores trial 30" in closed[0]
    assert "Pass a new ImportanceCallback" in closed[0]


def test_a_callback_follows_one_study_and_says_so_when_handed_another(
        log_lines: list[str]) -> None:
    # handed study B after study A, one callback counted B's trials on A's schedule (a
    # decision "after 30 trials" where 50 were asked for) and mixed both in one history
    first = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    second = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=1)
    first.optimize(_objective, n_trials=30, callbacks=[cb])
    second.optimize(_objective, n_trials=30, callbacks=[cb])
    assert cb.close(wait=120)
    assert SUMMARY_KEY in first.user_attrs
    assert SUMMARY_KEY not in second.user_attrs  # nothing refit on, or written into, B
    assert cb.history[-1].n_trials == 30
    assert all(s.n_trials <= 30 for s in cb.history)
    assert len(cb.errors) == 1
    assert f"follows study {first.study_name!r}" in str(cb.errors[0])
    said = [line for line in log_lines if "follows study" in line]
    assert len(said) == 1  # once, not per trial
    assert f"the trials of study {second.study_name!r} are ignored" in said[0]
    assert "Pass a new ImportanceCallback to each study" in said[0]
    # the same study loaded anew is the same study
    again = optuna.load_study(study_name=first.study_name, storage=first._storage)
    cb2 = ImportanceCallback(every_n_trials=10, min_trials=20, seed=1)
    first.optimize(_objective, n_trials=1, callbacks=[cb2])
    again.optimize(_objective, n_trials=1, callbacks=[cb2])
    assert cb2.close(wait=120)
    assert cb2.errors == ()


def test_a_target_that_leaves_every_trial_out_is_said_once(log_lines: list[str]) -> None:
    # target=lambda t: None ran a study without a refit, an error or a warning
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    cb = ImportanceCallback(every_n_trials=5, min_trials=10, target=lambda t: None,
                            max_refit_share=1.0)
    study.optimize(_objective, n_trials=12, callbacks=[cb])
    assert cb.wait(120)
    study.optimize(_objective, n_trials=8, callbacks=[cb])
    assert cb.close(wait=120)
    assert cb.history == ()
    said = [line for line in log_lines if "needed to rank" in line]
    assert len(said) == 1
    assert "no value (target gave None)" in said[0]
    assert "so 0 are usable and 10 are needed to rank" in said[0]


_NO_CLOSE = """
import optuna
from hpinsight.integrations.optuna import ImportanceCallback
cb = ImportanceCallback(every_n_trials=5, min_trials=10, seed=0)
study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2 + t.suggest_float("y", 0, 1),
               n_trials=40, callbacks=[cb])
print("study done", flush=True)
"""


def test_a_program_that_forgets_close_exits_cleanly() -> None:
    # the study ends while the first refit (in a child process) still runs; the refit
    # used to be cut off by the interpreter closing its pipe ("write to closed file")
    import subprocess
    import sys

    for _ in range(3):  # the race it guards against depends on timing: try it a few times
        done = subprocess.run([sys.executable, "-c", _NO_CLOSE], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert "study done" in done.stdout
        assert "closed file" not in done.stderr
        assert "while refitting" not in done.stderr
        assert "Traceback" not in done.stderr


def test_a_killed_refit_process_is_replaced_by_a_new_one(log_lines: list[str]) -> None:
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_objective, n_trials=20, callbacks=[cb])
    assert cb.wait(120)
    pid = cb._refitter.fitter.worker_pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    study.optimize(_objective, n_trials=30, callbacks=[cb])
    assert cb.wait(120)
    new_pid = cb._refitter.fitter.worker_pid
    assert new_pid is not None
    assert new_pid != pid
    assert cb.close(120)
    assert len(study.trials) == 50
    assert not cb.errors  # handled: the refit was redone in a new child process
    assert cb.history[-1].n_trials == 50
    assert any("stopped unexpectedly" in line and "starting a new refit process" in line
               for line in log_lines)
    assert not any("in a thread" in line for line in log_lines)
    post_hoc = hp.fanova(hp.adapters.from_optuna(study), seed=0, max_order=2)  # as a report
    assert cb.latest is not None
    np.testing.assert_array_equal(cb.latest.variances, post_hoc.variances)


@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_incumbent_region_pdps_are_kept_current(isolation: str) -> None:
    cb = ImportanceCallback(every_n_trials=20, min_trials=20, seed=0, regions=2,
                            region_splits=3, isolation=isolation)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(_objective, n_trials=60, callbacks=[cb])
    assert cb.close(120)
    assert not cb.errors
    assert cb.latest is not None
    top2 = [i.params[0] for i in cb.latest.ranking(order=1)[:2]]
    assert list(cb.region_trees) == top2
    regions = cb.incumbent_regions
    assert list(regions) == top2
    best = study.best_params
    for name, region in regions.items():
        tree = cb.region_trees[name]
        assert tree.pd.params == (name,)
        assert len(tree.leaves()) == 4  # three splits
        assert region in tree.leaves()
        full = {p.name: p.default for p in tree.pd.space.params} | best
        assert tree.leaf_for(full) is region
        # the regional PDP is computed from the newest forest, at the space's grid
        assert region.mean.shape == (len(tree.pd.grid[0]),)
        assert region.mean_confidence > 0
    # the PDPs belong to the newest refit: recompute them from cb.latest and compare
    again = hp.partial_dependence(cb.latest, params=top2[0], n_samples=500, seed=0)
    np.testing.assert_allclose(cb.region_trees[top2[0]].pd.mean, again.mean)
    assert ImportanceCallback().incumbent_regions == {}


def test_a_trial_the_space_cannot_hold_is_logged_once_not_warned_from_the_refit_thread(
        log_lines: list[str]) -> None:
    # the adapter's warning was printed from the refit thread at every refit
    import warnings

    cb = ImportanceCallback(every_n_trials=10, min_trials=20, seed=0, isolation="thread",
                            max_refit_share=1.0)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.enqueue_trial({"x": 10.0})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study.optimize(_objective, n_trials=45, callbacks=[cb])
        assert cb.close(wait=120)
    assert not cb.errors
    assert not [w for w in caught if issubclass(w.category, hp.exceptions.HPInsightWarning)]
    said = [line for line in log_lines if "cannot hold" in line]
    assert len(said) == 1
    assert "trial 0 (x=10.0, not a value of Float" in said[0]
    assert cb.history[-1].n_trials == 44


def test_the_published_best_value_is_the_study_s() -> None:
    # rounded to 6 significant digits, a study of values near a million published 1e6
    # for 1000000.0133, and printed "best 1e+06"
    cb = ImportanceCallback(every_n_trials=100, min_trials=20, seed=0, isolation="thread")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: 1e6 + _objective(t), n_trials=20, callbacks=[cb])
    assert cb.close(wait=120)
    assert study.user_attrs[SUMMARY_KEY]["best"] == study.best_value
    text = cb.history[-1].best_text()
    assert text.startswith("best 1000000.")
    assert float(text.split()[1]) == pytest.approx(study.best_value, rel=0, abs=1e-6)
