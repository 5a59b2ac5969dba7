"""``hpinsight watch`` keeps going while the PostgreSQL server under it restarts."""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(t: optuna.Trial) -> float:
    return (t.suggest_float("x", 0, 1) - 0.3) ** 2 + 0.1 * t.suggest_float("y", 0, 1)


def _add_trials(url: str, n: int) -> None:
    storage = optuna.storages.RDBStorage(url)
    try:
        study = optuna.load_study(study_name="restart", storage=storage,
                                  sampler=optuna.samplers.RandomSampler(seed=n))
        study.optimize(objective, n_trials=n)
    finally:
        storage.engine.dispose()  # optuna never closes its pooled connections


def test_watch_survives_a_postgres_restart(postgres_server: Any, read_lines: Any) -> None:
    url = postgres_server.url
    storage = optuna.storages.RDBStorage(url)
    try:
        optuna.create_study(study_name="restart", storage=storage)
    finally:
        storage.engine.dispose()
    _add_trials(url, 30)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hpinsight", "watch", "--storage", url, "--study", "restart",
         "--interval", "0.2", "--every", "1", "--min-trials", "10"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    watch = read_lines(proc, "hpinsight watch")
    try:
        watch.wait_for("watching study 'restart'")  # its signal handlers are in place
        seen = watch.wait_for("30 complete", timeout=120)
        postgres_server.stop("fast")  # every client is disconnected, as in an admin's restart
        watch.wait_for("cannot reach the storage", stream="stderr", timeout=60)  # it noticed
        postgres_server.start()
        _add_trials(url, 5)
        watch.wait_for("35 complete", timeout=120, after=seen)  # it reconnected and ranks them
    finally:
        if not (postgres_server.data / "postmaster.pid").exists():
            postgres_server.start()  # the tests after this one need it
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = watch.finish(timeout=60)
    assert proc.returncode == 0, err
    assert out.splitlines()[-1].strip() == "stopped"
    assert err.count("cannot reach the storage") == 1, err  # each outage logged once
    assert "the storage answers again" in err
    assert "Traceback" not in err
