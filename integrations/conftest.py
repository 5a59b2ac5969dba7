"""A throwaway PostgreSQL server for the end-to-end tests (distributed Optuna studies).

The session-scoped ``postgres_url`` fixture runs ``initdb`` in a temporary directory,
starts a server bound to 127.0.0.1 on a free port with trust authentication on
loopback only, creates an empty database and yields an SQLAlchemy URL for
``optuna.storages.RDBStorage``. The server is stopped and its data deleted when the
session ends. PostgreSQL refuses to run as root, so under root the server runs as
the ``postgres`` system user that Debian's ``postgresql`` package creates.
"""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest

SETUP_HINT = (
    "the PostgreSQL integration tests need a PostgreSQL server and psycopg 3: "
    "install Debian's `postgresql` package (apt-get install postgresql) and "
    '`pip install "psycopg[binary]"` (both come with .ci/run and the [dev] extra)'
)
ROLE = "postgres"
DATABASE = "hpinsight"
START_TIMEOUT = 30.0


def _server_bin_dir() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``: the newest Debian version, else PATH."""

    def version(bin_dir: Path) -> tuple[int, ...]:
        return tuple(int(p) for p in bin_dir.parent.name.split(".") if p.isdigit())

    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
    on_path = shutil.which("initdb")
    for bin_dir in [*debian, *([Path(on_path).resolve().parent] if on_path else [])]:
        if (bin_dir / "initdb").is_file() and (bin_dir / "pg_ctl").is_file():
            return bin_dir
    pytest.fail(f"no PostgreSQL server binaries (initdb, pg_ctl) found; {SETUP_HINT}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """``postgresql+psycopg://postgres@127.0.0.1:PORT/hpinsight`` on a server for this session."""
    try:
        import psycopg
    except ImportError as exc:
        pytest.fail(f"cannot import psycopg ({exc}); {SETUP_HINT}")
    bin_dir = _server_bin_dir()
    as_user: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="hpinsight-pg-"))
    if os.geteuid() == 0:
        try:
            pg_user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(tmp)
            pytest.fail(f"running as root but there is no `postgres` system user; {SETUP_HINT}")
        os.chown(tmp, pg_user.pw_uid, pg_user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log, port = tmp / "data", tmp / "server.log", _free_port()
    pg_ctl = str(bin_dir / "pg_ctl")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        # cwd=tmp: the postgres user may not be allowed into the caller's directory
        return subprocess.run([*as_user, *args], cwd=tmp, capture_output=True, text=True)

    def fail(what: str, detail: str) -> NoReturn:
        log_text = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        pytest.fail(f"{what}:\n{detail}\n--- server log ---\n{log_text}")

    try:
        init = run(str(bin_dir / "initdb"), "-D", str(data), "-U", ROLE, "--auth=trust",
                   "--encoding=UTF8", "--locale=C", "--no-sync")
        if init.returncode:
            fail("initdb failed", init.stdout + init.stderr)
        # initdb's trust entries in pg_hba.conf are for local sockets and loopback only
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(f"listen_addresses = '127.0.0.1'\nport = {port}\n"
                       f"unix_socket_directories = '{tmp}'\nmax_connections = 100\n"
                       "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
        start = run(pg_ctl, "start", "-D", str(data), "-l", str(log),
                    "-w", "-t", str(int(START_TIMEOUT)))
        if start.returncode:
            fail("pg_ctl start failed", start.stdout + start.stderr)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with psycopg.connect(host="127.0.0.1", port=port, user=ROLE, dbname="postgres",
                                     connect_timeout=2, autocommit=True) as conn:
                    conn.execute(f"CREATE DATABASE {DATABASE}")
                break
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    fail(f"the server did not accept connections within {START_TIMEOUT} s", str(exc))
                time.sleep(0.1)
        yield f"postgresql+psycopg://{ROLE}@127.0.0.1:{port}/{DATABASE}"
    finally:
        if (data / "postmaster.pid").exists() and run(pg_ctl, "stop", "-D", str(data), "-m", "fast").returncode:
            run(pg_ctl, "stop", "-D", str(data), "-m", "immediate")
        shutil.rmtree(tmp, ignore_errors=True)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def capture_log() -> Iterator[Callable[[str], list[str]]]:
    """``capture_log(logger_name)`` -> the list the logger's messages (INFO and up) land in."""
    attached: list[tuple[logging.Logger, _Lines, int]] = []

    def capture(name: str) -> list[str]:
        logger = logging.getLogger(name)
        handler = _Lines()
        attached.append((logger, handler, logger.level))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        return handler.lines

    yield capture
    for logger, handler, level in reversed(attached):
        logger.setLevel(level)
        logger.removeHandler(handler)
