"""The calibration benchmark's side-by-side scoring of main effects (hpinsight against a
peer with intervals), on hand-made studies whose scores are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("bench_calibration")


def _effects(c, a, b, noise):
    out = {"c": c, "a": a, "b": b}
    out.update({f"n{i}": noise for i in range(7)})
    return {k: {"mean": m, "std": s} for k, (m, s) in out.items()}


def test_main_effects_are_scored_with_one_rule_for_hpinsight_and_the_peer(bench):
    # `interaction`: a and b act only together (main effects 0), c alone has 0.0954
    row = {
        "function": "interaction", "sampler": "tpe", "snr": "4", "seed": 0,
        "analysis": {"seconds": 1.5, "effects": _effects((0.09, 0.01), (0.05, 0.01), (0.0, 0.0), (0.001, 0.001))},
        "peers": {"ax": {"seconds": 12.0,
                         "effects": _effects((0.2, 0.2), (-0.01, 0.05), (0.0, 0.0), (0.05, 0.01))}},
    }
    ours, peer = bench.summarize_mains([row])
    assert (ours["source"], peer["source"]) == ("hpinsight", "ax")
    # ours: c's [0.0736, 0.1064] holds 0.0954; a's [0.0336, 0.0664] misses 0 and claims an
    # effect; b's [0, 0] and the do-nothing [0, 0.0026] hold 0
    assert ours["coverage"] == pytest.approx(9 / 10)
    assert ours["coverage_nonzero"] == 1.0
    assert ours["coverage_zero"] == pytest.approx(8 / 9)
    assert ours["zero_claimed"] == pytest.approx(1 / 9)
    assert ours["largest_open"] == 0.0
    assert ours["nothing_mass"] == pytest.approx(0.007 / 0.147)
    assert ours["top_found"] == 1
    assert ours["seconds"] == 1.5
    # the peer: c's [0, 0.529] holds it but reaches 0 (open); a's negative mean counts as
    # 0; each do-nothing [0.0336, 0.0664] claims an effect
    assert peer["coverage"] == pytest.approx(3 / 10)
    assert peer["coverage_zero"] == pytest.approx(2 / 9)
    assert peer["zero_claimed"] == pytest.approx(7 / 9)
    assert peer["largest_open"] == 1.0
    assert peer["nothing_mass"] == pytest.approx(0.35 / 0.55)
    assert peer["top_found"] == 1
    assert peer["seconds"] == 12.0


def test_a_study_the_peer_failed_on_is_left_out_of_its_row_only(bench):
    good = _effects((0.09, 0.01), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0))
    rows = [{"function": "interaction", "sampler": "tpe", "snr": "4", "seed": s,
             "analysis": {"seconds": 1.0, "effects": good},
             "peers": {"ax": {"error": "out of memory"} if s else {"seconds": 9.0, "effects": good}}}
            for s in range(2)]
    ours, peer = bench.summarize_mains(rows)
    assert (ours["seeds"], peer["seeds"]) == (2, 1)


def test_a_stricter_lower_end_only_moves_resolved_effects_to_uncertain(bench):
    def e(mean, std, null, hidden=None):
        return {"mean": mean, "std": std, "shadow": null, "hidden": hidden}

    borderline = e(0.05, 0.04, 0.001)  # 0.05 - 0.04 clears 0.001; 0.05 - 1.645 * 0.04 does not
    assert bench._verdict_k(borderline, 1.0) == "resolved"
    assert bench._verdict_k(borderline, 1.645) == "uncertain"
    # below the null: the lower end plays no part, whatever k
    quiet = e(0.0004, 0.0001, 0.001, hidden=0.2)
    assert bench._verdict_k(quiet, 1.0) == bench._verdict_k(quiet, 2.0) == "uncertain"
    assert bench._verdict_k(e(0.0004, 0.0001, 0.001, hidden=0.01), 2.0) == "indistinguishable from nothing"


def test_pooled_rows_score_every_study_of_a_sampler_and_then_all(bench):
    # two studies of `interaction` (c's main effect 0.0954; a, b and the rest 0) and one of
    # `additive` whose intervals are all [0, 0]; main effects only
    def study(function, sampler, snr, c_interval, verdicts):
        effects = {}
        for p in bench.FUNCTIONS[function].params:
            low, high = c_interval if p.name == bench.largest_main(bench.truth(function)[0]) else (0.0, 0.0)
            effects[p.name] = {"mean": (low + high) / 2, "low": low, "high": high,
                               "verdict": verdicts.get(p.name, bench.NOTHING)}
        return {"function": function, "sampler": sampler, "snr": snr, "seed": 0,
                "analysis": {"seconds": 1.0, "effects": effects},
                "reanalysis": {"effects": {k: dict(v) for k, v in effects.items()}}}

    rows = [study("interaction", "tpe", "4", (0.09, 0.1), {"c": bench.RESOLVED}),
            study("interaction", "random", "1", (0.09, 0.1), {"c": bench.RESOLVED, "n0": bench.RESOLVED}),
            study("additive", "tpe", "1", (0.0, 0.0), {})]
    table = bench.summarize(rows, pooled=True)
    assert [(t["function"], t["sampler"], t["snr"], t["seeds"]) for t in table] == [
        ("all", "random", "all", 1), ("all", "tpe", "all", 2), ("all", "all", "all", 3)]
    random, tpe, everything = table
    # random: all 10 main effects held; n0 (truth 0) resolved, 1 of 9 zeros
    assert random["coverage"] == 1.0
    assert random["zero_resolved"] == pytest.approx(1 / 9)
    assert random["largest_nothing"] == 0.0
    # tpe: `additive` has 10 parameters, 3 that act; its intervals are all [0, 0], so its 7
    # zeros are held and its 3 real effects missed, and its largest is called nothing
    assert tpe["largest_nothing"] == pytest.approx(1 / 2)
    assert tpe["coverage_nonzero"] == pytest.approx(1 / 4)
    assert tpe["coverage"] == pytest.approx(17 / 20)
    assert everything["coverage"] == pytest.approx(27 / 30)
    assert everything["zero_resolved"] == pytest.approx(1 / 25)
    assert everything["seed_flips"] == 0.0


def test_a_flip_is_traced_to_what_moved_between_the_analyses(bench):
    def e(mean, std, null, hidden=0.0):
        return {"mean": mean, "std": std, "shadow": null, "hidden": hidden,
                "verdict": bench.verdict(mean, std, null, hidden)}

    steady = e(0.3, 0.01, 0.001)
    first = {p.name: steady for p in bench.FUNCTIONS["interaction"].params}
    second = dict(first)
    # a: only the null moves, above its mean (resolved -> nothing)
    first["a"], second["a"] = e(0.02, 0.001, 0.001), e(0.02, 0.001, 0.03)
    # b: only the std moves, past mean minus null (resolved -> uncertain)
    first["b"], second["b"] = e(0.02, 0.001, 0.001), e(0.02, 0.05, 0.001)
    # c: the mean falls below what counts at all and the hidden share rises (resolved ->
    # uncertain); either alone gives another verdict (nothing, resolved)
    first["c"], second["c"] = e(0.02, 0.001, 0.001), e(0.0004, 0.001, 0.01, hidden=0.2)
    assert [first[k]["verdict"] != second[k]["verdict"] for k in "abc"] == [True, True, True]
    row = {"function": "interaction", "analysis": {"effects": first}, "reanalysis": {"effects": second}}
    assert bench.flip_causes([row]) == {"flips": 3, "mean": 0, "std": 1, "shadow": 1, "hidden": 0}


def test_pairs_are_counted_with_and_without_the_removal_check(bench):
    # `interaction`: a x b is real, a x c and b x c are not
    def run(sampler, effects):
        return {"function": "interaction", "sampler": sampler, "analysis": {"effects": effects}}

    resolved_by_shadow = {"mean": 0.1, "std": 0.01, "shadow": 0.001}
    rows = [run("tpe", {"a x b": {**resolved_by_shadow, "verdict": bench.RESOLVED},
                        "a x c": {**resolved_by_shadow, "verdict": "uncertain"},  # the check moved it
                        "b x c": {"mean": 0.0, "std": 0.0, "shadow": 0.001, "verdict": bench.NOTHING},
                        "c": {**resolved_by_shadow, "verdict": bench.RESOLVED}}),  # not a pair
            run("random", {"a x b": {**resolved_by_shadow, "verdict": "uncertain"},
                           "a x c": {**resolved_by_shadow, "verdict": bench.RESOLVED}})]
    lines = bench.score_pair_check(rows).splitlines()
    assert "| tpe | 2 | 1 -> 0 | 1 | 1 -> 1 |" in lines
    assert "| random | 1 | 1 -> 1 | 1 | 1 -> 0 |" in lines
    assert "| all | 3 | 2 -> 1 | 2 | 2 -> 1 |" in lines


def test_the_capped_truth_is_the_functional_anova_of_the_expected_capped_value(bench):
    # independently of its closed form: E[min(f + e, cap)] by Gauss-Hermite quadrature
    # over the noise (200 nodes), then the same grid's shares
    F = bench._grid("interaction")
    cap, sigma = float(np.quantile(F, 0.25)), 0.7
    x, w = np.polynomial.hermite.hermgauss(200)
    G = np.zeros_like(F)
    for xk, wk in zip(x, w, strict=True):
        G += wk * np.minimum(F + sigma * np.sqrt(2.0) * xk, cap)
    G /= np.sqrt(np.pi)
    expected = bench._shares(bench.FUNCTIONS["interaction"].acting, G)
    got = bench.capped_truth("interaction", cap, sigma)
    assert got.keys() == expected.keys()
    for key in got:
        assert got[key] == pytest.approx(expected[key], abs=2e-4)
    # capping turns the pure interaction of a and b into main effects of both
    assert bench.truth("interaction")[0][("a",)] == 0.0
    assert got[("a",)] > 0.05
    assert got[("b",)] > 0.05
    # without noise it is min(f, cap); a cap above every value leaves the function's
    clean = bench.capped_truth("interaction", cap, 0.0)
    assert clean == pytest.approx(bench._shares(bench.FUNCTIONS["interaction"].acting, np.minimum(F, cap)))
    assert bench.capped_truth("interaction", float(F.max()) + 1, 0.0) == pytest.approx(bench.truth("interaction")[0])


def test_a_capped_run_is_scored_against_the_truth_stored_with_it(bench):
    # a's main effect is 0 uncapped and 0.2 capped: an interval [0.15, 0.25] covers it only
    # against the capped truth, and "resolved" is then no zero resolved
    effects = {p.name: {"mean": 0.0, "low": 0.0, "high": 0.0, "verdict": bench.NOTHING}
               for p in bench.FUNCTIONS["interaction"].params}
    effects["a"] = {"mean": 0.2, "low": 0.15, "high": 0.25, "verdict": bench.RESOLVED}
    row = {"function": "interaction", "sampler": "tpe", "snr": "4", "seed": 0,
           "analysis": {"seconds": 1.0, "effects": effects},
           "reanalysis": {"effects": effects}}
    uncapped = bench.summarize([row])[0]
    capped = bench.summarize([{**row, "truth": {"a": 0.2, "b": 0.2, "c": 0.1, "a x b": 0.3}}])[0]
    assert uncapped["zero_resolved"] == pytest.approx(1 / 9)  # a, b and the 7 others are 0 uncapped
    assert capped["zero_resolved"] == 0.0
    assert bench.run_truth({**row, "truth": {"a x b": 0.3}}) == {("a", "b"): 0.3}
    # b (0.2) and c (0.1) are missed by [0, 0] either way; a is held only when capped
    assert capped["coverage_nonzero"] == pytest.approx(1 / 3)
    assert uncapped["coverage_nonzero"] == 0.0
