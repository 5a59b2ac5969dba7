"""What the optimizer was allowed to sample: restrictions, decisions, forbidden clauses.

An analysis reads trials; how they were sampled changes what the trials can say. A
parameter held fixed in most trials has its effect estimated from the few in which it
varied, and advice to fix it is moot when it already is. Adapters fill a
:class:`SamplingRecord` from what the optimizer stored; the computation ignores it, and
reports show it next to the numbers it qualifies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .exceptions import InvalidArgumentTypeError

__all__ = ["SamplingRecord", "action_label"]

_ANY = object()  # SamplingRecord.linked_to without a value


def _clause(group: Any) -> Mapping[str, tuple[Any, ...] | None]:
    """One entry of :attr:`SamplingRecord.linked`, checked: each name with a tuple of
    values or None (a plain sequence of names: None for each)."""
    if not isinstance(group, Mapping):
        if isinstance(group, str) or not isinstance(group, Iterable):
            raise InvalidArgumentTypeError(
                "Each entry of the 'linked' parameter of SamplingRecord must be the names "
                "of one forbidden clause's parameters, or a mapping of each to the values at "
                f"which the clause can fire, e.g. {{'act': ('tanh',), 'opt': None}}. Got "
                f"{group!r} instead.")
        return MappingProxyType(dict.fromkeys(map(str, group)))
    out: dict[str, tuple[Any, ...] | None] = {}
    for name, values in group.items():
        if values is not None and (isinstance(values, str | bytes) or not isinstance(values, Iterable)):
            raise InvalidArgumentTypeError(
                f"In the 'linked' parameter of SamplingRecord, the values of {name!r} must be "
                f"a sequence of values or None (any value). Got {values!r} instead; write "
                f"({values!r},) for that one value.")
        out[str(name)] = None if values is None else tuple(values)
    return MappingProxyType(out)


def action_label(decision: Mapping[str, Any]) -> str:
    """A recorded decision's action as a reader takes it: a restriction that fixes nothing
    and only narrows ranges is stored as ``"fix"`` (it is one) but shown as ``"narrow"``
    (the page and ``hpinsight watch`` printed "fix" beside "fixed nothing")."""
    action = str(decision.get("action", "?"))
    if action == "fix" and not decision.get("params") and decision.get("ranges"):
        return "narrow"
    return action


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
    linked : sequence of mapping of str to sequence or None
        For each forbidden clause that reads two or more parameters: each of them, with
        the values at which the clause can rule out values of the others (``None``: at
        any value, as for a relation between two parameters). Fixing a parameter at such
        a value costs what the analyses do not see (they integrate over forbidden
        combinations), so it is not called safe to fix there. A clause given as a plain
        sequence of names counts at any value of each.
    changed : mapping of str to sequence of str
        Parameters whose distribution changed during the study (a range that depends on
        another parameter, or an edited objective), each with its distributions as text.
        The analyses take each over the union of its ranges, combinations the study
        could not suggest included.
    budgets : mapping of float to int
        For a multi-fidelity run whose configurations are valued at different budgets
        (each at its highest): how many at each. The values then mix budgets, and an
        effect can be the budget's rather than the parameter's.
    explored : mapping of int to tuple of str
        Analysed trials that explored while a restriction held (hpinsight's
        ``ShrinkingSampler`` spreads the restricted parameters over their whole ranges
        in one trial of ten), each with the parameters it spread: the evidence a fixed
        parameter is released on when such a trial does better than the model expects
        (:func:`hpinsight.suggest_subspace`).
    unheld : tuple of str
        Parameters the restriction fixes that the latest trial sampled under it (and not
        exploring) ran at another value: the fixed value is outside the distribution the
        objective asks for now (an edited range), so the sampler lets them vary, and they
        are judged as free parameters, not as fixed.

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
    linked: tuple[Mapping[str, tuple[Any, ...] | None], ...] = ()
    budgets: Mapping[float, int] = field(default_factory=dict)
    explored: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    unheld: tuple[str, ...] = ()

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
        object.__setattr__(self, "linked", tuple(map(_clause, self.linked)))
        object.__setattr__(self, "budgets", MappingProxyType(
            {float(b): int(n) for b, n in sorted(dict(self.budgets).items())}))
        object.__setattr__(self, "changed", MappingProxyType(
            {str(k): tuple(str(t) for t in v) for k, v in dict(self.changed).items()}))
        object.__setattr__(self, "unheld", tuple(str(n) for n in self.unheld))
        object.__setattr__(self, "explored", MappingProxyType(
            {int(k): tuple(str(n) for n in v) for k, v in dict(self.explored).items()}))

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
                             tuple(dict(group) for group in self.linked), dict(self.budgets),
                             dict(self.explored), self.unheld))

    @property
    def is_empty(self) -> bool:
        """True when nothing beyond the search space shaped the sampling."""
        return not (self.fixed or self.ranges or self.decisions or self.n_held
                    or self.n_narrowed or self.forbidden or self.changed or self.budgets
                    or self.explored or self.unheld)

    def linked_to(self, name: str, value: Any = _ANY) -> tuple[str, ...]:
        """The parameters whose values a forbidden clause can rule out once ``name`` is
        fixed at ``value`` (``linked``; without a value, at any)."""
        def fires(at: tuple[Any, ...] | None) -> bool:
            return at is None or value is _ANY or any(value == v for v in at)

        return tuple(sorted({n for group in self.linked if name in group and fires(group[name])
                             for n in group} - {name}))

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
            "linked": [{n: None if v is None else list(v) for n, v in group.items()}
                       for group in self.linked],
            "budgets": [[b, n] for b, n in self.budgets.items()],
            "explored": {str(k): list(v) for k, v in self.explored.items()},
            "unheld": list(self.unheld),
        }
