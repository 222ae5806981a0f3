"""Rate limiters with a fake clock."""

from __future__ import annotations

import pytest

from kubeloop.queue import (
    BucketRateLimiter,
    ItemExponentialBackoff,
    MaxOf,
    WorkQueueCore,
    default_rate_limiter,
)


def test_item_exponential_backoff_defaults() -> None:
    rl = ItemExponentialBackoff()
    assert [rl.when("a", 0) for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    assert rl.num_requeues("a") == 3
    for _ in range(100):
        assert rl.when("a", 0) <= 1000.0
    assert rl.when("a", 0) == 1000.0
    rl.forget("a")
    assert rl.when("a", 0) == pytest.approx(0.005)


def test_token_bucket_allows_burst_then_spaces_at_qps() -> None:
    bucket = BucketRateLimiter(qps=10, burst=100)
    assert all(bucket.when(i, 0.0) == 0.0 for i in range(100))
    assert bucket.when("x", 0.0) == pytest.approx(0.1)
    assert bucket.when("y", 0.0) == pytest.approx(0.2)
    # After a second, 10 tokens were refilled; the two borrowed ones are paid back first.
    assert bucket.when("z", 1.0) == 0.0
    assert bucket.num_requeues("x") == 0


def test_token_bucket_refill_is_capped_at_burst() -> None:
    bucket = BucketRateLimiter(qps=10, burst=2)
    bucket.when("a", 0.0)
    assert bucket.when("b", 1000.0) == 0.0
    assert bucket.when("c", 1000.0) == 0.0
    assert bucket.when("d", 1000.0) == pytest.approx(0.1)


def test_max_of_takes_the_longest_delay() -> None:
    rl = MaxOf(ItemExponentialBackoff(0.005, 1000.0), BucketRateLimiter(qps=1, burst=1))
    assert rl.when("a", 0.0) == pytest.approx(0.005)  # bucket had a token
    assert rl.when("b", 0.0) == pytest.approx(1.0)  # bucket empty: 1 s beats 5 ms
    assert rl.num_requeues("a") == 1
    rl.forget("a")
    assert rl.num_requeues("a") == 0


def test_default_rate_limiter_has_the_overall_bucket() -> None:
    """Issue 11 item 5: controller-runtime's default, per-key backoff and a 10 qps / 100 burst
    bucket over all keys; a queue built without a limiter gets it."""
    assert isinstance(default_rate_limiter(bucket_qps=None), ItemExponentialBackoff)
    assert isinstance(default_rate_limiter(), MaxOf)
    q: WorkQueueCore[int] = WorkQueueCore()
    delays = [q.add_rate_limited(i, now=0) for i in range(101)]
    assert delays[:100] == pytest.approx([0.005] * 100)
    assert delays[100] == pytest.approx(0.1)


def test_invalid_parameters_are_rejected() -> None:
    with pytest.raises(ValueError):
        BucketRateLimiter(qps=0)
    with pytest.raises(ValueError):
        ItemExponentialBackoff(base=-1)
    with pytest.raises(ValueError):
        MaxOf()
