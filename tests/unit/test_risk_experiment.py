"""The tuning-risk experiment (Weerts 2018, Sec. 3.3.1): paired conditions, the fixed
parameter at its default, leave-one-out defaults, reproducibility, verdicts on an
estimator with one parameter that matters and one that does not, and input errors."""

from __future__ import annotations

import json
import logging
from itertools import product
from typing import Any, ClassVar

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

import hpinsight as hp

optuna = pytest.importorskip("optuna")

from hpinsight.experiments import (  # noqa: E402
    CONFIG_KEY,
    TuningRiskExperiment,
    tuning_risk_experiment,
)

FAST = {"n_iter": 6, "outer_folds": 2, "inner_folds": 2, "progress": False}


class ThresholdClassifier(ClassifierMixin, BaseEstimator):
    """Predicts ``x[:, 0] > threshold``; ``noise``, ``kind`` and ``child`` do nothing.

    Every fit appends its parameters to :attr:`fits` (in-process runs only).
    """

    fits: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, threshold: float = 0.5, noise: float = 0.0, kind: str = "a",
                 child: float = 0.0) -> None:
        self.threshold = threshold
        self.noise = noise
        self.kind = kind
        self.child = child

    def fit(self, X: Any, y: Any) -> ThresholdClassifier:
        ThresholdClassifier.fits.append(self.get_params())
        self.classes_ = np.unique(y)
        return self

    def predict(self, X: Any) -> Any:
        return (np.asarray(X)[:, 0] > self.threshold).astype(int)


class ConstantClassifier(ClassifierMixin, BaseEstimator):
    """Always predicts class 0; ``c`` does nothing."""

    def __init__(self, c: float = 0.0) -> None:
        self.c = c

    def fit(self, X: Any, y: Any) -> ConstantClassifier:
        self.classes_ = np.unique(y)
        return self

    def predict(self, X: Any) -> Any:
        return np.zeros(len(X), dtype=int)


def threshold_data(cut: float, *, n: int = 90, flip: float = 0.1, seed: int = 0):
    """One uniform feature, label ``x > cut`` with a fraction ``flip`` of labels flipped."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, size=(n, 1))
    y = (x[:, 0] > cut).astype(int)
    flipped = rng.choice(n, size=round(flip * n), replace=False)
    y[flipped] = 1 - y[flipped]
    return x, y


THRESHOLD_SPACE = hp.SearchSpace([hp.Float("threshold", 0.0, 1.0), hp.Float("noise", 0.0, 1.0)])
DEFAULTS = {"threshold": 0.95, "noise": 0.123456789}


def small_experiment(**kwargs: Any) -> TuningRiskExperiment:
    datasets = kwargs.pop("datasets", {"one": threshold_data(0.5, seed=1),
                                       "two": threshold_data(0.5, seed=2)})
    space = kwargs.pop("space", THRESHOLD_SPACE)
    settings = {**FAST, "seeds": 2, "defaults": DEFAULTS, **kwargs}
    return tuning_risk_experiment(ThresholdClassifier(), space, datasets, **settings)


# --------------------------------------------------------------------------------------
# pairing and the fixed parameter
def test_fixed_runs_see_the_non_fixed_draws_with_the_default_swapped_in():
    experiment = small_experiment()
    assert len(experiment.records) == 2 * 2 * 3
    for dataset, seed, param in product(experiment.datasets, experiment.seeds, experiment.params):
        free = experiment.run(dataset, seed)
        fixed = experiment.run(dataset, seed, param)
        assert fixed.default == DEFAULTS[param]
        for f_free, f_fixed in zip(free.folds, fixed.folds, strict=True):
            assert len(f_fixed.trial_configs) == FAST["n_iter"]
            for c_free, c_fixed in zip(f_free.trial_configs, f_fixed.trial_configs, strict=True):
                assert c_fixed == {**c_free, param: DEFAULTS[param]}
                assert c_free[param] != DEFAULTS[param]  # the draw itself is not the default
            assert f_fixed.best_config[param] == DEFAULTS[param]


def test_the_estimator_is_fit_with_the_default_and_the_same_other_values():
    ThresholdClassifier.fits.clear()
    tuning_risk_experiment(
        ThresholdClassifier(), THRESHOLD_SPACE, {"only": threshold_data(0.5)}, params=["noise"],
        defaults=DEFAULTS, seeds=[3], n_jobs=1, **FAST,
    )
    fits = ThresholdClassifier.fits
    per_run = FAST["outer_folds"] * (FAST["n_iter"] * FAST["inner_folds"] + 1)
    assert len(fits) == 2 * per_run
    fixed = [f for f in fits if f["noise"] == DEFAULTS["noise"]]
    free = [f for f in fits if f["noise"] != DEFAULTS["noise"]]
    # every fit of the fixed run used the default, and no fit of the other run did
    assert len(fixed) == len(free) == per_run
    # fit by fit, the fixed run saw exactly the thresholds of the non-fixed run
    assert [f["threshold"] for f in fixed] == [f["threshold"] for f in free]
    assert len({f["threshold"] for f in free}) > FAST["outer_folds"]


def test_the_evaluated_configuration_is_stored_on_the_trial(monkeypatch):
    stored: list[dict[str, Any]] = []
    original = optuna.trial.Trial.set_user_attr

    def spy(self: Any, key: str, value: Any) -> None:
        if key == CONFIG_KEY:
            stored.append(dict(value))
        original(self, key, value)

    monkeypatch.setattr(optuna.trial.Trial, "set_user_attr", spy)
    experiment = small_experiment(params=["threshold"], seeds=1, n_jobs=1)
    recorded = [c for r in experiment.records for f in r.folds for c in f.trial_configs]
    assert stored == recorded
    assert sum(c["threshold"] == DEFAULTS["threshold"] for c in stored) == len(stored) // 2


def test_conditional_children_follow_the_parent_actually_used():
    space = hp.SearchSpace(
        [hp.Categorical("kind", ["a", "b"]), hp.Float("child", 0.0, 1.0)],
        conditions=[hp.Condition("child", "kind", values=["a"])],
    )
    data = {"one": threshold_data(0.5, seed=1), "two": threshold_data(0.5, seed=2)}
    runs = {}
    for default in ("a", "b"):
        experiment = tuning_risk_experiment(ThresholdClassifier(), space, data, params=["kind"],
                                            defaults={"kind": default}, seeds=1, **FAST)
        runs[default] = experiment
        free = [c for f in experiment.run("one", 0).folds for c in f.trial_configs]
        fixed = [c for f in experiment.run("one", 0, "kind").folds for c in f.trial_configs]
        assert all(("child" in c) == (c["kind"] == "a") for c in free)
        assert {c["kind"] for c in free} == {"a", "b"}
        assert all(c["kind"] == default for c in fixed)
        for c_free, c_fixed in zip(free, fixed, strict=True):
            if default == "b":
                assert "child" not in c_fixed
            elif c_free["kind"] == "a":  # the shared draw
                assert c_fixed["child"] == c_free["child"]
            else:  # activated by the default only: a draw of its own, inside the range
                assert 0.0 <= c_fixed["child"] <= 1.0
    # the non-fixed runs do not depend on what the other condition fixes
    assert runs["a"].run("one", 0) == runs["b"].run("one", 0)


# --------------------------------------------------------------------------------------
# defaults
def test_each_dataset_uses_its_leave_one_out_default():
    # two datasets want a low threshold, two a high one: left out, each dataset's
    # default comes from the majority of the *other* group
    datasets = {"low1": threshold_data(0.2, flip=0.0, seed=1),
                "low2": threshold_data(0.2, flip=0.0, seed=2),
                "high1": threshold_data(0.8, flip=0.0, seed=3),
                "high2": threshold_data(0.8, flip=0.0, seed=4)}
    experiment = tuning_risk_experiment(
        ThresholdClassifier(), hp.SearchSpace([hp.Float("threshold", 0.0, 1.0)]), datasets,
        n_default_configs=40, default_top_n=3, default_folds=2, seeds=1, **FAST,
    )
    assert experiment.default_values is not None
    assert experiment.settings["defaults_source"] == "leave-one-out"
    for name in datasets:
        expected = experiment.default_values.for_study(name)["threshold"]
        assert experiment.defaults[name] == {"threshold": expected}
        fixed = experiment.run(name, 0, "threshold")
        assert fixed.default == expected
        assert all(c["threshold"] == expected for f in fixed.folds for c in f.trial_configs)
    assert experiment.defaults["low1"]["threshold"] > 0.6
    assert experiment.defaults["high1"]["threshold"] < 0.4
    # the histories of the default experiment: own best near the own cut
    assert experiment.default_histories is not None
    assert abs(experiment.default_histories["low1"].best()[1]["threshold"] - 0.2) < 0.1


def test_given_default_values_are_looked_up_per_dataset():
    space = hp.SearchSpace([hp.Float("threshold", 0.0, 1.0)])
    found = hp.results.DefaultValues(values={"threshold": 0.5},
                             per_study={"one": {"threshold": 0.25}, "two": {"threshold": 0.75}},
                             support={}, n_configs={}, top_n=1, n_studies=2)
    experiment = small_experiment(space=space, defaults=found, seeds=1)
    assert experiment.defaults == {"one": {"threshold": 0.25}, "two": {"threshold": 0.75}}
    assert experiment.run("two", 0, "threshold").folds[0].best_config == {"threshold": 0.75}
    assert experiment.default_values is None
    assert experiment.settings["defaults_source"] == "given"


# --------------------------------------------------------------------------------------
# reproducibility and results
def test_same_random_state_same_experiment_whatever_n_jobs():
    from sklearn.datasets import make_classification
    from sklearn.tree import DecisionTreeClassifier

    datasets = {f"d{i}": make_classification(60, 6, n_informative=3, random_state=i)
                for i in range(2)}
    space = hp.SearchSpace([hp.Float("max_features", 0.2, 1.0), hp.Int("max_depth", 1, 6)])
    kwargs = {"n_default_configs": 6, "default_top_n": 2, "default_folds": 2, "seeds": 2,
              "n_iter": 4, "outer_folds": 2, "inner_folds": 2, "progress": False}
    tree = DecisionTreeClassifier()

    def run(**extra: Any) -> dict[str, Any]:
        return tuning_risk_experiment(tree, space, datasets, **{**kwargs, **extra}).to_dict(
            include_trials=True)

    first = run(n_jobs=1, random_state=7)
    assert run(n_jobs=1, random_state=7) == first
    assert run(n_jobs=2, random_state=7) == first
    assert run(n_jobs=1, random_state=8) != first
    # the tree's own randomness was seeded for the run, and the caller's estimator untouched
    assert first["settings"]["estimator_seeded"] == ["random_state"]
    assert tree.random_state is None


def test_a_parameter_that_does_nothing_is_non_inferior_and_one_that_matters_is_not():
    datasets = {f"d{i}": threshold_data(0.5, seed=i) for i in range(3)}
    experiment = tuning_risk_experiment(
        ThresholdClassifier(), THRESHOLD_SPACE, datasets, defaults=DEFAULTS, seeds=3,
        n_iter=10, outer_folds=3, inner_folds=2, progress=False,
    )
    assert experiment.free.shape == experiment.fixed["noise"].shape == (9,)
    # paired draws: the runs that fix the idle parameter reproduce the free runs exactly
    np.testing.assert_array_equal(experiment.fixed["noise"], experiment.free)
    # a threshold fixed at 0.95 misclassifies about 40 % of the points
    assert np.all(experiment.fixed["threshold"] > experiment.free + 0.15)
    result = experiment.statistics(margin=0.01, alpha=0.05)
    assert result.non_inferior == ("noise",)
    assert result["noise"].relative_mean == 0.0
    assert result["threshold"].relative_mean > 1.0


@pytest.mark.parametrize(("scoring", "risk"), [("accuracy", 0.3), ("balanced_accuracy", 0.5)],
                         ids=["accuracy", "balanced"])
def test_risk_is_one_minus_the_score(scoring, risk):
    # 30 of 100 rows are class 1 and the classifier always says 0
    y = np.array([1] * 30 + [0] * 70)
    X = np.arange(100.0).reshape(-1, 1)
    space = hp.SearchSpace([hp.Float("c", 0.0, 1.0)])
    experiment = tuning_risk_experiment(ConstantClassifier(), space, {"a": (X, y)},
                                        defaults={"c": 0.5}, scoring=scoring, seeds=1, **FAST)
    for record in experiment.records:
        assert record.risk == pytest.approx(risk)
        assert all(f.best_inner_risk == pytest.approx(risk) for f in record.folds)
    assert experiment.settings["risk"] == f"1 - {scoring}"


def test_arrays_statistics_and_dict_follow_the_dataset_seed_order():
    experiment = small_experiment(seeds=[5, 1])
    pairs = list(product(("one", "two"), (5, 1)))
    np.testing.assert_array_equal(experiment.free, [experiment.run(d, s).risk for d, s in pairs])
    for param in ("threshold", "noise"):
        np.testing.assert_array_equal(experiment.fixed[param],
                                      [experiment.run(d, s, param).risk for d, s in pairs])
    assert not experiment.free.flags.writeable
    expected = hp.tuning_risk(experiment.fixed, experiment.free, margin=0.02, method="approx")
    assert experiment.statistics(margin=0.02, method="approx") == expected
    data = json.loads(json.dumps(experiment.to_dict(include_trials=True)))
    assert [(r["dataset"], r["seed"], r["fixed"]) for r in data["runs"][:3]] == [
        ("one", 5, None), ("one", 5, "threshold"), ("one", 5, "noise")]
    assert data["defaults"]["two"] == DEFAULTS
    assert len(data["runs"][0]["folds"][0]["trial_risks"]) == FAST["n_iter"]
    assert "trial_configs" not in experiment.to_dict()["runs"][0]["folds"][0]
    assert repr(experiment) == ("TuningRiskExperiment(n_datasets=2, n_seeds=2, "
                                "params=('threshold', 'noise'), n_runs=12)")


def test_to_frame_has_one_row_per_run():
    pytest.importorskip("pandas")
    frame = small_experiment(seeds=1).to_frame()
    assert list(frame["condition"]) == ["non-fixed", "fixed", "fixed"] * 2
    assert frame["fixed"].isna().tolist() == [True, False, False] * 2
    assert list(frame["fixed"][1:3]) == ["threshold", "noise"]


def test_optuna_stays_quiet_and_its_verbosity_is_restored():
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect(level=logging.DEBUG)
    logger = logging.getLogger("optuna")
    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.INFO)
    logger.addHandler(handler)
    try:
        optuna.create_study()  # a control: INFO lines do reach the handler
        assert any("A new study created" in r.getMessage() for r in records)
        records.clear()
        small_experiment(seeds=1, params=["noise"])
        assert optuna.logging.get_verbosity() == optuna.logging.INFO
    finally:
        logger.removeHandler(handler)
        optuna.logging.set_verbosity(before)
    assert [r.getMessage() for r in records] == []


def test_progress_bar_goes_to_stderr(capfd):
    pytest.importorskip("tqdm")
    small_experiment(seeds=1, params=["noise"], progress=True)
    captured = capfd.readouterr()
    assert "tuning runs" in captured.err
    assert "tuning runs" not in captured.out
    # counted in fits: 2 data sets x 1 seed x (1 + 1 parameter) runs, each of
    # 2 outer folds x (6 trials x 2 inner folds + 1 refit) fits
    assert "104/104" in captured.err


# --------------------------------------------------------------------------------------
# errors
def _bad_score(estimator: Any, X: Any, y: Any) -> float:
    return 2.0


ERRORS = [
    ({"params": ["nope"]}, hp.exceptions.InvalidDataError, "names 'nope', which is not in the space"),
    ({"params": []}, hp.exceptions.InvalidDataError, "is empty"),
    ({"params": ["noise", "noise"]}, hp.exceptions.InvalidDataError, "twice"),
    ({"datasets": {}}, hp.exceptions.InvalidDataError, "'datasets' parameter .* is empty"),
    ({"datasets": [(1, 2)]}, TypeError, "must be a mapping"),
    ({"datasets": {"a": (np.zeros((5, 1)), np.zeros(4))}}, hp.exceptions.InvalidDataError, "one target per row"),
    ({"datasets": {"a": np.zeros(3)}}, hp.exceptions.InvalidDataError, r"must be a pair \(X, y\)"),
    ({"space": hp.SearchSpace([hp.Float("C", 0.1, 1.0)])}, hp.exceptions.InvalidSpaceError,
     "'C' is not a parameter of ThresholdClassifier"),
    ({"space": {"threshold": (0, 1)}}, TypeError, "must be an hpinsight SearchSpace"),
    ({"seeds": 0}, ValueError, "'seeds' parameter .* must be >= 1"),
    ({"seeds": [1, 1]}, ValueError, "distinct"),
    ({"seeds": "3"}, TypeError, "'seeds' parameter"),
    ({"outer_folds": 1}, ValueError, "'outer_folds' parameter .* must be >= 2"),
    ({"inner_folds": 1}, ValueError, "'inner_folds' parameter .* must be >= 2"),
    ({"n_iter": 0}, ValueError, "'n_iter' parameter .* must be >= 1"),
    ({"n_jobs": 0}, ValueError, "'n_jobs'"),
    ({"progress": "yes"}, TypeError, "'progress'"),
    ({"scoring": "neg_log_loss"}, ValueError, r"not in \[0, 1\]. Use a score such as 'accuracy'"),
    ({"scoring": "r2"}, ValueError, r"not in \[0, 1\]"),
    ({"scoring": "acuracy"}, ValueError, "must be a scikit-learn scorer name"),
    ({"scoring": _bad_score}, hp.exceptions.InvalidDataError, r"returned 2.0, which is not in \[0, 1\]"),
    ({"defaults": {"nope": 1.0}}, hp.exceptions.InvalidDataError, "names \\['nope'\\], not in the space"),
    ({"defaults": {"noise": 0.5}}, hp.exceptions.InvalidDataError, "no default for 'threshold'"),
    ({"defaults": {**DEFAULTS, "threshold": 5.0}}, hp.exceptions.InvalidDataError,
     r"the default 5\.0 given for 'threshold' is not a value it can take"),
    ({"defaults": [0.5]}, TypeError, "'defaults' parameter"),
    ({"defaults": hp.results.DefaultValues(values={}, per_study={"x": {}, "y": {}}, support={},
                                   n_configs={}, top_n=1, n_studies=2)},
     hp.exceptions.InvalidDataError, r"no leave-one-out defaults for dataset\(s\) \['one', 'two'\]"),
    ({"defaults": None, "datasets": {"one": threshold_data(0.5)}}, hp.exceptions.InvalidDataError,
     "at least two datasets"),
    ({"defaults": None, "n_default_configs": 5, "default_top_n": 6}, ValueError,
     "'default_top_n' parameter .* at most n_default_configs=5"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), ERRORS,
                         ids=[f"{i}-{next(iter(k))}" for i, (k, _, _) in enumerate(ERRORS)])
def test_invalid_input_is_rejected_with_a_clear_message(kwargs, error, match):
    with pytest.raises(error, match=match):
        small_experiment(**{"seeds": 1, **kwargs})


def test_an_object_without_set_params_is_not_an_estimator():
    with pytest.raises(TypeError, match="must be a scikit-learn estimator"):
        tuning_risk_experiment(object(), THRESHOLD_SPACE, {"a": threshold_data(0.5)},
                               defaults=DEFAULTS)


def test_experiments_in_two_threads_give_optuna_its_verbosity_back():
    # Each experiment hides Optuna's per-trial lines while it runs. Two in two threads,
    # the first ending first: each put back what it had found, and the second had found
    # the first's WARNING, which then stayed for the rest of the process.
    import threading

    import optuna

    from hpinsight.experiments._tuning_risk import _quiet_optuna

    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.INFO)
    entered, first_left, second_done = threading.Event(), threading.Event(), threading.Event()
    seen: list[int] = []

    def second() -> None:
        with _quiet_optuna():
            entered.set()
            first_left.wait()
            seen.append(optuna.logging.get_verbosity())  # still quiet while it runs
        second_done.set()

    try:
        with _quiet_optuna():
            thread = threading.Thread(target=second)
            thread.start()
            entered.wait()
        first_left.set()
        second_done.wait()
        thread.join()
        assert seen == [optuna.logging.WARNING]
        assert optuna.logging.get_verbosity() == optuna.logging.INFO
    finally:
        optuna.logging.set_verbosity(before)


def test_an_int_default_of_a_float_parameter_is_fit_as_a_float():
    # max_features = 1 in a TOML file: passed on as the int 1, which scikit-learn reads as
    # one feature where the float space (0.05 .. 1.0) means all of them
    ThresholdClassifier.fits.clear()
    experiment = tuning_risk_experiment(
        ThresholdClassifier(), THRESHOLD_SPACE, {"only": threshold_data(0.5)}, params=["noise"],
        defaults={"threshold": 0.95, "noise": 1}, seeds=np.arange(1), n_jobs=1, **FAST)
    fixed = [f["noise"] for f in ThresholdClassifier.fits if f["noise"] == 1]
    assert fixed
    assert all(type(v) is float for v in fixed)
    assert type(experiment.run("only", 0, "noise").default) is float
    assert experiment.seeds == (0,)  # (an array of seeds was refused as not a sequence)


def test_a_client_that_is_not_one_is_refused_and_an_unreachable_one_said_so():
    # client=5 ended in "'int' object has no attribute 'scatter'" after the checks, and an
    # address with no scheduler in a bare OSError (a traceback from the command line)
    with pytest.raises(TypeError, match=r"'client' parameter of tuning_risk_experiment must "
                                        r"be a dask.distributed Client or a scheduler's address"):
        small_experiment(client=5)
    pytest.importorskip("distributed")
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), \
            pytest.raises(hp.exceptions.HPInsightError,
                          match=r"could not reach a Dask scheduler at 'tcp://127.0.0.1:1'"):
        small_experiment(client="tcp://127.0.0.1:1")


def test_a_store_without_a_random_state_says_it_cannot_be_resumed(tmp_path):
    with pytest.warns(hp.exceptions.HPInsightWarning, match=r"random_state=None\): every call "
                                                            r"draws a new random state"):
        small_experiment(store=tmp_path / "s.sqlite", random_state=None)


class KindClassifier(ThresholdClassifier):
    """``kind="b"`` predicts the opposite class: no best configuration has it."""

    def predict(self, X: Any) -> Any:
        out = super().predict(X)
        return 1 - out if self.kind == "b" else out


def test_a_child_no_best_configuration_had_active_gets_no_default_and_says_why():
    # it failed after the defaults were learned with "no default for 'child'", and no word
    # of why: the best configurations never had it active
    space = hp.SearchSpace(
        [hp.Float("threshold", 0.0, 1.0), hp.Categorical("kind", ["a", "b"]),
         hp.Float("child", 0.0, 1.0)], conditions=[hp.Condition("child", "kind", values=["b"])])
    data = {"one": threshold_data(0.5, seed=1), "two": threshold_data(0.5, seed=2)}
    with pytest.raises(ValueError, match=r"no default for 'child' \(dataset '(one|two)'\): it is "
                                         r"active only through 'kind', and none of the best "
                                         r"configurations of the other datasets"):
        tuning_risk_experiment(KindClassifier(), space, data, params=["child"], seeds=1,
                               n_default_configs=12, default_top_n=3, default_folds=2, **FAST)
