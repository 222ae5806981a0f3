"""PodReport: Running Pods looked up from the manager's shared index, without API calls."""

from __future__ import annotations

from typing import Any

from kubeloop import Client, Manager
from kubeloop.testing import eventually

from .controller import REPORT, RUNNING_BY_APP, install_crd, setup


def pod(name: str, ns: str, app: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


async def set_phase(client: Client, name: str, ns: str, phase: str) -> None:
    await client.patch_status("v1/Pod", name, {"status": {"phase": phase}}, namespace=ns)


async def test_reports_running_pods_from_the_shared_index(apiserver: Any, client: Client, namespace: str) -> None:
    ns = namespace
    await install_crd(client)
    for name, app in (("web-1", "web"), ("web-2", "web"), ("db-1", "db")):
        await client.create(pod(name, ns, app))
    await set_phase(client, "web-1", ns, "Running")
    await set_phase(client, "db-1", ns, "Running")
    manager = Manager(client)
    pods = setup(manager)
    async with manager:
        await client.create({"apiVersion": "examples.kubeloop.dev/v1", "kind": "PodReport",
                             "metadata": {"name": "web", "namespace": ns}, "spec": {"app": "web"}})

        def running(expected: list[str]) -> Any:
            async def check() -> bool:
                st = (await client.get(REPORT, "web", namespace=ns)).get("status") or {}
                return st.get("running") == expected and st.get("runningCount") == len(expected)
            return check

        await eventually(running(["web-1"]))
        stats_before = apiserver.stats()["requests"] if apiserver.is_emulator else {}
        await set_phase(client, "web-2", ns, "Running")  # a Pod change reaches the report through the index
        await eventually(running(["web-1", "web-2"]))
        await set_phase(client, "web-1", ns, "Succeeded")
        await eventually(running(["web-2"]))
        await client.delete("v1/Pod", "web-2", namespace=ns)
        await eventually(running([]))
        assert [p["metadata"]["name"] for p in pods.by_index(RUNNING_BY_APP, f"{ns}/db")] == ["db-1"]
        if apiserver.is_emulator:  # the reconciles read Pods from the cache only
            after = apiserver.stats()["requests"]
            pod_reads = {k: after.get(k, 0) - stats_before.get(k, 0) for k in after
                         if k.endswith("core/v1/pods") and k.split()[0] in ("get", "list")}
            assert not any(pod_reads.values()), pod_reads
            # one list (a streaming one: a watch) for the manager's index and the watch
            assert after.get("list core/v1/pods", 0) <= 1
            assert apiserver.stats()["open_watches"].get("core/v1/pods") == 1
