"""The list+watch state machine, with no I/O: inputs in, actions and events out.

Following principle 10 (sans-IO cores), `WatchMachine` never touches the network or the clock.
A driver (`kubeloop.watch.watcher.Watcher`, or a test) loops:

    action = machine.next_action(now)          # List, Watch, Sleep, or None once stopped
    List  -> events = machine.on_list_page(page, now) | machine.on_list_error(error, now)
    Watch -> for each event: events = machine.on_watch_event(type, obj, now)
                 (stop reading as soon as `machine.watch_open` is False)
             then machine.on_watch_ended(now) | machine.on_watch_error(error, now)
    Sleep -> wait `seconds` (or less, after `wake()`), then ask `next_action` again

and hands every returned output event (see `kubeloop.watch.events`) to its consumer in order.

Rules (client-go's reflector and kube-runtime's watcher, see DESIGN.md and research notes):

- The list is paginated (`page_size`); a 410 on a continuation (expired continue token) restarts
  it from scratch with a quorum read; transport/5xx/429 errors retry the same page after backoff;
  other errors restart it after backoff.
- The watch resumes from the last seen resourceVersion (events and bookmarks advance it) after a
  clean end, a server timeout or a transport error: no relist. Events whose resourceVersion is
  not newer than the current one are ignored (when both are integers, as on every real server).
- A 410 (HTTP status, or an ERROR event carrying a 410 Status) means our resourceVersion was
  compacted away: relist with a quorum read and let the consumer compute the difference between
  its store and the new list (`Init` ... `InitDone`), which is how deletes missed while
  disconnected surface. The relist is immediate, unless the watch had run for less than
  `min_watch_duration` (then it waits for the backoff first).
- Every failure backs off (jittered exponential, reset after a healthy period); 429 waits at least
  Retry-After; a watch that ends within `min_watch_duration` without a new event (stale replays
  do not count) is a failure too, so nothing a server does can make the machine spin.
- 403 puts the machine in FORBIDDEN and 404 in WAITING_FOR_RESOURCE (the kind is not served yet)
  until a request succeeds; `last_error` keeps the server's message (it names the permission).
- Streaming lists (`streaming_list=True`): WATCH with sendInitialEvents=true; ADDED events up to
  the BOOKMARK annotated `k8s.io/initial-events-end: "true"` become `InitApply`, the bookmark
  becomes `InitDone`, and the same stream then continues with `Apply`/`Delete`. If the server
  rejects the request (400/422: an older server) streaming is switched off for good and a LIST is
  used; any other failure before the end bookmark falls back to a LIST for that one cycle.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.meta import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, resource_version_of, rv_int
from kubeloop.watch.actions import Action, List, Sleep, Watch
from kubeloop.watch.backoff import Backoff
from kubeloop.watch.config import ListSemantic, WatchConfig
from kubeloop.watch.errors import ErrorKind, WatchError, classify_status
from kubeloop.watch.events import INIT, Apply, Delete, InitApply, InitDone, WatchEvent
from kubeloop.watch.source import CONNECTED, INITIAL_EVENTS_END, ListPage

NOT_OLDER_THAN = "NotOlderThan"


class WatchState(enum.Enum):
    """What the watcher is doing, for metrics and readiness."""

    IDLE = "Idle"  # not started yet
    LISTING = "Listing"  # a (re)list is in progress (paginated LIST or streaming initial events)
    WATCHING = "Watching"  # watching (or about to re-watch) from a known resourceVersion
    BACKING_OFF = "BackingOff"  # waiting after a transient failure
    WAITING_FOR_RESOURCE = "WaitingForResource"  # 404: the kind is not served (CRD not installed)
    FORBIDDEN = "Forbidden"  # 403: missing permission; `last_error.message` names it
    STOPPED = "Stopped"


@dataclass(slots=True)
class WatchCounters:
    """Monotonic counters for metrics."""

    lists: int = 0  # list cycles started (paginated or streaming), the first included
    relists: int = 0  # list cycles after the first
    list_requests: int = 0  # LIST requests (one per page)
    watches: int = 0  # WATCH requests
    watch_restarts: int = 0  # watches resumed from the last resourceVersion without a relist
    events: int = 0  # watch events received (bookmarks and ERROR events included)
    bookmarks: int = 0
    stale_events: int = 0  # ignored: resourceVersion not newer than the current one
    errors: int = 0  # failures of any kind (each also sets `last_error`)
    backoffs: int = 0  # Sleep periods started
    streaming_fallbacks: int = 0  # streaming lists abandoned for a LIST


class ProtocolError(RuntimeError):
    """The driver broke the protocol (e.g. fed a list page while no LIST was outstanding)."""


class _Pending(enum.Enum):
    NONE = 0
    LIST = 1
    WATCH = 2


class _Next(enum.Enum):
    LIST = 0
    STREAM = 1
    WATCH = 2


_RETRY_SAME_PAGE = frozenset(
    {ErrorKind.TRANSPORT, ErrorKind.SERVER, ErrorKind.TIMEOUT, ErrorKind.TOO_MANY_REQUESTS}
)


def is_initial_events_end(obj: Any) -> bool:
    """True for the BOOKMARK that ends a streaming list's initial events."""
    if isinstance(obj, Mapping):
        meta = obj.get("metadata")
        if isinstance(meta, Mapping):
            annotations = meta.get("annotations")
            if isinstance(annotations, Mapping):
                return annotations.get(INITIAL_EVENTS_END) == "true"
    return False


class WatchMachine:
    """The list+watch state machine for one scope. See the module docstring for the protocol."""

    def __init__(self, config: WatchConfig | None = None, *, rng: random.Random | None = None) -> None:
        self.config = config if config is not None else WatchConfig()
        self._rng = rng if rng is not None else random.Random()
        cfg = self.config
        self.backoff = Backoff(
            cfg.backoff_initial,
            cfg.backoff_max,
            cfg.backoff_factor,
            cfg.backoff_jitter,
            cfg.backoff_reset_after,
            random=self._rng.random,
        )
        self.counters = WatchCounters()
        self._pending = _Pending.NONE
        self._next = _Next.STREAM if cfg.streaming_list else _Next.LIST
        self._streaming_supported = cfg.streaming_list
        self._rv: str | None = None
        self._rv_int: int | None = None
        self._relist_quorum = False  # after a 410: the next list must be a quorum read
        self._continue: str | None = None
        self._cycle_started = False
        self._init_sent = False
        self._initial_phase = False  # inside a streaming list's initial events
        self._resume = False  # the next WATCH resumes an earlier one (for counters)
        self._sleep_until: float | None = None
        self._sticky: WatchState | None = None
        self._activity = WatchState.IDLE
        self._last_error: WatchError | None = None
        self._synced = False
        self._stopped = False
        self._consecutive_list_gone = 0
        self._watch_started_at = 0.0
        self._watch_events = 0

    # ------------------------------------------------------------------ observation

    @property
    def state(self) -> WatchState:
        """Current state; FORBIDDEN / WAITING_FOR_RESOURCE persist until a request succeeds."""
        if self._stopped:
            return WatchState.STOPPED
        if self._sticky is not None:
            return self._sticky
        return self._activity

    @property
    def last_error(self) -> WatchError | None:
        """The most recent failure (kept after recovery; `state` says whether it still applies)."""
        return self._last_error

    @property
    def synced(self) -> bool:
        """True once a first list completed (`InitDone` was emitted)."""
        return self._synced

    @property
    def resource_version(self) -> str | None:
        """The resourceVersion the next watch resumes from (None before the first list)."""
        return self._rv

    @property
    def watch_open(self) -> bool:
        """True while a WATCH is outstanding; False means the driver must close the stream."""
        return self._pending is _Pending.WATCH

    @property
    def streaming_supported(self) -> bool:
        """False once the server rejected a streaming list (or when not configured)."""
        return self._streaming_supported

    @property
    def stopped(self) -> bool:
        """True after `stop()`."""
        return self._stopped

    def describe(self) -> str:
        """One line for logs and readiness: the state, and why when it is an error state."""
        state = self.state
        error = self._last_error
        if state in (WatchState.FORBIDDEN, WatchState.WAITING_FOR_RESOURCE) and error:
            return f"{state.value}: {error.message}"
        if state is WatchState.BACKING_OFF and error:
            return f"{state.value} after {error}"
        if state is WatchState.WATCHING and self._rv is not None:
            return f"{state.value} from resourceVersion {self._rv}"
        return state.value

    # ------------------------------------------------------------------ actions

    def next_action(self, now: float) -> Action | None:
        """What the driver must do next; None once stopped."""
        if self._stopped:
            return None
        if self._pending is not _Pending.NONE:
            raise ProtocolError(f"next_action() while a {self._pending.name} is still outstanding")
        if self._sleep_until is not None:
            if now < self._sleep_until:
                self._activity = WatchState.BACKING_OFF
                return Sleep(self._sleep_until - now)
            self._sleep_until = None
        if self._next is _Next.LIST:
            return self._list_action()
        return self._watch_action(now, streaming=self._next is _Next.STREAM)

    def _begin_cycle(self) -> None:
        if not self._cycle_started:
            self._cycle_started = True
            self._init_sent = False
            if self.counters.lists:
                self.counters.relists += 1
            self.counters.lists += 1

    def _abandon_cycle(self) -> None:
        self._cycle_started = False
        self._init_sent = False
        self._continue = None

    def _list_rv(self) -> tuple[str | None, str | None]:
        if self.config.list_semantic is ListSemantic.ANY and not self._relist_quorum:
            return (self._rv if self._rv is not None else "0"), NOT_OLDER_THAN
        return None, None

    def _list_action(self) -> List:
        if self._continue is None:
            self._begin_cycle()
            rv, match = self._list_rv()
        else:
            rv, match = None, None
        self._pending = _Pending.LIST
        self._activity = WatchState.LISTING
        self.counters.list_requests += 1
        return List(self.config.page_size, self._continue, rv, match)

    def _watch_action(self, now: float, *, streaming: bool) -> Watch:
        cfg = self.config
        timeout = self._rng.randint(cfg.watch_timeout[0], cfg.watch_timeout[1])
        if streaming:
            self._begin_cycle()
            rv, _ = self._list_rv()
            match: str | None = NOT_OLDER_THAN
            self._initial_phase = True
            self._activity = WatchState.LISTING
        else:
            rv, match = self._rv, None
            self._activity = WatchState.WATCHING
            if self._resume:
                self.counters.watch_restarts += 1
        self._resume = False
        self._pending = _Pending.WATCH
        self._watch_started_at = now
        self._watch_events = 0
        self.counters.watches += 1
        return Watch(rv, match, timeout, cfg.allow_bookmarks, streaming, timeout + cfg.idle_margin)

    # ------------------------------------------------------------------ inputs: list

    def on_list_page(self, page: ListPage, now: float) -> list[WatchEvent]:
        """A LIST page arrived: its items become `InitApply`; the last page ends with `InitDone`."""
        if self._expect(_Pending.LIST, "on_list_page"):
            return []
        self._pending = _Pending.NONE
        self._succeeded()
        out: list[WatchEvent] = []
        if not self._init_sent:
            self._init_sent = True
            out.append(INIT)
        out.extend(InitApply(item) for item in page.items)
        resource_version = page.resource_version
        if page.continue_token:
            self._continue = page.continue_token
            self._next = _Next.LIST
            return out
        if not resource_version:
            self._abandon_cycle()
            self._fail(WatchError(ErrorKind.OTHER, "LIST response without a resourceVersion"), now)
            return out
        out.append(self._finish_cycle(resource_version))
        return out

    def on_list_error(self, error: WatchError, now: float) -> list[WatchEvent]:
        """A LIST request failed."""
        if self._expect(_Pending.LIST, "on_list_error"):
            return []
        self._pending = _Pending.NONE
        self._record(error)
        self._next = _Next.LIST
        kind = error.kind
        if kind is ErrorKind.GONE:
            # Expired continue token, or a resourceVersion the server no longer has.
            self._relist_quorum = True
            self._abandon_cycle()
            self._consecutive_list_gone += 1
            if self._consecutive_list_gone > 1:
                self._sleep(error, now)
            return []
        if kind not in _RETRY_SAME_PAGE:
            self._abandon_cycle()
        self._sleep(error, now)
        return []

    # ------------------------------------------------------------------ inputs: watch

    def on_watch_started(self, now: float) -> list[WatchEvent]:
        """Optional: the server accepted the WATCH (HTTP 200); clears FORBIDDEN and friends."""
        if self._expect(_Pending.WATCH, "on_watch_started"):
            return []
        self._succeeded()
        return []

    def on_watch_event(
        self, event_type: str, obj: Any, now: float, resource_version: str | None = None
    ) -> list[WatchEvent]:
        """One watch event (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR; CONNECTED is optional).

        `resource_version`, when the source already knows it, saves reading it from `obj`.
        """
        if self._pending is not _Pending.WATCH:
            if self._stopped:
                return []
            raise ProtocolError("on_watch_event() while no WATCH is outstanding")
        counters = self.counters
        if event_type == ERROR:
            counters.events += 1
            return self._watch_failed(classify_status(obj), now)
        if event_type == CONNECTED:
            self._succeeded()
            return []
        counters.events += 1
        if self._sticky is not None:
            self._sticky = None
        if self._initial_phase:
            self._watch_events += 1
            return self._initial_event(event_type, obj, now, resource_version)
        rv = resource_version if resource_version is not None else resource_version_of(obj)
        if rv is not None:
            n = rv_int(rv)
            if n is not None:
                current = self._rv_int
                if current is not None and n <= current:
                    counters.stale_events += 1
                    return []
                self._rv_int = n
            self._rv = rv
        self._watch_events += 1  # only events that made progress count against "very short watch"
        if event_type == MODIFIED or event_type == ADDED:
            return [Apply(obj)]
        if event_type == DELETED:
            return [Delete(obj)]
        if event_type == BOOKMARK:
            counters.bookmarks += 1
        return []

    def _initial_event(self, event_type: str, obj: Any, now: float, resource_version: str | None) -> list[WatchEvent]:
        out: list[WatchEvent] = []
        if not self._init_sent:
            self._init_sent = True
            out.append(INIT)
        if event_type == ADDED or event_type == MODIFIED:
            out.append(InitApply(obj))
        elif event_type == BOOKMARK:
            self.counters.bookmarks += 1
            if is_initial_events_end(obj):
                rv = resource_version if resource_version is not None else resource_version_of(obj)
                if rv is None:
                    out.extend(self._watch_failed(
                        WatchError(ErrorKind.OTHER, "initial-events-end bookmark without a resourceVersion"), now
                    ))
                    return out
                self._initial_phase = False
                self._activity = WatchState.WATCHING
                out.append(self._finish_cycle(rv))
                self._next = _Next.WATCH  # when this stream ends, resume it
        # DELETED cannot happen before the end bookmark (initial events are synthetic ADDEDs).
        return out

    def on_watch_ended(self, now: float) -> list[WatchEvent]:
        """The server closed the watch cleanly (its timeoutSeconds elapsed, or it went away)."""
        if self._expect(_Pending.WATCH, "on_watch_ended"):
            return []
        self._pending = _Pending.NONE
        if self._initial_phase:
            self._initial_phase = False
            self._abandon_cycle()
            self.counters.streaming_fallbacks += 1
            self._next = _Next.LIST
            self._fail(WatchError(ErrorKind.TRANSPORT, "watch ended before the initial events were complete"), now)
            return []
        self._next = _Next.WATCH
        self._resume = True
        elapsed = now - self._watch_started_at
        if self._watch_events == 0 and elapsed < self.config.min_watch_duration:
            self._fail(WatchError(ErrorKind.TRANSPORT, f"watch ended after {elapsed:.3f}s without any event"), now)
        return []

    def on_watch_error(self, error: WatchError, now: float) -> list[WatchEvent]:
        """The WATCH request or its stream failed (HTTP error, transport error, idle timeout)."""
        if self._expect(_Pending.WATCH, "on_watch_error"):
            return []
        return self._watch_failed(error, now)

    def _watch_failed(self, error: WatchError, now: float) -> list[WatchEvent]:
        self._pending = _Pending.NONE
        self._record(error)
        kind = error.kind
        # A 410 is normal after a long watch (relist at once), but one within min_watch_duration of
        # the watch start, events or not, backs off: a server that expires every watch at once must
        # not make us relist in a tight loop.
        short = now - self._watch_started_at < self.config.min_watch_duration
        relist = _Next.STREAM if self._streaming_supported else _Next.LIST
        if self._initial_phase:
            self._initial_phase = False
            self._abandon_cycle()
            if kind is ErrorKind.GONE:
                self._relist_quorum = True
                self._next = relist
                if short:
                    self._sleep(error, now)
                return []
            self.counters.streaming_fallbacks += 1
            self._next = _Next.LIST
            if kind is ErrorKind.REJECTED:
                # The server does not do streaming lists (or not with these parameters): LIST now.
                self._streaming_supported = False
                return []
            self._sleep(error, now)
            return []
        self._resume = True
        if kind is ErrorKind.GONE:
            self._relist_quorum = True
            self._next = relist
            if short:
                self._sleep(error, now)
            return []
        if kind is ErrorKind.NOT_FOUND or kind is ErrorKind.REJECTED:
            # The kind went away, or our resourceVersion was refused: start over with a list.
            self._next = relist
        else:
            self._next = _Next.WATCH
        self._sleep(error, now)
        return []

    # ------------------------------------------------------------------ inputs: control

    def wake(self) -> None:
        """Cut the current backoff short (e.g. the CRD we wait for was just installed)."""
        self._sleep_until = None

    def stop(self) -> None:
        """Stop for good: `next_action` returns None and later inputs are ignored."""
        self._stopped = True
        self._pending = _Pending.NONE
        self._initial_phase = False
        self._sleep_until = None

    # ------------------------------------------------------------------ helpers

    def _expect(self, pending: _Pending, what: str) -> bool:
        """True when the input must be ignored (stopped); raises on a protocol violation."""
        if self._pending is pending:
            return False
        if self._stopped:
            return True
        raise ProtocolError(f"{what}() while {self._pending.name.lower()} is outstanding, not {pending.name.lower()}")

    def _finish_cycle(self, resource_version: str) -> InitDone:
        self._rv = resource_version
        self._rv_int = rv_int(resource_version)
        self._relist_quorum = False
        self._consecutive_list_gone = 0
        self._cycle_started = False
        self._init_sent = False
        self._continue = None
        self._synced = True
        self._next = _Next.WATCH
        self._resume = False
        return InitDone(resource_version)

    def _succeeded(self) -> None:
        self._sticky = None

    def _record(self, error: WatchError) -> None:
        self._last_error = error
        self.counters.errors += 1
        if error.kind is ErrorKind.FORBIDDEN:
            self._sticky = WatchState.FORBIDDEN
        elif error.kind is ErrorKind.NOT_FOUND:
            self._sticky = WatchState.WAITING_FOR_RESOURCE

    def _fail(self, error: WatchError, now: float) -> None:
        self._record(error)
        self._sleep(error, now)

    def _sleep(self, error: WatchError, now: float) -> None:
        delay = self.backoff.next_delay(now)
        if error.kind is ErrorKind.TOO_MANY_REQUESTS and error.retry_after is not None:
            delay = max(delay, error.retry_after)
        self._sleep_until = now + delay
        self._activity = WatchState.BACKING_OFF
        self.counters.backoffs += 1
