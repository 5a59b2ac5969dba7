"""Optuna's own evaluator conformance suite, run against hpinsight's evaluator.

The Basic, Conditional and MultiObjective classes of ``optuna.testing.pytest_importance``
are subclassed unchanged. NonConditional is not: it requires an error when a
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

pytestmark = pytest.mark.filterwarnings(
    # Optuna's suite exercises experimental arguments (normalize=False) on purpose.
    "ignore::optuna.exceptions.ExperimentalWarning",
)


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
        # Without a target, a multi-objective study needs the objective chosen up front;
        # test_multi_objective_needs_a_choice checks the error when it is not.
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.Forest(n_trees=16), objective=0)


def test_multi_objective_needs_a_choice() -> None:
    study = optuna.create_study(directions=["minimize", "maximize"])
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)), n_trials=5)
    with pytest.raises(ValueError, match=r"objective=0 .*target=lambda"):
        optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator())


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
        return functools.partial(FanovaImportanceEvaluator, seed=0, surrogate=hp.GP(), objective=0)
