"""An analysis leaves the process's warning filters alone: they are the user's, shared by
every thread, and the package's fits and refits run in threads of their own."""

from __future__ import annotations

import inspect
import logging
import math
import pathlib
import threading
import warnings

import pytest

import hpinsight as hp
from hpinsight._warn import collected, held_back, warn
from hpinsight.exceptions import ConstantObjectiveWarning, FewTrialsWarning

PACKAGE = pathlib.Path(hp.__file__).parent


def _history(n: int = 120, d: int = 4) -> hp.TrialHistory:
    space = hp.SearchSpace([hp.Float(f"x{j}", 0.0, 1.0) for j in range(d)])
    configs = space.sample(n, seed=1)
    return hp.TrialHistory(space, configs,
                           [math.sin(6 * c["x0"]) + c["x1"] ** 2 for c in configs])


def test_gp_fits_leave_the_filters_as_they_were() -> None:
    # The model's fits run in two threads; a filter swapped in and out by both at once
    # once stayed in the user's process and silenced every RuntimeWarning after the
    # first analysis (on the code before, this failed within the first few seeds).
    history = _history()
    before = list(warnings.filters)
    for seed in range(12):
        hp.fanova(history, seed=seed)
        assert warnings.filters == before, f"after the fit with seed {seed}"


def test_no_analysis_swaps_the_process_filters(monkeypatch: pytest.MonkeyPatch) -> None:
    # ``catch_warnings`` entered from the package's own code, in any thread: a report,
    # a subspace suggestion and the forest on a tiny study (whose rows are not all out
    # of bag: scikit-learn's warning about it used to be silenced by such a block)
    entered: list[str] = []
    real = warnings.catch_warnings

    class Spy(real):  # type: ignore[misc, valid-type]
        def __enter__(self):  # type: ignore[no-untyped-def]
            caller = pathlib.Path(inspect.stack()[1].filename)
            if PACKAGE in caller.parents:
                entered.append(f"{caller.name} in {threading.current_thread().name}")
            return super().__enter__()

    monkeypatch.setattr(warnings, "catch_warnings", Spy)
    history = _history(40, 3)
    hp.report(history, seed=0).html()
    hp.suggest_subspace(history, seed=0)
    tiny = _history(6, 2)
    result = hp.fanova(tiny, surrogate=hp.Forest(n_trees=4), seed=0)
    assert entered == []
    assert result.model.fit_r2 is not None  # the out-of-bag rows were still scored


def test_held_back_and_collected_act_in_their_thread_alone() -> None:
    with held_back(ConstantObjectiveWarning), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warn("held", ConstantObjectiveWarning)
        warn("given", FewTrialsWarning)
        other: list[tuple[type[Warning], str]] = []

        def elsewhere() -> None:  # another thread does not share the hold
            with collected() as caught:
                warn("collected there", ConstantObjectiveWarning)
            other.extend(caught)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert [str(w.message) for w in seen] == ["given"]
    assert other == [(ConstantObjectiveWarning, "collected there")]


def test_a_refit_in_a_thread_logs_the_package_warnings(caplog: pytest.LogCaptureFixture) -> None:
    # isolation="thread": the refit's warnings are logged, as the refit process's are,
    # not given from the refit thread (pytest turns a warning given there into an error)
    from hpinsight.integrations._live import LiveFanova, RefitOptions

    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Float("z", 0.0, 1.0)])
    same = [{"x": 0.5, "z": 0.5}] * 8
    history = hp.TrialHistory(space, same, [float(i % 3) for i in range(8)])
    fitter = LiveFanova(RefitOptions(seed=0, isolation="thread"),
                        logger=logging.getLogger("hpinsight.test"))
    with caplog.at_level(logging.INFO, logger="hpinsight.test"):
        result, snapshot = fitter.fit(history)
    assert result.n_trials == snapshot.n_trials == 8
    assert any("FewTrialsWarning" in r.getMessage() and "same configuration" in r.getMessage()
               for r in caplog.records)
