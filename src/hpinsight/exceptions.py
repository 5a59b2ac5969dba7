"""Public exception and warning classes.

Every error raised on purpose by hpinsight derives from :class:`HPInsightError`
*and* from the matching builtin (``ValueError`` or ``TypeError``), so ordinary
``except ValueError`` clauses keep working.
"""

from __future__ import annotations

__all__ = [
    "ChangedDistributionWarning",
    "ConstantObjectiveWarning",
    "ExcludedTrialsWarning",
    "HPInsightError",
    "HPInsightWarning",
    "InvalidDataError",
    "InvalidSpaceError",
]


class HPInsightError(Exception):
    """Base class of all errors raised by hpinsight."""


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


class HPInsightWarning(UserWarning):
    """Base class of all warnings issued by hpinsight."""


class ExcludedTrialsWarning(HPInsightWarning):
    """Some trials were left out of an analysis; the message says how many and why."""


class ConstantObjectiveWarning(HPInsightWarning):
    """The objective (or the fitted model) does not vary, so every importance is zero."""


class ChangedDistributionWarning(HPInsightWarning):
    """A parameter's distribution changed during a study; the union of its ranges is analysed."""
