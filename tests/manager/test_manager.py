"""Manager integration tests on the emulator: shared watches, per-controller sync, probes, metrics."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.client import Client
from kubeloop.testing import eventually

from ..builders import MINE, cm, label


def recording(name: str, seen: list[Request], resource: str = "v1/ConfigMap", **kw: Any) -> Controller:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        seen.append(req)
        return None

    return Controller(name, for_=resource, reconcile=reconcile, **kw)


async def test_two_controllers_on_one_kind_share_one_watch(apiserver: Any, client: Client, ns: str) -> None:
    a: list[Request] = []
    b: list[Request] = []
    m = Manager(client)
    m.add(recording("first", a))
    m.add(recording("second", b))
    await client.create(cm("one", {"x": "1"}, namespace=ns))
    async with m:
        assert await m.wait_ready(5)
        await client.create(cm("two", {"x": "2"}, namespace=ns))
        await eventually(lambda: {r.name for r in a} >= {"one", "two"} and {r.name for r in b} >= {"one", "two"})
        if apiserver.is_emulator:
            assert apiserver.stats()["open_watches"].get("core/v1/configmaps") == 1
    if apiserver.is_emulator:
        await eventually(lambda: not apiserver.stats()["open_watches"].get("core/v1/configmaps"))
    assert m.state == "stopped"


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as s, s.get(url) as r:
        return r.status, await r.text()


async def test_readyz_flips_only_after_sync_and_metrics_count_work(apiserver: Any, client: Client, ns: str) -> None:
    faults = apiserver.require_faults()
    await client.create(cm("a", {"x": "1"}, namespace=ns))
    seen: list[Request] = []
    m = Manager(client, health_port=0, metrics_port=0, bind_address="127.0.0.1")
    m.add(recording("metered", seen))
    faults.delay(0.6, resource="configmaps")  # the initial list takes a while
    async with m:
        assert m.health_url and m.metrics_url and m.health_url != m.metrics_url
        assert await get(f"{m.health_url}/healthz") == (200, "ok\n")
        status, body = await get(f"{m.health_url}/readyz")
        assert status == 503, body
        assert "initial list in progress" in body and "core/v1/configmaps" in body
        assert await m.wait_ready(5)
        faults.delay(0)
        assert await get(f"{m.health_url}/readyz") == (200, "ok\n")
        await client.create(cm("b", {"x": "2"}, namespace=ns))
        await eventually(lambda: {r.name for r in seen} >= {"a", "b"})
        status, text = await get(f"{m.metrics_url}/metrics")
        assert status == 200
        samples = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
                   for line in text.splitlines() if line and not line.startswith("#")}
        assert samples['controller_runtime_reconcile_total{controller="metered",result="success"}'] >= 2
        assert samples['workqueue_adds_total{controller="metered",name="metered"}'] >= 2
        assert 'controller_runtime_reconcile_time_seconds_count{controller="metered"}' in samples
        assert any(k.startswith("workqueue_depth") for k in samples)
        assert (await get(f"{m.health_url}/metrics"))[0] == 404  # separate ports: separate servers


async def test_forbidden_watch_blocks_only_its_controller_and_readyz_names_it(
        apiserver: Any, client: Client, ns: str, caplog: Any) -> None:
    caplog.set_level(logging.INFO, "kubeloop.manager")
    faults = apiserver.require_faults()
    faults.fail_next(100_000, 403, resource="secrets", verbs=("list", "watch"))
    seen: list[Request] = []
    m = Manager(client, health_port=0, metrics_port=0, bind_address="127.0.0.1", readiness_log_interval=0.1)
    m.add(recording("secrets", [], resource="v1/Secret", cache_sync_timeout=30))
    m.add(recording("configmaps", seen))
    async with m:
        await client.create(cm("c", namespace=ns))
        await eventually(lambda: any(r.name == "c" for r in seen))  # not blocked by the secrets controller
        assert m.controllers[1].ready and not m.controllers[0].ready
        status, body = await get(f"{m.health_url}/readyz")
        assert status == 503
        assert "core/v1/secrets" in body and "forbidden" in body
        assert 'list and watch resource "secrets"' in body
        assert "controller secrets: starting" in body
        await eventually(lambda: any("not ready" in r.getMessage() and "forbidden" in r.getMessage()
                                     for r in caplog.records), timeout=3)
        faults.reset()
        assert await m.wait_ready(10)
        assert (await get(f"{m.health_url}/readyz"))[0] == 200


async def test_shared_port_and_custom_checks(apiserver: Any, client: Client) -> None:
    flag = {"ok": False}
    m = Manager(client, health_port=0, bind_address="127.0.0.1")
    m.add(recording("noop", []))
    m.add_readyz_check("warmup", lambda: None if flag["ok"] else "still warming up")
    async with m:
        assert m.metrics_url is None
        await eventually(lambda: m.readiness() == ["warmup: still warming up"])
        status, body = await get(f"{m.health_url}/readyz")
        assert status == 503 and "warmup: still warming up" in body
        flag["ok"] = True
        assert await get(f"{m.health_url}/readyz") == (200, "ok\n")
    m2 = Manager(client, health_port=0, metrics_port=0, bind_address="127.0.0.1")
    m2.add(recording("noop2", []))
    async with m2:
        pass


async def test_shutdown_timeout_cancels_reconciles_that_do_not_finish(apiserver: Any, client: Client, ns: str) -> None:
    started = asyncio.Event()
    cancelled: list[str] = []

    async def stuck(req: Request, ctx: Context) -> Result | None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(req.name)
            raise
        return None

    m = Manager(client, graceful_shutdown_timeout=0.3)
    # only this test's ConfigMap (label MINE): a real cluster adds kube-root-ca.crt to the namespace
    m.add(Controller("stuck", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=stuck))
    await m.start()
    await client.create(label(cm("slow", namespace=ns)))
    await asyncio.wait_for(started.wait(), 5)
    t0 = asyncio.get_running_loop().time()
    await m.close()
    took = asyncio.get_running_loop().time() - t0
    assert 0.25 < took < 1.5, took
    assert cancelled == ["slow"]


async def test_leader_metric_and_leader_only_runnables(apiserver: Any, client: Client, ns: str) -> None:
    from kubeloop import LeaderElection

    ran: list[str] = []

    async def everywhere(manager: Manager) -> None:
        ran.append("everywhere")
        await asyncio.sleep(3600)

    async def on_leader(manager: Manager) -> None:
        ran.append("leader")

    m = Manager(client, metrics_port=0, bind_address="127.0.0.1",
                leader_election=LeaderElection("solo", namespace=ns, lease_duration=1, renew_deadline=0.7,
                                               retry_period=0.2))
    m.add_runnable(everywhere)
    m.add_runnable(on_leader, leader_election=True)
    async with m:
        assert await m.wait_leader(5)
        await eventually(lambda: sorted(ran) == ["everywhere", "leader"])
        _, text = await get(f"{m.metrics_url}/metrics")
        assert 'leader_election_master_status{name="solo"} 1.0' in text


async def test_a_candidate_that_does_not_lead_reports_zero(apiserver: Any, client: Client, ns: str) -> None:
    """A standby's /metrics says it does not lead (0), as soon as it is ready."""

    from kubeloop import LeaderElection
    from kubeloop.manager._lease import LEASE, micro_time

    now = micro_time()
    await client.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "held"},
                         "spec": {"holderIdentity": "someone-else", "leaseDurationSeconds": 3600,
                                  "acquireTime": now, "renewTime": now}}, namespace=ns)
    m = Manager(client, metrics_port=0, bind_address="127.0.0.1",
                leader_election=LeaderElection("held", namespace=ns, lease_duration=1, renew_deadline=0.7,
                                               retry_period=0.2))
    async with m:
        assert await m.wait_ready(5) and not m.is_leader
        _, text = await get(f"{m.metrics_url}/metrics")
        assert 'leader_election_master_status{name="held"} 0.0' in text
    assert (await client.get(LEASE, "held", namespace=ns))["spec"]["holderIdentity"] == "someone-else"


async def test_manager_runs_controllers_on_every_cluster(apiserver: Any, client: Client, ns: str) -> None:
    from kubeloop.testing import APIServer

    from .conftest import make_client

    seen: list[Request] = []
    async with APIServer() as other:
        other_client = make_client(other)
        async with other_client:
            await other_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            m = Manager(client)
            m.add_cluster("east", other_client)
            m.add(recording("everywhere", seen, namespace=ns))
            async with m:
                await client.create(cm("here", namespace=ns))
                await other_client.create(cm("there", namespace=ns))
                await eventually(lambda: {(r.cluster, r.name) for r in seen} >= {("default", "here"),
                                                                                ("east", "there")})
            assert not any(r.cluster == "east" and r.name == "here" for r in seen)


async def test_taken_port_and_second_run_fail_with_one_line(apiserver: Any, client: Client) -> None:
    import socket

    import pytest

    from kubeloop.manager import ManagerError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        m = Manager(client, health_port=port, bind_address="127.0.0.1")
        m.add(recording("p", []))
        with pytest.raises(ManagerError, match=rf"cannot serve health on 127.0.0.1:{port}: .*in use"):
            await m.start()
    assert m.state == "stopped"
    with pytest.raises(ManagerError, match="runs once"):
        await m.run()
    with pytest.raises(RuntimeError, match="already stopped"):
        m.add(recording("q", []))


async def test_leader_election_is_one_value_and_anything_else_is_a_clear_type_error(client: Client) -> None:
    import pytest

    from kubeloop.manager import LeaderElection

    election = LeaderElection("op", lease_duration=30, renew_deadline=20)
    assert Manager(client, leader_election=election).leader_election is election
    with pytest.raises(TypeError, match=r"LeaderElection\(name, \.\.\.\) or None, not True"):
        Manager(client, leader_election=True)  # type: ignore[arg-type]


async def test_manager_informer_keeps_only_what_its_filter_accepts(apiserver: Any, client: Client, ns: str) -> None:
    """Issue 11 item 5: `filter=` on `Manager.informer`, as on a controller's sources."""
    await client.create(cm("keep", labels={"tier": "web"}), namespace=ns)
    await client.create(cm("drop", labels={"tier": "db"}), namespace=ns)
    manager = Manager(client)
    web = manager.informer("v1/ConfigMap", namespace=ns,
                           filter=lambda o: (o["metadata"].get("labels") or {}).get("tier") == "web")
    async with manager:
        await web.wait_synced(10)
        assert [o["metadata"]["name"] for o in web.list(ns)] == ["keep"]
        assert web.get("drop", ns) is None


async def test_readyz_names_the_object_and_the_function_a_transform_failed_on(
        apiserver: Any, client: Client, ns: str) -> None:
    """Issue 11 item 7: a raising transform keeps the last good version and /readyz says where."""
    def strict_transform(obj: dict[str, Any]) -> dict[str, Any]:
        if (obj.get("data") or {}).get("x") == "bad":
            raise ValueError("x must not be bad")
        return obj

    seen: list[Request] = []
    m = Manager(client, health_port=0, metrics_port=0, bind_address="127.0.0.1")
    m.add(recording("strict", seen, namespace=ns, label_selector=MINE, transform=strict_transform))
    await client.create(label(cm("t", {"x": "1"}, namespace=ns)))
    async with m:
        assert await m.wait_ready(5)
        await client.patch("v1/ConfigMap", "t", {"data": {"x": "bad"}}, namespace=ns)
        await eventually(lambda: not m.ready)
        status, body = await get(f"{m.health_url}/readyz")
        assert status == 503 and f"{ns}/t" in body and "strict_transform" in body and "x must not be bad" in body
        await client.patch("v1/ConfigMap", "t", {"data": {"x": "2"}}, namespace=ns)
        assert await m.wait_ready(5)


async def test_idle_waits_until_every_queue_is_empty_and_no_reconcile_runs(apiserver: Any, client: Client,
                                                                            ns: str) -> None:
    """Issue 14 item 4: `await manager.idle()` returns once the controller has caught up."""
    done: list[str] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        await asyncio.sleep(0.05)  # a reconcile that takes a while
        done.append(req.name)
        return None

    manager = Manager(client)
    manager.add(Controller("idle-test", for_="v1/ConfigMap", namespace=ns, reconcile=reconcile,
                           label_selector=f"{MINE}=1"))
    async with manager:
        names = [f"i{n}" for n in range(8)]
        for name in names:
            await client.create(label(cm(name)), namespace=ns)
        await eventually(lambda: done)  # the work has reached the controller
        await manager.idle(timeout=10, settle=0.2)
        assert set(names) <= set(done)
        assert all(c.queue.processing_count == 0 and c.queue.core.depth == 0 for c in manager.controllers)



async def test_metrics_count_the_managers_own_requests(apiserver: Any, client: Client) -> None:
    m = Manager(client, metrics_port=0, bind_address="127.0.0.1")
    async with m:
        assert await m.wait_ready(5)
        _, text = await get(f"{m.metrics_url}/metrics")
    host = apiserver.url.split("://", 1)[1].rstrip("/")
    assert f'rest_client_requests_total{{code="200",host="{host}",method="GET"}}' in text
