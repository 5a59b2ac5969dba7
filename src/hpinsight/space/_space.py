"""Search spaces: typed hyperparameters, activity conditions and validation.

A :class:`SearchSpace` is an ordered collection of :class:`Float`, :class:`Int`
and :class:`Categorical` hyperparameters plus optional :class:`Condition` objects
that make a parameter active only when a parent takes given values.

The space also fixes the *measure* every analysis integrates over (see
``_encoding``): uniform in the encoded coordinate of each parameter (the log of
the value for ``log=True``), uniform over the values of an integer or stepped
parameter (log-uniform mass for logarithmic integers, as Optuna and SMAC sample
them), and uniform over the choices of a categorical one. Parameters are
independent under that measure, which is what makes the functional ANOVA
decomposition well defined.

Nothing here imports an optimizer; converters to and from Optuna and
ConfigSpace live in ``adapters``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from ..exceptions import InvalidSpaceError, UnknownNameError
from ._encoding import active_mask, decode_matrix, encode_configs, encode_value, sample_encoded
from ._params import (
    AnyOf,
    Categorical,
    Condition,
    ConditionLike,
    Float,
    Int,
    Parameter,
    is_real,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["AnyOf", "Categorical", "Condition", "Float", "Int", "Parameter", "SearchSpace"]


class SearchSpace:
    """An ordered set of hyperparameters, with optional activity conditions.

    Parameters
    ----------
    params : sequence of Float, Int or Categorical
        The hyperparameters; their order is the column order of :meth:`encode`.
    conditions : sequence of Condition or AnyOf, optional
        Activity rules. A parameter may have several (all must hold).

    Notes
    -----
    *Encoding.* :meth:`encode` maps configurations to a float matrix with one
    column per parameter: the value for linear parameters, its natural log
    for ``log=True``, and the choice index for categoricals. Inactive or
    missing parameters are ``NaN``.

    *Measure.* Analyses integrate over the product of per-parameter
    measures described in the module docstring; :meth:`sample` draws from
    exactly that measure (with inactive children removed).

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([
    ...     hp.Float("lr", 1e-4, 1e-1, log=True),
    ...     hp.Int("layers", 1, 4),
    ...     hp.Categorical("optimizer", ["adam", "sgd"]),
    ...     hp.Float("momentum", 0.0, 0.99),
    ... ], conditions=[hp.Condition("momentum", "optimizer", values=["sgd"])])
    >>> space.names
    ('lr', 'layers', 'optimizer', 'momentum')
    >>> space.encode([{"lr": 0.01, "layers": 2, "optimizer": "adam"}]).round(3)
    array([[-4.605,  2.   ,  0.   ,    nan]])
    """

    __slots__ = ("_by_name", "_children", "_conditions", "_order", "_params")

    def __init__(
        self,
        params: Sequence[Parameter],
        conditions: Sequence[ConditionLike] = (),
    ) -> None:
        if isinstance(params, Mapping) or not isinstance(params, Iterable):
            raise InvalidSpaceError(
                "SearchSpace expects a sequence of Float/Int/Categorical parameters. "
                f"Got {type(params).__name__} instead."
            )
        params = tuple(params)
        if not params:
            raise InvalidSpaceError("A search space needs at least one parameter.")
        by_name: dict[str, int] = {}
        for i, p in enumerate(params):
            if not isinstance(p, Float | Int | Categorical):
                raise InvalidSpaceError(
                    "Each parameter must be an hpinsight Float, Int or Categorical. "
                    f"Got {p!r} at position {i}."
                )
            if p.name in by_name:
                raise InvalidSpaceError(
                    f"The parameter name {p.name!r} is used twice; names must be unique.",
                    name=p.name,
                )
            by_name[p.name] = i
        grouped: dict[str, list[ConditionLike]] = {}
        for cond in conditions:
            if not isinstance(cond, Condition | AnyOf):
                raise InvalidSpaceError(
                    f"Conditions must be Condition or AnyOf objects. Got {cond!r}."
                )
            parts = cond.conditions if isinstance(cond, AnyOf) else (cond,)
            for part in parts:
                for role, name in (("child", part.child), ("parent", part.parent)):
                    if name not in by_name:
                        raise InvalidSpaceError(
                            f"A condition names the {role} {name!r}, which is not in the "
                            f"space {list(by_name)!r}.",
                            name=name,
                        )
                _check_condition_fits(part, params[by_name[part.parent]])
            grouped.setdefault(cond.child, []).append(cond)
        self._params = params
        self._by_name = by_name
        self._conditions = {k: tuple(v) for k, v in grouped.items()}
        self._children = tuple(grouped)
        self._order = self._topological_order()

    # -- structure -----------------------------------------------------------------
    @property
    def params(self) -> tuple[Parameter, ...]:
        """The parameters, in column order."""
        return self._params

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names, in column order."""
        return tuple(p.name for p in self._params)

    @property
    def conditions(self) -> tuple[ConditionLike, ...]:
        """All activity conditions."""
        return tuple(c for group in self._conditions.values() for c in group)

    @property
    def conditional_names(self) -> tuple[str, ...]:
        """Names of parameters that have at least one condition, in column order."""
        return tuple(n for n in self.names if n in self._conditions)

    @property
    def defaults(self) -> dict[str, Any]:
        """Defaults of the parameters that declare one."""
        return {p.name: p.default for p in self._params if p.default is not None}

    def conditions_of(self, name: str) -> tuple[ConditionLike, ...]:
        """Return the conditions that activate ``name`` (empty if unconditional)."""
        self.index(name)
        return self._conditions.get(name, ())

    def index(self, name: str) -> int:
        """Return the column of parameter ``name``.

        Raises
        ------
        KeyError
            With the valid names, if ``name`` is not in the space.
        """
        try:
            return self._by_name[name]
        except (KeyError, TypeError):
            given: Any = name  # typed str, but a list of names is a common slip
            several = (isinstance(given, (list, tuple)) and bool(given)
                       and all(isinstance(n, str) and n in self._by_name for n in given))
            raise UnknownNameError(
                f"{name!r} is not a parameter of this search space; valid names are "
                f"{list(self._by_name)!r}."
                + (" This names one parameter: to name several, pass each where the call "
                   f"takes several, e.g. result.importance({', '.join(map(repr, given))})."
                   if several else "")
            ) from None

    def __getitem__(self, name: str) -> Parameter:
        return self._params[self.index(name)]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchSpace):
            return NotImplemented
        return self._params == other._params and self._conditions == other._conditions

    def __hash__(self) -> int:
        return hash((self._params, tuple(sorted(self._conditions.items()))))

    def __repr__(self) -> str:
        kinds = ", ".join(f"{p.name}:{type(p).__name__}" for p in self._params)
        extra = f", {len(self.conditions)} conditions" if self._conditions else ""
        return f"SearchSpace([{kinds}]{extra})"

    def _topological_order(self) -> tuple[int, ...]:
        # Parents before children, so activity can be resolved in one pass.
        state: dict[str, int] = {}
        order: list[int] = []

        def visit(name: str, path: tuple[str, ...]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = " -> ".join((*path[path.index(name) :], name))
                raise InvalidSpaceError(f"The conditions form a cycle: {cycle}.", name=name)
            state[name] = 1
            for cond in self._conditions.get(name, ()):
                for parent in cond.parents:
                    visit(parent, (*path, name))
            state[name] = 2
            order.append(self._by_name[name])

        for p in self._params:
            visit(p.name, ())
        return tuple(order)

    # -- encoding, activity, sampling (implemented in _encoding) ---------------------
    def encode(self, configs: Any) -> NDArray[np.float64]:
        """Encode configurations as a float matrix.

        Parameters
        ----------
        configs : sequence of mapping or pandas.DataFrame
            Configurations in native units, one mapping (or row) each. A
            parameter that is missing (or ``None``/``NaN`` in a DataFrame) is
            inactive.

        Returns
        -------
        ndarray of shape (n_configs, n_params)
            Encoded values (see the class notes); ``NaN`` marks inactive entries.

        Raises
        ------
        InvalidDataError
            On unknown parameter names, values outside the space, or a
            parameter missing although its conditions make it active.
        """
        return encode_configs(self, configs)

    def decode(self, X: Any) -> list[dict[str, Any]]:
        """Turn an encoded matrix back into configurations in native units.

        Integer parameters are rounded to their nearest valid value and
        categoricals to the nearest choice index; ``NaN`` entries are left out
        of the returned dictionaries.

        Parameters
        ----------
        X : array-like of shape (n_configs, n_params)

        Returns
        -------
        list of dict
        """
        return decode_matrix(self, X)

    def active_mask(self, X: Any) -> NDArray[np.bool_]:
        """Which entries of an encoded matrix are active under the conditions.

        Parameters
        ----------
        X : array-like of shape (n_configs, n_params)
            Encoded values; only parent columns are read.

        Returns
        -------
        ndarray of bool, shape (n_configs, n_params)
        """
        return active_mask(self, np.asarray(X, dtype=float))

    @property
    def columns_parents_first(self) -> tuple[int, ...]:
        """Column indices, every parent before its children."""
        return self._order

    @property
    def names_parents_first(self) -> tuple[str, ...]:
        """Parameter names with every condition's parents before its child."""
        return tuple(self.names[j] for j in self._order)

    def is_active(self, name: str, config: Mapping[str, Any]) -> bool:
        """Whether ``name`` is active given the (possibly partial) native ``config``.

        Only the parents' values are read; a parent missing from ``config`` counts as
        inactive, so its children are too.
        """
        j = self.index(name)
        if name not in self._conditions:
            return True
        row = np.full((1, len(self)), np.nan)
        for k, param in enumerate(self._params):
            if param.name in config and param.name != name:
                row[0, k] = encode_value(param, config[param.name])
        return bool(active_mask(self, row)[0, j])

    def sample(self, n: int, *, seed: int | None = None) -> list[dict[str, Any]]:
        """Draw configurations from the space's own measure.

        Parameters
        ----------
        n : int
            Number of configurations.
        seed : int, optional
            Seed of the random generator; the same seed gives the same draws.

        Returns
        -------
        list of dict
            Configurations in native units; inactive parameters are absent.
        """
        return self.decode(sample_encoded(self, n, seed=seed))

    # -- converters ------------------------------------------------------------------
    @classmethod
    def from_configspace(cls, *args: Any, **kwargs: Any) -> NoReturn:
        """Moved to :func:`hpinsight.adapters.from_configspace` (the types know no optimizer)."""
        raise AttributeError("SearchSpace.from_configspace moved: use hp.adapters.from_configspace(cs)")

    def to_configspace(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Moved to :func:`hpinsight.adapters.to_configspace` (the types know no optimizer)."""
        raise AttributeError("SearchSpace.to_configspace moved: use hp.adapters.to_configspace(space)")

    @classmethod
    def from_optuna(cls, *args: Any, **kwargs: Any) -> NoReturn:
        """Moved to :func:`hpinsight.adapters.space_from_optuna` (the types know no optimizer)."""
        raise AttributeError("SearchSpace.from_optuna moved: use hp.adapters.space_from_optuna(distributions)")


def _check_condition_fits(cond: Condition, parent: Parameter) -> None:
    if cond.values is not None:
        bad = [v for v in cond.values if not parent.contains(v)]
        if bad:
            raise InvalidSpaceError(
                f"The condition on {cond.child!r} lists {bad!r}, which "
                f"{'is' if len(bad) == 1 else 'are'} not valid for parent {parent.name!r}.",
                name=cond.child,
            )
    elif isinstance(parent, Categorical):
        raise InvalidSpaceError(
            f"The condition on {cond.child!r} compares categorical parent {parent.name!r} with "
            "gt/lt; categorical choices have no order, so list the activating 'values' instead.",
            name=cond.child,
        )
    else:
        for label, bound in (("gt", cond.gt), ("lt", cond.lt)):
            if bound is not None and (not is_real(bound) or not math.isfinite(float(bound))):
                raise InvalidSpaceError(
                    f"The {label!r} of the condition on {cond.child!r} must be a finite number. "
                    f"Got {bound!r} instead.",
                    name=cond.child,
                )
