"""Public exception and warning classes.

Every error raised on purpose by hpinsight derives from :class:`HPInsightError`
*and* from the matching builtin (``ValueError``, ``TypeError`` or ``RuntimeError``),
so ordinary ``except ValueError`` clauses keep working. Errors that only an
optional integration raises (``SmacModelUnavailable``, ``WorkerError``) live next
to that integration and derive from :class:`HPInsightError` as well.
"""

from __future__ import annotations

__all__ = [
    "ChangedDistributionWarning",
    "ConstantObjectiveWarning",
    "ExcludedTrialsWarning",
    "FewTrialsWarning",
    "HPInsightError",
    "HPInsightWarning",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "InvalidDataError",
    "InvalidSpaceError",
    "UnknownNameError",
]


class HPInsightError(Exception):
    """Base class of all errors raised by hpinsight."""


class InvalidArgumentError(HPInsightError, ValueError):
    """An argument of an hpinsight function has a value outside what it accepts.

    For example a negative ``seed`` or an unknown option string. The message
    names the argument, the function, what is accepted and what was given.

    Attributes
    ----------
    argument : str or None
        The name of the offending argument, when there is one.
    function : str or None
        The function it was passed to, when known.

    Examples
    --------
    >>> from hpinsight.exceptions import HPInsightError, InvalidArgumentError
    >>> err = InvalidArgumentError("bad seed", argument="seed", function="fanova")
    >>> isinstance(err, HPInsightError), isinstance(err, ValueError), err.argument
    (True, True, 'seed')
    """

    def __init__(
        self, message: str, *, argument: str | None = None, function: str | None = None
    ) -> None:
        super().__init__(message)
        self.argument = argument
        self.function = function


class InvalidArgumentTypeError(HPInsightError, TypeError):
    """An argument of an hpinsight function has the wrong type.

    For example a float where an int is required. The message names the
    argument, the function, the expected type and what was given.

    Attributes
    ----------
    argument : str or None
        The name of the offending argument, when there is one.
    function : str or None
        The function it was passed to, when known.

    Examples
    --------
    >>> from hpinsight.exceptions import HPInsightError, InvalidArgumentTypeError
    >>> err = InvalidArgumentTypeError("seed must be an int", argument="seed")
    >>> isinstance(err, HPInsightError), isinstance(err, TypeError)
    (True, True)
    """

    def __init__(
        self, message: str, *, argument: str | None = None, function: str | None = None
    ) -> None:
        super().__init__(message)
        self.argument = argument
        self.function = function


class InvalidSpaceError(HPInsightError, ValueError):
    """A search space, parameter or condition is ill-defined.

    Attributes
    ----------
    name : str or None
        The parameter the problem concerns, when there is one.
    """

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class InvalidDataError(HPInsightError, ValueError):
    """Configurations or objective values do not fit the search space or each other.

    Attributes
    ----------
    name : str or None
        The parameter the problem concerns, when there is one.
    row : int or None
        The position of the offending configuration, when there is one.
    """

    def __init__(self, message: str, *, name: str | None = None, row: int | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.row = row


class UnknownNameError(HPInsightError, KeyError):
    """A name that a result or space does not hold (a parameter, study or effect).

    A :class:`HPInsightError` and a ``KeyError``, so lookups keep their usual
    ``except KeyError``.
    """

    def __str__(self) -> str:  # KeyError would show the message's repr
        return str(self.args[0]) if self.args else ""


class HPInsightWarning(UserWarning):
    """Base class of all warnings issued by hpinsight."""


class ExcludedTrialsWarning(HPInsightWarning):
    """Some trials were left out of an analysis; the message says how many and why."""


class ConstantObjectiveWarning(HPInsightWarning):
    """The objective (or the fitted model) does not vary, so every importance is zero."""


class FewTrialsWarning(HPInsightWarning):
    """The trials cannot carry what was asked of them: too few for importances to be more
    than a guess, through an interface that has no room to say so (Optuna's evaluators
    give numbers only), or trials that all share one configuration (nothing was varied)."""


class ChangedDistributionWarning(HPInsightWarning):
    """A parameter's distribution changed during a study; the union of its ranges is analysed."""
