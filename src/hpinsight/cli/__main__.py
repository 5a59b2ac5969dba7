"""``python -m hpinsight.cli``: the same as the ``hpinsight`` command."""

from __future__ import annotations

if __name__ == "__main__":
    from . import main

    raise SystemExit(main())
