"""What a watcher tells its consumer: the five outputs of the machine (its inputs are watch events,
`kubeloop.client.WatchEvent`; its requests are the actions of `_actions`).

They follow kube-runtime's shape (`Init`, `InitApply`, `InitDone`, `Apply`, `Delete`) so a list is
streamed one object at a time instead of buffered, with one difference: `Init` is emitted on every
(re)list, streaming lists included, so the consumer always knows when to start a fresh buffer.

Consumer contract (what the informer's store writer does, `kubeloop.cache.StoreWriter`):

- `Init`: a (re)list starts. Discard any partially buffered list from an earlier `Init` that never
  reached `InitDone` and start a new buffer.
- `InitApply(obj)`: one object of that list; buffer it.
- `InitDone(resource_version)`: the list is complete. Swap the buffer into the store atomically;
  objects present before but absent from the buffer were deleted while we were not looking, so
  report them deleted. Until the first `InitDone` the store is not synced.
- `Apply(obj)`: an object was added or modified (after the list).
- `Delete(obj)`: an object was deleted; `obj` is its last state as the server reported it.

The events are small slotted dataclasses, not frozen ones (those cost ~40% more to create and there
is one per watch event): treat them as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Init:
    """A (re)list starts: begin a new buffer, dropping any unfinished one."""


@dataclass(slots=True)
class InitApply:
    """One object of the list in progress."""

    obj: Any


@dataclass(slots=True)
class InitDone:
    """The list is complete at `resource_version`; swap the store and report vanished objects."""

    resource_version: str


@dataclass(slots=True)
class Apply:
    """An object was added or modified."""

    obj: Any


@dataclass(slots=True)
class Delete:
    """An object was deleted; `obj` is its final state."""

    obj: Any


WatcherEvent = Init | InitApply | InitDone | Apply | Delete
"""Any of the five output events."""

INIT = Init()
"""The one `Init` instance (it carries no data)."""
