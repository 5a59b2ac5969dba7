"""Reports: one object with every analysis of a study, rendered as HTML or JSON."""

from __future__ import annotations

from ._build import Report, report
from ._multi import MultiObjectiveReport

__all__ = ["MultiObjectiveReport", "Report", "report"]
