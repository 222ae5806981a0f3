"""`Manager(sharding=...)` with two replicas in one process (short timings: lease 1 s, renew
deadline 0.7 s, retry 0.2 s): keys split between them, the shard map on /metrics and /readyz,
broadcast mode, graceful leave. The multi-process story (kill -9, SIGSTOP) is in
test_sharding_processes.py."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from prometheus_client import generate_latest

from kubeloop import Context, Controller, LeaderElection, Manager, Request, Result, Sharding
from kubeloop.client import Client
from kubeloop.manager._lease import LEASE
from kubeloop.metrics import REGISTRY
from kubeloop.testing import eventually

from ..builders import cm
from ..cli.test_run import closed_port, error_line, kubeconfig_for, kubeloop_run
from .conftest import make_client

N = 40


def sharding(identity: str, ns: str, **kw: Any) -> Sharding:
    return Sharding("sharding-test", namespace=ns, identity=identity, lease_duration=1.0, renew_deadline=0.7,
                    retry_period=0.2, **kw)


@pytest_asyncio.fixture
async def replicas(apiserver: Any, ns: str) -> AsyncIterator[Callable[..., Manager]]:
    """Makes replicas (a Manager with one ConfigMap controller, recording who reconciled what)."""
    made: list[tuple[Manager, Client]] = []

    def make(identity: str, seen: dict[str, set[str]], **kw: Any) -> Manager:
        client = make_client(apiserver)

        async def reconcile(req: Request, ctx: Context) -> Result | None:
            seen[identity].add(req.name)
            return None

        m = Manager(client, sharding=sharding(identity, ns, **kw), health_port=0, bind_address="127.0.0.1")
        m.add(Controller("sharded", for_="v1/ConfigMap", namespace=ns, label_selector={"sharding-test": "yes"},
                         reconcile=reconcile, max_concurrent_reconciles=2))
        made.append((m, client))
        return m

    yield make
    for m, c in made:
        with contextlib.suppress(Exception):
            await m.close()
        await c.close()


async def create_items(client: Client, ns: str, prefix: str = "item") -> set[str]:
    names = {f"{prefix}-{i}" for i in range(N)}
    for name in sorted(names):
        await client.create(cm(name, {"v": "1"}, {"sharding-test": "yes"}, namespace=ns))
    return names


async def get_text(url: str) -> str:
    async with aiohttp.ClientSession() as s, s.get(url) as r:
        return await r.text()


def test_sharding_is_one_value_and_excludes_leader_election(client: Client) -> None:
    with pytest.raises(TypeError, match=r"kubeloop\.Sharding\(name, \.\.\.\) or None, not 'widgets'"):
        Manager(client, sharding="widgets")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="choose leader_election or sharding, not both"):
        Manager(client, sharding=Sharding("w"), leader_election=LeaderElection("w"))


async def test_two_replicas_split_the_keys_and_show_the_shard_map(replicas: Any, client: Client, ns: str) -> None:
    seen: dict[str, set[str]] = defaultdict(set)
    a, b = replicas("a", seen), replicas("b", seen)
    await a.start()
    await b.start()
    assert await a.wait_ready(10) and await b.wait_ready(10)
    await eventually(lambda: a.shard_member and a.shard_member.members == ("a", "b")
                     and b.shard_member and b.shard_member.members == ("a", "b"), 10, what="both see two members")
    names = await create_items(client, ns)
    await eventually(lambda: seen["a"] | seen["b"] >= names, 15, what="every key reconciled")
    assert seen["a"] and seen["b"] and not (seen["a"] & seen["b"] & names)  # split, each key once
    # the shard map: /readyz?verbose and /metrics
    assert a.health_url is not None
    detail = await get_text(f"{a.health_url}/readyz?verbose")
    assert "sharding sharding-test (sharded" in detail and "2 member(s)" in detail and "this replica is a" in detail
    metrics = generate_latest(REGISTRY).decode()  # what /metrics serves
    assert 'kubeloop_shard_members{name="sharding-test",replica="a"} 2.0' in metrics
    counts = {m[1]: float(m[2]) for m in re.finditer(
        r'^kubeloop_shard_keys\{member="(\w+)",name="sharding-test",replica="a"\} (\S+)$', metrics, re.M)}
    assert set(counts) == {"a", "b"} and sum(counts.values()) == N

    # graceful leave: b's Lease is deleted and a takes every key, well before b's lease could expire
    leases = await client.list(LEASE, namespace=ns, label_selector={"kubeloop.dev/shard": "sharding-test"})
    assert {x["spec"]["holderIdentity"] for x in leases.items} == {"a", "b"}
    await b.close()
    leases = await client.list(LEASE, namespace=ns, label_selector={"kubeloop.dev/shard": "sharding-test"})
    assert {x["spec"]["holderIdentity"] for x in leases.items} == {"a"}
    await eventually(lambda: a.shard_member and a.shard_member.members == ("a",), 0.9, what="a alone")
    seen["a"].clear()
    for name in sorted(names):
        await client.patch("v1/ConfigMap", name, {"data": {"v": "2"}}, namespace=ns)
    await eventually(lambda: seen["a"] >= names, 10, what="a reconciles every key")


async def test_broadcast_mode_reconciles_every_key_on_every_replica(replicas: Any, client: Client, ns: str) -> None:
    seen: dict[str, set[str]] = defaultdict(set)
    a, b = replicas("a", seen, mode="broadcast"), replicas("b", seen, mode="broadcast")
    await a.start()
    await b.start()
    assert await a.wait_ready(10) and await b.wait_ready(10)
    names = await create_items(client, ns, "bc")
    await eventually(lambda: seen["a"] >= names and seen["b"] >= names, 15, what="both reconcile every key")



async def test_kubeloop_run_sharding_flags_fail_in_one_line(tmp_path: Path) -> None:
    kubeconfig = str(kubeconfig_for(tmp_path / "kubeconfig", f"http://127.0.0.1:{closed_port()}"))
    target = "tests/manager/sharded_controller.py"
    code, err = await kubeloop_run(target, "--kubeconfig", kubeconfig, "--sharding", "--leader-election")
    assert code == 1 and error_line(err) == ("Error: --sharding and --leader-election exclude each other: sharding "
                                             "already decides which replica runs each key")
    code, err = await kubeloop_run(target, "--kubeconfig", kubeconfig, "--sharding", "--sharding-name", "Bad_Name")
    assert code == 1 and error_line(err).startswith("Error: sharding: sharding name 'Bad_Name' must be a DNS label")
    code, err = await kubeloop_run(target, "--kubeconfig", kubeconfig, "--sharding", "--lease-duration", "2",
                                   "--renew-deadline", "3")
    assert code == 1 and "must be greater than renew_deadline" in error_line(err)


async def test_a_replica_that_cannot_renew_starts_nothing_and_catches_up_once_renewed(
        replicas: Any, apiserver: Any, client: Client, ns: str) -> None:
    faults = apiserver.require_faults()
    seen: dict[str, set[str]] = defaultdict(set)
    a = replicas("a", seen)
    await a.start()
    assert await a.wait_ready(10)
    member = a.shard_member
    assert member is not None
    await eventually(lambda: member.members == ("a",), 5, what="a alone")
    await client.create(cm("before", {"v": "1"}, {"sharding-test": "yes"}, namespace=ns))
    await eventually(lambda: "before" in seen["a"], 5, what="a reconciles")
    faults.fail_next(100_000, 500, resource="leases", verbs=("update", "create", "get"))
    try:
        await eventually(lambda: not member.owns(Request("default", ns, "during")), 3, what="fenced")
        await client.create(cm("during", {"v": "1"}, {"sharding-test": "yes"}, namespace=ns))
        await asyncio.sleep(0.6)
        assert "during" not in seen["a"]  # the lease could not be renewed: nothing starts
    finally:
        faults.reset()
    await eventually(lambda: "during" in seen["a"], 5, what="reconciled once the lease is renewed")


async def test_a_membership_change_reconciles_only_the_keys_that_moved(replicas: Any, client: Client,
                                                                       ns: str) -> None:
    """Issue 31 item 5: a replica joining, then one leaving, used to make every replica reconcile
    every key it owned again (2-3 times per change). A key whose owner did not change is not
    reconciled again; the keys that moved are reconciled by their new owner."""
    from kubeloop.manager._rendezvous import owner
    from kubeloop.manager._sharding import key_of

    seen: dict[str, set[str]] = defaultdict(set)
    a, b = replicas("a", seen), replicas("b", seen)
    await a.start()
    await b.start()
    assert await a.wait_ready(10) and await b.wait_ready(10)

    def settled(*managers: Manager) -> bool:
        view = tuple(sorted(m.shard_member.identity for m in managers))
        return all(m.shard_member.members == view and m.shard_member.protocol.confirmed == view
                   and all(adopted == view for adopted in m.shard_member.protocol.claims.values())
                   for m in managers)

    await eventually(lambda: settled(a, b), 10, what="a and b adopted {a, b}")
    names = await create_items(client, ns)
    await eventually(lambda: seen["a"] | seen["b"] >= names, 15, what="every key reconciled")
    await asyncio.sleep(0.6)  # three retry periods: nothing is left in flight

    def key(name: str) -> str:
        return key_of("default", ns, name)

    for change, before, after, members in (("c joins", ("a", "b"), ("a", "b", "c"), "abc"),
                                           ("b leaves", ("a", "b", "c"), ("a", "c"), "ac")):
        for s in seen.values():
            s.clear()
        if change == "c joins":
            c = replicas("c", seen)
            await c.start()
            assert await c.wait_ready(10)
        else:
            await b.close()
        managers = [{"a": a, "b": b, "c": c}[m] for m in members]
        await eventually(lambda ms=managers: settled(*ms), 10, what=f"{change}: the view adopted by all")
        moved = {n for n in names if owner(key(n), before) != owner(key(n), after)}
        await eventually(lambda ms=moved, af=after: all(n in seen[owner(key(n), af)] for n in ms), 10,
                         what=f"{change}: the moved keys reconciled by their new owner")
        await asyncio.sleep(0.6)  # three more retry periods: what a late step of the change would queue
        again = {n for s in seen.values() for n in s if n in names - moved}
        assert moved and not again, f"{change}: keys that did not move were reconciled again: {sorted(again)}"
