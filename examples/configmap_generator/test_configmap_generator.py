"""The ConfigMap generator on the emulator (or the cluster of KUBELOOP_TEST_KUBECONFIG)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubeloop import Client, Manager
from kubeloop.client import NotFound
from kubeloop.testing import TestCluster, eventually

from .controller import GENERATOR, install_crd, make_controller


async def test_generates_updates_and_prunes_configmaps(client: Client, namespace: str, apiserver: TestCluster) -> None:
    ns = namespace
    await install_crd(client)
    manager = Manager(client)
    manager.add(make_controller())
    async with manager:
        gen = await client.create({"apiVersion": "examples.kubeloop.dev/v1", "kind": "ConfigMapGenerator",
                                   "metadata": {"name": "settings", "namespace": ns},
                                   "spec": {"names": ["web", "worker"], "data": {"LOG_LEVEL": "info"}}})

        def names_with(level: str, expected: set[str]) -> Callable[[], Any]:
            async def check() -> bool:
                items = (await client.list("v1/ConfigMap", namespace=ns,
                                           label_selector={"examples.kubeloop.dev/generator": "settings"})).items
                return {cm["metadata"]["name"] for cm in items if cm.get("data") == {"LOG_LEVEL": level}} == expected \
                    and len(items) == len(expected)
            return check

        await eventually(names_with("info", {"web", "worker"}))
        web = await client.get("v1/ConfigMap", "web", namespace=ns)
        owner = web["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
            "ConfigMapGenerator", "settings", gen["metadata"]["uid"], True)

        async def status() -> dict[str, Any] | None:
            st = (await client.get(GENERATOR, "settings", namespace=ns)).get("status") or {}
            return st if st.get("observedGeneration") == 2 else None

        gen = await client.get(GENERATOR, "settings", namespace=ns)
        gen["spec"] = {"names": ["worker", "cron"], "data": {"LOG_LEVEL": "debug"}}
        await client.replace(gen)
        await eventually(names_with("debug", {"worker", "cron"}))  # "web" was pruned
        assert (await eventually(status))["generated"] == ["cron", "worker"]

        await client.delete("v1/ConfigMap", "cron", namespace=ns)  # deleted by hand: generated again
        await eventually(names_with("debug", {"worker", "cron"}))

        await client.delete(GENERATOR, "settings", namespace=ns)  # children go with it (garbage collector)
        if apiserver.server is not None and apiserver.server.bare:
            return  # the API server alone (as envtest) has no garbage collector

        async def gone() -> bool:
            try:
                await client.get("v1/ConfigMap", "worker", namespace=ns)
                return False
            except NotFound:
                return True

        # a real cluster's garbage collector watches a newly installed CRD's kind only after its next
        # discovery resync (every 30 s), so the children of a fresh kind can take that long to go
        assert await eventually(gone, timeout=60)
