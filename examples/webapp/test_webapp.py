"""The WebApp parent/child controller: children, repair, status, and zero writes in steady state."""

from __future__ import annotations

import asyncio
from typing import Any

from kubeloop import Client, Manager, Request
from kubeloop.client import NotFound
from kubeloop.testing import eventually

from .controller import WEBAPP, install_crd, make_controller

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


def writes(apiserver: Any) -> int:
    return sum(n for key, n in apiserver.stats()["requests"].items() if key.split(" ", 1)[0] in WRITE_VERBS)


async def test_children_repair_status_and_quiet_steady_state(apiserver: Any, client: Client, namespace: str) -> None:
    ns = namespace
    await install_crd(client)
    controller = make_controller()
    manager = Manager(client)
    manager.add(controller)
    async with manager:
        await client.create({"apiVersion": "examples.kubeloop.dev/v1", "kind": "WebApp",
                             "metadata": {"name": "shop", "namespace": ns},
                             "spec": {"image": "nginx:1.27", "replicas": 2, "message": "welcome"}})

        async def observed(gen: int) -> dict[str, Any] | None:
            st = (await client.get(WEBAPP, "shop", namespace=ns)).get("status") or {}
            return st if st.get("observedGeneration") == gen else None

        status = await eventually(lambda: observed(1))
        assert status == {"configMap": "shop-content", "deployment": "shop", "replicas": 2, "observedGeneration": 1}
        dep = await client.get("apps/v1/Deployment", "shop", namespace=ns)
        assert dep["spec"]["replicas"] == 2
        assert {m["manager"] for m in dep["metadata"]["managedFields"] if m["operation"] == "Apply"} == {"webapp"}
        page = await client.get("v1/ConfigMap", "shop-content", namespace=ns)
        assert page["data"]["index.html"] == "<h1>welcome</h1>\n"

        app = await client.get(WEBAPP, "shop", namespace=ns)
        app["spec"]["replicas"] = 3
        await client.replace(app)
        await eventually(lambda: observed(2))
        assert (await client.get("apps/v1/Deployment", "shop", namespace=ns))["spec"]["replicas"] == 3

        await client.delete("v1/ConfigMap", "shop-content", namespace=ns)  # by hand: repaired

        async def repaired() -> bool:
            try:
                return (await client.get("v1/ConfigMap", "shop-content", namespace=ns))["data"]["index.html"] \
                    == "<h1>welcome</h1>\n"
            except NotFound:
                return False

        await eventually(repaired)

        if apiserver.is_emulator:  # steady state: reconciles run, nothing is written
            await asyncio.sleep(0.3)
            before, runs = writes(apiserver), controller.reconciles_started
            for _ in range(5):
                controller.enqueue(Request("default", ns, "shop"))
                await asyncio.sleep(0.4)
            assert controller.reconciles_started >= runs + 5
            assert writes(apiserver) - before == 0, apiserver.stats()["requests"]
