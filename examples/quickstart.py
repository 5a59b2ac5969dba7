"""Quickstart: exact fANOVA on plain arrays, no optimizer needed.

A function of three hyperparameters where ``x`` matters most, ``lr`` acts on a
log scale, and ``kind`` interacts with ``x``.
"""

from __future__ import annotations

import math

import hpinsight as hp

space = hp.SearchSpace([
    hp.Float("x", 0.0, 1.0),
    hp.Float("lr", 1e-4, 1.0, log=True),
    hp.Categorical("kind", ["a", "b"]),
])
configs = space.sample(500, seed=0)
y = [4 * c["x"] + 0.5 * math.log10(c["lr"]) + (c["kind"] == "a") * 2 * c["x"] for c in configs]

result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)
print(result)
for imp in result.ranking():
    print(f"{' x '.join(imp.params):<12} {imp.mean:.3f} ± {imp.std:.3f}")

curve = result.marginal("lr", grid_size=5)
for value, mean, std in zip(curve.grid[0], curve.mean, curve.std, strict=True):
    print(f"lr={value:.0e}: predicted {mean:.3f} ± {std:.3f}")
