"""Leader election decisions on a coordination.k8s.io/v1 Lease, with no I/O (client-go semantics).

Sharding's membership Leases (`_sharding.py`) reuse the same pieces: `LeaseRecord`, `Observer`,
`Tenure`, `next_record` and the timing rules (`check_timings`).

The async shell (`_leader.py`) fetches and writes the Lease; everything it decides comes from here:

- `LeaseRecord`: the Lease's spec as a value (holder, duration, acquire/renew times, transitions).
- `Observer`: remembers when, on *our* monotonic clock, the record last changed. Expiry is judged
  from that local time plus the record's ``leaseDurationSeconds``, never from the ``renewTime``
  written by another machine, so clock skew between replicas cannot cause two leaders.
- `verdict(...)`: may we write the lease now (acquire or renew), or does another holder own it?
- `next_record(...)` / `released_record(...)`: what to write.
- `Tenure`: until when (local monotonic clock) the leader may act: fencing, so a leader whose
  process stalled past its lease never starts work after it resumes.

Timestamps are ``metav1.MicroTime``: RFC 3339 in UTC with exactly six fractional digits.
"""

from __future__ import annotations

import math
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from kubeloop.meta import format_micro_time

__all__ = [
    "JITTER_FACTOR",
    "LEASE",
    "LeaderElection",
    "LeaseRecord",
    "Observer",
    "Tenure",
    "Verdict",
    "check_timings",
    "default_identity",
    "lease_duration_seconds",
    "micro_time",
    "next_record",
    "released_record",
    "verdict",
]

LEASE = "coordination.k8s.io/v1/Lease"

JITTER_FACTOR = 1.2
"""client-go's: attempts to acquire wait between ``retry_period`` and ``retry_period * (1 + JITTER_FACTOR)``
(candidates do not stampede); the renew deadline must exceed ``JITTER_FACTOR * retry_period``."""


def default_identity() -> str:
    """``<hostname>_<uuid>``, as controller-runtime names a candidate: unique per process."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def micro_time(when: datetime | None = None) -> str:
    """``metav1.MicroTime``: ``2026-01-02T03:04:05.123456Z`` (always six fractional digits)."""
    return format_micro_time(when or datetime.now(UTC))


@dataclass(frozen=True, kw_only=True)
class LeaseTimings:
    """Who holds a Lease and how it is timed (client-go defaults: 15 s / 10 s / 2 s): the part
    `LeaderElection` and `kubeloop.manager.Sharding` (membership Leases) share.

    - ``identity``: this candidate or replica; default ``hostname_uuid``.
    - ``lease_duration``: how long the others wait after the last renewal they saw before taking over.
    - ``renew_deadline``: a holder that could not renew for this long stops working (before the lease
      can expire for the others).
    - ``retry_period``: time between attempts (to acquire, and to renew).
    """

    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        if not self.identity:
            object.__setattr__(self, "identity", default_identity())
        check_timings(self.lease_duration, self.renew_deadline, self.retry_period)

    @property
    def lease_duration_seconds(self) -> int:
        """The whole seconds written to ``spec.leaseDurationSeconds`` (at least 1)."""
        return lease_duration_seconds(self.lease_duration)


@dataclass(frozen=True)
class LeaderElection(LeaseTimings):
    """Where the lease lives, who campaigns and the timing (`LeaseTimings`, keyword-only).

    - ``name``: the Lease's name (controller-runtime's ``LeaderElectionID``), shared by replicas.
    - ``namespace``: None means the client's default namespace (the pod's, in a cluster).
    - ``release_on_cancel``: on graceful shutdown, give the lease up so a standby takes over at
      once instead of after ``lease_duration``.
    """

    name: str
    namespace: str | None = None
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("leader election needs a lease name (leader_election_id)")
        super().__post_init__()


def check_timings(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """client-go's constraints on Lease timings (leader election and sharding membership alike);
    `ValueError` naming the broken one."""
    if min(lease_duration, renew_deadline, retry_period) <= 0:
        raise ValueError("lease_duration, renew_deadline and retry_period must be positive")
    if lease_duration <= renew_deadline:
        raise ValueError(f"lease_duration ({lease_duration}s) must be greater than "
                         f"renew_deadline ({renew_deadline}s)")
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(f"renew_deadline ({renew_deadline}s) must be greater than "
                         f"{JITTER_FACTOR} x retry_period ({retry_period}s)")


def lease_duration_seconds(lease_duration: float) -> int:
    """The whole seconds written to ``spec.leaseDurationSeconds`` (at least 1, rounded up)."""
    return max(1, math.ceil(lease_duration))


@dataclass(frozen=True)
class LeaseRecord:
    """A Lease's spec as the election reads and writes it."""

    holder: str = ""
    duration: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        return cls(holder=spec.get("holderIdentity") or "",
                   duration=int(spec.get("leaseDurationSeconds") or 0),
                   acquire_time=spec.get("acquireTime"), renew_time=spec.get("renewTime"),
                   transitions=int(spec.get("leaseTransitions") or 0))

    def spec(self) -> dict[str, Any]:
        """The Lease ``spec`` for this record."""
        out: dict[str, Any] = {"holderIdentity": self.holder, "leaseDurationSeconds": self.duration,
                               "leaseTransitions": self.transitions}
        if self.acquire_time:
            out["acquireTime"] = self.acquire_time
        if self.renew_time:
            out["renewTime"] = self.renew_time
        return out


class Verdict(Enum):
    """What the candidate may do with the lease it just read."""

    RENEW = "renew"            # we hold it: write a new renewTime
    ACQUIRE = "acquire"        # free, released or expired: take it
    HELD = "held"              # another holder's lease is still valid: wait


class Observer:
    """When (local monotonic seconds) the lease record last changed, as seen by this candidate."""

    def __init__(self) -> None:
        self.record: LeaseRecord | None = None
        self.observed_at: float = 0.0

    def observe(self, record: LeaseRecord, now: float) -> None:
        """Note the record just read; the clock restarts only when it differs from the last one."""
        if record != self.record:
            self.record = record
            self.observed_at = now

    def expires_in(self, now: float) -> float:
        """Seconds until the observed holder's lease runs out (<= 0: expired)."""
        if self.record is None:
            return 0.0
        return self.observed_at + self.record.duration - now


class Tenure:
    """Until when this leader may act, on the local monotonic clock (fencing).

    Counted from when the last successful acquire/renew write was *sent*: the other candidates
    start their ``leaseDurationSeconds`` when they see that record, which is later, so
    ``sent + renew_deadline`` (shorter than the lease duration) ends our tenure before anyone
    could take over, however long the process stalled in between. Work is handed out only while
    `valid`; a process that slept past its tenure finds it over when it wakes, before it starts
    anything.
    """

    def __init__(self, renew_deadline: float) -> None:
        self.renew_deadline = renew_deadline
        self.until = -math.inf

    def renewed(self, sent_at: float) -> None:
        """A write sent at ``sent_at`` made (or kept) us the holder."""
        self.until = max(self.until, sent_at + self.renew_deadline)

    def end(self) -> None:
        """Leadership is over (lost, released or stolen)."""
        self.until = -math.inf

    def remaining(self, now: float) -> float:
        """Seconds of tenure left (<= 0: over)."""
        return self.until - now

    def valid(self, now: float) -> bool:
        """True while the leader may still start work."""
        return now < self.until


def verdict(observer: Observer, identity: str, now: float) -> Verdict:
    """Decide from the last observed record (client-go's ``tryAcquireOrRenew`` checks)."""
    rec = observer.record
    if rec is None or not rec.holder:
        return Verdict.ACQUIRE
    if rec.holder == identity:
        return Verdict.RENEW
    if observer.expires_in(now) > 0:
        return Verdict.HELD
    return Verdict.ACQUIRE


def next_record(current: LeaseRecord | None, identity: str, duration: int, when: datetime | None = None) -> LeaseRecord:
    """The record to write to acquire or renew: acquireTime and transitions survive a renewal;
    taking the lease over from someone else (or from nobody) counts one transition."""
    now = micro_time(when)
    if current is not None and current.holder == identity:
        return LeaseRecord(identity, duration, current.acquire_time or now, now, current.transitions)
    transitions = current.transitions + 1 if current is not None else 0
    return LeaseRecord(identity, duration, now, now, transitions)


def released_record(current: LeaseRecord | None, when: datetime | None = None) -> LeaseRecord:
    """What a leader writes on graceful shutdown (client-go's ReleaseOnCancel): no holder, a 1 s
    duration, transitions kept, so any candidate may take it at once."""
    now = micro_time(when)
    return LeaseRecord("", 1, now, now, current.transitions if current is not None else 0)
