"""The ConfigMap generator on the emulator (or the cluster of KUBELOOP_TEST_KUBECONFIG)."""

from __future__ import annotations

from kubeloop import Client, Manager
from kubeloop.client import NotFound
from kubeloop.resources import ObjectMeta, crd
from kubeloop.testing import TestCluster, eventually, install_crd

from .controller import ConfigMapGenerator, GeneratorSpec, controllers

GENERATOR = ConfigMapGenerator.resource()


async def test_generates_updates_and_prunes_configmaps(client: Client, namespace: str, apiserver: TestCluster) -> None:
    ns = namespace
    await install_crd(client, crd(ConfigMapGenerator))
    manager = Manager(client)
    manager.add(*controllers)
    async with manager:
        settings = ConfigMapGenerator(metadata=ObjectMeta(name="settings"),
                                      spec=GeneratorSpec(names={"web", "worker"}, data={"LOG_LEVEL": "info"}))
        gen = await client.create(settings.to_object(), namespace=ns)

        async def generated(expected: dict[str, dict[str, str]]) -> bool:
            """The ConfigMaps of the generator are ``expected`` (name -> data), and no others."""
            items = (await client.list("v1/ConfigMap", namespace=ns,
                                       label_selector={"examples.kubeloop.dev/generator": "settings"})).items
            return {cm["metadata"]["name"]: cm.get("data") for cm in items} == expected

        info, debug = {"LOG_LEVEL": "info"}, {"LOG_LEVEL": "debug"}
        await eventually(lambda: generated({"web": info, "worker": info}))
        web = await client.get("v1/ConfigMap", "web", namespace=ns)
        owner = web["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
            "ConfigMapGenerator", "settings", gen["metadata"]["uid"], True)

        await client.patch(GENERATOR, "settings", {"spec": {"names": ["worker", "cron"], "data": debug}}, namespace=ns)
        await eventually(lambda: generated({"worker": debug, "cron": debug}))  # "web" was pruned

        async def status() -> list[str]:
            st = ConfigMapGenerator.from_object(await client.get(GENERATOR, "settings", namespace=ns)).status
            assert st is not None and st.observed_generation == 2, st
            return st.generated

        assert await eventually(status) == ["cron", "worker"]

        await client.delete("v1/ConfigMap", "cron", namespace=ns)  # deleted by hand: generated again
        await eventually(lambda: generated({"worker": debug, "cron": debug}))

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
