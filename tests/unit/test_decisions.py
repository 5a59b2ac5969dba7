"""One decision per parameter: every rule of ``hpinsight._decisions`` on a real analysis
with costs set by hand, the numbers never printed equal to their threshold, and every
parameter in exactly one state."""

from __future__ import annotations

import dataclasses
import json
import logging
import math

import numpy as np
import pytest

import hpinsight as hp
from hpinsight._decision_result import (
    EXPLORED,
    NO_SIGNAL_AMONG_BEST,
    STATES,
    fmt_cost,
    fmt_share,
    member_note,
)
from hpinsight._decisions import Explored, decide
from hpinsight._sampling import SamplingRecord
from hpinsight.exceptions import InvalidDataError
from hpinsight.results import SurrogateRisk


def _risk(name: str, mean: float, upper: float) -> SurrogateRisk:
    """A cost whose draws have this mean and whose 90 % quantile is ``upper``."""
    per_draw = np.array([mean - (upper - mean)] * 5 + [mean] * 4 + [upper], dtype=float)
    per_draw += mean - per_draw.mean()
    return SurrogateRisk(name, 0.5, float(per_draw.mean()), float(per_draw.std()), {},
                         per_draw, {}, {})


@pytest.fixture(scope="module")
def analysis() -> tuple[hp.results.FanovaResult, hp.results.FanovaResult]:
    """x matters, w is small but real, z and u do nothing; 'rare' is active in 6 trials."""
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("w", 0, 1), hp.Float("z", 0, 1),
                            hp.Float("u", 0, 1), hp.Categorical("kind", ["a", "b"]),
                            hp.Float("rare", 0, 1)],
                           conditions=[hp.Condition("rare", "kind", values=["b"])])
    configs = space.sample(200, seed=0)
    rng = np.random.default_rng(0)
    kinds = ["b" if i < 6 else "a" for i in range(200)]
    configs = [{k: v for k, v in {**c, "kind": kinds[i]}.items()
                if k != "rare" or kinds[i] == "b"} | ({"rare": float(rng.uniform())}
                                                      if kinds[i] == "b" else {})
               for i, c in enumerate(configs)]
    y = [(c["x"] - 0.3) ** 2 + 0.004 * c["w"] for c in configs]
    history = hp.TrialHistory(space, configs, y)
    return hp.fanova(history, seed=0), hp.fanova(history, cap_quantile=0.25, seed=0)


@pytest.mark.parametrize(
    ("param", "mean", "upper", "margin", "state"),
    [
        ("x", 0.0, 0.0, 0.01, "matters"),  # resolved and large: kept whatever the cost
        # w adds 0.004 w, a standard deviation of 0.00115: resolved, and kept where that
        # is more than a quarter of the margin ...
        ("w", 0.0, 0.0, 0.001, "small"),
        # ... and too small to matter where it is less: fixing it anywhere costs < 0.004
        ("w", 0.0, 0.0, 0.01, "fix"),
        ("z", 0.0, 0.005, 0.01, "fix"),  # nothing, and cheap in 90 % of the draws
        ("z", 0.005, 0.02, 0.01, "not_yet_safe"),  # nothing, but the cost may exceed the margin
        # nothing in the variance and a mean cost above the margin: the model's doubt,
        # not evidence of an effect, so not yet safe, not "small but real"
        ("z", 0.02, 0.03, 0.01, "not_yet_safe"),
        ("rare", 0.0, 0.0, 0.01, "no_data"),  # active in 6 trials
    ],
    ids=["matters", "small-variance", "small-in-objective-units", "fix", "not-yet-safe",
         "costly-no-effect", "no-data"],
)
def test_each_rule(analysis, param, mean, upper, margin, state):
    result, capped = analysis
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names} | {param: _risk(param, mean, upper)}
    values = dict.fromkeys(result.space.names, 0.5) | {"kind": "a"}
    out = decide(result, capped=capped, risks=risks, values=values, margin=margin)
    d = out[param]
    assert d.state == state, d.sentence
    assert d.tuned == (state != "fix")
    assert (param in out.to_fix) == (state == "fix")
    assert d.heading == STATES[state][0]
    if state == "not_yet_safe":
        assert d.cost_upper > 0.01
        assert "(90% quantile), more than the 0.01 allowed" in d.sentence
    if param == "w":
        # the effect the state rests on, in objective units: above a quarter of the
        # margin for "small", at most that for "fix" (w's whole range is 0.004)
        assert 0 < d.effect_sd < 0.004
        assert (d.effect_sd > 0.25 * margin) == (state == "small")
        assert (d.evidence == "size") == (state == "fix")
        assert d.negligible == (state == "fix")  # the flag the page reads
        assert d.to_dict()["negligible"] == d.negligible
        if state == "fix":
            assert "too small to matter (standard deviation 0.00" in d.sentence
            assert "at most 0.25 of the 0.01 allowed" in d.sentence


def test_an_uncertain_effect_is_small_but_real_only_where_its_cost_is_shown():
    """An uncertain effect with a mean cost of fixing above the margin: on pure noise the
    model's fit of the noise gave such costs to 1-3 of 10 parameters, which the report
    called "small but real". The mean alone is the model's doubt; the cost is shown only
    where even its low quantile (1 - confidence) exceeds the margin."""
    space = hp.SearchSpace([hp.Float(f"x{j}", 0, 1) for j in range(5)])
    configs = space.sample(100, seed=0)
    result = hp.fanova(hp.TrialHistory(space, configs, np.random.default_rng(0).normal(size=100)), seed=0)
    uncertain = [i.params[0] for i in result.ranking(order=1) if i.verdict == "uncertain"]
    assert uncertain
    assert not [i for i in result.ranking() if i.verdict == "resolved"]
    name = uncertain[0]
    values = dict.fromkeys(space.names, 0.5)
    for risk, state in [(_risk(name, 0.02, 0.05), "unresolved"),  # low quantile -0.01
                        (_risk(name, 0.05, 0.06), "small")]:  # every draw above 0.04
        d = decide(result, risks={n: _risk(n, 0.0, 0.0) for n in space.names} | {name: risk},
                   values=values, margin=0.01)[name]
        assert risk.mean > 0.01
        assert d.state == state, d.sentence
        assert d.cost_lower == pytest.approx(risk.quantile(0.1))
        assert d.to_dict()["cost_lower"] == d.cost_lower
        if state == "small":
            assert d.evidence == "cost"
            assert (f"costs 0.05 on average and at least {fmt_cost(d.cost_lower, 0.01)} (10% quantile), "
                    "more than the 0.01 allowed") in d.sentence
        else:  # the model's refits do not rank the noise they were not fit on: the sentence says so
            assert result.signal_unshown
            assert "the model does not yet rank trials it was not fit on better than chance" in d.sentence


def test_a_parameter_is_not_said_to_matter_where_the_model_predicts_nothing_held_out():
    """Pure noise whose fit gave f2 22 % of the variance, "resolved" against the shadows'
    null, and the report "matters". The model's refits, fit on halves of the trials, do
    not rank the other halves better than unrelated values would (a median rank
    correlation of 0.07 against 0.235): f2 is not resolved
    yet, its sentence says why, and the rules printed with it say so."""
    space = hp.SearchSpace([*(hp.Float(f"f{j}", 0, 1) for j in range(4)), hp.Float("lr", 1e-5, 1e-1, log=True),
                            hp.Int("layers", 1, 8), hp.Int("units", 16, 512, log=True),
                            hp.Categorical("opt", ["adam", "sgd", "rms"]),
                            *(hp.Float(f"g{j}", -3, 3) for j in range(2))])
    configs = space.sample(100, seed=6)
    result = hp.fanova(hp.TrialHistory(space, configs, np.random.default_rng(6).normal(size=100)), seed=0)
    assert result.signal_unshown
    assert result.importance("f2").mean > 0.15
    decisions = decide(result)
    assert not [n for n, d in decisions.decisions.items() if d.state in ("matters", "small")]
    d = decisions["f2"]
    assert d.state == "unresolved"
    assert d.sentence.startswith("Keep tuning: it explains")
    assert "the model does not yet rank trials it was not fit on better than chance" in d.sentence
    assert any("median rank correlation with the trials they were not fit on is not above what values "
               "unrelated to the parameters exceed 5 % of the time, none of its effects is resolved" in rule
               for rule in decisions.rules)


def test_a_small_share_that_is_large_in_objective_units_is_not_nothing():
    """A V-shaped parameter below 0.05 % of the variance but above its shadow: nothing by
    share, yet with a standard deviation above a quarter of the margin it is not safe to
    fix, even where its estimated cost is within the margin (the model smooths a V)."""
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("v", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(200, seed=3)
    y = [(c["x"] - 0.3) ** 2 + 0.02 * abs(c["v"] - 0.5) for c in configs]
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    v = result.importance("v")
    assert v.verdict == "negligible"  # shown (its interval clears the shadow), below the floor
    assert v.shadow is not None
    assert v.shadow < v.mean < 5e-4  # above the shadow, below the floor
    risks = {n: _risk(n, 0.0, 0.0) for n in space.names}
    out = decide(result, risks=risks, values=dict.fromkeys(space.names, 0.5), margin=0.002)
    d = out["v"]
    assert d.state == "not_yet_safe", d.sentence
    assert d.evidence == "size"
    assert not d.negligible  # judged by its size, and too large to call nothing
    # the V's standard deviation is 0.02 / sqrt(48) = 0.0029, well above 0.0005
    assert d.effect_sd == pytest.approx(0.02 / math.sqrt(48), rel=0.25)
    assert "more than 0.25 of the 0.002 allowed" in d.sentence
    assert "below the 0.05 % counted as an effect but more than a shuffled parameter" in d.sentence
    # where the sized effect's interval reaches its shadow, its verdict is "nothing", and
    # the sentence does not claim it beats a shuffled parameter beside that verdict
    from hpinsight._decisions import _sentence

    unshown = _sentence(dataclasses.replace(d, verdict="indistinguishable from nothing"),
                        n_trials=200, n_params=3, margin=0.002, confidence=0.9,
                        top_label="among the best 25 %", top_doubtful=False)
    assert "below the 0.05 % counted as an effect, and an effect that size could cost" in unshown
    assert "shuffled" not in unshown
    assert out["z"].state == "fix"  # below its shadow: nothing, whatever the margin
    # with a margin four times the V's standard deviation, it is too small to matter
    assert decide(result, risks=risks, values=dict.fromkeys(space.names, 0.5),
                  margin=0.02)["v"].state == "fix"


def test_without_costs_nothing_is_safe_to_fix(analysis):
    result, capped = analysis
    out = decide(result, capped=capped)
    assert out.to_fix == {}
    assert out["z"].state == "not_yet_safe"
    assert "was not estimated" in out["z"].sentence
    assert out["x"].state == "matters"


def test_decide_refuses_a_capped_analysis_as_all_trials(analysis):
    # a capped analysis alone calls nothing nothing: taken for the analysis of all
    # trials, it would keep tuning every parameter for want of evidence
    _, capped = analysis
    with pytest.raises(hp.exceptions.InvalidArgumentError, match=r"capped at .*capped="):
        decide(capped)
    with pytest.raises(hp.exceptions.InvalidArgumentError, match="capped at"):
        decide(capped, capped=capped)


def test_where_the_best_show_no_clear_signal_no_share_of_theirs_is_quoted(analysis):
    # most refits of the capped analysis flat: its shares are fractions of next to
    # nothing; the table and every sentence say "no clear signal" where they would
    # quote one, and the JSON keeps the numbers with the flag
    import dataclasses

    result, capped = analysis
    shares = np.array(capped.refit_fractions)
    k = shares.shape[0]
    assert k >= 2
    shares[: k // 2 + 1] = np.nan
    doubtful = dataclasses.replace(capped, refit_fractions=shares)
    assert doubtful.signal_doubtful
    assert not capped.signal_doubtful
    clear, unclear = decide(result, capped=capped), decide(result, capped=doubtful)
    assert not clear.top_doubtful
    assert unclear.top_doubtful
    rows = {line.split()[0]: line for line in unclear.table().splitlines()[1:]}
    assert all("no clear signal" in row for row in rows.values())
    assert all("no clear signal" not in row for row in clear.table().splitlines())
    quoted = [d for d in clear if "among the best 25 %)" in d.sentence]
    assert quoted  # with a signal, sentences quote the share among the best
    for d in quoted:
        assert f"({fmt_share(d.share_top)} among the best 25 %)" in d.sentence
        assert "(no clear signal among the best 25 %)" in unclear[d.param].sentence
    for d in unclear:
        assert "among the best 25 %)" not in d.sentence or \
            "(no clear signal among the best 25 %)" in d.sentence
    saved = json.loads(json.dumps(unclear.to_dict()))
    assert saved["top_doubtful"] is True
    assert saved["decisions"]["x"]["share_top"] == pytest.approx(unclear["x"].share_top)


def test_a_parameter_kept_tuned_by_the_best_without_signal_says_so(analysis):
    # every verdict of a capped analysis most of whose refits are flat is uncertain:
    # it rules no effect out, and it keeps z and u (which do nothing) tuned where an
    # analysis that sees lets them be fixed. Their sentences give that reason, not a
    # hidden effect "up to" a share a capped analysis never checks, nor a share among
    # the best that is a fraction of next to nothing
    import dataclasses

    result, capped = analysis
    shares = np.array(capped.refit_fractions)
    shares[: shares.shape[0] // 2 + 1] = np.nan
    doubtful = dataclasses.replace(capped, refit_fractions=shares)
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}
    values = dict.fromkeys(result.space.names, 0.5) | {"kind": "a"}
    seeing = decide(result, capped=capped, risks=risks, values=values, margin=0.01)
    assert {"z", "u"} <= set(seeing.to_fix)
    for margin in (0.01, 1e-9):
        out = decide(result, capped=doubtful, risks=risks, values=values, margin=margin)
        assert "x" in out.in_state("matters")  # resolved over all trials
        for name in ("z", "u"):
            d = out[name]
            assert (d.state, d.evidence) == ("not_yet_safe", NO_SIGNAL_AMONG_BEST), d.sentence
            assert math.isnan(d.evidence_share)
            # a parameter taken out of the model says so, with the share its verdict read
            taken = ("" if math.isnan(d.share_before) else
                     f" (taken out of the model, {fmt_share(d.share_before)} before)")
            assert d.sentence.startswith(
                f"Keep tuning for now: it explains {fmt_share(d.share)} of the variation{taken}, "
                f"but among the best 25 %, {doubtful.n_flat_refits} of {doubtful.n_refits} refits "
                "find no signal, so an effect there is not ruled out")
            assert fmt_share(d.share_top) not in d.sentence
            assert "could hide" not in d.sentence
            assert member_note(d) == "(no clear signal among the best)"
            assert d.to_dict()["evidence_share"] is None
    # w, resolved over all trials but too small to matter at a margin of 0.01, is fixed
    # with or without the doubt; at 1e-9 its doubtful effect among the best, larger than
    # its own, is what the decision names
    assert decide(result, capped=doubtful, risks=risks, values=values,
                  margin=0.01)["w"].state == "fix"
    w = decide(result, capped=doubtful, risks=risks, values=values, margin=1e-9)["w"]
    assert (w.state, w.evidence) == ("unresolved", NO_SIGNAL_AMONG_BEST)
    assert w.sentence.startswith("Keep tuning: ")  # its state's action, "keep tuning"
    # whatever else decides (here a cost above the margin, or a cost within it), no
    # decision names an effect among the best that is a fraction of nothing, unless its
    # size in objective units, too small to matter, is what the rule read
    for mean, upper in ((0.0, 0.0), (0.005, 0.02), (0.05, 0.1)):
        costs = {n: _risk(n, mean, upper) for n in result.space.names}
        for margin in (0.01, 1e-9):
            out = decide(result, capped=doubtful, risks=costs, values=values, margin=margin)
            # 'rare' (not enough data) names its effect over all trials, not its
            # larger share among the best (what it names where that analysis has a signal)
            assert out["rare"].evidence == "rare"
            assert decide(result, capped=capped, risks=costs, values=values,
                          margin=margin)["rare"].evidence == "rare among the best"
            for d in out:
                if d.evidence == f"{d.param} among the best":
                    assert d.negligible, (d.param, d.state, d.evidence)
                    assert d.effect_sd <= 0.25 * margin
                    assert "too small to matter" in d.sentence


def test_a_held_parameter_is_fixed_or_released(analysis):
    result, capped = analysis
    record = SamplingRecord(fixed={"z": 0.4, "x": 0.9}, decisions=(
        {"action": "fix", "params": {"z": 0.4, "x": 0.9}, "after_trial": 49},),
        n_held={"z": 10, "x": 10})
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}
    out = decide(result, capped=capped, risks=risks, margin=0.01, sampling=record)
    # without a record of trials held, a restriction is not called in force
    unheld = decide(result, capped=capped, risks=risks, margin=0.01,
                    sampling=SamplingRecord(fixed=record.fixed, decisions=record.decisions))
    assert unheld["z"].state not in ("fixed", "release")
    assert unheld["z"].since_trial is None
    assert out["z"].state == "fixed"
    assert out["z"].action == "fixed at 0.4 since trial 50"
    assert out["x"].state == "release"  # its effect is resolved
    assert out["x"].action == "release: it has an effect"
    # kept fixed on its mean cost, though its 90 % quantile, which an unfixed parameter
    # is judged by, lies above the margin: the sentence says which rule kept it
    above = decide(result, capped=capped, margin=0.01, sampling=record,
                   risks=risks | {"z": _risk("z", 0.004, 0.03)})["z"]
    assert above.state == "fixed"
    assert above.cost_upper > 0.01
    assert ("nothing found since says otherwise: none of its effects is resolved, and "
            "fixing it costs 0.004 on average, within the 0.01 allowed, so it stays fixed"
            ) in above.sentence
    costly = decide(result, capped=capped, margin=0.01, sampling=record,
                    risks=risks | {"z": _risk("z", 0.05, 0.06)})
    assert costly["z"].state == "release"
    assert costly["z"].action.startswith("release: fixing it costs 0.05")


def test_a_trial_that_explored_and_beat_the_model_releases_what_it_moved(analysis):
    # z and u held and cheap by the model; an exploring trial that moved both did better
    # than the model's prediction from every other trial: both are released (one trial
    # cannot tell which of them made the gain), unless the gain is within the margin
    # plus EXPLORED_Z of the prediction's standard deviations
    result, capped = analysis
    record = SamplingRecord(fixed={"z": 0.4, "u": 0.1}, decisions=(
        {"action": "fix", "params": {"z": 0.4, "u": 0.1}, "after_trial": 49},),
        n_held={"z": 30, "u": 30})
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}

    def judged(*explored: Explored) -> hp.results.DecisionResult:
        return decide(result, capped=capped, risks=risks, margin=0.01, sampling=record,
                      explored=explored)

    assert [judged()[n].state for n in ("z", "u")] == ["fixed", "fixed"]
    # 0.01 + 3 x 0.02 = 0.07: a gain of 0.069 is not enough, 0.071 is
    near = judged(Explored(59, ("z", "u"), 0.069, 0.02, 1.0))
    assert [near[n].state for n in ("z", "u")] == ["fixed", "fixed"]
    # nor is it when a trial that did not explore beat its prediction by more standard
    # deviations (3.6 against 3.55): the model's errors reach that far anyway
    common = judged(Explored(59, ("z", "u"), 0.071, 0.02, 3.6))
    assert [common[n].state for n in ("z", "u")] == ["fixed", "fixed"]
    out = judged(Explored(59, ("z", "u"), 0.071, 0.02, 3.5), Explored(69, ("z",), 0.5, 0.1, 3.5))
    for name in ("z", "u"):
        d = out[name]
        assert (d.state, d.evidence) == ("release", EXPLORED)
        assert d.value == record.fixed[name]
        assert d.tuned
        assert "release the restriction" in d.sentence
        assert json.loads(json.dumps(out.to_dict()))["decisions"][name]["explored_trial"] \
            == d.explored_trial
    # each names the trial that beat the prediction by the most standard deviations
    # beyond the margin: trial 69 (4.9) for z, trial 59 (3.05), the one that moved it, for u
    assert (out["z"].explored_trial, out["z"].explored_gain) == (69, 0.5)
    assert (out["u"].explored_trial, out["u"].explored_gain, out["u"].explored_sd) \
        == (59, 0.071, 0.02)
    assert "trial 59" in out["u"].sentence
    assert "0.071 better" in out["u"].sentence
    assert out["u"].action == "release: exploring trial 59 did 0.071 better"
    # the rule is printed with the others
    assert any("did better than the model predicts" in r for r in out.rules)
    # a parameter not held is not released by a trial that explored another
    assert out["x"].state != "release" or out["x"].evidence != EXPLORED


def test_a_trial_that_explored_outside_a_narrowed_range_and_beat_the_model_widens_it(analysis):
    # z held fixed, u narrowed to a range: the trial that moved both (u outside its range)
    # and beat the model as the release rule asks releases z and widens u, whose own
    # decision is the one any tuned parameter gets; a gain within the bar widens nothing
    result, capped = analysis
    record = SamplingRecord(fixed={"z": 0.4}, ranges={"u": (0.2, 0.4)}, decisions=(
        {"action": "fix", "params": {"z": 0.4}, "ranges": {"u": [0.2, 0.4]},
         "after_trial": 49},), n_held={"z": 30}, n_narrowed={"u": 30})
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}
    plain = decide(result, capped=capped, risks=risks, margin=0.01, sampling=record)
    near = decide(result, capped=capped, risks=risks, margin=0.01, sampling=record,
                  explored=[Explored(59, ("z", "u"), 0.069, 0.02, 1.0)])
    assert plain.widen == near.widen == {}
    out = decide(result, capped=capped, risks=risks, margin=0.01, sampling=record,
                 explored=[Explored(59, ("z", "u"), 0.071, 0.02, 1.0)])
    assert out["z"].state == "release"
    assert list(out.widen) == ["u"]
    assert out.widen["u"].trial == 59
    assert (out["u"].state, out["u"].evidence) == (plain["u"].state, plain["u"].evidence)
    assert json.loads(json.dumps(out.to_dict()))["widen"] == {
        "u": {"trial": 59, "gain": 0.071, "sd": 0.02}}
    assert any("widened to the whole range again" in r for r in out.rules)


def test_a_released_parameter_is_not_called_safe_to_fix_again(analysis):
    # z was fixed, then released after trial 99: the study never fixes it again, and the
    # callback's summary, its log and the report said "fix" while it went on being tuned
    result, capped = analysis
    record = SamplingRecord(fixed={"u": 0.1}, decisions=(
        {"action": "fix", "params": {"z": 0.4, "u": 0.1}, "after_trial": 49},
        {"action": "release", "params": {"z": 0.4}, "after_trial": 99}),
        n_held={"z": 50, "u": 100})
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}
    free = decide(result, capped=capped, risks=risks, margin=0.01, values={"z": 0.4})
    assert free["z"].state == "fix"
    out = decide(result, capped=capped, risks=risks, margin=0.01, values={"z": 0.4},
                 sampling=record)
    z = out["z"]
    assert (z.state, z.released_after, z.tuned) == ("released", 99, True)
    assert z.action == "keep tuning: released after trial 99"
    assert "released after trial 99" in z.sentence
    assert "not fixed again" in z.sentence
    assert z.heading == STATES["released"][0]
    assert out["u"].state == "fixed"
    assert json.loads(json.dumps(out.to_dict()))["decisions"]["z"]["released_after"] == 99
    assert any("not fixed again" in r for r in out.rules)


def test_min_keep_keeps_the_largest_share_when_all_could_be_fixed(analysis):
    result, _ = analysis
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}
    # with every effect called nothing (a huge null), everything active would be fixed
    from dataclasses import replace

    # (and no check of what the trials could hide)
    nothing = replace(result, shadow_fractions=(1.0, 1.0), hidden_fractions=None)
    # 'rare' (no data) is tuned already: one more is kept, the largest share
    out = decide(nothing, risks=risks, margin=0.01, min_keep=2)
    assert out.in_state("no_data") == ("rare",)
    assert out.in_state("kept") == ("x",)
    assert "at least one parameter stays tuned" in out["x"].sentence
    assert decide(nothing, risks=risks, margin=0.01, min_keep=1).in_state("kept") == ()


def test_every_parameter_has_exactly_one_state_and_the_dict_is_json(analysis):
    result, capped = analysis
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}
    out = decide(result, capped=capped, risks=risks, margin=0.01)
    groups = [out.in_state(s) for s in STATES]
    flat = [n for g in groups for n in g]
    assert sorted(flat) == sorted(result.space.names)
    text = json.dumps(out.to_dict(), allow_nan=False)
    assert json.loads(text)["decisions"]["x"]["state"] == "matters"
    assert len(out.rules) == 7
    table = out.table().splitlines()
    assert len(table) == 1 + len(result.space.names)
    assert table[1].split()[0] == "x"
    with pytest.raises(ValueError, match="must be among"):
        out.in_state("maybe")


@pytest.mark.parametrize(
    ("x", "threshold", "text"),
    [(0.0075, 0.01, "0.0075"), (0.0099999, 0.01, "0.0099999"), (0.012, 0.01, "0.012"),
     (0.01, 0.01, "0.01"), (1234.5678, None, "1.23e+03"), (math.nan, 0.01, "n/a")],
)
def test_a_cost_never_prints_equal_to_its_threshold(x, threshold, text):
    assert fmt_cost(x, threshold) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [(0.0499, "4.99 %"), (0.04999, "4.999 %"), (0.05, "5.0 %"), (0.0501, "5.01 %"),
     (0.123, "12.3 %"), (0.000499, "0.0499 %"), (0.0005, "0.050 %"), (0.00047, "0.047 %"),
     (1e-9, "0.0 %"), (0.000999, "0.1 %"), (0.00099, "0.099 %")],
)
def test_a_share_never_prints_equal_to_a_threshold_the_rules_read(x, text):
    # one spelling on every surface: the table wrote 5.0 % for a share the sentence beside
    # it wrote 4.99 % (the rule reads it against 5 %, and 0.05 % for nothing)
    assert fmt_share(x) == text


@pytest.mark.parametrize(
    ("x", "stored"),
    [(0.0496, 0.0496), (0.049996, 0.049996), (0.05, 0.05), (0.05004, 0.05004),
     (0.00049, 0.00049), (0.0004996, 0.0004996), (0.123456, 0.123), (0.0, 0.0),
     (7.7e-4, 7.7e-4), (1.23456e-9, 1.23e-9)],
)
def test_the_live_summary_stores_shares_apart_from_the_thresholds(x, stored):
    # round(m, 3) stored 0.0496 as 0.05 beside the decision "small" (the rule reads 5 %),
    # and 0.00049 as 0.0 where the status line said 0.049 %
    from hpinsight._shared import round_share
    from hpinsight.integrations._live import ImportanceSnapshot, compact_summary

    assert round_share(x) == stored
    snap = ImportanceSnapshot(n_trials=30, last_trial=29, importances={"b": x},
                              stds={"b": x / 2}, best_value=0.1, n_excluded=0, seconds=0.1)
    assert compact_summary(snap, decisions={"b": "small"})["importance"]["b"][0] == stored


def test_the_live_ranking_line_writes_shares_as_the_report_does():
    """The callback's log line and ``watch`` print the shares the way the page and the
    terminal table do, so 0.069 % is not "0.00" in one place and "0.1 %" in another."""
    from hpinsight.integrations._live import ImportanceSnapshot

    snap = ImportanceSnapshot(
        n_trials=150, last_trial=149, importances={"lr": 0.626, "dropout": 0.00069, "seed": 1e-9},
        stds={"lr": 0.118, "dropout": 0.00032, "seed": 0.0}, best_value=0.28, n_excluded=0,
        seconds=1.0, verdicts={"lr": "resolved", "dropout": "uncertain",
                               "seed": "indistinguishable from nothing"})
    assert snap.ranking_line() == ("lr 62.6 % ± 11.8 %, dropout 0.069 % ± 0.032 % (uncertain), "
                                   "seed 0.0 % ± 0.0 % (nothing)")
    assert snap.ranking_line(top=1) == "lr 62.6 % ± 11.8 % (+2 more)"


def _noisy_history(noise: float, n: int = 120) -> hp.TrialHistory:
    """x matters; z does nothing but a V of 0.3|z - 0.5| that noise of sd ``noise`` hides."""
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Float("w", 0, 1)])
    configs = space.sample(n, seed=3)
    rng = np.random.default_rng(0)
    y = [10 * (c["x"] - 0.3) ** 2 + 0.3 * abs(c["z"] - 0.5) + noise * rng.standard_normal()
         for c in configs]
    return hp.TrialHistory(space, configs, y)


def _unvisited_history(z_high: float) -> hp.TrialHistory:
    """x matters; z does nothing, and the trials sample it in [0, z_high] only."""
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Float("w", 0, 1)])
    configs = space.sample(150, seed=4)
    for c in configs:
        c["z"] *= z_high
    return hp.TrialHistory(space, configs, [10 * (c["x"] - 0.3) ** 2 for c in configs])


def test_what_the_trials_could_hide_keeps_a_parameter_they_never_looked_at():
    # z does nothing where the trials are, but they left 80 % of its range unvisited:
    # an effect that matters could live there, so z is uncertain and not fixed; w, the
    # same but sampled over its whole range, is nothing and fixed
    from hpinsight._fanova_result import MATTERS_SHARE

    history = _unvisited_history(0.2)
    result = hp.fanova(history, seed=0)
    z, w = result.importance("z"), result.importance("w")
    from hpinsight._fanova_result import NEGLIGIBLE_SHARE

    for imp in (z, w):  # neither shows an effect
        assert imp.mean < NEGLIGIBLE_SHARE or imp.mean <= imp.shadow
    assert z.hidden > MATTERS_SHARE > w.hidden
    assert (z.verdict, w.verdict) == ("uncertain", "indistinguishable from nothing")
    assert result.importance("x").verdict == "resolved"
    sub = hp.suggest_subspace(history, seed=0)
    d = sub.decisions["z"]
    assert d.state == "not_yet_safe"
    assert d.evidence == "hidden"
    # one answer: the decision's verdict is the one the table gives z, not that of a
    # larger effect of z that is nothing (its interactions here)
    assert d.verdict == z.verdict == "uncertain"
    assert d.hidden_share > MATTERS_SHARE
    assert "these trials could hide an effect of it that holds up to" in d.sentence
    assert "z" not in sub.fixed
    assert "w" in sub.fixed
    # the same study with z sampled over its whole range: nothing, and fixed
    whole = hp.fanova(_unvisited_history(1.0), seed=0).importance("z")
    assert whole.hidden < MATTERS_SHARE
    assert whole.verdict == "indistinguishable from nothing"


def test_what_the_noise_could_hide_keeps_a_parameter_that_shows_nothing():
    from hpinsight._decision_result import HIDDEN_COST

    history = _noisy_history(noise=1.0, n=200)
    sub = hp.suggest_subspace(history, seed=0)
    result = hp.fanova(history, seed=0)
    noise_sd = math.sqrt(result.model.noise_variance) * result.model.y_scale
    # w among the best 25 % sits at its null with a 90 % interval reaching 5 % above it:
    # uncertain, so kept by its verdict before the noise is asked
    assert sub.decisions["w"].state in ("not_yet_safe", "unresolved")
    d = sub.decisions["z"]
    assert d.state == "not_yet_safe"
    assert d.evidence == "noise"
    # the bound is the rule's own: HIDDEN_COST noise sds over the root of its trials
    assert d.hidden_cost == pytest.approx(HIDDEN_COST * noise_sd / math.sqrt(d.n_active),
                                          rel=1e-9)
    assert d.hidden_cost > sub.margin >= d.cost_upper  # the model alone would fix it
    assert "an effect the noise in these trials hides could cost up to" in d.sentence
    assert sub.fixed == {}


def test_a_forest_bounds_what_the_noise_could_hide_by_its_out_of_bag_residuals():
    # a forest has no noise term: the root mean square of its out-of-bag residuals (the
    # noise plus what the trees cannot fit) stands in, so parameters that do nothing, and
    # would be fixed on the forest's costs alone, are held while that residual is large
    from hpinsight._decision_result import HIDDEN_COST

    # 13 parameters: past the pairs' limit, so the decisions weigh main effects alone (a
    # forest's pairs with k are uncertain here and would keep it tuned on their own,
    # before the rule this test is about)
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Categorical("k", ["a", "b"]),
                            *(hp.Float(f"w{i}", 0, 1) for i in range(11))])
    configs = space.sample(200, seed=3)
    rng = np.random.default_rng(0)
    y = np.array([10 * (c["x"] - 0.3) ** 2 + 0.5 * rng.standard_normal() for c in configs])
    history = hp.TrialHistory(space, configs, y)
    forest = hp.Forest(n_trees=64)
    model = hp.fanova(history, surrogate=forest, seed=0).model
    # scikit-learn's out-of-bag R² is 1 - SSE / SST on the same out-of-bag predictions
    assert model.residual_sd**2 == pytest.approx((1 - model.fit_r2) * y.var(), rel=1e-9)
    assert 0.5 < model.residual_sd < 0.8  # the noise's sd is 0.5, plus the misfit
    sub = hp.suggest_subspace(history, surrogate=forest, seed=0,
                              fitted=hp.fanova(history, surrogate=forest, seed=0))
    d = sub.decisions["k"]
    assert d.state == "not_yet_safe"
    assert d.evidence == "noise"
    assert d.hidden_cost == pytest.approx(
        HIDDEN_COST * model.residual_sd / math.sqrt(d.n_active), rel=1e-9)
    assert d.hidden_cost > sub.margin >= d.cost_upper  # its cost alone would fix it
    assert sub.fixed == {}
    # an objective that is often exactly 0 (an error rate, a clipped value): rows whose
    # out-of-bag prediction is 0 count like any other
    flat = np.array([0.0 if c["x"] < 0.6 else 3 * (c["x"] - 0.6) for c in configs])
    model = hp.fanova(hp.TrialHistory(space, configs, flat), surrogate=forest, seed=0).model
    assert model.residual_sd**2 == pytest.approx((1 - model.fit_r2) * flat.var(), rel=1e-9)


def test_without_noise_the_bound_does_not_hold_a_parameter_back():
    sub = hp.suggest_subspace(_noisy_history(noise=0.0), seed=0)
    assert sub.decisions["w"].state == "fix"
    assert math.isnan(sub.decisions["w"].hidden_cost) or \
        sub.decisions["w"].hidden_cost <= sub.margin


def test_a_status_line_names_the_front_by_its_size_in_good_english() -> None:
    """The live status of a Pareto-front analysis counts the front's trials (one is
    singular); any other analysis gives its best value."""
    from dataclasses import replace

    from hpinsight.integrations._live import ImportanceSnapshot

    snap = ImportanceSnapshot(n_trials=40, last_trial=39, importances={"a": 0.5},
                              stds={"a": 0.1}, best_value=0.0123456789, n_excluded=0,
                              seconds=1.0)
    assert snap.best_text() == "best 0.0123457"
    assert replace(snap, best_value=0.0, front_size=1).best_text() == "front of 1 trial"
    assert replace(snap, best_value=0.0, front_size=12).best_text() == "front of 12 trials"


def test_a_parameter_the_two_fits_disagree_about_is_not_fixed():
    # The rank fit can overrule a small effect the fit to the objective's values finds
    # (a V under random search on 40 parameters); the importances follow the longer
    # length scale, but such a parameter is not safe to fix.
    import dataclasses

    from hpinsight._decision_result import DISPUTED_LENGTH, DISPUTED_RATIO

    history = _noisy_history(noise=0.0)
    result = hp.fanova(history, seed=0, max_order=2)
    capped = hp.fanova(history, seed=0, cap_quantile=0.25)
    model = result.model
    j = history.space.names.index("w")
    assert model.raw_length_scales is not None
    sub = hp.suggest_subspace(history, fitted=result, capped=capped, seed=0)
    assert sub.decisions["w"].state == "fix"  # the fits agree: as before
    # the fit to the values saw an effect of w that the rank fit overruled
    raw = np.array(model.raw_length_scales)
    raw[j] = min(DISPUTED_LENGTH, model.length_scales[j] / DISPUTED_RATIO) * 0.9
    disputed = dataclasses.replace(result, model=dataclasses.replace(model, raw_length_scales=raw))
    sub = hp.suggest_subspace(history, fitted=disputed, capped=capped, seed=0)
    d = sub.decisions["w"]
    assert d.state == "not_yet_safe"
    assert d.evidence == "disputed"
    assert "the fit to the objective's values finds an effect" in d.sentence
    assert "w" not in sub.fixed
    assert any("do not disagree about it" in rule for rule in sub.decisions.rules)
    # only the disputed parameter changes
    before = hp.suggest_subspace(history, fitted=result, capped=capped, seed=0).decisions
    assert {n: x.state for n, x in sub.decisions.decisions.items() if n != "w"} == \
        {n: x.state for n, x in before.decisions.items() if n != "w"}


def test_the_raw_length_scales_are_the_value_fit_before_the_longer_was_kept():
    history = _noisy_history(noise=0.0)
    model = hp.fanova(history, seed=0).model
    raw = np.asarray(model.raw_length_scales)
    # kept = max(rank fit, value fit): never shorter than the value fit's
    assert raw.shape == model.length_scales.shape
    assert np.all(model.length_scales >= raw * (1 - 1e-12))
    # x matters, w does nothing: the values alone give x the shorter length scale
    names = history.space.names
    assert raw[names.index("x")] < raw[names.index("w")] / 10


def _holm_by_definition(p: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values, written out from the definition."""
    names = sorted(p, key=lambda n: p[n])
    m, out, running = len(names), {}, 0.0
    for i, n in enumerate(names):
        running = max(running, min(1.0, (m - i) * p[n]))
        out[n] = running
    return out


def test_a_parameter_whose_errors_the_model_misses_is_not_fixed():
    # Wiring: the same analysis, with the leave-one-out errors made to depend on w.
    import dataclasses

    from hpinsight._decision_result import MISSED_ALPHA

    history = _noisy_history(noise=0.0)
    result = hp.fanova(history, seed=0, max_order=2)
    capped = hp.fanova(history, seed=0, cap_quantile=0.25)
    model = result.model
    assert model.residual_pvalues is not None
    assert model.residual_pvalues.shape == (3,)
    sub = hp.suggest_subspace(history, fitted=result, capped=capped, seed=0)
    assert sub.decisions["w"].state == "fix"
    j = history.space.names.index("w")
    p, spread = np.array(model.residual_pvalues), np.array(model.residual_spread)
    p[j] = MISSED_ALPHA / 10  # 3 tests: adjusted 0.015
    spread[j] = sub.margin  # errors moving by a whole margin

    def with_errors(p: np.ndarray, spread: np.ndarray) -> hp.results.FanovaResult:
        return dataclasses.replace(result, model=dataclasses.replace(
            model, residual_pvalues=p, residual_spread=spread))

    sub = hp.suggest_subspace(history, fitted=with_errors(p, spread), capped=capped, seed=0)
    d = sub.decisions["w"]
    assert (d.state, d.evidence) == ("not_yet_safe", "missed")
    expected = _holm_by_definition(dict(zip(history.space.names, p.tolist(), strict=True)))
    assert d.residual_p == pytest.approx(expected["w"], rel=1e-12)
    assert d.effect_sd == spread[j]
    assert ("errors on trials left out of its fit change with it (adjusted p = 0.015, below "
            "0.05; standard deviation") in d.sentence
    assert "w" not in sub.fixed
    assert d.to_dict()["residual_p"] == pytest.approx(expected["w"])
    assert any("errors on trials left out of its fit do not depend on it" in rule for rule in sub.decisions.rules)
    # an adjusted p just below the threshold never prints equal to it
    p[j] = 0.0498 / 3
    close = hp.suggest_subspace(history, fitted=with_errors(p, spread), capped=capped,
                                seed=0).decisions["w"]
    assert close.state == "not_yet_safe"
    assert "(adjusted p = 0.0498, below 0.05;" in close.sentence
    # after adjustment over three parameters, 0.02 is no longer below 0.05
    p[j] = 0.02
    assert hp.suggest_subspace(history, fitted=with_errors(p, spread), capped=capped,
                               seed=0).decisions["w"].state == "fix"
    # and errors that move by a tenth of the margin are too small to matter
    p[j], spread[j] = MISSED_ALPHA / 10, 0.1 * sub.margin
    assert hp.suggest_subspace(history, fitted=with_errors(p, spread), capped=capped,
                               seed=0).decisions["w"].state == "fix"


def test_holm_adjustment_follows_its_definition():
    import dataclasses

    from hpinsight._decisions import _residual_p

    history = _noisy_history(noise=0.0)
    result = hp.fanova(history, seed=0)
    p = np.array([0.04, np.nan, 0.01])  # an untested parameter is not in the family
    fake = dataclasses.replace(result, model=dataclasses.replace(result.model, residual_pvalues=p))
    got, spread = _residual_p(fake)
    assert set(got) == set(spread) == {"x", "w"}
    assert got == pytest.approx(_holm_by_definition({"x": 0.04, "w": 0.01}))


def test_a_v_no_fit_resolves_is_not_fixed_where_the_model_alone_would_fix_it():
    # Outcome: random search on 40 parameters, 200 trials, where no fit resolves the
    # V-shaped c (benchmarks/bench_shrink.py's sparse40). Without the residual test, c is
    # "safe to fix" at a value that costs about twice the margin; with it, c is held, and
    # the parameters that do nothing are still fixed.
    import dataclasses

    vee = {"w": 0.0, "x": 0.4, "y": 0.8, "z": 1.2}
    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("b", 1e-4, 1, log=True),
                            hp.Int("i", 0, 20), hp.Float("c", 0, 1),
                            hp.Categorical("d", list(vee)),
                            *(hp.Float(f"n{k}", 0, 1) for k in range(35))])
    configs = space.sample(200, seed=1)
    y = [10 * (c["a"] - 0.3) ** 2 + 0.5 * (math.log10(c["b"]) + 2) ** 2
         + 0.01 * (c["i"] - 7) ** 2 + 0.3 * abs(c["c"] - 0.5) + vee[c["d"]] for c in configs]
    history = hp.TrialHistory(space, configs, y)
    result = hp.fanova(history, seed=0)
    capped = hp.fanova(history, seed=0, cap_quantile=0.25)
    blind = dataclasses.replace(result, model=dataclasses.replace(result.model, residual_pvalues=None))
    before = hp.suggest_subspace(history, fitted=blind, capped=capped, seed=0)
    assert "c" in before.fixed
    assert 0.3 * abs(before.fixed["c"] - 0.5) > before.margin  # its true cost
    sub = hp.suggest_subspace(history, fitted=result, capped=capped, seed=0)
    assert (sub.decisions["c"].state, sub.decisions["c"].evidence) == ("not_yet_safe", "missed")
    assert "c" not in sub.fixed
    nuisance = {f"n{k}" for k in range(35)}
    assert len(nuisance & set(sub.fixed)) >= 33
    assert {n for n, d in sub.decisions.decisions.items() if d.evidence == "missed"} == {"c"}


def test_a_parameter_that_acts_through_a_pair_has_one_answer_on_every_surface():
    # 'b' acts only together with 'a' (no main effect of its own): the report analyses
    # the pair and says b matters. suggest_subspace fitting its own analysis, and a live
    # refit whose decisions a dashboard note or a status line shows, once looked at main
    # effects only and called b "not resolved yet" on the same trials
    from hpinsight.integrations._live import LiveFanova, RefitOptions

    space = hp.SearchSpace([hp.Float("a", -1, 1), hp.Float("b", -1, 1), hp.Float("z", 0, 1)])
    configs = space.sample(120, seed=1)
    history = hp.TrialHistory(space, configs, [c["a"] * c["b"] + 0.3 * c["a"] for c in configs])
    report = hp.report(history, seed=0, top=1)
    assert report.result.importance("b").mean < 0.01  # nothing alone ...
    assert report.decisions["b"].state == "matters"  # ... but a pair that matters
    subspace = hp.suggest_subspace(history, seed=0)
    assert subspace.decisions.to_dict() == report.decisions.to_dict()
    live = LiveFanova(RefitOptions(seed=0, isolation="thread"), logger=logging.getLogger("t"))
    result, _ = live.fit(history)
    assert result.max_order == 2
    assert {d.param: d.state for d in decide(result)}["b"] == "matters"
    # the live fit, handed to suggest_subspace, decides as the report does
    given = hp.suggest_subspace(history, fitted=result, capped=report.capped, seed=0)
    assert given.decisions.to_dict() == report.decisions.to_dict()
    # main effects alone would not see b's pair: refused, with the call that works
    mains = hp.fanova(history, seed=0)
    with pytest.raises(InvalidDataError, match=r"main effects only \(max_order=1\).*"
                                               r"fanova\(history, max_order=2\)"):
        hp.suggest_subspace(history, fitted=mains, seed=0)


def test_a_constant_objective_is_not_judged_by_a_cost_against_a_margin_of_0():
    # every trial the same value: the page says there is nothing to explain, and each
    # decision read "fixing it could cost up to 0.000161, more than the 0 allowed", a
    # cost the data cannot show against a margin that cannot be set
    from hpinsight._decision_result import CONSTANT, no_matters_line

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Int("n", 1, 4)])
    configs = space.sample(30, seed=1)
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, [1.0] * 30), seed=0)
    assert sub.margin == 0.0
    for d in sub.decisions:
        assert (d.state, d.evidence) == ("not_yet_safe", CONSTANT), d.sentence
        assert d.sentence.startswith("Keep tuning for now: all 30 trials have the same value")
        assert "cost up to" not in d.sentence
        assert "allowed" not in d.sentence
        assert math.isnan(d.evidence_share)
    # the answer's line under "Matters" and the printed rules say the same, not "run more trials"
    assert no_matters_line(sub.decisions) == ("every trial has the same value, so no effect can "
                                              "be shown; run more varied trials.")
    assert sum("Every trial with the same value" in rule for rule in sub.decisions.rules) == 1
    # one answer: the table calls every effect nothing, the sentence says the same (it
    # said "no effect can be shown or ruled out"), the answer box puts each parameter in
    # its group, and no note calls every verdict uncertain
    rep = hp.report(hp.TrialHistory(space, configs, [1.0] * 30), seed=0)
    assert {i.verdict for i in rep.result.ranking(order=1)} == {"indistinguishable from nothing"}
    for d in rep.decisions:
        assert "no effect of it is distinguishable from nothing" in d.sentence
        assert "ruled out" not in d.sentence
    page = rep.html()
    assert "Every trial has the same value: there is nothing to explain." in page
    for name in space.names:
        assert page.count(f'<span class="param" data-param="{name}">') == 1
    assert "every verdict uncertain" not in page


def test_a_decision_by_an_interaction_s_size_names_the_interaction() -> None:
    # the sentence of a decision by size called any share that was not the main effect's
    # a share "among the best 25 %": here x1 x k's share over all trials, while k's share
    # among the best was 0
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(t: optuna.Trial) -> float:
        xs = [t.suggest_float(f"x{i}", -1, 1) for i in range(6)]
        kind = t.suggest_categorical("k", ["a", "b"])
        return (xs[0] - 0.3) ** 2 + 0.2 * abs(xs[1]) + (0.05 if kind == "a" else 0.0)

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1))
    study.optimize(objective, n_trials=80)
    rep = hp.report(study, seed=0)
    assert isinstance(rep, hp.results.Report)
    sized = {n: d for n, d in rep.decisions.decisions.items() if d.evidence == "size"}
    assert any(d.sized_by is not None and " x " in d.sized_by for d in sized.values())
    for name, d in sized.items():
        assert d.sized_by is not None
        among = d.sized_by == f"{name} among the best"
        effect = (rep.capped.importance(name) if among
                  else rep.result.importance(*d.sized_by.split(" x ")))
        assert d.evidence_share == effect.mean
        if " x " in d.sized_by:
            assert f"its interaction {d.sized_by} explains {fmt_share(d.evidence_share)}" in d.sentence
            assert "among the best" not in d.sentence.split(", below")[0]
        assert rep.to_dict()["decisions"]["decisions"][name]["sized_by"] == d.sized_by


def test_a_parameter_that_shares_a_forbidden_clause_is_not_called_safe_to_fix(analysis):
    # fixing it can rule out values of the other parameters of the clause (act at "tanh"
    # forbids opt = "rms"), a cost the model, integrating over forbidden combinations,
    # does not see: a SMAC space's act was called safe to fix at a true cost of 100
    # margins
    from hpinsight._decision_result import FORBIDDEN

    result, capped = analysis
    risks = {n: _risk(n, 0.0, 0.0) for n in result.space.names}
    free = decide(result, capped=capped, risks=risks, margin=0.01)
    assert free["z"].state == "fix"
    assert free["u"].state == "fix"
    record = SamplingRecord(forbidden=("z == 0.3 && x > 0.5",), linked=(("x", "z"),))
    out = decide(result, capped=capped, risks=risks, margin=0.01, sampling=record)
    assert out["z"].state == "not_yet_safe"
    assert out["z"].evidence == FORBIDDEN
    assert out["z"].linked == ("x",)
    assert "a forbidden clause rules out values of x" in out["z"].sentence
    assert out["u"].state == "fix"
    assert out["x"].state == free["x"].state
    assert out["z"].to_dict()["linked"] == ["x"]
    # by value: the clause fires only where z = 0.3, so z fixed elsewhere rules nothing out
    # (a SMAC space's act at 'relu' beside opt = rms and act = tanh was kept tuned)
    valued = SamplingRecord(forbidden=("z == 0.3 && x > 0.5",),
                            linked=({"z": (0.3,), "x": None},))
    at = {v: decide(result, capped=capped, risks=risks, margin=0.01, sampling=valued,
                    values={"z": v, "u": 0.5, "x": 0.5, "w": 0.5})
          for v in (0.3, 0.7)}
    assert at[0.3]["z"].state == "not_yet_safe"
    assert at[0.3]["z"].linked == ("x",)
    assert at[0.7]["z"].state == "fix"
    assert at[0.7]["z"].linked == ()


def test_a_parameter_with_one_value_in_the_space_is_fixed_at_it():
    # a ConfigSpace Constant (as a shrunk SMAC run has) reads as a one-choice categorical;
    # it was told to "keep tuning for now"
    from hpinsight._decision_result import SINGLE

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1),
                            hp.Categorical("act", ["tanh"])])
    configs = space.sample(60, seed=0)
    history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    sub = hp.suggest_subspace(history, seed=0)
    d = sub.decisions["act"]
    assert d.state == "fixed"
    assert d.evidence == SINGLE
    assert d.value == "tanh"
    assert d.action == "fixed at 'tanh'"
    assert d.sentence == ("Fixed at 'tanh': the search space gives it no other value, so "
                          "there is nothing to tune.")
    assert "act" not in sub.keep


def test_the_answer_says_when_a_share_is_among_the_best():
    # the answer box listed "y (6.4 %)" beside shares over all trials, where y holds
    # 0.5 % over all trials and 6.4 % among the best
    from hpinsight._decision_result import ParameterDecision

    among = ParameterDecision(param="y", state="matters", share=0.005, share_std=0.001,
                              share_top=0.064, evidence="y among the best",
                              evidence_share=0.064, verdict="resolved", n_active=60)
    assert member_note(among) == "(6.4 % among the best)"
    pair = ParameterDecision(param="y", state="matters", share=0.005, share_std=0.001,
                             share_top=0.0, evidence="x x y", evidence_share=0.2,
                             verdict="resolved", n_active=60, partners=("x",))
    assert member_note(pair) == "(20.0 % with x)"
    named = ParameterDecision(param="lr x wd", state="matters", share=0.8, share_std=0.01,
                              share_top=0.5, evidence="lr x wd", evidence_share=0.8,
                              verdict="resolved", n_active=60)
    assert member_note(named) == "(80.0 %)"  # it said "(80.0 % with lr, wd)"


def test_an_interaction_s_partners_keep_names_that_hold_the_separator():
    # a parameter named "lr x wd" kept for its interaction with b was listed "with lr,
    # wd, b": the partners were read back by splitting the evidence on " x "
    space = hp.SearchSpace([hp.Float("lr x wd", 0, 1), hp.Float("b", 0, 1),
                            hp.Float("z", 0, 1)])
    configs = space.sample(120, seed=0)
    y = [8 * (c["lr x wd"] - 0.5) * (c["b"] - 0.5) for c in configs]
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    d = sub.decisions["lr x wd"]
    assert d.evidence == "lr x wd x b"
    assert d.partners == ("b",)
    assert member_note(d).endswith(" with b)")
    assert d.to_dict()["partners"] == ["b"]
    assert sub.decisions["b"].partners == ("lr x wd",)


def test_a_choice_no_trial_tried_keeps_a_categorical_tuned():
    # 'c' is 5 better and never tried: the model's cost of fixing d is over 'a' and 'b'
    # alone, and d was called safe to fix at 'a'
    import random

    import optuna

    from hpinsight._decision_result import UNTRIED

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(t: optuna.Trial) -> float:
        x = t.suggest_float("x", -3, 3)
        d = t.suggest_categorical("d", ["a", "b", "c"])
        return (x - 1) ** 2 - 5.0 * (d == "c")

    def study_trying(choices: list[str]) -> optuna.Study:
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        rnd = random.Random(0)
        for _ in range(60):
            study.enqueue_trial({"d": rnd.choice(choices)}, skip_if_exists=False)
        study.optimize(objective, n_trials=60)
        return study

    rep = hp.report(study_trying(["a", "b"]), seed=0)
    d = rep.decisions["d"]
    assert d.state == "not_yet_safe"
    assert d.evidence == UNTRIED
    assert d.untried == ("c",)
    assert "no trial tried 'c'" in d.sentence
    assert rep.result.untried == {"d": ("c",)}
    assert rep.to_dict()["decisions"]["decisions"]["d"]["untried"] == ["c"]
    # every choice tried and none matters: safe to fix as before
    flat = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    flat.optimize(lambda t: (t.suggest_float("x", -3, 3) - 1) ** 2
                  + 0.0 * len(t.suggest_categorical("d", ["a", "b", "c"])), n_trials=60)
    tried = hp.report(flat, seed=0)
    assert tried.result.untried == {}
    assert tried.decisions["d"].state == "fix"


def test_a_parameter_every_trial_ran_at_one_value_has_not_enough_data():
    # w in [0, 10], every trial at w = 5: the decision spoke of its interaction's share,
    # "below the 0.05 % floor ... but more than a shuffled parameter", and called its
    # verdict "nothing" beside the table's "uncertain"; no surface said it never varied
    import optuna

    from hpinsight._decision_result import UNVARIED

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(t: optuna.Trial) -> float:
        x, y, w = t.suggest_float("x", -3, 3), t.suggest_float("y", 0, 1), t.suggest_float("w", 0, 10)
        return (x - 1) ** 2 + 0.3 * y + (w - 2) ** 2

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(60):
        study.enqueue_trial({"w": 5.0}, skip_if_exists=False)
    study.optimize(objective, n_trials=60)
    rep = hp.report(study, seed=0)
    assert rep.result.unvaried == {"w": 5.0}
    d = rep.decisions["w"]
    assert (d.state, d.evidence, d.value) == ("no_data", UNVARIED, 5.0)
    assert d.sentence == ("Keep tuning: every one of the 60 trials that have it ran it at 5, "
                          "so they say nothing of its effect; vary it to measure it.")
    assert d.action == "keep tuning: not enough data (one value in all 60 trials)"
    assert "(one value in all 60 trials)" in rep.html()
    assert rep.to_dict()["fanova"]["unvaried"] == {"w": 5.0}
    assert {"x", "y"}.isdisjoint(rep.result.unvaried)


def test_a_decision_for_what_trials_could_hide_quotes_a_share_that_could_matter():
    # p26 of 32 floats (3 matter), 40 random trials: kept "because these trials could
    # hide an effect of it that holds up to 0.00011 % of the variation, and from 5.0 % an
    # effect matters"; its effect among the best was uncertain because it was not nothing
    # over all trials (±30.6 % there), not because of what the trials could hide
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(t: optuna.Trial) -> float:
        xs = [t.suggest_float(f"p{i:02d}", 0, 1) for i in range(32)]
        return sum((3 - i) * (x - 0.5) ** 2 for i, x in enumerate(xs[:3]))

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=40)
    decisions = hp.report(study, seed=0).decisions
    hidden = [d for d in decisions if d.evidence == "hidden"]
    for d in hidden:
        assert d.hidden_share > decisions.matters_share, (d.param, d.sentence)
    assert decisions["p26"].evidence != "hidden"


def test_a_decision_looked_up_by_anything_but_a_name_says_how_to_look_it_up():
    # suggest_subspace(h).decisions[0] raised a bare KeyError: 0
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("n", 0, 1)])
    configs = space.sample(60, seed=0)
    sub = hp.suggest_subspace(hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2
                                                               for c in configs]), seed=0)
    with pytest.raises(KeyError, match=r"by parameter name, one of \['x', 'n'\]"):
        sub.decisions[0]
    assert sub.decisions["x"].param == "x"
