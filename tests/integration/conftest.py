"""A throwaway PostgreSQL server for the end-to-end tests (distributed Optuna studies).

The session-scoped ``postgres_url`` fixture runs ``initdb`` in a temporary directory,
starts a server bound to 127.0.0.1 on a free port with trust authentication on
loopback only, creates an empty database and yields an SQLAlchemy URL for
``optuna.storages.RDBStorage``. The server is stopped and its data deleted when the
session ends. PostgreSQL refuses to run as root, so under root the server runs as
the ``postgres`` system user that Debian's ``postgresql`` package creates.

The ``read_lines`` fixture reads a started subprocess's output as it comes, so that a
test waits for the line that says the process is ready instead of sleeping.
"""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

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


@pytest.fixture
def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a server a test starts."""
    return _free_port()


@pytest.fixture(scope="session")
def chromium() -> str:
    """The headless browser the browser tests drive: Debian's ``chromium`` package."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("the browser tests need Chromium: install Debian's `chromium` package "
                "(apt-get install chromium); .ci/run does this when it is missing")


class PostgresServer:
    """A PostgreSQL server in a temporary directory: its URL, and stop/start for tests of
    what happens while it is down."""

    def __init__(self, bin_dir: Path, tmp: Path, as_user: list[str]) -> None:
        self.tmp, self.as_user = tmp, as_user
        self.data, self.log, self.port = tmp / "data", tmp / "server.log", _free_port()
        self.pg_ctl = str(bin_dir / "pg_ctl")
        self.initdb = str(bin_dir / "initdb")
        self.url = f"postgresql+psycopg://{ROLE}@127.0.0.1:{self.port}/{DATABASE}"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        # cwd=tmp: the postgres user may not be allowed into the caller's directory
        return subprocess.run([*self.as_user, *args], cwd=self.tmp, capture_output=True, text=True)

    def fail(self, what: str, detail: str) -> NoReturn:
        log_text = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
        pytest.fail(f"{what}:\n{detail}\n--- server log ---\n{log_text}")

    def init(self) -> None:
        init = self.run(self.initdb, "-D", str(self.data), "-U", ROLE, "--auth=trust",
                        "--encoding=UTF8", "--locale=C", "--no-sync")
        if init.returncode:
            self.fail("initdb failed", init.stdout + init.stderr)
        # initdb's trust entries in pg_hba.conf are for local sockets and loopback only
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.tmp}'\nmax_connections = 100\n"
                       "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        import psycopg

        start = self.run(self.pg_ctl, "start", "-D", str(self.data), "-l", str(self.log),
                         "-w", "-t", str(int(START_TIMEOUT)))
        if start.returncode:
            self.fail("pg_ctl start failed", start.stdout + start.stderr)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with psycopg.connect(host="127.0.0.1", port=self.port, user=ROLE, dbname="postgres",
                                     connect_timeout=2, autocommit=True):
                    return
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    self.fail(f"the server did not accept connections within {START_TIMEOUT} s",
                              str(exc))
                time.sleep(0.1)

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m MODE``: "fast" disconnects every client, as an admin's restart does."""
        if (self.data / "postmaster.pid").exists() and self.run(
                self.pg_ctl, "stop", "-D", str(self.data), "-m", mode).returncode:
            self.run(self.pg_ctl, "stop", "-D", str(self.data), "-m", "immediate")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (see the module docstring)."""
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
    server = PostgresServer(bin_dir, tmp, as_user)
    try:
        server.init()
        server.start()
        with psycopg.connect(host="127.0.0.1", port=server.port, user=ROLE, dbname="postgres",
                             connect_timeout=2, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        yield server
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """``postgresql+psycopg://postgres@127.0.0.1:PORT/hpinsight`` on a server for this session."""
    return postgres_server.url


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


class ProcessLines:
    """The stdout and stderr lines of a running subprocess, each read by a thread as they
    are written, and waits for a line with a given text (see :func:`read_lines`)."""

    def __init__(self, proc: subprocess.Popen[str], what: str) -> None:
        if proc.stdout is None or proc.stderr is None:
            raise ValueError("start the process with stdout=PIPE, stderr=PIPE, text=True")
        self.proc, self.what = proc, what
        self.lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._ended = {"stdout": False, "stderr": False}
        self._changed = threading.Condition()
        self._readers = [
            threading.Thread(target=self._read, args=(name, stream), daemon=True,
                             name=f"{what} {name}")
            for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr))
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str, stream: Any) -> None:
        for line in iter(stream.readline, ""):
            with self._changed:
                self.lines[name].append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._ended[name] = True
            self._changed.notify_all()

    def text(self, stream: str = "stdout") -> str:
        with self._changed:
            return "\n".join(self.lines[stream])

    def _report(self) -> str:
        code = self.proc.poll()
        state = "still running" if code is None else f"exited with code {code}"
        return (f"{self.what} ({state}) wrote\n--- stdout ---\n{self.text('stdout')}"
                f"\n--- stderr ---\n{self.text('stderr')}")

    def wait_for(self, text: str, *, stream: str = "stdout", timeout: float = 60.0,
                 after: int = 0) -> int:
        """Block until a line of ``stream`` (from line ``after`` on) contains ``text``;
        return the number of lines read up to and including it. Fails the test, with
        everything the process wrote, on timeout or when the stream ends first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                lines = self.lines[stream]
                for i in range(after, len(lines)):
                    if text in lines[i]:
                        return i + 1
                if self._ended[stream]:
                    pytest.fail(f"{stream} ended without a line containing {text!r}; "
                                + self._report())
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"no line containing {text!r} on {stream} within {timeout:.0f} s; "
                                + self._report())
                self._changed.wait(left)

    def finish(self, timeout: float = 60.0) -> tuple[str, str]:
        """Wait for the process to exit and for its output to end; (stdout, stderr)."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"did not exit within {timeout:.0f} s; " + self._report())
        for reader in self._readers:
            reader.join(timeout)
        return self.text("stdout"), self.text("stderr")

    def close(self) -> None:
        """Kill the process if it still runs, and close its pipes (fixture teardown)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for reader in self._readers:
            reader.join(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def read_lines() -> Iterator[Callable[..., ProcessLines]]:
    """``read_lines(proc, what)`` -> :class:`ProcessLines` of a process started with
    ``stdout=PIPE, stderr=PIPE, text=True``; killed at teardown if it still runs."""
    started: list[ProcessLines] = []

    def read(proc: subprocess.Popen[str], what: str = "the process") -> ProcessLines:
        started.append(ProcessLines(proc, what))
        return started[-1]

    yield read
    for lines in started:
        lines.close()
