"""What a call takes: the ``units`` a caller names, checked and laid out as the rules read them.

A take is one count per budget, in the limiter's order (the budgets are in ``_window``); the
limiter (``_limiter``) reads it once per admission, so the default take is built once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from ._window import MAIN_BUDGET, Budget

Units = int | Mapping[str, int]
"""What a call takes: units of the main budget, or units per budget name."""

ONE: Final = 1
"""The default take. Compared by identity on the hot path (CPython keeps one object for 1, so
the default and any 1 are it); any other value, True and 1.0 included, goes the long way."""


class Takes:
    """The takes of one limiter's calls: :attr:`one` for the default, :meth:`of` for the rest."""

    __slots__ = ("budgets", "name", "one")

    def __init__(self, name: str, budgets: tuple[Budget, ...]) -> None:
        self.name = name
        self.budgets = budgets  # the main budget first
        self.one = (1,) + (0,) * (len(budgets) - 1)
        """One unit of the main budget, nothing of the others: the default take."""

    def of(self, units: Units) -> tuple[int, ...]:
        """What ``units`` takes of each budget; a ``ValueError`` or ``TypeError`` saying what
        is wrong with them."""
        if units == 1 and type(units) is int:
            return self.one  # a 1 that is not ONE (another Python)
        budgets = self.budgets
        takes: dict[str, object]
        if isinstance(units, int) and not isinstance(units, bool):
            takes = {MAIN_BUDGET: units}
        elif isinstance(units, Mapping):
            unknown = sorted(str(key) for key in units if key not in {b.name for b in budgets})
            if unknown:
                raise ValueError(
                    f"RateLimiter {self.name!r} has no budget {', '.join(map(repr, unknown))}; "
                    f"its budgets are {', '.join(repr(b.name) for b in budgets)}"
                )
            takes = {MAIN_BUDGET: 1, **units}
        else:
            raise TypeError(
                f"RateLimiter {self.name!r}: units must be a whole number or a mapping of "
                f"budget names to whole numbers; got a {type(units).__name__}"
            )
        for budget, value in takes.items():
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                raise ValueError(
                    f"RateLimiter {self.name!r}: units={value!r} for budget {budget!r} is "
                    "impossible: use a whole number >= 0"
                )
        return tuple(cast(int, takes.get(b.name, 0)) for b in budgets)
