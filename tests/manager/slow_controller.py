"""A controller for the shutdown tests (run by `kubeloop run` in a subprocess): each reconcile of
a ConfigMap labelled ``slow=yes`` marks it started, works for ``data.seconds``, then marks it
finished, so a test can tell in-flight reconciles from finished ones."""

from __future__ import annotations

import asyncio

from kubeloop import Context, Controller, Manager, Request, Result


async def reconcile(req: Request, ctx: Context) -> Result | None:
    cm = ctx.get()
    if cm is None or (cm["metadata"].get("annotations") or {}).get("finished"):
        return None
    await ctx.client.patch("v1/ConfigMap", req.name, {"metadata": {"annotations": {"started": "yes"}}},
                           namespace=req.namespace)
    await asyncio.sleep(float((cm.get("data") or {}).get("seconds", "1")))
    await ctx.client.patch("v1/ConfigMap", req.name, {"metadata": {"annotations": {"finished": "yes"}}},
                           namespace=req.namespace)
    return None


def setup(manager: Manager) -> None:
    manager.add(Controller("slow", for_="v1/ConfigMap", label_selector={"slow": "yes"}, reconcile=reconcile,
                           max_concurrent_reconciles=4))
