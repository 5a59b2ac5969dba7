"""The one-BLAS-thread limit of the Gaussian process's fits, entered from several threads."""

from __future__ import annotations

import threading

from threadpoolctl import threadpool_info, threadpool_limits

from hpinsight.surrogates.gp._blas import one_blas_thread


def _blas_threads() -> set[int]:
    return {int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_two_threads_whose_exits_cross_leave_the_users_limit_as_they_found_it() -> None:
    # A enters, B enters, A leaves while B still runs, then B leaves: B keeps one thread
    # to the end, and the process's own limit (one thread per core) is back afterwards.
    # With threadpoolctl's own context in each thread, A restores that limit under B,
    # and B leaves one thread for good.
    seen: dict[str, set[int]] = {}
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
            seen["inside, after the first left"] = _blas_threads()

    before = _blas_threads()
    threads = [threading.Thread(target=f) for f in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    seen["after both"] = _blas_threads()
    assert seen == {"inside, after the first left": {1}, "after both": before}


def test_nested_use_in_one_thread_restores_on_the_outer_exit() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        with one_blas_thread():
            with one_blas_thread():
                assert _blas_threads() == {1}
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}
