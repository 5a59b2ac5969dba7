"""What the optimizer was allowed to sample: restrictions, decisions, forbidden clauses.

An analysis reads trials; how they were sampled changes what the trials can say. A
parameter held fixed in most trials has its effect estimated from the few in which it
varied, and advice to fix it is moot when it already is. Adapters fill a
:class:`SamplingRecord` from what the optimizer stored; the computation ignores it, and
reports show it next to the numbers it qualifies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["SamplingRecord"]


@dataclass(frozen=True, slots=True)
class SamplingRecord:
    """How a study's trials were sampled, beyond the search space itself.

    Parameters
    ----------
    fixed : mapping of str to value
        Parameters the restriction in force holds fixed, and their values.
    ranges : mapping of str to (float, float)
        Numerical parameters the restriction in force samples within ``(low, high)``.
    decisions : sequence of mapping
        Every recorded restriction decision, oldest first (``action``, ``params``,
        ``why``, ``after_trial``, ``at``).
    n_held : mapping of str to int, optional
        Per parameter, how many of the analysed trials were sampled with it held at
        a fixed value by a restriction. None when the trials do not record it (a
        sampler that is not hpinsight's ``ShrinkingSampler`` ignores a restriction and
        leaves no record); the decisions then do not call a parameter fixed.
    n_narrowed : mapping of str to int, optional
        Per parameter, how many analysed trials were sampled within a narrowed range.
    forbidden : sequence of str
        Forbidden clauses of the space, as text (the analyses integrate over the whole
        product space, forbidden combinations included).
    linked : sequence of sequence of str
        For each forbidden clause that reads two or more parameters, their names: fixing
        one of them can rule out values of the others, a cost the analyses do not see,
        so none of them is called safe to fix.
    changed : mapping of str to sequence of str
        Parameters whose distribution changed during the study (a range that depends on
        another parameter, or an edited objective), each with its distributions as text.
        The analyses take each over the union of its ranges, combinations the study
        could not suggest included.

    Examples
    --------
    >>> from hpinsight import SamplingRecord
    >>> record = SamplingRecord(fixed={"seed": 0}, n_held={"seed": 30})
    >>> record.n_held["seed"], record.is_empty
    (30, False)
    """

    fixed: Mapping[str, Any] = field(default_factory=dict)
    ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    decisions: tuple[Mapping[str, Any], ...] = ()
    n_held: Mapping[str, int] | None = None
    n_narrowed: Mapping[str, int] | None = None
    forbidden: tuple[str, ...] = ()
    changed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    linked: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fixed", MappingProxyType(dict(self.fixed)))
        object.__setattr__(self, "ranges", MappingProxyType(
            {str(k): (float(lo), float(hi)) for k, (lo, hi) in dict(self.ranges).items()}))
        object.__setattr__(self, "decisions",
                           tuple(MappingProxyType(dict(d)) for d in self.decisions))
        for name in ("n_held", "n_narrowed"):
            counts = getattr(self, name)
            if counts is not None:
                object.__setattr__(self, name, MappingProxyType(
                    {str(k): int(v) for k, v in dict(counts).items() if int(v)}))
        object.__setattr__(self, "forbidden", tuple(str(c) for c in self.forbidden))
        object.__setattr__(self, "linked", tuple(tuple(str(n) for n in group)
                                                 for group in self.linked))
        object.__setattr__(self, "changed", MappingProxyType(
            {str(k): tuple(str(t) for t in v) for k, v in dict(self.changed).items()}))

    def __repr__(self) -> str:
        held = None if self.n_held is None else dict(self.n_held)
        return (f"SamplingRecord(fixed={dict(self.fixed)}, ranges={dict(self.ranges)}, "
                f"n_decisions={len(self.decisions)}, n_held={held}, "
                f"n_forbidden={len(self.forbidden)})")

    def __reduce__(self) -> tuple[Any, ...]:
        # read-only mapping views do not pickle; rebuild through the constructor
        def plain(m: Mapping[str, Any] | None) -> dict[str, Any] | None:
            return None if m is None else dict(m)

        return (type(self), (dict(self.fixed), dict(self.ranges),
                             tuple(dict(d) for d in self.decisions), plain(self.n_held),
                             plain(self.n_narrowed), self.forbidden, dict(self.changed),
                             self.linked))

    @property
    def is_empty(self) -> bool:
        """True when nothing beyond the search space shaped the sampling."""
        return not (self.fixed or self.ranges or self.decisions or self.n_held
                    or self.n_narrowed or self.forbidden or self.changed)

    def linked_to(self, name: str) -> tuple[str, ...]:
        """The parameters ``name`` shares a forbidden clause with (``linked``)."""
        return tuple(sorted({n for group in self.linked if name in group for n in group} - {name}))

    def held(self, name: str) -> int:
        """Analysed trials sampled with ``name`` held fixed (0 when not recorded)."""
        return 0 if self.n_held is None else self.n_held.get(name, 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation."""
        return {
            "fixed": dict(self.fixed),
            "ranges": {k: list(v) for k, v in self.ranges.items()},
            "decisions": [dict(d) for d in self.decisions],
            "n_held": None if self.n_held is None else dict(self.n_held),
            "n_narrowed": None if self.n_narrowed is None else dict(self.n_narrowed),
            "forbidden": list(self.forbidden),
            "changed": {k: list(v) for k, v in self.changed.items()},
            "linked": [list(group) for group in self.linked],
        }
