"""The live callback's refit budget: refits take at most a share of the study's time."""

from __future__ import annotations

import pytest

from hpinsight.integrations._optuna_callback import FIRST_REFIT_COST
from hpinsight.integrations.optuna import ImportanceCallback


def test_a_due_refit_waits_until_it_fits_in_the_share_of_the_study() -> None:
    cb = ImportanceCallback(max_refit_share=0.1)
    try:
        cb._first_seen = 100.0  # the study's clock: its first trial was told at t = 100 s
        # no refit yet: the first is expected to cost FIRST_REFIT_COST
        assert not cb._within_budget(100.0 + 9 * FIRST_REFIT_COST)
        assert cb._within_budget(100.0 + 10 * FIRST_REFIT_COST)
        # refits so far took 5 s of this process's time, the last one 1 s: the next is
        # expected to take 1 s too, so 6 s must be at most 10 % of the study's time
        cb._refits._busy, cb._refits._last_cost = 5.0, 1.0
        assert not cb._within_budget(159.0)
        assert cb._within_budget(160.0)
    finally:
        cb.close()


def test_a_share_of_one_turns_the_budget_off() -> None:
    cb = ImportanceCallback(max_refit_share=1.0)
    try:
        cb._first_seen = 100.0
        cb._refits._busy, cb._refits._last_cost = 5.0, 1.0
        assert cb._within_budget(100.0)
    finally:
        cb.close()


@pytest.mark.parametrize("share", [0.0, 1.5, -0.1])
def test_the_share_must_be_in_0_1(share: float) -> None:
    with pytest.raises(ValueError, match="max_refit_share"):
        ImportanceCallback(max_refit_share=share)
