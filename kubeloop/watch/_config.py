"""Watcher settings, with defaults chosen (and explained) here."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ListSemantic(enum.Enum):
    """Which resourceVersion the initial LIST (or streaming list) asks for.

    ANY (the default, what client-go's reflector asks): resourceVersion="0" with
    resourceVersionMatch=NotOlderThan for the first list, and the last seen resourceVersion for
    later relists (never older than what this watcher saw). The API server answers "0" from its
    watch cache, in memory and in one response (it ignores `limit`; the watcher reads the response
    as it arrives, see `WatchSource.list_page`), so the first list costs the server no etcd read
    and the client no round trip per page. Its answer may be older than the latest write (a few
    milliseconds on a healthy server; more after a restart of a server in a multi-server cluster):
    an object written just before the list may arrive as a watch event after the sync, not in the
    list. The watch resumes from the list's resourceVersion, so nothing is missed. After a 410 the
    next list is a quorum read.

    MOST_RECENT: resourceVersion unset, a consistent ("quorum") read from etcd, in pages of
    `page_size`: never older than any write that completed before it (kube-runtime's choice), for a
    round trip per page and an etcd read.
    """

    MOST_RECENT = "MostRecent"
    ANY = "Any"


@dataclass(frozen=True, slots=True)
class WatchConfig:
    """How a watcher lists and watches, and how it backs off.

    - `page_size`: LIST `limit` (500 like client-go and kube-runtime); None lists in one request.
      A list served from the watch cache (`ListSemantic.ANY`'s first) ignores it.
    - `list_semantic`: see `ListSemantic`.
    - `streaming_list`: use a streaming list (WATCH with sendInitialEvents=true) instead of a
      LIST. Off by default, as in client-go, where it is opt-in: Kubernetes 1.27 brought it as
      alpha behind the WatchList feature gate, and a server without it refuses the attempt, one
      more request per list. When on, it falls back to LIST for good when the server rejects it
      (400/422: kube-apiserver before 1.27, or with the WatchList feature gate off, answers 422
      "resourceVersionMatch is forbidden for watch") or when no initial-events-end bookmark came
      within `list_deadline` (a server that ignores the parameter).
    - `list_deadline`: seconds a streaming list may take to deliver its initial events, counted
      from the WATCH request by a timer (the machine's `timer`), so a quiet resource that sends
      nothing after its objects falls back too. A LIST fails when no byte of it arrived for the
      client's request timeout.
    - `allow_bookmarks`: ask for BOOKMARK events (they keep the resume point fresh, making 410s on
      reconnect rare); required by streaming lists.
    - `watch_timeout`: each WATCH asks the server to end it after a random whole number of seconds
      in this inclusive range (client-go's 5-10 min), spreading reconnections over time.
    - `idle_margin`: the driver gives up on a watch with no event for `timeout_seconds + idle_margin`.
    - `min_watch_duration`: a watch that ends sooner than this without a single event counts as a
      failure for backoff (client-go's "very short watch"), so a server that closes watches at once
      cannot make us spin.
    - `backoff_*`: the failure backoff, see `kubeloop.meta.Backoff`.
    """

    page_size: int | None = 500
    list_semantic: ListSemantic = ListSemantic.ANY
    streaming_list: bool = False
    list_deadline: float = 60.0
    allow_bookmarks: bool = True
    watch_timeout: tuple[int, int] = (300, 600)
    idle_margin: float = 30.0
    min_watch_duration: float = 1.0
    healthy_watch_duration: float = 10.0
    backoff_initial: float = 0.8
    backoff_max: float = 30.0
    backoff_factor: float = 2.0
    backoff_jitter: float = 1.0
    backoff_reset_after: float = 120.0

    def __post_init__(self) -> None:
        if self.page_size is not None and self.page_size < 1:
            raise ValueError(f"page_size must be positive or None, got {self.page_size}")
        low, high = self.watch_timeout
        if not 1 <= low <= high:
            raise ValueError(f"watch_timeout must be (low, high) with 1 <= low <= high, got {self.watch_timeout}")
        if self.streaming_list and not self.allow_bookmarks:
            raise ValueError("streaming_list needs allow_bookmarks (the list ends with a bookmark)")
        if self.idle_margin < 0 or self.min_watch_duration < 0 or self.healthy_watch_duration < 0:
            raise ValueError("idle_margin, min_watch_duration and healthy_watch_duration must be >= 0")
