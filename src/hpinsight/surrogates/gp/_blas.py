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
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import threadpoolctl

__all__ = ["one_blas_thread"]

_lock = threading.Lock()
_holders = 0
_limits: Any = None


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
    limits found by the first to enter come back when the last one leaves."""
    global _holders, _limits
    with _lock:
        if _holders == 0:
            _release_control()
            _limits = threadpoolctl.threadpool_limits(limits=1, user_api="blas")
            _release_control()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                _release_control()
                _limits.restore_original_limits()
                _limits = None
                _release_control()
