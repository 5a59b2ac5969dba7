"""Importance across studies: the summaries and the rank agreement on hand-built shares,
then the public function on studies whose shares are known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import hpinsight as hp
from hpinsight._across import kendall_w, mean_spearman
from hpinsight.exceptions import HPInsightError, InvalidDataError
from hpinsight.results import AcrossStudiesResult

# four studies, three parameters; no ties within a study
SHARES = np.array([[0.6, 0.3, 0.1],
                   [0.5, 0.4, 0.1 + 1e-3],
                   [0.7, 0.1, 0.2],
                   [0.4, 0.35, 0.25]])


def result(shares: np.ndarray, params: tuple[str, ...] = ("a", "b", "c")) -> AcrossStudiesResult:
    return AcrossStudiesResult(studies=tuple(f"s{i}" for i in range(len(shares))),
                               params=params, shares=shares)


# -- summaries ----------------------------------------------------------------------------
def test_summaries_over_studies_by_hand() -> None:
    r = result(SHARES)
    # a: 0.4 0.5 0.6 0.7 -> median 0.55; quartiles (linear) 0.475, 0.625; mean 0.55;
    # sample std sqrt(((.15)^2 + (.05)^2) * 2 / 3)
    assert r.median[0] == pytest.approx(0.55)
    assert r.quartiles[0].tolist() == pytest.approx([0.475, 0.625])
    assert r.iqr[0] == pytest.approx(0.15)
    assert r.mean[0] == pytest.approx(0.55)
    assert r.std[0] == pytest.approx(math.sqrt((0.15**2 + 0.05**2) * 2 / 3))
    # b: 0.1 0.3 0.35 0.4 -> median 0.325
    assert r.median[1] == pytest.approx(0.325)
    assert r.ranking() == ("a", "b", "c")
    assert r.n_present.tolist() == [4, 4, 4]
    assert not r.shares.flags.writeable


def test_a_missing_parameter_and_a_constant_study_are_left_out_not_zero() -> None:
    shares = SHARES.copy()
    shares[1, 2] = np.nan  # study s1 has no parameter c
    shares = np.vstack([shares, np.full(3, np.nan)])  # s4: constant objective
    r = result(shares)
    assert r.n_present.tolist() == [4, 4, 3]
    assert r.median[2] == pytest.approx(0.2)  # of 0.1, 0.2, 0.25
    assert r.rank_studies == ("s0", "s1", "s2", "s3")
    assert r.rank_params == ("a", "b")
    s0, s1, s2, s3 = SHARES[:, :2]
    assert r.kendall_w == pytest.approx(kendall_w(np.array([s0, s1, s2, s3]))[0])


def test_a_parameter_no_study_has_sorts_last_and_reads_nan() -> None:
    shares = np.array([[0.9, np.nan], [0.8, np.nan]])
    r = result(shares, params=("x", "y"))
    assert r.ranking() == ("x", "y")
    assert math.isnan(r.median[1])
    assert math.isnan(r.kendall_w)  # one parameter left to rank
    assert r.to_dict()["summary"][1]["median"] is None


# -- rank agreement -----------------------------------------------------------------------
def test_kendall_w_of_a_hand_example_and_its_relation_to_spearman() -> None:
    # three studies ranking four parameters 1-2-3-4, 2-1-3-4, 1-3-2-4: rank sums 4, 6, 8,
    # 12 (mean 7.5), S = 12.25 + 2.25 + 0.25 + 20.25 = 35, W = 12 S / (9 (64 - 4)) = 7/9
    ranks = np.array([[1, 2, 3, 4], [2, 1, 3, 4], [1, 3, 2, 4]], dtype=float)
    w, p = kendall_w(ranks / 10)
    assert w == pytest.approx(7 / 9)
    assert p == pytest.approx(stats.friedmanchisquare(*ranks.T).pvalue)
    # Spearman's rho of the pairs: 0.8, 0.8 and 0.4; without ties (m W - 1) / (m - 1)
    assert mean_spearman(ranks) == pytest.approx(2 / 3)
    assert mean_spearman(ranks) == pytest.approx((3 * w - 1) / 2)


def test_kendall_w_with_ties_is_friedmans_statistic_scaled() -> None:
    x = np.array([[0.5, 0.5, 0.1, 0.2], [0.4, 0.3, 0.3, 0.0], [0.6, 0.2, 0.1, 0.1],
                  [0.7, 0.1, 0.1, 0.1], [0.3, 0.4, 0.2, 0.1]])
    m, n = x.shape
    w, p = kendall_w(x)
    friedman = stats.friedmanchisquare(*x.T)  # tie-corrected
    assert w == pytest.approx(friedman.statistic / (m * (n - 1)))
    assert p == pytest.approx(friedman.pvalue)
    pairs = [stats.spearmanr(x[a], x[b]).statistic for a in range(m) for b in range(a + 1, m)]
    assert mean_spearman(x) == pytest.approx(np.mean(pairs))


@pytest.mark.parametrize(("shares", "w"), [
    (np.array([[0.9, 0.1, 0.0], [0.8, 0.15, 0.05]]), 1.0),
    (np.array([[0.9, 0.1], [0.1, 0.9]]), 0.0),
], ids=["same-order", "opposite"])
def test_kendall_w_extremes(shares: np.ndarray, w: float) -> None:
    assert kendall_w(shares)[0] == pytest.approx(w)


def test_kendall_w_needs_two_studies_and_two_parameters() -> None:
    assert math.isnan(kendall_w(np.array([[0.1, 0.9]]))[0])
    assert math.isnan(kendall_w(np.array([[0.1], [0.9]]))[0])
    assert math.isnan(kendall_w(np.array([[0.5, 0.5], [0.5, 0.5]]))[0])  # all tied
    assert math.isnan(mean_spearman(np.array([[0.5, 0.5], [0.5, 0.5]])))


# -- the public function ------------------------------------------------------------------
SPACE = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Float("idle", 0, 1)])


def additive(weight: float, seed: int, n: int = 60, space: hp.SearchSpace = SPACE
             ) -> hp.TrialHistory:
    """y = weight * x + z on uniform [0, 1]: x's share is weight^2 / (weight^2 + 1)."""
    configs = space.sample(n, seed=seed)
    return hp.TrialHistory(space, configs, [weight * c["x"] + c["z"] for c in configs])


@pytest.fixture(scope="module")
def three() -> dict[str, hp.TrialHistory]:
    return {"w1": additive(1.0, 0), "w2": additive(2.0, 1), "w3": additive(3.0, 2)}


def test_shares_per_study_follow_the_known_variances(three) -> None:
    r = hp.importance_across_studies(three, progress=False)
    assert r.studies == ("w1", "w2", "w3")
    assert r.params == ("x", "z", "idle")
    expected_x = [w**2 / (w**2 + 1) for w in (1.0, 2.0, 3.0)]  # 0.5, 0.8, 0.9
    np.testing.assert_allclose(r.shares[:, 0], expected_x, atol=0.03)
    np.testing.assert_allclose(r.shares[:, 1], 1 - np.array(expected_x), atol=0.03)
    assert np.all(r.shares[:, 2] < 0.01)
    assert r.median[0] == pytest.approx(0.8, abs=0.03)
    # x over z in w2 and w3, about even in w1; idle last everywhere
    assert r.ranking() == ("x", "z", "idle")
    for name, fan in zip(r.studies, r.results, strict=True):
        assert fan.importance("x").mean == r.shares[r.studies.index(name), 0]
    assert r.defaults is not None
    assert r.defaults.to_dict() == hp.default_values(three, top_n=10).to_dict()
    assert r.notes == ()


def test_the_same_seed_gives_the_same_result_and_inputs_are_untouched(three) -> None:
    before = {k: (h.configs, h.y.copy()) for k, h in three.items()}
    first = hp.importance_across_studies(three, seed=3, progress=False).to_dict()
    assert hp.importance_across_studies(dict(three), seed=3, progress=False).to_dict() == first
    assert list(three) == ["w1", "w2", "w3"]
    for k, h in three.items():
        assert h.configs == before[k][0]
        np.testing.assert_array_equal(h.y, before[k][1])


def test_progress_reports_every_study() -> None:
    calls: list[tuple[str, int, int]] = []
    studies = [additive(1.0, 0, n=20), additive(2.0, 1, n=20)]
    r = hp.importance_across_studies(studies, surrogate=hp.Forest(n_trees=4),
                                     progress=lambda *a: calls.append(a))
    assert r.studies == ("study 0", "study 1")
    assert sorted(done for _, done, _ in calls) == [1, 2]
    assert {total for _, _, total in calls} == {2}


def test_a_study_without_a_parameter_has_nan_there_and_the_defaults_use_shared_ones() -> None:
    small = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    studies = {"full": additive(2.0, 0), "small": additive(2.0, 1, space=small),
               "full2": additive(2.0, 2)}
    r = hp.importance_across_studies(studies, progress=False)
    assert math.isnan(r.shares[1, 2])
    assert r.n_present.tolist() == [3, 3, 2]
    assert r.rank_params == ("x", "z")
    assert any("'small' has no parameter 'idle'" in n for n in r.notes)
    assert r.defaults is not None
    assert set(r.defaults.values) == {"x", "z"}
    assert r.to_dict()["shares"][1][2] is None


def test_a_constant_study_is_named_and_left_out() -> None:
    configs = SPACE.sample(20, seed=5)
    studies = {"ok": additive(2.0, 0, n=20), "flat": hp.TrialHistory(SPACE, configs, [1.0] * 20),
               "ok2": additive(3.0, 1, n=20)}
    r = hp.importance_across_studies(studies, surrogate=hp.Forest(n_trees=4), progress=False)
    assert np.isnan(r.shares[1]).all()
    assert r.rank_studies == ("ok", "ok2")
    assert any("'flat'" in n and "constant" in n for n in r.notes)


def test_a_noise_study_is_left_out_and_said_so_and_a_flat_one_votes_no_defaults() -> None:
    # a study whose model shows no signal entered the median and the rank agreement as
    # any other (its 'z: 100 %' a fraction of noise), and a constant study's first
    # trials, ties all, voted for the defaults and narrowed them to its parameters
    small = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("idle", 0, 1)])
    flat = small.sample(30, seed=5)
    noise = SPACE.sample(30, seed=6)
    studies = {"ok": additive(2.0, 0, n=30), "ok2": additive(3.0, 1, n=30),
               "flat": hp.TrialHistory(small, flat, [1.0] * 30),
               "noise": hp.TrialHistory(SPACE, noise,
                                        np.random.default_rng(0).normal(size=30))}
    r = hp.importance_across_studies(studies, progress=False, seed=0)
    assert r.results[3].signal_unshown or r.results[3].signal_doubtful
    assert np.isnan(r.shares[2:]).all()
    assert r.rank_studies == ("ok", "ok2")
    assert any("'noise'" in n and "left out of the summaries and the defaults" in n
               for n in r.notes)
    assert r.defaults is not None
    assert set(r.defaults.values) == {"x", "z", "idle"}  # not narrowed to the flat one's
    assert set(r.defaults.per_study) == {"ok", "ok2"}


def test_int_study_keys_are_the_defaults_keys() -> None:
    studies = {31: additive(1.0, 0), 53: additive(2.0, 1), 3917: additive(3.0, 2)}
    r = hp.importance_across_studies(studies, progress=False, seed=0)
    assert r.defaults is not None
    assert r.defaults.for_study(31) == r.defaults.per_study[31]  # was: "No study 31"


def test_studies_compared_on_different_values_are_said_to_be() -> None:
    a, b = additive(1.0, 0), additive(2.0, 1)
    b = hp.TrialHistory(b.space, b.configs, b.y, objective_name="accuracy")
    r = hp.importance_across_studies({"a": a, "b": b}, progress=False, seed=0)
    assert any("compared on different values: 'a' on objective; 'b' on accuracy" in n
               for n in r.notes)


def _fitted() -> object:
    h = additive(1.0, 0, n=20)
    return hp.fanova(h, surrogate=hp.Forest(n_trees=2), seed=0).model


@pytest.mark.parametrize(("history", "kwargs", "error", "match"), [
    ([], {}, InvalidDataError, "got no studies"),
    (additive(1.0, 0), {}, InvalidDataError, "got one study"),
    ([additive(1.0, 0)], {}, InvalidDataError, "compares two or more"),
    ({"a": additive(1.0, 0), "short": additive(1.0, 1, n=5)}, {}, InvalidDataError,
     r"study 'short' has 5 usable trial\(s\); each study needs at least min_trials=10"),
    ({"a": additive(1.0, 0), "b": hp.TrialHistory(hp.SearchSpace([hp.Float("q", 0, 1)]),
                                                  [{"q": i / 20} for i in range(20)],
                                                  list(range(20)))},
     {}, InvalidDataError, "share no parameter"),
    ({"a": additive(1.0, 0), "b": "not a study"}, {}, TypeError, "study 'b' is a str"),
    ("studies", {}, TypeError, "list or dict"),
    ([additive(1.0, 0), additive(1.0, 1)], {"progress": "yes"}, TypeError, "'progress'"),
    ([additive(1.0, 0), additive(1.0, 1)], {"min_trials": 1}, ValueError, "'min_trials'"),
    ([additive(1.0, 0), additive(1.0, 1)], {"surrogate": "gp"}, TypeError, r"hp\.GP\(\)"),
], ids=["none", "one-history", "one-in-a-list", "too-few-trials", "nothing-shared",
        "not-a-study", "a-string", "bad-progress", "bad-min-trials", "string-surrogate"])
def test_bad_input_is_refused_clearly(history, kwargs, error, match) -> None:
    with pytest.raises(error, match=match) as info:
        hp.importance_across_studies(history, **{"progress": False, **kwargs})
    assert isinstance(info.value, HPInsightError)


def test_a_fitted_model_is_refused() -> None:
    with pytest.raises(ValueError, match="one per study"):
        hp.importance_across_studies([additive(1.0, 0), additive(1.0, 1)],
                                     surrogate=_fitted(), progress=False)


def test_the_frame_and_figure_show_the_shares() -> None:
    pd = pytest.importorskip("pandas")
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    from matplotlib.figure import Figure

    r = result(SHARES)
    frame = r.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["param"]) == ["a", "b", "c"]
    np.testing.assert_allclose(frame["median"], r.median)
    ax = r.plot(ax=Figure().add_subplot())
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    points = [c.get_offsets()[:, 0] for c in ax.collections]
    np.testing.assert_allclose(np.sort(points[0]), np.sort(SHARES[:, 0]))


def test_a_parameter_declared_differently_across_studies_is_said_so():
    # x over [-5, 5] in one study and [0, 1] in another was pooled into one median share,
    # said only in the note on defaults
    wide = hp.SearchSpace([hp.Float("x", -5, 5), hp.Float("z", 0, 1)])
    narrow = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    ca, cb = wide.sample(40, seed=0), narrow.sample(40, seed=1)
    result = hp.importance_across_studies(
        {"wide": hp.TrialHistory(wide, ca, [c["x"] ** 2 for c in ca]),
         "narrow": hp.TrialHistory(narrow, cb, [c["x"] + c["z"] for c in cb])},
        seed=0, progress=False)
    said = [n for n in result.notes if n.startswith("'x' is declared differently")]
    assert len(said) == 1
    assert "low=-5.0" in said[0]
    assert not any(n.startswith("'z' is declared") for n in result.notes)
    assert said[0] in result.to_dict()["notes"]
