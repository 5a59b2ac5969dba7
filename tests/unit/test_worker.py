"""The refit child process: same results as in-process, errors and warnings carried back,
results and histories that pickle, and a clean stop."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.integrations._worker import RefitWorker, WorkerError


@pytest.fixture
def worker():
    w = RefitWorker()
    yield w
    w.close()


def _data(make_mixed_space):
    space = make_mixed_space(conditional=True)
    configs = space.sample(120, seed=0)
    X = np.nan_to_num(space.encode(configs))
    y = X[:, 0] ** 2 + 0.5 * X[:, 1] + np.sin(X[:, -1])
    return space, configs, y


def test_history_and_result_survive_pickling(make_mixed_space):
    space, configs, y = _data(make_mixed_space)
    history = hp.TrialHistory(space, configs, y, direction="maximize", trial_ids=range(5, 125),
                              excluded={"PRUNED": 2}, objective_name="accuracy")
    back = pickle.loads(pickle.dumps(history))
    assert [dict(c) for c in back.configs] == [dict(c) for c in history.configs]
    np.testing.assert_array_equal(back.y, history.y)
    assert (back.direction, back.trial_ids, dict(back.excluded), back.objective_name) == (
        "maximize", tuple(range(5, 125)), {"PRUNED": 2}, "accuracy")
    assert back.space.names == space.names
    assert (back.label, back.loader, back.sampling) == (None, None, None)
    np.testing.assert_array_equal(back.encoded(), history.encoded())  # carried, not redone
    assert not back.encoded().flags.writeable
    assert not back.y.flags.writeable
    with pytest.raises(TypeError):
        back.configs[0]["x"] = 1.0  # type: ignore[index]
    with pytest.raises(TypeError):
        back.excluded["FAIL"] = 1  # type: ignore[index]
    result = hp.fanova(history, seed=0, max_order=2)
    again = pickle.loads(pickle.dumps(result))
    np.testing.assert_array_equal(again.variances, result.variances)
    assert again.ranking() == result.ranking()
    np.testing.assert_array_equal(again.marginal(space.names[0]).mean,
                                  result.marginal(space.names[0]).mean)


def test_child_gives_bit_identical_results_in_another_process(make_mixed_space, worker):
    space, configs, y = _data(make_mixed_space)
    history = hp.TrialHistory(space, configs, y)
    remote, caught = worker.run("fanova", history, seed=4, max_order=2)
    local = hp.fanova(history, seed=4, max_order=2)
    assert worker.pid is not None
    assert worker.pid != os.getpid()
    assert caught == []
    np.testing.assert_array_equal(remote.variances, local.variances)
    np.testing.assert_array_equal(remote.draw_means, local.draw_means)
    # the same child serves the next request
    pid = worker.pid
    worker.run("fanova", history, seed=5)
    assert worker.pid == pid


def test_task_errors_and_warnings_come_back(make_mixed_space, worker):
    space, configs, y = _data(make_mixed_space)
    history = hp.TrialHistory(space, configs, y)
    with pytest.raises(ValueError, match="'max_order' parameter of fanova must be >= 1") as info:
        worker.run("fanova", history, surrogate=hp.Forest(n_trees=4), max_order=0)
    assert isinstance(info.value, hp.exceptions.HPInsightError)
    flat = hp.TrialHistory(space, configs, np.full(len(configs), 3.0))
    result, caught = worker.run("fanova", flat, seed=0, surrogate=hp.Forest(n_trees=4))
    assert result.is_constant
    assert len(caught) == 1
    assert caught[0].startswith("ConstantObjectiveWarning: ")
    assert worker.pid is not None  # an error in the task does not stop the child


def test_close_stops_the_child_and_a_dead_child_is_replaced(make_mixed_space, worker):
    space, configs, y = _data(make_mixed_space)
    worker.run("fanova", hp.TrialHistory(space, configs, y), seed=0)
    first = worker.pid
    assert first is not None
    os.kill(first, 9)
    with pytest.raises(WorkerError, match="stopped unexpectedly"):
        worker.run("fanova", hp.TrialHistory(space, configs, y), seed=0)
    worker.run("fanova", hp.TrialHistory(space, configs, y), seed=0)
    second = worker.pid
    assert second not in (None, first)
    worker.close()
    assert worker.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(second, 0)


def test_a_child_that_died_between_tasks_is_reported_then_replaced(worker, make_mixed_space):
    import signal

    space, configs, y = _data(make_mixed_space)
    worker.run("fanova", hp.TrialHistory(space, configs, y), seed=0, surrogate=hp.Forest(n_trees=4))
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    worker._proc.wait(timeout=30)  # until the OS has reaped it: no sleeping and polling
    assert worker.pid is None
    with pytest.raises(WorkerError, match="stopped unexpectedly"):
        worker.run("fanova", hp.TrialHistory(space, configs, y), seed=0, surrogate=hp.Forest(n_trees=4))
    result, _ = worker.run("fanova", hp.TrialHistory(space, configs, y), seed=0, surrogate=hp.Forest(n_trees=4))
    assert worker.pid not in (None, pid)
    assert result.n_trials == len(configs)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX's")
def test_the_child_ends_when_told_even_if_a_forked_process_holds_its_pipe(make_mixed_space):
    # A process the user forks (a multiprocessing pool of the "fork" kind) inherits the
    # writing end of the child's input: closing it here no longer ends the child's input,
    # so close() used to wait its whole timeout and then kill the child.
    space, configs, y = _data(make_mixed_space)
    w = RefitWorker()
    try:
        w.run("fanova", hp.TrialHistory(space, configs[:30], y[:30]), seed=0)
        proc = w._proc
        release_r, release_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the user's forked process: holds every inherited descriptor
            os.close(release_w)
            os.read(release_r, 1)
            os._exit(0)
        os.close(release_r)
        try:
            w.close(timeout=5.0)
        finally:
            os.close(release_w)  # lets the forked process end
            os.waitpid(pid, 0)
    finally:
        w.close()
    assert proc is not None
    assert proc.returncode == 0  # ended when told; killed would be -9


def test_an_interrupt_between_a_task_and_its_answer_does_not_shift_later_answers(
        make_mixed_space, worker, monkeypatch):
    # Ctrl-C while the child fits: its answer stayed in the pipe, and every later task read
    # the answer to the task before its own (a refit "on 100 trials" fit on 84)
    import hpinsight.integrations._worker as module

    space, configs, y = _data(make_mixed_space)
    first = hp.TrialHistory(space, configs[:60], y[:60])
    second = hp.TrialHistory(space, configs, y)
    read = module._read
    calls = []

    def interrupted(stream):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return read(stream)

    monkeypatch.setattr(module, "_read", interrupted)
    with pytest.raises(KeyboardInterrupt):
        worker.run("fanova", first, seed=0)
    assert worker.pid is None  # the busy child was stopped at once
    result, _ = worker.run("fanova", second, seed=0)
    assert result.n_trials == 120


def test_the_child_imports_what_this_process_imports_not_the_working_directorys(
        make_mixed_space, worker, tmp_path, monkeypatch):
    # run from a folder holding a directory named like a package (a source checkout of
    # scipy, say), the child imported that one, failed twice, and refits went on in a
    # thread for the rest of the study
    shadow = tmp_path / "scipy"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('the working directory scipy')\n")
    monkeypatch.chdir(tmp_path)
    space, configs, y = _data(make_mixed_space)
    result, _ = worker.run("fanova", hp.TrialHistory(space, configs[:40], y[:40]), seed=0,
                           surrogate=hp.GP(n_draws=4, refits=0, shadows=False))
    assert result.n_trials == 40
