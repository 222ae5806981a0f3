"""Issue 11 item 9 (a leader whose event loop stalled past its lease starts no new work) and item 3
(a Manager informer never answers from a partial cache)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import pytest

from kubeloop.cache import Selection
from kubeloop.client import Client
from kubeloop.controller import CacheNotSynced
from kubeloop.manager import ManagedInformer
from kubeloop.manager._leader import LeaderElector
from kubeloop.manager._lease import LeaderElection


class Clock:
    """A monotonic clock the test moves by hand (a stalled process: time passes, nothing runs)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_stalled_leader_may_not_lead_when_it_resumes(client: Client, ns: str) -> None:
    clock = Clock()
    config = LeaderElection(f"fence-{secrets.token_hex(3)}", namespace=ns, lease_duration=15, renew_deadline=10,
                            retry_period=2)
    changes: list[bool] = []
    elector = LeaderElector(client, config, clock=clock, on_change=changes.append)
    task = asyncio.create_task(elector.run())
    try:
        for _ in range(500):
            if elector.is_leader:
                break
            await asyncio.sleep(0.01)
        assert elector.is_leader and elector.may_lead()
        clock.now += 9.0  # still inside the tenure
        assert elector.may_lead()
        clock.now += 1.5  # the loop "stalled" past renew_deadline: no renewal could run
        assert not elector.may_lead()  # fenced at once, before the renewal loop even woke up
        for _ in range(500):  # and the renewal loop then steps down (leader-only work stops)
            if False in changes:
                break
            await asyncio.sleep(0.01)
        assert changes[:2] == [True, False]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def test_a_shared_informer_read_before_its_first_list_raises_cache_not_synced() -> None:
    """Issue 11 item 3: never an empty or partial answer, with or without ``needs=``."""

    class Listing:
        cluster = "default"
        synced = False

        async def wait_synced(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
            return None

        def get(self, name: str, namespace: str = "") -> None:
            raise AssertionError("read from a partial cache")

    inf = ManagedInformer("v1/Pod", Selection(), cluster=None, indexes={})
    inf._handles["default"] = Listing()  # type: ignore[assignment]
    with pytest.raises(CacheNotSynced, match="v1/Pod on cluster 'default' has not synced"):
        inf.get("p", "ns")
