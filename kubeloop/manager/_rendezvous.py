"""Rendezvous (highest random weight) hashing: which member owns a key, with no I/O.

Every replica computes ``owner(key, members)`` from the same member list and gets the same answer,
with no coordination. Why rendezvous rather than a ring: no virtual nodes to tune, an even spread
with a handful of members, and minimal movement by construction (when a member leaves only its
keys move, spread over the others; when one joins it takes about ``1/n`` of the keys, from every
member alike, and no other key moves).

The weight is the first 8 bytes of BLAKE2b over ``member NUL key``: stable across processes,
Python versions and machines (unlike ``hash()``, which is salted per process).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = ["View", "owner", "spread", "view_of"]

View = tuple[str, ...]
"""A membership view: member identities, sorted and unique (what every replica hashes against)."""


def view_of(members: Iterable[str]) -> View:
    """The canonical view of ``members`` (sorted, without duplicates or empty names)."""
    return tuple(sorted({m for m in members if m}))


def _weight(member: str, key: str) -> int:
    digest = hashlib.blake2b(f"{member}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def owner(key: str, view: Sequence[str]) -> str | None:
    """The member of ``view`` that owns ``key`` (None for an empty view). Ties (astronomically
    rare) go to the greater name, so every replica still agrees."""
    best: str | None = None
    best_weight = -1
    for member in view:
        w = _weight(member, key)
        if w > best_weight or (w == best_weight and best is not None and member > best):
            best, best_weight = member, w
    return best


def spread(keys: Iterable[str], view: Sequence[str]) -> dict[str, int]:
    """How many of ``keys`` each member of ``view`` owns (every member listed, zeros included)."""
    counts: Counter[str] = Counter({m: 0 for m in view})
    for key in keys:
        who = owner(key, view)
        if who is not None:
            counts[who] += 1
    return dict(counts)
