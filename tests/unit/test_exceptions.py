"""hpinsight.exceptions: every error hpinsight raises on purpose is an HPInsightError and a builtin."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

import hpinsight as hp
from hpinsight import _validation, exceptions
from hpinsight.adapters._smac_model import SmacModelUnavailable
from hpinsight.exceptions import (
    HPInsightError,
    HPInsightWarning,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDataError,
)
from hpinsight.integrations._worker import WorkerError

_BUILTINS = (ValueError, TypeError, RuntimeError, KeyError)


def _defined_classes() -> dict[str, type]:
    return {
        name: obj
        for name, obj in vars(exceptions).items()
        if inspect.isclass(obj) and obj.__module__ == exceptions.__name__
    }


def test_all_lists_every_class_of_the_module():
    assert sorted(exceptions.__all__) == exceptions.__all__
    assert set(exceptions.__all__) == set(_defined_classes())


@pytest.mark.parametrize("name", exceptions.__all__)
def test_every_public_exception_is_an_hpinsight_error_and_a_builtin(name):
    cls = getattr(exceptions, name)
    if issubclass(cls, Warning):
        assert issubclass(cls, HPInsightWarning)
        return
    assert issubclass(cls, HPInsightError)
    if cls is not HPInsightError:
        assert issubclass(cls, _BUILTINS), f"{name} has no builtin base"


@pytest.mark.parametrize(
    ("call", "builtin", "cls", "match"),
    [
        pytest.param(
            lambda: _validation.check_int(1.5, "n_trees", "fanova"),
            TypeError, InvalidArgumentTypeError, "'n_trees' parameter of fanova must be an int",
            id="int-type",
        ),
        pytest.param(
            lambda: _validation.check_int(True, "n_trees", "fanova"),
            TypeError, InvalidArgumentTypeError, "must be an int. Got True", id="int-bool",
        ),
        pytest.param(
            lambda: _validation.check_int(0, "n_trees", "fanova", minimum=1),
            ValueError, InvalidArgumentError, "must be >= 1. Got 0 instead", id="int-minimum",
        ),
        pytest.param(
            lambda: _validation.check_seed(-1, "fanova"),
            ValueError, InvalidArgumentError, "'seed' parameter of fanova must be >= 0", id="seed",
        ),
        pytest.param(
            lambda: _validation.check_seed(np.random.default_rng(0), "fanova"),
            TypeError, InvalidArgumentTypeError, "'seed' parameter of fanova must be an int",
            id="seed-generator",
        ),
        pytest.param(
            lambda: _validation.check_choice("gpp", "surrogate", "report", ("gp", "forest")),
            ValueError, InvalidArgumentError, r"must be one of \['gp', 'forest'\]", id="choice",
        ),
        pytest.param(
            lambda: _validation.check_real(float("nan"), "cap_quantile", "fanova", low=0.0, high=1.0),
            TypeError, InvalidArgumentTypeError, "must be a finite number", id="real-nan",
        ),
        pytest.param(
            lambda: _validation.check_real(0.0, "cap_quantile", "fanova", low=0.0, high=1.0, low_open=True),
            ValueError, InvalidArgumentError, r"must be in \(0.0, 1.0\]", id="real-range",
        ),
        pytest.param(
            lambda: _validation.as_objective([1.0, 2.0], 3, "fanova"),
            ValueError, InvalidDataError, "3 configurations but 2 objective values", id="objective",
        ),
    ],
)
def test_validation_errors_are_hpinsight_errors_and_builtins(call, builtin, cls, match):
    with pytest.raises(builtin, match=match) as info:
        call()
    assert isinstance(info.value, HPInsightError)
    assert isinstance(info.value, cls)


def test_argument_errors_name_the_argument_and_survive_pickling():
    # errors of a refit in the worker process come back pickled
    with pytest.raises(InvalidArgumentError) as info:
        _validation.check_int(0, "top", "report", minimum=1)
    assert (info.value.argument, info.value.function) == ("top", "report")
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is InvalidArgumentError
    assert (str(copy), copy.argument, copy.function) == (str(info.value), "top", "report")


def test_argument_errors_are_caught_by_except_clauses_for_their_builtin():
    try:
        _validation.check_int("3", "n", "f")
    except TypeError as exc:
        caught: Exception = exc
    assert isinstance(caught, hp.exceptions.HPInsightError)


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        pytest.param(SmacModelUnavailable, RuntimeError, id="smac-model-unavailable"),
        pytest.param(WorkerError, RuntimeError, id="worker-error"),
    ],
)
def test_integration_errors_are_hpinsight_errors(cls, builtin):
    assert issubclass(cls, HPInsightError)
    assert issubclass(cls, builtin)
    with pytest.raises(HPInsightError, match="why"):
        raise cls("why")


def test_the_public_smac_integration_exports_the_same_error():
    pytest.importorskip("smac")
    from hpinsight.integrations import smac

    assert smac.SmacModelUnavailable is SmacModelUnavailable
    assert issubclass(smac.SmacModelUnavailable, HPInsightError)


def test_no_bare_builtin_is_raised_on_purpose() -> None:
    # every error the library raises itself is an HPInsightError (the CLI reports its own)
    import pathlib
    import re

    root = pathlib.Path(hp.__file__).parent
    bare = re.compile(r"raise (ValueError|TypeError|KeyError)\(")
    found = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py") if "cli" not in p.parts
             for i, line in enumerate(p.read_text().splitlines(), 1) if bare.search(line)]
    assert found == []


def test_a_missing_name_is_a_key_error_with_a_readable_message() -> None:
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    with pytest.raises(KeyError) as info:
        space.index("nope")
    assert isinstance(info.value, exceptions.UnknownNameError)
    assert str(info.value).startswith("'nope'") or "nope" in str(info.value)
    assert not str(info.value).startswith('"')  # the message itself, not its repr
