"""PodReport: which Pods of an app are Running, read from a shared value index instead of API calls.

The recipe kopf users ask for in nolar/kopf#661 ("how do I look at other resources from a
handler?"), with kopf's index semantics: keep the other kind in an informer whose index function
returns ``{key: value}``, and look the values up by key.

    apiVersion: examples.kubeloop.dev/v1
    kind: PodReport
    metadata: {name: web, namespace: shop}
    spec: {app: web}          # status.running: names of the Running Pods labelled app=web

- The Manager owns one Pod informer with the value index ``running`` (``namespace/app`` -> the
  name of each Running Pod). Any number of controllers can read it; it is the same watch as the
  controller's ``watches("v1/Pod", ...)``, so Pods are listed and watched once.
- The PodReport controller indexes its reports by ``namespace/app`` so that a Pod change maps to
  the reports that care (``requests_from_index``), and reads the Running Pods' names from the
  Pod index: a reconcile makes no API call except writing the status (none when it is unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.cache import ValueIndex
from kubeloop.manager import ManagedInformer
from kubeloop.resources import CustomResource, Model

RUNNING = "running"  # Pods: namespace/app -> the name of each Running Pod
BY_APP = "by-app"  # PodReports: namespace/app -> the reports about that app


class PodReportSpec(Model):
    app: str = Field(description="Report the Running Pods labelled app=<this> in the report's namespace.")


class PodReportStatus(Model):
    running: list[str]
    running_count: int


class PodReport(CustomResource, group="examples.kubeloop.dev", version="v1"):
    spec: PodReportSpec
    status: PodReportStatus | None = None


def running_pod(pod: Mapping[str, Any]) -> dict[str, str] | None:
    """``{namespace/app: name}`` for a Running Pod labelled ``app``; nothing for other Pods."""
    meta = pod["metadata"]
    app = (meta.get("labels") or {}).get("app")
    if app and (pod.get("status") or {}).get("phase") == "Running" and not meta.get("deletionTimestamp"):
        return {f"{meta['namespace']}/{app}": meta["name"]}
    return None


def setup(manager: Manager) -> ManagedInformer:
    """``kubeloop run`` calls this: the Pod informer with its index, and the controller reading it."""
    pods = manager.informer("v1/Pod", indexes={RUNNING: ValueIndex(running_pod)})

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        report = ctx.get(PodReport)
        if report is None:
            return None
        running = sorted(pods.values(RUNNING, f"{req.namespace}/{report.spec.app}", cluster=req.cluster))
        await ctx.apply_status(PodReportStatus(running=running, running_count=len(running)).model_dump())
        return None

    def reports_for(pod: Mapping[str, Any]) -> list[Request]:
        app = (pod["metadata"].get("labels") or {}).get("app")
        return controller.requests_from_index(BY_APP, f"{pod['metadata']['namespace']}/{app}") if app else []

    controller = (Controller("pod-report", for_=PodReport, reconcile=reconcile)
                  .index(BY_APP, lambda r: f"{r['metadata']['namespace']}/{r['spec']['app']}")
                  .watches("v1/Pod", reports_for))
    manager.add(controller, needs=[pods])
    return pods  # for tests and other controllers
