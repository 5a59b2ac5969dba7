"""The Gaussian process's one-BLAS-thread sections, entered by two threads at once."""

from __future__ import annotations

import threading

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import hpinsight as hp
from hpinsight.surrogates.gp._blas import one_blas_thread


def _blas_threads() -> set[int]:
    return {int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"}


def _in_turn(first_out: str) -> dict[str, set[int]]:
    """Threads a and b each in a section, b entering while a is inside; ``first_out``
    leaves first, and the other reads the limit while still inside."""
    seen: dict[str, set[int]] = {}
    entered = {"a": threading.Event(), "b": threading.Event()}
    out = threading.Event()

    def member(me: str, after: str | None, until: str) -> None:
        """Enter once ``after`` is inside, stay until ``until`` is, then leave first or
        read the limit once the other has left."""
        if after is not None:
            entered[after].wait()
        with one_blas_thread():
            entered[me].set()
            entered[until].wait()
            if me != first_out:
                out.wait()
                seen["inside after the other left"] = _blas_threads()
        if me == first_out:
            out.set()

    with threadpool_limits(limits=2, user_api="blas"):  # the user's limit, on any machine
        threads = [threading.Thread(target=member, args=("a", None, "b")),
                   threading.Thread(target=member, args=("b", "a", "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seen["after both"] = _blas_threads()
    return seen


def test_overlapping_sections_keep_one_thread_until_the_last_leaves_then_restore():
    # With each section a plain threadpool_limits, the first to leave gave the other two
    # threads mid-section, and the last to leave restored the 1 it had found, leaving
    # the process at one BLAS thread for good; from a thread that had not set the limit
    # itself, threadpoolctl 3.8 drops a change silently.
    for first_out in ("a", "b"):
        assert _in_turn(first_out) == {"inside after the other left": {1}, "after both": {2}}, first_out


def test_two_analyses_in_two_threads_leave_the_users_blas_threads_as_they_were():
    space = hp.SearchSpace([hp.Float(f"x{i}", 0, 1) for i in range(4)])
    configs = space.sample(60, seed=0)
    history = hp.TrialHistory(space, configs, [(c["x0"] - 0.3) ** 2 + c["x1"] * c["x2"]
                                               for c in configs])
    out: dict[int, object] = {}

    def run(k: int) -> None:
        out[k] = hp.fanova(history, seed=0, surrogate=hp.GP(refits=4)).importance("x0").mean

    with threadpool_limits(limits=2, user_api="blas"):
        for _ in range(3):
            threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert _blas_threads() == {2}
    assert isinstance(out[0], float)
    assert np.isclose(out[0], out[1], rtol=1e-6)


def _same_seed_twice() -> tuple[dict[str, object], dict[str, object]]:
    """One analysis (importances, a PDP with its confidence split, the costs of fixing)
    with the user's two BLAS threads, and again while another analysis of the process
    holds its one-thread section."""
    space = hp.SearchSpace([hp.Float(f"x{i}", 0, 1) for i in range(8)])
    configs = space.sample(400, seed=0)
    noise = np.random.default_rng(0).standard_normal(len(configs))
    y = [4 * (c["x0"] - 0.3) ** 2 + 2 * np.sin(3 * c["x1"]) + c["x2"] + 0.1 * e
         for c, e in zip(configs, noise, strict=True)]
    history = hp.TrialHistory(space, configs, y)

    def analysis() -> dict[str, object]:
        result = hp.fanova(history, seed=0)
        pd = hp.partial_dependence(result, "x1", seed=0)
        return {"fanova": result.to_dict(), "pdp": pd.to_dict(),
                "split": hp.confidence_split(pd).to_dict(),
                "subspace": hp.suggest_subspace(history, seed=0).to_dict()}

    with threadpool_limits(limits=2, user_api="blas"):
        alone = analysis()
        with one_blas_thread():  # what another analysis in another thread does meanwhile
            beside = analysis()
    return alone, beside


def test_an_analysis_has_the_same_digits_while_another_holds_the_one_thread_section():
    # OpenBLAS sums products and factorizations of a few hundred rows in another order
    # on two threads than on one, and the limit is the process's: a part of the analysis
    # left at the default threads (the model before pruning, the PDP's and the costs'
    # predictions) ran on one thread whenever another analysis held the section, and
    # the same seed gave other last digits
    alone, beside = _same_seed_twice()
    assert [part for part in alone if alone[part] != beside[part]] == []


def test_a_limit_the_user_leaves_while_an_analysis_runs_is_not_put_back_at_one():
    # The user's own section (threadpool_limits in their main thread) is entered before
    # an analysis in another thread (a live refit in a thread) and left while it runs:
    # the analysis, leaving last, put back the 1 it had found, and the process stayed at
    # one BLAS thread for good.
    entered, user_left = threading.Event(), threading.Event()

    def analysis() -> None:
        with one_blas_thread():
            entered.set()
            user_left.wait()

    with threadpool_limits(limits=2, user_api="blas"):  # what the user had, on any machine
        thread = threading.Thread(target=analysis)
        with threadpool_limits(limits=1, user_api="blas"):  # the user's section
            thread.start()
            entered.wait()
        user_left.set()
        thread.join()
        assert _blas_threads() == {2}
