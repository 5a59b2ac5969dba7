"""Both live callbacks validate their shared options in one place, with the same errors."""

from __future__ import annotations

import pytest

import hpinsight as hp
from hpinsight.integrations._live import RefitOptions

BAD = [
    ({"every_n_trials": 0}, ValueError, "'every_n_trials' parameter of ImportanceCallback must be >= 1"),
    ({"min_trials": 1}, ValueError, "'min_trials' parameter of ImportanceCallback must be >= 2"),
    ({"surrogate": "tree"}, TypeError, "'surrogate' parameter of ImportanceCallback"),
    ({"surrogate": "forest"}, TypeError, r"surrogate=hp\.Forest\(\) instead of 'forest'"),
    ({"seed": "s"}, TypeError, "seed"),
    ({"cap_quantile": 1.5}, ValueError, "'cap_quantile'"),
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


@pytest.mark.parametrize(("old", "new"), [
    ("n_trees", r"surrogate=hp\.Forest\(n_trees=\.\.\.\)"),
    ("n_jobs", r"surrogate=hp\.Forest\(n_jobs=\.\.\.\)"),
])
@pytest.mark.parametrize("integration", ["optuna", "smac"])
def test_forest_options_moved_into_the_model_object(integration, old, new) -> None:
    module = pytest.importorskip(f"hpinsight.integrations.{integration}")
    with pytest.raises(TypeError, match=rf"ImportanceCallback no longer takes '{old}'; pass {new}"):
        module.ImportanceCallback(**{old: 1})


def test_checked_options_keep_what_was_given() -> None:
    forest = hp.Forest(n_trees=8, n_jobs=-1)
    opts = RefitOptions.checked("f", every_n_trials=5, min_trials=7, surrogate=forest, seed=3,
                                cap_quantile=0.25)
    assert (opts.every_n_trials, opts.min_trials, opts.surrogate.n_jobs) == (5, 7, -1)
    assert opts.fanova_options() == {"surrogate": hp.Forest(n_trees=8), "seed": 3,
                                     "cap_quantile": 0.25}
    assert RefitOptions.checked("f").surrogate == hp.GP()


def test_the_optuna_callback_refuses_an_objective_beside_a_target() -> None:
    # objective="values_1" beside a target of values[0] analysed values[0] without a word
    pytest.importorskip("optuna")
    from hpinsight.integrations.optuna import ImportanceCallback

    with pytest.raises(hp.exceptions.InvalidArgumentError, match="objective= or target=, not both"):
        ImportanceCallback(objective="values_1", target=lambda t: t.values[0])


def test_the_shrink_options_name_their_parameter_and_take_numpy_integers() -> None:
    # defaults="x" failed inside dict() with "dictionary update sequence element #0";
    # np.int64(3) was refused as "not a positive int" where every other count takes it
    np = pytest.importorskip("numpy")
    pytest.importorskip("optuna")
    from hpinsight.integrations.optuna import ImportanceCallback, ShrinkingSampler

    with pytest.raises(hp.exceptions.InvalidArgumentTypeError, match=r"'defaults' parameter of "
                       r"ImportanceCallback must be a mapping .* Got str instead"):
        ImportanceCallback(shrink_to="auto", defaults="x")
    given = {"lr": 0.01}
    cb = ImportanceCallback(shrink_to=np.int64(3), defaults=given)
    assert cb._refitter.shrink_to == 3
    assert type(cb._refitter.shrink_to) is int
    assert cb._refitter.defaults == given
    assert cb._refitter.defaults is not given  # the user's mapping is not kept, nor changed
    assert ShrinkingSampler(explore_every=np.int64(5)).explore_every == 5


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((None,), {"why": "w"}, "'fixed' parameter of restrict must be a mapping .* Got NoneType"),
    (([("x", 0.5)],), {"why": "w"}, "'fixed' parameter of restrict must be a mapping .* Got list"),
    (({"x": 0.5},), {"why": "w", "after_trial": "x"}, "'after_trial' parameter of restrict"),
    (({"x": 0.5},), {"why": 3}, "'why' parameter of restrict must be a str"),
    (({},), {"why": "w", "ranges": [(0, 1)]}, "'ranges' parameter of restrict must be a mapping"),
], ids=["fixed None", "fixed pairs", "after_trial", "why", "ranges"])
def test_restrict_names_a_wrong_argument(args, kwargs, match) -> None:
    # restrict(study, None) failed with "'NoneType' object has no attribute 'items'" and
    # after_trial="x" was stored in the study as the decision's trial
    optuna = pytest.importorskip("optuna")
    from hpinsight.integrations.optuna import restrict

    study = optuna.create_study()
    with pytest.raises(TypeError, match=match):
        restrict(study, *args, **kwargs)
    assert study.user_attrs == {}  # nothing was written
