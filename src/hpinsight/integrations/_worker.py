"""A child process that runs refits, so a live callback does not compete with the study for the GIL.

A refit in a thread of the optimizing process slows the study down even on an idle
core: both threads need the interpreter lock, and the study's sampler (TPE is pure
Python) waits for it every few milliseconds. Measured with
``benchmarks/bench_callback_overhead.py``, a background thread made a 1,000-trial TPE
study 1.8 times slower; a child process does not.

The parent talks to one long-lived child (``python -m hpinsight.integrations._worker``)
over its standard input and output: length-prefixed pickles, one request and one
answer at a time. Only the computation runs in the child; reading the study (and a
user's ``target`` callable) stays in the parent. The child imports neither the user's
script nor any optimizer, ignores Ctrl-C (the parent decides when it stops) and exits
when its standard input closes, also when the parent dies. It runs at a lower priority
(``nice`` 10) with one BLAS thread unless the user set the thread counts: it is a
helper, and when it and the study both want a core the study comes first.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import warnings
import weakref
from pathlib import Path
from typing import IO, Any

from ..exceptions import HPInsightError

__all__ = ["RefitWorker", "WorkerError"]

_HEADER = struct.Struct("<Q")
#: Thread counts of the BLAS and OpenMP runtimes numpy, scipy and scikit-learn may use.
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class WorkerError(HPInsightError, RuntimeError):
    """The refit process could not be started or died; the caller refits in-process instead.

    A :class:`~hpinsight.exceptions.HPInsightError` and a ``RuntimeError``.
    """


def _tasks() -> dict[str, Any]:
    from ._tasks import TASKS

    return TASKS


def _write(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class RefitWorker:
    """A lazily started child process that runs one task at a time.

    Examples
    --------
    >>> import hpinsight as hp
    >>> from hpinsight.integrations._worker import RefitWorker
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("y", 0, 1)])
    >>> configs = space.sample(40, seed=0)
    >>> y = [c["x"] ** 2 for c in configs]
    >>> worker = RefitWorker()
    >>> result, caught = worker.run("fanova", hp.TrialHistory(space, configs, y), seed=0)
    >>> result.ranking()[0].params, caught
    (('x',), [])
    >>> worker.close()
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._finalizer: weakref.finalize | None = None

    @property
    def pid(self) -> int | None:
        """Process id of the child, None before the first task or after :meth:`close`."""
        proc = self._proc
        return None if proc is None or proc.poll() is not None else proc.pid

    def run(self, task: str, *args: Any, **kwargs: Any) -> tuple[Any, list[str]]:
        """Run ``task(*args, **kwargs)`` in the child.

        Returns
        -------
        result : object
            What the task returned.
        warnings : list of str
            Warnings the task emitted, as "Category: message".

        Raises
        ------
        WorkerError
            The child could not be started, or died; it is stopped and the
            next call starts a new one.
        Exception
            What the task itself raised, re-raised here.
        """
        with self._lock:
            proc = self._start()
            assert proc.stdin is not None
            assert proc.stdout is not None
            try:
                _write(proc.stdin, (task, args, kwargs))
                status, payload, caught = _read(proc.stdout)
            except (OSError, EOFError, pickle.PickleError) as exc:
                detail = self._stop()
                raise WorkerError(f"the refit process stopped unexpectedly{detail}") from exc
            except BaseException:
                # interrupted between the task and its answer (Ctrl-C while a decision is
                # fitted): the answer would stay in the pipe and every later task would
                # read the one before its own; the busy child is killed at once, and the
                # next task starts a new one
                self._stop(timeout=0.0)
                raise
        if status == "error":
            raise payload
        return payload, caught

    def close(self, timeout: float = 10.0) -> None:
        """Stop the child (it exits when its input closes); kill it after ``timeout`` s."""
        with self._lock:
            self._stop(timeout)

    # ------------------------------------------------------------------ internals
    def _start(self) -> subprocess.Popen[bytes]:  # holding self._lock
        if self._proc is not None:
            if self._proc.poll() is None:
                return self._proc
            # it died between tasks (killed, out of memory): the same news as dying in one,
            # whichever of the two the timing happens to give
            raise WorkerError(f"the refit process stopped unexpectedly{self._stop()}")
        if not sys.executable:
            raise WorkerError("there is no Python executable to start a refit process with")
        env = dict(os.environ)
        # the child imports what this process imports: this very hpinsight first (also
        # when it is not installed), then this process's own import path in its order.
        # Started with -P, Python does not put the working directory first: run from a
        # folder holding a directory named scipy or hpinsight, the child imported that
        # one, failed twice, and refits went on in a thread for the rest of the study
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(_import_path(root))
        # a helper in the background: one core for its linear algebra (unless the user set
        # the thread counts), so that the study it serves keeps the others
        for var in _THREAD_VARS:
            env.setdefault(var, "1")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the child
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "hpinsight.integrations._worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env,
            )
        except OSError as exc:
            self._stderr.close()
            self._stderr = None
            raise WorkerError(f"could not start a refit process: {exc}") from exc
        self._finalizer = weakref.finalize(self, _terminate, self._proc, self._stderr)
        return self._proc

    def _stop(self, timeout: float = 10.0) -> str:  # holding self._lock
        """Stop the child and return the tail of what it wrote to stderr (for messages)."""
        proc, err = self._proc, self._stderr
        self._proc = self._stderr = None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if proc is None:
            return ""
        _terminate(proc, None, timeout)
        detail = ""
        if err is not None:
            err.seek(0)
            tail = err.read()[-2000:].decode(errors="replace").strip()
            err.close()
            if tail:
                detail = f" (exit code {proc.returncode}; it said: {tail})"
        return detail or f" (exit code {proc.returncode})"


#: What tells the child to end (it also ends at the end of its input).
_STOP = None


def _import_path(root: str) -> list[str]:
    """``root``, then this process's ``sys.path`` as absolute folders (``''``, the working
    directory of an interactive session, as the folder it names now), each once; entries
    that cannot stand in ``PYTHONPATH`` (not text, or holding its separator) left out."""
    entries = [root] + [os.path.abspath(p or os.curdir) for p in sys.path
                        if isinstance(p, str) and os.pathsep not in p]
    return list(dict.fromkeys(entries))


def _terminate(proc: subprocess.Popen[bytes], err: IO[bytes] | None, timeout: float = 10.0) -> None:
    try:
        if proc.stdin is not None:
            # Said, not only implied by closing the pipe: a process the user forked from
            # this one (a multiprocessing pool of the "fork" kind) holds a copy of the
            # pipe's writing end, so the child would never see the end of its input and
            # close(wait=True) waited the whole timeout (10 s) before killing it.
            with contextlib.suppress(OSError, ValueError):
                _write(proc.stdin, _STOP)
            proc.stdin.close()
        proc.wait(timeout)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        if err is not None:
            err.close()


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(os, "nice"):  # the study comes first when both want a core
        with contextlib.suppress(OSError):
            os.nice(10)
    tasks = _tasks()
    while True:
        try:
            message = _read(stdin)
        except EOFError:
            return 0
        if message is _STOP:
            return 0
        task, args, kwargs = message
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                answer: tuple[str, Any, list[str]] = ("ok", tasks[task](*args, **kwargs), [])
            except Exception as exc:
                answer = ("error", exc, [])
        messages = [f"{w.category.__name__}: {w.message}" for w in caught]
        answer = (answer[0], answer[1], messages)
        try:
            _write(stdout, answer)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            _write(stdout, ("error", RuntimeError(f"{answer[1]!r} (unpicklable: {exc})"), messages))


if __name__ == "__main__":
    # answers go to the original stdout; anything else printed there would corrupt them
    _answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.exit(_serve(sys.stdin.buffer, _answers))
