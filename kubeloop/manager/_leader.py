"""`LeaderElector`: Lease-based leader election, the async shell around `_lease.py`'s decisions.

    elector = LeaderElector(client, LeaderElection("my-operator", lease_duration=15, renew_deadline=10,
                                                   retry_period=2), on_change=lambda leading: ...)
    task = tg.create_task(elector.run())     # candidate -> leader -> (lost) -> candidate ...
    ...
    task.cancel(); await elector.release()   # graceful shutdown: give the lease up

As client-go: a candidate reads the Lease every ``retry_period`` (jittered) and takes it when it is
free, released, or not renewed for ``leaseDurationSeconds`` of *its own* clock; writes are guarded
by the Lease's resourceVersion, so of two candidates racing only one wins. The leader renews every
``retry_period`` with the Lease it last wrote (no read: the fast path) and falls back to a read
when that write conflicts (counted in ``leader_election_slowpath_total``). It steps down when it
could not renew for ``renew_deadline`` seconds. One difference, for safety: a leader that reads
the Lease and finds another valid holder (the lease was stolen or taken over) steps down at once
instead of retrying until its deadline.

Fencing (`Tenure`): the renew deadline is counted from when the last successful write was *sent*,
on the monotonic clock; `may_lead()` is False as soon as it has passed, even before this loop got
to run again (a reconcile blocked the event loop, the process was paused). The Manager's workers
ask `may_lead()` before each reconcile, so a leader that resumes after its lease could have been
taken over starts nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from kubeloop import metrics
from kubeloop.client import ApiError, Client, Conflict, KubeloopClientError, NotFound
from kubeloop.manager import _lease
from kubeloop.manager._lease import JITTER_FACTOR, LEASE, LeaderElection, LeaseRecord, Observer, Tenure
from kubeloop.meta import Backoff

__all__ = ["LeaderElector"]

log = logging.getLogger("kubeloop.manager._leader")

class LeaderElector:
    """One candidate for one Lease (see the module docstring).

    ``on_change(leading)`` is called (on the event loop, synchronously) whenever this candidate
    starts or stops leading. ``known`` is set once the first attempt got an answer (we lead, or we
    saw who does): readiness waits for it.
    """

    def __init__(self, client: Client, config: LeaderElection, *,
                 on_change: Callable[[bool], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.config = config
        self.namespace = config.namespace or client.default_namespace
        self.identity = config.identity
        self.observer = Observer()
        self.is_leader = False
        self.leader: str | None = None
        self.known = asyncio.Event()
        self.last_error = ""
        self.transitions = 0  # times this candidate became leader
        self._on_change = on_change
        self._clock = clock
        self._lease: dict[str, Any] | None = None  # the Lease as we last wrote it (fast-path renewals)
        self._holding = False  # our last write made us the holder (release needs it)
        self._stolen = False
        self.tenure = Tenure(config.renew_deadline)
        # a candidate that does not lead says so (0), not nothing: a standby's /metrics has the sample
        metrics.LEADER_STATUS.labels(config.name).set(0)

    def may_lead(self) -> bool:
        """True while this candidate leads *and* its tenure has not run out on the monotonic clock:
        the check to make before starting leader-only work (see the module docstring)."""
        return self.is_leader and self.tenure.valid(self._clock())

    @property
    def description(self) -> str:
        return f"lease {self.namespace}/{self.config.name}"

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Campaign and lead until cancelled; losing the lease makes us a candidate again."""
        try:
            while True:
                await self._acquire()
                await self._renew_until_lost()
        finally:
            self._set_leader(False)

    async def _acquire(self) -> None:
        cfg = self.config
        log.info("%s: candidate %s waiting to lead", self.description, self.identity)
        # client-go's wait.JitterUntil: every attempt waits retry_period plus up to JITTER_FACTOR of it
        pause = Backoff(cfg.retry_period, cfg.retry_period, factor=1.0, jitter=JITTER_FACTOR, reset_after=None)
        while True:
            if await self._attempt():
                self._set_leader(True)
                return
            await asyncio.sleep(pause.delay(0))

    async def _renew_until_lost(self) -> None:
        cfg, tenure = self.config, self.tenure
        while True:
            # wake at the end of the tenure at the latest: leader-only work stops on time
            await asyncio.sleep(max(0.0, min(cfg.retry_period, tenure.remaining(self._clock()))))
            remaining = tenure.remaining(self._clock())
            ok = False
            if remaining > 0:
                try:
                    async with asyncio.timeout(remaining):
                        ok = await self._attempt()
                except TimeoutError:
                    self.last_error = f"renewal did not answer within {remaining:.1f}s"
            if ok:
                continue
            if self._stolen:
                log.warning("%s: lost leadership: the lease is now held by %s", self.description, self.leader)
                break
            if not tenure.valid(self._clock()):
                log.warning("%s: lost leadership: could not renew for %.1fs (%s)", self.description,
                            cfg.renew_deadline, self.last_error or "no answer")
                break
        self._lease = None
        self._set_leader(False)

    def _set_leader(self, leading: bool) -> None:
        if leading == self.is_leader:
            return
        self.is_leader = leading
        if not leading:
            self.tenure.end()
        metrics.LEADER_STATUS.labels(self.config.name).set(1 if leading else 0)
        if leading:
            self.transitions += 1
            self._stolen = False
            log.info("%s: %s became the leader", self.description, self.identity)
        if self._on_change is not None:
            self._on_change(leading)

    # ------------------------------------------------------------------ one attempt

    async def _attempt(self) -> bool:
        """Acquire or renew once; True when we hold the lease afterwards."""
        cfg = self.config
        now = self._clock()
        if self.is_leader and self._lease is not None:  # fast path: renew what we wrote last
            current = LeaseRecord.from_lease(self._lease)
            rec = _lease.next_record(current, self.identity, cfg.lease_duration_seconds)
            try:
                self._remember(await self._write(self._lease, rec), rec, now)
                return True
            except Conflict:
                metrics.SLOWPATH_TOTAL.labels(cfg.name).inc()
                log.debug("%s: renewal conflicted; re-reading the lease", self.description)
            except (ApiError, KubeloopClientError) as exc:
                self.last_error = f"renewing: {exc}"
                return False
        try:
            lease = await self.client.get(LEASE, cfg.name, namespace=self.namespace)
        except NotFound:
            return await self._create(now)
        except (ApiError, KubeloopClientError) as exc:
            self.last_error = f"reading the lease: {exc}"
            return False
        rec = LeaseRecord.from_lease(lease)
        self.observer.observe(rec, now)
        self._note_leader(rec.holder or None)
        decision = _lease.verdict(self.observer, self.identity, now)
        if decision is _lease.Verdict.HELD:
            self._holding = False
            self._lease = None
            self.tenure.end()
            if self.is_leader:
                self._stolen = True
            self.known.set()
            return False
        new = _lease.next_record(rec, self.identity, cfg.lease_duration_seconds)
        try:
            self._remember(await self._write(lease, new), new, now)
            return True
        except Conflict:
            self.last_error = "another candidate wrote the lease first"
            return False
        except (ApiError, KubeloopClientError) as exc:
            self.last_error = f"writing the lease: {exc}"
            return False

    async def _create(self, now: float) -> bool:
        cfg = self.config
        rec = _lease.next_record(None, self.identity, cfg.lease_duration_seconds)
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": self.namespace}, "spec": rec.spec()}
        try:
            created = await self.client.create(body)
        except (ApiError, KubeloopClientError) as exc:  # AlreadyExists: someone else was faster
            self.last_error = f"creating the lease: {exc}"
            return False
        self._remember(created, rec, now)
        return True

    async def _write(self, lease: Mapping[str, Any], rec: LeaseRecord) -> dict[str, Any]:
        body = dict(lease)
        body["spec"] = rec.spec()
        return await self.client.replace(body)  # guarded by metadata.resourceVersion

    def _remember(self, lease: dict[str, Any], rec: LeaseRecord, now: float) -> None:
        """Our write sent at ``now`` succeeded: we hold the lease; the tenure counts from ``now``."""
        self._lease = lease
        self._holding = True
        self.tenure.renewed(now)
        self.observer.observe(rec, now)
        self._note_leader(self.identity)
        self.last_error = ""
        self.known.set()

    def _note_leader(self, holder: str | None) -> None:
        if holder != self.leader:
            if holder and holder != self.identity:
                log.info("%s: the leader is %s", self.description, holder)
            self.leader = holder

    # ------------------------------------------------------------------ release

    async def release(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Give the lease up if we hold it (client-go's ReleaseOnCancel); True when released.

        Call after the leader-only work stopped and `run()` was cancelled.
        """
        if not self._holding:
            return False
        timeout = self.config.renew_deadline if timeout is None else timeout
        try:
            async with asyncio.timeout(timeout):
                lease = self._lease
                for _ in range(2):
                    if lease is None:
                        lease = await self.client.get(LEASE, self.config.name, namespace=self.namespace)
                    current = LeaseRecord.from_lease(lease)
                    if current.holder != self.identity:
                        return False  # not ours any more: nothing to release
                    try:
                        await self._write(lease, _lease.released_record(current))
                    except Conflict:
                        lease = None
                        continue
                    self._holding = False
                    self._lease = None
                    log.info("%s: released the lease", self.description)
                    return True
        except (TimeoutError, ApiError, KubeloopClientError) as exc:
            log.warning("%s: could not release the lease: %s", self.description, exc or "timed out")
        return False
