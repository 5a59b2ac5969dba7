"""Reports: one object with every analysis of a study, rendered as HTML or JSON."""

from __future__ import annotations

from ._build import Report, report

__all__ = ["Report", "report"]
