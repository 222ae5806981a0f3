"""Pipeline: a promotion pipeline whose environments point at objects of any kind in any cluster.

    apiVersion: examples.kubeloop.dev/v1
    kind: Pipeline
    metadata: {name: shop, namespace: demo}
    spec:
      environments:
      - name: staging
        cluster: staging                      # a cluster the Manager knows (default: the Pipeline's)
        target: {apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, namespace: shop, name: shop}
      - name: production
        cluster: production
        target: {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, namespace: flux-system,
                 name: shop}

The status aggregates each target's ``Ready`` condition (``status.environments``) into the
Pipeline's own ``Ready`` condition. Nothing here declares what is watched: each reconcile reads
every target with ``ctx.watch_target``, which also makes a change of that target reconcile this
Pipeline again. A target whose cluster is unknown (not added yet, or removed) or whose kind is
not served there (its CRD is not installed yet) shows as ``Unknown`` with the reason, and the
Pipeline is retried with backoff until it resolves.

Clusters come from the Manager: ``manager.add_cluster("staging", kubeconfig=...)``, or the
Secrets of `kubeloop.manager.ClustersFromSecrets`. Run it with ``kubeloop run
examples/pipeline/controller.py`` (``setup(manager)``); the CRD is ``crd_yaml(Pipeline)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from kubeloop import Client, Context, Controller, Manager, Request, Result
from kubeloop.controller import TargetError
from kubeloop.resources import Condition, CustomResource, ListMap, Model, crd, find_condition, set_condition
from kubeloop.testing import install_crd as install

GROUP = "examples.kubeloop.dev"


class TargetRef(Model):
    """The object an environment deploys to (any kind)."""

    api_version: str
    kind: str
    name: str
    namespace: str | None = None


class Environment(Model):
    name: str
    cluster: str | None = None
    target: TargetRef


class PipelineSpec(Model):
    environments: Annotated[list[Environment], ListMap("name")] = []


class EnvironmentStatus(Model):
    name: str
    cluster: str
    ready: Literal["True", "False", "Unknown"]
    reason: str = ""
    message: str = ""


class PipelineStatus(Model):
    observed_generation: int | None = None
    environments: Annotated[list[EnvironmentStatus], ListMap("name")] = []
    conditions: Annotated[list[Condition], ListMap("type")] = []


class Pipeline(CustomResource, group=GROUP, version="v1"):
    """Environments, each a target object of any kind in a named cluster."""

    spec: PipelineSpec
    status: PipelineStatus | None = None


PIPELINE = Pipeline.resource()
TARGET_ERRORS = ("UnknownCluster", "ClusterUnreachable", "KindNotServed", "TargetForbidden", "TargetNotSynced")


def target_readiness(target: Mapping[str, Any] | None) -> tuple[str, str, str]:
    """(ready, reason, message) of a target from its ``Ready`` condition."""
    if target is None:
        return "Unknown", "NotFound", "the target does not exist"
    cond = find_condition(target.get("status"), "Ready")
    if cond is None:
        return "Unknown", "NoReadyCondition", "the target has no Ready condition yet"
    return str(cond.get("status", "Unknown")), str(cond.get("reason", "")), str(cond.get("message", ""))


async def environment_status(env: Environment, req: Request, ctx: Context) -> EnvironmentStatus:
    cluster = env.cluster or req.cluster
    t = env.target
    try:
        target = await ctx.watch_target(f"{t.api_version}/{t.kind}", t.name, namespace=t.namespace, cluster=cluster)
    except TargetError as exc:  # UnknownCluster, ClusterUnreachable, KindNotServed, TargetForbidden, TargetNotSynced
        return EnvironmentStatus(name=env.name, cluster=cluster, ready="Unknown", reason=type(exc).__name__,
                                 message=str(exc))
    ready, reason, message = target_readiness(target)
    return EnvironmentStatus(name=env.name, cluster=cluster, ready=ready, reason=reason,  # type: ignore[arg-type]
                             message=message)


async def reconcile(req: Request, ctx: Context) -> Result | None:
    obj = ctx.get()
    if obj is None:
        return None  # deleted: it asks for no target, so every target it watched is released
    pipeline = Pipeline.from_object(obj)
    envs = [await environment_status(env, req, ctx) for env in pipeline.spec.environments]
    status: dict[str, Any] = {"conditions": [dict(c) for c in (obj.get("status") or {}).get("conditions") or ()]}
    not_ready = [e.name for e in envs if e.ready != "True"]
    set_condition(status, "Ready", not not_ready, "AllReady" if not not_ready else "EnvironmentsNotReady",
                  f"not ready: {', '.join(not_ready)}" if not_ready else "every environment is ready",
                  observed_generation=pipeline.metadata.generation)
    await ctx.patch_status({
        "observedGeneration": pipeline.metadata.generation,
        "environments": [e.model_dump(mode="json", exclude_none=True) for e in envs],
        "conditions": status["conditions"],
    })
    if any(e.reason in TARGET_ERRORS for e in envs):
        return Result(requeue=True)  # retried with backoff until the cluster answers / the kind is served
    return None


def make_controller(name: str = "pipeline") -> Controller:
    """Pipelines live in the ``default`` cluster; their targets anywhere."""
    return Controller(name, for_=Pipeline, reconcile=reconcile, clusters=["default"])


def setup(manager: Manager) -> Controller:
    """The ``kubeloop run`` entry point."""
    return manager.add(make_controller())


async def install_crd(client: Client, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Install the Pipeline CRD (a real cluster: ``kubectl apply`` the output of ``crd_yaml(Pipeline)``)."""
    await install(client, crd(Pipeline), timeout=timeout)
