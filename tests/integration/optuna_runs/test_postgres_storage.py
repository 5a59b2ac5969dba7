"""The throwaway PostgreSQL server works as an Optuna storage (groundwork for distributed runs)."""

from __future__ import annotations

import optuna


def test_study_round_trips_through_postgres(postgres_url: str) -> None:
    writer = optuna.storages.RDBStorage(postgres_url)
    reader = optuna.storages.RDBStorage(postgres_url)  # a second client, as another process would be
    try:
        study = optuna.create_study(
            study_name="postgres-smoke", storage=writer, sampler=optuna.samplers.RandomSampler(seed=0)
        )
        study.optimize(lambda trial: trial.suggest_float("x", -1.0, 1.0) ** 2, n_trials=5)

        loaded = optuna.load_study(study_name="postgres-smoke", storage=reader)
        assert [t.number for t in loaded.trials] == [0, 1, 2, 3, 4]
        assert all(t.state == optuna.trial.TrialState.COMPLETE for t in loaded.trials)
    finally:
        # optuna never closes its pooled connections; psycopg warns (an error here) when they
        # are garbage-collected still open
        for storage in (writer, reader):
            storage.engine.dispose()
