"""Importances on the samples a real TPE study produces, where parameters that do nothing
are clustered by the sampler along with the ones that matter."""

from __future__ import annotations

import optuna
import pytest

import hpinsight as hp
from hpinsight.integrations.optuna import FanovaImportanceEvaluator

NAMES = ["a", "b", "c"] + [f"d{i}" for i in range(7)]


def _objective(trial: optuna.Trial) -> float:
    v = {n: trial.suggest_float(n, -3, 3) for n in NAMES}
    return 4 * v["a"] ** 2 + 2 * v["b"] ** 2 + v["c"] ** 2


@pytest.fixture(scope="module")
def tpe_studies() -> list[optuna.Study]:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    studies = []
    for seed in range(3):
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
        study.optimize(_objective, n_trials=150)
        studies.append(study)
    return studies


def _normalized(study: optuna.Study, surrogate: hp.GP | hp.Forest) -> dict[str, float]:
    imp = optuna.importance.get_param_importances(
        study, evaluator=FanovaImportanceEvaluator(seed=0, surrogate=surrogate))
    return {k: v / sum(imp.values()) for k, v in imp.items()}


def test_gp_credits_nothing_to_do_nothing_parameters(tpe_studies) -> None:
    for study in tpe_studies:
        imp = _normalized(study, hp.GP())
        assert sum(imp[f"d{i}"] for i in range(7)) < 0.05
        assert list(imp)[:3] == ["a", "b", "c"]


def test_forest_is_misled_on_the_same_trials(tpe_studies) -> None:
    """The reason the Gaussian process exists: the same trials fool the forest."""
    masses = [sum(_normalized(s, hp.Forest())[f"d{i}"] for i in range(7)) for s in tpe_studies]
    assert sum(masses) / len(masses) > 0.2


def test_default_evaluator_is_the_gp_and_its_verdicts_separate_the_two_groups(tpe_studies) -> None:
    for study in tpe_studies:
        evaluator = FanovaImportanceEvaluator(seed=0)
        optuna.importance.get_param_importances(study, evaluator=evaluator)
        result = evaluator.last_result
        assert result is not None
        assert result.surrogate == hp.GP()
        for name in ("a", "b", "c"):
            assert result.importance(name).verdict == "resolved"
        verdicts = {result.importance(f"d{i}").verdict for i in range(7)}
        assert verdicts == {"indistinguishable from nothing"}
