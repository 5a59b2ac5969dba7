"""Shrinking a 10-parameter search space to the important ones, with TPE and random search."""

from __future__ import annotations

import contextlib
import datetime
import logging
import math
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import optuna
import pytest

import hpinsight as hp
from hpinsight.integrations._optuna_live import is_opening
from hpinsight.integrations._optuna_shrink import _spread
from hpinsight.integrations.optuna import (
    DECISIONS_KEY,
    ImportanceCallback,
    ShrinkingSampler,
    read_ranges,
    read_restriction,
    restrict,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)
IMPORTANT = ("a", "b", "c")


def true_cost(name: str, value: Any) -> float:
    """What fixing ``name`` at ``value`` really costs on ``objective`` (it is separable)."""
    if name == "a":
        return float((value - 1) ** 2)
    if name == "b":
        return float((math.log10(value) + 2) ** 2)
    if name == "c":
        return 0.05 * (value - 7) ** 2
    return 1e-3 * value if name.startswith("n") else 0.0


def objective(t: optuna.Trial) -> float:
    a = t.suggest_float("a", -3, 3)
    b = t.suggest_float("b", 1e-4, 1, log=True)
    c = t.suggest_int("c", 0, 20)
    rest = [t.suggest_float(f"n{i}", 0, 1) for i in range(6)]
    t.suggest_categorical("k", ["p", "q", "r"])
    return (a - 1) ** 2 + (math.log10(b) + 2) ** 2 + 0.05 * (c - 7) ** 2 + 1e-3 * sum(rest)


@pytest.mark.parametrize(
    ("base", "ranked_right"),
    [
        # On these 60 TPE trials a forest credits nuisance knobs that TPE sampled together
        # with good values of 'a' (Optuna's own fANOVA does the same); the default Gaussian
        # process ranks a, b, c first on TPE's samples as on random ones.
        pytest.param(lambda: optuna.samplers.TPESampler(seed=0), True, id="tpe"),
        pytest.param(lambda: optuna.samplers.TPESampler(seed=0, multivariate=True), True,
                     id="mtpe"),
        pytest.param(lambda: optuna.samplers.RandomSampler(seed=0), True, id="random"),
    ],
)
def test_shrink_fixes_the_unimportant_and_release_restores(base: Any, ranked_right: bool) -> None:
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, shrink_to=3, shrink_after=60,
                            seed=0, defaults={"k": "q"})
    study = optuna.create_study(sampler=ShrinkingSampler(base()))
    study.optimize(objective, n_trials=60, callbacks=[cb])
    assert cb.wait(120)
    assert read_restriction(study) == {}  # due at the last trial: taken as the next starts
    study.optimize(objective, n_trials=1, callbacks=[cb])
    assert not cb.errors
    fixed = read_restriction(study)
    at_shrink = cb.history[-1]
    assert at_shrink.n_trials == 60
    assert study.trials[60].system_attrs["hpinsight:sampled_under"]["fixed"] == fixed
    kept = set(list(at_shrink.importances)[:3])
    assert set(fixed) == set(at_shrink.importances) - kept
    if ranked_right:
        assert kept == set(IMPORTANT)
    if "k" in fixed:
        assert fixed["k"] == "q"  # a given default wins over the incumbent
    best_before = study.best_value
    incumbent = study.best_trial.params
    assert all(fixed[n] == incumbent[n] for n in fixed if n != "k")
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["action"] == "fix"
    assert decision["after_trial"] == 59
    assert "shrink_to=3" in decision["why"]

    snapshot = {t.number: dict(t.params) for t in study.trials[:60]}
    study.optimize(objective, n_trials=59, callbacks=[cb])
    later = study.trials[60:]
    sampler = study.sampler
    explored = [t for t in later if sampler.explores(t.number)]
    assert [t.number for t in explored] == [69, 79, 89, 99, 109, 119]  # one in ten, by number
    for t in later:
        if t in explored:  # sampled over the whole space, and marked so
            assert t.system_attrs["hpinsight:sampled_under"]["explored"] == sorted(fixed)
        else:
            assert {k: t.params[k] for k in fixed} == fixed
    floats = [n for n in fixed if n.startswith("n")]
    assert all(t.params[n] != fixed[n] for t in explored for n in floats)
    for name in kept:  # the free ones are still searched (c is an int TPE homes in on)
        assert len({t.params[name] for t in later}) > 5
    assert study.best_value < best_before
    assert {t.number: dict(t.params) for t in study.trials[:60]} == snapshot  # data untouched

    cb.release(study)
    assert read_restriction(study) == {}
    study.optimize(objective, n_trials=20, callbacks=[cb])
    assert cb.close(120)
    for name in set(fixed) - {"k"}:  # (TPE may well keep choosing the categorical's 'q')
        assert len({t.params[name] for t in study.trials[120:]}) > 1
    assert read_restriction(study) == {}  # a released study is not shrunk again
    assert [d["action"] for d in study.user_attrs[DECISIONS_KEY]] == ["fix", "release"]


def test_parallel_trials_each_see_one_restriction() -> None:
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=1),
                                                         explore_every=None))
    study.optimize(objective, n_trials=8, n_jobs=4)
    ShrinkingSampler.restrict(study, {"n0": 0.25, "k": "r"}, why="test")
    study.optimize(objective, n_trials=24, n_jobs=4)
    assert all(t.params["n0"] == 0.25 and t.params["k"] == "r" for t in study.trials[8:])
    assert len({t.params["n0"] for t in study.trials[:8]}) == 8


def test_a_fixed_value_outside_a_changed_range_is_not_forced() -> None:
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    ShrinkingSampler.restrict(study, {"x": 5.0}, why="test")
    with pytest.warns(UserWarning, match=r"cannot fix 'x' at 5\.0: .* float in \[0, 1\]"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=5)
    assert all(0 <= t.params["x"] <= 1 for t in study.trials)
    assert len({t.params["x"] for t in study.trials}) == 5


def test_shrink_to_must_be_a_positive_int_or_auto() -> None:
    for wrong in (0, -1, "all", 2.0, True):
        with pytest.raises(ValueError, match=r"positive int .* or 'auto'"):
            ImportanceCallback(shrink_to=wrong)


def test_options_of_shrinking_are_refused_where_they_would_do_nothing() -> None:
    # accepted, they were silently ignored
    for given in ({"narrow_quantile": 0.2}, {"shrink_after": 30}, {"defaults": {"x": 1}},
                  {"risk_margin": 0.1}):
        with pytest.raises(ValueError, match=f"{next(iter(given))} only acts with shrink_to"):
            ImportanceCallback(**given)
    with pytest.raises(ValueError, match="risk_margin is read by shrink_to='auto' only"):
        ImportanceCallback(shrink_to=2, risk_margin=0.1)
    accepted = ImportanceCallback(shrink_to="auto", risk_margin=0.1, shrink_after=30)
    assert repr(accepted).startswith("ImportanceCallback(")
    accepted.close()


def test_restrict_rejects_values_optuna_cannot_store() -> None:
    study = optuna.create_study()
    with pytest.raises(TypeError, match="number, string, bool or None"):
        ShrinkingSampler.restrict(study, {"x": [1, 2]}, why="test")
    with pytest.raises(TypeError, match="Optuna sampler"):
        ShrinkingSampler("tpe")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "base",
    [
        pytest.param(lambda: optuna.samplers.TPESampler(seed=0), id="tpe"),
        pytest.param(lambda: optuna.samplers.TPESampler(seed=0, multivariate=True), id="mtpe"),
        pytest.param(lambda: optuna.samplers.RandomSampler(seed=0), id="random"),
    ],
)
def test_narrowed_ranges_hold_and_release_widens_them(base: Any) -> None:
    cb = ImportanceCallback(every_n_trials=20, min_trials=20, shrink_to=3, shrink_after=40,
                            narrow_quantile=0.25, seed=0)
    study = optuna.create_study(sampler=ShrinkingSampler(base()))
    study.optimize(objective, n_trials=40, callbacks=[cb])
    assert cb.wait(120)
    kept = list(cb.history[-1].importances)[:3]
    study.optimize(objective, n_trials=1, callbacks=[cb])  # the decision due at 40 is taken
    assert not cb.errors
    ranges = read_ranges(study)
    numeric_kept = [n for n in kept if n != "k"]
    assert set(ranges) == set(numeric_kept)
    # each range is what the best quarter of the 40 trials spans
    best = sorted(study.trials[:40], key=lambda t: t.value)[:10]
    for name, (low, high) in ranges.items():
        assert low == min(t.params[name] for t in best)
        assert high == max(t.params[name] for t in best)
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["ranges"] == {n: list(r) for n, r in ranges.items()}
    assert "narrowed" in decision["why"]

    study.optimize(objective, n_trials=29, callbacks=[cb])
    for t in _restricted(study, study.trials[40:]):
        for name, (low, high) in ranges.items():
            assert low <= t.params[name] <= high
            assert t.distributions[name] == study.trials[0].distributions[name]  # as asked
        assert isinstance(t.params["c"], int)

    cb.release(study)
    assert read_ranges(study) == {}
    study.optimize(objective, n_trials=30)
    assert cb.close(120)
    outside = [t for t in study.trials[70:]
               if any(not low <= t.params[n] <= high for n, (low, high) in ranges.items())]
    assert outside


@pytest.mark.parametrize(
    ("dist", "bounds", "expected"),
    [
        (optuna.distributions.FloatDistribution(0, 10), (2.5, 4), (2.5, 4.0)),
        (optuna.distributions.FloatDistribution(0, 10, step=0.5), (2.2, 4.9), (2.5, 4.5)),
        (optuna.distributions.FloatDistribution(1e-4, 1, log=True), (1e-6, 1e-2), (1e-4, 1e-2)),
        (optuna.distributions.IntDistribution(0, 20), (3.4, 9.6), (4, 9)),
        (optuna.distributions.IntDistribution(1, 21, step=4), (6, 20), (9, 17)),
        (optuna.distributions.IntDistribution(1, 21, step=4), (6, 8), None),  # no grid value
        (optuna.distributions.FloatDistribution(0, 1), (2, 3), None),  # misses the range
    ],
    ids=["float", "stepped-float", "log-float", "int", "stepped-int", "empty-grid", "disjoint"],
)
def test_narrowing_keeps_kind_scale_and_step(dist: Any, bounds: Any, expected: Any) -> None:
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0),
                                                         explore_every=None))
    restrict(study, {}, ranges={"p": bounds}, why="test")
    # a range holding none of the values is said at the first trial (restrict, with no
    # trial yet, could not tell), and ignored
    with (pytest.warns(UserWarning, match="that range holds none of its values")
          if expected is None else contextlib.nullcontext()):
        study.optimize(lambda t: float(t._suggest("p", dist)), n_trials=25)
    values = [t.params["p"] for t in study.trials]
    assert all(dist._contains(dist.to_internal_repr(v)) for v in values)
    if expected is None:  # not narrowed: the whole distribution stays reachable
        assert max(values) - min(values) > 0.5 * (dist.high - dist.low)
    else:
        assert min(values) >= expected[0]
        assert max(values) <= expected[1]
        assert len(set(values)) > 1


def test_restrict_rejects_bad_ranges() -> None:
    study = optuna.create_study()
    with pytest.raises(ValueError, match=r"pair \(low, high\) of finite numbers"):
        restrict(study, {}, ranges={"x": (2, 1)}, why="test")
    with pytest.raises(ValueError, match="both fixed and narrowed"):
        restrict(study, {"x": 1}, ranges={"x": (0, 2)}, why="test")
    assert read_ranges(study) == {}


def test_restrict_refuses_what_the_study_s_trials_could_not_take() -> None:
    # accepted, such a restriction was skipped by the sampler in every trial while the
    # report said "fixed at 5"
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + len(t.suggest_categorical("kind", ["a", "bb"]))
                   + t.suggest_int("n", 2, 10, step=2), n_trials=6)
    with pytest.raises(ValueError, match=r"cannot fix 'x' at 5\.0: .* sample it from float in \[0, 1\]"):
        restrict(study, {"x": 5.0}, why="test")
    with pytest.raises(ValueError, match=r"cannot fix 'kind' at 'zzz': .* one of \('a', 'bb'\)"):
        restrict(study, {"kind": "zzz"}, why="test")
    with pytest.raises(ValueError, match=r"cannot fix 'n' at 3: .* int in \[2, 10\], step 2"):
        restrict(study, {"n": 3}, why="test")
    with pytest.raises(ValueError, match=r"cannot narrow 'x' to \[2, 3\]: .* holds none of its values"):
        restrict(study, {}, ranges={"x": (2, 3)}, why="test")
    with pytest.raises(ValueError, match=r"cannot narrow 'kind': it is categorical"):
        restrict(study, {}, ranges={"kind": (0, 1)}, why="test")
    assert read_restriction(study) == {}
    assert read_ranges(study) == {}
    with pytest.warns(UserWarning, match=r"no trial of study .* has the parameter\(s\) \['nope'\]") as warned:
        restrict(study, {"nope": 1, "x": 0.5}, why="test")
    assert warned[0].filename == __file__  # it points at the caller
    assert read_restriction(study) == {"nope": 1, "x": 0.5}  # recorded: a later trial may suggest it
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    assert [t.params["x"] for t in study.trials[6:]] == [0.5, 0.5, 0.5]


def test_a_name_restricted_before_any_trial_and_never_suggested_is_said_once() -> None:
    # restrict() before the first trial cannot check names against trials: a misspelt
    # one was held in no trial, and nothing said so
    def objective(t: optuna.Trial) -> float:
        return (t.suggest_float("learning_rate", 1e-4, 1, log=True) - 0.01) ** 2

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    restrict(study, {"lerning_rate": 0.01}, why="by hand")  # no trial yet: nothing to check
    with pytest.warns(UserWarning, match=r"names \['lerning_rate'\], which no finished trial "
                                         r"has \(its trials have \['learning_rate'\]\); a "
                                         r"misspelt name is never held") as warned:
        study.optimize(objective, n_trials=5)
    assert len([w for w in warned if "lerning_rate" in str(w.message)]) == 1  # once
    assert len({t.params["learning_rate"] for t in study.trials}) == 5  # held in none
    # the name the objective suggests: held, and nothing said
    spelt = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    restrict(spelt, {"learning_rate": 0.01}, why="by hand")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spelt.optimize(objective, n_trials=5)
    assert {t.params["learning_rate"] for t in spelt.trials} == {0.01}


def test_restrict_takes_a_value_one_of_a_dynamic_space_s_distributions_holds() -> None:
    # lr's range depends on the optimizer: checked against the latest trial's alone, 0.5
    # (an sgd value) was refused after an adam trial
    def objective_dyn(t: optuna.Trial) -> float:
        opt = t.suggest_categorical("opt", ["adam", "sgd"])
        lr = t.suggest_float("lr", 1e-4, 1e-2) if opt == "adam" else t.suggest_float("lr", 1e-2, 1.0)
        return lr

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=1)))
    study.optimize(objective_dyn, n_trials=12)
    assert {t.params["opt"] for t in study.trials} == {"adam", "sgd"}
    restrict(study, {"lr": 0.5}, why="an sgd value")
    assert read_restriction(study) == {"lr": 0.5}
    with pytest.raises(ValueError, match=r"sample it from float in \[0\.0001, 0\.01\] or float in \[0\.01, 1\]|"
                                         r"sample it from float in \[0\.01, 1\] or float in \[0\.0001, 0\.01\]"):
        restrict(study, {"lr": 2.0}, why="no trial's")


@contextlib.contextmanager
def stored_study(tmp_path: Any, name: str) -> Iterator[tuple[Any, list[str]]]:
    """A 60-trial random-search study in SQLite, and the ``hpinsight watch --once`` command."""
    url = f"sqlite:///{tmp_path / (name + '.db')}"
    storage = optuna.storages.RDBStorage(url)
    try:
        study = optuna.create_study(study_name=name, storage=storage,
                                    sampler=optuna.samplers.RandomSampler(seed=0))
        study.optimize(objective, n_trials=60)
        yield storage, [sys.executable, "-m", "hpinsight", "watch", "--storage", url, "--study",
                        name, "--once", "--seed", "0"]
    finally:
        storage.engine.dispose()


def test_watch_shrinks_and_narrows_a_stored_study_for_its_workers(tmp_path: Any) -> None:
    with stored_study(tmp_path, "w") as (storage, base):
        bad = subprocess.run([*base, "--narrow-quantile", "0.2"], capture_output=True, text=True,
                             timeout=120)
        assert bad.returncode == 2
        assert "--narrow-quantile needs --shrink-to" in bad.stderr
        done = subprocess.run([*base, "--publish", "--shrink-to", "3", "--shrink-after", "40",
                               "--narrow-quantile", "0.25"], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        study = optuna.load_study(study_name="w", storage=storage)
        fixed, ranges = read_restriction(study), read_ranges(study)
        kept = set(study.user_attrs["hpinsight:importance"]["importance"]) - set(fixed)
        assert kept == set(IMPORTANT)  # random search: the ranking is right
        assert set(ranges) == set(IMPORTANT)  # all three kept ones are numerical
        best = sorted(study.trials, key=lambda t: t.value)[:15]
        for name, (low, high) in ranges.items():
            assert (low, high) == (min(t.params[name] for t in best),
                                   max(t.params[name] for t in best))
        # a worker process with a ShrinkingSampler follows what watch decided
        worker = optuna.load_study(study_name="w", storage=storage,
                                   sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=1)))
        worker.optimize(objective, n_trials=10)
        for t in _restricted(worker, worker.trials[60:]):
            assert {n: t.params[n] for n in fixed} == fixed
            assert all(low <= t.params[n] <= high for n, (low, high) in ranges.items())


@pytest.mark.parametrize(
    "base",
    [
        pytest.param(lambda: optuna.samplers.TPESampler(seed=0), id="tpe"),
        pytest.param(lambda: optuna.samplers.RandomSampler(seed=0), id="random"),
    ],
)
def test_auto_fixes_only_what_the_statistics_call_safe(base: Any) -> None:
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, shrink_to="auto", shrink_after=60,
                            seed=0, defaults={"k": "q"})
    study = optuna.create_study(sampler=ShrinkingSampler(base()))
    study.optimize(objective, n_trials=61, callbacks=[cb])  # decided as trial 60 starts
    assert cb.wait(120)
    assert not cb.errors
    sub = cb.subspace
    assert sub is not None
    assert sub.n_trials == 60
    fixed = read_restriction(study)
    assert fixed == sub.fixed
    for name, value in fixed.items():
        assert sub.decisions[name].state == "fix"
        assert sub.reasons[name].startswith("You can stop tuning it")
        assert sub.risks[name].quantile(sub.confidence) <= sub.margin
        assert value == sub.defaults[name]
    if "k" in fixed:
        assert fixed["k"] == "q"  # a given default wins
    assert "a" not in fixed  # the strongest effect, far from cheap at any data default
    for name, value in fixed.items():  # what it fixes really costs little (may be b or c
        assert true_cost(name, value) <= 2 * sub.margin, name  # at a value near their optimum)
    for name in sub.keep:
        assert sub.decisions[name].tuned
        assert sub.reasons[name].startswith("Keep tuning")
    # the parameters that matter are narrowed by default: a restriction ("fix") even
    # where nothing is fixed
    ranges = read_ranges(study)
    assert set(ranges) <= {n for n in sub.keep if sub.decisions[n].state == "matters"}
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["action"] == ("fix" if fixed or ranges else "keep")
    assert "shrink_to='auto' after 60 trials" in decision["why"]
    if fixed:  # the margin is named as the margin, not as what fixing costs
        from hpinsight._decision_result import fmt_cost

        assert f"within the margin ({fmt_cost(sub.margin)})" in decision["why"]
    study.optimize(objective, n_trials=29, callbacks=[cb])
    assert cb.close(120)
    assert len(study.user_attrs[DECISIONS_KEY]) == 1  # the next check falls due at 120
    summary = study.user_attrs["hpinsight:importance"]  # the live summary says the same
    assert summary["n_trials"] == 90
    assert summary["decided_after"] == 60
    assert summary["decisions"] == {d.param: d.state for d in sub.decisions}
    for t in _restricted(study, study.trials[60:]):
        assert {k: t.params[k] for k in fixed} == fixed
        assert all(low <= t.params[n] <= high for n, (low, high) in ranges.items())


def test_auto_writes_no_restriction_for_a_parameter_with_one_value() -> None:
    # "fixed at 0.5" by the decisions (the space gives it no other value), it went into the
    # restriction with the reason of a parameter safe to fix
    def with_constant(t: optuna.Trial) -> float:
        t.suggest_float("c", 0.5, 0.5)
        return (t.suggest_float("x", 0, 1) - 0.3) ** 2 + 0.0 * t.suggest_float("n", 0, 1)

    cb = ImportanceCallback(every_n_trials=100, min_trials=20, shrink_to="auto", seed=0)
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(with_constant, n_trials=51, callbacks=[cb])
    assert cb.close(120)
    assert not cb.errors
    assert cb.subspace is not None
    assert cb.subspace.decisions["c"].state == "fixed"
    assert "c" not in read_restriction(study)
    assert all("c" not in (d.get("params") or {}) for d in study.user_attrs[DECISIONS_KEY])


def test_auto_takes_the_risk_margin_it_is_given() -> None:
    # the same 60 random trials decided with the default margin and with a tenth of it:
    # the margin is the one asked for, and a smaller margin never fixes more
    margins = {}
    fixed = {}
    for margin in (0.05, 0.005):
        cb = ImportanceCallback(every_n_trials=10, min_trials=20, shrink_to="auto",
                                shrink_after=60, seed=0, risk_margin=margin, isolation="thread")
        study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
        study.optimize(objective, n_trials=61, callbacks=[cb])  # decided as trial 60 starts
        assert cb.wait(120)
        assert cb.close(120)
        sub = cb.subspace
        assert sub is not None
        margins[margin], fixed[margin] = sub.margin, set(read_restriction(study))
        for name in fixed[margin]:
            assert sub.risks[name].quantile(sub.confidence) <= sub.margin
    assert margins[0.005] == pytest.approx(margins[0.05] / 10)
    assert fixed[0.005] <= fixed[0.05]
    with pytest.raises(ValueError, match="risk_margin"):
        ImportanceCallback(shrink_to="auto", risk_margin=-0.1)


def test_watch_shrink_to_auto(tmp_path: Any) -> None:
    with stored_study(tmp_path, "a") as (storage, base):
        base = [*base, "--publish"]
        for wrong in ("most", "0"):
            bad = subprocess.run([*base, "--shrink-to", wrong], capture_output=True, text=True,
                                 timeout=120)
            assert bad.returncode == 2
            assert "(1 or more) or 'auto'" in bad.stderr
        bad = subprocess.run([*base, "--shrink-to", "auto", "--risk-margin", "-1"],
                             capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2
        assert "--risk-margin must be a number >= 0" in bad.stderr
        done = subprocess.run([*base, "--shrink-to", "auto", "--shrink-after", "40",
                               "--risk-margin", "0.05"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        study = optuna.load_study(study_name="a", storage=storage)
        fixed, ranges = read_restriction(study), read_ranges(study)
        assert "a" not in fixed
        # as the callback: what matters narrowed by default (--narrow-quantile auto)
        states = study.user_attrs["hpinsight:importance"]["decisions"]
        assert ranges
        assert set(ranges) == {n for n, state in states.items() if state == "matters"}
        (decision,) = study.user_attrs[DECISIONS_KEY]
        assert decision["action"] == "fix"
        assert "shrink_to='auto' after 60 trials" in decision["why"]
        # and it says so on screen, not only in the study
        assert f"decision ({decision['action']}): {decision['why']}" in done.stdout
        again = subprocess.run([*base, "--once"], capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        if fixed:  # a later watcher starts by showing what is in force
            assert "restriction in force: fixed " in again.stdout
        assert "decision (" not in again.stdout  # old decisions are not news


def _restricted(study: optuna.Study, trials: list[Any]) -> list[Any]:
    """``trials`` without the ones the study's ShrinkingSampler let explore the whole space."""
    return [t for t in trials if not study.sampler.explores(t.number)]


def test_a_decision_is_taken_at_its_trial_count_whether_or_not_a_refit_runs() -> None:
    # no routine refit at all before trial 500: the decision still falls due at trial 50,
    # is taken on the first 50 trials, and holds from trial 50 on
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to=3, shrink_after=50,
                            seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=80, callbacks=[cb])
    assert not cb.history  # no refit was due
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["after_trial"] == 49
    assert "after 50 trials" in decision["why"]
    fixed = read_restriction(study)
    assert fixed
    assert all({n: t.params[n] for n in fixed} == fixed
               for t in _restricted(study, study.trials[50:]))
    assert cb.close(120)


def _decided_run(every_n_trials: int, isolation: str) -> tuple[list[Any], list[Any]]:
    cb = ImportanceCallback(every_n_trials=every_n_trials, min_trials=20, shrink_to="auto",
                            shrink_after=50, seed=3, isolation=isolation)  # type: ignore[arg-type]
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.TPESampler(seed=3)))
    study.optimize(objective, n_trials=160, callbacks=[cb])
    assert cb.close(120)
    assert not cb.errors
    log = [(d["action"], d["params"], d["after_trial"])
           for d in study.user_attrs[DECISIONS_KEY]]
    return log, [t.params for t in study.trials]


def test_the_same_seed_takes_the_same_decisions_at_the_same_trials() -> None:
    # one run refits in the background every 5 trials in a child process, the other never
    # refits and computes in a thread: the timing of everything else differs, the decisions
    # (checks at 50, 100 and 150) and so every trial do not
    busy = _decided_run(5, "process")
    quiet = _decided_run(500, "thread")
    assert busy[0] == quiet[0]
    assert busy[0][0][2] == 49  # the first decision rests on trials 0..49
    assert busy[1] == quiet[1]


def _fixed_by_hand(objective: Any, value: float, shrink_after: int) -> tuple[Any, Any]:
    """A random-search study with ``shrink_to="auto"`` checks every ``shrink_after`` trials,
    'a' fixed by hand at ``value`` after 20 trials, run up to the first check and one
    trial on (the check is taken as that trial starts)."""
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=shrink_after, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=20, callbacks=[cb])
    restrict(study, {"a": value}, why="by hand, for the test", after_trial=19)
    study.optimize(objective, n_trials=shrink_after - 19, callbacks=[cb])
    return cb, study


def test_a_check_releases_a_fixed_parameter_that_matters() -> None:
    # 'a' fixed by hand far from its optimum (true cost 4) after 20 trials; the exploring
    # trials sample it again, and the check at 60 trials releases it for good
    cb, study = _fixed_by_hand(objective, 3.0, 60)
    explored = [t for t in study.trials[20:60] if study.sampler.explores(t.number)]
    assert len({t.params["a"] for t in explored}) == len(explored) == 4
    log = study.user_attrs[DECISIONS_KEY]
    assert [d["action"] for d in log[:2]] == ["fix", "release"]
    assert log[1]["params"] == {"a": 3.0}
    assert log[1]["after_trial"] == 59
    assert "a" not in read_restriction(study)
    study.optimize(objective, n_trials=69, callbacks=[cb])  # checks at 120 again
    assert cb.close(120)
    log = study.user_attrs[DECISIONS_KEY]
    assert all("a" not in d["params"] for d in log[2:])  # released for good
    assert "a" not in read_restriction(study)
    assert len({t.params["a"] for t in study.trials[60:]}) == 70


def test_a_check_releases_when_a_later_trial_finished_first() -> None:
    # parallel workers: trial 59 finishes before trial 58, so when the check falls due
    # (the 60th finished trial, 58) a later trial is already in the study. The check rests
    # on trials 0..58, and must still judge 'a' (held far from its optimum by hand) as held,
    # so that it can release it; judged as free it could never be released
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=60, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=20, callbacks=[cb])
    restrict(study, {"a": 3.0}, why="by hand, for the test", after_trial=19)
    study.optimize(objective, n_trials=38, callbacks=[cb])
    early, late = study.ask(), study.ask()
    assert (early.number, late.number) == (58, 59)
    study.tell(late, objective(late))
    cb(study, study.trials[59])
    assert [d["action"] for d in study.user_attrs[DECISIONS_KEY]] == ["fix"]  # not due yet
    study.tell(early, objective(early))
    cb(study, study.trials[58])
    study.optimize(objective, n_trials=1, callbacks=[cb])  # the check, as trial 60 starts
    assert cb.close(120)
    assert not cb.errors
    log = study.user_attrs[DECISIONS_KEY]
    assert [d["action"] for d in log[:2]] == ["fix", "release"]
    assert log[1]["params"] == {"a": 3.0}
    assert log[1]["after_trial"] == 58  # on the trials before the one it fell due at
    assert "after 59 trials" in log[1]["why"]
    assert "a" not in read_restriction(study)


def _fourth_spread(name: str) -> float:
    """The value exploring trial 39 (the fourth) spreads a parameter ``name`` of [0, 1] to."""
    return _spread(optuna.distributions.FloatDistribution(0, 1), (39 + 1) // 10, name)


def _dip_study(dip: str, seed: int, fixed: dict[str, float],
               ranges: dict[str, tuple[float, float]]) -> tuple[Any, Any]:
    """Random search on x (which matters) and z, n0, n1, n2, which do nothing but for a
    dip of width 0.02 in ``dip`` where exploring trial 39 spreads it; restricted by hand
    to ``fixed`` and ``ranges`` after 20 trials (none near the dip), then 40 more trials
    with ``shrink_to="auto"`` checking at 60 (as trial 60 starts, the last)."""
    center = _fourth_spread(dip)

    def needle(t: optuna.Trial) -> float:
        x = t.suggest_float("x", 0, 1)
        values = {name: t.suggest_float(name, 0, 1) for name in ("z", "n0", "n1", "n2")}
        return (x - 0.3) ** 2 + 1.0 - math.exp(-(((values[dip] - center) / 0.02) ** 2))

    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=60, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=seed)))
    study.optimize(needle, n_trials=20, callbacks=[cb])
    assert min(abs(t.params[dip] - center) for t in study.trials) > 0.06
    restrict(study, fixed, ranges=ranges, why="by hand, for the test", after_trial=19)
    study.optimize(needle, n_trials=41, callbacks=[cb])
    assert cb.close(120)
    assert not cb.errors
    dipped = [t.number for t in study.trials[:60] if abs(t.params[dip] - center) < 0.02]
    assert dipped == [39]
    return cb, study


def test_an_exploring_trial_that_lands_in_a_dip_releases_every_parameter_it_moved() -> None:
    # z does nothing but in a dip that no trial came near before z and the nuisances were
    # fixed by hand, away from it; exploring trial 39 spreads them and lands in the dip, a
    # gain of about 1 no other trial can predict. One trial cannot tell which parameter it
    # moved made the gain (the model credited such dips to the nuisances it moved too), so
    # the check at 60 trials releases all of them, and says why
    held = {"z": (_fourth_spread("z") + 0.5) % 1.0, "n0": 0.5, "n1": 0.5, "n2": 0.5}
    _, study = _dip_study("z", 3, held, {})
    log = study.user_attrs[DECISIONS_KEY]
    assert [d["action"] for d in log] == ["fix", "release"]
    assert log[1]["params"] == held
    assert log[1]["after_trial"] == 59
    assert log[1]["why"].count("but trial 39, which moved it and the other fixed") == 4
    assert read_restriction(study) == {}


def test_an_exploring_trial_that_lands_in_a_dip_outside_a_narrowed_range_widens_it() -> None:
    # as above, with z narrowed to a range away from the dip instead of fixed: exploring
    # trial 39 runs z outside its range, lands in the dip and releases the nuisances it
    # moved; z's range is widened on the same evidence (before, ranges were never checked)
    held = {"n0": 0.5, "n1": 0.5, "n2": 0.5}
    narrowed = (0.6, 0.9) if _fourth_spread("z") < 0.5 else (0.1, 0.4)
    cb, study = _dip_study("z", 3, held, {"z": narrowed})
    inside = _restricted(study, study.trials[20:60])
    assert inside
    assert all(narrowed[0] <= t.params["z"] <= narrowed[1] for t in inside)
    log = study.user_attrs[DECISIONS_KEY]
    assert [d["action"] for d in log] == ["fix", "release"]
    assert log[1]["params"] == held
    assert log[1]["ranges"] == {"z": list(narrowed)}
    assert log[1]["after_trial"] == 59
    assert log[1]["why"].count("but trial 39, which moved it and the other fixed") == 3
    assert "z's range, narrowed to [" in log[1]["why"]
    assert "exploring trial 39, which ran it outside that range" in log[1]["why"]
    assert read_restriction(study) == {}
    assert read_ranges(study) == {}
    assert cb.subspace is not None
    assert set(cb.subspace.decisions.widen) == {"z"}
    assert cb.subspace.decisions.to_dict()["widen"]["z"]["trial"] == 39


def test_an_exploring_trial_that_ran_z_inside_its_narrowed_range_does_not_widen_it() -> None:
    # the dip now lies in n0, fixed away from it; exploring trial 39 spreads n0 into it and
    # z to a value inside z's narrowed range. The gain releases the fixed nuisances it
    # moved, but z it did not move out of its range, so z's range stays
    inside = _fourth_spread("z")
    held = {"n0": (_fourth_spread("n0") + 0.5) % 1.0, "n1": 0.5, "n2": 0.5}
    narrowed = (max(inside - 0.2, 0.0), min(inside + 0.2, 1.0))
    cb, study = _dip_study("n0", 3, held, {"z": narrowed})
    assert study.trials[39].params["z"] == pytest.approx(inside)
    log = study.user_attrs[DECISIONS_KEY]
    # the release, then the restriction that stays: z's range alone
    assert [d["action"] for d in log] == ["fix", "release", "fix"]
    assert log[1]["params"] == held
    assert "ranges" not in log[1]
    assert "z's range" not in log[1]["why"]
    assert log[2]["params"] == {}
    assert log[2]["ranges"] == {"z": list(narrowed)}
    assert read_restriction(study) == {}
    assert read_ranges(study) == {"z": narrowed}
    assert cb.subspace is not None
    assert cb.subspace.decisions.widen == {}


def test_releasing_the_last_fixed_parameter_records_one_release() -> None:
    # both parameters matter: the check releases 'a' and fixes nothing else, so the
    # restriction ends, with one "release" in the log (not one of ours and one of release())
    def two(t: optuna.Trial) -> float:
        return (t.suggest_float("x", 0, 1) - 0.3) ** 2 + (t.suggest_float("a", 0, 1) - 0.5) ** 2

    cb, study = _fixed_by_hand(two, 0.95, 40)
    assert cb.close(wait=120)
    log = study.user_attrs[DECISIONS_KEY]
    assert [d["action"] for d in log] == ["fix", "release"]
    assert log[1]["params"] == {"a": 0.95}
    assert "shrink_to='auto' after 40 trials: released a (" in log[1]["why"]
    assert read_restriction(study) == {}


def test_nothing_is_decided_once_close_began() -> None:
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to=3, shrink_after=30,
                            seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=20, callbacks=[cb])
    assert cb.close(120)
    study.optimize(objective, n_trials=20, callbacks=[cb])  # the decision would fall due at 30
    assert read_restriction(study) == {}
    assert DECISIONS_KEY not in study.user_attrs


def wide(t: optuna.Trial) -> float:
    """``objective`` and ten floats that do nothing: 20 parameters."""
    return objective(t) + sum(t.suggest_float(f"m{i}", 0, 1) * 0.0 for i in range(10))


def wider(t: optuna.Trial) -> float:
    """``objective`` and twenty floats that do nothing: 30 parameters."""
    return objective(t) + sum(t.suggest_float(f"m{i}", 0, 1) * 0.0 for i in range(20))


@pytest.mark.parametrize(
    ("func", "narrow", "step", "first", "said", "then"),
    [
        # 30 parameters: nothing is safe to fix on fewer than 30**2 / 8 trials, 113;
        # without narrowing the decision due at 40 waits for them, and later checks stay
        # at the multiples of 40 (120, 160, ...)
        pytest.param(wider, None, 40, 113, "after 113 trials", 120, id="30-fixing-only"),
        # with narrowing, a decision at 20 or 40 trials could neither fix nor narrow: the
        # first falls due at the first multiple of 20 with 2.5 trials per parameter, 80,
        # and the next at 100, before the first that can fix
        pytest.param(wider, "auto", 20, 80, "nothing can be fixed before 113 trials", 100,
                     id="30-narrowing"),
        # 20 parameters: 50 trials are enough (5 per parameter, at most 50 up to 20)
        pytest.param(wide, None, 40, 50, "after 50 trials", 80, id="20-fixing-only"),
    ],
)
def test_auto_decides_first_once_it_can_act(
    func: Any, narrow: str | None, step: int, first: int, said: str, then: int
) -> None:
    cb = ImportanceCallback(every_n_trials=500, min_trials=10, shrink_to="auto",
                            shrink_after=step, narrow_quantile=narrow, seed=0,
                            isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(func, n_trials=first - 1, callbacks=[cb])
    assert DECISIONS_KEY not in study.user_attrs
    assert cb.subspace is None
    assert cb._refitter.next_decision == first
    study.optimize(func, n_trials=1, callbacks=[cb])  # due now: taken as the next trial starts
    assert DECISIONS_KEY not in study.user_attrs
    study.optimize(func, n_trials=1, callbacks=[cb])
    log = study.user_attrs[DECISIONS_KEY]
    assert [d["after_trial"] for d in log] == [first - 1]
    assert said in log[0]["why"]
    assert cb._refitter.next_decision == then
    assert cb.close(120)


def test_auto_narrows_before_it_can_fix_and_fixes_from_d_squared_over_8_trials() -> None:
    # 30 parameters: the decision due at 75 (2.5 per parameter) narrows what matters ('a'
    # dwarfs the rest) and fixes nothing, as nothing can be safe to fix before 30**2 / 8
    # = 113 trials; the first decision that can fix falls due at 113, between the
    # multiples of 25 (75, 100, 125, ...)
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=25, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(wider, n_trials=76, callbacks=[cb])  # each check as the next trial starts
    log = study.user_attrs[DECISIONS_KEY]
    assert [(d["action"], d["after_trial"], d["params"]) for d in log] == [("fix", 74, {})]
    assert "a" in log[0]["ranges"]
    assert set(log[0]["ranges"]) <= set(IMPORTANT)
    assert "nothing can be fixed before 113 trials (min(5 d, max(50, d\u00b2/8)) for d " \
        "parameters)" in log[0]["why"]
    assert cb._refitter.next_decision == 100
    narrowed = read_ranges(study)
    study.optimize(wider, n_trials=25, callbacks=[cb])
    assert cb._refitter.next_decision == 113
    assert read_restriction(study) == {}
    assert read_ranges(study) == narrowed  # narrowed once: the check at 100 narrows no further
    study.optimize(wider, n_trials=13, callbacks=[cb])
    last = study.user_attrs[DECISIONS_KEY][-1]
    assert last["after_trial"] == 112
    fixed = read_restriction(study)
    assert fixed
    assert not set(fixed) & set(IMPORTANT)
    assert set(fixed) <= set(last["params"])
    assert cb._refitter.next_decision == 125
    assert cb.close(120)


@pytest.mark.parametrize(
    ("log", "opening"),
    [
        ([], True),
        # "keep"s taken on fewer trials than can fix (trial 112 is the 113th, the first
        # that can fix on 30 parameters)
        ([{"action": "keep", "after_trial": 39}, {"action": "keep", "after_trial": 111}], True),
        ([{"action": "keep", "after_trial": 112}], False),  # the first that could fix kept all
        ([{"action": "fix", "after_trial": 39, "ranges": {"a": [0, 1]}}], False),  # narrowed
        ([{"action": "fix", "after_trial": None}], False),  # restricted by hand
    ],
)
def test_opening_decisions_are_those_before_the_first_that_can_fix_or_narrows(
    log: list[dict[str, Any]], opening: bool
) -> None:
    space = hp.SearchSpace([hp.Float(f"x{i}", 0, 1) for i in range(30)])
    history = hp.TrialHistory(space, [dict.fromkeys(space.names, 0.5)] * 150, np.arange(150.0),
                              trial_ids=range(150))
    assert is_opening(log, history) is opening


def two_objectives(t: optuna.Trial) -> tuple[float, float]:
    """a drives the error alone, b the latency alone; c and d do nothing."""
    a, b = t.suggest_float("a", 0, 1), t.suggest_float("b", 0, 1)
    t.suggest_float("c", 0, 1)
    t.suggest_float("d", 0, 1)
    return (a - 0.3) ** 2, 1 + (b - 0.6) ** 2


@pytest.mark.parametrize("objective", [None, 0], ids=["front", "first-objective"])
def test_auto_on_two_objectives_fixes_only_what_every_objective_can_spare(objective) -> None:
    # whichever value the live importances analyse, the decision is over both objectives:
    # a (which the latency does not see) and b (which the error does not see) stay tuned
    cb = ImportanceCallback(every_n_trials=10, min_trials=20, shrink_to="auto", shrink_after=40,
                            seed=0, objective=objective)
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(two_objectives, n_trials=41, callbacks=[cb])  # decided as trial 40 starts
    assert cb.wait(120)
    assert not cb.errors
    sub = cb.subspace
    assert sub is not None
    assert list(sub.objectives) == ["values_0", "values_1"]
    # alone, each objective would fix the parameter the other one needs ...
    assert sub.objectives["values_0"].decisions["b"].state == "fix"
    assert sub.objectives["values_1"].decisions["a"].state == "fix"
    # ... together, neither is fixed, and what is fixed is what the study wrote
    fixed = read_restriction(study)
    assert fixed == sub.fixed
    assert fixed
    assert set(fixed) <= {"c", "d"}
    for name, value in fixed.items():
        for one in sub.objectives.values():  # safe for each objective, at the one value
            assert one.decisions[name].state == "fix"
            assert one.decisions[name].value == value
            assert one.risks[name].quantile(one.confidence) <= one.margin
    (decision,) = study.user_attrs[DECISIONS_KEY]
    from hpinsight._decision_result import fmt_cost

    assert "within each objective's margin (" in decision["why"]
    for key, one in sub.objectives.items():  # every objective's own margin, named
        assert f"{key} {fmt_cost(one.margin)}" in decision["why"]
    study.optimize(two_objectives, n_trials=9, callbacks=[cb])
    assert cb.close(120)
    for t in _restricted(study, study.trials[40:]):
        assert {k: t.params[k] for k in fixed} == fixed


def test_shrinking_two_objectives_to_a_top_k_is_refused_once() -> None:
    cb = ImportanceCallback(every_n_trials=10, min_trials=10, shrink_to=2, objective=0)
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(two_objectives, n_trials=30, callbacks=[cb])
    assert cb.close(60)
    assert len(cb.errors) == 1
    assert "cannot shrink_to=2 on study" in str(cb.errors[0])
    assert "shrink_to='auto'" in str(cb.errors[0])
    assert read_restriction(study) == {}


@pytest.mark.parametrize("shrink_to", [3, "auto"])
def test_a_default_no_trial_can_take_is_an_error_not_a_restriction(shrink_to: Any) -> None:
    # shrink_to=k recorded {"k": "s"} as fixed while every later trial went on varying k,
    # and every surface said "fixed at s"; "auto" failed with an error naming another
    # function
    cb = ImportanceCallback(every_n_trials=1000, min_trials=1000, shrink_to=shrink_to,
                            shrink_after=60, seed=0, defaults={"k": "s"})
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=61, callbacks=[cb])
    cb.close()
    assert not read_restriction(study)
    assert DECISIONS_KEY not in study.user_attrs
    (error,) = cb.errors
    assert "ImportanceCallback(defaults=...): the default 's' given for 'k' is not a value" in str(error)


def test_shrink_to_k_names_a_parameter_it_leaves_free_for_want_of_a_value() -> None:
    # momentum, inactive in the best trial (adam), was neither kept nor fixed, and the
    # decision said "fixed the others"
    def conditional(t: optuna.Trial) -> float:
        x = t.suggest_float("x", -3, 3)
        opt = t.suggest_categorical("opt", ["adam", "sgd"])
        if opt == "sgd":
            t.suggest_float("momentum", 0, 1)
        t.suggest_float("noise", 0, 1)
        return x**2 + (1.0 if opt == "sgd" else 0.0)

    cb = ImportanceCallback(every_n_trials=1000, min_trials=1000, shrink_to=1, shrink_after=40,
                            seed=0)
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(conditional, n_trials=41, callbacks=[cb])
    cb.close()
    assert not cb.errors
    assert "momentum" not in study.best_trial.params
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert "momentum" not in read_restriction(study)
    assert "left momentum free: inactive in the best trial" in decision["why"]


def test_a_default_named_for_no_parameter_is_said_at_the_decision(caplog: Any) -> None:
    # defaults={"yy": 0.5} for a study whose parameter is "y" went unused without a word
    # (here "xx" beside "a", "b", "c", ...)
    cb = ImportanceCallback(every_n_trials=1000, min_trials=1000, shrink_to=1, shrink_after=60,
                            seed=0, defaults={"xx": 0.5})
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    with caplog.at_level("WARNING"):
        study.optimize(objective, n_trials=61, callbacks=[cb])
        cb.close()
    assert not cb.errors
    told = [r.getMessage() for r in caplog.records if "ImportanceCallback(defaults=...)" in r.getMessage()]
    assert len(told) == 1
    assert "names 'xx', which no trial of study" in told[0]
    assert "a misspelt name?" in told[0]


def _six(t: optuna.Trial) -> float:
    x, y = t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)
    for i in range(4):
        t.suggest_float(f"z{i}", 0, 1)
    return (x - 0.3) ** 2 + 0.3 * (y - 0.5) ** 2


def test_a_trial_still_running_at_the_first_point_that_can_fix_postpones_it() -> None:
    # 6 parameters, shrink_after=30: the first decision can fix at 30 trials. Trials
    # finishing out of order, as with n_jobs=4: 30 is reached when trial 29 finishes,
    # trial 28 still running, so the decision's trials (those numbered below 30) are
    # 29. A narrowing-only decision was taken on them, then another one two trials
    # later, and the one that can fix after that (three where there are two). The
    # decision is taken as the next trial starts: by then trial 28 has finished too
    cb = ImportanceCallback(every_n_trials=500, min_trials=10**6, shrink_to="auto",
                            shrink_after=30, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(_six, n_trials=28, callbacks=[cb])
    running = [study.ask() for _ in range(3)]  # trials 28, 29 and 30
    values = [_six(t) for t in running]

    def finish(k: int) -> None:  # as study.optimize does: told, then the callback
        cb(study, study.tell(running[k], values[k]))

    finish(2)
    finish(1)  # the 30th to finish; trial 28 is still running
    assert DECISIONS_KEY not in study.user_attrs
    finish(0)  # the 31st
    assert DECISIONS_KEY not in study.user_attrs
    study.optimize(_six, n_trials=1, callbacks=[cb])  # trial 31: every one below 30 finished
    log = study.user_attrs[DECISIONS_KEY]
    assert [d["after_trial"] for d in log] == [29]
    assert "nothing can be fixed before" not in log[0]["why"]
    assert cb._refitter.next_decision == 60
    assert cb.close(120)


def test_with_parallel_trials_one_thread_decides_and_the_others_wait_for_it() -> None:
    # n_jobs=4: while one thread fitted the decision, the others went on starting trials
    # (30 trials sampled without it), and each thread that finished a trial before the
    # schedule moved took the same decision again, reading the restriction as not followed
    from hpinsight.integrations import _optuna_live

    taken: list[int] = []
    written: list[list[dict[str, Any]]] = []  # the decision log after each decision
    written_at: list[datetime.datetime] = []
    decide = _optuna_live.Refitter._decide

    def counted(self: Any, study: Any, history: Any) -> None:
        taken.append(history.n_trials)
        decide(self, study, history)
        written.append(list(study.user_attrs.get(DECISIONS_KEY, [])))
        written_at.append(datetime.datetime.now())

    cb = ImportanceCallback(seed=0, shrink_to="auto", shrink_after=30, min_trials=10**6)
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_optuna_live.Refitter, "_decide", counted)
        study.optimize(_six, n_trials=70, callbacks=[cb], n_jobs=4)
    assert cb.close(wait=120)
    assert not cb.errors
    assert len(taken) == 2  # at 30 and 60 completed trials, once each
    # the first decision that fixes a parameter (one at 30 that only narrows what matters
    # is logged as a restriction with no parameter fixed)
    first = next(d for d in study.user_attrs[DECISIONS_KEY] if d["action"] == "fix" and d["params"])
    fixed_at_30 = first in written[0]
    at = written_at[0 if fixed_at_30 else 1]
    unmarked = [t for t in study.trials if t.number > first["after_trial"]
                and "hpinsight:sampled_under" not in t.system_attrs]
    # only trials started before it was written: the 3 other threads' running ones, and
    # up to 3 that finished before the deciding thread's trial, whose number is the last
    # the decision reads (a slow thread's trial can finish after higher numbers)
    assert all(t.datetime_start <= at for t in unmarked)
    assert len(unmarked) <= 6
    # the decision at 60 reads the restriction of the one at 30 as followed; with four
    # threads, which trials the one at 30 sees varies, and it may keep every parameter, the
    # fix then coming at 60, whose own subspace says "safe to fix"
    assert {cb.subspace.decisions[n].state for n in first["params"]} == (
        {"fixed"} if fixed_at_30 else {"fix"})


def test_an_interrupted_decision_is_taken_at_the_next_trial_and_a_closed_one_reads_nothing(
) -> None:
    from hpinsight.integrations import _optuna_live

    decide = _optuna_live.Refitter._decide
    calls: list[int] = []

    def interrupted_once(self: Any, study: Any, history: Any) -> None:
        calls.append(history.n_trials)
        if len(calls) == 1:
            raise KeyboardInterrupt  # Ctrl-C while the decision is fitted
        decide(self, study, history)

    cb = ImportanceCallback(seed=0, shrink_to="auto", shrink_after=30, min_trials=10**6,
                            isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_optuna_live.Refitter, "_decide", interrupted_once)
        with pytest.raises(KeyboardInterrupt):
            study.optimize(_six, n_trials=40, callbacks=[cb])
        # (the decision runs as trial 30 starts: that trial never ran, and is not left
        # RUNNING in the study)
        assert study.trials[30].state == optuna.trial.TrialState.FAIL
        study.optimize(_six, n_trials=5, callbacks=[cb])
    assert calls == [30, 31]  # not skipped until the next multiple of 30
    assert [(d["action"], d["after_trial"]) for d in study.user_attrs[DECISIONS_KEY]] \
        == [("fix", 31)]  # on trials 0..29 and 31
    assert cb.close(wait=120)
    # a closed callback left attached decides nothing and no longer reads the study
    read: list[int] = []
    history = _optuna_live._history

    def counted(*args: Any, **kwargs: Any) -> Any:
        read.append(1)
        return history(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_optuna_live, "_history", counted)
        study.optimize(_six, n_trials=40, callbacks=[cb])
    assert read == []
    assert len(study.user_attrs[DECISIONS_KEY]) == 1


def test_a_decision_that_only_narrows_says_it_fixed_nothing() -> None:
    # both parameters matter: nothing is safe to fix, and the first decision narrows their
    # ranges; it read "fixed , each with no effect that counts ..."
    def two(t: optuna.Trial) -> float:
        return (t.suggest_float("x", 0, 1) - 0.3) ** 2 + (t.suggest_float("y", 0, 1) - 0.6) ** 2

    cb = ImportanceCallback(seed=0, shrink_to="auto", shrink_after=30, narrow_quantile=0.3,
                            min_trials=10**6, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(two, n_trials=35, callbacks=[cb])
    assert cb.close(wait=120)
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["params"] == {}
    assert sorted(read_ranges(study)) == ["x", "y"]
    assert decision["why"].startswith("shrink_to='auto' after 30 trials: fixed nothing (none is "
                                      "safe to fix); kept x, y; narrowed x, y to the range")
    # stored as a restriction ("fix"), shown as what it does: the page's decision table
    # said "fix" beside "fixed nothing"
    import html

    page = html.unescape(hp.report(study, seed=0, top=1).html())
    assert "<td>29</td><td>narrow</td>" in page


def _wide(t: optuna.Trial) -> float:
    """x matters; n0..n4 do nothing."""
    x = t.suggest_float("x", 0, 1)
    for i in range(5):
        t.suggest_float(f"n{i}", 0, 1)
    return (x - 0.3) ** 2


def test_a_narrowed_parameter_found_safe_to_fix_later_is_fixed() -> None:
    # the nuisances narrowed by hand; a check that found one safe to fix wrote it fixed
    # and narrowed at once, which the restriction refuses: every check failed, so nothing
    # was fixed or released for the rest of the study
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=30, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(_wide, n_trials=20, callbacks=[cb])
    narrowed = {f"n{i}": (0.1, 0.9) for i in range(5)}
    restrict(study, {}, ranges=narrowed, why="by hand, for the test", after_trial=19)
    study.optimize(_wide, n_trials=75, callbacks=[cb])
    assert cb.close(120)
    assert not cb.errors
    log = study.user_attrs[DECISIONS_KEY]
    later = {n for d in log[1:] if d["action"] == "fix" for n in d["params"]}
    assert later  # nuisances narrowed by hand and fixed by a check
    assert later <= set(narrowed)
    fixed, ranges = read_restriction(study), read_ranges(study)
    assert not set(fixed) & set(ranges)
    assert set(ranges) == set(narrowed) - later
    restricted = _restricted(study, study.trials[90:])  # sampled under the last decision
    assert restricted
    for t in restricted:
        assert all(t.params[name] == value for name, value in fixed.items())
        assert all(low <= t.params[name] <= high for name, (low, high) in ranges.items())


@pytest.mark.parametrize("narrow", [{}, {"narrow_quantile": 0.25}, {"narrow_quantile": None}],
                         ids=["by-default", "given", "turned-off"])
def test_auto_narrows_only_the_parameters_that_matter(narrow: dict[str, Any]) -> None:
    # the best trials' spread in a parameter whose effect is not resolved follows the
    # others' effects: narrowing the nuisances to it says nothing, and a small V-shaped
    # effect was narrowed away from its optimum that way. Narrowing is shrink_to="auto"'s
    # default; narrow_quantile=None turns it off
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=30, seed=0, isolation="thread", **narrow)
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(_wide, n_trials=31, callbacks=[cb])  # decided as trial 30 starts
    assert cb.close(120)
    assert not cb.errors
    assert cb.subspace is not None
    matters = [d.param for d in cb.subspace.decisions if d.state == "matters"]
    assert matters == ["x"]
    assert [n for n in cb.subspace.keep if n != "x"]  # nuisances kept tuned, not narrowed
    narrowed = set() if "narrow_quantile" in narrow and narrow["narrow_quantile"] is None else {"x"}
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert set(decision.get("ranges", {})) == narrowed
    assert set(read_ranges(study)) == narrowed
    low, high = read_ranges(study).get("x", (0.0, 1.0))
    assert 0.0 <= low < high <= 1.0


def test_a_narrowed_range_holds_where_the_model_finds_the_main_effect_best() -> None:
    # the best quarter of the trials lies on one side of x's optimum (0.3): every trial
    # with b near its optimum ran x in [0.33, 0.45], as when an optimizer gathered its
    # trials there. The range of the best trials alone leaves the optimum out (GPSampler
    # on v10: 3 of 20 runs, one ended 19.4 times the full space's best); the model's main
    # effect of x, seen over every trial, puts it at 0.3, and the range is widened to it
    from hpinsight.adapters import from_optuna
    from hpinsight.integrations._optuna_live import NARROW_QUANTILE, best_ranges

    rng = np.random.default_rng(2)
    rows = [{"x": float(rng.uniform()), "b": float(rng.uniform())} for _ in range(40)]
    rows += [{"x": float(x), "b": float(rng.uniform(0.45, 0.55))}
             for x in np.linspace(0.33, 0.45, 20)]
    rng.shuffle(rows)

    def two(t: optuna.Trial) -> float:
        return (t.suggest_float("x", 0, 1) - 0.3) ** 2 + (t.suggest_float("b", 0, 1) - 0.5) ** 2

    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=60, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    for row in rows:
        study.enqueue_trial(row)
    study.optimize(two, n_trials=60, callbacks=[cb])
    best = best_ranges(from_optuna(study), ["x", "b"], NARROW_QUANTILE)
    study.optimize(two, n_trials=1, callbacks=[cb])  # decided as trial 60 starts
    assert cb.close(120)
    assert not cb.errors
    assert best["x"][0] > 0.32  # the best trials alone leave the optimum out
    ranges = read_ranges(study)
    assert sorted(ranges) == ["b", "x"]
    low, high = ranges["x"]
    assert high == best["x"][1]
    # widened past the optimum by a quarter of the range (EDGE_GUARD; the model's best
    # is a grid point near 0.3), not to the whole range
    assert 0.3 - low == pytest.approx((high - low) / 4, abs=0.01)
    assert ranges["b"] == best["b"]  # its best trials hold its optimum well inside
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["why"].endswith("narrowed x, b to the range of the best 25% of trials, x "
                                    "widened to hold where the model finds its main effect "
                                    "best, at least a quarter of the range from either edge")


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_auto_narrows_under_gpsampler_and_its_proposals_stay_in_the_range(spy_on: Any) -> None:
    # GPSampler is handed the narrowed bounds (handed the whole range, its proposals
    # outside were drawn again at random, and narrowing was worse than fixing alone), so
    # "auto" narrows under it as under any other sampler, and the trials after the
    # decision stay in the range without being redrawn
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=30, seed=0, isolation="thread")
    base = optuna.samplers.GPSampler(seed=0, n_startup_trials=25)
    proposed = spy_on(base).proposals
    study = optuna.create_study(sampler=ShrinkingSampler(base))
    study.optimize(_wide, n_trials=36, callbacks=[cb])
    assert cb.close(120)
    assert not cb.errors
    assert cb.subspace is not None
    assert [d.param for d in cb.subspace.decisions if d.state == "matters"] == ["x"]
    low, high = read_ranges(study)["x"]
    later = [t for t in study.trials[30:] if not study.sampler.explores(t.number)]
    assert later
    assert all(low <= proposed[t.number]["x"] <= high for t in later), (low, high, proposed)


def test_narrow_quantile_auto_narrows_nothing_for_a_fixed_number_kept() -> None:
    # "auto" narrows with shrink_to="auto" alone: shrink_to=k keeps what it did
    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to=2, shrink_after=30,
                            seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(_wide, n_trials=31, callbacks=[cb])
    assert cb.close(120)
    assert not cb.errors
    assert read_restriction(study)  # it shrank
    assert read_ranges(study) == {}


@pytest.mark.parametrize("bad", ["sometimes", 0.0, 1.5])
def test_a_narrow_quantile_that_is_not_a_fraction_auto_or_none_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="narrow_quantile"):
        ImportanceCallback(shrink_to="auto", narrow_quantile=bad)


def test_shrink_to_k_says_why_it_does_not_shrink_a_study_restricted_before(
        caplog: pytest.LogCaptureFixture) -> None:
    # a parameter fixed by hand before the study: shrink_to=3 never happened, and said nothing
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    restrict(study, {"k": "p"}, why="by hand")
    cb = ImportanceCallback(seed=0, shrink_to=3, shrink_after=30, min_trials=10**6,
                            isolation="thread")
    with caplog.at_level("WARNING", logger="optuna.hpinsight"):
        study.optimize(objective, n_trials=35, callbacks=[cb])
    assert cb.close(wait=120)
    assert read_restriction(study) == {"k": "p"}
    (said,) = [r.getMessage() for r in caplog.records if "did not shrink" in r.getMessage()]
    assert "shrink_to=3 did not shrink study" in said
    assert "by hand" in said
    assert "ShrinkingSampler.release(study)" in said


def test_a_resumed_study_decides_at_its_own_trial_counts() -> None:
    # 40 trials in an earlier session, then a callback with shrink_after=50: it decided at
    # study trial 90 (50 of its own), not 50
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(objective, n_trials=40)
    cb = ImportanceCallback(seed=0, shrink_to=3, shrink_after=50, min_trials=10**6,
                            isolation="thread")
    study.optimize(objective, n_trials=20, callbacks=[cb])
    assert cb.close(wait=120)
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["after_trial"] == 49
    assert "shrink_to=3 after 50 trials" in decision["why"]


def test_one_callback_per_worker_decides_at_the_studys_trial_counts(caplog: Any) -> None:
    # each worker process of a distributed study has a callback of its own, told only of
    # its own trials: each counted those, so with two workers the decision due at 30
    # trials came at trial 59, and the second worker then warned that it "did not shrink"
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    workers = [ImportanceCallback(seed=0, shrink_to=3, shrink_after=30, min_trials=10**6,
                                  isolation="thread") for _ in range(2)]
    with caplog.at_level("INFO", logger="optuna.hpinsight"):
        for i in range(70):
            trial = study.ask()
            workers[i % 2].feed(study, study.tell(trial, objective(trial)))
    for cb in workers:
        assert cb.close(wait=120)
        assert not cb.errors
    (decision,) = study.user_attrs[DECISIONS_KEY]
    assert decision["after_trial"] == 29
    assert "shrink_to=3 after 30 trials" in decision["why"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    # both workers fitted: the one that took the point and no other
    assert sum("kept the most important" in r.getMessage() for r in caplog.records) == 1


def test_the_workers_of_an_auto_study_decide_as_one_callback_would() -> None:
    def run(n_workers: int) -> tuple[list[tuple[Any, ...]], Any]:
        study = optuna.create_study(
            sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=1)))
        workers = [ImportanceCallback(seed=0, shrink_to="auto", shrink_after=50,
                                      min_trials=10**6, isolation="thread")
                   for _ in range(n_workers)]
        for i in range(160):
            trial = study.ask()
            workers[i % n_workers].feed(study, study.tell(trial, objective(trial)))
        for cb in workers:
            assert cb.close(wait=120)
            assert not cb.errors
        log = [(d["action"], d["params"], d.get("ranges"), d["after_trial"])
               for d in study.user_attrs[DECISIONS_KEY]]
        return log, study.user_attrs["hpinsight:decision_points"]

    alone, points = run(1)
    assert [after for *_, after in alone][:2] == [49, 99]  # (the rest: no change at 150)
    assert points == [50, 100, 150]
    assert run(3) == (alone, points)  # each point taken once, on the same trials


def test_a_fixed_value_the_objective_no_longer_allows_is_released_with_why() -> None:
    # the objective's range of w moved past its fixed value at trial 60: the sampler lets w
    # vary, and the check releases the restriction nobody can follow, saying so
    def edited(t: optuna.Trial) -> float:
        low = 0.0 if t.number < 60 else 0.5
        return (t.suggest_float("x", 0, 1) - 0.3) ** 2 + 0 * t.suggest_float("w", low, low + 1)

    cb = ImportanceCallback(every_n_trials=500, min_trials=20, shrink_to="auto",
                            shrink_after=50, seed=0, isolation="thread")
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(edited, n_trials=40, callbacks=[cb])
    restrict(study, {"w": 0.25}, why="by hand", after_trial=39)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the changed distribution, said once
        study.optimize(edited, n_trials=61, callbacks=[cb])
    assert cb.close(wait=120)
    release = [d for d in study.user_attrs[DECISIONS_KEY] if d["action"] == "release"]
    assert [d["params"] for d in release] == [{"w": 0.25}]
    assert "the latest trials ran it at other values" in release[0]["why"]
    assert "w" not in read_restriction(study)


@pytest.mark.parametrize(("param", "given", "best", "expected"), [
    # cond's x under CMA-ES, seed 0: the optimum a grid step below the upper edge
    (hp.Float("x", 0.0, 1.0), (0.378, 0.606), 0.59, (0.378, 0.59 + (0.59 - 0.378) / 3)),
    (hp.Float("x", 0.0, 1.0), (0.2, 0.8), 0.25, (0.25 - 0.55 / 3, 0.8)),  # the lower side
    (hp.Float("x", 0.0, 1.0), (0.2, 0.8), 0.5, (0.2, 0.8)),  # in the middle: as given
    (hp.Float("x", 0.0, 1.0), (0.5, 0.9), 0.88, (0.5, 1.0)),  # not past the bound
    (hp.Float("x", 0.0, 1.0), (0.0, 0.4), 0.0, (0.0, 0.4)),  # best at the bound: no room
    # on a log scale: the guard in logs, not in values
    (hp.Float("lr", 1e-5, 1.0, log=True), (1e-4, 1e-3), 9e-4,
     (1e-4, math.exp(math.log(9e-4) + (math.log(9e-4) - math.log(1e-4)) / 3))),
    (hp.Int("k", 0, 20), (4, 9), 8, (4, 10)),  # 8 + 4 / 3 = 9.33, outwards to 10
])
def test_a_narrowed_range_keeps_the_main_effect_best_a_quarter_of_its_width_from_either_edge(
    param: Any, given: tuple[float, float], best: float, expected: tuple[float, float],
) -> None:
    from hpinsight._subspace import Span
    from hpinsight.integrations._optuna_live import EDGE_GUARD, with_spans

    space = hp.SearchSpace([param])
    ranges, widened = with_spans({param.name: given}, {param.name: Span(best, best, best)}, space)
    assert widened == ([] if expected == given else [param.name])
    low, high = ranges[param.name]
    assert (low, high) == pytest.approx(expected)
    scale = math.log if getattr(param, "log", False) else float
    if expected != given and low > param.low and high < param.high:
        width = scale(high) - scale(low)
        assert min(scale(best) - scale(low), scale(high) - scale(best)) >= EDGE_GUARD * width - 1e-9


def test_with_several_objectives_a_narrowed_range_holds_the_whole_front() -> None:
    # every trial on the Pareto front ties at the best share (0); cut at the quarter by
    # trial number, the range of x held 10 of 19 front trials, all early ones at small x,
    # and the study searched a quarter of the trade-off from then on
    import random

    from hpinsight.integrations._optuna_live import best_ranges

    def trade_off(t: optuna.Trial) -> tuple[float, float]:
        x, y = t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)
        t.suggest_float("z", 0, 1)
        return x + 0.1 * y, (1 - x) + 0.1 * y

    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    rng = random.Random(1)
    for _ in range(10):  # a warm start a user knew: good configurations, all at small x
        study.enqueue_trial({"x": rng.uniform(0, 0.3), "y": 0.0, "z": rng.uniform(0, 1)})
    cb = ImportanceCallback(every_n_trials=100, min_trials=100, seed=0, shrink_to="auto",
                            shrink_after=30, isolation="thread")
    study.optimize(trade_off, n_trials=30, callbacks=[cb])
    front = [t.params["x"] for t in study.best_trials]
    study.optimize(trade_off, n_trials=1, callbacks=[cb])  # decided as trial 30 starts
    assert cb.close(120)
    assert len(front) > 30 / 4
    low, high = read_ranges(study)["x"]
    assert low <= min(front)
    assert high >= max(front) > 0.9
    # the rule itself: trials tied with the last of the best quarter count as the best
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    tied = hp.TrialHistory(space, [{"x": v} for v in np.linspace(0, 1, 12)],
                           [0.0] * 8 + [1.0] * 4)
    assert best_ranges(tied, ["x"], 0.25)["x"] == (0.0, pytest.approx(7 / 11))


def _lr_layers(t: optuna.Trial) -> float:
    return t.suggest_float("lr", 1e-5, 1, log=True) + t.suggest_int("layers", 1, 4)


def test_a_restriction_written_before_the_first_trial_is_checked_at_it() -> None:
    # restrict refuses these once the study has a trial; before, they were taken without
    # a word, never held, and the report counted every trial as narrowed in 'layers'
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    restrict(study, {"lr": 10.0}, ranges={"layers": (7, 9)}, why="before the first trial")
    with pytest.warns(UserWarning, match="written before its first trial") as caught:
        study.optimize(_lr_layers, n_trials=10)
    said = [str(w.message) for w in caught]
    assert sum("cannot fix 'lr' at 10.0" in m for m in said) == 1
    assert sum("cannot narrow 'layers' to [7, 9]" in m for m in said) == 1
    assert {t.params["layers"] for t in study.trials} == {1, 2, 3, 4}
    sampling = hp.adapters.from_optuna(study).sampling
    assert sampling is not None
    assert sampling.n_narrowed == {}


def test_restrict_records_its_trial_so_trials_run_without_the_sampler_are_seen() -> None:
    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(_lr_layers, n_trials=20)
    decision = restrict(study, {"layers": 2}, why="by hand")
    assert decision["after_trial"] == 19
    study.optimize(_lr_layers, n_trials=20)
    assert hp.adapters.from_optuna(study).sampling.n_held == {"layers": 18}
    # loaded without its ShrinkingSampler: the restriction is not followed, and the
    # counts are unknown (they said 18 trials held, with 20 more that were not)
    study.sampler = optuna.samplers.RandomSampler(seed=1)
    study.optimize(_lr_layers, n_trials=20)
    assert hp.adapters.from_optuna(study).sampling.n_held is None


def test_what_an_exploring_trial_moved_is_judged_against_what_it_ran_under() -> None:
    def xc(t: optuna.Trial) -> float:
        return t.suggest_float("x", 0, 1) + (t.suggest_categorical("c", ["a", "b"]) == "a")

    study = optuna.create_study(sampler=ShrinkingSampler(optuna.samplers.RandomSampler(seed=0)))
    study.optimize(xc, n_trials=30)
    restrict(study, {"c": "b"}, ranges={"x": (0.2, 0.4)}, why="by hand")
    study.optimize(xc, n_trials=30)
    explored = hp.adapters.from_optuna(study).sampling.explored
    assert set(explored) < {39, 49, 59}  # one of them landed where the restriction holds
    hp.integrations.optuna.release(study)
    # released, the restriction in force is none: the trial that moved nothing moved
    # nothing still
    assert hp.adapters.from_optuna(study).sampling.explored == explored


def test_a_range_that_holds_the_whole_range_is_no_narrowing() -> None:
    # the best trials (a Pareto front, or a parameter that does nothing) spanned d's whole
    # range: "d within [1, 8]" was listed as a restriction in force and its trials counted
    # as narrowed
    from hpinsight.integrations._optuna_live import best_ranges

    space = hp.SearchSpace([hp.Int("d", 1, 8), hp.Float("x", 0, 1)])
    configs = [{"d": 1 + (i * 3) % 8, "x": i / 40} for i in range(40)]
    history = hp.TrialHistory(space, configs, [c["x"] for c in configs])
    best = [configs[i] for i in history.best_indices(10)]
    assert {c["d"] for c in best} >= {1, 8}
    assert best_ranges(history, ["d", "x"], 0.25) == {"x": (0.0, 0.225)}
