"""The importance across 20 Optuna studies of one SQLite storage: on this machine, on a
Dask cluster (a LocalCluster on loopback with two worker processes), and from the command
line, with the same result everywhere."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hpinsight as hp

optuna = pytest.importorskip("optuna")
distributed = pytest.importorskip("distributed")
optuna.logging.set_verbosity(optuna.logging.WARNING)

N_STUDIES, N_TRIALS = 20, 40


def objective(weights: tuple[float, float]) -> Any:
    """x and y act (x more), z and w do nothing."""
    a, b = weights

    def f(t: Any) -> float:
        x = t.suggest_float("x", 0.0, 1.0)
        y = t.suggest_float("y", 1e-3, 1.0, log=True)
        t.suggest_int("z", 1, 8)
        t.suggest_categorical("w", ["p", "q"])
        return a * x + b * (math.log10(y) + 1.5) ** 2 / 2.25

    return f


@pytest.fixture(scope="module")
def storage_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('across') / 'studies.db'}"
    storage = optuna.storages.RDBStorage(url)
    try:
        for k in range(N_STUDIES):
            study = optuna.create_study(study_name=f"task-{k:02d}", storage=storage,
                                        sampler=optuna.samplers.RandomSampler(seed=k))
            study.optimize(objective((2.0 + 0.1 * k, 1.0 - 0.02 * k)), n_trials=N_TRIALS)
    finally:
        storage.engine.dispose()
    return url


def studies(url: str) -> dict[str, Any]:
    return {name: optuna.load_study(study_name=name, storage=url)
            for name in sorted(optuna.get_all_study_names(url))}


@pytest.fixture(scope="module")
def reference(storage_url: str) -> hp.results.AcrossStudiesResult:
    return hp.importance_across_studies(studies(storage_url), progress=False)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as c:
        yield c


def test_on_one_machine_the_acting_parameters_rank_top(reference) -> None:
    assert reference.n_studies == N_STUDIES
    assert reference.studies == tuple(f"task-{k:02d}" for k in range(N_STUDIES))
    assert reference.ranking()[:2] == ("x", "y")
    x, y, z, w = (reference.params.index(p) for p in ("x", "y", "z", "w"))
    assert (reference.shares[:, x] > reference.shares[:, y]).all()
    assert (reference.shares[:, [z, w]] < 0.05).all()
    assert reference.kendall_w > 0.5
    assert reference.defaults is not None
    assert reference.defaults.n_studies == N_STUDIES


@pytest.mark.slow
def test_a_dask_cluster_gives_the_single_machine_result(cluster, storage_url, reference) -> None:
    with distributed.Client(cluster) as client:
        ran_on = set(client.run(os.getpid).values())
        on_cluster = hp.importance_across_studies(studies(storage_url), client=client,
                                                  progress=False)
    assert len(ran_on) == 2
    assert os.getpid() not in ran_on
    # equal, not close: every study's analysis carries its seed, wherever it runs
    assert on_cluster.to_dict() == reference.to_dict()
    assert on_cluster.shares.tobytes() == reference.shares.tobytes()


def _report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hpinsight", "report", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_command_line_reports_every_study_here_and_on_the_scheduler(
        cluster, storage_url, reference, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    page = tmp_path / "across.html"
    done = _report("--storage", storage_url, "--all-studies", "--out", str(page))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"report: {page.resolve()}"
    assert f"INFO: fANOVA per study: {N_STUDIES} of {N_STUDIES} done ...\n" in done.stderr
    text = page.read_text(encoding="utf-8")
    assert "importance across 20 studies" in text
    assert text.count('<tr data-study="') == N_STUDIES
    assert "<svg" in text
    assert "Kendall" in text
    first_rows = text.split("<table class=across>")[1].split("</table>")[0]
    assert first_rows.index('data-param="x"') < first_rows.index('data-param="z"')

    doc = tmp_path / "across.json"
    on_cluster = _report("--storage", storage_url, "--all-studies", "--json", "--out", str(doc),
                         "--scheduler", cluster.scheduler_address)
    assert on_cluster.returncode == 0, on_cluster.stderr
    data = json.loads(doc.read_text())
    assert data["schema"] == "hpinsight.across/1"
    expected = json.loads(json.dumps(reference.to_dict()))
    assert {k: data[k] for k in expected} == expected

    two = _report("--storage", storage_url, "--study", "task-00", "--study", "task-01",
                  "--json", "--out", "-")
    assert two.returncode == 0, two.stderr
    assert json.loads(two.stdout)["studies"] == ["task-00", "task-01"]
    missing = _report("--storage", storage_url, "--study", "task-00", "--study", "nope",
                      "--json", "--out", "-")
    assert missing.returncode == 1
    assert "cannot open study 'nope'" in missing.stderr
    alone = _report("--storage", storage_url, "--study", "task-00", "--scheduler",
                    cluster.scheduler_address)
    assert alone.returncode == 2
    assert "--scheduler analyses several studies" in alone.stderr
