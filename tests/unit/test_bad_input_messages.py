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


def test_partial_dependence_of_a_forest_without_return_std_says_how_to_get_bands(analysed):
    # a fitted RandomForestRegressor failed inside predict with "unexpected keyword
    # argument 'return_std'"
    from sklearn.ensemble import RandomForestRegressor

    result, _ = analysed
    X = result.space.encode(result.space.sample(30, seed=1))
    forest = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, X[:, 0])
    with pytest.raises(InvalidArgumentTypeError,
                       match=r"RandomForestRegressor\.predict takes no return_std.*"
                             r"surrogate=hp\.Forest\.from_estimator\(model\)"):
        hp.partial_dependence(forest, "x", space=result.space)


def test_partial_dependence_of_the_trials_themselves_says_to_fit_first(analysed):
    # a TrialHistory was told to pass "the SearchSpace it was fitted on"
    result, _ = analysed
    history = hp.TrialHistory(result.space, result.space.sample(10, seed=0), list(range(10)))
    for space in (None, result.space):
        with pytest.raises(InvalidArgumentTypeError, match=r"TrialHistory.*hp\.fanova\(history\)"):
            hp.partial_dependence(history, "x", space=space)


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"trial_ids": ["a"]}, InvalidArgumentTypeError, r"'trial_ids'.*integers.*Got 'a' \(str\)"),
    ({"trial_ids": [1.5]}, InvalidArgumentTypeError, r"'trial_ids'.*Got 1\.5 \(float\)"),
    ({"excluded": [1]}, InvalidArgumentTypeError, r"'excluded'.*mapping of a reason.*Got list"),
    ({"excluded": {"failed": "y"}}, InvalidDataError, r"'excluded'.*'failed' maps to 'y'"),
    ({"excluded": {"failed": -1}}, InvalidDataError, r"'excluded'.*'failed' maps to -1"),
])
def test_trial_ids_and_excluded_counts_that_are_not_numbers_are_named(options, error, match):
    # these failed with "invalid literal for int()" or "dictionary update sequence", and
    # a trial id of 1.5 was silently read as 1
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    with pytest.raises(error, match=match):
        hp.TrialHistory(space, [{"x": 0.5}], [1.0], **options)


def test_trial_ids_from_a_float_column_and_numpy_counts_are_taken():
    import numpy as np

    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    history = hp.TrialHistory(space, [{"x": 0.5}, {"x": 0.2}], [1.0, 2.0],
                              trial_ids=[np.int64(3), 7.0], excluded={"failed": np.int64(2), "pruned": 0})
    assert history.trial_ids == (3, 7)
    assert dict(history.excluded) == {"failed": 2}


@pytest.mark.parametrize(("defaults", "match"), [
    ({"x": 50.0}, r"^suggest_subspace: the default 50\.0 given for 'x' is not a value"),
    ({"n": 2.5}, r"^suggest_subspace: the default 2\.5 given for 'n' is not a value"),
    ({"nope": 1}, r"^suggest_subspace: defaults were given for \['nope'\]"),
])
def test_a_default_the_space_cannot_take_is_named_by_suggest_subspace(analysed, defaults, match):
    # the error named surrogate_tuning_risk, a function the user had not called
    result, _ = analysed
    history = hp.TrialHistory(result.space, result.space.sample(30, seed=0), list(range(30)))
    with pytest.raises(InvalidDataError, match=match):
        hp.suggest_subspace(history, defaults=defaults, seed=0)


def test_a_list_of_analyses_given_as_importance_history_names_what_the_list_holds(analysed):
    # the message said "Got list instead" of a list, which is what it asks for
    pytest.importorskip("matplotlib")
    result, _ = analysed
    with pytest.raises(InvalidArgumentTypeError,
                       match=r"Got a list holding FanovaResult instead\. A FanovaResult is drawn by "
                             r"hpinsight\.plotting\.plot_importance"):
        hp.plotting.plot_importance_history([result, result])


def test_counts_and_ids_from_pandas_and_numpy_are_taken():
    # a Series of counts (value_counts()) and a list of pairs were taken before the check
    # of excluded counts, and must stay so; an array of ids had no truth value
    import numpy as np
    import pandas as pd

    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    for excluded in (pd.Series({"FAIL": 2, "PRUNED": 0}), [("FAIL", 2)]):
        history = hp.TrialHistory(space, [{"x": 0.5}], [1.0], excluded=excluded)
        assert dict(history.excluded) == {"FAIL": 2}
    for ids in (np.array([4]), pd.Series([4])):
        assert hp.TrialHistory(space, [{"x": 0.5}], [1.0], trial_ids=ids).trial_ids == (4,)


def test_partial_dependence_of_boosting_does_not_suggest_what_refuses_it(analysed):
    # the hint to decompose a tree ensemble through hp.Forest.from_estimator was given for
    # boosting too, which from_estimator refuses (its stages add up)
    from sklearn.ensemble import GradientBoostingRegressor

    result, _ = analysed
    X = result.space.encode(result.space.sample(30, seed=1))
    boosted = GradientBoostingRegressor(n_estimators=3, random_state=0).fit(X, X[:, 0])
    with pytest.raises(InvalidArgumentTypeError, match="takes no return_std") as caught:
        hp.partial_dependence(boosted, "x", space=result.space)
    assert "from_estimator" not in str(caught.value)
    assert "GaussianProcessRegressor" in str(caught.value)


def test_the_cost_of_fixing_from_a_capped_analysis_is_refused():
    # the capped objective is flat beyond its cap: fixing x at 0.9 on (x - 0.3)^2 came out
    # at a sixteenth of its true cost of 0.36, without a word
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(60, seed=0)
    history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    capped = hp.fanova(history, cap_quantile=0.25, seed=0,
                       surrogate=hp.GP(n_draws=4, refits=0, shadows=False))
    with pytest.raises(hp.exceptions.InvalidArgumentError,
                       match=r"surrogate_tuning_risk needs the analysis of the objective itself.*"
                             r"capped at .*without cap_quantile"):
        hp.surrogate_tuning_risk(capped, {"x": 0.9}, seed=0, n_candidates=50)


def test_a_column_left_out_of_the_trials_is_refused():
    # a parameter without conditions that no trial names read as inactive everywhere: the
    # one that drove the objective got 0 % and the others shared its effect
    import numpy as np
    import pandas as pd

    space = hp.SearchSpace([hp.Float("lr", 0, 1), hp.Int("layers", 1, 8),
                            hp.Float("dropout", 0, 1)])
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"lr": rng.random(20), "dropout": rng.random(20)})
    match = r"give no value for \['layers'\] in any trial.*Add their column"
    with pytest.raises(InvalidDataError, match=match) as caught:
        hp.TrialHistory(space, frame, rng.random(20))
    assert caught.value.name == "layers"
    with pytest.raises(InvalidDataError, match=match):
        hp.TrialHistory(space, frame.to_dict("records"), rng.random(20))
    # a parameter some trials leave out stays allowed (it is inactive there)
    rows = [{"lr": 0.5, "dropout": 0.1}, {"lr": 0.2, "layers": 3, "dropout": 0.4}]
    assert hp.TrialHistory(space, rows, [0.1, 0.2]).n_trials == 2


@pytest.mark.parametrize(("config", "match"), [
    ({"x": 5.0, "c": "a"}, r"'x' of configuration 1 is 5.0, outside \[0.0, 1.0\]"),
    ({"x": 0.5, "c": "z"}, r"'c' of configuration 1 is 'z', which is not one of its choices"),
    ({"x": 0.5, "c": "a", "lr": 0.1}, r"not in the search space: \['lr'\]"),
])
def test_a_value_the_space_cannot_hold_is_refused_when_the_history_is_made(config, match):
    # it was accepted and refused only at the first analysis, far from the line that gave it
    import pandas as pd

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Categorical("c", ["a", "b"])])
    rows = [{"x": 0.2, "c": "b"}, config]
    for configs in (rows, pd.DataFrame(rows)):
        with pytest.raises(InvalidDataError, match=match):
            hp.TrialHistory(space, configs, [1.0, 2.0])
    assert rows[1] == config  # nothing the user gave is changed


def test_a_value_from_a_float32_column_is_named_as_written():
    import numpy as np
    import pandas as pd

    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    frame = pd.DataFrame({"x": np.array([0.5, 1.3], dtype=np.float32)})
    with pytest.raises(InvalidDataError, match=r"configuration 1 is 1\.3, outside"):
        hp.TrialHistory(space, frame, [1.0, 2.0])

def test_defaults_of_studies_over_different_ranges_are_refused():
    # the second study's x in [0, 10] was snapped into the first one's [0, 1] (x = 1, a
    # value no study's best trials had), and other choices raised a bare KeyError
    def study(param, values):
        space = hp.SearchSpace([param])
        return hp.TrialHistory(space, [{param.name: v} for v in values],
                               [float(i) for i in range(len(values))])

    narrow = study(hp.Float("x", 0, 1), [0.5, 0.4, 0.6])
    wide = study(hp.Float("x", 0, 10), [5.0, 5.1, 4.9])
    for first, second in ((narrow, wide), (wide, narrow)):
        with pytest.raises(InvalidDataError, match=r"parameter 'x' of study 1 is Float\(.*the "
                                                   r"first study 0 .*same search space"):
            hp.default_values([first, second], top_n=2)
    two = study(hp.Categorical("c", ["a", "b"]), ["a", "b", "a"])
    three = study(hp.Categorical("c", ["a", "b", "d"]), ["d", "a", "b"])
    with pytest.raises(InvalidDataError, match=r"parameter 'c' of study 'other'"):
        hp.default_values({"first": two, "other": three}, top_n=2)
    # declared defaults may differ: they take no part in pooling
    same = study(hp.Float("x", 0, 1, default=0.2), [0.5, 0.45, 0.6])
    assert hp.default_values([narrow, same], top_n=2).values["x"] == pytest.approx(0.5, abs=0.1)


def test_values_to_fix_at_are_of_the_parameters_own_type():
    # an integer column read back as float gave n_estimators=475.0 (refused by
    # scikit-learn), and numpy scalars printed as np.int64(4) in every sentence
    import numpy as np
    import pandas as pd

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Int("n", 1, 500), hp.Categorical("c", ["a", "b"]),
                            hp.Float("z", 0, 1)])
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.random(40), "n": rng.integers(1, 501, 40).astype(float),
                          "c": np.array(["a", "b"])[rng.integers(0, 2, 40)],
                          "z": rng.random(40).astype(np.float32)})
    history = hp.TrialHistory(space, frame, (frame.x - 0.3) ** 2)
    sub = hp.suggest_subspace(history, seed=0, surrogate=hp.GP(n_draws=4, refits=0, shadows=False))
    types = {"x": float, "n": int, "c": str, "z": float}
    assert sub.fixed  # the parameters that do nothing
    for name, value in sub.fixed.items():
        assert type(value) is types[name], (name, value)
    given = hp.suggest_subspace(history, seed=0, defaults={"n": np.int64(4), "c": np.str_("a")},
                                surrogate=hp.GP(n_draws=4, refits=0, shadows=False))
    assert {k: type(v) for k, v in given.defaults.items() if k in ("n", "c")} == {"n": int, "c": str}
    from hpinsight._shared import fmt_value

    assert [fmt_value(np.int64(4)), fmt_value(np.float32(0.95907766)),
            fmt_value(np.str_("a"), quote=True)] == ["4", "0.9591", "'a'"]


@pytest.mark.parametrize(("value", "text"), [
    (30154.7, "30155"), (475.0, "475"), (12345678.0, "12345678"), (0.000123456, "0.0001235"),
    (2.5e12, "2.5e+12"), (-30150.0, "-30150")])
def test_a_large_value_prints_to_the_unit_not_in_exponent_notation(value, text) -> None:
    # "fix at 3.015e+04" read as a float of 4 digits where the value was 30154.7
    from hpinsight._shared import fmt_value

    assert fmt_value(value) == text


@pytest.mark.parametrize(("r2", "text"), [(-0.001, "0.00"), (-0.02, "-0.02"), (0.876, "0.88"),
                                         (None, "n/a")])
def test_a_fit_r2_near_zero_is_not_negative_zero(r2, text) -> None:
    from hpinsight._shared import fmt_r2

    assert fmt_r2(r2) == text


def test_defaults_from_default_values_are_taken_by_the_cost_of_fixing(analysed):
    # suggest_subspace and the experiment take a DefaultValues; this one refused it
    result, _ = analysed
    configs = result.space.sample(30, seed=3)
    found = hp.default_values(hp.TrialHistory(result.space, configs, list(range(30))), top_n=5)
    by_object = hp.surrogate_tuning_risk(result, found, seed=0, n_candidates=50)
    by_mapping = hp.surrogate_tuning_risk(result, found.values, seed=0, n_candidates=50)
    assert {k: v.mean for k, v in by_object.items()} == {k: v.mean for k, v in by_mapping.items()}
