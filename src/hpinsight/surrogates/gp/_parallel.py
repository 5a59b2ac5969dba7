"""Independent small fits and solves of the Gaussian process, two at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from ._blas import one_blas_thread

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

T = TypeVar("T")


def two_at_a_time(fn: Callable[..., T], *items: Iterable[object]) -> list[T]:
    """``[fn(*args) for args in zip(*items)]``, two calls at a time, in order.

    Each call's products are small (a few hundred rows): on one BLAS thread they are
    faster, and give the same digits on any machine, while numpy's loops and the
    factorizations of ``_lapack`` release the interpreter lock, so two threads keep two
    cores busy.
    """
    with one_blas_thread(), ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(fn, *items))
