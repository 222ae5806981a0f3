"""Storage-version migration stopped half-way resumes where it stopped, and finishes."""

from __future__ import annotations

import asyncio
import copy
import secrets

from kubeloop import Client
from kubeloop.testing import eventually, install_crd
from kubeloop.webhooks import StorageVersionMigrator, migrate_storage_version

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


def two_versions(group: str, storage: str) -> dict[str, object]:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"things.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
                     "versions": [{"name": v, "served": True, "storage": v == storage, "schema": schema}
                                  for v in ("v1", "v2")]}}


async def things_stored_as_v1(client: Client, namespace: str, count: int) -> str:
    """A CRD of its own (delete it afterwards) whose `count` Things in `namespace` are stored as v1,
    its storage version then changed to v2: its name."""
    group = f"m{secrets.token_hex(3)}.tests.kubeloop.dev"
    name = f"things.{group}"
    await install_crd(client, two_versions(group, "v1"))
    for i in range(count):
        await client.create({"apiVersion": f"{group}/v1", "kind": "Thing", "metadata": {"name": f"t{i}"}},
                            namespace=namespace)
    changed = copy.deepcopy(await client.get(CRD, name))
    for v in changed["spec"]["versions"]:
        v["storage"] = v["name"] == "v2"
    await client.replace(changed)
    return name


async def test_a_stopped_migration_resumes_and_the_runnable_finishes_it(client: Client, namespace: str) -> None:
    name = await things_stored_as_v1(client, namespace, 6)
    try:
        stop = asyncio.Event()
        stop.set()  # stopped before the first object
        halted = await migrate_storage_version(client, name, page_size=2, stop=stop)
        assert not halted.done and halted.continue_token is not None and halted.rewritten == 0
        assert (await client.get(CRD, name))["status"]["storedVersions"] == ["v1", "v2"]

        migrator = StorageVersionMigrator(client, [name], page_size=2, poll_interval=None)
        done = asyncio.Event()
        task = asyncio.create_task(migrator.run(done))
        await eventually(lambda: migrator.ready, what="the migration done")
        done.set()
        await task
        assert migrator.ready and migrator.results[name].rewritten >= 6
        assert (await client.get(CRD, name))["status"]["storedVersions"] == ["v2"]
    finally:
        await client.delete(CRD, name)
