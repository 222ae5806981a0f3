"""Guarantees of the sans-IO work queue core, driven with a fake clock (plain floats)."""

from __future__ import annotations

import pytest

from kubeloop.queue import (
    LOW_PRIORITY,
    ItemExponentialBackoff,
    WorkQueueCore,
)
from kubeloop.queue._stats import QueueStats


def drain(q: WorkQueueCore[str], now: float = 0.0) -> list[str]:
    """Pop and finish every ready key, in order."""
    out = []
    while (key := q.pop(now)) is not None:
        out.append(key)
        q.done(key, now=now)
    return out


# ---------------------------------------------------------------- dedup and FIFO


def test_fifo_order() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    for key in "abc":
        q.add(key, now=0)
    assert drain(q) == ["a", "b", "c"]


def test_adding_a_queued_key_does_nothing() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0)
    q.add("b", now=0)
    q.add("a", now=0)
    assert len(q) == 2
    assert drain(q) == ["a", "b"]


def test_a_key_is_never_handed_out_twice_at_once() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0)
    assert q.pop(0) == "a"
    assert q.is_processing("a")
    q.add("a", now=1)
    assert q.pop(1) is None  # queued, but blocked behind its own run
    assert "a" in q


def test_added_during_processing_runs_exactly_once_more_after_done() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0)
    assert q.pop(0) == "a"
    for t in range(3):
        q.add("a", now=t)
    q.done("a", now=5)
    assert q.pop(5) == "a"
    assert q.pop(5) is None
    q.done("a", now=6)
    assert q.pop(6) is None
    assert len(q) == 0


def test_key_requeued_after_done_goes_to_the_back() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0)
    assert q.pop(0) == "a"
    q.add("a", now=0)
    q.add("b", now=0)
    q.done("a", now=0)
    assert drain(q) == ["b", "a"]


def test_done_for_unknown_key_is_ignored() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.done("nope", now=0)
    q.add("a", now=0)
    q.done("a", now=0)  # queued but not processing: no effect
    assert q.pop(0) == "a"


def test_hot_key_flood_does_not_starve_other_keys() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    others = [f"k{i}" for i in range(50)]
    q.add("hot", now=0)
    for other in others:
        q.add(other, now=0)
    served: list[str] = []
    for _ in range(len(others) + 2):
        key = q.pop(0)
        assert key is not None
        served.append(key)
        for _ in range(100):  # the hot key changes constantly, also while it is processed
            q.add("hot", now=0)
        q.done(key, now=0)
    # Every other key ran within one round; dedup held the hot key to one run per round.
    assert set(others) <= set(served)
    assert served.count("hot") == 2


# ---------------------------------------------------------------- delays


def test_add_after_becomes_ready_at_its_time() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add_after("a", 5, now=10)
    assert q.next_deadline() == 15
    assert q.waiting_count == 1
    assert q.depth == 0
    assert q.pop(14.9) is None
    assert q.pop(15) == "a"
    assert q.next_deadline() is None


def test_add_after_earliest_request_wins() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add_after("a", 10, now=0)
    q.add_after("a", 5, now=0)
    q.add_after("a", 20, now=0)
    assert q.next_deadline() == 5
    assert q.pop(4) is None
    assert q.pop(5) == "a"
    q.done("a", now=5)
    assert q.pop(100) is None  # the stale later requests left nothing behind


def test_plain_add_expedites_a_delayed_key() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add_after("a", 100, now=0)
    q.add("a", now=1)
    assert q.pop(1) == "a"
    q.done("a", now=1)
    assert q.pop(200) is None


def test_delayed_keys_are_ordered_by_ready_time() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add_after("late", 3, now=0)
    q.add_after("early", 1, now=0)
    q.add("now", now=0)
    assert drain(q, now=5) == ["now", "early", "late"]


def test_add_after_while_processing_waits_for_done_and_delay() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0)
    assert q.pop(0) == "a"
    q.add_after("a", 10, now=0)
    q.done("a", now=1)
    assert q.pop(5) is None
    assert q.next_deadline() == 10
    assert q.pop(10) == "a"


def test_zero_or_negative_delay_is_immediate() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add_after("a", 0, now=0)
    q.add_after("b", -1, now=0)
    assert drain(q) == ["a", "b"]


# ---------------------------------------------------------------- rate limiting


def test_rate_limited_backoff_doubles_from_5ms_and_forget_resets() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    delays = []
    now = 0.0
    for _ in range(4):
        delays.append(q.add_rate_limited("a", now=now))
        now += 10
        assert q.pop(now) == "a"
        q.done("a", now=now)
    assert delays == pytest.approx([0.005, 0.01, 0.02, 0.04])
    assert q.num_requeues("a") == 4
    q.forget("a")
    assert q.num_requeues("a") == 0
    assert q.add_rate_limited("a", now=now) == pytest.approx(0.005)


def test_rate_limited_add_is_delayed() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(rate_limiter=ItemExponentialBackoff(1.0, 8.0))
    q.add_rate_limited("a", now=0)
    assert q.pop(0.5) is None
    assert q.pop(1.0) == "a"


def test_backoff_is_per_key_and_capped() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    for _ in range(30):
        last = q.add_rate_limited("a", now=0)
    assert last == 1000.0
    assert q.add_rate_limited("b", now=0) == pytest.approx(0.005)


# ---------------------------------------------------------------- priorities


def test_higher_priority_first_fifo_within_priority() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(starvation_every=0)
    q.add("low1", now=0, priority=LOW_PRIORITY)
    q.add("mid1", now=0)
    q.add("high", now=0, priority=10)
    q.add("low2", now=0, priority=LOW_PRIORITY)
    q.add("mid2", now=0)
    assert drain(q) == ["high", "mid1", "mid2", "low1", "low2"]


def test_readding_keeps_the_highest_priority_and_moves_to_the_end_of_its_band() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(starvation_every=0)
    q.add("a", now=0)
    q.add("x", now=0, priority=LOW_PRIORITY)
    q.add("b", now=0)
    q.add("x", now=0)  # promoted from -100 to 0: goes after a and b
    q.add("a", now=0, priority=LOW_PRIORITY)  # lower priority is ignored
    assert q.priority_of("x") == 0
    assert q.priority_of("a") == 0
    assert drain(q) == ["a", "b", "x"]


def test_pop_with_priority_returns_the_queued_priority() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0, priority=LOW_PRIORITY)
    assert q.pop_with_priority(0) == ("a", LOW_PRIORITY)


def test_priority_of_a_delayed_key_is_kept_when_it_becomes_ready() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(starvation_every=0)
    q.add_after("a", 1, now=0, priority=5)
    q.add("b", now=0)
    assert drain(q, now=2) == ["a", "b"]


def test_starvation_guard_serves_low_priority_under_a_steady_stream() -> None:
    every = 8
    q: WorkQueueCore[str] = WorkQueueCore(starvation_every=every)
    lows = [f"low{i}" for i in range(20)]
    for key in lows:
        q.add(key, now=0, priority=LOW_PRIORITY)
    counter = 0
    for _ in range(4):  # a backlog of priority-0 keys that never runs dry
        q.add(f"live{counter}", now=0)
        counter += 1
    served = []
    for _ in range(every * len(lows)):
        popped = q.pop(0)
        assert popped is not None
        served.append(popped)
        q.done(popped, now=0)
        q.add(f"live{counter}", now=0)
        counter += 1
    assert [k for k in served if k.startswith("low")] == lows  # all of them, in FIFO order
    # ... while live keys still got the rest of the capacity.
    assert sum(k.startswith("live") for k in served) >= (every - 1) * len(lows)


def test_without_the_guard_low_priority_starves() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(starvation_every=0)
    q.add("low", now=0, priority=LOW_PRIORITY)
    q.add("live0", now=0)
    for i in range(1, 200):
        popped = q.pop(0)
        assert popped is not None
        assert popped != "low"
        q.done(popped, now=0)
        q.add(f"live{i}", now=0)


def test_starvation_guard_takes_the_oldest_ready_key() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(starvation_every=2)
    q.add("old-low", now=0, priority=LOW_PRIORITY)
    q.add("a", now=0)
    q.add("b", now=0)
    q.add("c", now=0)
    assert drain(q) == ["a", "old-low", "b", "c"]


# ---------------------------------------------------------------- debounce


def test_debounce_burst_yields_one_run_after_quiet_period() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(debounce=0.5)
    for i in range(5):
        q.add("a", now=i * 0.1)  # changes at 0.0 .. 0.4
    assert q.pop(0.8) is None  # last change at 0.4: quiet until 0.9
    assert q.next_deadline() == pytest.approx(0.9)
    assert q.pop(0.9) == "a"
    q.done("a", now=1.0)
    assert q.pop(10) is None


def test_debounce_is_bounded_by_max_wait() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(debounce=0.5, debounce_max_wait=2.0)
    t = 0.0
    popped_at = None
    while t < 10:
        q.add("a", now=t)  # never quiet
        if q.pop(t) == "a":
            popped_at = t
            break
        t = round(t + 0.1, 10)
    assert popped_at == pytest.approx(2.0)


def test_debounce_leaves_a_ready_key_alone() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(debounce=0.5)
    q.add("a", now=0)
    q.promote_due(0.5)
    q.add("a", now=0.6)
    assert q.pop(0.6) == "a"


def test_debounce_during_processing_waits_for_quiet_after_done() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(debounce=1.0)
    q.add("a", now=0)
    assert q.pop(1) == "a"
    q.add("a", now=1.5)
    q.add("a", now=2.0)
    q.done("a", now=2.1)
    assert q.pop(2.9) is None
    assert q.pop(3.0) == "a"


def test_debounce_does_not_delay_add_after() -> None:
    q: WorkQueueCore[str] = WorkQueueCore(debounce=5.0)
    q.add_after("a", 1, now=0)
    assert q.pop(1) == "a"


def test_debounce_max_wait_must_cover_debounce() -> None:
    with pytest.raises(ValueError):
        WorkQueueCore(debounce=2.0, debounce_max_wait=1.0)


# ---------------------------------------------------------------- shutdown


def test_shutdown_stops_hand_out_and_adds_but_done_still_works() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0)
    q.add("b", now=0)
    assert q.pop(0) == "a"
    q.shutdown()
    assert q.shutting_down
    assert q.pop(0) is None
    q.add("c", now=0)
    assert "c" not in q
    q.done("a", now=1)
    assert q.processing_count == 0


# ---------------------------------------------------------------- stats


def test_stats_count_accepted_adds_retries_and_durations() -> None:
    stats = QueueStats()
    q: WorkQueueCore[str] = WorkQueueCore(stats=stats)
    q.add("a", now=0)
    q.add("a", now=0)  # deduplicated: not an add
    q.add("b", now=0)
    assert stats.adds == 2
    assert q.pop(2) == "a"  # queued for 2 s
    q.done("a", now=5)  # worked for 3 s
    q.add_rate_limited("a", now=5)
    assert stats.retries == 1
    assert stats.adds == 3
    assert stats.queue_duration.count == 1
    assert stats.queue_duration.total == pytest.approx(2.0)
    assert stats.work_duration.total == pytest.approx(3.0)
    # 2 s falls in the le=10 bucket (bounds 1e-8 .. 1e3)
    assert stats.queue_duration.counts[9] == 1


def test_depth_counts_queued_not_delayed_keys() -> None:
    q: WorkQueueCore[str] = WorkQueueCore()
    q.add("a", now=0)
    q.add_after("b", 5, now=0)
    assert q.depth == 1
    assert len(q) == 2
    q.promote_due(5)
    assert q.depth == 2
