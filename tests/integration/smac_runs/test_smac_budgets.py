"""A multi-fidelity SMAC run: configurations reach different budgets, so their values
mix budgets; the history says so, reports say so, and one budget can be analysed."""

from __future__ import annotations

import html
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hpinsight as hp

smac = pytest.importorskip("smac")
CS = pytest.importorskip("ConfigSpace")


def target(config: Any, seed: int = 0, budget: float = 1.0) -> float:
    """At the full budget (9) only lr acts; warmup only slows early learning."""
    return float(4 * (config["lr"] - 0.3) ** 2 + (9.0 / budget - 1.0) * config["warmup"])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    cs = CS.ConfigurationSpace({"lr": (1e-4, 1.0), "warmup": (0.0, 1.0), "x": (0.0, 1.0)}, seed=0)
    scenario = smac.Scenario(cs, deterministic=True, n_trials=60, min_budget=1, max_budget=9,
                             seed=0, output_directory=tmp_path_factory.mktemp("mf"), name="mf")
    facade = smac.MultiFidelityFacade(
        scenario, target, intensifier=smac.MultiFidelityFacade.get_intensifier(scenario, eta=3),
        overwrite=True, logging_level=40)
    facade.optimize()
    return facade


@pytest.mark.slow
def test_values_of_several_budgets_are_named_and_one_budget_can_be_read(run: Any) -> None:
    # warmup acts only below the full budget; mixed, it was reported as "not resolved
    # yet (100 %)" with nothing on the page but "lower budget" runs left out
    counts = {}
    for key in run.runhistory:
        counts.setdefault(key.config_id, set()).add(key.budget)
    highest = [max(b) for b in counts.values()]
    mixed = hp.adapters.from_smac(run)
    assert dict(mixed.sampling.budgets) == {b: highest.count(b) for b in sorted(set(highest))}
    assert len(mixed.sampling.budgets) > 1
    assert pickle.loads(pickle.dumps(mixed)).sampling.budgets == mixed.sampling.budgets
    page = hp.report(mixed, top=1, subspace=False).html()
    assert "valued at its highest" in page
    assert "hp.adapters.from_smac(run, budget=9)" in page
    full = hp.adapters.from_smac(run, budget=9)
    assert full.n_trials == highest.count(9.0)
    assert full.excluded["other budget"] == len(run.runhistory) - full.n_trials
    assert full.sampling is None or not full.sampling.budgets
    at_full = hp.fanova(full, seed=0)  # the few configurations there may all sit near lr = 0.3
    assert at_full.importance("warmup").mean < 0.01
    assert at_full.importance("lr").mean >= at_full.importance("x").mean
    folder = Path(run.scenario.output_directory)
    assert hp.adapters.from_smac(folder, budget=9).trial_ids == full.trial_ids  # saved run too
    # the page names the budget its values are of, and its code reads that budget again
    assert full.objective_name == "cost at budget 9"
    assert full.loader == f"load_run({str(folder)!r}, budget=9)"
    assert html.escape(f"history = {full.loader}") in hp.report(full, top=1, subspace=False).html()
    with pytest.raises(ValueError, match=r"no successful run at budget=5; the run's budgets are "
                                         r"\[1\.0, 3\.0, 9\.0\]"):
        hp.adapters.from_smac(run, budget=5)


@pytest.mark.slow
def test_the_live_callback_says_budgets_mix_and_can_read_one(
        tmp_path: Path, capture_log: Callable[[str], list[str]]) -> None:
    from hpinsight.integrations.smac import ImportanceCallback

    cs = CS.ConfigurationSpace({"lr": (1e-4, 1.0), "warmup": (0.0, 1.0), "x": (0.0, 1.0)}, seed=0)
    scenario = smac.Scenario(cs, deterministic=True, n_trials=60, min_budget=1, max_budget=9,
                             seed=0, output_directory=tmp_path, name="live")
    mixed = ImportanceCallback(every_n_trials=20, min_trials=10, seed=0, isolation="thread")
    at_full = ImportanceCallback(every_n_trials=20, min_trials=3, seed=0, isolation="thread",
                                 budget=9, write_json=False)
    facade = smac.MultiFidelityFacade(
        scenario, target, intensifier=smac.MultiFidelityFacade.get_intensifier(scenario, eta=3),
        callbacks=[mixed, at_full], overwrite=True, logging_level=40)
    lines = capture_log("hpinsight.integrations.smac")
    facade.optimize()
    assert mixed.close(60)
    assert at_full.close(60)
    assert not mixed.errors
    assert not at_full.errors
    written = json.loads(mixed.result_path.read_text())
    assert len(written["budgets"]) > 1
    assert any("each configuration at its highest (budget= reads one)" in m for m in lines), lines
    assert at_full.latest is not None
    assert at_full.latest.n_trials == hp.adapters.from_smac(facade, budget=9).n_trials
    with pytest.raises(TypeError, match="'budget' parameter of ImportanceCallback"):
        ImportanceCallback(budget="9")


@pytest.mark.slow
def test_shrinking_decides_on_the_budget_it_is_given(run: Any) -> None:
    from hpinsight.integrations.smac import shrink_and_continue

    at_full = shrink_and_continue(run, target, keep=1, budget=9, n_trials=3, name="at9")
    assert at_full.kept == ("lr",)  # at the full budget warmup does nothing
    assert set(at_full.fixed) == {"warmup", "x"}
    with pytest.raises(ValueError, match="no successful run at budget=5"):
        shrink_and_continue(run, target, keep=1, budget=5, n_trials=3, name="at5")
