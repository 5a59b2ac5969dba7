"""One BLAS thread while the Gaussian process's small factorizations run.

``threadpoolctl.threadpool_limits`` sets a limit for the whole process and restores, on
exit, the limit it found on entry. Entered from two threads at once, their exits cross:
the first to leave restores the original while the other still runs, and the second
restores the limit of one, which then stays for the rest of the user's process (two
analyses in two threads: an Optuna evaluator read from a notebook beside a callback).
:func:`one_blas_thread` counts who is inside instead: the first to enter sets the limit
and the last to leave restores it.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from threadpoolctl import threadpool_limits

if TYPE_CHECKING:
    from collections.abc import Iterator

_lock = threading.Lock()
_inside = 0
_limiter: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside, for every thread of the process, however many threads
    enter and leave, in whatever order; the limit found by the first to enter is restored
    when the last leaves."""
    global _inside, _limiter
    with _lock:
        if _inside == 0:
            _limiter = threadpool_limits(limits=1, user_api="blas")
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                _limiter.restore_original_limits()
                _limiter = None
