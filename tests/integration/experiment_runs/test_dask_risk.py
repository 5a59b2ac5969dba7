"""The tuning-risk experiment on a real Dask cluster (a LocalCluster on loopback with two
worker processes), and resumed from its store after a killed run and a killed worker."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hpinsight as hp

distributed = pytest.importorskip("distributed")
pytest.importorskip("optuna")

from hpinsight.experiments import tuning_risk_experiment  # noqa: E402

SETTINGS = {"n_iter": 3, "outer_folds": 2, "inner_folds": 2, "seeds": 2,
            "n_default_configs": 10, "default_folds": 2, "progress": False}


def setup() -> tuple[Any, hp.SearchSpace, dict[str, Any]]:
    from sklearn.datasets import make_classification
    from sklearn.tree import DecisionTreeClassifier

    space = hp.SearchSpace([hp.Int("max_depth", 1, 6),
                            hp.Categorical("criterion", ["gini", "entropy"])])
    datasets = {f"d{i}": make_classification(80, 5, n_informative=3, random_state=i)
                for i in range(2)}
    return DecisionTreeClassifier(random_state=0), space, datasets


def rows(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as db:
            return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not made yet
        return 0


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    estimator, space, datasets = setup()
    return tuning_risk_experiment(estimator, space, datasets, **SETTINGS).to_dict()


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as c:
        yield c


@pytest.mark.slow
def test_a_dask_cluster_gives_the_single_machine_results(cluster, reference, tmp_path) -> None:
    estimator, space, datasets = setup()
    with distributed.Client(cluster) as client:
        ran_on = set(client.run(os.getpid).values())
        by_client = tuning_risk_experiment(estimator, space, datasets, client=client,
                                           **SETTINGS)
    assert len(ran_on) == 2  # two worker processes ...
    assert os.getpid() not in ran_on  # ... other than this one
    assert by_client.to_dict() == reference
    # a scheduler address works as well, with a store
    by_address = tuning_risk_experiment(estimator, space, datasets,
                                        client=cluster.scheduler_address,
                                        store=tmp_path / "fits.sqlite", **SETTINGS)
    assert by_address.to_dict() == reference
    assert rows(tmp_path / "fits.sqlite") == 2 + 12  # default chunks + tuning runs


@pytest.mark.slow
def test_a_killed_run_resumes_without_redoing_a_finished_fit(reference, tmp_path) -> None:
    store = tmp_path / "fits.sqlite"
    script = textwrap.dedent(f"""
        import functools, sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_dask_risk import setup, SETTINGS
        from hpinsight.experiments import tuning_risk_experiment
        import hpinsight.experiments._tuning_risk as tr
        slow = tr._tuning_run
        @functools.wraps(slow)  # the same job, only slower: stored under the same key
        def slower(*args):
            time.sleep(0.5)
            return slow(*args)
        tr._tuning_run = slower
        estimator, space, datasets = setup()
        tuning_risk_experiment(estimator, space, datasets, store={str(store)!r}, **SETTINGS)
    """)
    run = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 120
    while rows(store) < 5:  # the default chunks and some tuning runs are stored
        assert run.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "no result was stored"
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait(30)
    first = rows(store)
    assert 5 <= first < 14

    estimator, space, datasets = setup()
    resumed = tuning_risk_experiment(estimator, space, datasets, store=store, **SETTINGS)
    assert resumed.to_dict() == reference
    with sqlite3.connect(store) as db:
        by_run = dict(db.execute("SELECT run, COUNT(*) FROM results GROUP BY run"))
    assert sorted(by_run.values()) == sorted([first, 14 - first])  # nothing was redone


@pytest.mark.slow
def test_a_killed_worker_costs_its_job_not_the_run(cluster, reference, tmp_path) -> None:
    store = tmp_path / "fits.sqlite"
    estimator, space, datasets = setup()
    out: dict[str, Any] = {}
    with distributed.Client(cluster) as client:
        def run() -> None:
            out["result"] = tuning_risk_experiment(estimator, space, datasets, client=client,
                                                   store=store, **SETTINGS)

        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + 120
        while rows(store) < 3 and thread.is_alive():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        victim = next(iter(client.run(os.getpid).values()))
        os.kill(victim, signal.SIGKILL)  # the nanny starts a new worker
        thread.join(180)
    assert not thread.is_alive()
    assert out["result"].to_dict() == reference


def _sum_when_released(flag: str, data: Any, k: int) -> int:
    """A job that holds its worker until the test releases it (a file appears)."""
    while not os.path.exists(flag):
        time.sleep(0.01)
    return int(data.sum()) + k


def _holders(dask_scheduler: Any) -> list[list[str]]:
    """Per scattered array that jobs depend on, the workers holding a copy (run on the
    scheduler; arrays of earlier tests are left out)."""
    return [sorted(ws.address for ws in ts.who_has)
            for key, ts in dask_scheduler.tasks.items()
            if str(key).startswith("ndarray-") and ts.dependents]


@pytest.mark.slow
def test_jobs_whose_data_died_with_a_worker_get_the_data_again(cluster, tmp_path) -> None:
    # the data were broadcast to both workers, but Dask's memory manager keeps one copy;
    # killing the worker that held it cancelled every job that still needed it, and the
    # run failed ("lose scattered data, which can't be recovered"), now and then in CI.
    # Here every holder is killed, so the data are lost every time
    from hpinsight._execution import run_jobs

    flag = tmp_path / "go"
    data = np.arange(10)
    jobs = [(str(flag), data, k) for k in range(4)]
    out: dict[str, Any] = {}
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)

        def run() -> None:
            out["results"] = run_jobs(_sum_when_released, jobs, n_jobs=None, client=client,
                                      store=None, desc="jobs", order=range(4),
                                      done=lambda i: None)

        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + 60
        holders = client.run_on_scheduler(_holders)
        while not holders:  # the data scattered and the jobs sent
            assert time.monotonic() < deadline
            time.sleep(0.05)
            holders = client.run_on_scheduler(_holders)
        # every worker that holds a copy (one, once the memory manager has run; two
        # before): the data are lost whichever it is, as with one copy and one death
        for victim in client.run(os.getpid, workers=holders[0]).values():
            os.kill(victim, signal.SIGKILL)  # the nanny starts a new worker
        flag.touch()
        thread.join(120)
        assert not thread.is_alive()
    assert out["results"] == [45, 46, 47, 48]
