"""A small fleet operator for the RBAC test of `kubeloop manifests`: a controller on every cluster
(clusters come from kubeconfig Secrets at run time) reading a ServiceAccount named by each ConfigMap
through ``ctx.watch_target``, declared with ``targets=`` in the operator's namespace only, so that
a cluster's credentials may be a ServiceAccount allowed only in that namespace."""

from __future__ import annotations

from typing import Any

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.controller import Target
from kubeloop.manager import ClustersFromSecrets

seen: dict[tuple[str, str], Any] = {}  # (cluster, ConfigMap) -> the target read (None: absent)


async def reconcile(req: Request, ctx: Context) -> Result | None:
    cm = ctx.get()
    if cm is None:
        return None
    target = (cm.get("data") or {}).get("target")
    if target:
        found = await ctx.watch_target("v1/ServiceAccount", target)
        seen[(req.cluster, req.name)] = None if found is None else found["metadata"]["name"]
    return None


def setup(manager: Manager) -> None:
    manager.add(Controller("fleet", for_="v1/ConfigMap", namespace=manager.namespace, label_selector="fleet=yes",
                           reconcile=reconcile, targets=[Target("v1/ServiceAccount", namespace=manager.namespace)],
                           primary_writes="none"))  # it only reads its ConfigMaps
    manager.add_runnable(ClustersFromSecrets(manager.namespace))
