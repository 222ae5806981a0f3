"""PodReport: Running Pods looked up from the manager's shared value index, without API calls."""

from __future__ import annotations

from typing import Any

from kubeloop import Client, Manager
from kubeloop.resources import ObjectMeta, crd
from kubeloop.testing import eventually, install_crd

from .controller import RUNNING, PodReport, PodReportSpec, setup


def pod(name: str, app: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


async def test_reports_running_pods_from_the_shared_index(apiserver: Any, client: Client, namespace: str) -> None:
    ns = namespace

    async def set_phase(name: str, phase: str) -> None:
        await client.patch_status("v1/Pod", name, {"status": {"phase": phase}}, namespace=ns)

    await install_crd(client, crd(PodReport))
    for name, app in (("web-1", "web"), ("web-2", "web"), ("db-1", "db")):
        await client.create(pod(name, app), namespace=ns)
    await set_phase("web-1", "Running")
    await set_phase("db-1", "Running")
    manager = Manager(client)
    pods = setup(manager)
    async with manager:
        report = PodReport(metadata=ObjectMeta(name="web"), spec=PodReportSpec(app="web"))
        await client.create(report.to_object(), namespace=ns)

        async def running(expected: list[str]) -> bool:
            status = PodReport.from_object(await client.get(PodReport.resource(), "web", namespace=ns)).status
            return status is not None and status.running == expected and status.running_count == len(expected)

        await eventually(lambda: running(["web-1"]))
        stats_before = apiserver.stats()["requests"] if apiserver.is_emulator else {}
        await set_phase("web-2", "Running")  # a Pod change reaches the report through the index
        await eventually(lambda: running(["web-1", "web-2"]))
        await set_phase("web-1", "Succeeded")
        await eventually(lambda: running(["web-2"]))
        await client.delete("v1/Pod", "web-2", namespace=ns)
        await eventually(lambda: running([]))
        assert pods.values(RUNNING, f"{ns}/db") == ["db-1"]  # the index's values, read directly
        if apiserver.is_emulator:  # the reconciles read Pods from the cache only
            after = apiserver.stats()["requests"]
            pod_reads = {k: after.get(k, 0) - stats_before.get(k, 0) for k in after
                         if k.endswith("core/v1/pods") and k.split()[0] in ("get", "list")}
            assert not any(pod_reads.values()), pod_reads
            # one list (a streaming one: a watch) for the manager's index and the watch
            assert after.get("list core/v1/pods", 0) <= 1
            assert apiserver.stats()["open_watches"].get("core/v1/pods") == 1
