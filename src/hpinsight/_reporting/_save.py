"""Write a report to a file: HTML, or JSON by the file's suffix (one way for every kind
of report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["save"]


def save(report: Any, path: str | Path) -> Path:
    """Write ``report`` (anything with ``to_dict()`` and ``html()``): JSON when ``path``
    ends in ``.json``, else the HTML page. Creates the folder; returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix.lower() == ".json":
        target.write_text(json.dumps(report.to_dict(), indent=2, allow_nan=False))
    else:
        target.write_text(report.html(), encoding="utf-8")
    return target
