"""Where the jobs of a long computation run, and where their results are kept.

:func:`run_jobs` runs a list of independent jobs with joblib on this machine, or on a
``dask.distributed`` cluster when a client (or a scheduler address) is given; the
scheduling is Dask's or joblib's, never ours. Results come back in job order and do not
depend on where a job ran, since every job carries its own seeds. The tuning-risk
experiment (:mod:`hpinsight.experiments`) and the importance across studies
(:func:`hpinsight.importance_across_studies`) run their jobs through it, with the
progress display of :func:`progress_bar`.

With a ``store`` (a SQLite file), every result is written the moment its job finishes,
under a key that fingerprints everything the job computes from (the function, the
estimator and its parameters, the data's bytes, the seeds and settings). A run that is
killed, or that loses a worker, is started again with the same store and runs only the
jobs whose results are missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import pickle
import sqlite3
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._optional import import_optional
from .exceptions import HPInsightError

__all__ = ["ClusterJobError", "FitStore", "fingerprint", "progress_bar", "run_jobs"]

class ClusterJobError(HPInsightError, RuntimeError):
    """A job sent to a Dask cluster was lost (not merely failed: failures raise as they
    are). A :class:`~hpinsight.exceptions.HPInsightError` and a ``RuntimeError``."""


#: Bump when the meaning of a stored result changes, so old stores are not reused.
STORE_VERSION = 1


def fingerprint(obj: Any) -> Any:
    """A picklable, stable description of ``obj`` for a job's key: arrays by their bytes,
    estimators by their class and parameters, containers item by item."""
    if isinstance(obj, np.ndarray):
        data = np.ascontiguousarray(obj)
        digest = hashlib.sha256(data.tobytes() if data.dtype != object
                                else repr(data.tolist()).encode()).hexdigest()
        return ("array", str(data.dtype), data.shape, digest)
    if hasattr(obj, "to_numpy") and hasattr(obj, "shape"):  # pandas DataFrame or Series
        columns = tuple(map(str, getattr(obj, "columns", ())))
        return ("frame", columns, fingerprint(obj.to_numpy()))
    if hasattr(obj, "get_params") and hasattr(obj, "fit"):  # a scikit-learn estimator
        return ("estimator", type(obj).__qualname__, fingerprint(obj.get_params(deep=False)))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__qualname__,
                tuple((f.name, fingerprint(getattr(obj, f.name))) for f in dataclasses.fields(obj)))
    if isinstance(obj, dict):
        return ("dict", tuple(sorted((repr(k), fingerprint(v)) for k, v in obj.items())))
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(fingerprint(v) for v in obj))
    if hasattr(obj, "params") and hasattr(obj, "conditions") and hasattr(obj, "names"):
        # a SearchSpace: every parameter and condition (its repr names only the kinds,
        # and a widened range reused the narrow one's results)
        return ("space", fingerprint(list(obj.params)), fingerprint(list(obj.conditions)))
    if hasattr(obj, "tocsr") and hasattr(obj, "shape"):  # a scipy.sparse matrix or array
        csr = obj.tocsr()
        return ("sparse", csr.shape, fingerprint(csr.data), fingerprint(csr.indices),
                fingerprint(csr.indptr))
    if isinstance(obj, functools.partial):
        return ("partial", fingerprint(obj.func), fingerprint(obj.args),
                fingerprint(obj.keywords))
    code = getattr(obj, "__code__", None)
    if code is not None:
        # a function (a scorer, a transformer's func): its repr holds its address, new in
        # each process, and a stored run was never found again; by name and code instead
        wrapped = getattr(obj, "__wrapped__", None)  # (a decorator's wrapper is shared)
        return ("function", getattr(obj, "__module__", None), getattr(obj, "__qualname__", None),
                _code_digest(code), None if wrapped is None else fingerprint(wrapped))
    return ("value", repr(obj))


def _code_digest(code: Any) -> str:
    """A digest of a function's code that is the same in every process: its bytecode,
    names and constants, nested functions' code by their own digest (their repr holds
    an address)."""
    consts = tuple(_code_digest(c) if hasattr(c, "co_code") else repr(c)
                   for c in code.co_consts)
    return hashlib.sha256(repr((code.co_code, consts, code.co_names)).encode()).hexdigest()


def _key(func: Callable[..., Any], job: Sequence[Any]) -> str:
    ident = (STORE_VERSION, f"{func.__module__}.{func.__qualname__}", fingerprint(job))
    return hashlib.sha256(repr(ident).encode()).hexdigest()


class FitStore:
    """Finished jobs' results in a SQLite file, written as each job finishes.

    Parameters
    ----------
    path : str or pathlib.Path
        The file (created with its folder if missing).

    Attributes
    ----------
    run : str
        This process's run id, recorded with every result it writes.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.run = uuid.uuid4().hex
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS results "
                       "(key TEXT PRIMARY KEY, run TEXT NOT NULL, value BLOB NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def get(self, keys: Sequence[str]) -> dict[str, Any]:
        """The stored results among ``keys``."""
        wanted = set(keys)
        out: dict[str, Any] = {}
        with self._connect() as db:
            for key, value in db.execute("SELECT key, value FROM results"):
                if key in wanted:
                    out[key] = pickle.loads(value)
        return out

    def put(self, key: str, value: Any) -> None:
        """Store one finished job's result (a result already stored is kept)."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO results VALUES (?, ?, ?)",
                       (key, self.run, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))

    def runs(self) -> dict[str, int]:
        """How many results each run wrote."""
        with self._connect() as db:
            return dict(db.execute("SELECT run, COUNT(*) FROM results GROUP BY run"))


def run_jobs(
    func: Callable[..., Any],
    jobs: list[tuple[Any, ...]],
    *,
    n_jobs: int | None,
    client: Any,
    store: FitStore | None,
    desc: str,
    order: Sequence[int],
    done: Callable[[int], None],
    caller: str = "tuning_risk_experiment",
) -> list[Any]:
    """``[func(*job) for job in jobs]``: results in job order, dispatched in ``order``;
    ``done(i)`` is called as job ``i`` finishes (or is found in the store). ``caller``
    names the public function in messages (a missing ``distributed``, a lost job)."""
    out: list[Any] = [None] * len(jobs)
    keys = [_key(func, job) for job in jobs] if store is not None else []
    stored = store.get(keys) if store is not None else {}
    todo = []
    for i in order:
        if store is not None and keys[i] in stored:
            out[i] = stored[keys[i]]
            done(i)
        else:
            todo.append(i)
    for i, result in _execute(func, jobs, todo, n_jobs, client, caller):
        if store is not None:
            store.put(keys[i], result)
        out[i] = result
        done(i)
    return out


def _indexed(func: Callable[..., Any], i: int, *job: Any) -> tuple[int, Any]:
    """``(i, func(*job))``: a job's result with its place, for results that come back
    in the order they finish."""
    return i, func(*job)


def _execute(func: Callable[..., Any], jobs: list[tuple[Any, ...]], todo: list[int],
             n_jobs: int | None, client: Any, caller: str) -> Iterator[tuple[int, Any]]:
    """``(i, func(*jobs[i]))`` for every ``i`` in ``todo``, as they finish."""
    if not todo:
        return
    if client is None:
        from joblib import Parallel, delayed

        # one job per batch: jobs differ in cost by orders of magnitude (data sets), and
        # joblib's automatic batching would hand several slow ones to a single worker
        # as each finishes, not in the order sent: the slowest, sent first, held every
        # result back from the store, and Ctrl-C lost jobs finished long before
        parallel = Parallel(n_jobs=n_jobs, batch_size=1, return_as="generator_unordered")
        yield from parallel(delayed(_indexed)(func, i, *jobs[i]) for i in todo)
        return
    distributed = import_optional("distributed", f"{caller}(client=...)")
    own = isinstance(client, str)
    if own:
        address = client
        try:
            client = distributed.Client(address)
        except (OSError, TimeoutError) as exc:  # (no scheduler there, or not reachable)
            raise ClusterJobError(
                f"{caller} could not reach a Dask scheduler at {address!r} ({exc}). Start "
                "one there (dask scheduler), or check the address; client=None runs the "
                "jobs on this machine.") from exc
    try:
        shared = [_scatter(client, [jobs[i] for i in todo])]  # the latest copy of the data
        # the copy each job was sent with, and how often it was sent again
        sent: dict[Any, tuple[int, int, int]] = {}

        def submit(i: int, attempt: int) -> Any:
            # pure=False: every job runs (the same arguments never stand for two results
            # here anyway); retries: a job on a worker that died runs again elsewhere
            future = client.submit(func, *(shared[-1].get(id(a), a) for a in jobs[i]),
                                   pure=False, retries=3)
            sent[future.key] = (i, len(shared) - 1, attempt)
            return future

        finished = distributed.as_completed([submit(i, 0) for i in todo], with_results=True)
        for future, result in finished:
            i, copy, attempt = sent.pop(future.key)
            if future.status == "finished":
                yield i, result
                continue
            # cancelled rather than raised: the worker that held its data died. Dask's
            # memory manager keeps one copy of scattered data however widely it was
            # broadcast, so the data go out again (once for all the jobs that lost them)
            if attempt >= DATA_RESENDS:
                raise ClusterJobError(
                    f"a job of {caller} on the Dask cluster did not finish ({future.status}: "
                    f"{result!r}), {attempt + 1} times. Finished jobs are kept when a store= "
                    "is given: run the same call again with the same store to resume.")
            if copy == len(shared) - 1:
                shared.append(_scatter(client, [jobs[j] for j in todo]))
            finished.add(submit(i, attempt + 1))
    finally:
        if own:
            client.close()


#: How often a job whose data a dying worker took with it is sent again, with the data.
DATA_RESENDS = 3


def _scatter(client: Any, jobs: list[tuple[Any, ...]]) -> dict[int, Any]:
    """Data arguments (arrays, data frames) sent to the cluster once each, by object id,
    instead of once per job that uses them."""
    data = {id(a): a for job in jobs for a in job
            if isinstance(a, np.ndarray) or (hasattr(a, "to_numpy") and hasattr(a, "shape"))}
    if not data:
        return {}
    # broadcast: a copy on every worker to start with (Dask's memory manager soon keeps
    # one; _execute sends the data again to jobs that lose theirs)
    futures = client.scatter(list(data.values()), hash=False, broadcast=True)
    return dict(zip(data, futures, strict=True))


class _NoBar:
    def update(self, n: int) -> None:
        pass


class _Reporter:
    """Counts finished work and hands it to a user's ``progress(desc, done, total)``."""

    def __init__(self, report: Callable[[str, int, int], None], total: int, desc: str) -> None:
        self.report, self.total, self.desc, self.done = report, total, desc, 0

    def update(self, n: int) -> None:
        self.done += n
        self.report(self.desc, self.done, self.total)


@contextlib.contextmanager
def progress_bar(enabled: bool | Callable[[str, int, int], None], total: int,
                 desc: str) -> Iterator[Any]:
    """Something with ``update(n)``: a tqdm bar on stderr (``enabled=True``, when tqdm is
    installed), the user's ``progress(desc, done, total)`` (a callable), or nothing."""
    if callable(enabled):
        yield _Reporter(enabled, total, desc)
        return
    bar: Any = None
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:
            bar = None
        else:
            bar = tqdm(total=total, desc=desc, file=sys.stderr, dynamic_ncols=True)
    try:
        yield bar if bar is not None else _NoBar()
    finally:
        if bar is not None:
            bar.close()
