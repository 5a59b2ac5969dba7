"""What the command line reads and writes: storages, SMAC run folders, ``--out``, ``--version``.

Reading never creates anything; a path that is not what the option expects is named with
what it is not and what to pass instead.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest

from hpinsight.cli import main

SMAC_RUN = Path(__file__).parent / "data" / "smac20_run"


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Optuna journal file holding study 'j' (30 trials)."""
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    path = tmp_path_factory.mktemp("journal") / "study.log"
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(path)))
    study = optuna.create_study(study_name="j", storage=storage,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: (math.log10(t.suggest_float("lr", 1e-4, 1.0, log=True)) + 2) ** 2
                   + 0.1 * t.suggest_int("depth", 1, 8), n_trials=30)
    return path


def _storage_command(command: str, storage: str) -> list[str]:
    if command == "watch":
        return ["watch", "--storage", storage, "--study", "x", "--once"]
    return ["report", "--storage", storage, "--study", "x", "--json", "--out", "r.json"]


@pytest.mark.parametrize("command", ["report", "watch"])
@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_a_missing_sqlite_file_is_named_and_not_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    command: str, relative: bool,
) -> None:
    pytest.importorskip("optuna")
    monkeypatch.chdir(tmp_path)
    db = Path("such.db") if relative else tmp_path / "such.db"
    assert main(_storage_command(command, f"sqlite:///{db}")) == 1
    err = capsys.readouterr().err
    assert f"the SQLite file '{db}'" in err
    assert "does not exist" in err
    assert "--storage reads an existing study" in err
    assert "Record does not exist" not in err
    assert list(tmp_path.iterdir()) == []  # no database, no report


@pytest.mark.parametrize("command", ["report", "watch"])
def test_a_server_that_cannot_be_reached_is_said_so(
    capsys: pytest.CaptureFixture[str], command: str,
) -> None:
    # Optuna words a refused connection as "invalid data in the commit, e.g. exceeding max
    # length", which was all the command printed, behind "holds no Optuna storage"
    import socket

    pytest.importorskip("psycopg")
    with socket.socket() as probe:  # a loopback port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(_storage_command(command, f"postgresql://u@127.0.0.1:{port}/db")) == 1
    err = capsys.readouterr().err
    assert "cannot connect to its server" in err
    assert "refused" in err.lower()
    assert "invalid data" not in err
    assert "holds no Optuna storage" not in err


@pytest.mark.parametrize("command", ["report", "watch"])
def test_a_file_that_is_not_a_journal_says_what_it_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    pytest.importorskip("optuna")
    monkeypatch.chdir(tmp_path)
    Path("notes.md").write_text("# notes\n\nnot a study\n")
    assert main(_storage_command(command, "notes.md")) == 1
    err = capsys.readouterr().err
    assert ("notes.md is not an Optuna journal file (its first line is not a JSON journal "
            "record) and not a database URL") in err
    assert "sqlite:///study.db" in err
    assert "Expecting value" not in err
    # an SQLite database given as a path: the URL to give instead
    with sqlite3.connect("study.db") as con:
        con.execute("CREATE TABLE t (x)")
    con.close()
    assert main(_storage_command(command, "study.db")) == 1
    err = capsys.readouterr().err
    assert "study.db is an SQLite database, not an Optuna journal file" in err
    assert "sqlite:///study.db" in err
    assert Path("notes.md").read_text() == "# notes\n\nnot a study\n"  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md", "study.db"]


def test_a_real_journal_still_opens_and_out_dash_writes_only_json_to_stdout(
    journal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert main(["report", "--storage", str(journal), "--study", "j", "--json", "--out", "-",
                 "--top", "1", "--surrogate", "forest", "--n-trees", "8"], stdout=out) == 0
    data = json.loads(out.getvalue())
    assert next(iter(data)) == "schema"
    assert data["schema"] == "hpinsight.report/2"
    assert data["n_trials"] == 30
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing else on stdout
    lines = (out.getvalue() + captured.err).splitlines()
    assert not any(line.startswith("report: ") for line in lines)  # no "report: PATH" line
    assert list(tmp_path.iterdir()) == []  # no hpinsight-report.json, no '-' file


def test_out_dash_without_json_writes_the_html_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ConfigSpace")
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert main(["report", "--smac-run", str(SMAC_RUN), "--out", "-", "--top", "1",
                 "--surrogate", "forest", "--n-trees", "8"], stdout=out) == 0
    page = out.getvalue()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert page.rstrip().endswith("</html>")
    assert capsys.readouterr().out == ""
    assert list(tmp_path.iterdir()) == []  # no file named '-'


def test_out_in_a_missing_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "deeper" / "r.json"
    assert main(["report", "--smac-run", str(SMAC_RUN), "--json", "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"the folder of --out ({target.parent}) does not exist; create it first" in err
    assert not (tmp_path / "missing").exists()


def _copy_run(to: Path) -> Path:
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SMAC_RUN, to)
    return to


def test_smac_run_reads_only_the_folder_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outer = tmp_path / "outer"
    run = _copy_run(outer / "smac3_output" / "exp" / "0")  # one run, two levels down
    target = tmp_path / "r.json"
    assert main(["report", "--smac-run", str(outer), "--json", "--out", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"{outer} is not a SMAC run folder" in err
    assert "runhistory.json" in err
    assert f"\n  {run}\n" in err  # the run below, to copy
    assert not target.exists()
    # a file of the run: its folder is suggested, not read
    assert main(["report", "--smac-run", str(run / "runhistory.json"), "--json",
                 "--out", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"{run / 'runhistory.json'} is not a SMAC run folder" in err
    assert f"--smac-run {run}" in err
    # a folder with nothing below it
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", "--smac-run", str(empty), "--json", "--out", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"{empty} is not a SMAC run folder" in err
    assert "no run below it" in err
    assert not target.exists()


def test_smac_run_lists_at_most_ten_runs_below(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [_copy_run(tmp_path / "out" / f"exp{i:02d}" / "0") for i in range(12)]
    assert main(["report", "--smac-run", str(tmp_path / "out"), "--json",
                 "--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert "It holds 12 runs below it" in err
    listed = [line.strip() for line in err.splitlines() if line.startswith("  ")]
    assert listed == [*map(str, runs[:10]), "and 2 more"]


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"hpinsight {version('hpinsight')}\n"


@pytest.fixture
def watched(journal: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Callable[..., tuple[int, list[str]]]:
    """``watched(poll)`` runs ``hpinsight watch`` on :func:`journal`, each poll's trial
    count going through ``poll(n, count)`` (``n`` from 1, ``count()`` the real one; it
    may return other counts, or raise KeyboardInterrupt, Ctrl-C); returns the polls made
    and the lines written."""
    from hpinsight.cli import _watch

    real = _watch._counts

    def watch(poll: Callable[[int, Callable[[], dict[str, int]]], dict[str, int]]
              ) -> tuple[int, list[str]]:
        calls = {"n": 0}

        def counts(optuna: object, study: object) -> dict[str, int]:
            calls["n"] += 1
            return poll(calls["n"], lambda: real(optuna, study))

        monkeypatch.setattr(_watch, "_counts", counts)
        out = io.StringIO()
        assert main(["watch", "--storage", str(journal), "--study", "j", "--interval",
                     "0.01", "--min-trials", "10"], stdout=out) == 0
        return calls["n"], out.getvalue().splitlines()

    return watch


def test_watch_reports_a_trial_that_finished_between_its_count_and_its_fit(
    watched: Callable[..., tuple[int, list[str]]],
) -> None:
    """The watcher counts the trials, then the fit reads them again. When the last trial
    finishes in between, the fit has it; the status line and the next poll must too (the
    watcher once printed "29 complete, 1 running" and then nothing more: the next poll saw
    30, but a refit on the same 30 trials brings no news and printed nothing)."""

    def poll(n: int, count: Callable[[], dict[str, int]]) -> dict[str, int]:
        if n == 1:  # counted while the 30th trial was still running
            return {"COMPLETE": 29, "RUNNING": 1}
        if n > 3:  # Ctrl-C after a few polls
            raise KeyboardInterrupt
        return count()

    _, lines = watched(poll)
    status = [line for line in lines if " complete, " in line]
    assert status, lines
    assert "30 complete, 0 running" in status[-1], lines
    assert not any("29 complete" in line for line in status), lines
    assert lines[-1] == "stopped"


class _SignalsWhenCollected:
    """Sends SIGINT from ``__del__``: the handler's KeyboardInterrupt is raised inside the
    finalizer, where Python prints an exception and drops it (as inside SQLAlchemy's
    garbage-collection callbacks)."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_watch_stops_on_a_signal_whose_exception_was_dropped(
    watched: Callable[..., tuple[int, list[str]]],
) -> None:
    # the watcher of a PostgreSQL restart once ignored its SIGINT and polled on

    def poll(n: int, count: Callable[[], dict[str, int]]) -> dict[str, int]:
        if n == 3:
            _SignalsWhenCollected()  # collected at once: SIGINT, its exception dropped
        if n > 20:  # still polling: stop it, and the assertion below fails
            raise KeyboardInterrupt
        return count()

    polls, lines = watched(poll)
    assert polls == 3  # the poll the signal came in was the last
    assert lines[-1] == "stopped"


@pytest.mark.parametrize("command", ["report", "watch"])
def test_trees_for_the_gaussian_process_are_a_usage_error_not_dropped(
    journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
) -> None:
    # --n-trees without --surrogate forest was accepted and ignored: the report came
    # from the Gaussian process, and nothing said that the trees asked for went unused
    storage = str(journal)  # a journal file is read by its path
    args = (["report", "--storage", storage, "--study", "j", "--json", "--out",
             str(tmp_path / "r.json")] if command == "report"
            else ["watch", "--storage", storage, "--study", "j", "--once"])
    with pytest.raises(SystemExit) as exc:
        main([*args, "--n-trees", "5"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--n-trees 5 sets the trees of a forest" in err
    assert "add --surrogate forest, or drop --n-trees" in err
    assert list(tmp_path.iterdir()) == []  # nothing analysed, nothing written


@pytest.mark.parametrize("bad", [["--seed", "-3"], ["--surrogate", "forest", "--n-trees", "0"],
                                 ["--shrink-to", "auto", "--publish", "--shrink-after", "0"],
                                 ["--top", "0"]])
def test_watch_refuses_what_report_refuses(
    journal: Path, bad: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # accepted, --seed -3 and --n-trees 0 ended in a traceback, --shrink-after 0 in a
    # refit that failed on every poll, and --top 0 printed no parameter
    assert main(["watch", "--storage", str(journal), "--study", "j", "--once", *bad]) == 2
    # the argument given wrong, by name and value (one message named three or four)
    named, value = next((a, v) for a, v in itertools.pairwise(bad)
                        if a in ("--seed", "--n-trees", "--shrink-after", "--top"))
    err = capsys.readouterr().err
    assert f"{named} must be at least" in err
    assert f"(got {value})" in err
    assert err.count("must be at least") == 1
    if named != "--shrink-after":  # report checks the same, with the same words
        assert main(["report", "--storage", str(journal), "--study", "j", "--json", "--out",
                     "-", *[b for b in bad if b not in ("--shrink-to", "auto", "--publish")]]) == 2
        assert f"{named} must be at least" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "says"), [
    (["--smac-run", str(SMAC_RUN), "--study", "alpha"], "a SMAC run is given by --smac-run PATH alone"),
    (["--smac-run", str(SMAC_RUN), "--all-studies"], "a SMAC run is given by --smac-run PATH alone"),
])
def test_report_refuses_study_choices_beside_a_smac_run(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # --study was silently ignored, and --all-studies' message named a --study not given
    assert main(["report", *args, "--json", "--out", "-"]) == 2
    assert says in capsys.readouterr().err


def test_report_refuses_a_study_given_twice(journal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the error said the storage "holds 1 study"
    assert main(["report", "--storage", str(journal), "--study", "j", "--study", "j",
                 "--json", "--out", "-"]) == 2
    assert "--study j is given twice" in capsys.readouterr().err


def test_a_warning_is_a_line_of_the_command_not_python_s_source_listing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import warnings

    from hpinsight.cli import _report
    from hpinsight.exceptions import HPInsightWarning

    def run(args: object, out: object) -> int:
        warnings.warn("3 forbidden clause(s), which the importances do not model", HPInsightWarning,
                      stacklevel=2)
        return 0

    monkeypatch.setattr(_report, "run", run)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # shown, as outside the test suite
        before = warnings.showwarning
        assert main(["report", "--smac-run", str(SMAC_RUN)]) == 0
        after = warnings.showwarning
    err = capsys.readouterr().err
    assert "WARNING: 3 forbidden clause(s), which the importances do not model" in err
    assert "HPInsightWarning" not in err
    assert "warnings.warn(" not in err
    assert after is before  # the caller's is back


def test_all_studies_names_and_leaves_out_studies_it_cannot_compare(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A storage commonly holds a study created and never run: the comparison of the
    others goes on, and the left-out ones are named on stderr and in the document."""
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 's.db'}"
    for k, name in enumerate(("a", "b")):
        optuna.create_study(study_name=name, storage=url,
                            sampler=optuna.samplers.RandomSampler(seed=k)).optimize(
            lambda t: t.suggest_float("x", 0, 1) + 0.1 * t.suggest_float("y", 0, 1), n_trials=12)
    optuna.create_study(study_name="never-run", storage=url)
    short = optuna.create_study(study_name="short", storage=url)
    short.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    # studies of two objectives are compared on reaching their Pareto front, and left out
    # on the same grounds
    for name, n in (("mo-empty", 0), ("mo-short", 3), ("mo-ok", 12)):
        optuna.create_study(study_name=name, storage=url, directions=["minimize"] * 2,
                            sampler=optuna.samplers.RandomSampler(seed=2)).optimize(
            lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)), n_trials=n)
    out = tmp_path / "across.json"
    assert main(["report", "--storage", url, "--all-studies", "--json", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert ("WARNING: --all-studies leaves out study 'never-run': no finished trial with "
            "parameters." in err)
    assert ("WARNING: --all-studies leaves out study 'short': 3 usable trial(s), at least 10 "
            "needed." in err)
    doc = json.loads(out.read_text())
    assert doc["studies"] == ["a", "b", "mo-ok"]
    assert "WARNING: --all-studies leaves out study 'mo-empty'" in err
    assert "WARNING: --all-studies leaves out study 'mo-short': 3 usable trial(s)" in err
    assert doc["source"].endswith(
        "; left out: 'mo-empty' (no finished trial with parameters), 'mo-short' (3 usable "
        "trial(s), at least 10 needed), 'never-run' (no finished trial with parameters), "
        "'short' (3 usable trial(s), at least 10 needed)")
    assert "left out" not in doc["title"]
    # named on purpose, a study that cannot be read is still an error
    assert main(["report", "--storage", url, "--study", "a", "--study", "never-run", "--json",
                 "--out", str(tmp_path / "two.json")]) == 1
    assert "no COMPLETE trial" in capsys.readouterr().err
    # what is left must be two or more
    for name in ("b", "mo-ok"):
        optuna.delete_study(study_name=name, storage=url)
    assert main(["report", "--storage", url, "--all-studies", "--json", "--out",
                 str(tmp_path / "one.json")]) == 1
    assert "holds 5 studies, of which 1 can be compared" in capsys.readouterr().err


def test_all_studies_leaves_out_a_study_that_shares_no_parameter_with_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one unrelated study in the storage made the whole comparison fail with "the studies
    # share no parameter", while three of the four shared x and y
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 's.db'}"
    for k, name in enumerate(("a", "b", "c")):
        optuna.create_study(study_name=name, storage=url,
                            sampler=optuna.samplers.RandomSampler(seed=k)).optimize(
            lambda t: t.suggest_float("x", 0, 1) + 0.1 * t.suggest_float("y", 0, 1), n_trials=12)
    optuna.create_study(study_name="other", storage=url,
                        sampler=optuna.samplers.RandomSampler(seed=5)).optimize(
        lambda t: t.suggest_float("lr", 1e-3, 1, log=True), n_trials=12)
    out = tmp_path / "across.json"
    assert main(["report", "--storage", url, "--all-studies", "--json", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert ("WARNING: --all-studies leaves out study 'other': it has no 'x', which the other 3 "
            "studies share (its parameters: lr)." in err)
    assert json.loads(out.read_text())["studies"] == ["a", "b", "c"]


def test_an_objective_a_smac_run_does_not_have_is_named_in_the_command_s_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # it was reported as "the 'objective' parameter of hp.adapters.from_smac", an
    # argument the command line does not have
    assert main(["report", "--smac-run", str(SMAC_RUN), "--objective", "err", "--json",
                 "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert f"--objective 'err': SMAC run {SMAC_RUN} has one objective; leave --objective out." in err
    assert "hp.adapters" not in err
    two = _copy_run(tmp_path / "two")
    scenario = json.loads((two / "scenario.json").read_text())
    (two / "scenario.json").write_text(json.dumps({**scenario, "objectives": ["err", "time"]}))
    assert main(["report", "--smac-run", str(two), "--objective", "nope", "--json",
                 "--out", str(tmp_path / "r.json")]) == 2
    assert ("--objective 'nope' names no objective of SMAC run "
            f"{two}; use one of err, time or front, or an index 0 to 1.") in capsys.readouterr().err


def test_watch_once_says_why_a_refit_failed_instead_of_asking_for_trials(
    journal: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a refit that failed (a trial outside its range, say) printed "not enough COMPLETE
    # trials to rank (need 20)" with 40 complete, and exited 0
    from hpinsight.exceptions import InvalidDataError
    from hpinsight.integrations import _optuna_live

    def refit(self: object, study: object) -> None:
        raise InvalidDataError("Parameter 'x' of configuration 5 is 10.0, outside [-5.0, 5.0]")

    monkeypatch.setattr(_optuna_live.Refitter, "refit", refit)
    out = io.StringIO()
    assert main(["watch", "--storage", str(journal), "--study", "j", "--once",
                 "--min-trials", "10"], stdout=out) == 1
    lines = out.getvalue().splitlines()
    assert lines[-1].endswith("| refit failed: InvalidDataError: Parameter 'x' of configuration "
                              "5 is 10.0, outside [-5.0, 5.0]"), lines
    assert not any("not enough COMPLETE trials" in line for line in lines)


def test_report_out_refuses_a_suffix_it_would_not_write(
        journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --out r.txt wrote the HTML page, where Report.save("r.txt") is an error
    assert main(["report", "--storage", str(journal), "--study", "j", "--out",
                 str(tmp_path / "r.txt")]) == 2
    assert "--out writes a .html page or a .json document" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("bad", "says"), [
    (["--shrink-after", "10"], "--shrink-after only acts with --shrink-to"),
    (["--shrink-after", "10", "--risk-margin", "0.2"],
     "--shrink-after and --risk-margin only act with --shrink-to"),
    (["--publish", "--shrink-to", "2", "--risk-margin", "0.2"],
     "--risk-margin is read by --shrink-to auto only"),
    (["--narrow-quantile", "0.2"], "--narrow-quantile needs --shrink-to"),
])
def test_watch_refuses_shrink_options_that_would_do_nothing(
    journal: Path, bad: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # accepted, they did nothing and said nothing (ImportanceCallback refuses the same)
    assert main(["watch", "--storage", str(journal), "--study", "j", "--once", *bad]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["2", "0", "sometimes"])
def test_watch_refuses_a_narrow_quantile_that_is_not_a_fraction_auto_or_none(
    journal: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--storage", str(journal), "--study", "j", "--once", "--publish",
              "--shrink-to", "auto", "--narrow-quantile", bad])
    assert exc.value.code == 2
    assert "expected a fraction in (0, 1], 'auto' or 'none'" in capsys.readouterr().err


def test_a_study_too_short_for_a_report_is_named_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the error said "study 'one' (sqlite:...): report: study 'one' (sqlite:...) has 1 usable
    # trial(s)": the command named the study in front of a message that already did
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 's.db'}"
    optuna.create_study(study_name="one", storage=url).optimize(
        lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    assert main(["report", "--storage", url, "--study", "one", "--json",
                 "--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert "has 1 usable trial(s)" in err
    assert err.count(f"study 'one' ({url})") == 1


def test_watch_shows_a_restriction_in_force_that_only_narrows(tmp_path: Path) -> None:
    # a decision that fixed nothing and narrowed a range ("fixed nothing; narrowed x") is a
    # restriction in force too; the watcher showed only fixed values
    optuna = pytest.importorskip("optuna")
    from hpinsight.integrations.optuna import restrict

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(study_name="w", storage=url,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=5)
    for fixed, shown in (({}, "restriction in force: narrowed x to [0.2, 0.4]"),
                         ({"y": 0.5}, "restriction in force: fixed y=0.5; narrowed x to [0.2, 0.4]")):
        restrict(study, fixed, ranges={"x": (0.2, 0.4)}, why="test")
        out = io.StringIO()
        assert main(["watch", "--storage", url, "--study", "w", "--once"], stdout=out) == 0
        assert shown in out.getvalue().splitlines()


def test_watch_says_why_enough_complete_trials_rank_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 24 COMPLETE trials, every 4th at inf (a diverged run's penalty), --min-trials 20: the
    # fit had 18, the watcher printed nothing at all, and --once said "24 complete ... need 20"
    optuna = pytest.importorskip("optuna")
    from hpinsight.cli import _watch

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 's.db'}"
    for name, value in (("inf", lambda x, i: math.inf if i % 4 == 0 else x),
                        ("constant", lambda x, i: 1.0)):
        optuna.create_study(study_name=name, storage=url).optimize(
            lambda t, f=value: f(t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1),
                                 t.number), n_trials=24)
    # an objective that suggests nothing: "not enough COMPLETE trials to rank" with 24
    optuna.create_study(study_name="bare", storage=url).optimize(lambda t: 1.0, n_trials=24)
    expected = {"inf": "18 usable, 20 needed to rank; 6 trial(s) excluded",
                "constant": "all 24 with the same value; nothing to rank yet",
                "bare": "24 COMPLETE trial(s), none with parameters: an objective that "
                        "suggests no parameter has nothing to rank"}
    for name, reason in expected.items():
        out = io.StringIO()
        assert main(["watch", "--storage", url, "--study", name, "--once",
                     "--min-trials", "20"], stdout=out) == 0
        assert reason in out.getvalue()
    real, polls = _watch._counts, {"n": 0}

    def counts(optuna_module: object, study: object) -> dict[str, int]:
        polls["n"] += 1
        if polls["n"] > 3:  # Ctrl-C after a few polls
            raise KeyboardInterrupt
        return real(optuna_module, study)

    monkeypatch.setattr(_watch, "_counts", counts)
    out = io.StringIO()
    assert main(["watch", "--storage", url, "--study", "inf", "--interval", "0.01",
                 "--min-trials", "20"], stdout=out) == 0
    said = [line for line in out.getvalue().splitlines() if expected["inf"] in line]
    assert len(said) == 1  # once, not at every poll


def test_all_studies_leaves_out_a_study_an_objective_index_does_not_reach(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one study of one objective stopped the comparison of the others on their second
    # objective, with the advice to use --objective 0 (which would change what they are
    # compared on)
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 's.db'}"
    for k, name in enumerate(("a", "b")):
        optuna.create_study(study_name=name, storage=url, directions=["minimize"] * 2,
                            sampler=optuna.samplers.RandomSampler(seed=k)).optimize(
            lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)), n_trials=12)
    optuna.create_study(study_name="one", storage=url).optimize(
        lambda t: t.suggest_float("x", 0, 1), n_trials=12)
    out = tmp_path / "across.json"
    assert main(["report", "--storage", url, "--all-studies", "--objective", "1", "--json",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert ("WARNING: --all-studies leaves out study 'one': --objective 1 is none of its "
            "objectives." in err)
    assert json.loads(out.read_text())["studies"] == ["a", "b"]


@pytest.mark.parametrize(("extra", "message"), [
    (["--study", "a", "--study", "b", "--top", "1"],
     "--top chooses the parameters one study's report shows in detail"),
    (["--smac-run", "{run}", "--smac-run", "{run}/"], "a --smac-run folder is given twice"),
], ids=["top-across", "smac-run-twice"])
def test_across_options_that_would_do_nothing_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str,
) -> None:
    # --top was accepted across studies and both pages came out the same; one run given
    # twice was merged and refused as "1 SMAC runs"
    args = [a.replace("{run}", str(tmp_path)) for a in extra]
    storage = [] if "--smac-run" in args else ["--storage", f"sqlite:///{tmp_path / 'x.db'}"]
    assert main(["report", *storage, *args, "--out", str(tmp_path / "r.html")]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "watch"])
@pytest.mark.parametrize("content", ["application", "empty"])
def test_an_sqlite_file_that_holds_no_study_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    command: str, content: str,
) -> None:
    # RDBStorage wrote Optuna's 13 tables into an application's database (8 KB -> 116 KB)
    # and into an empty file, and then said only that the study did not exist
    pytest.importorskip("optuna")
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "app.db"
    if content == "application":
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE users (id INTEGER)")
    else:
        db.touch()
    before = db.read_bytes()
    assert main(_storage_command(command, f"sqlite:///{db}")) == 1
    err = capsys.readouterr().err
    assert f"{db} is not an Optuna storage" in err
    assert ("its tables: users" if content == "application" else "it holds no table") in err
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]


def test_an_sqlite_path_that_starts_with_file_is_a_path_unless_uri_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    # without uri=true SQLite reads "file:x.db" as a file name, and created it
    pytest.importorskip("optuna")
    monkeypatch.chdir(tmp_path)
    assert main(_storage_command("report", "sqlite:///file:x.db")) == 1
    assert "the SQLite file 'file:x.db'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("spec", "shown"), [
    ("postgresql+psycopg://127.0.0.1:1/db?user=bob&password=s3cr3t",
     "postgresql+psycopg://127.0.0.1:1/db?user=bob"),
    ("postgresql://bob:s3cr3t@db.example:5432/studies?sslmode=require",
     "postgresql://db.example:5432/studies?sslmode=require"),
    ("sqlite:///data@v2/studies.db", "sqlite:///data@v2/studies.db"),
    ("sqlite:////abs/path/s.db", "sqlite:////abs/path/s.db"),
])
def test_a_storage_is_described_without_its_credentials(spec: str, shown: str) -> None:
    # a password given as a query key was echoed in every error, and an SQLite path
    # holding "@" was cut there ("sqlite://v2/studies.db", the in-memory form's scheme)
    pytest.importorskip("optuna")
    from hpinsight.cli._storage import describe

    assert describe(spec) == shown


@pytest.mark.parametrize("interval", ["nan", "inf", "1e300", "0"])
def test_watch_refuses_an_interval_it_cannot_wait(
    journal: Path, interval: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # NaN passed "<= 0" and polled the storage at full speed; inf overflowed the first wait
    args = ["watch", "--storage", str(journal), "--study", "j", "--once", "--interval", interval]
    assert main(args) == 2
    assert "--interval must be a number of seconds > 0" in capsys.readouterr().err


def test_ctrl_c_in_a_command_is_a_line_and_status_130(
    journal: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # report printed the traceback of wherever the fit was when Ctrl-C came
    import hpinsight.cli._report as report_cli

    def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(report_cli, "run", interrupted)
    assert main(["report", "--storage", str(journal), "--study", "j", "--json"]) == 130
    err = capsys.readouterr().err
    assert "ERROR: interrupted" in err
    assert "Traceback" not in err


def _sqlite_study(tmp_path: Path) -> str:
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 'one.db'}"
    study = optuna.create_study(study_name="one", storage=url,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("z", 0, 1) * 0.1,
                   n_trials=12)
    return url


def _watch(url: str, *more: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hpinsight", "watch", "--storage", url, "--study", "one",
         "--min-trials", "5", *more], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_watch_ends_when_its_study_is_deleted(tmp_path: Path) -> None:
    # a deleted study was "cannot reach the storage ... retrying", forever
    optuna = pytest.importorskip("optuna")
    url = _sqlite_study(tmp_path)
    proc = _watch(url, "--interval", "0.2")
    try:
        assert proc.stdout is not None
        # its first ranking: the study was read (after the line saying what it watches)
        lines = [proc.stdout.readline() for _ in range(2)]
        assert "watching study 'one'" in lines[0]
        assert "x " in lines[1]
        optuna.delete_study(study_name="one", storage=url)
        assert proc.wait(timeout=60) == 1
    finally:
        proc.kill()
    err = proc.communicate()[1]
    assert "study 'one' no longer exists in sqlite:///" in err
    assert "cannot reach the storage" not in err


def test_watch_whose_reader_went_away_ends_quietly(tmp_path: Path) -> None:
    # watch ... --once | head -c0: a traceback ending in BrokenPipeError, status 1
    url = _sqlite_study(tmp_path)
    proc = _watch(url, "--once")
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    assert proc.stderr is not None
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err


def test_watch_says_why_publishing_to_a_storage_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a storage opened read-only: Optuna's own words, "invalid data in the commit, e.g.
    # exceeding max length", were all it said; and it said "refit failed" and showed no
    # importances, though the fit had worked and only storing its summary had not
    url = _sqlite_study(tmp_path)
    path = Path(url.removeprefix("sqlite:///"))
    before = path.read_bytes()
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    args = ["watch", "--storage", read_only, "--study", "one", "--once", "--publish",
            "--min-trials", "5"]
    assert main(args) == 1  # asked to publish, and could not
    captured = capsys.readouterr()
    assert " | x " in captured.out.splitlines()[-1]  # the ranking, x first
    assert "refit failed" not in captured.out + captured.err
    assert "while storing the importances in the study" in captured.err
    assert "attempt to write a readonly database" in captured.err
    assert path.read_bytes() == before


def test_watch_once_does_not_ask_for_ctrl_c(journal: Path) -> None:
    # "watching study 'j' (...); Ctrl-C stops" headed a watch that stops by itself
    out = io.StringIO()
    assert main(["watch", "--storage", str(journal), "--study", "j", "--once"], stdout=out) == 0
    first = out.getvalue().splitlines()[0]
    assert first.endswith("; one ranking, then it stops")
    assert "Ctrl-C" not in first
