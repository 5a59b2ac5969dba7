"""Experiment jobs: results stored as they finish, found again by a key that changes with
anything the job computes from."""

from __future__ import annotations

import numpy as np
import pytest

from hpinsight.experiments._execution import FitStore, fingerprint, run_jobs

CALLS: list[int] = []


def square(x: np.ndarray, k: int) -> float:
    CALLS.append(k)
    return float((x**2).sum() * k)


def test_a_second_run_with_the_store_recomputes_nothing(tmp_path) -> None:
    jobs = [(np.arange(5.0), k) for k in range(6)]
    store = FitStore(tmp_path / "s.sqlite")
    CALLS.clear()
    done: list[int] = []
    first = run_jobs(square, jobs, n_jobs=1, client=None, store=store, desc="t",
                     order=[5, 4, 3, 2, 1, 0], done=done.append)
    assert first == [square(*j) for j in jobs]  # in job order, whatever the dispatch order
    assert sorted(done) == list(range(6))
    CALLS.clear()
    again = FitStore(tmp_path / "s.sqlite")
    second = run_jobs(square, jobs, n_jobs=1, client=None, store=again, desc="t",
                      order=range(6), done=lambda i: None)
    assert second == first
    assert CALLS == []  # every result came from the store
    assert again.runs() == {store.run: 6}


def test_the_key_follows_the_data_and_the_settings(tmp_path) -> None:
    store = FitStore(tmp_path / "s.sqlite")
    run_jobs(square, [(np.arange(5.0), 2)], n_jobs=1, client=None, store=store, desc="t",
             order=[0], done=lambda i: None)
    CALLS.clear()
    changed = [(np.arange(5.0) + 1, 2), (np.arange(5.0), 3)]
    run_jobs(square, changed, n_jobs=1, client=None, store=store, desc="t",
             order=[0, 1], done=lambda i: None)
    assert sorted(CALLS) == [2, 3]  # neither reused the stored result


@pytest.mark.parametrize(("a", "b", "same"), [
    (np.arange(3.0), np.arange(3.0), True),
    (np.arange(3.0), np.arange(3.0).astype(np.float32), False),
    ({"x": 1, "y": [1, 2]}, {"y": [1, 2], "x": 1}, True),
    ((1, "a"), (1, "b"), False),
], ids=["equal-arrays", "other-dtype", "dict-order", "other-value"])
def test_fingerprints(a, b, same) -> None:
    assert (repr(fingerprint(a)) == repr(fingerprint(b))) is same


def test_a_frame_is_fingerprinted_by_its_values_and_columns() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    assert fingerprint(frame) == fingerprint(frame.copy())
    assert fingerprint(frame) != fingerprint(frame.rename(columns={"b": "c"}))


def test_a_lost_cluster_job_is_an_error_not_a_result(monkeypatch) -> None:
    distributed = pytest.importorskip("distributed")
    from hpinsight.experiments._execution import ClusterJobError

    class Lost:
        key = "job-0"
        status = "cancelled"

    class Client:
        def scatter(self, data: list, **kwargs) -> list:
            return [object() for _ in data]

        def submit(self, func, *args, **kwargs) -> Lost:
            return Lost()

    # what as_completed(with_results=True) yields for a future whose data were lost
    monkeypatch.setattr(distributed, "as_completed",
                        lambda futures, with_results: [(f, RuntimeError("lost")) for f in futures])
    with pytest.raises(ClusterJobError, match=r"did not finish.*same store to resume"):
        run_jobs(square, [(np.arange(3.0), 1)], n_jobs=None, client=Client(), store=None,
                 desc="t", order=[0], done=lambda i: None)
