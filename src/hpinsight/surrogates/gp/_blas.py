"""One BLAS thread while any analysis of this process is in a small-products section,
counted across the process's threads.

``threadpool_limits`` sets a process-wide limit and restores what it found on exit.
Two analyses in two threads of one process each entered it: the second found the
first's limit (1) as its "original", the first, ending first, restored the user's
limit while the second still ran, and the second, ending last, restored its "original"
and so left the process at one BLAS thread for good (two ``hp.fanova`` in two threads:
1 of 3 tries). threadpoolctl 3.8 also lets only one thread at a time change OpenBLAS's
shared pool (its "controlling thread"); a change from any other thread is silently
dropped. Here the first thread to enter sets the limit, the last to leave restores what
the first found, taking control for the restore, and no thread keeps control between.
The restore is per library and only where the limit is still one thread: a limit the
user's code set from another thread while an analysis ran (``threadpool_limits`` in
their main thread around a refit of a live callback in a thread) was undone by it, and
their own restore, ending first, then left the process at one thread for good. What
cannot be helped from here: the limit is the process's, so a refit in a thread of the
user's process (``isolation="thread"``) holds their own linear algebra at one thread
while it runs; the default, a refit process, does not.

Every computation of the Gaussian process runs inside (:func:`on_one_blas_thread` on
its fit, decomposition and predictions), not only its small products. OpenBLAS sums a
matrix product or a factorization in another order on two threads than on one (products
of 300 rows, factorizations of 300 and more: 1e-16 to 1e-13 apart), and the limit is the
process's: a computation left at BLAS's default threads ran on one whenever another
analysis of the process held the limit, so the same seed gave other last digits in a
report made beside a live refit (two ``hp.fanova`` in two threads against one alone: 10
of 130 numbers). The limit is set through one ``threadpoolctl.ThreadpoolController``,
made once: finding the libraries anew for every limit took 2.8 ms, setting it 0.01 ms.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy  # noqa: F401  (loaded before the controller looks for BLAS libraries)
import scipy.linalg  # noqa: F401  (SciPy's own OpenBLAS, which ``_lapack`` calls)
import threadpoolctl

__all__ = ["on_one_blas_thread", "one_blas_thread"]

_F = TypeVar("_F", bound=Callable[..., Any])

_lock = threading.Lock()
_holders = 0
_limits: Any = None
_controller: threadpoolctl.ThreadpoolController | None = None


def _release_control() -> None:
    """Let any thread change OpenBLAS's limit next (threadpoolctl 3.8 and later)."""
    clear = getattr(getattr(threadpoolctl, "OpenBLASController", None),
                    "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


def _new_lock_in_child() -> None:  # a fork while another thread held the lock keeps it held
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_new_lock_in_child)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """One BLAS thread inside, for this thread and every other one inside at once; the
    limits found by the first to enter come back when the last one leaves, to each
    library still at one thread (a limit the user's code set meanwhile, from another
    thread, stays: putting back what was found would have undone it)."""
    global _holders, _limits, _controller
    with _lock:
        if _holders == 0:
            if _controller is None:
                _controller = threadpoolctl.ThreadpoolController()
            libraries = _controller.select(user_api="blas").lib_controllers
            _release_control()
            _limits = [(lib, lib.num_threads) for lib in libraries]
            for lib, _ in _limits:
                lib.set_num_threads(1)
            _release_control()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                _release_control()
                for lib, found in _limits:
                    if lib.num_threads == 1:
                        lib.set_num_threads(found)
                _limits = None
                _release_control()


def on_one_blas_thread(func: _F) -> _F:
    """``func`` run inside :func:`one_blas_thread` (nested calls cost microseconds)."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return func(*args, **kwargs)
    return wrapper  # type: ignore[return-value]
