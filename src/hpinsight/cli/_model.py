"""The model options every subcommand shares: ``--surrogate`` and ``--n-trees`` build the
same :class:`~hpinsight.GP` or :class:`~hpinsight.Forest` object the library takes."""

from __future__ import annotations

import argparse
from typing import Any

from ..surrogates import GP, Forest

__all__ = ["add_model_arguments", "model_from", "model_misuse"]


def add_model_arguments(p: Any) -> None:
    """Add ``--surrogate`` and ``--n-trees`` to the parser ``p``."""
    p.add_argument("--surrogate", choices=("gp", "forest"), default="gp",
                   help="model decomposed: Gaussian process (gp, hp.GP()) or random forest "
                        "(forest, hp.Forest(n_trees=N))")
    p.add_argument("--n-trees", type=int, default=None,
                   help=f"trees per forest ({Forest().n_trees}), with --surrogate forest")


def model_misuse(args: argparse.Namespace) -> str | None:
    """What is wrong with the parsed model options, or None: ``--n-trees`` without
    ``--surrogate forest`` would be dropped without a word."""
    if getattr(args, "n_trees", None) is not None and getattr(args, "surrogate", "gp") != "forest":
        return (f"--n-trees {args.n_trees} sets the trees of a forest, but the model is the "
                "Gaussian process (--surrogate gp, the default), which has none: add "
                "--surrogate forest, or drop --n-trees.")
    return None


def below_minimum(args: argparse.Namespace, **minimum: int) -> str | None:
    """A message naming each argument below its minimum, with the value given, or None
    (one message named --top, --n-trees and --seed whichever was wrong)."""
    bad = [f"--{name.replace('_', '-')} must be at least {low} (got {value})"
           for name, low in minimum.items()
           if (value := getattr(args, name)) is not None and value < low]
    return "; ".join(bad) + "." if bad else None


def model_from(args: argparse.Namespace, *, n_jobs: int | None = None) -> GP | Forest:
    """The model object the parsed options ask for (``n_jobs``: a forest's cores)."""
    if args.surrogate == "forest":
        trees = {} if args.n_trees is None else {"n_trees": args.n_trees}  # else Forest's default
        return Forest(**trees, n_jobs=n_jobs)
    return GP()
