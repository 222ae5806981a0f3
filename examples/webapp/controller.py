"""WebApp: a parent that owns a Deployment and a ConfigMap, written with server-side apply.

    apiVersion: examples.kubeloop.dev/v1
    kind: WebApp
    metadata: {name: shop, namespace: demo}
    spec: {image: "nginx:1.27", replicas: 2, message: "hello"}

Every reconcile *declares* the children (``ctx.apply``: server-side apply as field manager
``webapp``, with the WebApp as controller owner) and the status (``ctx.apply_status``). It never
reads-modifies-writes, so it needs no conflict handling, and it stays quiet in steady state:

- ``ctx.apply`` skips the request when the cache shows the apply would change nothing, so a
  reconcile of a converged WebApp makes no API call at all;
- the ``generation_changed`` predicate ignores the WebApp's own status updates;
- children are watched (``owns``), so a child deleted or edited by hand is repaired at once.

The ConfigMap carries the page; the Deployment mounts it. Run with
``kubeloop run examples/webapp/controller.py`` after ``kubectl apply -f examples/webapp/crd.yaml``.
This module uses the ``setup(manager)`` convention of ``kubeloop run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from examples.crds import install, load_crd
from kubeloop import Client, Context, Controller, Manager, Request, Result
from kubeloop.controller import generation_changed

GROUP = "examples.kubeloop.dev"
WEBAPP = f"{GROUP}/v1/WebApp"
CRD_FILE = Path(__file__).with_name("crd.yaml")


def children(app: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ConfigMap and Deployment a WebApp declares."""
    meta = app["metadata"]
    name, ns = meta["name"], meta["namespace"]
    spec = app.get("spec") or {}
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "kubeloop-webapp"}
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"{name}-content", "namespace": ns, "labels": labels},
              "data": {"index.html": f"<h1>{spec.get('message', 'hello')}</h1>\n"}}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {
            "replicas": int(spec.get("replicas", 1)),
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "web", "image": spec["image"],
                                    "ports": [{"containerPort": 80}],
                                    "volumeMounts": [{"name": "content", "mountPath": "/usr/share/nginx/html"}]}],
                    "volumes": [{"name": "content", "configMap": {"name": f"{name}-content"}}],
                },
            },
        },
    }
    return config, deployment


async def reconcile(req: Request, ctx: Context) -> Result | None:
    app = ctx.get()
    if app is None:
        return None  # deleted: its children are garbage-collected through their ownerReferences
    config, deployment = children(app)
    await ctx.apply(config, owner=app)
    await ctx.apply(deployment, owner=app)
    await ctx.apply_status({"configMap": config["metadata"]["name"],
                            "deployment": deployment["metadata"]["name"],
                            "replicas": deployment["spec"]["replicas"],
                            "observedGeneration": app["metadata"].get("generation")})
    return None


def make_controller(name: str = "webapp") -> Controller:
    """A fresh WebApp controller."""
    return (Controller(name, for_=WEBAPP, reconcile=reconcile, predicates=[generation_changed])
            .owns("v1/ConfigMap")
            .owns("apps/v1/Deployment"))


def setup(manager: Manager) -> None:
    """``kubeloop run`` calls this with the Manager."""
    manager.add(make_controller())


def crd() -> dict[str, Any]:
    """The CustomResourceDefinition (crd.yaml)."""
    return load_crd(CRD_FILE)


async def install_crd(client: Client, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Create the CRD (if missing) and wait until the API serves WebApps."""
    await install(client, crd(), WEBAPP, timeout)
