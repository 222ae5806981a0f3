"""What label and field selectors share: a canonical, hashable conjunction of terms.

Both kinds match, compare, hash, print and test for emptiness the same way; only parsing,
the term type and the subset proof differ, and those stay in :mod:`._labels`/:mod:`._fields`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Generic, Protocol, Self, TypeVar

__all__ = ["Selector"]


class _Term(Protocol):
    def matches(self, values: Mapping[str, str], /) -> bool: ...


TermT = TypeVar("TermT", bound=_Term)


class Selector(Generic[TermT]):
    """A conjunction of terms; the empty selector matches everything."""

    __slots__ = ("requirements",)

    requirements: tuple[TermT, ...]

    def __init__(self, requirements: Iterable[TermT] = ()) -> None:
        self.requirements = tuple(requirements)

    @classmethod
    def parse(cls, text: str | None) -> Self:
        """Parse the query syntax; raises :class:`SelectorError` with the server's message."""
        raise NotImplementedError

    @classmethod
    def from_mapping(cls, values: Mapping[str, str], /) -> Self:
        """The selector requiring each key to have exactly its value."""
        raise NotImplementedError

    def _implies(self, broader: Self) -> bool:
        raise NotImplementedError

    def matches(self, values: Mapping[str, str]) -> bool:
        """Whether an object with these labels (or selectable fields) is selected."""
        for r in self.requirements:
            if not r.matches(values):
                return False
        return True

    @property
    def empty(self) -> bool:
        """True for the selector that matches everything."""
        return not self.requirements

    def implies(self, broader: Self | str) -> bool:
        """True only if everything this selector matches is matched by ``broader``.

        Conservative: ``False`` may mean "not provable". Never a false ``True``.
        """
        return self._implies(type(self).parse(broader) if isinstance(broader, str) else broader)

    def is_subset_of(self, broader: Self | str) -> bool:
        """The same as :meth:`implies`."""
        return self.implies(broader)

    def __and__(self, other: Self) -> Self:
        """The conjunction: what both select."""
        if not other.requirements:
            return self
        if not self.requirements:
            return other
        return type(self)([*self.requirements, *other.requirements])

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)
