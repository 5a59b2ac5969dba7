"""Optuna storages on the command line: open one from a URL or a journal file path, say
which studies it holds, describe it without its password, and check the objective asked
for. Shared by ``hpinsight watch`` and ``hpinsight report``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["describe", "known_studies", "objective_argument", "objective_problem", "open_storage"]

#: The first bytes of every SQLite database file.
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Longest first line read to recognise a journal (a record holding large user attributes
#: can be longer; such a line is accepted if it starts like a JSON object).
_MAX_FIRST_LINE = 1 << 20



def open_storage(optuna: Any, spec: str) -> Any:
    """Open ``--storage`` for reading; never creates a database or a journal file.

    Raises FileNotFoundError for a missing SQLite or journal file and ValueError for a
    file that is not an Optuna journal, each saying what to pass instead.
    """
    if "://" in spec:
        sqlite_file = _sqlite_file(spec)
        if sqlite_file is not None and not sqlite_file.exists():
            # RDBStorage would create an empty database there and then find no study
            where = "" if sqlite_file.is_absolute() else f" (relative to {Path.cwd()})"
            raise FileNotFoundError(
                f"the SQLite file {str(sqlite_file)!r}{where} does not exist; --storage reads "
                "an existing study and creates nothing, so check the path (sqlite:///rel.db "
                "is relative to the current folder, sqlite:////abs/path.db is absolute)")
        if sqlite_file is not None:
            _check_sqlite(sqlite_file)
        try:
            # without creating Optuna's tables: RDBStorage wrote its 13 tables into any
            # database it was pointed at (an application's own, or an empty file)
            return optuna.storages.RDBStorage(spec, skip_table_creation=True)
        except optuna.exceptions.StorageInternalError as exc:
            cause = exc.__cause__ or exc.__context__
            if _is_connection_error(cause):
                # Optuna words every failure of its first commit as "invalid data in the
                # commit"; a server that is down or a wrong host or password is not that
                raise ConnectionError(
                    f"cannot connect to its server: {_driver_message(cause)}. Is the server "
                    "running, and are the host, port, user and password in --storage "
                    "right?") from exc
            raise ValueError(
                f"{describe(spec)} holds no Optuna storage this version of Optuna can read "
                f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                "--storage reads an existing study and creates nothing") from exc
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(
            f"{spec!r} is neither an RDB URL (with '://') nor an existing journal file"
        )
    _check_journal(path)
    journal = optuna.storages.journal
    return optuna.storages.JournalStorage(journal.JournalFileBackend(str(path)))


def _is_connection_error(exc: BaseException | None) -> bool:
    """Whether ``exc`` is SQLAlchemy's error for a database that could not be reached or
    refused the login (an ``OperationalError``: the first commit is the first connection)."""
    from sqlalchemy import exc as sa  # comes with Optuna

    return isinstance(exc, sa.OperationalError)


def _driver_message(exc: BaseException) -> str:
    """The driver's own message: SQLAlchemy's first line without its ``(driver.Error)``
    prefix."""
    line = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return line[0] if line else type(exc).__name__


def _sqlite_file(spec: str) -> Path | None:
    """The database file of an SQLite URL; None for other URLs and in-memory databases."""
    from sqlalchemy.engine import make_url  # comes with Optuna

    try:
        url = make_url(spec)
    except Exception:  # a malformed URL: RDBStorage says what is wrong with it
        return None
    database = url.database
    if url.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:") and str(url.query.get("uri", "")).lower() == "true":
        return None  # an SQLite URI filename: left to SQLite (without uri=true it is a path)
    return Path(database)


def _check_sqlite(path: Path) -> None:
    """Raise ValueError unless ``path`` is an SQLite database holding Optuna's tables;
    read only (an application's database, or an empty file, is left as it was)."""
    try:
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as db:
            tables = {row[0] for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path} is not an SQLite database ({exc}); give the file the "
                         "study was created in") from exc
    if not {"studies", "version_info"} <= tables:
        held = f"its tables: {', '.join(sorted(tables))}" if tables else "it holds no table"
        raise ValueError(f"{path} is not an Optuna storage ({held}); give the file the study "
                         "was created in")


def _check_journal(path: Path) -> None:
    """Raise ValueError unless ``path`` is empty or starts with an Optuna journal record."""
    with path.open("rb") as f:
        first = f.readline(_MAX_FIRST_LINE)
    if first.startswith(_SQLITE_MAGIC):
        raise ValueError(
            f"{path} is an SQLite database, not an Optuna journal file; give it as a URL: "
            f"sqlite:///{path}")
    text = first.strip()
    if not text:
        return  # an empty journal: load_study then names the studies there (none)
    if len(first) >= _MAX_FIRST_LINE and not first.endswith(b"\n"):
        ok = text.startswith(b"{")
    else:
        try:
            record = json.loads(text)
        except ValueError:  # not JSON, or not UTF-8
            record = None
        ok = isinstance(record, dict) and "op_code" in record
    if not ok:
        raise ValueError(
            f"{path} is not an Optuna journal file (its first line is not a JSON journal "
            "record) and not a database URL; give an RDB URL like sqlite:///study.db or a "
            "journal file written by JournalStorage")


def known_studies(optuna: Any, storage: Any) -> str:
    if storage is None:
        return ""
    try:
        names = optuna.get_all_study_names(storage)
    except Exception:
        return ""
    return f" (studies there: {', '.join(map(repr, names)) or 'none'})"


#: Query keys of a database URL that are not echoed (``?password=...`` is a libpq form).
_SECRET_KEYS = ("pass", "pwd", "secret", "token", "key")


def describe(spec: str) -> str:
    """``--storage`` in words, without its credentials: the user name, the password and
    every query key that may hold a secret are left out; an SQLite URL as its file."""
    if "://" not in spec:
        return f"journal {spec}"
    from sqlalchemy.engine import make_url  # comes with Optuna

    try:
        url = make_url(spec)
    except Exception:  # a malformed URL: its scheme alone
        return f"{spec.partition('://')[0]}://..."
    if url.get_backend_name() == "sqlite":
        return f"{url.drivername}:///{url.database or ''}"
    hidden = [k for k in url.query if any(s in k.lower() for s in _SECRET_KEYS)]
    url = url._replace(username=None, password=None).difference_update_query(hidden)
    return url.render_as_string(hide_password=True)


def objective_argument(text: str) -> int | str:
    """``--objective``: an index (``1``), a name (``values_1``, a metric name) or ``front``."""
    return int(text) if text.isdigit() else text


def objective_problem(study: Any, objective: int | str | None) -> str | None:
    """What is wrong with ``--objective`` for ``study``, in the command line's words (the
    objective is resolved as everywhere else: ``adapters._optuna.resolve_objective``)."""
    from ..adapters._optuna import objective_names, resolve_objective

    n = len(study.directions)
    names = objective_names(study)
    try:
        resolve_objective("--objective", study.directions, objective, names)
    except (TypeError, ValueError):
        pass
    else:
        return None
    valid = ", ".join([*names, *(["front"] if n > 1 else [])])
    if isinstance(objective, int):
        return (f"--objective {objective} is out of range: study {study.study_name!r} has "
                f"{n} objective(s); use --objective 0"
                f"{f' to {n - 1}, or one of {valid}' if n > 1 else ''}.")
    return (f"--objective {objective!r} names no objective of study {study.study_name!r}; "
            f"use one of {valid}"
            f"{f' or an index 0 to {n - 1}' if n > 1 else ''}.")
