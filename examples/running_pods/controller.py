"""PodReport: which Pods of an app are Running, from a shared index instead of API calls.

The recipe kopf users ask for in nolar/kopf#661 ("how do I look at other resources from a
handler?"): keep the other kind in an informer with an index, and read the index.

    apiVersion: examples.kubeloop.dev/v1
    kind: PodReport
    metadata: {name: web, namespace: shop}
    spec: {app: web}          # status.running: names of the Running Pods labelled app=web

- The Manager owns one Pod informer with the index ``running-by-app`` (``namespace/app`` ->
  Running Pods). Any number of controllers can read it; it is the same watch a controller that
  ``watches("v1/Pod", ...)`` with the same scope uses, so Pods are listed and watched once.
- The PodReport controller indexes its own reports by ``namespace/app`` so that a Pod change
  maps to the reports that care (``requests_from_index``), and reads the Running Pods from the
  manager's index: a reconcile makes no API call except writing the status (and none when the
  status is unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from examples.crds import install, load_crd
from kubeloop import Client, Context, Controller, Manager, Request, Result
from kubeloop.manager import ManagedInformer

GROUP = "examples.kubeloop.dev"
REPORT = f"{GROUP}/v1/PodReport"
CRD_FILE = Path(__file__).with_name("crd.yaml")
RUNNING_BY_APP = "running-by-app"
BY_APP = "by-app"


def running_by_app(pod: Mapping[str, Any]) -> list[str]:
    """Index function: ``namespace/app`` for a Running Pod labelled ``app``; nothing otherwise."""
    meta = pod.get("metadata") or {}
    app = (meta.get("labels") or {}).get("app")
    if app and (pod.get("status") or {}).get("phase") == "Running" and not meta.get("deletionTimestamp"):
        return [f"{meta.get('namespace')}/{app}"]
    return []


def report_app(report: Mapping[str, Any]) -> list[str]:
    """Index function: ``namespace/app`` a PodReport is about."""
    app = (report.get("spec") or {}).get("app")
    return [f"{report['metadata'].get('namespace')}/{app}"] if app else []


def make_controller(pods: ManagedInformer, name: str = "pod-report") -> Controller:
    """The PodReport controller, reading Running Pods from ``pods`` (an informer with RUNNING_BY_APP)."""

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        report = ctx.get()
        if report is None:
            return None
        app = (report.get("spec") or {}).get("app", "")
        running = sorted(p["metadata"]["name"]
                         for p in pods.by_index(RUNNING_BY_APP, f"{req.namespace}/{app}", cluster=req.cluster))
        await ctx.apply_status({"running": running, "runningCount": len(running)})
        return None

    def reports_for(pod: Mapping[str, Any]) -> list[Request]:
        meta = pod.get("metadata") or {}
        app = (meta.get("labels") or {}).get("app")
        return controller.requests_from_index(BY_APP, f"{meta.get('namespace')}/{app}") if app else []

    controller = (Controller(name, for_=REPORT, reconcile=reconcile)
                  .index(BY_APP, report_app)
                  .watches("v1/Pod", reports_for))
    return controller


def setup(manager: Manager) -> ManagedInformer:
    """``kubeloop run`` calls this: one shared Pod informer with the index, and the controller."""
    pods = manager.informer("v1/Pod", indexes={RUNNING_BY_APP: running_by_app})
    manager.add(make_controller(pods), needs=[pods])
    return pods


def crd() -> dict[str, Any]:
    """The CustomResourceDefinition (crd.yaml)."""
    return load_crd(CRD_FILE)


async def install_crd(client: Client, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Create the CRD (if missing) and wait until the API serves PodReports."""
    await install(client, crd(), REPORT, timeout)
