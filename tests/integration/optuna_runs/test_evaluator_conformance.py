"""Optuna's own evaluator conformance suite, run against hpinsight's evaluator.

The Basic, Conditional and MultiObjective classes of ``optuna.testing.pytest_importance``
are subclassed unchanged, with the evaluator seeded as Optuna seeds its own; a
multi-objective study without a target is analysed for reaching its Pareto front. NonConditional is not: it requires an error when a
parameter's distribution changes mid-study, where hpinsight analyses the union
(see ``test_history_from_optuna``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import optuna
import pytest
from optuna.testing.pytest_importance import (
    BasicImportanceEvaluatorTestCase,
    ConditionalImportanceEvaluatorTestCase,
    MultiObjectiveImportanceEvaluatorTestCase,
)

import hpinsight as hp
from hpinsight.integrations.optuna import FanovaImportanceEvaluator

pytestmark = [
    # Optuna's suite exercises experimental arguments (normalize=False) on purpose.
    pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning"),
    # and checks the contract on studies of 1-3 trials, where hpinsight also says that
    # such importances are a guess (tested in test_evaluator_plots.py)
    pytest.mark.filterwarnings("ignore::hpinsight.exceptions.FewTrialsWarning"),
]


class TestBasic(BasicImportanceEvaluatorTestCase):
    @pytest.fixture
    def evaluator(self) -> Callable[..., FanovaImportanceEvaluator]:
        # The suite compares two calls of one evaluator, so it needs a fixed seed.
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.Forest(n_trees=16))


class TestConditional(ConditionalImportanceEvaluatorTestCase):
    @pytest.fixture
    def evaluator(self) -> Callable[..., FanovaImportanceEvaluator]:
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.Forest(n_trees=16))


class TestMultiObjective(MultiObjectiveImportanceEvaluatorTestCase):
    @pytest.fixture
    def evaluator(self) -> Callable[..., FanovaImportanceEvaluator]:
        # Without a target, a multi-objective study is analysed for its Pareto front.
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.Forest(n_trees=16))


def _two_objectives(n_trials: int = 80) -> optuna.Study:
    """x drives the first objective, y the second, t trades them off, z does nothing."""
    study = optuna.create_study(directions=["minimize", "maximize"],
                                sampler=optuna.samplers.RandomSampler(seed=3))

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        x, y, t = (trial.suggest_float(n, 0, 1) for n in ("x", "y", "t"))
        trial.suggest_float("z", 0, 1)
        return 4 * (x - 0.3) ** 2 + t, -(3 * (y - 0.7) ** 2) + t

    study.optimize(objective, n_trials=n_trials)
    return study


def test_a_multi_objective_study_is_analysed_for_its_pareto_front_by_default() -> None:
    study = _two_objectives()
    evaluator = FanovaImportanceEvaluator(seed=0)
    front = evaluator.evaluate(study)
    assert evaluator.last_result is not None
    assert evaluator.last_result.objective_name == "share of trials dominating it"
    # reaching the front takes x and y at their best; z does nothing for either objective
    assert set(list(front)[:2]) == {"x", "y"}
    assert front["z"] < 0.01
    assert FanovaImportanceEvaluator(seed=0, objective="front").evaluate(study) == front
    # the front is not either objective: t moves trials along it, and matters to both
    first = FanovaImportanceEvaluator(seed=0, objective=0).evaluate(study)
    assert first["t"] > 0.1 > front["t"]


@pytest.mark.parametrize(("objective", "same_as"), [("values_1", 1), ("error", 0), ("auc", 1)],
                         ids=["dataframe-name", "metric-name-0", "metric-name-1"])
def test_an_objective_is_chosen_by_the_names_optuna_uses(objective: str, same_as: int) -> None:
    study = _two_objectives(40)
    study.set_metric_names(["error", "auc"])
    by_name = FanovaImportanceEvaluator(seed=0, objective=objective)
    by_index = FanovaImportanceEvaluator(seed=0, objective=same_as)
    assert by_name.evaluate(study) == by_index.evaluate(study)
    assert by_name.last_result is not None
    assert by_name.last_result.objective_name == ["error", "auc"][same_as]


@pytest.mark.parametrize(("objective", "error", "match"), [
    ("loss", ValueError, r"'values_0', 'values_1' or 'front'|'values_0', 'values_1', 'front'"),
    (2, ValueError, r"index in \[0, 1\]"),
    (1.5, TypeError, r"int index, an objective's name or 'front'"),
    ("", ValueError, "must not be an empty string"),
], ids=["unknown-name", "index-out-of-range", "float", "empty"])
def test_an_objective_the_study_does_not_have_is_refused(objective: object, error: type,
                                                         match: str) -> None:
    study = _two_objectives(12)
    with pytest.raises(error, match=match):
        optuna.importance.get_param_importances(
            study, evaluator=FanovaImportanceEvaluator(objective=objective))  # type: ignore[arg-type]


class TestBasicGaussianProcess(BasicImportanceEvaluatorTestCase):
    @pytest.fixture
    def evaluator(self) -> Callable[..., FanovaImportanceEvaluator]:
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.GP())


class TestConditionalGaussianProcess(ConditionalImportanceEvaluatorTestCase):
    @pytest.fixture
    def evaluator(self) -> Callable[..., FanovaImportanceEvaluator]:
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.GP())


class TestMultiObjectiveGaussianProcess(MultiObjectiveImportanceEvaluatorTestCase):
    @pytest.fixture
    def evaluator(self) -> Callable[..., FanovaImportanceEvaluator]:
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.GP())
