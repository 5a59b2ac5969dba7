"""Re-expressing SMAC's tree thresholds in hpinsight's encoding, also for huge integers."""

from __future__ import annotations

import numpy as np
import pytest

CS = pytest.importorskip("ConfigSpace")

import hpinsight as hp  # noqa: E402
from hpinsight.adapters import _smac_model as sf  # noqa: E402


def _pairs():
    return [
        (hp.Int("n", 1, 5000), CS.Integer("n", (1, 5000))),
        (hp.Int("n", 1, 5000, log=True), CS.Integer("n", (1, 5000), log=True)),
    ]


@pytest.mark.parametrize(("param", "smac_hp"), _pairs(), ids=["int", "log-int"])
def test_bisection_gives_the_listed_thresholds(param, smac_hp, monkeypatch) -> None:
    listed = sf._threshold_map(param, smac_hp)
    monkeypatch.setattr(sf, "MAX_LISTED", 10)  # the same parameter, mapped by bisection
    bisected = sf._threshold_map(param, smac_hp)
    values = np.arange(param.low, param.high + 1)
    z = np.asarray(smac_hp.to_vector(values), dtype=np.float32).astype(np.float64)
    rng = np.random.default_rng(0)
    t = np.concatenate([rng.uniform(-0.1, 1.1, 500), z[::37], np.nextafter(z[::41], -1.0),
                        [-1.0, 0.0, 1.0, 2.0]])
    np.testing.assert_array_equal(bisected(t), listed(t))


@pytest.mark.parametrize("log", [False, True], ids=["int", "log-int"])
def test_an_integer_up_to_ten_million_routes_like_smac(log: bool) -> None:
    # listing 10^7 values one by one hung; the map must send every value the side
    # SMAC's tree sends it: z(v) <= t exactly when ours(v) <= cut(t)
    param = hp.Int("n", 1, 10**7, log=log)
    smac_hp = CS.Integer("n", (1, 10**7), log=log)
    cut = sf._threshold_map(param, smac_hp)
    rng = np.random.default_rng(1)
    v = np.unique(np.concatenate([rng.integers(1, 10**7 + 1, 3000), [1, 2, 10**7 - 1, 10**7]]))
    z = np.asarray(smac_hp.to_vector(v), dtype=np.float32).astype(np.float64)
    x = np.log(v) if log else v.astype(np.float64)
    t = np.concatenate([rng.uniform(0.0, 1.0, 200), z[::97]])
    c = cut(t)
    np.testing.assert_array_equal(z[None, :] <= t[:, None], x[None, :] <= c[:, None])
