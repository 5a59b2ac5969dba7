"""The one-BLAS-thread limit of the Gaussian process's fits, entered from several threads."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import hpinsight.surrogates.gp._blas as blas
from hpinsight.surrogates.gp._blas import one_blas_thread


def _blas_threads() -> set[int]:
    return {int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"}


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """threadpoolctl's limiter, recording when the limit is set and when restored."""
    events: list[str] = []

    class Recording(threadpool_limits):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            events.append("set")
            super().__init__(*args, **kwargs)

        def restore_original_limits(self) -> None:
            events.append("restored")
            super().restore_original_limits()

    monkeypatch.setattr(blas, "threadpool_limits", Recording)
    return events


def test_two_threads_whose_exits_cross_set_the_limit_once_and_restore_it_last(limits) -> None:
    # A enters, B enters, A leaves while B still runs, then B leaves: the limit is set
    # when A enters and restored when B leaves, not under B. With threadpoolctl's own
    # context in each thread, A restores the process's limit under B, and B, restoring
    # what it found (one thread), leaves one BLAS thread for the rest of the process.
    seen: dict[str, list[str]] = {}
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with one_blas_thread():
            a_in.set()
            assert b_in.wait(60)
        a_out.set()

    def second() -> None:
        assert a_in.wait(60)
        with one_blas_thread():
            b_in.set()
            assert a_out.wait(60)
            seen["B inside, A gone"] = list(limits)

    threads = [threading.Thread(target=f) for f in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert seen == {"B inside, A gone": ["set"]}
    assert limits == ["set", "restored"]
    # (what OpenBLAS then reports depends on the thread that asks, so the numbers are
    # read in one thread only, below)


def test_nested_use_in_one_thread_restores_on_the_outer_exit(limits) -> None:
    before = _blas_threads()
    with one_blas_thread():
        with one_blas_thread():
            assert limits == ["set"]
        assert limits == ["set"]
    assert limits == ["set", "restored"]
    assert _blas_threads() == before


def test_the_limit_applies_inside() -> None:
    with one_blas_thread():
        assert _blas_threads() <= {1}
