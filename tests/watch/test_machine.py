"""WatchMachine transitions, driven by hand with a fake clock (no I/O)."""

from __future__ import annotations

import random

import pytest

from kubeloop.client import WatchEvent
from kubeloop.watch import (
    INIT,
    Apply,
    BackingOff,
    Delete,
    ErrorKind,
    InitApply,
    InitDone,
    List,
    Listing,
    ListPage,
    ListSemantic,
    ProtocolError,
    Relist,
    Rewatch,
    Sleep,
    Stopped,
    Watch,
    WatchConfig,
    WatchError,
    Watching,
    WatchMachine,
    WatchState,
)

from .fakes import bookmark, obj, status


class ZeroRandom(random.Random):
    """Jitter 0: backoff delays are exactly 0.8, 1.6, 3.2, ..."""

    def random(self) -> float:
        return 0.0


def err(kind: ErrorKind, message: str = "boom", code: int | None = None, retry_after: float | None = None) -> WatchError:
    return WatchError(kind, message, code, None, retry_after)


GONE = err(ErrorKind.GONE, "too old resource version", 410)
TRANSPORT = err(ErrorKind.TRANSPORT, "connection reset")


def machine(**cfg: object) -> WatchMachine:
    """A machine; lists are quorum reads (`ListSemantic.MOST_RECENT`) unless `list_semantic` says
    otherwise: most tests here follow the paginated read's requests."""
    cfg.setdefault("list_semantic", ListSemantic.MOST_RECENT)
    return WatchMachine(WatchConfig(**cfg), rng=ZeroRandom(1))  # type: ignore[arg-type]


def to_watching(m: WatchMachine, now: float = 0.0, items: tuple[dict, ...] = (), rv: str = "10") -> Watch:
    a = m.next_action(now)
    assert isinstance(a, List)
    events = m.on_list_page(ListPage(list(items), rv), now)
    assert events[0] == INIT and events[-1] == InitDone(rv)
    w = m.next_action(now)
    assert isinstance(w, Watch)
    return w


# ---------------------------------------------------------------- list


def test_the_default_list_is_client_gos_resource_version_0_then_never_older_than_seen() -> None:
    m = WatchMachine(WatchConfig(), rng=ZeroRandom(1))
    assert m.next_action(0.0) == List(500, None, "0", "NotOlderThan")
    m.on_list_page(ListPage([obj("a", 5)], "10"), 0.0)
    w = m.next_action(0.0)
    assert isinstance(w, Watch) and w.resource_version == "10" and not w.send_initial_events
    m.on_watch_error(err(ErrorKind.NOT_FOUND, "the server could not find the requested resource", 404), 5.0)
    assert m.next_action(100.0) == List(500, None, "10", "NotOlderThan")


def test_initial_list_is_a_quorum_read_in_pages_of_500() -> None:
    m = machine()
    assert m.state is WatchState.IDLE and not m.synced
    a = m.next_action(0.0)
    assert a == List(limit=500, continue_token=None, resource_version=None, resource_version_match=None)
    assert m.state is WatchState.LISTING
    a1, b1 = obj("a", 5), obj("b", 7)
    events = m.on_list_page(ListPage([a1, b1], "10"), 0.0)
    assert events == [INIT, InitApply(a1), InitApply(b1), InitDone("10")]
    assert m.synced and m.resource_version == "10"
    w = m.next_action(0.0)
    assert isinstance(w, Watch)
    assert (w.resource_version, w.resource_version_match, w.allow_bookmarks, w.send_initial_events) == (
        "10", None, True, False)
    assert 300 <= w.timeout_seconds <= 600
    assert w.idle_timeout == w.timeout_seconds + 30.0
    assert m.state is WatchState.WATCHING and m.watch_open


def test_pagination_follows_continue_tokens_with_one_init() -> None:
    m = machine(page_size=2)
    assert m.next_action(0.0) == List(2, None, None, None)
    e1 = m.on_list_page(ListPage([obj("a", 1), obj("b", 2)], "9", "tok1"), 0.0)
    assert e1 == [INIT, InitApply(obj("a", 1)), InitApply(obj("b", 2))]
    assert not m.synced
    assert m.next_action(0.0) == List(2, "tok1", None, None)
    e2 = m.on_list_page(ListPage([obj("c", 3)], "9", None), 0.0)
    assert e2 == [InitApply(obj("c", 3)), InitDone("9")]
    assert (m.counters.lists, m.counters.list_requests, m.counters.relists) == (1, 2, 0)


def test_unpaginated_list_when_page_size_is_none() -> None:
    m = machine(page_size=None)
    assert m.next_action(0.0) == List(None, None, None, None)


def test_any_semantic_lists_from_the_watch_cache_then_never_older_than_seen() -> None:
    m = machine(list_semantic=ListSemantic.ANY)
    assert m.next_action(0.0) == List(500, None, "0", "NotOlderThan")
    m.on_list_page(ListPage([], "10"), 0.0)
    m.next_action(0.0)
    # 404 on the watch: relist, not older than what we saw
    m.on_watch_error(err(ErrorKind.NOT_FOUND, "the server could not find the requested resource", 404), 5.0)
    assert m.next_action(100.0) == List(500, None, "10", "NotOlderThan")
    m.on_list_page(ListPage([], "12"), 100.0)
    m.next_action(100.0)
    # after a 410 the list must be a quorum read
    m.on_watch_error(GONE, 200.0)
    assert m.next_action(200.0) == List(500, None, None, None)


def test_list_without_resource_version_is_an_error() -> None:
    m = machine()
    m.next_action(0.0)
    events = m.on_list_page(ListPage([obj("a", 1)], ""), 0.0)
    assert events == [INIT, InitApply(obj("a", 1))]
    assert not m.synced
    assert m.last_error is not None and "resourceVersion" in m.last_error.message
    assert isinstance(m.next_action(0.0), Sleep)
    assert m.next_action(0.8) == List(500, None, None, None)


def test_expired_continue_token_restarts_the_list_from_scratch_with_a_new_init() -> None:
    m = machine(page_size=1, list_semantic=ListSemantic.ANY)
    m.next_action(0.0)
    m.on_list_page(ListPage([obj("a", 1)], "9", "tok1"), 0.0)
    m.next_action(0.0)
    assert m.on_list_error(GONE, 1.0) == []
    # immediately, from scratch, quorum read
    assert m.next_action(1.0) == List(1, None, None, None)
    assert m.on_list_page(ListPage([obj("a", 1)], "11", "tokB"), 1.0) == [INIT, InitApply(obj("a", 1))]
    m.next_action(1.0)
    # a second 410 in a row backs off
    m.on_list_error(GONE, 2.0)
    assert m.next_action(2.0) == Sleep(pytest.approx(0.8))  # type: ignore[arg-type]
    assert m.next_action(2.8) == List(1, None, None, None)
    assert m.counters.lists == 3


def test_transport_error_mid_list_retries_the_same_page_after_backoff() -> None:
    m = machine(page_size=1)
    m.next_action(0.0)
    m.on_list_page(ListPage([obj("a", 1)], "9", "tok1"), 0.0)
    m.next_action(0.0)
    m.on_list_error(TRANSPORT, 0.5)
    assert m.state is WatchState.BACKING_OFF
    assert m.next_action(0.5) == Sleep(pytest.approx(0.8))  # type: ignore[arg-type]
    assert m.next_action(1.0) == Sleep(pytest.approx(0.3))  # type: ignore[arg-type]
    assert m.next_action(1.3) == List(1, "tok1", None, None)
    assert m.on_list_page(ListPage([obj("b", 2)], "9"), 1.3) == [InitApply(obj("b", 2)), InitDone("9")]
    assert m.counters.lists == 1


@pytest.mark.parametrize(
    ("kind", "state"),
    [(ErrorKind.FORBIDDEN, WatchState.FORBIDDEN), (ErrorKind.NOT_FOUND, WatchState.WAITING_FOR_RESOURCE)],
)
def test_403_and_404_on_list_are_sticky_states_with_the_server_message(kind: ErrorKind, state: WatchState) -> None:
    m = machine()
    message = 'pods is forbidden: User "system:serviceaccount:x:y" cannot list resource "pods"'
    m.next_action(0.0)
    m.on_list_error(err(kind, message, 403), 0.0)
    assert m.state is state
    assert m.last_error is not None and m.last_error.message == message
    assert isinstance(m.next_action(0.0), Sleep)
    assert m.state is state  # not "backing off": readiness must say why
    assert isinstance(m.next_action(0.8), List)
    assert m.state is state  # still, until a request succeeds
    m.on_list_error(err(kind, message, 403), 0.9)
    assert m.next_action(0.9) == Sleep(pytest.approx(1.6))  # type: ignore[arg-type]
    m.next_action(2.5)
    m.on_list_page(ListPage([], "3"), 2.5)
    assert m.state is not state
    m.next_action(2.5)
    assert m.state is WatchState.WATCHING
    assert m.last_error is not None  # history is kept


def test_wake_cuts_the_backoff_short() -> None:
    m = machine()
    m.next_action(0.0)
    m.on_list_error(err(ErrorKind.NOT_FOUND, "no such kind", 404), 0.0)
    assert isinstance(m.next_action(0.0), Sleep)
    m.wake()
    assert isinstance(m.next_action(0.1), List)


def test_429_waits_at_least_retry_after() -> None:
    m = machine()
    m.next_action(0.0)
    m.on_list_error(err(ErrorKind.TOO_MANY_REQUESTS, "slow down", 429, retry_after=7.0), 0.0)
    assert m.next_action(0.0) == Sleep(pytest.approx(7.0))  # type: ignore[arg-type]
    m2 = machine()
    m2.next_action(0.0)
    m2.on_list_error(err(ErrorKind.TOO_MANY_REQUESTS, "slow down", 429), 0.0)
    assert m2.next_action(0.0) == Sleep(pytest.approx(0.8))  # type: ignore[arg-type]


# ---------------------------------------------------------------- watch


def test_watch_events_become_apply_and_delete_and_advance_the_rv() -> None:
    m = machine()
    to_watching(m, items=(obj("a", 5),))
    assert m.on_watch_event("ADDED", obj("b", 11), 1.0) == [Apply(obj("b", 11))]
    assert m.on_watch_event("MODIFIED", obj("a", 12), 1.0) == [Apply(obj("a", 12))]
    assert m.on_watch_event("DELETED", obj("b", 13), 1.0) == [Delete(obj("b", 13))]
    assert m.resource_version == "13"
    assert m.on_watch_event("BOOKMARK", bookmark(20), 1.0) == []
    assert m.resource_version == "20"
    assert m.counters.events == 4 and m.counters.bookmarks == 1


def test_events_not_newer_than_the_current_rv_are_ignored() -> None:
    m = machine()
    to_watching(m, rv="10")
    assert m.on_watch_event("ADDED", obj("a", 10), 1.0) == []
    assert m.on_watch_event("MODIFIED", obj("a", 9), 1.0) == []
    assert m.on_watch_event("MODIFIED", obj("a", 11), 1.0) == [Apply(obj("a", 11))]
    assert m.on_watch_event("BOOKMARK", bookmark(5), 1.0) == []
    assert m.resource_version == "11"
    assert m.counters.stale_events == 2  # a bookmark is never a stale event (issue 11 item 14)


def test_idle_bookmarks_count_as_bookmarks_and_progress_not_as_stale_events() -> None:
    m = machine()
    to_watching(m, rv="10")
    for t in (60.0, 120.0):  # an idle server repeats the current resourceVersion
        assert m.on_watch_event("BOOKMARK", bookmark(10), t) == []
    assert (m.counters.bookmarks, m.counters.stale_events) == (2, 0)
    assert m.last_progress == 120.0


def test_non_integer_resource_versions_are_tracked_but_not_compared() -> None:
    m = machine()
    to_watching(m, rv="abc")
    assert m.on_watch_event("ADDED", obj("a", "xyz"), 1.0) == [Apply(obj("a", "xyz"))]
    assert m.resource_version == "xyz"


def test_event_resource_version_given_by_the_source_wins() -> None:
    m = machine()
    to_watching(m, rv="10")
    assert m.on_watch_event("ADDED", {"compact": True}, 1.0, resource_version="15") == [Apply({"compact": True})]
    assert m.resource_version == "15"
    assert m.on_watch_event("ADDED", {"compact": True}, 1.0, resource_version="14") == []


def test_clean_end_resumes_from_the_last_bookmark_without_relisting() -> None:
    m = machine()
    to_watching(m, rv="10")
    m.on_watch_event("BOOKMARK", bookmark(42), 100.0)
    assert m.on_watch_ended(300.0) == []
    w = m.next_action(300.0)
    assert isinstance(w, Watch) and w.resource_version == "42"
    assert (m.counters.lists, m.counters.watches, m.counters.watch_restarts) == (1, 2, 1)
    assert m.last_error is None


def test_long_quiet_watch_that_ends_cleanly_rewatches_immediately() -> None:
    m = machine()
    to_watching(m)
    m.on_watch_ended(400.0)
    assert isinstance(m.next_action(400.0), Watch)


def test_watch_ending_immediately_without_events_backs_off() -> None:
    m = machine()
    to_watching(m, now=0.0)
    m.on_watch_ended(0.1)
    assert m.last_error is not None and "without any event" in m.last_error.message
    assert m.next_action(0.1) == Sleep(pytest.approx(0.8))  # type: ignore[arg-type]
    w = m.next_action(0.9)
    assert isinstance(w, Watch) and w.resource_version == "10"
    m.on_watch_ended(1.0)
    assert m.next_action(1.0) == Sleep(pytest.approx(1.6))  # type: ignore[arg-type]


def test_transport_error_backs_off_and_resumes_without_relist() -> None:
    m = WatchMachine(WatchConfig(), rng=random.Random(3))
    to_watching(m)
    m.on_watch_event("ADDED", obj("a", 11), 50.0)
    m.on_watch_error(TRANSPORT, 60.0)
    assert m.state is WatchState.BACKING_OFF
    s = m.next_action(60.0)
    assert isinstance(s, Sleep) and 0.8 <= s.seconds < 1.6
    w = m.next_action(60.0 + s.seconds)
    assert isinstance(w, Watch) and w.resource_version == "11"
    assert m.counters.lists == 1 and m.counters.relists == 0


@pytest.mark.parametrize("form", ["http", "event"])
def test_410_relists_with_a_quorum_read_and_reports_the_difference(form: str) -> None:
    m = machine(list_semantic=ListSemantic.ANY)
    a = m.next_action(0.0)
    assert a == List(500, None, "0", "NotOlderThan")
    m.on_list_page(ListPage([obj("a", 5), obj("b", 6)], "10"), 0.0)
    m.next_action(0.0)
    m.on_watch_event("MODIFIED", obj("a", 11), 10.0)
    if form == "http":
        assert m.on_watch_error(GONE, 20.0) == []
    else:
        assert m.on_watch_event("ERROR", status(410, "Expired", "too old resource version: 11 (30)"), 20.0) == []
        assert not m.watch_open  # the driver must close the stream
    assert m.last_error is not None and m.last_error.kind is ErrorKind.GONE
    assert m.next_action(20.0) == List(500, None, None, None)  # immediately, quorum
    assert m.state is WatchState.LISTING
    events = m.on_list_page(ListPage([obj("a", 31)], "40"), 20.0)
    assert events == [INIT, InitApply(obj("a", 31)), InitDone("40")]  # b vanished: the consumer deletes it
    assert m.counters.relists == 1
    w = m.next_action(20.0)
    assert isinstance(w, Watch) and w.resource_version == "40"


def test_410_right_after_watch_start_backs_off_before_relisting() -> None:
    m = machine()
    to_watching(m, now=0.0)
    m.on_watch_error(GONE, 0.05)
    assert isinstance(m.next_action(0.05), Sleep)
    assert isinstance(m.next_action(1.0), List)


def test_410_right_after_a_few_events_still_backs_off() -> None:
    m = machine()
    to_watching(m, now=0.0)
    m.on_watch_event("ADDED", obj("a", 11), 0.01)
    m.on_watch_event("ERROR", status(410, "Expired", "gone"), 0.02)
    assert isinstance(m.next_action(0.02), Sleep)


def test_410_on_a_fresh_watch_never_grows_the_backoff() -> None:
    """After a fault storm the backoff is high; a 410 on the next fresh watch must not push it up.

    Issue 11 item 11: 410s pause on a backoff of their own, which starts at `backoff_initial`.
    """
    m = machine()
    to_watching(m, now=0.0)
    now = 0.0
    for _ in range(5):  # a storm: 0.8, 1.6, 3.2, 6.4, 12.8
        m.on_watch_error(TRANSPORT, now)
        s = m.next_action(now)
        assert isinstance(s, Sleep)
        now += s.seconds
        assert isinstance(m.next_action(now), Watch)
    attempts = m.backoff.attempts
    pauses = []
    for _ in range(3):  # healthy server, but every fresh watch meets a compacted resourceVersion
        m.on_watch_error(GONE, now + 0.1)
        s = m.next_action(now + 0.1)
        assert isinstance(s, Sleep)
        pauses.append(s.seconds)
        now += 0.1 + s.seconds
        assert isinstance(m.next_action(now), List)
        m.on_list_page(ListPage([], "50"), now)
        assert isinstance(m.next_action(now), Watch)
    assert pauses == pytest.approx([0.8, 1.6, 3.2])  # not 25.6
    assert m.backoff.attempts == attempts
    m.on_watch_error(TRANSPORT, now)  # the next real failure continues where the storm left off
    assert m.next_action(now) == Sleep(pytest.approx(25.6))  # type: ignore[arg-type]


def test_backoff_resets_once_a_watch_has_been_healthy_for_a_while() -> None:
    m = machine(healthy_watch_duration=10.0)
    to_watching(m, now=0.0)
    now = 0.0
    for _ in range(5):
        m.on_watch_error(TRANSPORT, now)
        s = m.next_action(now)
        assert isinstance(s, Sleep)
        now += s.seconds
        assert isinstance(m.next_action(now), Watch)
    m.on_watch_event("ADDED", obj("a", 11), now + 1.0)  # progress
    m.on_watch_error(TRANSPORT, now + 11.0)  # after 10 s of a healthy watch
    assert m.next_action(now + 11.0) == Sleep(pytest.approx(0.8))  # type: ignore[arg-type]


def test_a_watch_without_progress_does_not_reset_the_backoff() -> None:
    m = machine(healthy_watch_duration=10.0)
    to_watching(m, now=0.0)
    m.on_watch_error(TRANSPORT, 0.0)
    assert isinstance(m.next_action(0.0), Sleep)
    assert isinstance(m.next_action(1.0), Watch)
    m.on_watch_event("ADDED", obj("a", 5), 2.0)  # stale replay: no progress
    m.on_watch_error(TRANSPORT, 20.0)
    assert m.next_action(20.0) == Sleep(pytest.approx(1.6))  # type: ignore[arg-type]


def test_phases_carry_their_data() -> None:
    m = machine(page_size=1)
    assert m.phase == Relist(stream=False)
    m.next_action(0.0)
    assert m.phase == Listing(None, quorum=False, gone=0, init_sent=False, outstanding=True)
    m.on_list_page(ListPage([obj("a", 1)], "", continue_token="t1"), 0.0)
    assert m.phase == Listing("t1", quorum=False, gone=0, init_sent=True, outstanding=False)
    m.next_action(0.0)
    m.on_list_page(ListPage([obj("b", 2)], "10"), 0.0)
    assert m.phase == Rewatch(resume=False)
    m.next_action(3.0)
    assert m.phase == Watching(started_at=3.0)
    m.on_watch_error(TRANSPORT, 4.0)
    assert m.phase == BackingOff(4.8, Rewatch(resume=True))
    m.stop()
    assert m.phase == Stopped()


def test_other_error_events_close_the_watch_and_resume_after_backoff() -> None:
    m = machine()
    to_watching(m)
    m.on_watch_event("ADDED", obj("a", 11), 5.0)
    assert m.on_watch_event("ERROR", status(500, "InternalError", "etcd is sad"), 6.0) == []
    assert not m.watch_open
    assert m.last_error == WatchError(ErrorKind.SERVER, "etcd is sad", 500, "InternalError")
    assert isinstance(m.next_action(6.0), Sleep)
    w = m.next_action(7.0)
    assert isinstance(w, Watch) and w.resource_version == "11"


def test_403_on_watch_is_forbidden_until_the_server_accepts_a_watch() -> None:
    m = machine()
    to_watching(m)
    m.on_watch_error(err(ErrorKind.FORBIDDEN, 'cannot watch resource "pods"', 403), 5.0)
    assert m.state is WatchState.FORBIDDEN
    m.next_action(5.0)
    w = m.next_action(10.0)
    assert isinstance(w, Watch) and w.resource_version == "10"  # no relist for a 403
    assert m.state is WatchState.FORBIDDEN
    m.on_watch_event("CONNECTED", None, 10.0)
    assert m.state is WatchState.WATCHING
    m.on_watch_error(err(ErrorKind.FORBIDDEN, "again", 403), 20.0)
    m.next_action(20.0)
    m.next_action(30.0)
    m.on_watch_event("BOOKMARK", bookmark(11), 31.0)
    assert m.state is WatchState.WATCHING


def test_404_on_watch_waits_for_the_resource_and_relists() -> None:
    m = machine()
    to_watching(m)
    m.on_watch_error(err(ErrorKind.NOT_FOUND, "the server could not find the requested resource", 404), 5.0)
    assert m.state is WatchState.WAITING_FOR_RESOURCE
    assert isinstance(m.next_action(5.0), Sleep)
    assert isinstance(m.next_action(6.0), List)


def test_rejected_watch_relists_after_backoff() -> None:
    m = machine()
    to_watching(m)
    m.on_watch_error(err(ErrorKind.REJECTED, "bad resourceVersion", 400), 5.0)
    assert isinstance(m.next_action(5.0), Sleep)
    assert isinstance(m.next_action(6.0), List)


def test_backoff_resets_after_two_minutes_of_healthy_watching() -> None:
    m = machine()
    to_watching(m, now=0.0)
    delays = []
    now = 0.0
    for _ in range(4):
        m.on_watch_error(TRANSPORT, now)
        s = m.next_action(now)
        assert isinstance(s, Sleep)
        delays.append(s.seconds)
        now += s.seconds
        assert isinstance(m.next_action(now), Watch)
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4])
    now += 121.0  # healthy
    m.on_watch_event("ADDED", obj("a", 11), now)
    m.on_watch_error(TRANSPORT, now)
    assert m.next_action(now) == Sleep(pytest.approx(0.8))  # type: ignore[arg-type]


def test_watch_timeout_is_random_within_the_configured_range() -> None:
    m = WatchMachine(WatchConfig(watch_timeout=(10, 20), idle_margin=5.0), rng=random.Random(0))
    to_watching(m)
    seen = set()
    now = 0.0
    for _ in range(60):
        now += 100.0
        m.on_watch_ended(now)
        w = m.next_action(now)
        assert isinstance(w, Watch)
        assert 10 <= w.timeout_seconds <= 20 and w.idle_timeout == w.timeout_seconds + 5.0
        seen.add(w.timeout_seconds)
    assert len(seen) > 5


# ---------------------------------------------------------------- streaming lists


def test_streaming_list_turns_initial_events_into_init_apply_and_keeps_the_stream() -> None:
    m = machine(streaming_list=True)
    w = m.next_action(0.0)
    assert w == Watch(None, "NotOlderThan", w.timeout_seconds, True, True, w.timeout_seconds + 30.0)  # type: ignore[union-attr]
    assert m.state is WatchState.LISTING
    assert m.on_watch_event("ADDED", obj("a", 7), 0.1) == [INIT, InitApply(obj("a", 7))]
    assert m.on_watch_event("ADDED", obj("b", 3), 0.1) == [InitApply(obj("b", 3))]  # any RV order
    assert m.on_watch_event("BOOKMARK", bookmark(8), 0.1) == []  # a plain bookmark: not the end
    assert not m.synced
    assert m.on_watch_event("BOOKMARK", bookmark(20, initial_end=True), 0.2) == [InitDone("20")]
    assert m.synced and m.resource_version == "20" and m.state is WatchState.WATCHING
    assert m.on_watch_event("MODIFIED", obj("a", 21), 1.0) == [Apply(obj("a", 21))]
    assert m.on_watch_event("DELETED", obj("b", 22), 1.0) == [Delete(obj("b", 22))]
    m.on_watch_ended(400.0)
    w2 = m.next_action(400.0)
    assert isinstance(w2, Watch)
    assert (w2.resource_version, w2.send_initial_events, w2.resource_version_match) == ("22", False, None)
    assert m.counters.list_requests == 0 and m.counters.lists == 1


def test_a_run_of_watch_events_is_fed_as_one_up_to_the_event_that_closes_the_watch() -> None:
    """`on_watch_events` is `on_watch_event` for each event in order: a streaming list and the
    watch after it can arrive in one run; events after an ERROR belong to a closed stream."""
    m = machine(streaming_list=True)
    m.next_action(0.0)
    run = [WatchEvent("ADDED", obj("a", 7)), WatchEvent("BOOKMARK", bookmark(20, initial_end=True)),
           WatchEvent("MODIFIED", obj("a", 21)), WatchEvent("MODIFIED", obj("a", 21)),  # a stale replay
           WatchEvent("ERROR", status(500, "InternalError")), WatchEvent("DELETED", obj("a", 30))]
    assert m.on_watch_events(run, 0.1) == [INIT, InitApply(obj("a", 7)), InitDone("20"), Apply(obj("a", 21))]
    assert not m.watch_open and m.resource_version == "21"
    assert (m.counters.events, m.counters.stale_events, m.counters.bookmarks) == (5, 1, 1)
    with pytest.raises(ProtocolError):  # no WATCH outstanding any more, as with on_watch_event
        m.on_watch_events(run, 0.2)


def test_a_server_that_ignores_send_initial_events_falls_back_to_list_for_good() -> None:
    """Issue 11 item 5: no initial-events-end bookmark within list_deadline (the server ignores the
    parameter: plain ADDEDs and bookmarks) must not keep the informer listing: LIST from then on."""
    m = machine(streaming_list=True, list_deadline=10.0)
    m.next_action(0.0)
    assert m.on_watch_event("ADDED", obj("a", 7), 0.1) == [INIT, InitApply(obj("a", 7))]
    assert m.on_watch_event("BOOKMARK", bookmark(8), 5.0) == []
    assert m.on_watch_event("BOOKMARK", bookmark(9), 11.0) == []  # past the deadline: abandoned
    assert not m.watch_open and not m.streaming_supported and m.counters.streaming_fallbacks == 1
    assert m.failing_since == 11.0 and m.last_error is not None and "sendInitialEvents" in str(m.last_error)
    a = m.next_action(100.0)
    assert isinstance(a, List)


def test_a_quiet_streaming_list_is_abandoned_by_its_timer() -> None:
    """Issue 31 item 7: a server that ignores sendInitialEvents on a quiet resource sends nothing
    after its ADDEDs, so no event comes to check `list_deadline` by: the machine asks for a timer at
    the deadline, and `on_timer` then falls back to LIST as an event past the deadline would."""
    m = machine(streaming_list=True, list_deadline=10.0)
    assert m.timer is None  # nothing open yet
    assert isinstance(m.next_action(2.0), Watch)
    assert m.timer == 12.0
    assert m.on_watch_event("ADDED", obj("a", 7), 2.1) == [INIT, InitApply(obj("a", 7))]
    assert m.timer == 12.0  # an event does not move the deadline
    assert m.on_timer(11.9) == [] and m.watch_open  # early: nothing happens
    assert m.on_timer(12.0) == []
    assert not m.watch_open and not m.streaming_supported and m.counters.streaming_fallbacks == 1
    assert m.timer is None and m.last_error is not None and "sendInitialEvents" in str(m.last_error)
    assert isinstance(m.next_action(100.0), List)


def test_no_timer_once_the_initial_events_ended_or_without_streaming() -> None:
    m = machine(streaming_list=True, list_deadline=10.0)
    m.next_action(0.0)
    m.on_watch_event("BOOKMARK", bookmark(5, initial_end=True), 0.1)
    assert m.timer is None and m.on_timer(50.0) == [] and m.watch_open  # watching now: no deadline
    plain = machine()
    to_watching(plain)
    assert plain.timer is None


def test_streaming_list_of_nothing() -> None:
    m = machine(streaming_list=True)
    m.next_action(0.0)
    assert m.on_watch_event("BOOKMARK", bookmark(5, initial_end=True), 0.1) == [INIT, InitDone("5")]


def test_streaming_list_with_any_semantic_starts_at_rv_0() -> None:
    m = machine(streaming_list=True, list_semantic=ListSemantic.ANY)
    w = m.next_action(0.0)
    assert isinstance(w, Watch) and (w.resource_version, w.resource_version_match) == ("0", "NotOlderThan")


@pytest.mark.parametrize("form", ["http", "event"])
def test_streaming_rejected_by_the_server_falls_back_to_list_for_good(form: str) -> None:
    m = machine(streaming_list=True)
    m.next_action(0.0)
    if form == "http":
        m.on_watch_error(err(ErrorKind.REJECTED, "sendInitialEvents is forbidden for watch", 422), 0.1)
    else:
        m.on_watch_event("ERROR", status(400, "BadRequest", "resourceVersionMatch is forbidden for watch"), 0.1)
    assert not m.streaming_supported
    assert m.next_action(0.1) == List(500, None, None, None)  # at once
    assert m.on_list_page(ListPage([obj("a", 1)], "9"), 0.2) == [INIT, InitApply(obj("a", 1)), InitDone("9")]
    m.next_action(0.2)
    m.on_watch_event("ADDED", obj("b", 10), 5.0)
    m.on_watch_error(GONE, 6.0)
    assert isinstance(m.next_action(6.0), List)  # relists use LIST from now on
    assert m.counters.streaming_fallbacks == 1


def test_streaming_interrupted_before_the_end_falls_back_to_list_once() -> None:
    m = machine(streaming_list=True)
    m.next_action(0.0)
    assert m.on_watch_event("ADDED", obj("a", 7), 0.1) == [INIT, InitApply(obj("a", 7))]
    m.on_watch_ended(0.2)
    assert m.streaming_supported
    assert isinstance(m.next_action(0.2), Sleep)
    assert m.next_action(5.0) == List(500, None, None, None)
    assert m.on_list_page(ListPage([], "9"), 5.0) == [INIT, InitDone("9")]  # a new Init: drop the partial
    m.next_action(5.0)
    m.on_watch_event("ADDED", obj("b", 10), 6.0)
    m.on_watch_error(GONE, 7.0)
    w = m.next_action(7.0)
    assert isinstance(w, Watch) and w.send_initial_events  # streaming again on the next relist


def test_streaming_410_restarts_the_stream_with_a_quorum_read() -> None:
    m = machine(streaming_list=True, list_semantic=ListSemantic.ANY)
    m.next_action(0.0)
    m.on_watch_event("ADDED", obj("a", 7), 0.1)
    m.on_watch_event("ERROR", status(410, "Expired", "gone"), 2.0)
    w = m.next_action(2.0)
    assert isinstance(w, Watch) and w.send_initial_events and w.resource_version is None
    assert m.on_watch_event("ADDED", obj("a", 8), 2.1) == [INIT, InitApply(obj("a", 8))]


def test_streaming_transport_error_before_the_end_falls_back_after_backoff() -> None:
    m = machine(streaming_list=True)
    m.next_action(0.0)
    m.on_watch_error(TRANSPORT, 0.1)
    assert isinstance(m.next_action(0.1), Sleep)
    assert isinstance(m.next_action(1.0), List)


def test_end_bookmark_without_resource_version_is_an_error() -> None:
    m = machine(streaming_list=True)
    m.next_action(0.0)
    end = {"metadata": {"annotations": {"k8s.io/initial-events-end": "true"}}}
    assert m.on_watch_event("BOOKMARK", end, 0.1) == [INIT]
    assert not m.watch_open and not m.synced
    assert isinstance(m.next_action(0.1), Sleep)


# ---------------------------------------------------------------- protocol and lifecycle


def test_protocol_violations_raise() -> None:
    m = machine()
    with pytest.raises(ProtocolError):
        m.on_list_page(ListPage([], "1"), 0.0)
    m.next_action(0.0)
    with pytest.raises(ProtocolError):
        m.next_action(0.0)
    with pytest.raises(ProtocolError):
        m.on_watch_event("ADDED", obj("a", 1), 0.0)
    with pytest.raises(ProtocolError):
        m.on_watch_ended(0.0)


def test_stop_ends_everything_and_ignores_late_inputs() -> None:
    m = machine()
    to_watching(m)
    m.stop()
    assert m.state is WatchState.STOPPED and m.stopped
    assert m.next_action(1.0) is None
    assert m.on_watch_event("ADDED", obj("a", 11), 1.0) == []
    assert m.on_watch_ended(1.0) == []


@pytest.mark.parametrize(
    "cfg",
    [{"page_size": 0}, {"watch_timeout": (10, 5)}, {"watch_timeout": (0, 5)},
     {"streaming_list": True, "allow_bookmarks": False}, {"idle_margin": -1.0}],
)
def test_invalid_config_is_rejected(cfg: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        WatchConfig(**cfg)  # type: ignore[arg-type]


def test_describe_names_the_state_and_the_reason() -> None:
    m = machine()
    assert m.describe() == "Idle"
    m.next_action(0.0)
    m.on_list_error(err(ErrorKind.FORBIDDEN, 'pods is forbidden: User "x" cannot list resource "pods"', 403), 0.0)
    assert m.describe() == 'Forbidden: pods is forbidden: User "x" cannot list resource "pods"'
    m.next_action(1.0)
    m.on_list_page(ListPage([], "7"), 1.0)
    m.next_action(1.0)
    assert m.describe() == "Watching from resourceVersion 7"
    m.on_watch_error(TRANSPORT, 2.0)
    assert m.describe() == "BackingOff after Transport: connection reset"
    m.stop()
    assert m.describe() == "Stopped"
