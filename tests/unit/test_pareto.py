"""The Pareto front's value per trial: the share of trials that dominate it."""

from __future__ import annotations

import numpy as np
import pytest

import hpinsight as hp
from hpinsight import _pareto
from hpinsight._pareto import dominated_share


def brute_force(values: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """One trial at a time, in plain Python: who is at least as good everywhere and better
    somewhere."""
    F = values * signs
    n = len(F)
    return np.array([sum(all(F[j] <= F[i]) and any(F[j] < F[i]) for j in range(n)) / n
                     for i in range(n)])


def test_a_hand_computed_front() -> None:
    # (1, 4) and (2, 2) are the front; (3, 3) is beaten by (2, 2); (3, 5) by all three
    shares = dominated_share([[1, 4], [2, 2], [3, 3], [3, 5]], ["minimize", "minimize"])
    np.testing.assert_array_equal(shares, [0.0, 0.0, 0.25, 0.75])


def test_a_tie_in_one_objective_still_dominates() -> None:
    # discrete objectives: (2, 1) equals (1, 1) in size and is worse in error
    shares = dominated_share([[1, 1], [2, 1], [1, 1]], ["minimize", "minimize"])
    np.testing.assert_array_equal(shares, [0.0, 2 / 3, 0.0])  # equal trials do not dominate


def test_maximized_objectives_count_the_other_way() -> None:
    values = [[0.1, 0.9], [0.2, 0.5], [0.3, 0.95]]
    shares = dominated_share(values, ["minimize", "maximize"])
    np.testing.assert_array_equal(shares, [0.0, 1 / 3, 0.0])


def test_one_objective_gives_the_rank() -> None:
    y = np.array([3.0, 1.0, 2.0, 2.0])
    np.testing.assert_array_equal(dominated_share(y[:, None], ["minimize"]), [0.75, 0.0, 0.25, 0.25])


@pytest.mark.parametrize("n_objectives", [2, 3, 4], ids=lambda k: f"{k}-objectives")
@pytest.mark.parametrize("block", [7, 5_000_000], ids=["many-blocks", "one-block"])
def test_equals_brute_force_on_random_values_with_ties(monkeypatch, n_objectives, block) -> None:
    monkeypatch.setattr(_pareto, "_BLOCK_ELEMENTS", block)
    rng = np.random.default_rng(n_objectives)
    values = rng.integers(0, 6, size=(60, n_objectives)).astype(float)  # many ties
    directions = ["minimize", "maximize", "minimize", "maximize"][:n_objectives]
    signs = np.where(np.array(directions) == "maximize", -1.0, 1.0)
    np.testing.assert_array_equal(dominated_share(values, directions), brute_force(values, signs))


def test_the_input_is_not_changed() -> None:
    values = np.array([[1.0, 2.0], [2.0, 1.0]])
    before = values.copy()
    dominated_share(values, ["maximize", "maximize"])
    np.testing.assert_array_equal(values, before)


@pytest.mark.parametrize(("values", "directions"), [
    ([[1.0, 2.0]], ["minimize"]),
    ([1.0, 2.0], ["minimize", "minimize"]),
], ids=["too-few-directions", "one-dimensional"])
def test_a_shape_that_does_not_match_the_directions_is_refused(values, directions) -> None:
    with pytest.raises(ValueError, match=r"must have shape \(n_trials, "):
        dominated_share(values, directions)


def test_an_objective_named_like_the_fronts_section_is_refused():
    # {"front": ..., "latency": ...}: the objective's own section was replaced by the one
    # on reaching the Pareto front, without a word
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("y", 0, 1)])
    configs = space.sample(30, seed=0)
    err = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    latency = hp.TrialHistory(space, configs, [c["y"] + 0.1 * c["x"] for c in configs])
    with pytest.raises(hp.exceptions.InvalidDataError, match=r"objective named 'front'.*Rename"):
        hp.report({"front": err, "latency": latency}, seed=0)
