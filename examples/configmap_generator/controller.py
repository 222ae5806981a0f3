"""ConfigMapGenerator: a custom resource that produces ConfigMaps.

    apiVersion: examples.kubeloop.dev/v1
    kind: ConfigMapGenerator
    metadata: {name: settings, namespace: demo}
    spec:
      names: [web-settings, worker-settings]   # one ConfigMap per name
      data: {LOG_LEVEL: info}                  # the data each one holds

The controller applies one ConfigMap per name (server-side apply, owned by the generator, so the
garbage collector deletes them with it), deletes the ConfigMaps it owns that are no longer listed,
and writes ``status.generated``. Run it with ``kubeloop run examples/configmap_generator/controller.py``
after ``kubectl apply -f examples/configmap_generator/crd.yaml``.

This module uses the simplest convention of ``kubeloop run``: a module-level ``controllers`` list.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from examples.crds import install, load_crd
from kubeloop import Client, Context, Controller, Request, Result
from kubeloop.client import NotFound
from kubeloop.controller import generation_changed

GROUP = "examples.kubeloop.dev"
GENERATOR = f"{GROUP}/v1/ConfigMapGenerator"
CRD_FILE = Path(__file__).with_name("crd.yaml")


def generated(gen: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ConfigMaps a generator asks for."""
    meta = gen["metadata"]
    spec = gen.get("spec") or {}
    data = dict(spec.get("data") or {})
    return [{"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": name, "namespace": meta["namespace"],
                          "labels": {"examples.kubeloop.dev/generator": meta["name"]}},
             "data": data}
            for name in dict.fromkeys(spec.get("names") or ())]


async def reconcile(req: Request, ctx: Context) -> Result | None:
    gen = ctx.get()
    if gen is None:
        return None  # deleted: the garbage collector removes the ConfigMaps it owned
    wanted = generated(gen)
    for cm in wanted:
        await ctx.apply(cm, owner=gen)
    names = {cm["metadata"]["name"] for cm in wanted}
    for child in ctx.owned("v1/ConfigMap"):
        name = child["metadata"]["name"]
        if name not in names:
            try:
                await ctx.client.delete("v1/ConfigMap", name, namespace=req.namespace)
                ctx.log.info("deleted ConfigMap %s (no longer listed)", name)
            except NotFound:
                pass
    await ctx.apply_status({"generated": sorted(names), "observedGeneration": gen["metadata"].get("generation")})
    return None


def make_controller(name: str = "configmap-generator") -> Controller:
    """A fresh controller (a controller runs in one manager at a time)."""
    return Controller(name, for_=GENERATOR, reconcile=reconcile, predicates=[generation_changed]).owns("v1/ConfigMap")


controllers = [make_controller()]


def crd() -> dict[str, Any]:
    """The CustomResourceDefinition (crd.yaml)."""
    return load_crd(CRD_FILE)


async def install_crd(client: Client, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Create the CRD (if missing) and wait until the API serves ConfigMapGenerators."""
    await install(client, crd(), GENERATOR, timeout)
