"""One worker of a distributed study: run as ``python _worker.py STORAGE STUDY N_TRIALS SEED
[shrink]``.

STORAGE is an RDB URL or the path of a journal file. The worker optimizes with TPE and
the live importance callback, then flushes it, as a user's worker script would; with
``shrink``, under a ShrinkingSampler and a callback that shrinks the study to its two
most important parameters at 20 trials (and no live refits).
"""

from __future__ import annotations

import math
import sys

import optuna

from hpinsight.integrations.optuna import ImportanceCallback, ShrinkingSampler


def objective(t: optuna.Trial) -> float:
    lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
    depth = t.suggest_int("depth", 1, 12)
    kind = t.suggest_categorical("kind", ["gbdt", "rf"])
    noise = t.suggest_float("noise_knob", 0.0, 1.0)
    return (math.log10(lr) + 2) ** 2 + 0.05 * (depth - 6) ** 2 + 0.3 * (kind == "rf") + 0 * noise


def main(storage_spec: str, study_name: str, n_trials: int, seed: int,
         shrink: bool = False) -> int:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if "://" in storage_spec:
        storage: optuna.storages.BaseStorage = optuna.storages.RDBStorage(storage_spec)
    else:
        backend = optuna.storages.journal.JournalFileBackend(storage_spec)
        storage = optuna.storages.JournalStorage(backend)
    sampler: optuna.samplers.BaseSampler = optuna.samplers.TPESampler(seed=seed)
    if shrink:
        sampler = ShrinkingSampler(sampler)
    study = optuna.load_study(study_name=study_name, storage=storage, sampler=sampler)
    cb = (ImportanceCallback(shrink_to=2, shrink_after=20, min_trials=10**6, seed=0,
                             isolation="thread") if shrink else
          ImportanceCallback(every_n_trials=10, min_trials=20, seed=0))
    study.optimize(objective, n_trials=n_trials, callbacks=[cb])
    cb.close(wait=120)
    if cb.errors:
        sys.stderr.write(f"callback errors: {cb.errors!r}\n")
        return 3
    engine = getattr(storage, "engine", None)
    if engine is not None:
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                          shrink=sys.argv[5:] == ["shrink"]))
