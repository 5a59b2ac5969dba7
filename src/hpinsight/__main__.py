"""``python -m hpinsight``: the same as the ``hpinsight`` command."""

from __future__ import annotations

if __name__ == "__main__":
    from .cli import main

    raise SystemExit(main())
