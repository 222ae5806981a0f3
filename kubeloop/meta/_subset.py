"""The conservative subset check ("does everything A selects also match B?") for both selector kinds.

``True`` is a proof, ``False`` may just mean "could not prove it". The shared cache relies on
this to serve a narrower scope from a broader informer, so a false ``True`` would be a bug
and a false ``False`` only costs one more watch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from kubeloop.meta._requirement import (
    DOES_NOT_EXIST,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    Requirement,
    parse_int64,
)

if TYPE_CHECKING:
    from kubeloop.meta._fields import FieldRequirement

__all__ = ["fields_imply", "labels_imply"]


class _KeyDomain:
    """The label states one key may take under a conjunction of requirements.

    A state is "absent" or a present string value. Present values are either a finite set
    (``finite``) or "every string except ``excluded`` that passes the numeric bounds".
    """

    __slots__ = ("absent", "excluded", "finite", "hi", "lo", "reqs")

    def __init__(self, reqs: list[Requirement]) -> None:
        self.reqs = reqs
        self.absent = all(r.operator in (NOT_EQUALS, NOT_IN, DOES_NOT_EXIST) for r in reqs)
        self.finite: set[str] | None = None
        self.excluded: set[str] = set()
        self.lo: int | None = None  # exclusive lower bound (from gt)
        self.hi: int | None = None  # exclusive upper bound (from lt)
        present_possible = True
        for r in reqs:
            if r.operator in (EQUALS, IN):
                s = set(r.values)
                self.finite = s if self.finite is None else self.finite & s
            elif r.operator in (NOT_EQUALS, NOT_IN):
                self.excluded |= set(r.values)
            elif r.operator == DOES_NOT_EXIST:
                present_possible = False
            elif r.operator in (GREATER_THAN, LESS_THAN):
                n = parse_int64(r.values[0]) if r.values else None
                if n is None:
                    present_possible = False
                elif r.operator == GREATER_THAN:
                    self.lo = n if self.lo is None else max(self.lo, n)
                else:
                    self.hi = n if self.hi is None else min(self.hi, n)
        if not present_possible:
            self.finite = set()
        elif self.finite is not None:
            # exact: keep only the finite values that satisfy every requirement on the key
            self.finite = {v for v in self.finite if all(r.matches({r.key: v}) for r in reqs)}

    def empty(self) -> bool:
        return not self.absent and self.finite is not None and not self.finite

    def within(self, r: Requirement) -> bool:
        """True only if every state allowed here satisfies ``r`` (conservative)."""
        if self.absent and not r.matches({}):
            return False
        if self.finite is not None:
            return all(r.matches({r.key: v}) for v in self.finite)
        numeric = self.lo is not None or self.hi is not None
        op = r.operator
        if op == EXISTS:
            return True  # present values exist; absent handled above
        if op == DOES_NOT_EXIST:
            return False
        if op in (NOT_EQUALS, NOT_IN):
            return all(
                v in self.excluded or (numeric and not self._numeric_ok(v)) for v in r.values
            )
        if op == GREATER_THAN and self.lo is not None and r.values:
            n = parse_int64(r.values[0])
            return n is not None and self.lo >= n
        if op == LESS_THAN and self.hi is not None and r.values:
            n = parse_int64(r.values[0])
            return n is not None and self.hi <= n
        return False

    def _numeric_ok(self, v: str) -> bool:
        n = parse_int64(v)
        if n is None:
            return False
        return (self.lo is None or n > self.lo) and (self.hi is None or n < self.hi)


# --------------------------------------------------------------------------------------------


def labels_imply(mine: Mapping[str, list[Requirement]], broader: Iterable[Requirement]) -> bool:
    """Whether every label set satisfying ``mine`` (requirements by key) satisfies ``broader``."""
    domains = {k: _KeyDomain(rs) for k, rs in mine.items()}
    if any(d.empty() for d in domains.values()):
        return True  # matches nothing at all
    for r in broader:
        d = domains.get(r.key)
        if d is None:
            # the key is unconstrained here: absent and any value are possible
            return False
        if not d.within(r):
            return False
    return True


def fields_imply(mine: Iterable[FieldRequirement], broader: Iterable[FieldRequirement]) -> bool:
    """Whether every object matching the field terms ``mine`` matches ``broader``."""
    pinned: dict[str, set[str]] = {}
    excluded: dict[str, set[str]] = {}
    for r in mine:
        (pinned if r.operator == "=" else excluded).setdefault(r.field, set()).add(r.value)
    for f, vals in pinned.items():
        if len(vals) > 1 or vals & excluded.get(f, set()):
            return True  # contradictory: matches nothing
    for r in broader:
        p = pinned.get(r.field)
        if r.operator == "=":
            if p is None or r.value not in p:
                return False
        elif p is not None:
            if r.value in p:
                return False
        elif r.value not in excluded.get(r.field, set()):
            return False
    return True
