"""ownerReferences: validation causes, duplicates, several controllers, blockOwnerDeletion."""

from __future__ import annotations

from typing import Any

from ..harness import Run
from .common import MERGE, namespace

UID = "11111111-2222-3333-4444-555555555555"


def owner(**ref: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": "parent", "uid": UID, **ref}


async def scenario_owner_references(run: Run) -> None:
    ns = await namespace(run, "own")
    cms = f"/api/v1/namespaces/{ns}/configmaps"

    async def create(step: str, name: str, refs: list[dict[str, Any]]) -> None:
        await run.req(step, "POST", cms, {"metadata": {"name": name, "ownerReferences": refs}})

    await create("valid owner", "o1", [owner(controller=True, blockOwnerDeletion=True)])
    await create("owner without uid", "o2", [owner(uid="")])
    await create("owner without apiVersion", "o3", [owner(apiVersion="")])
    await create("owner without kind", "o4", [owner(kind="")])
    await create("owner without name", "o5", [owner(name="")])
    await create("owner with a bad apiVersion", "o6", [owner(apiVersion="a/b/c")])
    await create("owner kind List", "o7", [owner(kind="List")])
    await create("two controllers", "o8", [owner(controller=True),
                                           owner(name="other", uid="22222222-2222-3333-4444-555555555555",
                                                 controller=True)])
    await create("duplicate owner (same uid)", "o9", [owner(), owner()])
    await create("owner in the same uid twice with different names", "o10", [owner(), owner(name="p2")])
    await run.req("add a second controller by patch", "PATCH", f"{cms}/o1", {"metadata": {"ownerReferences": [
        owner(controller=True), owner(name="x", uid="33333333-2222-3333-4444-555555555555", controller=True)]}},
        ctype=MERGE)
    await run.req("read back", "GET", f"{cms}/o1")
