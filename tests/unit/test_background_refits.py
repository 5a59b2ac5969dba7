"""Closing the background refits without waiting: a pending job is dropped, a running one
ends on its own and then runs the clean-up, exactly once."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from hpinsight.integrations._live import BackgroundRefits


def _refits(started: threading.Event, release: threading.Event,
            done: list[Any]) -> BackgroundRefits:
    def compute(job: Any) -> None:
        started.set()
        assert release.wait(60)
        done.append(job)

    return BackgroundRefits(compute, logging.getLogger("test"), "test-refits")


def test_stop_while_a_job_runs_leaves_the_clean_up_to_its_thread() -> None:
    started, release, done, cleaned = threading.Event(), threading.Event(), [], []
    refits = _refits(started, release, done)
    refits.request("first")
    assert started.wait(60)
    refits.request("pending")  # queued behind the running one
    assert refits.stop(lambda: cleaned.append(True)) is False  # a job still runs
    assert cleaned == []
    refits.request("after")  # ignored: closed
    release.set()
    assert refits.wait(60)
    thread = refits._thread
    if thread is not None:
        thread.join(60)
    assert done == ["first"]  # the pending job was dropped, the later one ignored
    assert cleaned == [True]  # the clean-up ran once, after the job


def test_stop_when_idle_cleans_up_at_once() -> None:
    started, release, done, cleaned = threading.Event(), threading.Event(), [], []
    refits = _refits(started, release, done)
    assert refits.stop(lambda: cleaned.append(True)) is True
    assert cleaned == [True]
    refits.request("after")
    assert refits.wait(1)
    assert done == []


@pytest.mark.parametrize(("wait", "error"), [("soon", TypeError), (-1, ValueError)])
def test_close_names_a_wrong_wait(wait: Any, error: type[Exception]) -> None:
    from hpinsight.integrations.optuna import ImportanceCallback

    cb = ImportanceCallback()
    with pytest.raises(error, match="'wait' parameter of close"):
        cb.close(wait)
    assert cb.close()


def test_a_wait_that_times_out_closes_as_without_waiting() -> None:
    # close(wait=N) waited N for the refits, then N again in the queue's own close, and
    # then returned without ever stopping the refit process: three studies closed this
    # way left three refit processes behind
    from hpinsight.integrations.optuna import ImportanceCallback

    started, release, done, cleaned = threading.Event(), threading.Event(), [], []
    cb = ImportanceCallback()
    cb._refits = _refits(started, release, done)

    class Fitter:
        def close(self) -> None:
            cleaned.append(True)

    cb._fitter = Fitter()  # type: ignore[assignment]
    cb._refits.request("running")
    assert started.wait(60)
    cb._refits.request("pending")
    assert cb.close(wait=0.05) is False  # the running refit outlives the wait
    assert cleaned == []
    release.set()
    thread = cb._refits._thread
    assert thread is not None
    thread.join(60)
    assert done == ["running"]  # the pending refit was dropped
    assert cleaned == [True]  # and the refit process stopped once the running one ended
