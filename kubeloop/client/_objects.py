"""Result types of list calls, JSON encoding of any Mapping.

Objects stay plain JSON-shaped dicts: no model layer. Objects handed *to* the client may be any
`Mapping` (e.g. the read-only views of the cache); they are serialized through a `default=` hook.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson


def _default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return list(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot serialize {type(value).__name__} to JSON")


def dumps(obj: Any) -> bytes:
    """JSON bytes for a dict or any Mapping/Sequence views nested inside it."""
    return orjson.dumps(obj, default=_default)


@dataclass(slots=True)
class Page:
    """One page of a paginated LIST."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str | None
    remaining_item_count: int | None = None
    kind: str = ""
    api_version: str = ""


@dataclass(slots=True)
class ObjectList:
    """All items of a LIST (every page) and the resourceVersion of the snapshot."""

    items: list[dict[str, Any]]
    resource_version: str
    kind: str = ""
    api_version: str = ""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
