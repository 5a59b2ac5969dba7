"""The HTML report in a real browser: headless Chromium loads it from disk with no network,
logs nothing to its console, and shows every figure legibly at 1400 px.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it when missing). The page
under test is a copy with a small probe script appended: after ``load`` it measures the
page as laid out (figures' boxes, every text element of every figure, the tick labels of
every axis) and writes what it found into the DOM, which ``--dump-dom`` returns.
"""

from __future__ import annotations

import html
import json
import math
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna
import pytest

import hpinsight as hp

pytest.importorskip("matplotlib")
optuna.logging.set_verbosity(optuna.logging.WARNING)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--hide-scrollbars"]
DEMO = Path(__file__).resolve().parents[3] / "examples" / "demo_optuna_sqlite.py"
WIDTH = 1400
PROBE = """<script>
window.addEventListener("load", function () {
  function overlap(a, b) {  // more than a pixel of shared area
    return Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
           Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  }
  var found = {figures: [], clipped: [], overlaps: [], pageWidth: document.documentElement.scrollWidth};
  Array.from(document.querySelectorAll("figure svg")).forEach(function (svg, k) {
    var box = svg.getBoundingClientRect();
    found.figures.push([Math.round(box.width), Math.round(box.height)]);
    Array.from(svg.querySelectorAll("text")).forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1 ||
                          r.top < box.top - 1 || r.bottom > box.bottom + 1)) {
        found.clipped.push(k + ": " + t.textContent);
      }
    });
    Array.from(svg.querySelectorAll('g[id^="matplotlib.axis"]')).forEach(function (axis) {
      var labels = Array.from(axis.querySelectorAll('g[id^="xtick"] text, g[id^="ytick"] text'))
        .map(function (t) { return [t.textContent, t.getBoundingClientRect()]; })
        .filter(function (p) { return p[1].width > 0; });
      for (var i = 0; i < labels.length; i++) {
        for (var j = i + 1; j < labels.length; j++) {
          if (overlap(labels[i][1], labels[j][1])) {
            found.overlaps.push(k + ": " + labels[i][0] + " / " + labels[j][0]);
          }
        }
      }
    });
  });
  // words broken across lines in a table cell that is not a name or a sentence (a long
  // name squeezed the share and verdict columns to "res / olv / ed")
  found.brokenWords = [];
  Array.from(document.querySelectorAll("td:not(:first-child)")).forEach(function (td) {
    if (td.closest("table.advice") && td.cellIndex === 2) { return; }
    var walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var re = /[^\\s]+/g, m;
      while ((m = re.exec(node.data)) !== null) {
        var range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        var tops = new Set(Array.from(range.getClientRects()).map(function (r) {
          return Math.round(r.top); }));
        if (tops.size > 1) { found.brokenWords.push(m[0]); }
      }
    }
  });
  document.body.setAttribute("data-probe", JSON.stringify(found));
  console.log("hpinsight-probe");  // proves console lines reach the log we read
});
</script>"""


def _probe(browser: str, page: Path, tmp_path: Path) -> tuple[dict, list[str], str]:
    """Load ``page`` with the probe at WIDTH px; what it measured, console lines, DOM."""
    probed = tmp_path / f"probed-{page.stem}.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                      encoding="utf-8")
    dom = subprocess.run([browser, *FLAGS, f"--window-size={WIDTH},2000",
                          "--virtual-time-budget=10000", "--enable-logging=stderr", "--v=0",
                          "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert found is not None, "the probe did not run"
    measured = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    return measured, console, dom.stdout


def _stored_study(url: str, name: str, run: Callable[[optuna.Study], object],
                  **create: Any) -> None:
    """Create study ``name`` in the storage at ``url`` and ``run`` it, its engine
    closed after (the command line then opens the file on its own)."""
    storage = optuna.storages.RDBStorage(url)
    try:
        run(optuna.create_study(study_name=name, storage=storage, **create))
    finally:
        storage.engine.dispose()


def _one_answer(dom: str, decisions: dict[str, dict]) -> dict[str, list[str]]:
    """Check that the page gives each parameter one answer, its decision in the JSON
    written beside it: in exactly one group of the answer box, and in the table with the
    JSON's action and sentence (its numbers). Returns the groups found."""
    answer = dom.split('class="answer"')[1].split("</div>")[0]
    placed: dict[str, list[str]] = {}
    for state, line in re.findall(r'<p data-state="([a-z_]+)">(.*?)</p>', answer, flags=re.S):
        for name in re.findall(r'data-param="([^"]+)"', line):
            placed.setdefault(name, []).append(state)
    assert placed == {n: [d["state"]] for n, d in decisions.items()}
    table = re.split(r'<table class="?advice"?>', dom)[1].split("</table>")[0]
    for name, d in decisions.items():
        row = re.search(rf'<tr data-param="{name}" data-state="([a-z_]+)"[^>]*>(.*?)</tr>', table,
                        flags=re.S)
        assert row is not None, name
        assert row.group(1) == d["state"]
        assert html.escape(d["action"], quote=False) in row.group(2)
        assert html.escape(d["sentence"], quote=False) in row.group(2)
    return placed


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's main job, as a new user runs it: the demo's report."""
    out = tmp_path_factory.mktemp("demo")
    subprocess.run([sys.executable, str(DEMO), "--out", str(out)], check=True,
                   capture_output=True, text=True, timeout=600)
    return out / "report.html"


def test_the_demo_report_is_legible_at_1400_px(demo_page: Path, tmp_path: Path,
                                                chromium: str) -> None:
    measured, console, dom = _probe(chromium, demo_page, tmp_path)
    # importance, 3 marginals, the one resolved interaction (learning_rate x optimizer:
    # the other pairs the table lists came back when taken out of the data), 3 PDPs by region
    assert len(measured["figures"]) == 8
    assert measured["clipped"] == []  # no title, label or legend cut off
    assert measured["overlaps"] == []  # no tick labels drawn over each other
    assert measured["pageWidth"] <= WIDTH  # nothing wider than the window
    widths = [w for w, _ in measured["figures"]]
    assert min(widths) >= 300  # every figure readable, none squeezed
    assert len(console) == 1  # the probe's own line, and nothing else: no errors, no
    assert "hpinsight-probe" in console[0]  # failed loads, no warnings
    decisions = json.loads(demo_page.with_suffix(".json").read_text())["decisions"]["decisions"]
    placed = _one_answer(dom, decisions)
    assert placed["momentum"] == ["no_data"]  # active in 2 trials
    assert placed["learning_rate"] == ["matters"]

    shot = tmp_path / "report.png"
    subprocess.run([chromium, *FLAGS, f"--screenshot={shot}", f"--window-size={WIDTH},2400",
                    demo_page.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one


def objective(t: optuna.Trial) -> float:
    lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
    opt = t.suggest_categorical("optimizer", ["sgd", "adam"])
    momentum = t.suggest_float("momentum", 0.0, 0.99) if opt == "sgd" else 0.0
    depth = t.suggest_int("depth", 1, 8)
    return (math.log10(lr) + 2) ** 2 + 0.3 * (opt == "sgd") * (1 - momentum) + 0.02 * depth


def test_a_cli_report_of_a_forest_opens_cleanly(tmp_path: Path, chromium: str) -> None:
    url = f"sqlite:///{tmp_path / 'b.db'}"
    _stored_study(url, "browser", lambda study: study.optimize(objective, n_trials=60),
                  sampler=optuna.samplers.TPESampler(seed=1))
    page = tmp_path / "report.html"
    made = subprocess.run([sys.executable, "-m", "hpinsight", "report", "--storage", url,
                           "--study", "browser", "--out", str(page), "--surrogate", "forest",
                           "--n-trees", "32"], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    measured, console, dom = _probe(chromium, page, tmp_path)
    assert len(measured["figures"]) >= 6
    assert measured["clipped"] == []
    assert measured["overlaps"] == []
    assert len(console) == 1
    assert "<h2>Which ones you can stop tuning</h2>" in dom


def test_a_real_study_with_a_small_but_real_parameter_gets_one_answer_everywhere(
        tmp_path: Path, chromium: str) -> None:
    # HistGradientBoosting on scikit-learn's breast cancer data, 3-fold CV: the kind of
    # study where the page once gave l2_regularization three answers
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import cross_val_score

    import hpinsight as hp

    X, y = load_breast_cancer(return_X_y=True)

    def hgb(t: optuna.Trial) -> float:
        model = HistGradientBoostingClassifier(
            learning_rate=t.suggest_float("learning_rate", 1e-3, 1.0, log=True),
            max_leaf_nodes=t.suggest_int("max_leaf_nodes", 2, 64, log=True),
            min_samples_leaf=t.suggest_int("min_samples_leaf", 1, 200, log=True),
            l2_regularization=t.suggest_float("l2_regularization", 1e-6, 10.0, log=True),
            max_iter=40, random_state=0)
        t.suggest_categorical("unused_flag", ["on", "off"])  # does nothing
        return float(cross_val_score(model, X, y, cv=3).mean())

    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(hgb, n_trials=60)
    rep = hp.report(study, seed=0)
    page = rep.save(tmp_path / "hgb.html")
    data = json.loads(rep.save(tmp_path / "hgb.json").read_text())
    decisions = data["decisions"]["decisions"]
    assert set(decisions) == set(study.best_params)
    _, console, dom = _probe(chromium, page, tmp_path)
    assert len(console) == 1
    placed = _one_answer(dom, decisions)
    assert placed["learning_rate"] == ["matters"]
    # the terminal table: one line per parameter, with the same action
    lines = {line.split()[0]: line for line in rep.table().splitlines()[1:]}
    assert set(lines) == set(decisions)
    for name, d in decisions.items():
        assert lines[name].endswith(d["action"]), (name, lines[name], d["action"])


def test_a_two_objective_report_names_each_objective_in_the_browser(tmp_path: Path,
                                                                    chromium: str) -> None:
    url = f"sqlite:///{tmp_path / 'mo.db'}"

    def two(t: optuna.Trial) -> tuple[float, float]:
        lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
        width = t.suggest_int("width", 8, 512, log=True)
        t.suggest_float("unused", 0.0, 1.0)  # does nothing
        return (math.log10(lr) + 2) ** 2 + 8 / width, 0.05 * width

    def run(study: optuna.Study) -> None:
        with warnings.catch_warnings():  # experimental in Optuna, and stable since 3.2
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(["error", "latency_ms"])
        study.optimize(two, n_trials=60)

    _stored_study(url, "mo", run, directions=["minimize", "minimize"],
                  sampler=optuna.samplers.TPESampler(seed=0))
    page, doc = tmp_path / "mo.html", tmp_path / "mo.json"
    for out in (page, doc):
        made = subprocess.run([sys.executable, "-m", "hpinsight", "report", "--storage", url,
                               "--study", "mo", "--top", "2", "--out", str(out),
                               *(["--json"] if out.suffix == ".json" else [])],
                              capture_output=True, text=True, timeout=600)
        assert made.returncode == 0, made.stderr
    data = json.loads(doc.read_text())
    assert data["objectives"] == ["error", "latency_ms"]
    assert list(data["sections"]) == ["error", "latency_ms", "front"]
    measured, console, dom = _probe(chromium, page, tmp_path)
    # per section: importance, 2 marginals, up to 2 interactions, 2 PDPs
    assert len(measured["figures"]) >= 3 * 5
    assert measured["clipped"] == []
    assert measured["overlaps"] == []
    assert measured["pageWidth"] <= WIDTH
    assert len(console) == 1
    assert "hpinsight-probe" in console[0]
    # the page as laid out names every objective, each over its own section ...
    text = html.unescape(dom)
    for heading in ("Objective error", "Objective latency_ms", "Reaching the Pareto front"):
        assert f"<h2>{heading}</h2>" in text
    assert "best latency_ms" in text
    assert "best error" in text
    # ... and gives each parameter the one answer the JSON gives, over both objectives
    placed = _one_answer(dom, data["decisions"]["decisions"])
    assert placed["lr"] != ["fix"]
    assert placed["width"] != ["fix"]
    assert data["decisions"]["decisions"]["width"]["objective"] in ("error", "latency_ms")


def test_a_parameter_name_of_300_characters_fits_the_page(tmp_path: Path, chromium: str) -> None:
    # a 300-character name pushed the table's share and verdict columns off the window
    long = "preprocessing_" + "x" * 286

    def objective_long(t: optuna.Trial) -> float:
        lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
        return (math.log10(lr) + 2) ** 2 + 0.1 * t.suggest_float(long, 0.0, 1.0)

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(objective_long, n_trials=40)
    page = tmp_path / "long.html"
    hp.report(study, top=2, seed=0).save(page)
    measured, console, _ = _probe(chromium, page, tmp_path)
    assert measured["pageWidth"] <= WIDTH
    # the importance chart keeps its axis label (names beside bars are cut to 32
    # characters, the label takes two lines); a marginal's title and axis label cut the
    # name to 32 characters too (its 60-character cut ran past the figure's edge)
    assert measured["clipped"] == []
    # the name takes the lines it needs in its own column; the numbers and verdicts
    # beside it keep their words whole
    assert measured["brokenWords"] == []
    assert len(console) == 1
