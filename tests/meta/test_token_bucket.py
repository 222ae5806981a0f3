"""The one token bucket (`kubeloop.meta.TokenBucket`): client QPS, queue bucket, event spam filter."""

from __future__ import annotations

import pytest

from kubeloop.meta import TokenBucket


def test_token_bucket() -> None:
    tb = TokenBucket(qps=10, burst=3, now=0.0)
    assert [tb.reserve(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert tb.reserve(0.0) == pytest.approx(0.1)
    assert tb.reserve(0.0) == pytest.approx(0.2)  # reservations queue up behind each other
    assert tb.reserve(10.0) == 0.0  # refilled (capped at burst)
    with pytest.raises(ValueError):
        TokenBucket(qps=0, burst=1)


def test_try_take_never_goes_into_debt() -> None:
    tb = TokenBucket(qps=1 / 300, burst=2, now=0.0)
    assert tb.try_take(0.0) and tb.try_take(0.0)
    assert not tb.try_take(0.0) and not tb.try_take(299.0)
    assert tb.try_take(300.0)  # one token refilled after 300 s
    assert tb.available(300.0) == pytest.approx(0.0)


def test_time_running_backwards_refills_nothing() -> None:
    tb = TokenBucket(qps=10, burst=1, now=5.0)
    assert tb.reserve(5.0) == 0.0
    assert tb.reserve(4.0) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="burst >= 1"):
        TokenBucket(qps=1, burst=0)
