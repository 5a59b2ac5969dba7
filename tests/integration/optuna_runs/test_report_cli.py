"""``hpinsight report`` on real Optuna studies in SQLite, run as a user runs it."""

from __future__ import annotations

import html
import json
import math
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import optuna
import pytest

pytest.importorskip("matplotlib")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(t: optuna.Trial) -> float:
    lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
    opt = t.suggest_categorical("optimizer", ["sgd", "adam"])
    if opt == "sgd":
        t.suggest_float("momentum", 0.0, 0.99)
    t.suggest_int("depth", 1, 8)
    return (math.log10(lr) + 2) ** 2 + (0.3 if opt == "sgd" else 0.0)


def _hpinsight(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hpinsight", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _report(*args: str) -> subprocess.CompletedProcess[str]:
    return _hpinsight("report", *args)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_report_of_a_stored_study_and_clear_failures(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = (request.getfixturevalue("postgres_url") if kind == "postgres"
           else f"sqlite:///{tmp_path / 'r.db'}")
    storage = optuna.storages.RDBStorage(url)
    try:
        for name in ("r", "empty"):  # the PostgreSQL server lives for the whole session
            if name in optuna.get_all_study_names(storage):
                optuna.delete_study(study_name=name, storage=storage)
        study = optuna.create_study(study_name="r", storage=storage,
                                    sampler=optuna.samplers.TPESampler(seed=0))
        study.optimize(objective, n_trials=40)
        optuna.create_study(study_name="empty", storage=storage)
    finally:
        storage.engine.dispose()

    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()  # --out never creates folders
    done = _report("--storage", url, "--study", "r", "--out", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"report: {target.resolve()}"
    # stderr is a pipe, not a terminal: one log line per step, no progress bar
    assert "INFO: fANOVA of all trials ...\n" in done.stderr
    assert "INFO: writing the report to report.html ...\n" in done.stderr
    assert "\r" not in done.stderr
    page = target.read_text(encoding="utf-8")
    assert "study &#x27;r&#x27;" in page
    # figures embedded in the page: inline SVG (or PNG data URLs, as earlier versions wrote)
    assert len(re.findall(r'<svg[\s>]|src="data:image/png;base64,', page)) >= 5

    # the page's "Reproduce in Python" runs as it stands, on the study in its storage, and
    # gives the page's numbers (it began with `from_optuna(study)`, `study` never defined)
    snippet = html.unescape(re.search(r"Reproduce in Python</h2><pre>(.*?)</pre>", page,
                                      re.S).group(1))
    assert "optuna.load_study(study_name='r', storage=" in snippet
    check = ("\nimport json\nprint(json.dumps({'+'.join(i.params): i.mean "
             "for i in result.ranking()}))")
    rerun = subprocess.run([sys.executable, "-c", snippet + check], capture_output=True,
                           text=True, timeout=300, env={**os.environ, "MPLBACKEND": "Agg"})
    assert rerun.returncode == 0, rerun.stderr
    shown = json.loads(_report("--storage", url, "--study", "r", "--json", "--out", "-").stdout)
    assert json.loads(rerun.stdout.splitlines()[-1]) == pytest.approx(
        {"+".join(e["params"]): e["mean"] for e in shown["fanova"]["effects"]}, rel=1e-9)

    missing = _report("--storage", url, "--study", "nope", "--out", str(tmp_path / "x.html"))
    assert missing.returncode == 1
    assert "cannot open study 'nope'" in missing.stderr
    assert "'r'" in missing.stderr.split("studies there:")[1]
    empty = _report("--storage", url, "--study", "empty", "--out", str(tmp_path / "e.html"))
    assert empty.returncode == 1
    assert "found no COMPLETE trial" in empty.stderr
    bad = _report("--storage", str(tmp_path / "no-such-journal.log"), "--study", "r")
    assert bad.returncode == 1
    assert "neither an RDB URL" in bad.stderr
    # --out -: the JSON document and nothing else on stdout
    piped = _report("--storage", url, "--study", "r", "--json", "--out", "-", "--top", "1",
                    "--surrogate", "forest", "--n-trees", "8")
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["schema"] == "hpinsight.report/2"
    assert "report: " not in piped.stderr


@pytest.mark.parametrize("command", ["report", "watch"])
def test_a_mistyped_sqlite_path_creates_nothing(command: str, tmp_path: Path) -> None:
    done = _hpinsight(command, "--storage", "sqlite:///no/such.db", "--study", "x",
                      *(["--once"] if command == "watch" else []), cwd=tmp_path)
    assert done.returncode == 1
    assert "the SQLite file 'no/such.db'" in done.stderr
    assert "does not exist" in done.stderr
    assert "--storage reads an existing study" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_version() -> None:
    done = _hpinsight("--version")
    assert done.returncode == 0
    assert done.stdout == f"hpinsight {version('hpinsight')}\n"
