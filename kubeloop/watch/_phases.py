"""The watch machine's phases: each a frozen value carrying the data of that phase.

`WatchMachine` (see `_machine`) holds exactly one of them; a transition replaces it with a new
value, so no flag can contradict another (kube-runtime's `State<K>`). `WatchState` is the coarse,
stable view of them for metrics and readiness.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final


class WatchState(enum.Enum):
    """What the watcher is doing, for metrics and readiness."""

    IDLE = "Idle"  # not started yet
    LISTING = "Listing"  # a (re)list is in progress (paginated LIST or streaming initial events)
    WATCHING = "Watching"  # watching (or about to re-watch) from a known resourceVersion
    BACKING_OFF = "BackingOff"  # waiting after a transient failure
    WAITING_FOR_RESOURCE = "WaitingForResource"  # 404: the kind is not served (CRD not installed)
    FORBIDDEN = "Forbidden"  # 403: missing permission; `last_error.message` names it
    STOPPED = "Stopped"


@dataclass(frozen=True, slots=True)
class Relist:
    """A list cycle is due: a streaming list when `stream`, else a paginated LIST."""

    stream: bool
    quorum: bool = False  # after a 410: a consistent read, never the watch cache
    gone: int = 0  # consecutive 410s on LIST; from the second one on, pause first


@dataclass(frozen=True, slots=True)
class Listing:
    """A paginated list cycle; `outstanding` while its LIST request is in flight; `delivered` once
    items of that request were handed out before its end (a LIST read as it arrives)."""

    continue_token: str | None
    quorum: bool
    gone: int
    init_sent: bool
    outstanding: bool
    delivered: bool = False


@dataclass(frozen=True, slots=True)
class Streaming:
    """A streaming list's WATCH is open; initial events arrive until the end bookmark."""

    quorum: bool
    init_sent: bool
    started_at: float


@dataclass(frozen=True, slots=True)
class Rewatch:
    """A WATCH from the known resourceVersion is due; `resume` when it continues an earlier one."""

    resume: bool


@dataclass(frozen=True, slots=True)
class Watching:
    """A WATCH is open since `started_at`."""

    started_at: float


@dataclass(frozen=True, slots=True)
class BackingOff:
    """Sleeping until `until` (machine time), then `then`."""

    until: float
    then: Relist | Listing | Rewatch


@dataclass(frozen=True, slots=True)
class Stopped:
    """Stopped for good."""


Phase = Relist | Listing | Streaming | Rewatch | Watching | BackingOff | Stopped
"""Any phase of the machine."""

STATE_OF: Final[dict[type, WatchState]] = {
    Relist: WatchState.LISTING,
    Listing: WatchState.LISTING,
    Streaming: WatchState.LISTING,
    Rewatch: WatchState.WATCHING,
    Watching: WatchState.WATCHING,
    BackingOff: WatchState.BACKING_OFF,
    Stopped: WatchState.STOPPED,
}
"""The coarse state each phase reports (before FORBIDDEN / WAITING_FOR_RESOURCE and IDLE)."""
