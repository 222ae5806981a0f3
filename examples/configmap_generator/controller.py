"""ConfigMapGenerator: a typed custom resource that produces ConfigMaps (kube-rs's configmapgen).

    apiVersion: examples.kubeloop.dev/v1
    kind: ConfigMapGenerator
    metadata: {name: settings, namespace: demo}
    spec:
      names: [web-settings, worker-settings]   # one ConfigMap per name
      data: {LOG_LEVEL: info}                  # the data each one holds

The controller applies one ConfigMap per name (server-side apply, owned by the generator, so the
garbage collector deletes them with it), deletes the ConfigMaps it owns that are no longer listed,
and writes ``status.generated``. ``kubeloop manifests`` prints its CRD (derived from the classes
below) and RBAC; ``kubeloop run examples/configmap_generator/controller.py`` runs it.

This module uses the simplest convention of ``kubeloop run``: a module-level ``controllers`` list.
"""

from __future__ import annotations

import contextlib

from pydantic import Field

from kubeloop import Context, Controller, Request, Result
from kubeloop.client import NotFound
from kubeloop.controller import generation_changed
from kubeloop.resources import CustomResource, Model


class GeneratorSpec(Model):
    names: set[str] = Field(description="One ConfigMap is generated per name.")
    data: dict[str, str] = Field({}, description="The data every generated ConfigMap holds.")


class GeneratorStatus(Model):
    generated: list[str]
    observed_generation: int | None = None


class ConfigMapGenerator(CustomResource, group="examples.kubeloop.dev", version="v1", short_names=["cmg"]):
    spec: GeneratorSpec
    status: GeneratorStatus | None = None


async def reconcile(req: Request, ctx: Context) -> Result | None:
    gen = ctx.get(ConfigMapGenerator)
    if gen is None:
        return None  # deleted: the garbage collector removes the ConfigMaps it owned
    for name in gen.spec.names:
        await ctx.apply({"apiVersion": "v1", "kind": "ConfigMap", "data": gen.spec.data,
                         "metadata": {"name": name, "labels": {"examples.kubeloop.dev/generator": req.name}}},
                        owner=gen)
    for child in ctx.owned("v1/ConfigMap"):  # prune what is no longer listed
        if (name := child["metadata"]["name"]) not in gen.spec.names:
            with contextlib.suppress(NotFound):
                await ctx.client.delete("v1/ConfigMap", name, namespace=req.namespace)
    status = GeneratorStatus(generated=sorted(gen.spec.names), observed_generation=gen.metadata.generation)
    await ctx.apply_status(status.model_dump(exclude_none=True))
    return None


controllers = [Controller("configmap-generator", for_=ConfigMapGenerator, reconcile=reconcile,
                          predicates=[generation_changed]).owns("v1/ConfigMap")]
