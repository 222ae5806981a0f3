"""Leader election on the emulator with two managers in one process (short timings).

Lease 1 s, renew deadline 0.7 s, retry 0.2 s: a hand-over after a kill takes about a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest_asyncio

from kubeloop import Context, Controller, LeaderElection, Manager, Request, Result
from kubeloop.client import Client
from kubeloop.manager._lease import LEASE, LeaseRecord, micro_time
from kubeloop.metrics import REGISTRY

from ..builders import cm
from .conftest import make_client

LEASE_NAME = "test-operator"


def election(identity: str, *, release: bool = True) -> LeaderElection:
    return LeaderElection(LEASE_NAME, identity=identity, lease_duration=1.0, renew_deadline=0.7,
                          retry_period=0.2, release_on_cancel=release)


@pytest_asyncio.fixture
async def replicas(apiserver: Any, ns: str) -> AsyncIterator[Callable[..., Manager]]:
    """Makes replicas (a Manager with one leader-only controller each); all stopped at the end."""
    made: list[tuple[Manager, Client]] = []

    def make(identity: str, seen: list[tuple[str, str]], *, release: bool = True) -> Manager:
        m, c = replica(apiserver, identity, seen, release=release, ns=ns)
        made.append((m, c))
        return m

    yield make
    for m, c in made:
        with contextlib.suppress(Exception):
            await m.close()
        await c.close()


def replica(apiserver: Any, identity: str, seen: list[tuple[str, str]], *, release: bool = True,
            ns: str) -> tuple[Manager, Client]:
    client = make_client(apiserver)

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        seen.append((identity, req.name))
        return None

    m = Manager(client, leader_election=dataclasses.replace(election(identity, release=release), namespace=ns))
    m.add(Controller("configmaps", for_="v1/ConfigMap", namespace=ns, reconcile=reconcile))
    return m, client


async def holder(client: Client, ns: str) -> LeaseRecord:
    return LeaseRecord.from_lease(await client.get(LEASE, LEASE_NAME, namespace=ns))


async def until(cond: Any, within: float) -> float:
    start = time.monotonic()
    while not cond():
        assert time.monotonic() - start < within, "condition not met in time"
        await asyncio.sleep(0.01)
    return time.monotonic() - start


async def test_exactly_one_leads_standby_is_warm_and_release_hands_over_at_once(
        replicas: Any, apiserver: Any, client: Client, ns: str) -> None:
    await client.create(cm("before", namespace=ns))
    seen: list[tuple[str, str]] = []
    a = replicas("a", seen)
    b = replicas("b", seen)
    await a.start()
    assert await a.wait_leader(5)
    await b.start()
    assert await b.wait_ready(5)  # a standby is ready: its caches are synced, the leader is known
    assert b.elector is not None and b.elector.leader == "a" and not b.is_leader
    assert not b.controllers[0].ready  # leader-only: not running on the standby
    await asyncio.sleep(0.5)  # several retry periods: still exactly one leader
    assert a.is_leader and not b.is_leader
    assert (await holder(client, ns)).holder == "a"
    await client.create(cm("during", namespace=ns))
    await until(lambda: ("a", "during") in seen, 3)
    assert all(who == "a" for who, _ in seen)
    # the standby's informer has everything already (warm standby)
    assert b.cache is not None
    names = {o["metadata"]["name"] for inf in b.cache.informers() for o in inf.store.list()
             if inf.resource == "core/v1/configmaps"}
    assert {"before", "during"} <= names
    lists_before = (apiserver.stats()["requests"].get("list core/v1/configmaps")
                    if apiserver.is_emulator else None)
    t0 = time.monotonic()
    await a.close()  # graceful: releases the lease
    rec = await holder(client, ns)
    assert rec.holder in ("", "b")
    assert await b.wait_leader(3)
    took = time.monotonic() - t0
    assert took < 0.95, f"hand-over after release took {took:.2f}s (should not wait for expiry)"
    await client.create(cm("after", namespace=ns))
    await until(lambda: ("b", "after") in seen and ("b", "before") in seen, 3)
    if apiserver.is_emulator:  # the new leader reconciled from its warm cache: no new list
        assert apiserver.stats()["requests"].get("list core/v1/configmaps") == lists_before
    rec = await holder(client, ns)
    assert rec.holder == "b" and rec.transitions == 1 and rec.duration == 1
    assert rec.renew_time and rec.renew_time.endswith("Z") and len(rec.renew_time.split(".")[1]) == 7
    await b.close()
    assert (await holder(client, ns)).holder == ""


async def test_killed_leader_is_replaced_within_the_lease_duration(replicas: Any, apiserver: Any, client: Client, ns: str) -> None:
    seen: list[tuple[str, str]] = []
    a = replicas("a", seen, release=False)
    b = replicas("b", seen)
    await a.start()
    assert await a.wait_leader(5)
    await b.start()
    assert await b.wait_ready(5)
    t0 = time.monotonic()
    await a.close()  # stops renewing without releasing: as if the process died
    assert (await holder(client, ns)).holder == "a"
    assert await b.wait_leader(3)
    took = time.monotonic() - t0
    # b must wait for the lease (1 s from the last renewal it saw) to run out, and no longer
    assert 0.5 < took < 1.0 + 2 * 0.2 * 2.2 + 0.3, took
    await client.create(cm("x", namespace=ns))
    await until(lambda: ("b", "x") in seen, 3)
    await b.close()


async def test_stolen_lease_stops_leader_work_at_once(replicas: Any, apiserver: Any, client: Client, ns: str) -> None:
    seen: list[tuple[str, str]] = []
    a = replicas("a", seen)
    b = replicas("b", seen)
    await a.start()
    await b.start()
    assert await a.wait_leader(5)
    assert a.controllers[0].ready
    lease = await client.get(LEASE, LEASE_NAME, namespace=ns)
    before = LeaseRecord.from_lease(lease).transitions
    now = micro_time()
    lease["spec"].update(holderIdentity="intruder", leaseDurationSeconds=2, acquireTime=now, renewTime=now,
                         leaseTransitions=before + 1)
    t0 = time.monotonic()
    await client.replace(lease)  # another holder writes the Lease (a stale resourceVersion would conflict)
    slow_before = REGISTRY.get_sample_value("leader_election_slowpath_total", {"name": LEASE_NAME}) or 0
    lost = await until(lambda: not a.is_leader and not a.controllers[0].ready, 2)
    # the leader's renewal with its cached Lease conflicted, so it re-read the Lease (the slow path)
    assert (REGISTRY.get_sample_value("leader_election_slowpath_total", {"name": LEASE_NAME}) or 0) > slow_before
    assert lost < 0.6, f"leader work stopped {lost:.2f}s after the lease was stolen"
    assert not b.is_leader
    await client.create(cm("while-stolen", namespace=ns))
    await asyncio.sleep(0.5)
    assert not any(name == "while-stolen" for _, name in seen), "reconciled while another holder led"
    # nobody renews the intruder's lease: after its 2 s one of our replicas takes over again
    await until(lambda: a.is_leader or b.is_leader, 4)
    took = time.monotonic() - t0
    assert took > 1.5, f"took over after {took:.2f}s, before the intruder's lease expired"
    await until(lambda: any(name == "while-stolen" for _, name in seen), 3)
    new = await holder(client, ns)
    assert new.holder in ("a", "b") and new.transitions == before + 2
    await a.close()
    await b.close()
