"""The HTML report in a real browser: headless Chromium loads it from disk with no network,
decodes every image, logs nothing to its console, and leaves a screenshot to look at.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it when missing). The page
under test is a copy with a small probe script appended: after ``load`` it writes how many
images decoded (``naturalWidth > 0``) into the DOM, which ``--dump-dom`` returns.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

pytest.importorskip("matplotlib")
optuna.logging.set_verbosity(optuna.logging.WARNING)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking"]
PROBE = """<script>
window.addEventListener("load", function () {
  var images = Array.from(document.images);
  var decoded = images.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  document.body.setAttribute("data-images", decoded.length + "/" + images.length);
  console.log("hpinsight-probe");  // proves console lines reach the log we read
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("the browser test needs Chromium: install Debian's `chromium` package "
                "(apt-get install chromium); .ci/run does this when it is missing")


def objective(t: optuna.Trial) -> float:
    lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
    opt = t.suggest_categorical("optimizer", ["sgd", "adam"])
    momentum = t.suggest_float("momentum", 0.0, 0.99) if opt == "sgd" else 0.0
    depth = t.suggest_int("depth", 1, 8)
    return (math.log10(lr) + 2) ** 2 + 0.3 * (opt == "sgd") * (1 - momentum) + 0.02 * depth


def test_report_opens_in_headless_chromium_with_every_image_and_no_console_errors(
    tmp_path: Path,
) -> None:
    browser = _chromium()
    url = f"sqlite:///{tmp_path / 'b.db'}"
    storage = optuna.storages.RDBStorage(url)
    try:
        study = optuna.create_study(study_name="browser", storage=storage,
                                    sampler=optuna.samplers.TPESampler(seed=1))
        study.optimize(objective, n_trials=60)
    finally:
        storage.engine.dispose()
    page = tmp_path / "report.html"
    made = subprocess.run([sys.executable, "-m", "hpinsight", "report", "--storage", url,
                           "--study", "browser", "--out", str(page), "--n-trees", "32"],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr

    probed = tmp_path / "probed.html"
    html = page.read_text(encoding="utf-8")
    n_images = len(re.findall(r"<img ", html))
    assert n_images >= 6
    probed.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([browser, *FLAGS, "--virtual-time-budget=10000",
                          "--enable-logging=stderr", "--v=0", "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert f'data-images="{n_images}/{n_images}"' in dom.stdout  # every image decoded
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert len(console) == 1  # the probe's own line, and nothing else: no errors, no
    assert "hpinsight-probe" in console[0]  # failed loads, no warnings
    assert "<h2>Which ones you can stop tuning</h2>" in dom.stdout

    shot = tmp_path / "report.png"
    subprocess.run([browser, *FLAGS, f"--screenshot={shot}", "--window-size=1200,2400",
                    page.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one
