"""The WebApp controller: children, repair, status, and zero writes in steady state."""

from __future__ import annotations

from typing import Any

from kubeloop import Client, Manager, Request
from kubeloop.client import NotFound
from kubeloop.resources import ObjectMeta, crd
from kubeloop.testing import eventually, install_crd

from .controller import WebApp, WebAppSpec, WebAppStatus, make_controller

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


def writes(apiserver: Any) -> int:
    return sum(n for key, n in apiserver.stats()["requests"].items() if key.split(" ", 1)[0] in WRITE_VERBS)


async def test_children_repair_status_and_quiet_steady_state(apiserver: Any, client: Client, namespace: str) -> None:
    ns = namespace
    await install_crd(client, crd(WebApp))
    controller = make_controller()
    manager = Manager(client)
    manager.add(controller)
    async with manager:
        shop = WebApp(metadata=ObjectMeta(name="shop"), spec=WebAppSpec(image="nginx:1.27", replicas=2, message="welcome"))
        await client.create(shop.to_object(), namespace=ns)

        async def observed(generation: int) -> WebAppStatus:
            status = WebApp.from_object(await client.get(WebApp.resource(), "shop", namespace=ns)).status
            assert status is not None and status.observed_generation == generation, status
            return status

        # the first reconcile waits for the caches: on a real cluster the owned ConfigMaps and
        # Deployments of every namespace are listed first, however many other users hold there
        status = await eventually(lambda: observed(1), timeout=30)
        assert status == WebAppStatus(config_map="shop-content", deployment="shop", replicas=2, observed_generation=1)
        dep = await client.get("apps/v1/Deployment", "shop", namespace=ns)
        assert dep["spec"]["replicas"] == 2
        assert {m["manager"] for m in dep["metadata"]["managedFields"] if m["operation"] == "Apply"} == {"webapp"}
        page = await client.get("v1/ConfigMap", "shop-content", namespace=ns)
        assert page["data"]["index.html"] == "<h1>welcome</h1>\n"

        await client.patch(WebApp.resource(), "shop", {"spec": {"replicas": 3}}, namespace=ns, type="merge")
        await eventually(lambda: observed(2))
        assert (await client.get("apps/v1/Deployment", "shop", namespace=ns))["spec"]["replicas"] == 3

        await client.delete("v1/ConfigMap", "shop-content", namespace=ns)  # by hand: repaired

        async def repaired() -> bool:
            try:
                page = await client.get("v1/ConfigMap", "shop-content", namespace=ns)
            except NotFound:
                return False
            return bool(page["data"]["index.html"] == "<h1>welcome</h1>\n")

        await eventually(repaired)

        if apiserver.is_emulator:  # steady state: reconciles run, nothing is written
            await manager.idle()
            before, runs = writes(apiserver), controller.reconciles_started
            for _ in range(5):
                controller.enqueue(Request("default", ns, "shop"))
                await manager.idle()
            assert controller.reconciles_started >= runs + 5
            assert writes(apiserver) - before == 0, apiserver.stats()["requests"]
