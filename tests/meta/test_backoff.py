"""The one `Backoff` (`kubeloop.meta`): growth, cap, jitter bounds, reset after a healthy period,
and the stateless `delay(n)` its per-key and per-request users call."""

from __future__ import annotations

import random

import pytest

from kubeloop.meta import Backoff


def test_delays_double_from_initial_up_to_the_cap_without_jitter() -> None:
    b = Backoff(jitter=0.0)
    delays = [b.next_delay(0.0) for _ in range(9)]
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0])
    assert b.attempts == 9


def test_jitter_adds_up_to_jitter_times_the_raw_delay() -> None:
    rng = random.Random(7)
    for _ in range(200):
        b = Backoff(random=rng.random)
        raws = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
        for raw in raws:
            d = b.next_delay(0.0)
            assert raw <= d < 2 * raw


def test_jitter_extremes_follow_the_random_source() -> None:
    low = Backoff(random=lambda: 0.0)
    high = Backoff(random=lambda: 0.999)
    assert low.next_delay(0.0) == pytest.approx(0.8)
    assert high.next_delay(0.0) == pytest.approx(0.8 * 1.999)
    half = Backoff(jitter=0.5, random=lambda: 1.0)
    assert half.next_delay(0.0) == pytest.approx(1.2)


def test_delays_spread_when_jittered() -> None:
    rng = random.Random(1)
    delays = {round(Backoff(random=rng.random).next_delay(0.0), 6) for _ in range(50)}
    assert len(delays) > 40


def test_reset_after_a_healthy_period_measured_from_the_end_of_the_last_delay() -> None:
    b = Backoff(jitter=0.0)
    assert b.next_delay(0.0) == pytest.approx(0.8)  # quiet from 0.8
    assert b.next_delay(1.0) == pytest.approx(1.6)  # quiet from 2.6
    assert b.next_delay(122.5) == pytest.approx(3.2)  # 119.9 s healthy: not yet
    # quiet from 125.7; 120 s later the count starts over
    assert b.next_delay(246.0) == pytest.approx(0.8)
    assert b.attempts == 1


def test_failures_less_than_reset_after_apart_keep_growing() -> None:
    b = Backoff(jitter=0.0)
    now = 0.0
    delays = []
    for _ in range(6):
        d = b.next_delay(now)
        delays.append(d)
        now += d + 100.0  # healthy for 100 s each time: below 120 s
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6])


def test_explicit_reset() -> None:
    b = Backoff(jitter=0.0)
    b.next_delay(0.0)
    b.next_delay(0.0)
    b.reset()
    assert b.attempts == 0
    assert b.next_delay(0.0) == pytest.approx(0.8)


@pytest.mark.parametrize(
    "kwargs",
    [{"initial": 0.0}, {"initial": 5.0, "maximum": 1.0}, {"factor": 0.5}, {"jitter": -1.0}, {"reset_after": 0.0}],
)
def test_invalid_parameters_are_rejected(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Backoff(**kwargs)  # type: ignore[arg-type]


def test_delay_is_stateless_and_matches_next_delay() -> None:
    b = Backoff(initial=0.005, maximum=1000.0, jitter=0.0, reset_after=None)
    assert [b.delay(n) for n in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert b.attempts == 0  # delay() counts nothing
    counted = Backoff(initial=0.005, maximum=1000.0, jitter=0.0, reset_after=None)
    assert [counted.next_delay(0.0) for _ in range(4)] == [b.delay(n) for n in range(4)]


def test_delay_far_past_the_cap_is_the_cap() -> None:
    b = Backoff(initial=0.005, maximum=1000.0, jitter=0.0)
    assert b.delay(64) == b.delay(5000) == 1000.0  # 2.0**5000 overflows a float: still the cap


def test_delay_draws_jitter_from_the_given_source() -> None:
    b = Backoff(initial=1.0, maximum=8.0, random=lambda: 0.0)
    assert b.delay(2) == 4.0
    assert b.delay(2, random=lambda: 0.5) == 6.0
    assert Backoff(jitter=0.0, random=lambda: pytest.fail("no jitter: nothing drawn")).delay(3) == pytest.approx(6.4)


def test_without_reset_after_only_reset_forgets() -> None:
    b = Backoff(jitter=0.0, reset_after=None)
    b.next_delay(0.0)
    assert b.next_delay(1e9) == pytest.approx(1.6)  # however long the quiet period
