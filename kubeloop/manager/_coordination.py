"""Who runs the leader-only work: the ``election`` runnable, leader election or sharding (not both).

- `Election` runs a `LeaderElector` (`_leader.py`): one replica at a time runs the ``leader``
  group; the Manager starts it when this replica is elected and stops it at once when the lease is
  lost. Asked to stop (graceful shutdown), it gives the lease up (``release_on_cancel``).
- `ShardingRunnable` runs a `ShardMember` (`_membership.py`): every replica runs the ``leader``
  group, each reconciling the keys its gate admits. Asked to stop, it deletes its membership
  Lease, so its keys move at once.

Either is ready once it knows who leads (or who the members are).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from kubeloop.client import Client
from kubeloop.controller import Controller, Request
from kubeloop.manager._leader import LeaderElector
from kubeloop.manager._lease import LeaderElection
from kubeloop.manager._membership import ShardMember
from kubeloop.manager._runnable import Stop, run_until_stopped
from kubeloop.manager._sharding import Sharding, key_of

__all__ = ["Election", "ShardingRunnable", "check_coordination"]


def check_coordination(leader_election: object, sharding: object) -> None:
    """One replica at a time (`LeaderElection`) or keys spread over replicas (`Sharding`), not both."""
    if leader_election is not None and not isinstance(leader_election, LeaderElection):
        raise TypeError(f"leader_election takes a kubeloop.LeaderElection(name, ...) or None, "
                        f"not {leader_election!r}")
    if sharding is not None and not isinstance(sharding, Sharding):
        raise TypeError(f"sharding takes a kubeloop.Sharding(name, ...) or None, not {sharding!r}")
    if sharding is not None and leader_election is not None:
        raise ValueError("choose leader_election or sharding, not both: sharding already decides which "
                         "replica runs each key")


async def _serve(stop: Stop, work: Coroutine[Any, Any, None], known: asyncio.Event) -> None:
    """Run ``work`` until stopped, telling the manager once ``known`` is set (it is ready then)."""

    async def tell() -> None:
        await known.wait()
        stop.changed()

    async with asyncio.TaskGroup() as tg:
        teller = tg.create_task(tell())
        await run_until_stopped(stop, work)
        teller.cancel()


def _unknown(known: asyncio.Event, what: str, last_error: str) -> list[str]:
    """The readiness of an elector or a member: not ready until it knows, with its last error."""
    return [] if known.is_set() else [what + (f" ({last_error})" if last_error else "")]


class Election:
    """Leader election as the ``election`` runnable (see the module docstring); ``on_change(leading)``
    is the elector's callback."""

    name = "leader election"
    needs_leader = False

    def __init__(self, client: Client, config: LeaderElection, on_change: Callable[[bool], None]) -> None:
        self.config = config
        self.elector = LeaderElector(client, config, on_change=on_change)

    async def run(self, stop: Stop) -> None:
        await _serve(stop, self.elector.run(), self.elector.known)
        if self.config.release_on_cancel:
            await self.elector.release()

    def readiness(self) -> list[str]:
        elector = self.elector
        return _unknown(elector.known, f"leader election: {elector.description}: leader not known yet",
                        elector.last_error)


class ShardingRunnable:
    """Sharding as the ``election`` runnable (see the module docstring); ``gated()``: the controllers
    that need leadership, whose keys it spreads (their in-flight requests, cached keys, resync)."""

    name = "sharding"
    needs_leader = False

    def __init__(self, client: Client, config: Sharding, gated: Callable[[], list[Controller]]) -> None:
        self._gated = gated
        self.member = ShardMember(client, config, in_flight=self._in_flight, on_gain=self._on_gain, keys=self._keys)

    def _in_flight(self) -> list[Request]:
        return [r for c in self._gated() for r in c.in_flight]

    def _keys(self) -> list[str]:
        return sorted({key_of(r.cluster, r.namespace, r.name) for c in self._gated() if c.ready
                       for r in c.cached_requests()})

    def _on_gain(self, gained: Callable[[str], bool]) -> None:
        for c in self._gated():
            if c.ready:
                c.enqueue_all(where=lambda r: gained(key_of(r.cluster, r.namespace, r.name)))

    async def run(self, stop: Stop) -> None:
        await _serve(stop, self.member.run(), self.member.known)
        await self.member.leave()

    def readiness(self) -> list[str]:
        member = self.member
        return _unknown(member.known, f"{member.description}: membership not known yet", member.last_error)
