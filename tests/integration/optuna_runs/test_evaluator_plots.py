"""The evaluator inside Optuna's own tools: get_param_importances and both plot backends."""

from __future__ import annotations

import json
import threading
from typing import Any

import matplotlib
import numpy as np
import optuna
import pytest

import hpinsight as hp
import hpinsight.surrogates._models as models
from hpinsight.integrations.optuna import FanovaImportanceEvaluator

matplotlib.use("Agg")
optuna.logging.set_verbosity(optuna.logging.WARNING)
pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")


def _objective(t: Any) -> float:
    a = t.suggest_float("a", -1, 1)
    b = t.suggest_float("b", 1e-3, 1, log=True)
    kind = t.suggest_categorical("kind", ["p", "q"])
    c = t.suggest_int("c", 0, 10) if kind == "q" else 0
    return 5 * a**2 + 0.5 * np.log10(b) ** 2 + 0.05 * c


@pytest.fixture(scope="module")
def study() -> optuna.Study:
    s = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    s.optimize(_objective, n_trials=150)
    return s


def test_ranking_and_last_result(study: optuna.Study) -> None:
    ev = FanovaImportanceEvaluator(seed=0, max_order=2)
    imp = optuna.importance.get_param_importances(study, evaluator=ev, normalize=False)
    assert list(imp)[:2] == ["a", "b"]
    assert all(type(v) is float and v >= 0 for v in imp.values())
    assert set(imp) == {"a", "b", "kind", "c"}  # the conditional 'c' is assessed too
    result = ev.last_result
    assert result is not None
    assert result.importance("a").mean == pytest.approx(imp["a"])
    assert result.importance("a", "b").mean >= 0.0  # interactions are there
    assert result.n_inactive["c"] == sum("c" not in t.params for t in study.trials)
    # same seed, same study: bit-identical
    assert FanovaImportanceEvaluator(seed=0).evaluate(study) == FanovaImportanceEvaluator(
        seed=0
    ).evaluate(study)


def test_too_few_trials_are_said_to_be_a_guess_not_only_numbers() -> None:
    """Two trials gave a parameter that does nothing 0.73 without a word; the dict has no
    room for "uncertain", so a warning says it (and not once the trials can be checked,
    or where every parameter has one value)."""
    s = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    s.optimize(lambda t: t.suggest_float("x", 0, 1) + 0 * t.suggest_float("y", 0, 1), n_trials=2)
    ev = FanovaImportanceEvaluator(seed=0)
    with pytest.warns(hp.exceptions.FewTrialsWarning, match="rest on 2 usable trial") as caught:
        imp = optuna.importance.get_param_importances(s, evaluator=ev)
    assert caught[0].filename == __file__  # the user's line, not Optuna's
    assert set(imp) == {"x", "y"}
    with pytest.warns(hp.exceptions.FewTrialsWarning, match="last_result") as caught:
        ev.evaluate(s)
    assert caught[0].filename == __file__
    assert ev.last_result is not None
    assert {i.verdict for i in ev.last_result.ranking()} == {"uncertain"}  # what it points to
    s.optimize(lambda t: t.suggest_float("x", 0, 1) + 0 * t.suggest_float("y", 0, 1), n_trials=3)
    optuna.importance.get_param_importances(s, evaluator=ev)  # 5 trials: no warning (an error here)
    one = optuna.create_study()
    one.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    with pytest.warns(hp.exceptions.FewTrialsWarning, match="1 usable trial.*they are all 0"):
        assert FanovaImportanceEvaluator(seed=0).evaluate(one) == {"x": 0.0}
    one_value = optuna.create_study()
    one_value.optimize(lambda t: float(t.suggest_categorical("k", ["only"]) == "only"), n_trials=2)
    assert optuna.importance.get_param_importances(one_value, evaluator=ev,
                                                   normalize=False) == {"k": 0.0}


@pytest.mark.parametrize(("max_order", "cap"), [(1, None), (2, 0.25)])
def test_importances_are_the_full_analysis_means_to_the_bit(study: optuna.Study, max_order: int,
                                                            cap: float | None) -> None:
    # evaluate() skips the shadows and refits; what it returns must still be the means of
    # the full analysis, and last_result that analysis, verdicts and all
    ev = FanovaImportanceEvaluator(seed=3, max_order=max_order, cap_quantile=cap)
    got = ev.evaluate(study)
    full = hp.fanova(hp.adapters.from_optuna(study), seed=3, max_order=max_order, cap_quantile=cap)
    assert got == {name: max(0.0, full.importance(name).mean) for name in got}
    assert list(got) == sorted(got, key=lambda name: -got[name])
    assert ev.last_result is not None
    assert json.dumps(ev.last_result.to_dict()) == json.dumps(full.to_dict())
    assert {i.verdict for i in ev.last_result.ranking()} >= {"resolved"}


def test_last_result_fits_the_full_model_once_on_the_trials_evaluate_saw(
        study: optuna.Study, monkeypatch: pytest.MonkeyPatch) -> None:
    fits: list[tuple[bool, int]] = []
    real = models.fit_gp

    def spy(*args: Any, **kwargs: Any) -> Any:
        fits.append((kwargs["shadows"], kwargs["refits"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(models, "fit_gp", spy)
    grown = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    grown.add_trials(study.trials[:80])
    ev = FanovaImportanceEvaluator(seed=0)
    ev.evaluate(grown)
    assert fits == [(False, 0)]  # the importances alone: no shadows, no refits
    grown.optimize(_objective, n_trials=5)  # trials the call did not see
    result = ev.last_result
    assert result is not None
    assert result.n_trials == 80
    assert fits == [(False, 0), (True, hp.GP().refits)]  # the full model, when first read
    assert ev.last_result is result  # and kept
    assert len(fits) == 2
    quick = FanovaImportanceEvaluator(seed=0, surrogate=hp.GP(shadows=False, refits=0))
    quick.evaluate(grown)
    assert quick.last_result is not None
    assert len(fits) == 3  # nothing skipped: one fit


def test_evaluate_is_not_kept_waiting_while_last_result_fits(
        study: optuna.Study, monkeypatch: pytest.MonkeyPatch) -> None:
    grown = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    grown.add_trials(study.trials[:80])
    ev = FanovaImportanceEvaluator(seed=0)
    ev.evaluate(grown)
    grown.add_trials(study.trials[80:90])
    real = models.fit_gp
    newer: list[dict[str, float]] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        if kwargs["shadows"] and not newer:  # the read's full fit has begun: a newer call now
            caller = threading.Thread(target=lambda: newer.append(ev.evaluate(grown)))
            caller.start()
            caller.join(timeout=120)  # bounds a deadlock; finishing sooner is the pass
            assert not caller.is_alive(), "evaluate waited for last_result's fit"
        return real(*args, **kwargs)

    monkeypatch.setattr(models, "fit_gp", spy)
    began = ev.last_result  # the analysis it began: the 80 trials the first call saw
    assert began is not None
    assert began.n_trials == 80
    assert len(newer) == 1
    assert set(newer[0]) == {"a", "b", "kind", "c"}
    latest = ev.last_result  # not kept: the newer call's 90 trials are fitted now
    assert latest is not None
    assert latest.n_trials == 90
    assert ev.last_result is latest


def test_maximize_study_matches_its_negated_minimize_twin(study: optuna.Study) -> None:
    up = optuna.create_study(direction="maximize")
    up.add_trials(
        [optuna.trial.create_trial(params=t.params, distributions=t.distributions, value=-t.value)
         for t in study.trials]
    )
    for cap in (None, 0.2):
        ev_up = FanovaImportanceEvaluator(seed=1, cap_quantile=cap)
        ev_down = FanovaImportanceEvaluator(seed=1, cap_quantile=cap)
        got_up, got_down = ev_up.evaluate(up), ev_down.evaluate(study)
        assert list(got_up) == list(got_down)
        np.testing.assert_allclose(list(got_up.values()), list(got_down.values()), atol=1e-12)


def test_plotly_backend(study: optuna.Study) -> None:
    ev = FanovaImportanceEvaluator(seed=0)
    fig = optuna.visualization.plot_param_importances(study, evaluator=ev)
    expected = optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
    bar = fig.data[0]
    assert dict(zip(bar.y, bar.x, strict=True)) == pytest.approx(expected)


def test_matplotlib_backend(study: optuna.Study) -> None:
    import matplotlib.pyplot as plt

    ev = FanovaImportanceEvaluator(seed=0)
    ax = optuna.visualization.matplotlib.plot_param_importances(study, evaluator=ev)
    expected = optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = [p.get_width() for p in ax.patches]
    assert dict(zip(labels, widths, strict=True)) == pytest.approx(expected)
    plt.close("all")


def test_the_adapters_warnings_point_at_the_users_line_through_optuna() -> None:
    # a changed distribution, read through get_param_importances, was said to come from
    # a line of hpinsight's evaluator
    D = optuna.distributions
    s = optuna.create_study()
    for i in range(12):
        dist = D.FloatDistribution(0, 1) if i < 6 else D.FloatDistribution(0, 2)
        s.add_trial(optuna.trial.create_trial(params={"x": i / 12}, distributions={"x": dist},
                                              value=float(i)))
    with pytest.warns(hp.exceptions.ChangedDistributionWarning) as caught:
        optuna.importance.get_param_importances(s, evaluator=FanovaImportanceEvaluator(seed=0))
    assert [w.filename for w in caught
            if issubclass(w.category, hp.exceptions.ChangedDistributionWarning)] == [__file__]
