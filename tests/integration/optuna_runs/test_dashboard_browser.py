"""Live importances in a real optuna-dashboard, seen in a real browser.

A study on an SQLite file runs with ``ImportanceCallback(publish="dashboard")``;
optuna-dashboard serves that file from a subprocess on 127.0.0.1; headless Chromium
(Debian's ``chromium``) loads the study's pages, which the dashboard's JavaScript app
builds from its JSON API: the study's page must show the importance figure, its note page
the summary. Then more trials run, the callback's own ``wait()`` says the refit is done,
and the reloaded pages must show the new trial count. The API's JSON is a second witness.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import pytest

optuna_dashboard = pytest.importorskip("optuna_dashboard")
pytest.importorskip("plotly")

from hpinsight.integrations._dashboard import NOTE_HEADING, figure_id_for  # noqa: E402
from hpinsight.integrations.optuna import ImportanceCallback  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

START_TIMEOUT = 60.0
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
# the dashboard's app fetches the study, then draws; virtual time runs until the page is idle
PAGE_BUDGET_MS = 20000
SERVE = ("import sys, optuna_dashboard; "
         "optuna_dashboard.run_server(sys.argv[1], host='127.0.0.1', port=int(sys.argv[2]))")


@dataclass
class Dashboard:
    """An optuna-dashboard serving one storage: its address, and the page and API readers."""

    url: str
    storage: str
    profile: Path
    browser: str

    def api(self, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    def page(self, path: str) -> str:
        """The page's DOM after the app has drawn it, and its visible text."""
        done = subprocess.run(
            [self.browser, *FLAGS, f"--user-data-dir={self.profile}", "--window-size=1400,1600",
             f"--virtual-time-budget={PAGE_BUDGET_MS}", "--dump-dom", self.url + path],
            capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout


def _text(dom: str) -> str:
    """The DOM's text, tags dropped and white space collapsed."""
    no_scripts = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", no_scripts)))


@pytest.fixture
def dashboard(tmp_path: Path, read_lines: Callable[..., Any], chromium: str,
              free_port: int) -> Iterator[Dashboard]:
    """optuna-dashboard on an empty SQLite storage, on 127.0.0.1 and a free port, ready to
    answer; stopped at teardown."""
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    optuna.storages.RDBStorage(storage).engine.dispose()  # the tables, before it reads them
    port = free_port
    proc = subprocess.Popen([sys.executable, "-c", SERVE, storage, str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = read_lines(proc, "optuna-dashboard")
    server = Dashboard(f"http://127.0.0.1:{port}", storage, tmp_path / "chromium-profile",
                       chromium)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:  # ready when its API answers
            try:
                server.api("/api/meta")
                break
            except (urllib.error.URLError, ConnectionError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"optuna-dashboard did not answer within {START_TIMEOUT:.0f} s:"
                                f"\n{lines.text('stdout')}\n{lines.text('stderr')}")
                time.sleep(0.1)
        yield server
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _objective(trial: optuna.Trial) -> float:
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    width = trial.suggest_int("width", 8, 256, log=True)
    trial.suggest_categorical("unused_flag", ["on", "off"])  # does nothing
    return (0.5 * (lr * 1e3) ** 0.5 - 3.0) ** 2 + 0.1 * abs(width - 64) / 64


def test_the_dashboard_shows_the_live_figure_and_summary_and_updates_them(
        dashboard: Dashboard) -> None:
    storage = optuna.storages.RDBStorage(dashboard.storage)
    try:
        study = optuna.create_study(study_name="live", storage=storage,
                                    sampler=optuna.samplers.RandomSampler(seed=0))
        study_id = study._study_id
        with ImportanceCallback(every_n_trials=10, min_trials=20, seed=0,
                                publish="dashboard", max_refit_share=1.0) as cb:
            study.optimize(_objective, n_trials=30, callbacks=[cb])
            assert cb.wait(120)  # the callback's own word: every refit asked for is done
            seen_first = _check_pages(dashboard, study_id, n_trials=30)

            study.optimize(_objective, n_trials=20, callbacks=[cb])
            assert cb.wait(120)
            seen_then = _check_pages(dashboard, study_id, n_trials=50)
        assert cb.errors == ()
    finally:
        storage.engine.dispose()
    assert seen_first != seen_then
    assert "30 trials analysed" not in seen_then


def _check_pages(dashboard: Dashboard, study_id: int, *, n_trials: int) -> str:
    """The figure on the study's page and the summary on its note page, both for
    ``n_trials`` trials, in the browser and in the API's JSON; returns the note's text."""
    detail = dashboard.api(f"/api/studies/{study_id}")  # the second witness
    figures = {g["id"]: json.loads(g["graph_object"]) for g in detail["plotly_graph_objects"]}
    assert list(figures) == [figure_id_for("hpinsight:importance")]  # one, replaced
    figure = figures["hpinsight-importance"]
    assert f"after {n_trials} trials" in figure["layout"]["title"]["text"]
    bars = figure["data"][0]
    assert bars["y"][0] == "lr"  # the objective is mostly lr
    assert len(bars["x"]) == len(bars["error_x"]["array"]) >= 3
    body = detail["note"]["body"]
    assert body.startswith(NOTE_HEADING)
    assert f"{n_trials} trials analysed" in body

    page = dashboard.page(f"/dashboard/studies/{study_id}")
    assert "js-plotly-plot" in page  # the app drew the user-defined figure
    titles = re.findall(r'class="gtitle"[^>]*>([^<]*)<', page)
    assert f"Importance after {n_trials} trials (hpinsight)" in titles
    assert ">lr<" in page  # a bar's label, drawn

    note_page = _text(dashboard.page(f"/dashboard/studies/{study_id}/note"))
    assert "hpinsight: which parameters matter" in note_page
    assert re.search(r"Matters: lr \(\d+\.\d %\)", note_page), note_page[:3000]
    assert "You can stop tuning:" in note_page
    assert f"{n_trials} trials analysed" in note_page
    assert "leave-one-out R²" in note_page
    assert "\\_" not in note_page  # the Markdown escapes are rendered, not shown
    assert "unused_flag" in note_page
    return note_page
