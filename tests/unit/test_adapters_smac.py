"""Reading SMAC runs without SMAC: saved folders of both runhistory layouts, aggregation
over instances and budgets, exclusions, objectives, and errors that say what to do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.adapters._smac import Instances, SmacRun, history_from_records

pytest.importorskip("ConfigSpace")

SMAC20 = Path(__file__).parent / "data" / "smac20_run"


def test_a_smac20_folder_is_aggregated_per_configuration():
    h = hp.adapters.from_smac(SMAC20, instances="mean")
    # config 1: instances i1, i2 -> (1 + 3) / 2; config 2: its crashed run is left out;
    # config 3: only a TIMEOUT run -> absent; config 4: (0.25 + 0.75) / 2
    assert h.trial_ids == (1, 2, 4)
    np.testing.assert_allclose(h.y, [2.0, 0.5, 0.5])
    assert dict(h.excluded) == {"CRASHED": 1, "TIMEOUT": 1}
    assert h.objective_name == "quality"
    assert set(h.space.names) == {"algo", "m", "n", "x"}
    assert dict(h.configs[0]) == {"algo": "a", "n": 4, "x": 0.2}  # 'm' inactive, not made up
    m = h.space.names.index("m")
    assert h.space.active_mask(h.space.encode(h.configs))[:, m].tolist() == [False, True, True]
    # config 2 ran on i1 only, the others on i1 and i2: "auto" models the instances
    modelled = hp.adapters.from_smac(SMAC20)
    assert modelled.objective_name == "quality (averaged over 2 instances by a model of the runs)"
    assert modelled.trial_ids == h.trial_ids
    assert not np.array_equal(modelled.y, h.y)


def test_an_instance_model_removes_what_uneven_instances_would_credit_to_a_knob():
    """Configurations with z > 0.5 ran on hard instances only (as intensification can do):
    per-instance offsets of 0..30 then dominate the plain mean and make z look important;
    Sec. 3.3's model of the runs averages each configuration over all instances."""
    import ConfigSpace as CS

    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("x", (0.0, 1.0)), CS.Float("z", (0.0, 1.0))])
    space = hp.adapters.from_configspace(cs)
    rng = np.random.default_rng(0)
    configs = {i: dict(c) for i, c in enumerate(space.sample(300, seed=1))}
    offsets = {f"i{k}": 10.0 * k for k in range(4)}
    runs = []
    for cid, c in configs.items():
        pool = ["i2", "i3"] if c["z"] > 0.5 else ["i0", "i1", "i2", "i3"]
        for inst in rng.choice(pool, size=2, replace=False):
            runs.append(SmacRun(cid, str(inst), 0, None, 5.0 * c["x"] + offsets[inst], 1))
    mean = history_from_records(hp.TrialHistory, cs, runs, configs, instances="mean")
    model = history_from_records(hp.TrialHistory, cs, runs, configs, instances="auto")
    spurious = hp.fanova(mean, seed=0).importance("z").mean
    assert spurious > 0.5  # the instances' difficulty, credited to z
    fixed = hp.fanova(model, seed=0)
    assert fixed.importance("x").mean > 0.85
    assert fixed.importance("z").mean < 0.1
    assert "averaged over 4 instances" in model.objective_name
    # instance features are used when the run has them, and give the same picture
    features = Instances(tuple(offsets), {k: [v, 1.0] for k, v in offsets.items()})
    with_features = history_from_records(hp.TrialHistory, cs, runs, configs, known=features)
    assert hp.fanova(with_features, seed=0).importance("x").mean > 0.85
    with pytest.raises(ValueError, match="'instances' parameter"):
        history_from_records(hp.TrialHistory, cs, runs, configs, instances="median")


def test_a_parent_folder_with_one_run_is_found_and_two_runs_are_listed(tmp_path):
    shutil.copytree(SMAC20, tmp_path / "out" / "name" / "0")
    assert hp.adapters.from_smac(tmp_path / "out").trial_ids == (1, 2, 4)
    shutil.copytree(SMAC20, tmp_path / "out" / "name" / "1")
    with pytest.raises(ValueError, match=r"2 SMAC runs below .*name/0.*name/1"):
        hp.adapters.from_smac(tmp_path / "out")


def test_the_newer_layout_reads_the_same_as_the_old(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(SMAC20, folder)
    data = json.loads((folder / "runhistory.json").read_text())
    keys = ["config_id", "instance", "seed", "budget", "cost", "time", "status", "starttime",
            "endtime", "additional_info"]
    data["data"] = [{**dict(zip(keys, e, strict=True)), "cpu_time": 0.0} for e in data["data"]]
    (folder / "runhistory.json").write_text(json.dumps(data))
    new, old = hp.adapters.from_smac(folder), hp.adapters.from_smac(SMAC20)
    assert new.trial_ids == old.trial_ids
    np.testing.assert_array_equal(new.y, old.y)
    assert dict(new.excluded) == dict(old.excluded)


def _space():
    import ConfigSpace as CS

    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("x", (0.0, 1.0)), CS.Categorical("k", ["a", "b"])])
    return cs


def test_budgets_keep_the_highest_and_objectives_are_chosen_by_index_or_name():
    cs = _space()
    configs = {1: {"x": 0.1, "k": "a"}, 2: {"x": 0.9, "k": "b"}}
    runs = [SmacRun(1, None, 0, 10.0, [5.0, 50.0], 1), SmacRun(1, None, 0, 30.0, [1.0, 10.0], 1),
            SmacRun(2, None, 0, 10.0, [2.0, 20.0], 1), SmacRun(2, None, 0, 10.0, [4.0, 40.0], 1),
            SmacRun(2, None, 1, 10.0, [float("nan"), 1.0], 1)]
    by_index = history_from_records(hp.TrialHistory, cs, runs, configs, objective=1,
                                    objectives=["loss", "seconds"])
    np.testing.assert_allclose(by_index.y, [10.0, (20.0 + 40.0 + 1.0) / 3])
    assert by_index.objective_name == "seconds"
    assert dict(by_index.excluded) == {"lower budget": 1}
    by_name = history_from_records(hp.TrialHistory, cs, runs, configs, objective="loss",
                                   objectives=["loss", "seconds"])
    np.testing.assert_allclose(by_name.y, [1.0, 3.0])  # the NaN loss is left out ...
    assert dict(by_name.excluded) == {"lower budget": 1, "non-finite cost": 1}  # ... and counted


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, r"2 objectives \('loss', 'seconds'\).*objective=<index>.*'front'"),
        ({"objective": "accuracy"}, ValueError, r"one of the run's objectives \['loss', 'seconds'\]"),
        ({"objective": 2}, ValueError, r"index in \[0, 1\]"),
        ({"objective": True}, ValueError, r"index in \[0, 1\]"),
    ],
    ids=["missing", "unknown-name", "index-out-of-range", "bool"],
)
def test_multi_objective_errors_say_how(kwargs, error, match):
    runs = [SmacRun(1, None, 0, None, [1.0, 2.0], 1)]
    with pytest.raises(error, match=match):
        history_from_records(hp.TrialHistory, _space(), runs, {1: {"x": 0.5, "k": "a"}},
                             objectives=["loss", "seconds"], **kwargs)


def test_bad_sources_and_folders_say_what_to_do(tmp_path):
    with pytest.raises(TypeError, match=r"SMAC facade, a smac\.RunHistory"):
        hp.adapters.from_smac(42)
    with pytest.raises(FileNotFoundError, match="there is no folder"):
        hp.adapters.from_smac(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no runhistory\.json"):
        hp.adapters.from_smac(tmp_path / "empty")
    broken = tmp_path / "broken"
    shutil.copytree(SMAC20, broken)
    (broken / "runhistory.json").write_text('{"data": [')
    with pytest.raises(hp.exceptions.InvalidDataError, match="not valid JSON"):
        hp.adapters.from_smac(broken)
    (broken / "runhistory.json").write_text('{"data": [[1, 2]], "configs": {}}')
    with pytest.raises(hp.exceptions.InvalidDataError, match="layout this version does not know"):
        hp.adapters.from_smac(broken)
    (broken / "configspace.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"no configspace\.json"):
        hp.adapters.from_smac(broken)
    with pytest.raises(ValueError, match="has one objective"):
        hp.adapters.from_smac(SMAC20, objective=1)


def test_the_pareto_front_of_a_multi_objective_run():
    # each objective is aggregated over a configuration's runs first (the mean here),
    # then each configuration gets the share of configurations that dominate it
    cs = _space()
    configs = {1: {"x": 0.1, "k": "a"}, 2: {"x": 0.5, "k": "b"}, 3: {"x": 0.9, "k": "a"},
               4: {"x": 0.3, "k": "b"}, 5: {"x": 0.7, "k": "a"}}
    runs = [SmacRun(1, None, 0, None, [1.0, 5.0], 1), SmacRun(1, None, 1, None, [3.0, 5.0], 1),
            SmacRun(2, None, 0, None, [3.0, 3.0], 1),
            SmacRun(3, None, 0, None, [4.0, 4.0], 1),
            SmacRun(4, None, 0, None, [5.0, 1.0], 1),
            SmacRun(5, None, 0, None, [float("nan"), 0.0], 1)]
    front = history_from_records(hp.TrialHistory, cs, runs, configs, objective="front",
                                 objectives=["loss", "seconds"], instances="mean")
    assert front.is_front
    assert front.trial_ids == (1, 2, 3, 4)  # 5 has no finite loss
    # means: 1 (2, 5), 2 (3, 3), 3 (4, 4), 4 (5, 1); only 2 dominates 3
    np.testing.assert_allclose(front.y, [0.0, 0.0, 0.25, 0.0])
    assert dict(front.excluded) == {"non-finite cost": 1}
    assert hp.fanova(front, seed=0).n_trials == 4


@pytest.mark.parametrize(("scale", "offset"), [(1e-8, 0.0), (1.0, 1e8), (1e3, -5.0)])
def test_the_average_over_instances_follows_the_costs_scale(scale: float, offset: float) -> None:
    # the run model was fit on raw costs: scikit-learn makes a node whose variance is
    # below the float epsilon a leaf, so costs of 1e-8 averaged to one value for every
    # configuration (the study was "constant"), and an offset of 1e8 cost x most of
    # its share
    from hpinsight.surrogates.forest._instances import average_over_instances

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(60, seed=0)
    rng = np.random.default_rng(0)
    runs = [(c, i) for c in range(60) for i in rng.choice(4, rng.integers(1, 3), replace=False)]
    config_of_run = np.array([c for c, _ in runs])
    instance_of_run = np.array([i for _, i in runs])
    difficulty = np.array([0.0, 0.1, 0.2, 0.4])
    cost = np.array([(configs[c]["x"] - 0.3) ** 2 + difficulty[i] for c, i in runs])
    features = np.arange(4.0).reshape(-1, 1)
    base = average_over_instances(space, configs, config_of_run, instance_of_run, cost,
                                  features, seed=0)
    scaled = average_over_instances(space, configs, config_of_run, instance_of_run,
                                    offset + scale * cost, features, seed=0)
    assert np.unique(base).size == 60
    assert np.unique(scaled).size == 60
    # the same up to the ties the trees break by rounding (costs without noise)
    np.testing.assert_allclose((scaled - offset) / scale, base, atol=0.01)
