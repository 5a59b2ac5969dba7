"""Where hpinsight hands work to a library it already depends on, the result is the
library's: scipy's signed-rank test, numpy's Freedman–Diaconis bins, scikit-learn's
cross-validation, Optuna's ``single()``, ConfigSpace's array ``to_vector``, an
``isinstance`` check for Gaussian processes, and the typed argument checks."""

from __future__ import annotations

import math
import typing
import warnings

import numpy as np
import pytest
from scipy.stats import wilcoxon

import hpinsight as hp
from hpinsight._defaults import most_frequent_setting
from hpinsight._validation import check_choice, check_int
from hpinsight.exceptions import InvalidArgumentError


# --------------------------------------------------------------------------------------
# _risk: scipy.stats.wilcoxon
def _paired_sample(seed: int, n: int, *, rounded: bool) -> np.ndarray:
    """Relative risks; rounded to whole percent they have ties and pairs on the margin."""
    x = np.random.default_rng(seed).normal(-0.01, 0.03, size=n)
    return np.round(x, 2) if rounded else x


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("rounded", [False, True], ids=["distinct", "ties-and-zeros"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [9, 25, 60])
def test_approx_pvalue_is_scipys_wilcoxon_on_the_shifted_differences(n, seed, rounded,
                                                                      zero_method):
    margin = 0.01
    rel = _paired_sample(seed, n, rounded=rounded)
    test = hp.noninferiority_test(rel, margin=margin, zero_method=zero_method, method="approx")
    d = np.round(rel - margin, 10)  # the same zeros and ties as the module's rounding
    assert test.n_zeros == int(np.count_nonzero(d == 0))
    ref = wilcoxon(d, alternative="less", zero_method=zero_method, correction=False,
                   method="asymptotic")
    assert test.pvalue == pytest.approx(float(ref.pvalue), rel=1e-12, abs=1e-300)
    assert test.zstatistic == pytest.approx(-float(ref.zstatistic), rel=1e-12)
    # s_nr, the sum of the ranks below the margin, is scipy's statistic for -d
    neg = wilcoxon(-d, alternative="greater", zero_method=zero_method, method="asymptotic")
    assert test.statistic == float(neg.statistic)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_and_auto_pvalues_are_scipys(seed):
    rel = _paired_sample(seed, 12, rounded=False)
    d = np.round(rel - 0.01, 10)
    for method in ("exact", "auto"):
        test = hp.noninferiority_test(rel, margin=0.01, method=method)
        ref = wilcoxon(d, alternative="less", correction=False, method=method)
        assert test.pvalue == float(ref.pvalue)


def test_zsplit_counts_the_zeros_as_one_tie_group():
    # scipy's convention (the module docstring): d - δ = [0, 0, -0.02, -0.03, 0.01]
    # ranks 1.5, 1.5, 4, 5, 3; s_nr = 9 + 3/2; var = 5*6*11/24 - (8 - 2)/48
    test = hp.noninferiority_test([0.01, 0.01, -0.01, -0.02, 0.02], margin=0.01,
                                  zero_method="zsplit", method="approx")
    assert test.statistic == 10.5
    assert test.zstatistic == pytest.approx((10.5 - 7.5) / math.sqrt(13.75 - 0.125))
    assert test.n_ties == 0  # the reported tied pairs still leave the zeros out


# --------------------------------------------------------------------------------------
# _defaults: numpy's Freedman–Diaconis bins
def _expected_bin(scaled: np.ndarray, bins: int | str = "fd") -> tuple[float, float]:
    counts, edges = np.histogram(scaled, bins=bins)
    k = int(np.argmax(counts))
    return 0.5 * (edges[k] + edges[k + 1]), counts[k] / scaled.size


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [7, 40, 333])
def test_bins_are_numpys_fd_bins(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 2.0, size=n).clip(-9.0, 9.0)
    value, share = most_frequent_setting(hp.Float("x", -10.0, 10.0), x.tolist())
    centre, expected_share = _expected_bin(x)
    assert value == pytest.approx(centre, rel=1e-12, abs=1e-12)
    assert share == expected_share
    # log parameters: the same bins on the logarithm, the geometric centre
    c = np.exp(x)
    value, share = most_frequent_setting(hp.Float("c", math.exp(-10), math.exp(10), log=True),
                                         c.tolist())
    centre, expected_share = _expected_bin(np.log(c))
    assert value == pytest.approx(math.exp(centre), rel=1e-9)
    assert share == expected_share


def test_tie_rules_numpy_does_not_have_are_kept():
    # IQR 0 (more than half the values equal): numpy's fd makes one bin; we take the mode
    x = [0.5] * 6 + [0.1, 0.9, 0.7]
    assert len(np.histogram_bin_edges(x, bins="fd")) == 2
    assert most_frequent_setting(hp.Float("x", 0.0, 1.0), x) == (0.5, 6 / 9)
    # equally full bins: the lowest wins (numpy's argmax, first maximum)
    x = [0.0, 0.05, 0.1, 0.9, 0.95, 1.0]  # two bins of three
    centre, _ = _expected_bin(np.asarray(x))
    assert most_frequent_setting(hp.Float("x", 0.0, 1.0), x)[0] == pytest.approx(centre)
    assert centre < 0.5
    # far more fd bins than the cap: 1,000 equal bins instead
    rng = np.random.default_rng(0)
    x = np.concatenate([0.5 + rng.normal(0, 1e-9, 200), [0.0, 1.0]])
    centre, share = _expected_bin(x, bins=1000)
    assert most_frequent_setting(hp.Float("x", 0.0, 1.0), x.tolist()) == (
        pytest.approx(centre), share)


# --------------------------------------------------------------------------------------
# experiments: scikit-learn's cross_val_score
def test_cv_risk_is_the_plain_fold_loop():
    from sklearn.base import clone
    from sklearn.datasets import make_classification
    from sklearn.metrics import get_scorer
    from sklearn.tree import DecisionTreeClassifier

    from hpinsight.experiments import _tuning_risk as tr

    X, y = make_classification(80, 5, n_informative=3, random_state=0)
    splits = list(tr._splitter(y, 3, seed=12).split(X, y))
    scorer = get_scorer("balanced_accuracy")
    config = {"max_depth": 3, "max_features": 0.6, "random_state": 5}
    by_hand = []
    for train, test in splits:
        model = clone(DecisionTreeClassifier()).set_params(**config).fit(X[train], y[train])
        by_hand.append(1.0 - scorer(model, X[test], y[test]))
    risk = tr._cv_risk(DecisionTreeClassifier(), config, X, y, splits, scorer)
    assert risk == float(np.mean(by_hand))


# --------------------------------------------------------------------------------------
# adapters: Optuna's BaseDistribution.single()
def test_single_valued_optuna_distributions_become_one_choice_categoricals():
    optuna = pytest.importorskip("optuna")
    D = optuna.distributions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna warns when it moves high onto the step grid
        dists = {
            "f_point": D.FloatDistribution(0.5, 0.5),
            "f_log_point": D.FloatDistribution(2.0, 2.0, log=True),
            "f_wide_step": D.FloatDistribution(0.0, 0.05, step=0.1),
            "f": D.FloatDistribution(0.1, 0.3, step=0.2),
            "f_log": D.FloatDistribution(1e-3, 1.0, log=True),
            "i_point": D.IntDistribution(3, 3),
            "i_wide_step": D.IntDistribution(1, 2, step=2),
            "i_log_point": D.IntDistribution(4, 4, log=True),
            "i": D.IntDistribution(0, 10, step=5),
            "c_one": D.CategoricalDistribution(["only"]),
            "c": D.CategoricalDistribution(["a", "b"]),
        }
    space = hp.adapters.space_from_optuna(dists)
    for name, dist in dists.items():
        param = space[name]
        one_choice = isinstance(param, hp.Categorical) and len(param.choices) == 1
        assert one_choice == dist.single(), name
        if one_choice:
            only = dist.choices if isinstance(dist, D.CategoricalDistribution) else (dist.low,)
            assert param.choices == tuple(only)


# --------------------------------------------------------------------------------------
# adapters: ConfigSpace's to_vector on arrays
def test_smac_thresholds_use_one_to_vector_call_with_the_per_value_result():
    CS = pytest.importorskip("ConfigSpace")
    from hpinsight.adapters import _smac_model as sf

    cs = CS.ConfigurationSpace()
    cs.add([
        CS.Categorical("mixed", [1, "a", None, 2.5, False]),
        CS.Categorical("numbers_and_text", [3, "3x"]),
        CS.Categorical("flag", [True, False]),
        CS.OrdinalHyperparameter("ordinal", [1, 2, 4, 8]),
        CS.Constant("constant", "k"),
        CS.Integer("n", (1, 3000)),
        CS.Integer("n_log", (1, 3000), log=True),
    ])
    stepped = hp.SearchSpace([hp.Float("f", 0.0, 1.0, step=0.1), hp.Int("s", 0, 100, step=5)])
    pairs = [(cs, hp.adapters.from_configspace(cs)),
             (hp.adapters.to_configspace(stepped), hp.adapters.from_configspace(hp.adapters.to_configspace(stepped)))]
    for configspace, space in pairs:
        for name in configspace:
            param, smac_hp = space[name], configspace[name]
            values = sf._grid(param)
            per_value = np.array([float(smac_hp.to_vector(v)) for v in values], dtype=np.float32)
            at_once = sf._smac_vector(smac_hp, values,
                                      categorical=isinstance(param, hp.Categorical))
            assert at_once.dtype == np.float32
            np.testing.assert_array_equal(at_once, per_value, err_msg=name)
    # why categoricals go in as objects: numpy would make strings of mixed choices
    with pytest.raises(KeyError):
        cs["numbers_and_text"].to_vector(np.asarray([3, "3x"]))


# --------------------------------------------------------------------------------------
# _pdp: isinstance, not the class name
def test_a_gaussian_process_subclass_is_a_gaussian_process():
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import Matern

    class MyGP(GaussianProcessRegressor):
        pass

    space = hp.SearchSpace([hp.Float("a", 0.0, 1.0), hp.Float("b", 0.0, 1.0)])
    configs = space.sample(40, seed=4)
    y = [math.sin(6 * c["a"]) + c["b"] for c in configs]
    gp = MyGP(Matern(nu=1.5), alpha=1e-6, normalize_y=True, random_state=0)
    gp.fit(space.encode(configs), y)
    pd = hp.partial_dependence(gp, "a", space=space, grid_size=4, n_samples=50, seed=0,
                               variance="covariance")
    assert pd.model_kind == "gaussian process"


# --------------------------------------------------------------------------------------
# _validation: typed checks
def test_check_int_overloads_and_behaviour():
    overloads = typing.get_overloads(check_int)
    assert len(overloads) == 2
    assert check_int(np.int64(3), "n", "f", minimum=1) == 3
    assert type(check_int(np.int64(3), "n", "f")) is int
    assert check_int(None, "n", "f", allow_none=True) is None
    with pytest.raises(TypeError, match="must be an int"):
        check_int(None, "n", "f")


def test_check_choice_returns_the_plain_choice():
    out = check_choice(np.str_("gp"), "surrogate", "f", ("gp", "forest"))
    assert out == "gp"
    assert type(out) is str
    with pytest.raises(InvalidArgumentError, match=r"one of \['gp', 'forest'\]"):
        check_choice("tree", "surrogate", "f", ("gp", "forest"))
