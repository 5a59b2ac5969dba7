"""Cholesky factorizations and solves that leave the interpreter to the other thread.

SciPy's ``scipy.linalg`` wrappers of LAPACK hold Python's interpreter lock for the
whole call, so the fits that :func:`~._fit.fit_gp` and :func:`~._parallel.two_at_a_time`
run two at a time took turns on one core: 2,000 factorizations of 200 x 200 took 0.21 s
in one thread and 0.27 s split over two (``benchmarks/README.md``). The same LAPACK
routines, reached through SciPy's public Cython API (``scipy.linalg.cython_lapack``,
whose function pointers it exports as capsules) and called through :mod:`ctypes`, which
releases the lock during a foreign call, run side by side.

The results are those of ``scipy.linalg.cho_factor(a, lower=True)``, ``cho_solve``,
``solve_triangular(c, b, lower=True)`` and ``lapack.dpotri(c, lower=1)`` to the bit:
the same library and the same calls on the same column-major copies (a test checks it). Where the capsules are
not there, or not of the signature expected, the SciPy wrappers are used.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lapack, solve_triangular

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: each routine's C signature as SciPy's Cython API declares it (``d`` is its typedef of
#: double); the ctypes argument types follow from it
_SIGNATURES = {
    "dpotrf": ("char *", "int *", "d *", "int *", "int *"),  # uplo, n, a, lda, info
    "dpotri": ("char *", "int *", "d *", "int *", "int *"),
    "dpotrs": ("char *", "int *", "int *", "d *", "int *", "d *", "int *", "int *"),  # uplo, n, nrhs, a, lda, b, ldb, info
    "dtrtrs": ("char *", "char *", "char *", "int *", "int *", "d *", "int *", "d *", "int *", "int *"),
}
_CTYPES: dict[str, Any] = {"char *": ctypes.c_char_p, "int *": ctypes.POINTER(ctypes.c_int), "d *": ctypes.c_void_p}


def _routines() -> dict[str, Any] | None:
    """The routines as ctypes functions (which release the interpreter lock), or
    None where SciPy's Cython API does not offer them with the signatures expected."""
    try:
        from scipy.linalg import cython_lapack

        capsules = cython_lapack.__pyx_capi__
        name_of = ctypes.pythonapi.PyCapsule_GetName
        name_of.restype, name_of.argtypes = ctypes.c_char_p, [ctypes.py_object]
        pointer_of = ctypes.pythonapi.PyCapsule_GetPointer
        pointer_of.restype, pointer_of.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        out = {}
        for routine, signature in _SIGNATURES.items():
            capsule = capsules[routine]
            name = name_of(capsule)
            args = name.decode().partition("(")[2].rstrip(")").split(",")
            args = [a.strip().replace("__pyx_t_5scipy_6linalg_13cython_lapack_", "") for a in args]
            if not name.startswith(b"void (") or tuple(args) != signature:
                return None
            argtypes = [_CTYPES[a] for a in signature]
            out[routine] = ctypes.CFUNCTYPE(None, *argtypes)(pointer_of(capsule, name))
        return out
    except (ImportError, AttributeError, KeyError, TypeError, ValueError):  # then SciPy's wrappers
        return None


_LAPACK = _routines()


def cholesky(a: NDArray[np.float64], overwrite: bool = False) -> NDArray[np.float64]:
    """The lower Cholesky factor of the symmetric ``a`` (its lower triangle is read), in
    column-major order; the strict upper triangle holds what ``a``'s did, as with
    ``scipy.linalg.cho_factor``. With ``overwrite`` and ``a`` column-major, in place.
    Raises ``LinAlgError`` when ``a`` is not positive definite."""
    if _LAPACK is None:
        factor: NDArray[np.float64] = cho_factor(a, lower=True, overwrite_a=overwrite, check_finite=False)[0]
        return factor
    c = a if overwrite and a.flags.f_contiguous and a.dtype == np.float64 else np.array(a, np.float64, order="F")
    n, info = ctypes.c_int(c.shape[0]), ctypes.c_int(0)
    _LAPACK["dpotrf"](b"L", ctypes.byref(n), c.ctypes.data, ctypes.byref(n), ctypes.byref(info))
    if info.value != 0:
        raise LinAlgError(f"{info.value}-th leading minor not positive definite" if info.value > 0
                          else f"illegal value in argument {-info.value} of dpotrf")
    return c


def _right_hand_side(c: NDArray[np.float64], b: NDArray[np.float64],
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], ctypes.c_int, ctypes.c_int]:
    """For a solve against the factor ``c``: ``c`` column-major, a column-major copy of
    ``b`` for LAPACK to overwrite, and the order and number of right-hand sides."""
    x = np.array(b, np.float64, order="F")
    return (c if c.flags.f_contiguous else np.asfortranarray(c), x, ctypes.c_int(c.shape[0]),
            ctypes.c_int(1 if x.ndim == 1 else x.shape[1]))


def cholesky_solve(c: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``K^-1 b`` from the lower factor ``c`` of :func:`cholesky` (``b``: (n,) or (n, k))."""
    if _LAPACK is None:
        out: NDArray[np.float64] = cho_solve((c, True), b, check_finite=False)
        return out
    c, x, n, k = _right_hand_side(c, b)
    info = ctypes.c_int(0)
    _LAPACK["dpotrs"](b"L", ctypes.byref(n), ctypes.byref(k), c.ctypes.data, ctypes.byref(n),
                      x.ctypes.data, ctypes.byref(n), ctypes.byref(info))
    if info.value != 0:
        raise LinAlgError(f"illegal value in argument {-info.value} of dpotrs")
    return x


def triangular_solve(c: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``c^-1 b`` for the lower factor ``c`` of :func:`cholesky` (``b``: (n,) or (n, k)), as
    ``scipy.linalg.solve_triangular(c, b, lower=True)``."""
    if _LAPACK is None:
        out: NDArray[np.float64] = solve_triangular(c, b, lower=True, check_finite=False)
        return out
    c, x, n, k = _right_hand_side(c, b)
    info = ctypes.c_int(0)
    _LAPACK["dtrtrs"](b"L", b"N", b"N", ctypes.byref(n), ctypes.byref(k), c.ctypes.data, ctypes.byref(n),
                      x.ctypes.data, ctypes.byref(n), ctypes.byref(info))
    if info.value != 0:
        raise LinAlgError(f"singular factor: its {info.value}-th diagonal entry is 0" if info.value > 0
                          else f"illegal value in argument {-info.value} of dtrtrs")
    return x


def cholesky_inverse(c: NDArray[np.float64], overwrite: bool = False) -> NDArray[np.float64]:
    """The lower triangle of ``K^-1`` from the lower factor ``c`` of :func:`cholesky`
    (LAPACK potri: a third of the work of solving against the identity); the strict
    upper triangle holds what ``c``'s did. With ``overwrite`` and ``c`` column-major, in
    place."""
    if _LAPACK is None:
        inv, info = lapack.dpotri(c, lower=1, overwrite_c=overwrite)
        if info != 0:
            raise LinAlgError(f"potri failed with info={info}")
        return np.asarray(inv)
    x = c if overwrite and c.flags.f_contiguous and c.dtype == np.float64 else np.array(c, np.float64, order="F")
    n, info_c = ctypes.c_int(x.shape[0]), ctypes.c_int(0)
    _LAPACK["dpotri"](b"L", ctypes.byref(n), x.ctypes.data, ctypes.byref(n), ctypes.byref(info_c))
    if info_c.value != 0:
        raise LinAlgError(f"potri failed with info={info_c.value}")
    return x
