"""Randomised runs of the machine against an in-memory API with faults: the consumer's store must
end equal to the server (nothing missed, nothing duplicated), and no failure mode can make the
machine spin."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.watch import (
    ErrorKind,
    List,
    ListPage,
    ListSemantic,
    Sleep,
    Watch,
    WatchConfig,
    WatchError,
    WatchMachine,
    WatchState,
)

from .fakes import ApiFailure, FakeApi, Store, api_view, bookmark, status

FAULTS = [
    WatchError(ErrorKind.TRANSPORT, "reset"),
    WatchError(ErrorKind.SERVER, "etcd", 500),
    WatchError(ErrorKind.TOO_MANY_REQUESTS, "slow", 429, None, 2.0),
    WatchError(ErrorKind.FORBIDDEN, "forbidden", 403),
    WatchError(ErrorKind.NOT_FOUND, "not found", 404),
    WatchError(ErrorKind.TIMEOUT, "idle"),
    WatchError(ErrorKind.GONE, "expired", 410),
]


ListPageOK = ListPage([], "5")


class Sim:
    def __init__(self, seed: int, streaming: bool, server_streams: bool, semantic: ListSemantic, page_size: int) -> None:
        self.rng = random.Random(seed)
        self.api = FakeApi()
        for i in range(self.rng.randint(0, 12)):
            self.api.put(f"o{i}")
        self.machine = WatchMachine(
            WatchConfig(page_size=page_size, streaming_list=streaming, list_semantic=semantic),
            rng=random.Random(seed + 1),
        )
        self.server_streams = server_streams
        self.store = Store()
        self.now = 0.0

    def mutate(self) -> None:
        api, rng = self.api, self.rng
        for _ in range(rng.randint(0, 3)):
            r = rng.random()
            names = sorted(api.objects)
            if r < 0.45 or not names:
                api.put(f"o{rng.randint(0, 25)}")
            elif r < 0.75:
                api.put(rng.choice(names))
            else:
                api.delete(rng.choice(names))
        if rng.random() < 0.05:
            api.compact()

    def step(self, faults: bool) -> None:
        m, rng = self.machine, self.rng
        action = m.next_action(self.now)
        if isinstance(action, Sleep):
            self.now += action.seconds
            return
        if isinstance(action, List):
            self.do_list(action, faults)
        else:
            assert isinstance(action, Watch)
            self.do_watch(action, faults)
        self.now += rng.random() * 3

    def do_list(self, action: List, faults: bool) -> None:
        m = self.machine
        if faults and self.rng.random() < 0.15:
            self.store.feed(m.on_list_error(self.rng.choice(FAULTS), self.now))
            return
        try:
            page = self.api.list_page(action.limit, action.continue_token)
        except ApiFailure as e:
            self.store.feed(m.on_list_error(WatchError(ErrorKind.GONE, e.message, 410), self.now))
            return
        self.store.feed(m.on_list_page(page, self.now))

    def deliver(self, kind: str, o: object) -> bool:
        """Feed one event; False once the machine closed the watch."""
        self.store.feed(self.machine.on_watch_event(kind, o, self.now))
        self.now += self.rng.random() * 0.5
        return self.machine.watch_open

    def do_watch(self, action: Watch, faults: bool) -> None:
        m, rng, api = self.machine, self.rng, self.api
        if action.send_initial_events:
            if not self.server_streams:
                self.store.feed(m.on_watch_error(WatchError(ErrorKind.REJECTED, "no streaming", 422), self.now))
                return
            items = list(api.objects.values())
            rng.shuffle(items)
            for o in items:
                if faults and rng.random() < 0.03:
                    self.store.feed(m.on_watch_error(rng.choice(FAULTS), self.now))
                    return
                if not self.deliver("ADDED", o):
                    return
            if not self.deliver("BOOKMARK", bookmark(api.rv, initial_end=True)):
                return
            rv = api.rv
        else:
            assert action.resource_version is not None
            rv = int(action.resource_version)
        sent_old: list[tuple[str, object]] = []
        for _ in range(rng.randint(0, 6)):
            try:
                events = api.events_after(rv)
            except ApiFailure:
                if rng.random() < 0.5:
                    self.store.feed(m.on_watch_error(WatchError(ErrorKind.GONE, "expired", 410), self.now))
                else:
                    self.deliver("ERROR", status(410, "Expired", "too old resource version"))
                return
            for ev_rv, kind, o in events:
                rv = ev_rv
                if not self.deliver(kind, o):
                    return
                sent_old.append((kind, o))
            if sent_old and rng.random() < 0.2:  # a buggy server replaying an old event
                if not self.deliver(*rng.choice(sent_old)):
                    return
            if rng.random() < 0.3:
                if not self.deliver("BOOKMARK", bookmark(api.rv)):
                    return
                rv = api.rv
            self.mutate()
        if faults and rng.random() < 0.3:
            self.store.feed(m.on_watch_error(rng.choice(FAULTS), self.now))
        else:
            self.store.feed(m.on_watch_ended(self.now))

    def heal(self) -> None:
        """No more faults or changes: the machine must converge to the server's state."""
        m = self.machine
        for _ in range(200):
            action = m.next_action(self.now)
            if isinstance(action, Sleep):
                self.now += action.seconds
            elif isinstance(action, List):
                self.do_list(action, faults=False)
            else:
                assert isinstance(action, Watch)
                if not action.send_initial_events and action.resource_version is not None:
                    rv = int(action.resource_version)
                    if rv >= self.api.compacted:
                        for _ev_rv, kind, o in self.api.events_after(rv):
                            self.deliver(kind, o)
                        self.deliver("BOOKMARK", bookmark(self.api.rv))
                        if self.store.synced and m.state is WatchState.WATCHING:
                            return
                        m.on_watch_ended(self.now + 500)
                        continue
                self.do_watch(action, faults=False)
            self.now += 1
        raise AssertionError("did not converge")


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    streaming=st.booleans(),
    server_streams=st.booleans(),
    semantic=st.sampled_from(list(ListSemantic)),
    page_size=st.sampled_from([1, 3, 500]),
)
def test_store_converges_to_the_server_under_random_faults(
    seed: int, streaming: bool, server_streams: bool, semantic: ListSemantic, page_size: int
) -> None:
    sim = Sim(seed, streaming, server_streams, semantic, page_size)
    for _ in range(60):
        sim.mutate()
        sim.step(faults=True)
    sim.heal()
    assert sim.store.view() == api_view(sim.api)
    assert sim.machine.synced


def test_deletes_while_disconnected_surface_through_the_relist() -> None:
    sim = Sim(0, False, False, ListSemantic.MOST_RECENT, 500)
    api, m, store = sim.api, sim.machine, sim.store
    for name in ("a", "b", "c"):
        api.put(name)
    a = m.next_action(0.0)
    assert isinstance(a, List)
    store.feed(m.on_list_page(api.list_page(a.limit, None), 0.0))
    m.next_action(0.0)
    store.feed(m.on_watch_error(WatchError(ErrorKind.TRANSPORT, "reset"), 50.0))
    api.delete("b")
    api.put("d")
    api.compact()  # the history of the deletion is gone: only a relist can reveal it
    m.next_action(50.0)
    w = m.next_action(60.0)
    assert isinstance(w, Watch)
    with pytest.raises(ApiFailure):
        api.events_after(int(w.resource_version or 0))
    store.feed(m.on_watch_error(WatchError(ErrorKind.GONE, "expired", 410), 61.0))
    a = m.next_action(61.0)
    assert isinstance(a, List)
    store.feed(m.on_list_page(api.list_page(a.limit, None), 61.0))
    assert store.deleted_by_diff == ["b"]
    assert store.view() == api_view(api)


def _count_requests(m: WatchMachine, respond: object, seconds: float = 600.0) -> int:
    """Run a machine against a server answering every request via `respond`; each request takes 0 s."""
    now, requests = 0.0, 0
    for _ in range(10_000):
        if now >= seconds:
            return requests
        action = m.next_action(now)
        if isinstance(action, Sleep):
            assert action.seconds > 0
            now += action.seconds
            continue
        requests += 1
        respond(m, action, now)  # type: ignore[operator]
    raise AssertionError(f"busy loop: {requests} requests and the clock stuck at {now}")


@pytest.mark.parametrize("fault", [*FAULTS, WatchError(ErrorKind.TOO_MANY_REQUESTS, "slow", 429, None, 0.0), WatchError(ErrorKind.REJECTED, "bad", 400), WatchError(ErrorKind.OTHER, "bug")])
@pytest.mark.parametrize("where", ["list", "watch", "watch-event"])
def test_no_failure_mode_makes_the_machine_spin(fault: WatchError, where: str) -> None:
    def respond(m: WatchMachine, action: object, now: float) -> None:
        if isinstance(action, List):
            if where == "list":
                m.on_list_error(fault, now)
            else:
                m.on_list_page(ListPageOK, now)
        elif where == "watch-event":
            m.on_watch_event("ERROR", status(fault.code or 500, "", fault.message), now)
        else:
            m.on_watch_error(fault, now)

    m = WatchMachine(WatchConfig(), rng=random.Random(5))
    requests = _count_requests(m, respond)
    # a healthy-then-failing cycle costs 2 requests; backoff caps the rate near 1 per 30-60 s
    assert requests < 80, requests


@pytest.mark.parametrize("streaming", [False, True])
def test_watches_that_end_at_once_do_not_spin(streaming: bool) -> None:
    def respond(m: WatchMachine, action: object, now: float) -> None:
        if isinstance(action, List):
            m.on_list_page(ListPageOK, now)
        else:
            m.on_watch_ended(now)

    m = WatchMachine(WatchConfig(streaming_list=streaming), rng=random.Random(5))
    assert _count_requests(m, respond) < 40



@pytest.mark.parametrize("ending", ["end", "gone"])
def test_a_server_replaying_one_stale_event_and_closing_does_not_spin(ending: str) -> None:
    def respond(m: WatchMachine, action: object, now: float) -> None:
        if isinstance(action, List):
            m.on_list_page(ListPage([], "5"), now)
            return
        m.on_watch_event("ADDED", {"metadata": {"name": "a", "resourceVersion": "5"}}, now)
        if ending == "end":
            m.on_watch_ended(now)
        else:
            m.on_watch_event("ERROR", status(410, "Expired", "gone"), now)

    m = WatchMachine(WatchConfig(), rng=random.Random(5))
    assert _count_requests(m, respond) < 80
