"""Both live callbacks validate their shared options in one place, with the same errors."""

from __future__ import annotations

import pytest

from hpinsight.integrations._live import RefitOptions

BAD = [
    ({"every_n_trials": 0}, ValueError, "'every_n_trials' parameter of ImportanceCallback must be >= 1"),
    ({"min_trials": 1}, ValueError, "'min_trials' parameter of ImportanceCallback must be >= 2"),
    ({"surrogate": "tree"}, ValueError, "'surrogate' parameter of ImportanceCallback"),
    ({"n_trees": 0}, ValueError, "'n_trees'"),
    ({"seed": "s"}, TypeError, "seed"),
    ({"cap_quantile": 1.5}, ValueError, "'cap_quantile'"),
    ({"n_jobs": 1.5}, TypeError, "'n_jobs'"),
    ({"isolation": "fork"}, ValueError, "'isolation'"),
    ({"regions": -1}, ValueError, "'regions'"),
    ({"region_splits": -1}, ValueError, "'region_splits'"),
]
IDS = [next(iter(kw)) for kw, _, _ in BAD]


@pytest.mark.parametrize(("kwargs", "error", "match"), BAD, ids=IDS)
def test_options_are_checked_once(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        RefitOptions.checked("ImportanceCallback", **kwargs)


@pytest.mark.parametrize(("kwargs", "error", "match"), BAD, ids=IDS)
@pytest.mark.parametrize("integration", ["optuna", "smac"])
def test_both_callbacks_give_the_same_errors(integration, kwargs, error, match) -> None:
    module = pytest.importorskip(f"hpinsight.integrations.{integration}")
    with pytest.raises(error, match=match):
        module.ImportanceCallback(**kwargs)


def test_checked_options_keep_what_was_given() -> None:
    opts = RefitOptions.checked("f", every_n_trials=5, min_trials=7, surrogate="forest",
                                n_trees=8, seed=3, cap_quantile=0.25, n_jobs=-1)
    assert (opts.every_n_trials, opts.min_trials, opts.n_jobs) == (5, 7, -1)
    assert opts.fanova_options() == {"surrogate": "forest", "n_trees": 8, "seed": 3,
                                     "cap_quantile": 0.25, "n_jobs": -1}
    assert RefitOptions.checked("f", surrogates=("gp", "smac"), surrogate="smac").surrogate == "smac"
