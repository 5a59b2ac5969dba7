"""The top level holds the analyses and their input types; results, errors and figures
each have one home module, and a name that moved says where it went."""

from __future__ import annotations

import inspect

import pytest

import hpinsight as hp
from hpinsight import exceptions, results


def test_the_top_level_holds_functions_inputs_and_modules_only() -> None:
    for name in hp.__all__:
        obj = getattr(hp, name)
        assert (inspect.isfunction(obj) or inspect.ismodule(obj) or name == "__version__"
                or obj in (hp.SearchSpace, hp.TrialHistory, hp.SamplingRecord, hp.Float,
                           hp.Int, hp.Categorical, hp.Condition, hp.AnyOf, hp.GP, hp.Forest)), name
    assert hp.__all__ == sorted(hp.__all__)
    # 24, then the model objects GP and Forest, adapters, and importance_across_studies
    assert len(hp.__all__) <= 28


@pytest.mark.parametrize("module", [results, exceptions], ids=["results", "exceptions"])
def test_results_and_errors_live_in_their_module_and_not_at_the_top(module) -> None:
    for name in module.__all__:
        assert inspect.isclass(getattr(module, name))
        assert name not in hp.__all__
        with pytest.raises(AttributeError, match=rf"hpinsight\.{module.__name__.split('.')[-1]}\.{name}"):
            getattr(hp, name)


def test_plots_live_in_plotting() -> None:
    pytest.importorskip("matplotlib")
    assert callable(hp.plotting.plot_importance)
    with pytest.raises(AttributeError, match=r"hpinsight\.plotting\.plot_importance"):
        hp.plot_importance  # noqa: B018


def test_every_public_function_returns_a_class_of_results() -> None:
    # two hops from the top: a function here, its return type(s) in hpinsight.results
    returned = {
        hp.fanova: "FanovaResult", hp.partial_dependence: "PartialDependenceResult",
        hp.confidence_split: "RegionsResult", hp.tuning_risk: "TuningRiskResult",
        hp.noninferiority_test: "NonInferiorityResult", hp.default_values: "DefaultValues",
        hp.suggest_subspace: "SubspaceResult",
        hp.report: "Report | MultiObjectiveReport",  # several objectives: a section each
        hp.importance_across_studies: "AcrossStudiesResult",
    }
    for func, name in returned.items():
        assert all(one in results.__all__ for one in name.split(" | "))
        assert inspect.signature(func).return_annotation == name, func.__name__


@pytest.mark.parametrize(("old", "new"), [
    (lambda: hp.TrialHistory.from_optuna(None), r"hp\.adapters\.from_optuna\(study\)"),
    (lambda: hp.TrialHistory.from_smac("run"), r"hp\.adapters\.from_smac"),
    (lambda: hp.SearchSpace.from_configspace(None), r"hp\.adapters\.from_configspace\(cs\)"),
    (lambda: hp.SearchSpace.from_optuna({}), r"hp\.adapters\.space_from_optuna"),
    (lambda: hp.SearchSpace([hp.Float("x", 0, 1)]).to_configspace(),
     r"hp\.adapters\.to_configspace\(space\)"),
], ids=["history-optuna", "history-smac", "space-configspace", "space-optuna", "to-configspace"])
def test_the_old_doors_name_the_adapter_that_replaced_them(old, new) -> None:
    with pytest.raises(AttributeError, match=new):
        old()


def test_every_analysis_takes_history_first() -> None:
    for func in (hp.fanova, hp.report, hp.suggest_subspace, hp.default_values,
                 hp.importance_across_studies):
        assert next(iter(inspect.signature(func).parameters)) == "history", func.__name__


def test_a_renamed_result_names_its_new_name() -> None:
    with pytest.raises(AttributeError, match=r"hpinsight\.results\.RegionsResult"):
        results.RegionTree  # noqa: B018
