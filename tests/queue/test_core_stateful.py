"""Hypothesis drives the core through random operation sequences with a fake clock.

Invariants checked after every step: a key is never handed out while it is
processing; the counters agree with each other. At the end, time is advanced
past every delay and everything is drained: every add must have been followed
by a hand-out of its key that started after it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kubeloop.queue import LOW_PRIORITY, WorkQueueCore

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
PRIORITIES = st.sampled_from([0, 0, 5, LOW_PRIORITY])
DELAYS = st.sampled_from([0.0, 0.5, 1.0, 3.0])


class CoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.q: WorkQueueCore[str] = WorkQueueCore(starvation_every=3)
        self.now = 0.0
        self.step = 0
        self.processing: set[str] = set()
        self.last_add: dict[str, int] = {}
        self.last_start: dict[str, int] = {}

    def _tick(self) -> int:
        self.step += 1
        return self.step

    @initialize(debounce=st.sampled_from([0.0, 0.0, 0.7]))
    def configure(self, debounce: float) -> None:
        """A third of the runs use a debounced queue."""
        self.q = WorkQueueCore(starvation_every=3, debounce=debounce, debounce_max_wait=2.0)

    @rule(key=KEYS, priority=PRIORITIES)
    def add(self, key: str, priority: int) -> None:
        self.last_add[key] = self._tick()
        self.q.add(key, now=self.now, priority=priority)

    @rule(key=KEYS, delay=DELAYS, priority=PRIORITIES)
    def add_after(self, key: str, delay: float, priority: int) -> None:
        self.last_add[key] = self._tick()
        self.q.add_after(key, delay, now=self.now, priority=priority)

    @rule(key=KEYS)
    def add_rate_limited(self, key: str) -> None:
        self.last_add[key] = self._tick()
        self.q.add_rate_limited(key, now=self.now)

    @rule(key=KEYS)
    def forget(self, key: str) -> None:
        self.q.forget(key)

    @rule()
    def pop(self) -> None:
        key = self.q.pop(self.now)
        if key is not None:
            assert key not in self.processing, f"{key} handed out twice"
            self.processing.add(key)
            self.last_start[key] = self._tick()

    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        if self.processing:
            key = data.draw(st.sampled_from(sorted(self.processing)))
            self.processing.discard(key)
            self.q.done(key, now=self.now)

    @rule(dt=st.sampled_from([0.1, 0.5, 1.0, 2.5]))
    def advance(self, dt: float) -> None:
        self.now += dt

    @invariant()
    def counters_agree(self) -> None:
        q = self.q
        assert q.processing_count == len(self.processing)
        assert all(q.is_processing(k) for k in self.processing)
        assert q.ready_count + q.waiting_count <= len(q)
        assert q.depth == len(q) - q.waiting_count
        deadline = q.next_deadline()
        assert (deadline is None) == (q.waiting_count == 0)

    def teardown(self) -> None:
        for key in sorted(self.processing):
            self.q.done(key, now=self.now)
        self.processing.clear()
        now = self.now + 10_000.0
        for _ in range(100):
            popped = self.q.pop(now)
            if popped is None:
                break
            self.last_start[popped] = self._tick()
            self.q.done(popped, now=now)
        assert len(self.q) == 0
        lost = [k for k, t in self.last_add.items() if self.last_start.get(k, -1) < t]
        assert lost == [], f"adds lost for {lost}"


CoreMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCoreMachine = CoreMachine.TestCase
