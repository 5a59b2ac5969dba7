"""The Cholesky routines called past SciPy's wrappers give SciPy's results to the bit."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lapack, solve_triangular

from hpinsight.surrogates.gp import _lapack
from hpinsight.surrogates.gp._lapack import (
    cholesky,
    cholesky_inverse,
    cholesky_solve,
    triangular_solve,
)


def _spd(n: int, seed: int = 0) -> np.ndarray:
    A = np.random.default_rng(seed).random((n, n))
    return A @ A.T / n + np.eye(n)


@pytest.fixture(params=["lapack", "scipy"], ids=["past SciPy's wrappers", "SciPy's wrappers"])
def route(request, monkeypatch) -> str:
    if request.param == "scipy":
        monkeypatch.setattr(_lapack, "_LAPACK", None)
    return str(request.param)


def test_the_routines_are_found() -> None:
    # where this fails, every factorization of the fits takes the interpreter lock again
    assert _lapack._LAPACK is not None
    assert set(_lapack._LAPACK) == {"dpotrf", "dpotri", "dpotrs", "dtrtrs"}


@pytest.mark.parametrize("n", [1, 7, 150, 300])
@pytest.mark.parametrize("order", ["C", "F"])
def test_every_routine_equals_scipys_to_the_bit(route, n, order) -> None:
    K = np.asarray(_spd(n), order=order)
    before = K.copy()
    b, B = np.arange(n, dtype=float), np.random.default_rng(1).random((n, 3))
    want = cho_factor(K, lower=True, check_finite=False)
    c = cholesky(K)
    np.testing.assert_array_equal(K, before)  # not overwritten unless asked
    np.testing.assert_array_equal(np.tril(c), np.tril(want[0]))
    np.testing.assert_array_equal(cholesky_solve(c, b), cho_solve(want, b, check_finite=False))
    np.testing.assert_array_equal(cholesky_solve(c, B), cho_solve(want, B, check_finite=False))
    np.testing.assert_array_equal(triangular_solve(c, B),
                                  solve_triangular(want[0], B, lower=True, check_finite=False))
    np.testing.assert_array_equal(np.tril(cholesky_inverse(c)), np.tril(lapack.dpotri(want[0], lower=1)[0]))
    np.testing.assert_allclose(np.tril(cholesky_inverse(c)), np.tril(np.linalg.inv(K)), rtol=1e-9, atol=1e-12)


def test_overwrite_factorizes_a_column_major_matrix_in_place(route) -> None:
    K = np.asfortranarray(_spd(20))
    want = np.tril(cho_factor(K, lower=True, check_finite=False)[0])
    c = cholesky(K, overwrite=True)
    np.testing.assert_array_equal(np.tril(c), want)
    if route == "lapack":
        assert c is K
        inv = cholesky_inverse(c, overwrite=True)
        assert inv is K


@pytest.mark.parametrize("bad", [np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([[-1.0]])])
def test_a_matrix_that_is_not_positive_definite_raises(route, bad) -> None:
    with pytest.raises(LinAlgError):
        cholesky(bad)


def test_a_zero_on_the_factors_diagonal_raises() -> None:
    c = np.asfortranarray(np.diag([1.0, 0.0, 2.0]))
    with pytest.raises(LinAlgError, match="diagonal"):
        triangular_solve(c, np.ones(3))


def test_two_threads_factorizing_at_once_get_each_its_own_result() -> None:
    mats = [_spd(200, seed) for seed in range(8)]
    want = [np.tril(cho_factor(K, lower=True, check_finite=False)[0]) for K in mats]
    got: dict[int, np.ndarray] = {}

    def run(indices: range) -> None:
        for _ in range(5):
            for i in indices:
                got[i] = np.tril(cholesky_inverse(cholesky(mats[i])))

    threads = [threading.Thread(target=run, args=(range(k, 8, 2),)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, K in enumerate(mats):
        np.testing.assert_array_equal(got[i], np.tril(lapack.dpotri(want[i], lower=1)[0]))
        np.testing.assert_allclose(got[i], np.tril(np.linalg.inv(K)), rtol=1e-8, atol=1e-11)
