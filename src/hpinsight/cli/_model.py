"""The model options every subcommand shares: ``--surrogate`` and ``--n-trees`` build the
same :class:`~hpinsight.GP` or :class:`~hpinsight.Forest` object the library takes."""

from __future__ import annotations

import argparse
from typing import Any

from ..surrogates import GP, Forest

__all__ = ["add_model_arguments", "model_from"]


def add_model_arguments(p: Any) -> None:
    """Add ``--surrogate`` and ``--n-trees`` to the parser ``p``."""
    p.add_argument("--surrogate", choices=("gp", "forest"), default="gp",
                   help="model decomposed: Gaussian process (gp, hp.GP()) or random forest "
                        "(forest, hp.Forest(n_trees=N))")
    p.add_argument("--n-trees", type=int, default=64, help="trees per forest (64)")


def model_from(args: argparse.Namespace, *, n_jobs: int | None = None) -> GP | Forest:
    """The model object the parsed options ask for (``n_jobs``: a forest's cores)."""
    if args.surrogate == "forest":
        return Forest(n_trees=args.n_trees, n_jobs=n_jobs)
    return GP()
