"""A TPE study tuning an SVC on scikit-learn's bundled digits, with live importances."""

from __future__ import annotations

import io
import json

import matplotlib
import numpy as np
import optuna
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from hpinsight.integrations.optuna import (
    SUMMARY_KEY,
    FanovaImportanceEvaluator,
    ImportanceCallback,
)

matplotlib.use("Agg")
optuna.logging.set_verbosity(optuna.logging.WARNING)
# Optuna marks its matplotlib backend experimental.
pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")


@pytest.fixture(scope="module")
def tuned() -> tuple[optuna.Study, ImportanceCallback]:
    X, y = load_digits(return_X_y=True)
    X, y = X[:600] / 16.0, y[:600]

    def objective(t: optuna.Trial) -> float:
        model = SVC(
            C=t.suggest_float("C", 1e-3, 1e3, log=True),
            gamma=t.suggest_float("gamma", 1e-5, 1e1, log=True),
            tol=t.suggest_float("tol", 1e-5, 1e-1, log=True),  # barely matters
            shrinking=t.suggest_categorical("shrinking", [True, False]),  # does not matter
        )
        return float(cross_val_score(model, X, y, cv=3).mean())

    cb = ImportanceCallback(every_n_trials=20, min_trials=20, seed=0)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(objective, n_trials=80, callbacks=[cb])
    assert cb.close(wait=120)
    return study, cb


def test_known_important_parameters_rank_on_top(tuned: tuple[optuna.Study, ImportanceCallback]) -> None:
    study, cb = tuned
    assert not cb.errors
    assert cb.history[-1].n_trials == 80
    assert study.best_value > 0.9
    top2 = set(list(cb.history[-1].importances)[:2])
    assert top2 == {"C", "gamma"}
    assert cb.history[-1].importances["shrinking"] < 0.02
    published = study.user_attrs[SUMMARY_KEY]
    assert set(list(published["importance"])[:2]) == {"C", "gamma"}
    assert len(json.dumps(published)) <= 1024
    # the marginal of gamma: too large a gamma is much worse than the best region
    marginal = cb.latest.marginal("gamma")
    assert marginal.mean[-1] < marginal.mean.max() - 0.3


def test_plots_render(tuned: tuple[optuna.Study, ImportanceCallback]) -> None:
    import matplotlib.pyplot as plt

    study, _ = tuned
    fig = optuna.visualization.plot_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
    html = fig.to_html(include_plotlyjs=False)
    assert "gamma" in html
    assert set(fig.data[0].y) == {"C", "gamma", "tol", "shrinking"}
    ax = optuna.visualization.matplotlib.plot_param_importances(
        study, evaluator=FanovaImportanceEvaluator(seed=0)
    )
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png")
    assert buffer.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    widths = np.array([p.get_width() for p in ax.patches])
    assert widths.sum() == pytest.approx(1.0)
    plt.close("all")
