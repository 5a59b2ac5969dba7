"""``hpinsight watch`` keeps going while the PostgreSQL server under it restarts."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
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


def test_watch_survives_a_postgres_restart(postgres_server: Any) -> None:
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
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")),  # type: ignore[union-attr]
                              daemon=True)
    reader.start()

    def wait_for(text: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in lines):
            assert proc.poll() is None, f"watch exited ({proc.returncode}): {proc.stderr.read()}"  # type: ignore[union-attr]
            assert time.monotonic() < deadline, f"no {text!r} in {lines}"
            time.sleep(0.1)

    try:
        wait_for("30 complete")
        postgres_server.stop("fast")  # every client is disconnected, as in an admin's restart
        time.sleep(3.0)  # the watcher polls a server that is not there
        postgres_server.start()
        _add_trials(url, 5)
        wait_for("35 complete")  # it reconnected and ranks the new trials
    finally:
        if not (postgres_server.data / "postmaster.pid").exists():
            postgres_server.start()  # the tests after this one need it
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        reader.join(10)  # stdout is read by the reader alone, to its end
        err = proc.stderr.read()  # type: ignore[union-attr]
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == 0, err
    assert lines[-1].strip() == "stopped"
    assert err.count("cannot reach the storage") == 1, err  # each outage logged once
    assert "the storage answers again" in err
    assert "Traceback" not in err
