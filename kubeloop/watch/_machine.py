"""The list+watch state machine, with no I/O: inputs in, actions and events out.

Following principle 10 (sans-IO cores), `WatchMachine` never touches the network or the clock.
A driver (`kubeloop.watch._watcher.Watcher`, or a test) loops:

    action = machine.next_action(now)          # List, Watch, Sleep, or None once stopped
    List  -> events = machine.on_list_page(page, now) | machine.on_list_error(error, now)
             (a response read as it arrives: events = machine.on_list_items(items, now) for each
              run of items first, then on_list_page with the rest, or on_list_error)
    Watch -> for each event: events = machine.on_watch_event(type, obj, now)
                 (or for each run of them: events = machine.on_watch_events(run, now))
                 (stop reading as soon as `machine.watch_open` is False)
             then machine.on_watch_ended(now) | machine.on_watch_error(error, now)
    Sleep -> wait `seconds` (or less, after `wake()`), then ask `next_action` again
    while a WATCH is open and `machine.timer` is not None: at that time (if nothing else came
             first), events = machine.on_timer(now), then as after an event

and hands every returned output event (see `kubeloop.watch._outputs`) to its consumer in order.

The state is one phase value carrying its own data (kube-runtime's `State<K>`): `Relist` (a list
cycle is due), `Listing` (a paginated list in progress), `Streaming` (a streaming list's initial
events), `Rewatch` (a watch from the known resourceVersion is due), `Watching` (a watch is open),
`BackingOff` (sleeping, then the phase it holds) and `Stopped`. Only what outlives a phase stays on
the machine: the resourceVersion reached, `synced`, the sticky 403/404 state, the last error, the
time of the last progress, whether the server streams lists, the backoff and the counters. The
phases are defined in `_phases`; this module is longer than most because its docstring is the
protocol's specification and the transitions are easier to check side by side.

Rules (client-go's reflector and kube-runtime's watcher, see DESIGN.md and research notes):

- The list is paginated (`page_size`); a 410 on a continuation (expired continue token) restarts
  it from scratch with a quorum read; transport/5xx/429 errors retry the same page after backoff;
  other errors restart it after backoff. A page that fails after some of its items were handed out
  (`on_list_items`) restarts the list cycle instead: a new request may answer from a newer
  snapshot, and the items already handed out would mix two (the consumer drops them at `Init`).
- Which resourceVersion a list asks for is `ListSemantic`'s (by default client-go's: "0" first,
  served from the API server's watch cache and possibly older than the latest write; the last
  seen one on a later relist; a quorum read after a 410). The watch resumes from the list's.
- The watch resumes from the last seen resourceVersion (events and bookmarks advance it) after a
  clean end, a server timeout or a transport error: no relist. Events whose resourceVersion is
  not newer than the current one are ignored (when both are integers, as on every real server).
- A 410 (HTTP status, or an ERROR event carrying a 410 Status) means our resourceVersion was
  compacted away: relist with a quorum read and let the consumer compute the difference between
  its store and the new list (`Init` ... `InitDone`), which is how deletes missed while
  disconnected surface. The relist is immediate, unless the watch had run for less than
  `min_watch_duration`: then it pauses first, on a backoff of its own (`gone_backoff`). A 410 is not
  a server failure, so it never grows the failure backoff: after a fault storm, a compacted
  resourceVersion must not keep a cache stale for the 30-60 s of a fully grown backoff.
- Idle bookmarks (no newer resourceVersion) count as bookmarks and as progress, not as stale events.
- Every failure backs off (jittered exponential, reset after a healthy period, or as soon as a watch
  has been open with progress for `healthy_watch_duration`); 429 waits at least Retry-After; a watch that ends within `min_watch_duration` without a new event (stale replays
  do not count) is a failure too, so nothing a server does can make the machine spin.
- 403 puts the machine in FORBIDDEN and 404 in WAITING_FOR_RESOURCE (the kind is not served yet)
  until a request succeeds; `last_error` keeps the server's message (it names the permission).
- Streaming lists (`streaming_list=True`): WATCH with sendInitialEvents=true; ADDED events up to
  the BOOKMARK annotated `k8s.io/initial-events-end: "true"` become `InitApply`, the bookmark
  becomes `InitDone`, and the same stream then continues with `Apply`/`Delete`. If the server
  rejects the request (400/422: an older server) streaming is switched off for good and a LIST is
  used; any other failure before the end bookmark falls back to a LIST for that one cycle. A server
  that ignores the parameter sends no end bookmark: `list_deadline` after the WATCH was opened
  (`timer`, so a quiet resource with no event to notice it by is not kept listing until the watch
  ends) streaming is switched off for good and a LIST is used.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.meta import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, Backoff, resource_version_of, rv_int
from kubeloop.watch._actions import Action, List, Sleep, Watch
from kubeloop.watch._config import ListSemantic, WatchConfig
from kubeloop.watch._errors import ErrorKind, WatchError, classify_status
from kubeloop.watch._outputs import INIT, Apply, Delete, InitApply, InitDone, WatcherEvent
from kubeloop.watch._phases import (
    STATE_OF,
    BackingOff,
    Listing,
    Phase,
    Relist,
    Rewatch,
    Stopped,
    Streaming,
    Watching,
    WatchState,
)
from kubeloop.watch._source import CONNECTED, INITIAL_EVENTS_END, EventLike, ListPage

NOT_OLDER_THAN = "NotOlderThan"


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


# ---------------------------------------------------------------------------------------- machine


class WatchMachine:
    """The list+watch state machine for one scope. See the module docstring for the protocol."""

    def __init__(self, config: WatchConfig | None = None, *, rng: random.Random | None = None) -> None:
        self.config = config if config is not None else WatchConfig()
        self._rng = rng if rng is not None else random.Random()
        cfg = self.config
        self.backoff = self._new_backoff()
        # 410s pause on their own backoff: a compacted resourceVersion is no sign of a failing server
        # (it must not inherit a storm's 30 s), but a server that expires every watch at once must
        # still not make us relist in a loop.
        self.gone_backoff = self._new_backoff()
        self.counters = WatchCounters()
        self._phase: Phase = Relist(stream=cfg.streaming_list)
        self._streaming_supported = cfg.streaming_list
        self._rv: str | None = None
        self._rv_int: int | None = None
        self._progress_at: float | None = None  # last event or bookmark of the open watch
        self._synced = False
        self._sticky: WatchState | None = None  # FORBIDDEN / WAITING_FOR_RESOURCE until a success
        self._last_error: WatchError | None = None
        self._failing_since: float | None = None  # first failure since the last healthy watch

    def _new_backoff(self) -> Backoff:
        cfg = self.config
        return Backoff(cfg.backoff_initial, cfg.backoff_max, cfg.backoff_factor, cfg.backoff_jitter,
                       cfg.backoff_reset_after, random=self._rng.random)

    # ------------------------------------------------------------------ observation

    @property
    def phase(self) -> Phase:
        """The current phase, with its data (read-only values)."""
        return self._phase

    @property
    def state(self) -> WatchState:
        """Current state; FORBIDDEN / WAITING_FOR_RESOURCE persist until a request succeeds."""
        phase = self._phase
        if type(phase) is Stopped:
            return WatchState.STOPPED
        if self._sticky is not None:
            return self._sticky
        if type(phase) is Relist and not self.counters.lists:
            return WatchState.IDLE
        return STATE_OF[type(phase)]

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
        return type(self._phase) is Watching or type(self._phase) is Streaming

    @property
    def last_progress(self) -> float | None:
        """While a WATCH is open: when it last made progress (an event, a bookmark) or opened."""
        phase = self._phase
        if type(phase) is Watching or type(phase) is Streaming:
            return self._progress_at if self._progress_at is not None else phase.started_at
        return None

    @property
    def failing_since(self) -> float | None:
        """When the first failure since the last healthy watch happened (None: none since). A
        watch open for `healthy_watch_duration` with progress clears it when it ends; while it is
        open, see `watch_open_since`."""
        return self._failing_since

    @property
    def watch_open_since(self) -> float | None:
        """When the WATCH now open was opened (None: none open)."""
        phase = self._phase
        if type(phase) is Watching or type(phase) is Streaming:
            return phase.started_at
        return None

    @property
    def streaming_supported(self) -> bool:
        """False once the server rejected a streaming list (or when not configured)."""
        return self._streaming_supported

    @property
    def timer(self) -> float | None:
        """When the driver must call `on_timer` unless an input came first (None: no timer): the
        streaming list's deadline while its initial events have not ended."""
        phase = self._phase
        if type(phase) is Streaming:
            return phase.started_at + self.config.list_deadline
        return None

    @property
    def stopped(self) -> bool:
        """True after `stop()`."""
        return type(self._phase) is Stopped

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
        phase = self._phase
        if type(phase) is BackingOff:
            if now < phase.until:
                return Sleep(phase.until - now)
            phase = self._phase = phase.then
        if type(phase) is Rewatch:
            if phase.resume:
                self.counters.watch_restarts += 1
            self._phase = Watching(now)
            return self._open_watch(now, self._rv, None, streaming=False)
        if type(phase) is Relist:
            counters = self.counters
            if counters.lists:
                counters.relists += 1
            counters.lists += 1
            if phase.stream:
                self._phase = Streaming(phase.quorum, init_sent=False, started_at=now)
                return self._open_watch(now, self._list_rv(phase.quorum)[0], NOT_OLDER_THAN, streaming=True)
            phase = Listing(None, phase.quorum, phase.gone, init_sent=False, outstanding=False)
        if type(phase) is Listing and not phase.outstanding:
            return self._request_page(phase)
        if type(phase) is Stopped:
            return None
        raise ProtocolError(f"next_action() while a request is still outstanding ({type(phase).__name__})")

    def _list_rv(self, quorum: bool) -> tuple[str | None, str | None]:
        if self.config.list_semantic is ListSemantic.ANY and not quorum:
            return (self._rv if self._rv is not None else "0"), NOT_OLDER_THAN
        return None, None

    def _request_page(self, phase: Listing) -> List:
        token = phase.continue_token
        rv, match = self._list_rv(phase.quorum) if token is None else (None, None)
        self._phase = Listing(token, phase.quorum, phase.gone, phase.init_sent, outstanding=True)
        self.counters.list_requests += 1
        return List(self.config.page_size, token, rv, match)

    def _open_watch(self, now: float, rv: str | None, match: str | None, *, streaming: bool) -> Watch:
        cfg = self.config
        timeout = self._rng.randint(cfg.watch_timeout[0], cfg.watch_timeout[1])
        self._progress_at = None
        self.counters.watches += 1
        return Watch(rv, match, timeout, cfg.allow_bookmarks, streaming, timeout + cfg.idle_margin)

    # ------------------------------------------------------------------ inputs: list

    def on_list_page(self, page: ListPage, now: float) -> list[WatcherEvent]:
        """A LIST page arrived: its items become `InitApply`; the last page ends with `InitDone`."""
        phase = self._outstanding_list("on_list_page")
        if phase is None:
            return []
        self._sticky = None
        out: list[WatcherEvent] = [] if phase.init_sent else [INIT]
        out.extend(InitApply(item) for item in page.items)
        if page.continue_token:
            self._phase = Listing(page.continue_token, phase.quorum, phase.gone, init_sent=True, outstanding=False)
            return out
        if not page.resource_version:
            error = WatchError(ErrorKind.OTHER, "LIST response without a resourceVersion")
            self._fail(error, now, Relist(False, phase.quorum, phase.gone))
            return out
        out.append(self._finish_cycle(page.resource_version))
        return out

    def on_list_items(self, items: Iterable[Any], now: float) -> list[WatcherEvent]:
        """Items of the outstanding LIST response, handed out before it ended (a response read as
        it arrives); its end comes as `on_list_page` (with the items after these) or `on_list_error`."""
        phase = self._outstanding_list("on_list_items")
        if phase is None:
            return []
        self._sticky = None
        out: list[WatcherEvent] = [] if phase.init_sent else [INIT]
        out.extend(InitApply(item) for item in items)
        if not phase.delivered:
            self._phase = Listing(phase.continue_token, phase.quorum, phase.gone, init_sent=True, outstanding=True,
                                  delivered=True)
        return out

    def on_list_error(self, error: WatchError, now: float) -> list[WatcherEvent]:
        """A LIST request failed."""
        phase = self._outstanding_list("on_list_error")
        if phase is None:
            return []
        self._record(error, now)
        kind = error.kind
        if kind is ErrorKind.GONE:
            # Expired continue token, or a resourceVersion the server no longer has: start over
            # with a quorum read, at once the first time.
            relist = Relist(False, quorum=True, gone=phase.gone + 1)
            if relist.gone > 1:
                self._pause_after_gone(now, relist)
            else:
                self._phase = relist
            return []
        if kind in _RETRY_SAME_PAGE and not phase.delivered:
            then: Relist | Listing = Listing(
                phase.continue_token, phase.quorum, phase.gone, phase.init_sent, outstanding=False
            )
        else:
            then = Relist(False, phase.quorum, phase.gone)
        self._sleep(error, now, then)
        return []

    # ------------------------------------------------------------------ inputs: watch

    def on_watch_started(self, now: float) -> list[WatcherEvent]:
        """Optional: the server accepted the WATCH (HTTP 200); clears FORBIDDEN and friends."""
        if self._open_watch_phase("on_watch_started") is not None:
            self._sticky = None
        return []

    def on_watch_event(
        self, event_type: str, obj: Any, now: float, resource_version: str | None = None
    ) -> list[WatcherEvent]:
        """One watch event (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR; CONNECTED is optional).

        `resource_version`, when the source already knows it, saves reading it from `obj`.
        """
        out: list[WatcherEvent] = []
        self._watch_event(out, event_type, obj, now, resource_version)
        return out

    def on_watch_events(self, events: Iterable[EventLike], now: float) -> list[WatcherEvent]:
        """Watch events that arrived together: `on_watch_event` for each, in order, up to the first
        that closes the watch (the rest belong to a stream the driver must close)."""
        out: list[WatcherEvent] = []
        step = self._watch_event
        for ev in events:
            if not step(out, ev.type, ev.object, now, ev.resource_version):
                break
        return out

    def _watch_event(self, out: list[WatcherEvent], event_type: str, obj: Any, now: float,
                     resource_version: str | None) -> bool:
        """Append the output of one watch event to `out`; False once the watch is closed."""
        phase = self._phase
        if type(phase) is not Watching:
            if type(phase) is Streaming:
                return self._streaming_event(out, phase, event_type, obj, now, resource_version)
            if type(phase) is Stopped:
                return False
            raise ProtocolError("on_watch_event() while no WATCH is outstanding")
        counters = self.counters
        if event_type == CONNECTED:
            self._sticky = None
            return True
        counters.events += 1
        if event_type == ERROR:
            out.extend(self._watch_failed(phase, classify_status(obj), now))
            return False
        self._sticky = None
        rv = resource_version if resource_version is not None else resource_version_of(obj)
        if event_type == BOOKMARK:
            # Progress even when idle (no newer resourceVersion): the stream is alive.
            counters.bookmarks += 1
            self._progress_at = now
            if rv is not None:
                self._advance(rv)
            return True
        if rv is not None and not self._advance(rv):
            counters.stale_events += 1
            return True
        self._progress_at = now  # only events that made progress count (stale replays do not)
        if event_type == MODIFIED or event_type == ADDED:
            out.append(Apply(obj))
        elif event_type == DELETED:
            out.append(Delete(obj))
        return True

    def _advance(self, rv: str) -> bool:
        """Move the resume point to `rv`; False when it is not newer (integers only compare)."""
        n = rv_int(rv)
        if n is not None:
            current = self._rv_int
            if current is not None and n <= current:
                return False
            self._rv_int = n
        self._rv = rv
        return True

    def _streaming_event(self, out: list[WatcherEvent], phase: Streaming, event_type: str, obj: Any,
                         now: float, resource_version: str | None) -> bool:
        if event_type == CONNECTED:
            self._sticky = None
            return True
        self.counters.events += 1
        if event_type == ERROR:
            out.extend(self._watch_failed(phase, classify_status(obj), now))
            return False
        self._sticky = None
        self._progress_at = now
        if not phase.init_sent:
            out.append(INIT)
            phase = self._phase = Streaming(phase.quorum, init_sent=True, started_at=phase.started_at)
        if now >= phase.started_at + self.config.list_deadline:
            out.extend(self._abandon_streaming(phase, now))
            return False
        if event_type == ADDED or event_type == MODIFIED:
            out.append(InitApply(obj))
        elif event_type == BOOKMARK:
            self.counters.bookmarks += 1
            if is_initial_events_end(obj):
                rv = resource_version if resource_version is not None else resource_version_of(obj)
                if rv is None:
                    error = WatchError(ErrorKind.OTHER, "initial-events-end bookmark without a resourceVersion")
                    out.extend(self._watch_failed(phase, error, now))
                    return False
                out.append(self._finish_cycle(rv))
                self._phase = Watching(phase.started_at)  # the same stream goes on
        # DELETED cannot happen before the end bookmark (initial events are synthetic ADDEDs).
        return True

    def on_timer(self, now: float) -> list[WatcherEvent]:
        """The `timer` came due: a streaming list still waiting for its end bookmark is abandoned
        (the driver must close the watch: `watch_open` is False); otherwise nothing."""
        phase = self._phase
        if type(phase) is Streaming and now >= phase.started_at + self.config.list_deadline:
            return self._abandon_streaming(phase, now)
        return []

    def _abandon_streaming(self, phase: Streaming, now: float) -> list[WatcherEvent]:
        # A server that ignores sendInitialEvents (no end bookmark ever comes) must not keep the
        # informer listing for good: LIST from now on.
        self._streaming_supported = False
        error = WatchError(ErrorKind.OTHER, f"no initial-events-end bookmark within {self.config.list_deadline}s "
                                            "(the server ignores sendInitialEvents?); using LIST")
        return self._watch_failed(phase, error, now)

    def on_watch_ended(self, now: float) -> list[WatcherEvent]:
        """The server closed the watch cleanly (its timeoutSeconds elapsed, or it went away)."""
        phase = self._open_watch_phase("on_watch_ended")
        if phase is None:
            return []
        self._note_healthy(phase, now)
        if type(phase) is Streaming:
            self.counters.streaming_fallbacks += 1
            error = WatchError(ErrorKind.TRANSPORT, "watch ended before the initial events were complete")
            self._fail(error, now, Relist(False, phase.quorum))
            return []
        elapsed = now - phase.started_at
        if self._progress_at is None and elapsed < self.config.min_watch_duration:
            error = WatchError(ErrorKind.TRANSPORT, f"watch ended after {elapsed:.3f}s without any event")
            self._fail(error, now, Rewatch(resume=True))
        else:
            self._phase = Rewatch(resume=True)
        return []

    def on_watch_error(self, error: WatchError, now: float) -> list[WatcherEvent]:
        """The WATCH request or its stream failed (HTTP error, transport error, idle timeout)."""
        phase = self._open_watch_phase("on_watch_error")
        if phase is None:
            return []
        return self._watch_failed(phase, error, now)

    def _watch_failed(self, phase: Watching | Streaming, error: WatchError, now: float) -> list[WatcherEvent]:
        self._note_healthy(phase, now)  # healthy until now; failing from now
        self._record(error, now)
        kind = error.kind
        if kind is ErrorKind.GONE:
            # Normal after a long watch: relist at once. Within min_watch_duration of the watch
            # start (events or not) pause briefly, so that a server that expires every watch at
            # once cannot make us relist in a tight loop.
            relist = Relist(self._streaming_supported, quorum=True)
            if now - phase.started_at < self.config.min_watch_duration:
                self._pause_after_gone(now, relist)
            else:
                self._phase = relist
            return []
        if type(phase) is Streaming:
            self.counters.streaming_fallbacks += 1
            fallback = Relist(False, phase.quorum)
            if kind is ErrorKind.REJECTED:
                # The server does not do streaming lists (or not with these parameters): LIST now.
                self._streaming_supported = False
                self._phase = fallback
            else:
                self._sleep(error, now, fallback)
            return []
        if kind is ErrorKind.NOT_FOUND or kind is ErrorKind.REJECTED:
            # The kind went away, or our resourceVersion was refused: start over with a list.
            self._sleep(error, now, Relist(self._streaming_supported))
        else:
            self._sleep(error, now, Rewatch(resume=True))
        return []

    # ------------------------------------------------------------------ inputs: control

    def wake(self) -> None:
        """Cut the current backoff short (e.g. the CRD we wait for was just installed)."""
        phase = self._phase
        if type(phase) is BackingOff:
            self._phase = phase.then

    def stop(self) -> None:
        """Stop for good: `next_action` returns None and later inputs are ignored."""
        self._phase = Stopped()

    # ------------------------------------------------------------------ helpers

    def _outstanding_list(self, what: str) -> Listing | None:
        """The phase when a LIST is outstanding; None when stopped; raises otherwise."""
        phase = self._phase
        if type(phase) is Listing and phase.outstanding:
            return phase
        if type(phase) is Stopped:
            return None
        raise ProtocolError(f"{what}() while no LIST is outstanding ({type(phase).__name__})")

    def _open_watch_phase(self, what: str) -> Watching | Streaming | None:
        """The phase when a WATCH is open; None when stopped; raises otherwise."""
        phase = self._phase
        if type(phase) is Watching or type(phase) is Streaming:
            return phase
        if type(phase) is Stopped:
            return None
        raise ProtocolError(f"{what}() while no WATCH is outstanding ({type(phase).__name__})")

    def _finish_cycle(self, resource_version: str) -> InitDone:
        self._rv = resource_version
        self._rv_int = rv_int(resource_version)
        self._synced = True
        self._phase = Rewatch(resume=False)
        return InitDone(resource_version)

    def _note_healthy(self, phase: Watching | Streaming, now: float) -> None:
        """A watch that made progress for `healthy_watch_duration` forgets earlier failures."""
        if self._progress_at is not None and now - phase.started_at >= self.config.healthy_watch_duration:
            self._failing_since = None
            self.backoff.reset()
            self.gone_backoff.reset()

    def _record(self, error: WatchError, now: float) -> None:
        self._last_error = error
        if self._failing_since is None:
            self._failing_since = now
        self.counters.errors += 1
        if error.kind is ErrorKind.FORBIDDEN:
            self._sticky = WatchState.FORBIDDEN
        elif error.kind is ErrorKind.NOT_FOUND:
            self._sticky = WatchState.WAITING_FOR_RESOURCE

    def _fail(self, error: WatchError, now: float, then: Relist | Listing | Rewatch) -> None:
        self._record(error, now)
        self._sleep(error, now, then)

    def _sleep(self, error: WatchError, now: float, then: Relist | Listing | Rewatch) -> None:
        delay = self.backoff.next_delay(now)
        if error.kind is ErrorKind.TOO_MANY_REQUESTS and error.retry_after is not None:
            delay = max(delay, error.retry_after)
        self._phase = BackingOff(now + delay, then)
        self.counters.backoffs += 1

    def _pause_after_gone(self, now: float, then: Relist) -> None:
        """Pause on `gone_backoff`, leaving `backoff` alone: a 410 is not a server failure."""
        delay = self.gone_backoff.next_delay(now)
        self._phase = BackingOff(now + delay, then)
        self.counters.backoffs += 1
