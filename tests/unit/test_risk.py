"""Tuning risk (Weerts 2018, Sec. 3.3.2): Eq. (4)-(7), the signed-rank statistic of
Eq. (10) computed by hand on small samples (zeros, ties), p-values against scipy, and
Holm–Bonferroni on a known table."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import wilcoxon

import hpinsight as hp


def test_statistic_without_ties_is_eq10():
    # d - δ = [-0.03, -0.06, -0.01, -0.02, -0.04, -0.005]: all six below the margin,
    # so every rank 1..6 is negative: s_nr = 21
    test = hp.noninferiority_test([-0.02, -0.05, 0.0, -0.01, -0.03, 0.005], margin=0.01,
                                  method="approx")
    assert test.statistic == 21.0
    n = 6
    z = (21 - n * (n + 1) / 4) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    assert test.zstatistic == pytest.approx(z)
    assert test.pvalue == pytest.approx(1 - NormalDist().cdf(z))
    assert (test.n, test.n_zeros, test.n_ties) == (6, 0, 0)


def test_zero_dropped_and_ties_averaged_by_hand():
    # d - δ = [0, -0.03, 0.02, -0.03, -0.05, -0.01]; "wilcox" drops the zero.
    # |d| ranks: 0.01 -> 1, 0.02 -> 2, 0.03 -> 3.5 (twice), 0.05 -> 5
    # negative ranks: 3.5 + 3.5 + 5 + 1 = 13; N = 5
    # var = 5*6*11/24 - (2^3 - 2)/48 = 13.75 - 0.125
    rel = [0.01, -0.02, 0.03, -0.02, -0.04, 0.0]
    test = hp.noninferiority_test(rel, margin=0.01, method="approx")
    assert test.statistic == 13.0
    assert (test.n, test.n_zeros, test.n_ties) == (5, 1, 2)
    z = (13 - 7.5) / math.sqrt(13.625)
    assert test.zstatistic == pytest.approx(z)
    # the same statistic as scipy's signed-rank test, opposite sign convention
    ref = wilcoxon(np.array(rel) - 0.01, alternative="less", zero_method="wilcox",
                   correction=False, method="approx")
    assert test.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_pratt_ranks_the_zero_then_drops_it():
    # |d| with the zero: 0 -> 1, 0.01 -> 2, 0.02 -> 3, 0.03 -> 4.5 (twice), 0.05 -> 6
    # negative ranks: 4.5 + 4.5 + 6 + 2 = 17; mean = 6*7/4 - 1*2/4 = 10
    # var = 6*7*13/24 - (8 - 2)/48 - 1*2*3/24 = 22.375
    rel = [0.01, -0.02, 0.03, -0.02, -0.04, 0.0]
    test = hp.noninferiority_test(rel, margin=0.01, zero_method="pratt", method="approx")
    assert test.statistic == 17.0
    assert test.zstatistic == pytest.approx(7 / math.sqrt(22.375))
    ref = wilcoxon(np.array(rel) - 0.01, alternative="less", zero_method="pratt",
                   correction=False, method="approx")
    assert test.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_equal_relative_risks_count_as_ties_despite_rounding():
    # (0.2 - 0.15) / 0.15 and (0.6 - 0.45) / 0.45 are both 1/3 but differ in floating point
    rel = [(0.2 - 0.15) / 0.15, (0.6 - 0.45) / 0.45, -0.5]
    assert rel[0] != rel[1]
    test = hp.noninferiority_test(rel, margin=0.0, method="approx")
    assert test.n_ties == 2


def test_exact_pvalue_for_small_samples_matches_scipy():
    rel = np.array([-0.04, -0.02, 0.015, -0.03, -0.011, -0.05, 0.003])
    test = hp.noninferiority_test(rel, margin=0.01)  # auto: exact, no ties or zeros
    ref = wilcoxon(rel - 0.01, alternative="less", method="exact")
    assert test.pvalue == pytest.approx(ref.pvalue)
    # 6 of 7 below the margin: the exact p-value is far from the normal approximation's
    approx = hp.noninferiority_test(rel, margin=0.01, method="approx")
    assert test.zstatistic == approx.zstatistic
    assert test.pvalue != pytest.approx(approx.pvalue, rel=0.05)


def test_nothing_to_rank_is_no_evidence():
    test = hp.noninferiority_test([0.01, 0.01], margin=0.01)
    assert test.n == 0
    assert test.n_zeros == 2
    assert test.pvalue == 1.0
    assert math.isnan(test.zstatistic)
    assert test.to_dict()["zstatistic"] is None


def test_holm_known_table():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max so far 0.06
    adjusted, reject = hp.holm_bonferroni([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06, 0.02])
    assert reject.tolist() == [True, False, False, True]
    # stepping down stops at the first failure even if a later raw p is small enough
    adjusted, reject = hp.holm_bonferroni([0.02, 0.024], alpha=0.05)
    assert reject.tolist() == [True, True]  # 0.02 <= 0.025, then 0.024 <= 0.05
    adjusted, reject = hp.holm_bonferroni([0.03, 0.026], alpha=0.05)
    assert reject.tolist() == [False, False]  # 0.026 > 0.025 stops everything


def test_holm_rejects_bad_pvalues():
    with pytest.raises(hp.exceptions.InvalidDataError, match=r"\[0, 1\]"):
        hp.holm_bonferroni([0.1, 1.5])


def test_tuning_risk_equations_4_to_7():
    free = np.array([0.10, 0.20, 0.25, 0.0])
    fixed = np.array([0.12, 0.20, 0.20, 0.05])
    result = hp.tuning_risk({"C": fixed}, free, margin=0.01, method="approx")
    row = result["C"]
    d = fixed - free
    assert row.risk_mean == pytest.approx(d.mean())
    assert row.risk_std == pytest.approx(d.std(ddof=1))
    rel = (fixed[:3] - free[:3]) / free[:3]  # the last pair has no relative risk
    assert row.n_excluded == 1
    assert row.n_pairs == 4
    assert row.relative_mean == pytest.approx(rel.mean())
    assert row.relative_std == pytest.approx(rel.std(ddof=1))
    assert row.test.n == 3


def test_tuning_risk_holm_decisions_and_table():
    rng = np.random.default_rng(0)
    free = rng.uniform(0.05, 0.3, size=30)
    fixed = {
        "harmless": free * (1 + rng.normal(-0.01, 0.005, size=30)),
        "harmful": free * (1 + rng.uniform(0.05, 0.3, size=30)),
    }
    result = hp.tuning_risk(fixed, free)
    assert result.non_inferior == ("harmless",)
    assert result["harmful"].test.zstatistic < 0
    pvals = [r.test.pvalue for r in result.rows]
    adjusted, _ = hp.holm_bonferroni(pvals)
    assert [r.pvalue_adjusted for r in result.rows] == pytest.approx(adjusted.tolist())
    text = result.table()
    assert "harmless" in text
    assert "rejected (non-inferior)" in text
    as_dict = result.to_dict()
    assert as_dict["rows"][1]["non_inferior"] is False


def test_tuning_risk_per_parameter_free_runs():
    result = hp.tuning_risk({"a": [0.1, 0.2]}, {"a": [0.1, 0.2]})
    assert result["a"].risk_mean == 0.0


def test_tuning_risk_errors_name_the_fix():
    with pytest.raises(hp.exceptions.InvalidDataError, match="negative"):
        hp.tuning_risk({"a": [-0.1, 0.2]}, [0.1, 0.2])
    with pytest.raises(hp.exceptions.InvalidDataError, match="paired"):
        hp.tuning_risk({"a": [0.1, 0.2, 0.3]}, [0.1, 0.2])
    with pytest.raises(hp.exceptions.InvalidDataError, match="no runs for 'a'"):
        hp.tuning_risk({"a": [0.1]}, {"b": [0.1]})
    with pytest.raises(hp.exceptions.InvalidDataError, match="NaN"):
        hp.tuning_risk({"a": [0.1, float("nan")]}, [0.1, 0.2])
    with pytest.raises(KeyError, match="'zz'"):
        hp.tuning_risk({"a": [0.1, 0.3]}, [0.1, 0.2])["zz"]


def test_inputs_are_not_mutated():
    free = np.array([0.1, 0.2, 0.3])
    fixed = {"a": np.array([0.1, 0.25, 0.3])}
    hp.tuning_risk(fixed, free)
    np.testing.assert_array_equal(free, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(fixed["a"], [0.1, 0.25, 0.3])


def test_pairs_exactly_on_the_margin_are_zeros():
    free = np.array([0.13, 0.27, 0.31, 0.07, 0.52, 0.19])
    result = hp.tuning_risk({"a": 1.01 * free}, free, margin=0.01)
    test = result["a"].test
    assert (test.n, test.n_zeros, test.n_ties) == (0, 6, 0)
    assert test.pvalue == 1.0


def test_pratt_with_several_zeros_matches_scipy():
    rel = np.array([0.01, 0.01, -0.02, 0.03, -0.02, -0.04, 0.0, -0.05])
    test = hp.noninferiority_test(rel, margin=0.01, zero_method="pratt", method="approx")
    ref = wilcoxon(rel - 0.01, alternative="less", zero_method="pratt", correction=False,
                   method="approx")
    assert test.zstatistic == pytest.approx(-ref.zstatistic, rel=1e-12)
    assert test.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert test.n_zeros == 2
    assert test.n_ties == 2  # the two -0.03: zeros are not a tie group


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("method", ["auto", "exact", "approx"])
def test_pairs_exactly_on_the_margin_are_no_evidence(zero_method, method):
    # zsplit used to send one such pair to scipy's permutation test, which raised
    for x in ([0.01], [0.01, 0.01, 0.01]):
        res = hp.noninferiority_test(x, margin=0.01, zero_method=zero_method, method=method)
        assert res.pvalue == 1.0
        assert res.n_zeros == len(x)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: hp.tuning_risk({"a": ["a", "b"]}, [0.1, 0.2]), r"fixed\['a'\] must be a sequence of numbers"),
    (lambda: hp.holm_bonferroni("abc"), r"pvalues must be a sequence of numbers\. Got a string"),
    (lambda: hp.tuning_risk({"a": [[0.1, 0.2], [0.3, 0.4]]}, [0.1, 0.2, 0.3, 0.4]),
     r"fixed\['a'\] must be one sequence.*shape \(2, 2\)"),
    (lambda: hp.noninferiority_test([[0.1, 0.2], [0.3, 0.4]]), r"differences must be one sequence.*shape \(2, 2\)"),
    (lambda: hp.holm_bonferroni([[0.01, 0.5], [0.2, 0.3]]), r"pvalues must be one sequence.*shape \(2, 2\)"),
])
def test_risk_inputs_that_are_not_one_row_of_numbers_are_named(call, match):
    # strings failed with numpy's "could not convert string to float", and tables were
    # flattened in an order nobody chose and tested as if paired that way
    with pytest.raises(hp.exceptions.InvalidDataError, match=match):
        call()



def test_a_row_or_a_column_of_numbers_is_one_sequence():
    # a DataFrame column (df[["d"]]) or a column vector is one sequence, as before
    d = np.array([-0.02, -0.05, 0.0, -0.01, -0.03, 0.005])
    flat = hp.noninferiority_test(d, margin=0.01, method="approx")
    for shaped in (d.reshape(-1, 1), d.reshape(1, -1)):
        assert hp.noninferiority_test(shaped, margin=0.01, method="approx") == flat
    adjusted, _ = hp.holm_bonferroni([[0.01], [0.04], [0.03]])
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06])


def _every_sign(d: np.ndarray, zero_method: str) -> float:
    """The one-sided p-value by enumerating every sign pattern of the ranked pairs."""
    import itertools

    from scipy.stats import rankdata

    kept = d if zero_method != "wilcox" else d[d != 0.0]
    ranks = rankdata(np.abs(kept))
    if zero_method == "pratt":
        ranks = np.where(kept == 0.0, 0.0, ranks)
    observed = ranks[kept > 0].sum()
    sums = [ranks[(np.array(signs) * np.abs(kept)) > 0].sum()
            for signs in itertools.product((1, -1), repeat=kept.size)]
    return float(np.mean(np.array(sums) <= observed + 1e-12))


@pytest.mark.parametrize(("differences", "zero_method"), [
    ([0.01, 0.01, -0.02, -0.03, -0.04], "pratt"),         # two pairs on the margin
    ([0.01, 0.01, 0.01, -0.02, -0.03, -0.04], "zsplit"),
    ([0.0, -0.02, -0.02, -0.03, 0.05, -0.04], "wilcox"),   # tied differences
])
def test_an_exact_pvalue_with_ties_or_pairs_on_the_margin_counts_every_sign(differences,
                                                                           zero_method):
    # scipy's exact table assumes distinct ranks: two pairs on the margin of five gave 1/32
    # for a true 1/8, and tuning_risk then called the parameter safe to fix
    test = hp.noninferiority_test(differences, margin=0.01, zero_method=zero_method,
                                  method="exact")
    d = np.round(np.asarray(differences) - 0.01, 12)
    truth = _every_sign(d, zero_method) if zero_method != "zsplit" else hp.noninferiority_test(
        differences, margin=0.01, zero_method=zero_method, method="auto").pvalue
    assert test.pvalue == pytest.approx(truth)
    with pytest.raises(hp.exceptions.InvalidArgumentError, match="at most 50"):
        hp.noninferiority_test([0.0] * 3 + [-0.02] * 50, margin=0.0, zero_method="pratt",
                               method="exact")


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_an_exact_pvalue_with_ties_is_counted_not_enumerated(zero_method):
    # every sign pattern was enumerated by resampling: 20 tied pairs took 300 s and 1.5 GB.
    # Counted, it is the enumeration's value to the bit, and 40 pairs are no burden
    rng = np.random.default_rng(0)
    d = np.round(rng.normal(0, 0.03, 14), 2)  # ties, and pairs on the margin
    test = hp.noninferiority_test(d, margin=0.01, zero_method=zero_method, method="exact")
    assert test.pvalue == pytest.approx(_every_sign(np.round(d - 0.01, 12), zero_method),
                                        rel=1e-12)
    many = np.round(rng.normal(-0.02, 0.03, 40), 2)
    exact = hp.noninferiority_test(many, margin=0.01, zero_method=zero_method, method="exact")
    approx = hp.noninferiority_test(many, margin=0.01, zero_method=zero_method, method="approx")
    assert exact.pvalue == pytest.approx(approx.pvalue, abs=0.01)  # 40 pairs: near normal
