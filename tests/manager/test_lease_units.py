"""The leader-election decisions (no I/O): expiry on the local clock, records to write, validation."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from kubeloop.manager._lease import (
    LeaderElection,
    LeaseRecord,
    Observer,
    Tenure,
    Verdict,
    default_identity,
    micro_time,
    next_record,
    released_record,
    verdict,
)

T = datetime(2026, 1, 2, 3, 4, 5, 120000, tzinfo=UTC)


def test_micro_time_has_six_fractional_digits_in_utc() -> None:
    assert micro_time(T) == "2026-01-02T03:04:05.120000Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", micro_time())


def test_defaults_are_client_go_timings_and_identity_is_unique() -> None:
    le = LeaderElection("op")
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (15.0, 10.0, 2.0)
    assert le.release_on_cancel and le.lease_duration_seconds == 15
    assert le.identity != LeaderElection("op").identity
    assert "_" in default_identity()
    assert LeaderElection("op", lease_duration=0.5, renew_deadline=0.3, retry_period=0.1).lease_duration_seconds == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"lease_duration": 10, "renew_deadline": 10}, "must be greater than renew_deadline"),
    ({"renew_deadline": 2, "retry_period": 2}, "1.2 x retry_period"),
    ({"retry_period": 0}, "positive"),
])
def test_invalid_timings_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        LeaderElection("op", **kwargs)
    with pytest.raises(ValueError, match="lease name"):
        LeaderElection("")


def test_record_round_trips_through_a_lease() -> None:
    rec = LeaseRecord("me", 15, "a", "b", 3)
    assert LeaseRecord.from_lease({"spec": rec.spec()}) == rec
    assert LeaseRecord.from_lease({}) == LeaseRecord()


def test_free_or_released_lease_is_acquired_at_once() -> None:
    obs = Observer()
    assert verdict(obs, "me", 0.0) is Verdict.ACQUIRE  # no lease yet
    obs.observe(LeaseRecord("", 1, "x", "x", 4), 100.0)
    assert verdict(obs, "me", 100.0) is Verdict.ACQUIRE  # released: no need to wait


def test_other_holder_expires_on_the_local_clock_not_its_renew_time() -> None:
    obs = Observer()
    rec = LeaseRecord("other", 15, "2000-01-01T00:00:00.000000Z", "2000-01-01T00:00:00.000000Z", 0)
    obs.observe(rec, 100.0)  # renewTime is ancient, but we only just saw it: wait a full duration
    assert verdict(obs, "me", 100.0) is Verdict.HELD
    assert verdict(obs, "me", 114.9) is Verdict.HELD
    obs.observe(rec, 110.0)  # the same record again: the clock does not restart
    assert obs.observed_at == 100.0
    assert verdict(obs, "me", 115.1) is Verdict.ACQUIRE
    renewed = LeaseRecord("other", 15, rec.acquire_time, "2000-01-01T00:00:02.000000Z", 0)
    obs.observe(renewed, 115.2)  # a renewal restarts it
    assert verdict(obs, "me", 129.0) is Verdict.HELD
    assert obs.expires_in(129.0) == pytest.approx(1.2)


def test_own_lease_is_renewed() -> None:
    obs = Observer()
    obs.observe(LeaseRecord("me", 15, "a", "a", 2), 0.0)
    assert verdict(obs, "me", 1000.0) is Verdict.RENEW


def test_next_record_keeps_acquire_time_on_renewal_and_counts_transitions() -> None:
    first = next_record(None, "me", 15, T)
    assert first == LeaseRecord("me", 15, micro_time(T), micro_time(T), 0)
    later = datetime(2026, 1, 2, 3, 4, 7, tzinfo=UTC)
    renewed = next_record(first, "me", 15, later)
    assert renewed.acquire_time == first.acquire_time and renewed.renew_time == micro_time(later)
    assert renewed.transitions == 0
    taken = next_record(LeaseRecord("other", 15, "x", "y", 5), "me", 15, later)
    assert taken == LeaseRecord("me", 15, micro_time(later), micro_time(later), 6)


def test_release_clears_the_holder_and_shortens_the_lease() -> None:
    rel = released_record(LeaseRecord("me", 15, "a", "b", 7), T)
    assert rel.holder == "" and rel.duration == 1 and rel.transitions == 7
    assert rel.spec()["holderIdentity"] == "" and rel.spec()["leaseDurationSeconds"] == 1


def test_tenure_ends_renew_deadline_after_the_write_was_sent() -> None:
    """Issue 11 item 9: fencing on the monotonic clock; a process that stalled past its tenure
    finds it over when it resumes, whatever it believed before."""
    t = Tenure(renew_deadline=10.0)
    assert not t.valid(0.0)
    t.renewed(sent_at=100.0)
    assert t.valid(109.9) and t.remaining(105.0) == pytest.approx(5.0)
    assert not t.valid(110.0)  # the others may take over 15 s after they saw the write: we stop at 10
    t.renewed(sent_at=95.0)  # an older write answering late never shortens nor extends wrongly
    assert t.valid(109.9)
    t.end()
    assert not t.valid(100.0)
