"""``ctx.apply_status`` and server-side apply's rule that a field left out is removed: the whole
status per apply, or ``part=`` (one field manager per part), on the emulator or a real cluster."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.cache import SharedCache
from kubeloop.client import Client
from kubeloop.controller import Context, Controller, Request, Result
from kubeloop.controller._status import status_field_manager

from .helpers import eventually, running


def test_a_part_is_a_short_name_and_names_its_field_manager() -> None:
    assert status_field_manager("widgets", "conditions") == "widgets/conditions"
    for bad in ("", "a/b", " x", "x\n"):
        with pytest.raises(ValueError, match="short name"):
            status_field_manager("widgets", bad)
    with pytest.raises(ValueError, match="longer than 128"):
        status_field_manager("w" * 120, "conditions")


async def test_apply_status_in_parts_keeps_each_parts_fields(client: Client, ns: str, cache: SharedCache,
                                                              widget_group: str) -> None:
    """Issue 31 item 6: a partial ``apply_status`` removes the fields applied before by the same field
    manager (server-side apply: the applied configuration is the whole intent). ``part=`` gives each
    part a field manager of its own, so a part written later leaves the others' fields alone."""
    kind = f"{widget_group}/v1/Widget"
    done: set[str] = set()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name in done or ctx.get() is None:
            return None
        if req.name == "whole":
            await ctx.apply_status({"replicas": 3})
            await ctx.apply_status({"phase": "Ready"})  # the same manager: replicas is released
        else:
            await ctx.apply_status({"replicas": 3}, part="scale")
            await ctx.apply_status({"phase": "Ready"}, part="phase")
            await ctx.apply_status({"replicas": 4}, part="scale")  # phase is another part's: kept
        done.add(req.name)
        return None

    ctl = Controller("status-parts", for_=kind, namespace=ns, reconcile=reconcile)
    async with running(ctl, cache):
        for name in ("whole", "parts"):
            await client.create({"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": name},
                                 "spec": {"size": 1}}, namespace=ns)
        await eventually(lambda: done == {"whole", "parts"}, timeout=10)
    whole = await client.get(kind, "whole", namespace=ns)
    parts = await client.get(kind, "parts", namespace=ns)
    assert whole["status"] == {"phase": "Ready"}
    assert parts["status"] == {"replicas": 4, "phase": "Ready"}
    managers = {(m["manager"], m.get("subresource")): m for m in parts["metadata"]["managedFields"]}
    assert set(managers) >= {("status-parts/scale", "status"), ("status-parts/phase", "status")}

    def owned(entry: dict[str, Any]) -> set[str]:
        """The status fields ``entry``'s manager owns ("." is the map itself, which a real API server
        also lists for the manager that created it)."""
        return set(entry["fieldsV1"].get("f:status") or {}) - {"."}

    assert owned(managers[("status-parts/scale", "status")]) == {"f:replicas"}
    assert owned(managers[("status-parts/phase", "status")]) == {"f:phase"}
