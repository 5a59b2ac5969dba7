"""``hpinsight risk-experiment CONFIG``: the tuning-risk experiment from a TOML file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from hpinsight.cli import main

pytest.importorskip("optuna")

CONFIG = """
[estimator]
class = "sklearn.tree.DecisionTreeClassifier"
params = { random_state = 0 }

[space.max_depth]
type = "int"
low = 1
high = 6

[space.criterion]
type = "categorical"
choices = ["gini", "entropy"]

[datasets]
iris = "sklearn.datasets.load_iris"
wine = "sklearn.datasets.load_wine"

[experiment]
n_iter = 3
outer_folds = 2
inner_folds = 2
seeds = 2
n_default_configs = 8
default_top_n = 4
default_folds = 2
store = "{store}"
"""


def test_a_toml_config_runs_the_experiment_and_writes_json(tmp_path: Path) -> None:
    config = tmp_path / "risk.toml"
    config.write_text(CONFIG.replace("{store}", str(tmp_path / "fits.sqlite")))
    out = io.StringIO()
    target = tmp_path / "result.json"
    assert main(["risk-experiment", str(config), "--out", str(target), "--no-progress"],
                stdout=out) == 0
    data = json.loads(target.read_text())
    assert [row["param"] for row in data["statistics"]["rows"]] == ["max_depth", "criterion"]
    assert data["experiment"]["datasets"] == ["iris", "wine"]
    assert "max_depth" in out.getvalue()  # the statistics table
    assert (tmp_path / "fits.sqlite").is_file()
    # again with the same store: the same numbers, read back
    again = tmp_path / "again.json"
    assert main(["risk-experiment", str(config), "--out", str(again), "--no-progress"],
                stdout=io.StringIO()) == 0
    assert json.loads(again.read_text()) == data


@pytest.mark.parametrize(("text", "message"), [
    (None, "does not exist"),
    ("not = [toml", "not a TOML file"),
    ("[estimator]\nclass = 'x'\n[space]\n[datasets]\n", "import path"),
    (CONFIG.replace('type = "int"', 'type = "integer"'), "type must be one of"),
    (CONFIG.replace("n_iter = 3", "n_iterations = 3"), "unknown keys ['n_iterations']"),
    (CONFIG.replace("[datasets]", "[data]"), "the [datasets] table is missing"),
    (CONFIG.replace("low = 1", "low = 9"), "[space.max_depth]"),
    (CONFIG.replace("random_state = 0", "random_seed = 0"), "[estimator] params"),
    (CONFIG + '[[conditions]]\nchild = "criterion"\nparent = "max_depth"\nvalue = [2]\n',
     "[[conditions]]"),
    (CONFIG + '[[conditions]]\nchild = "criterion"\nparent = "nope"\nvalues = [2]\n',
     "[space] / [[conditions]]"),
    # tables written as something else: each was a TypeError or AttributeError traceback
    (CONFIG + '[conditions]\nchild = "criterion"\nparent = "max_depth"\nvalues = [2]\n',
     "write [[conditions]] (two brackets)"),
    (CONFIG.replace('[space.criterion]\ntype = "categorical"\nchoices = ["gini", "entropy"]',
                    "[space]\ncriterion = 'categorical'"),
     "[space.criterion] must be a table of keys and values"),
    (CONFIG.replace("params = { random_state = 0 }", "params = 3"),
     "[estimator] params must be a table of keys and values"),
], ids=["missing", "not-toml", "bad-import", "bad-type", "unknown-key", "no-datasets",
        "bad-bounds", "bad-estimator-param", "bad-condition-key", "unknown-parent",
        "one-conditions-table", "space-entry-not-a-table", "params-not-a-table"])
def test_a_bad_config_is_a_clear_error(tmp_path: Path, caplog, text, message) -> None:
    config = tmp_path / "risk.toml"
    if text is not None:
        config.write_text(text.replace("{store}", str(tmp_path / "s.sqlite")))
    with caplog.at_level("ERROR", logger="hpinsight"):
        code = main(["risk-experiment", str(config), "--out", str(tmp_path / "r.json")],
                    stdout=io.StringIO())
    assert code == 2
    assert message in caplog.text


def test_help_shows_an_example_config(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["risk-experiment", "--help"])
    assert info.value.code == 0
    shown = capsys.readouterr().out
    assert "[estimator]" in shown
    assert 'store = "risk.sqlite"' in shown


@pytest.mark.parametrize("conditions", [False, True], ids=["as-shown", "conditions-uncommented"])
def test_the_example_config_of_help_reads_as_it_is_copied(tmp_path: Path, conditions: bool) -> None:
    # its [[conditions]] block once held "..." placeholders: copied verbatim, it failed
    # with "A condition cannot make '...' depend on itself"
    from hpinsight.cli._risk import _FORMAT, _read

    text = "\n".join(line[4:] for line in _FORMAT.splitlines())
    if conditions:
        text = text.replace("# [[conditions]]", "[[conditions]]")
        text = "\n".join(line[2:] if line.startswith(("# child", "# parent", "# values")) else line
                         for line in text.splitlines())
    path = tmp_path / "risk.toml"
    path.write_text(text)
    _, space, datasets, options = _read(path)
    assert space.names == ("max_depth", "criterion")
    assert set(datasets) == {"iris", "wine"}
    assert options["store"] == "risk.sqlite"
    assert bool(space.conditional_names) is conditions


def test_risk_experiment_draws_no_bar_into_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("optuna")
    pytest.importorskip("tqdm")
    config = tmp_path / "risk.toml"
    config.write_text(CONFIG.replace("{store}", str(tmp_path / "fits.sqlite")))
    assert main(["risk-experiment", str(config), "--out", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [line for line in err.splitlines() if " fits (" in line]
    assert lines  # the log gets progress lines instead of a bar
    last = {}
    for line in lines:  # per stage, the counts rise and the last line is the whole stage
        stage, counts = line.removeprefix("INFO: ").split(": ", 1)
        done, total = (int(x) for x in counts.split(" fits")[0].split(" of "))
        assert done > last.get(stage, (0, 0))[0]
        last[stage] = (done, total)
    assert all(done == total for done, total in last.values())


@pytest.mark.parametrize(("extra", "message"), [
    (["--alpha", "5"], "'alpha' parameter of hpinsight risk-experiment --alpha must be in"),
    (["--margin", "inf"], "'margin' parameter of hpinsight risk-experiment --margin must be "
                          "a finite number"),
    (["--out", "{folder}"], "is a folder; name the JSON file to write"),
], ids=["alpha", "margin", "out-is-a-folder"])
def test_options_are_refused_before_the_experiment_runs(tmp_path: Path, caplog, extra,
                                                         message) -> None:
    # they were read after every job had run, and the results were thrown away
    config = tmp_path / "risk.toml"
    store = tmp_path / "s.sqlite"
    config.write_text(CONFIG.replace("{store}", str(store)))
    args = [a.replace("{folder}", str(tmp_path)) for a in extra]
    out = [] if "--out" in args else ["--out", str(tmp_path / "r.json")]
    with caplog.at_level("ERROR", logger="hpinsight"):
        code = main(["risk-experiment", str(config), *out, *args, "--no-progress"],
                    stdout=io.StringIO())
    assert code == 2
    assert message in caplog.text
    assert not store.exists()  # no job ran
