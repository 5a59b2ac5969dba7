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


def test_a_lost_cluster_job_is_sent_again_with_its_data_then_an_error(monkeypatch) -> None:
    distributed = pytest.importorskip("distributed")
    from hpinsight._execution import DATA_RESENDS
    from hpinsight.experiments._execution import ClusterJobError

    class Lost:
        status = "cancelled"

        def __init__(self, key: str) -> None:
            self.key = key

    scattered: list[int] = []

    class Client:
        def scatter(self, data: list, **kwargs) -> list:
            scattered.append(len(data))
            return [object() for _ in data]

        def submit(self, func, *args, **kwargs) -> Lost:
            return Lost(f"job-{len(scattered)}-{id(args)}")

    class AsCompleted:
        """What as_completed(with_results=True) yields for futures whose data were lost."""

        def __init__(self, futures, with_results) -> None:
            self.queue = list(futures)

        def __iter__(self):
            while self.queue:
                yield self.queue.pop(0), RuntimeError("lost")

        def add(self, future) -> None:
            self.queue.append(future)

    monkeypatch.setattr(distributed, "as_completed", AsCompleted)
    with pytest.raises(ClusterJobError, match=rf"did not finish.*{DATA_RESENDS + 1} times.*"
                                              r"same store to resume"):
        run_jobs(square, [(np.arange(3.0), 1)], n_jobs=None, client=Client(), store=None,
                 desc="t", order=[0], done=lambda i: None)
    assert scattered == [1] * (DATA_RESENDS + 1)  # the data sent again with each attempt


def test_results_are_handed_on_as_they_finish_not_in_the_order_sent(tmp_path) -> None:
    # the slowest job is sent first; it finishes only once the quick one's result has been
    # handed on (stored, counted). In the order sent, that never happened, and Ctrl-C lost
    # every quick job finished meanwhile
    import pathlib
    import time

    flag = tmp_path / "quick-one-handed-on"

    def job(k: int, flag: str) -> str:
        if k == 0:
            deadline = time.monotonic() + 60
            while not pathlib.Path(flag).exists():
                if time.monotonic() > deadline:
                    return "never handed on"
                time.sleep(0.01)  # (polls a file another process writes)
            return "released"
        return "quick"

    store = FitStore(tmp_path / "s.sqlite")
    order: list[int] = []

    def done(i: int) -> None:
        order.append(i)
        if i == 1:
            flag.touch()

    out = run_jobs(job, [(0, str(flag)), (1, str(flag))], n_jobs=2, client=None,
                   store=store, desc="t", order=[0, 1], done=done)
    assert out == ["released", "quick"]
    assert order == [1, 0]


def test_a_space_is_fingerprinted_by_its_ranges_choices_and_conditions() -> None:
    import hpinsight as hp

    def space(high: int, choices: tuple[str, ...] = ("a", "b"), cond: bool = False):
        params = [hp.Int("depth", 1, high), hp.Categorical("kind", list(choices)),
                  hp.Float("lr", 0.1, 1.0)]
        return hp.SearchSpace(params, [hp.Condition("lr", "kind", ["a"])] if cond else [])

    assert fingerprint(space(2)) == fingerprint(space(2))
    for other in (space(20), space(2, ("a", "c")), space(2, cond=True)):
        assert fingerprint(other) != fingerprint(space(2))  # a widened range reused results


def test_a_function_is_fingerprinted_by_name_and_code_the_same_in_every_process() -> None:
    # its repr holds its address: a callable scorer made every resumed run start over
    import subprocess
    import sys

    from sklearn.metrics import balanced_accuracy_score

    here = repr(fingerprint({"scoring": balanced_accuracy_score}))
    there = subprocess.run(
        [sys.executable, "-c", "from sklearn.metrics import balanced_accuracy_score as f; "
         "from hpinsight._execution import fingerprint; "
         "print(repr(fingerprint({'scoring': f})))"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert here == there
    assert fingerprint(lambda y, p: 1.0) != fingerprint(lambda y, p: 2.0)


def test_a_sparse_matrix_is_fingerprinted_by_its_values() -> None:
    sparse = pytest.importorskip("scipy.sparse")
    a = sparse.csr_matrix(np.eye(3))
    assert fingerprint(a) == fingerprint(sparse.csc_matrix(np.eye(3)))
    assert fingerprint(a) != fingerprint(sparse.csr_matrix(2 * np.eye(3)))
