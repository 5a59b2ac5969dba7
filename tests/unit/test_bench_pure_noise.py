"""The pure-noise benchmark's scoring, on hand-made runs whose scores are counted by hand."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("bench_pure_noise")


def _run(sampler, n, seed, states, resolved, ped, fanova):
    return {"sampler": sampler, "n_trials": n, "seed": seed, "states": states,
            "resolved": resolved, "fit_r2": 0.0, "peers": {"ped_anova": ped, "optuna_fanova": fanova}}


def test_claims_resolved_effects_and_peers_are_counted_per_sampler_and_size(bench):
    rows = [
        _run("random", 100, 0, {"a": "matters", "b": "small", "c": "unresolved", "d": "fix"},
             ["a x b"], 0.3, 0.2),
        _run("random", 100, 1, {"a": "not_yet_safe", "b": "unresolved", "c": "no_data", "d": "fix"},
             [], 0.5, 0.4),
        _run("random", 100, 2, {"a": "unresolved", "b": "matters", "c": "fix", "d": "fix"},
             [], 0.2, 0.1),
        _run("tpe", 200, 0, {"a": "unresolved", "b": "unresolved", "c": "kept", "d": "not_yet_safe"},
             ["b"], 0.25, 0.25),
    ]
    table = {(t["sampler"], t["trials"]): t for t in bench.summarize(rows)}
    assert list(table) == [("random", 100), ("tpe", 200)]
    random = table[("random", 100)]
    assert (random["studies"], random["studies_with_claims"], random["params_claimed"]) == (3, 2, 3)
    assert random["studies_with_resolved"] == 1
    assert random["safe_share"] == pytest.approx(4 / 12)
    assert (random["ped_anova_top"], random["optuna_fanova_top"]) == (0.3, 0.2)  # medians
    tpe = table[("tpe", 200)]
    assert (tpe["studies_with_claims"], tpe["params_claimed"], tpe["studies_with_resolved"]) == (0, 0, 1)
    assert tpe["safe_share"] == 0.0
    text = bench.markdown(bench.summarize(rows))
    assert "| random | 100 | 3 | 2 / 3 | 1 | 33% | 0.30 | 0.20 |" in text
