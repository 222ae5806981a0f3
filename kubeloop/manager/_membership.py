"""`ShardMember`: one replica's membership Lease and its view of the others (the async shell
around `_sharding.ShardProtocol`).

    member = ShardMember(client, Sharding("widgets"), in_flight=..., on_gain=..., keys=...)
    task = tg.create_task(member.run())   # renew, list, adopt, every retry_period
    member.owns(request)                  # the gate the controllers ask before each reconcile
    ...
    task.cancel(); await member.leave()   # graceful: delete the Lease, the keys move at once

Every ``retry_period``: write our Lease (a renewal, recording the view we adopted), then list
the membership Leases and feed both to the protocol. When the live view changed, the keys we
would lose stop at once (the gate refuses them); as soon as none of them is in flight we adopt
the new view with an immediate write and list, without waiting for the next period. After each
list, ``on_gain(gained)`` re-enqueues the cached keys ``gained(key)`` accepts: the keys this replica
gained, and those of its own the gate refused meanwhile (level-triggered: a refused key was
dropped, not parked); each once, and never a key that stayed ours (`ShardProtocol.gains`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from kubeloop.client import ApiError, Client, Conflict, KubeloopClientError, NotFound
from kubeloop.controller import Request
from kubeloop.manager._lease import LEASE, LeaseRecord, next_record
from kubeloop.manager._rendezvous import View, owner, spread
from kubeloop.manager._sharding import (
    MEMBER_LABEL,
    VIEW_ANNOTATION,
    MemberLease,
    Sharding,
    ShardProtocol,
    key_of,
    lease_name,
    view_annotation,
)
from kubeloop.metrics import SHARD_COLLECTOR, ShardMap

__all__ = ["ShardMember"]

log = logging.getLogger("kubeloop.manager.sharding")

_DRAIN_POLL = 0.05  # seconds between checks that the reconciles of keys we lose have finished


class ShardMember:
    """This replica in a sharding group (see the module docstring).

    ``in_flight()``: the requests being reconciled now (by the gated controllers); ``on_gain(gained)``:
    re-enqueue the cached keys ``gained`` accepts; ``keys()``: every cached key, for the shard map.
    """

    def __init__(self, client: Client, config: Sharding, *,
                 in_flight: Callable[[], Iterable[Request]] = tuple,
                 on_gain: Callable[[Callable[[str], bool]], None] | None = None,
                 keys: Callable[[], Iterable[str]] = tuple,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.config = config
        self.identity = config.identity
        self.namespace = config.namespace or client.default_namespace
        self.lease_name = lease_name(config.name, config.identity)
        self.protocol = ShardProtocol(config.identity, config.renew_deadline)
        self.known = asyncio.Event()
        self.last_error = ""
        self._in_flight = in_flight
        self._on_gain = on_gain
        self._keys = keys
        self._clock = clock
        self._lease: dict[str, Any] | None = None
        self._members: View = ()
        self._held = False  # our tenure was valid at the last write (a lapse is logged once)

    @property
    def description(self) -> str:
        return f"sharding {self.config.name} ({self.config.mode}, leases in {self.namespace})"

    @property
    def members(self) -> View:
        """The live members at the last list (this replica included while its Lease is valid)."""
        return self.protocol.live

    def owns(self, request: Request) -> bool:
        """The gate: may this replica start reconciling ``request`` now? Always True in broadcast
        mode; in sharded mode see `ShardProtocol.owns`."""
        if self.config.mode == "broadcast":
            return True
        return self.protocol.owns(key_of(request.cluster, request.namespace, request.name), self._clock())

    def shard_map(self) -> ShardMap:
        """Members and how many of the cached keys each owns under the live view."""
        return ShardMap(self.config.name, self.identity, spread(self._keys(), self.protocol.live))

    def detail(self) -> str:
        """One line for ``/readyz?verbose``."""
        counts = self.shard_map().keys_per_member
        parts = ", ".join(f"{m}={n}" for m, n in counts.items())
        return (f"{self.description}: {len(counts)} member(s), this replica is {self.identity}; "
                f"keys per member: {parts or 'none'}")

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Renew, list and adopt until cancelled."""
        cfg = self.config
        log.info("%s: joining as %s (lease %s)", self.description, self.identity, self.lease_name)
        SHARD_COLLECTOR.register(self)
        try:
            while True:
                ok = await self._tick(self.protocol.adopted)
                deadline = self._clock() + cfg.retry_period
                while (left := deadline - self._clock()) > 0:
                    view = self.protocol.adoption(self._in_flight_keys()) if ok else None
                    if view is not None:  # adopt now: the keys we gain should not wait a period
                        ok = await self._tick(view)  # (after a failure: at the next period)
                        continue
                    await asyncio.sleep(min(left, _DRAIN_POLL) if self._changing() else left)
        finally:
            SHARD_COLLECTOR.unregister(self)

    def _changing(self) -> bool:
        return self.protocol.live != self.protocol.adopted

    def _in_flight_keys(self) -> list[str]:
        return [key_of(r.cluster, r.namespace, r.name) for r in self._in_flight()]

    async def _tick(self, adopt: View) -> bool:
        """Write our Lease recording ``adopt``, then list the members; True when both succeeded."""
        proto = self.protocol
        sent = self._clock()
        if self._held and not proto.tenure.valid(sent):
            self._held = False
            log.warning("%s: could not renew lease %s within the renew deadline (%.1fs; process stalled or API "
                        "server unreachable): starting no reconcile until it is renewed and the others have "
                        "agreed on the keys again", self.description, self.lease_name, self.config.renew_deadline)
        try:
            async with asyncio.timeout(max(0.1, self.config.renew_deadline - self.config.retry_period)):
                await self._write(adopt)
            proto.wrote(adopt, sent)
            self._held = wrote = True
        except (TimeoutError, ApiError, KubeloopClientError) as exc:
            proto.write_failed()
            self._lease = None
            wrote = False
            self._error(f"renewing lease {self.lease_name}: {exc or 'timed out'}")
        try:
            async with asyncio.timeout(max(0.1, self.config.renew_deadline - self.config.retry_period)):
                listed = await self.client.list(LEASE, namespace=self.namespace,
                                                label_selector={MEMBER_LABEL: self.config.name})
        except (TimeoutError, ApiError, KubeloopClientError) as exc:
            self._error(f"listing the membership leases: {exc or 'timed out'}")
            return False
        expired = proto.listed([MemberLease.from_lease(x) for x in listed.items], self._clock(), confirms=wrote)
        if wrote:
            self.last_error = ""
            self.known.set()
        self._note_members()
        if self.config.mode == "sharded":  # (no await since the list: the gate judges by what gains saw)
            gained = proto.gains(self._clock())
            if gained is not None and self._on_gain is not None:
                self._on_gain(gained)
        for lease in expired:
            await self._delete_expired(lease, listed.items)
        return wrote

    def _error(self, message: str) -> None:
        if message != self.last_error:
            log.warning("%s: %s", self.description, message)
        self.last_error = message

    def _note_members(self) -> None:
        live = self.protocol.live
        if live == self._members:
            return
        before = set(self._members)
        joined = [m for m in live if m not in before]
        left = [m for m in self._members if m not in set(live)]
        self._members = live
        keys = list(self._keys())
        mine = sum(1 for k in keys if owner(k, live) == self.identity)
        log.info("%s: members changed: %d member(s) [%s]; joined: %s; left: %s; this replica owns %d of %d "
                 "cached key(s)", self.description, len(live), ", ".join(live), ", ".join(joined) or "-",
                 ", ".join(left) or "-", mine, len(keys))

    # ------------------------------------------------------------------ writes

    def _body(self, adopt: View, base: dict[str, Any] | None) -> dict[str, Any]:
        current = LeaseRecord.from_lease(base) if base is not None else None
        rec = next_record(current, self.identity, self.config.lease_duration_seconds)
        meta: dict[str, Any] = dict((base or {}).get("metadata") or {})
        meta.update(name=self.lease_name, namespace=self.namespace)
        meta["labels"] = {**(meta.get("labels") or {}), MEMBER_LABEL: self.config.name}
        meta["annotations"] = {**(meta.get("annotations") or {}), VIEW_ANNOTATION: view_annotation(adopt)}
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": rec.spec()}

    async def _write(self, adopt: View) -> None:
        """Renew our Lease recording ``adopt`` (create it when missing; re-read on a conflict)."""
        lease = self._lease
        for _ in range(3):
            try:
                if lease is None:
                    try:
                        lease = await self.client.get(LEASE, self.lease_name, namespace=self.namespace)
                    except NotFound:
                        self._lease = await self.client.create(self._body(adopt, None))
                        return
                self._lease = await self.client.replace(self._body(adopt, lease))
                return
            except (Conflict, NotFound):
                lease = None  # someone deleted or touched it (an expiry clean-up): read again
        raise KubeloopClientError(f"lease {self.lease_name} kept changing under us")

    async def _delete_expired(self, lease: MemberLease, items: list[dict[str, Any]]) -> None:
        """Remove a peer's Lease that expired (a killed replica): later joiners need not wait a
        lease duration to learn it is dead. Guarded by its resourceVersion: a holder that renewed
        meanwhile keeps it."""
        rv = next((str((x.get("metadata") or {}).get("resourceVersion") or "") for x in items
                   if (x.get("metadata") or {}).get("name") == lease.name), "")
        try:
            await self.client.delete(LEASE, lease.name, namespace=self.namespace,
                                     preconditions={"resourceVersion": rv} if rv else None)
            log.info("%s: removed the expired lease of %s", self.description, lease.holder)
        except (ApiError, KubeloopClientError):
            pass  # someone else removed it, or it was renewed

    async def leave(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Graceful leave: delete our Lease so the others take our keys at once. Call after our
        reconciles stopped (the Manager drains them first). True when deleted."""
        self.protocol.tenure.end()
        try:
            async with asyncio.timeout(self.config.renew_deadline if timeout is None else timeout):
                await self.client.delete(LEASE, self.lease_name, namespace=self.namespace)
        except NotFound:
            return False
        except (TimeoutError, ApiError, KubeloopClientError) as exc:
            log.warning("%s: could not delete lease %s on leaving: %s", self.description, self.lease_name,
                        exc or "timed out")
            return False
        log.info("%s: left (deleted lease %s)", self.description, self.lease_name)
        return True
