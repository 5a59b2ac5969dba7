"""Mistakes a new user makes, each answered by an error that names the problem and the fix
(found by trying the README as a new user would: each of these failed deep inside with an
AttributeError, or with a message that said neither what was wrong nor what to do)."""

from __future__ import annotations

import math

import pytest

import hpinsight as hp
from hpinsight.exceptions import InvalidArgumentTypeError, InvalidDataError, UnknownNameError


@pytest.fixture(scope="module")
def analysed():
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Int("n", 1, 5), hp.Float("z", 0, 1)])
    configs = space.sample(60, seed=0)
    history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 + 0.05 * c["n"] for c in configs])
    result = hp.fanova(history, seed=0, surrogate=hp.GP(n_draws=4, refits=0, shadows=False))
    pd = hp.partial_dependence(result, params="x", n_samples=50, seed=0)
    return result, pd


def test_a_plot_of_another_result_names_the_plot_that_draws_it(analysed):
    pytest.importorskip("matplotlib")
    result, pd = analysed
    with pytest.raises(InvalidArgumentTypeError,
                       match=r"plot_tuning_risk must be a TuningRiskResult\. Got FanovaResult.*"
                             r"drawn by hpinsight\.plotting\.plot_importance"):
        hp.plotting.plot_tuning_risk(result)
    with pytest.raises(InvalidArgumentTypeError, match=r"plot_regions must be a RegionsResult\. "
                                                       r"Got PartialDependenceResult.*plot_partial_dependence"):
        hp.plotting.plot_regions(pd)
    two = hp.partial_dependence(result, params=("x", "n"))  # a PDP of two: a heat map, as before
    assert hp.plotting.plot_interaction(two) is not None
    with pytest.raises(InvalidArgumentTypeError, match=r"plot_importance_history must be a sequence "
                                                       r"of ImportanceSnapshot.*Got FanovaResult.*"
                                                       r"drawn by hpinsight\.plotting\.plot_importance"):
        hp.plotting.plot_importance_history(result)  # was: 'FanovaResult' is not subscriptable
    risks = hp.surrogate_tuning_risk(result, {"x": 0.5}, seed=0, n_candidates=50)
    with pytest.raises(InvalidArgumentTypeError, match=r"dict of SurrogateRisk has no figure.*plot_subspace"):
        hp.plotting.plot_subspace(risks)


def test_defaults_that_are_not_a_mapping_say_what_they_must_be(analysed):
    result, _ = analysed
    with pytest.raises(InvalidArgumentTypeError, match=r"'defaults' parameter of surrogate_tuning_risk "
                                                       r"must be a mapping.*Got str"):
        hp.surrogate_tuning_risk(result, "best")


    class Row:  # a mapping by its items alone, as a pandas Series of a trial's values is
        def items(self):
            return iter([("x", 0.5)])

    by_items = hp.surrogate_tuning_risk(result, Row(), seed=0, n_candidates=50)
    assert by_items["x"].mean == hp.surrogate_tuning_risk(result, {"x": 0.5}, seed=0,
                                                          n_candidates=50)["x"].mean


def test_confidence_split_of_an_analysis_says_to_split_a_pdp(analysed):
    result, pd = analysed
    with pytest.raises(InvalidArgumentTypeError, match=r"must be a PartialDependenceResult\. Got "
                                                       r"FanovaResult.*hp\.partial_dependence"):
        hp.confidence_split(result)
    assert hp.confidence_split(pd, max_splits=1).pd is pd  # the right input still works


def test_several_names_in_one_list_are_told_to_go_as_arguments(analysed):
    result, _ = analysed
    with pytest.raises(UnknownNameError, match=r"to name several, pass each where the call takes "
                                               r"several, e.g. result\.importance\('x', 'n'\)"):
        result.importance(["x", "n"])
    with pytest.raises(UnknownNameError) as exc:  # an unknown name is not told to split
        result.importance("y")
    assert "to name several" not in str(exc.value)


def test_trials_left_out_are_named_when_none_is_left():
    # a study whose every trial returned inf: "no trials (an empty history)" did not say
    # that five were there and why they were left out
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study()
    study.optimize(lambda t: math.inf * t.suggest_float("x", 1, 2), n_trials=5)
    with pytest.raises(InvalidDataError, match=r"no usable trials; 5 trial\(s\) excluded "
                                               r"\(5 non-finite value\)"):
        hp.fanova(study)


def test_the_callback_class_given_instead_of_an_instance_says_so():
    optuna = pytest.importorskip("optuna")
    from hpinsight.integrations.optuna import ImportanceCallback

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study()
    with pytest.raises(InvalidArgumentTypeError, match=r"pass an instance, not the class.*"
                                                       r"callbacks=\[ImportanceCallback\(\)\]"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1,
                       callbacks=[ImportanceCallback])
