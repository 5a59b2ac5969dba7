"""Progress of CLI commands: a bar on a terminal only; in a log, one line per step and no ``\\r``."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from hpinsight.cli import main
from hpinsight.cli._progress import Progress, draws_bars

SMAC_RUN = Path(__file__).parent / "data" / "smac20_run"
_logger = logging.getLogger("hpinsight.cli.test")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        super().isatty()  # ValueError once closed, as for a real terminal
        return True


def test_bars_only_on_a_terminal() -> None:
    assert draws_bars(_Terminal())
    assert not draws_bars(io.StringIO())
    closed = _Terminal()
    closed.close()
    assert not draws_bars(closed)  # isatty() of a closed stream raises ValueError


def test_no_terminal_one_log_line_per_step(caplog: pytest.LogCaptureFixture) -> None:
    stream = io.StringIO()
    with caplog.at_level("INFO", logger="hpinsight"):
        bar = Progress(logger=_logger, stream=stream)
        bar("first", 0, 2)
        bar("second", 1, 2)
        bar.close()
    assert stream.getvalue() == ""
    assert [r.getMessage() for r in caplog.records] == ["first ...", "second ..."]


def test_a_terminal_gets_a_bar(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("tqdm")
    stream = _Terminal()
    with caplog.at_level("INFO", logger="hpinsight"):
        bar = Progress(logger=_logger, stream=stream)
        bar("first", 1, 2)
        bar.close()
    assert "\r" in stream.getvalue()
    assert "first" in stream.getvalue()
    assert caplog.records == []


def test_report_logs_steps_without_carriage_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ConfigSpace")
    assert main(["report", "--smac-run", str(SMAC_RUN), "--json", "--out",
                 str(tmp_path / "r.json"), "--surrogate", "forest", "--n-trees", "8"]) == 0
    err = capsys.readouterr().err  # pytest's stderr is not a terminal
    assert "\r" not in err
    steps = [line for line in err.splitlines() if line.startswith("INFO: ")]
    assert steps[:2] == ["INFO: fANOVA of all trials ...", "INFO: fANOVA of the best 25% ..."]
    assert "INFO: which parameters could be fixed ..." in steps
    assert steps[-1] == "INFO: writing the report to r.json ..."


def test_a_callable_gets_each_stage_and_its_fits() -> None:
    pytest.importorskip("optuna")
    from sklearn.datasets import load_iris, load_wine
    from sklearn.tree import DecisionTreeClassifier

    import hpinsight as hp
    from hpinsight.experiments import tuning_risk_experiment

    calls: list[tuple[str, int, int]] = []
    space = hp.SearchSpace([hp.Int("max_depth", 1, 4)])
    data = {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True)}
    tuning_risk_experiment(DecisionTreeClassifier(random_state=0), space, data,
                           n_default_configs=4, default_top_n=2,
                           default_folds=2, n_iter=2, outer_folds=2, inner_folds=2, seeds=1,
                           progress=lambda *a: calls.append(a), random_state=0)
    assert calls
    stages = dict.fromkeys(c[0] for c in calls)
    assert len(stages) >= 2
    for stage in stages:
        done = [d for s, d, _ in calls if s == stage]
        total = {t for s, _, t in calls if s == stage}
        assert done == sorted(done)
        assert len(total) == 1
        assert done[-1] == total.pop()
    with pytest.raises(hp.exceptions.InvalidArgumentTypeError, match="callable"):
        tuning_risk_experiment(DecisionTreeClassifier(), space, data, progress="yes")
