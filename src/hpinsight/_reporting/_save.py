"""Write a report to a file: HTML, or JSON by the file's suffix (one way for every kind
of report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..exceptions import InvalidArgumentError

__all__ = ["save"]


#: The suffixes ``save`` takes: the page, or JSON.
SUFFIXES = (".html", ".htm", ".json")


def save(report: Any, path: str | Path) -> Path:
    """Write ``report`` (anything with ``to_dict()`` and ``html()``): JSON when ``path``
    ends in ``.json``, the HTML page when it ends in ``.html`` or ``.htm``. Creates the
    folder; returns the path. Any other suffix is an error (``report.json.gz`` or
    ``report.txt`` got the page without a word)."""
    target = Path(path)
    if target.suffix.lower() not in SUFFIXES:
        raise InvalidArgumentError(
            f"Report.save writes a .html page or a .json document, by the path's suffix; got "
            f"{str(path)!r}. Give a path ending in .html or .json.")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix.lower() == ".json":
        target.write_text(json.dumps(report.to_dict(), indent=2, allow_nan=False))
    else:
        target.write_text(report.html(), encoding="utf-8")
    return target
