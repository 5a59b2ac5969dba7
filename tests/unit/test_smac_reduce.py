"""reduce_configspace: fixed parameters become constants; conditions and forbidden clauses
are simplified by what the fixed values decide, and the input space is left alone."""

from __future__ import annotations

import pytest

import hpinsight as hp

CS = pytest.importorskip("ConfigSpace")

from hpinsight.integrations._smac_shrink import reduce_configspace  # noqa: E402


@pytest.fixture
def space():
    cs = CS.ConfigurationSpace(seed=0)
    optimizer = CS.Categorical("optimizer", ["adam", "sgd", "rmsprop"])
    momentum = CS.Float("momentum", (0.0, 0.99))
    nesterov = CS.Categorical("nesterov", ["yes", "no"])
    layers = CS.Integer("layers", (1, 5))
    width = CS.Integer("width", (8, 64))
    lr = CS.Float("lr", (1e-4, 1.0), log=True)
    cs.add([optimizer, momentum, nesterov, layers, width, lr,
            CS.EqualsCondition(momentum, optimizer, "sgd"),
            CS.GreaterThanCondition(nesterov, momentum, 0.5),
            CS.AndConjunction(CS.InCondition(width, optimizer, ["adam", "sgd"]),
                              CS.GreaterThanCondition(width, layers, 2)),
            CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(optimizer, "rmsprop"),
                                       CS.ForbiddenInClause(layers, [1, 2]))])
    return cs


def _kinds(cs):
    return {name: type(h).__name__ for name, h in cs.items()}


def test_a_satisfied_condition_on_a_fixed_parent_is_dropped_or_inherited(space):
    before = str(space)
    reduced = reduce_configspace(space, {"optimizer": "sgd"})
    assert str(space) == before  # the input is not modified
    assert _kinds(reduced)["optimizer"] == "Constant"
    assert reduced["optimizer"].value == "sgd"
    # momentum was active for sgd only: now always; nesterov keeps its own condition on momentum
    assert reduced.parents_of["momentum"] == []
    assert [p.name for p in reduced.parents_of["nesterov"]] == ["momentum"]
    # width needed optimizer in {adam, sgd} AND layers > 2: only the layers part is left
    assert [p.name for p in reduced.parents_of["width"]] == ["layers"]
    assert reduced.forbidden_clauses == []  # the clause needed optimizer == rmsprop
    for config in reduced.sample_configuration(50):
        assert config["optimizer"] == "sgd"
        assert "momentum" in config


def test_an_unsatisfiable_condition_removes_the_child_and_its_descendants(space):
    reduced = reduce_configspace(space, {"optimizer": "rmsprop", "lr": 0.01})
    assert "momentum" not in reduced
    assert "nesterov" not in reduced  # its parent can never be active
    assert "width" not in reduced
    assert _kinds(reduced)["lr"] == "Constant"
    # optimizer == rmsprop is now always true: the forbidden clause is left on layers alone
    (clause,) = reduced.forbidden_clauses
    assert "layers" in str(clause)
    assert all(c["layers"] > 2 for c in reduced.sample_configuration(50))


def test_a_fixed_conditional_parent_passes_its_condition_on(space):
    reduced = reduce_configspace(space, {"momentum": 0.9})
    assert _kinds(reduced)["momentum"] == "Constant"
    # nesterov needed momentum > 0.5 (true now): it is active exactly where momentum is
    assert [p.name for p in reduced.parents_of["nesterov"]] == ["optimizer"]
    configs = reduced.sample_configuration(60)
    assert all(("nesterov" in c) == (c["optimizer"] == "sgd") for c in configs)
    low = reduce_configspace(space, {"momentum": 0.1})
    assert "nesterov" not in low


def test_the_reduced_space_reads_back_as_an_hpinsight_space(space):
    reduced = reduce_configspace(space, {"optimizer": "sgd", "layers": 3})
    ours = hp.adapters.from_configspace(reduced)
    assert set(ours.names) == set(reduced)


@pytest.mark.parametrize(
    ("fixed", "match"),
    [
        ({"depth": 3}, "not in the configuration space"),
        ({"optimizer": "lbfgs"}, "not a legal value"),
        ({"optimizer": "rmsprop", "layers": 1}, "always forbidden"),
    ],
    ids=["unknown", "illegal", "forbidden"],
)
def test_bad_fixes_are_errors_that_say_what_to_do(space, fixed, match):
    with pytest.raises(hp.exceptions.InvalidSpaceError, match=match):
        reduce_configspace(space, fixed)


def test_or_conditions_fold_by_the_fixed_part():
    cs = CS.ConfigurationSpace(seed=0)
    optimizer = CS.Categorical("optimizer", ["adam", "sgd"])
    layers = CS.Integer("layers", (1, 5))
    decay = CS.Float("decay", (0.0, 0.1))
    cs.add([optimizer, layers, decay,
            CS.OrConjunction(CS.EqualsCondition(decay, optimizer, "sgd"),
                             CS.GreaterThanCondition(decay, layers, 3))])
    assert reduce_configspace(cs, {"optimizer": "sgd"}).parents_of["decay"] == []
    rest = reduce_configspace(cs, {"optimizer": "adam"})
    assert [p.name for p in rest.parents_of["decay"]] == ["layers"]
    assert all(("decay" in c) == (c["layers"] > 3) for c in rest.sample_configuration(40))
    assert "decay" not in reduce_configspace(cs, {"optimizer": "adam", "layers": 2})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"keep": "Auto"}, r"positive int or 'auto'\. Got 'Auto'"),
        ({"keep": 0}, r"positive int or 'auto'\. Got 0"),
        ({"keep": 2.5}, r"positive int or 'auto'"),
        ({"keep": "auto", "importances": ["a"]}, "importances"),
        ({"keep": 2, "fixed": {"a": 1}}, "exactly one of"),
    ],
)
def test_shrink_and_continue_rejects_bad_keep_before_touching_the_run(kwargs, match):
    pytest.importorskip("smac")
    from hpinsight.integrations.smac import shrink_and_continue

    with pytest.raises(ValueError, match=match):
        shrink_and_continue(None, None, n_trials=1, **kwargs)


def test_a_free_parameter_whose_default_the_fixed_values_forbid_gets_a_legal_default():
    # ConfigSpace refuses a space whose default configuration is forbidden: with act fixed
    # at "tanh", opt's default "rms" was, and reduce_configspace raised ForbiddenValueError
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("x", (0.0, 1.0)), CS.Categorical("opt", ["rms", "adam"], default="rms"),
            CS.Categorical("act", ["relu", "tanh"], default="relu")])
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(cs["opt"], "rms"),
                                      CS.ForbiddenEqualsClause(cs["act"], "tanh")))
    reduced = reduce_configspace(cs, {"act": "tanh"})
    assert dict(reduced.get_default_configuration()) == {"act": "tanh", "opt": "adam", "x": 0.5}
    assert cs["opt"].default_value == "rms"  # the input space is left alone
    ranked = CS.ConfigurationSpace(seed=0)
    ranked.add([CS.Integer("b", (1, 10), default=5), CS.Integer("f", (1, 10), default=3)])
    ranked.add(CS.ForbiddenLessThanRelation(ranked["b"], ranked["f"]))
    default = dict(reduce_configspace(ranked, {"b": 2}).get_default_configuration())
    assert default["b"] == 2
    assert default["f"] <= 2


def test_parameters_that_share_a_forbidden_clause_are_linked_when_a_run_is_read():
    from hpinsight.adapters._smac import _linked

    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Categorical("opt", ["rms", "adam"]), CS.Categorical("act", ["relu", "tanh"]),
            CS.Integer("b", (1, 10)), CS.Integer("f", (1, 10)), CS.Float("x", (0.0, 1.0))])
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(cs["opt"], "rms"),
                                      CS.ForbiddenEqualsClause(cs["act"], "tanh")),
           CS.ForbiddenLessThanRelation(cs["b"], cs["f"]),
           CS.ForbiddenEqualsClause(cs["x"], 0.25),  # one parameter: links nothing
           CS.ForbiddenAndConjunction(CS.ForbiddenInClause(cs["b"], [1, 2]),
                                      CS.ForbiddenGreaterThanClause(cs["x"], 0.5)))
    # each with the values at which the clause fires; any value for a relation or a
    # comparison (the order is ConfigSpace's)
    assert sorted(_linked(cs), key=lambda g: sorted(g)) == [
        {"act": ("tanh",), "opt": ("rms",)}, {"b": None, "f": None}, {"b": (1, 2), "x": None}]
    # a parameter read twice, and the parts of a disjunction, count at any value
    other = CS.ConfigurationSpace(seed=0)
    other.add([CS.Categorical("act", ["relu", "tanh"]), CS.Integer("b", (1, 10), default=5),
               CS.Categorical("opt", ["rms", "adam"], default="adam")])
    other.add(CS.ForbiddenAndConjunction(CS.ForbiddenInClause(other["b"], [1, 2, 3]),
                                         CS.ForbiddenEqualsClause(other["b"], 2),
                                         CS.ForbiddenEqualsClause(other["act"], "relu")),
              CS.ForbiddenAndConjunction(
                  CS.ForbiddenEqualsClause(other["opt"], "rms"),
                  CS.ForbiddenOrConjunction(CS.ForbiddenEqualsClause(other["act"], "tanh"),
                                            CS.ForbiddenInClause(other["b"], [9, 10]))))
    assert _linked(other) == ({"act": ("relu",), "b": None},
                              {"act": None, "b": None, "opt": ("rms",)})


def test_clauses_of_every_kind_configspace_writes_are_read():
    # ConfigSpace 1.x writes CLAUSE_GT/GE/LT/LE and RELATION_LE/GE; read as unknown, a
    # clause on a free parameter made reduce_configspace refuse the space
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.Float("x", (0.0, 1.0)), CS.Float("y", (0.0, 1.0), default=0.6),
            CS.Float("z", (0.0, 1.0), default=0.2), CS.Categorical("opt", ["rms", "adam"])])
    cs.add(CS.ForbiddenGreaterThanClause(cs["x"], 0.9), CS.ForbiddenLessThanEqualsClause(cs["y"], 0.01),
           CS.ForbiddenGreaterThanEqualsClause(cs["z"], 0.99),
           CS.ForbiddenLessThanEqualsRelation(cs["y"], cs["z"]))
    assert dict(reduce_configspace(cs, {"opt": "adam"}).get_default_configuration())["opt"] == "adam"
    default = dict(reduce_configspace(cs, {"z": 0.7}).get_default_configuration())
    assert default["y"] > 0.7  # y <= z is forbidden: y's default 0.6 had to move


def test_legal_defaults_follow_conditions_and_chained_clauses():
    # changing only opt made mom (active under sgd) forbidden with act, and in the chained
    # space made sched's default forbidden with the new opt
    cs = CS.ConfigurationSpace(seed=0)
    opt = CS.Categorical("opt", ["rms", "sgd"], default="rms")
    mom = CS.Categorical("mom", ["0.9", "0.5"], default="0.9")
    act = CS.Categorical("act", ["relu", "tanh"], default="relu")
    cs.add([opt, mom, act, CS.EqualsCondition(mom, opt, "sgd")])
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(opt, "rms"), CS.ForbiddenEqualsClause(act, "tanh")),
           CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(mom, "0.9"), CS.ForbiddenEqualsClause(act, "tanh")))
    assert dict(reduce_configspace(cs, {"act": "tanh"}).get_default_configuration()) == {
        "act": "tanh", "opt": "sgd", "mom": "0.5"}
    chained = CS.ConfigurationSpace(seed=0)
    opt = CS.Categorical("opt", ["rms", "adam"], default="rms")
    act = CS.Categorical("act", ["relu", "tanh"], default="relu")
    sched = CS.Categorical("sched", ["const", "cos"], default="const")
    chained.add([opt, act, sched])
    chained.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(opt, "rms"), CS.ForbiddenEqualsClause(act, "tanh")),
                CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(opt, "adam"), CS.ForbiddenEqualsClause(sched, "const")))
    assert dict(reduce_configspace(chained, {"act": "tanh"}).get_default_configuration()) == {
        "act": "tanh", "opt": "adam", "sched": "cos"}


def test_ordinal_values_compare_by_their_place_in_the_sequence():
    # ConfigSpace orders an ordinal's values by its sequence ("large" > "small"), not as
    # text ("large" < "small"): a condition, a clause and a default's repair compared them
    # as text, and dropped a child that stays active, allowed a combination the space
    # forbids, and failed with ConfigSpace's own error
    cs = CS.ConfigurationSpace(seed=0)
    size = CS.OrdinalHyperparameter("size", ["small", "medium", "large"], default_value="small")
    width = CS.UniformIntegerHyperparameter("width", 8, 512, log=True, default_value=8)
    opt = CS.CategoricalHyperparameter("opt", ["a", "b"], default_value="a")
    cs.add([size, width, opt, CS.GreaterThanCondition(width, size, "small"),
            CS.ForbiddenAndConjunction(CS.ForbiddenLessThanClause(size, "large"),
                                       CS.ForbiddenEqualsClause(opt, "b"))])
    large = reduce_configspace(cs, {"size": "large"})
    assert "width" in large
    assert not large.conditions  # active wherever the space is
    assert not large.forbidden_clauses  # "large" is not below "large"
    assert "width" not in reduce_configspace(cs, {"size": "small"})
    medium = reduce_configspace(cs, {"size": "medium"})
    from ConfigSpace.exceptions import ForbiddenValueError

    with pytest.raises(ForbiddenValueError):
        CS.Configuration(medium, {"size": "medium", "opt": "b", "width": 8}).check_valid_configuration()
    # with opt at "b", size must be "large": the default "small" is repaired to it
    b = reduce_configspace(cs, {"opt": "b"})
    assert b.get_default_configuration()["size"] == "large"


def test_fixed_values_are_held_as_the_parameter_s_own_values():
    # values read from JSON, a CSV or numpy: ConfigSpace calls 3.0 legal for an integer
    # and 1 for a choice of True and False, and they reached the target as 3.0 and 1
    cs = CS.ConfigurationSpace(seed=0)
    cs.add([CS.UniformIntegerHyperparameter("layers", 1, 8, default_value=2),
            CS.CategoricalHyperparameter("bias", [True, False], default_value=True),
            CS.CategoricalHyperparameter("k", [1, 2, 3], default_value=1),
            CS.OrdinalHyperparameter("size", [1, 2, 4], default_value=1),
            CS.UniformFloatHyperparameter("x", 0.0, 1.0)])
    reduced = reduce_configspace(cs, {"layers": 3.0, "bias": 1, "k": 2.0, "size": 4.0})
    config = dict(reduced.sample_configuration())
    for name, value in (("layers", 3), ("bias", True), ("k", 2), ("size", 4)):
        assert config[name] == value
        assert type(config[name]) is type(value), name


def test_a_fix_a_clause_always_forbids_quotes_the_clause_as_written():
    cs = CS.ConfigurationSpace(seed=0)
    opt, act = CS.Categorical("opt", ["a", "b"]), CS.Categorical("act", ["r", "t"])
    cs.add([opt, act, CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(opt, "b"),
                                                 CS.ForbiddenEqualsClause(act, "t"))])
    with pytest.raises(hp.exceptions.InvalidSpaceError,
                       match=r"always forbidden by the clause \(Forbidden: opt == 'b' && "
                             r"Forbidden: act == 't'\)"):
        reduce_configspace(cs, {"opt": "b", "act": "t"})


def _legal(cs, values) -> bool:
    try:
        CS.Configuration(cs, values=values).check_valid_configuration()
    except Exception:  # any refusal of ConfigSpace's is "not legal"
        return False
    return True


@pytest.mark.parametrize("relation", [False, True])
def test_a_clause_on_a_fixed_parameter_a_condition_can_turn_off_fires_only_where_it_is_on(relation):
    # b is active only for a = x; the clause "b == 3 and c == p" was read as "c == p" once b
    # was fixed at 3, so the reduced space forbade c = p where b is inactive too, and a
    # continued run never tried the region of a = y, c = p, where the old best lay
    cs = CS.ConfigurationSpace(seed=0)
    a, b, c, d = (CS.Categorical("a", ["x", "y"]), CS.Integer("b", (1, 5), default=2),
                  CS.Categorical("c", ["p", "q"], default="q"), CS.Integer("d", (1, 5), default=1))
    clause = (CS.ForbiddenAndConjunction(CS.ForbiddenLessThanRelation(d, b),
                                         CS.ForbiddenEqualsClause(c, "p")) if relation
              else CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(b, 3),
                                              CS.ForbiddenEqualsClause(c, "p")))
    cs.add([a, b, c, d, CS.EqualsCondition(b, a, "x"), clause])
    fixed = {"b": 3, "d": 2} if relation else {"b": 3}
    reduced = reduce_configspace(cs, fixed)
    assert _legal(reduced, {"a": "y", "c": "p", "d": fixed.get("d", 1)})
    assert not _legal(reduced, {"a": "x", "b": 3, "c": "p", "d": fixed.get("d", 1)})
    # every configuration of the original space holding the fixed values where they are
    # active is one of the reduced space, and the other way round
    cs.seed(1)
    for config in cs.sample_configuration(400):
        values = dict(config)
        if any(values.get(k, v) != v for k, v in fixed.items()):
            continue
        assert _legal(reduced, {**values, **{k: v for k, v in fixed.items() if k in values}})
    reduced.seed(2)
    for config in reduced.sample_configuration(400):
        assert _legal(cs, dict(config))
