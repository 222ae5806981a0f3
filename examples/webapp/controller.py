"""WebApp: a typed custom resource that owns a ConfigMap and a Deployment, written with server-side apply.

    apiVersion: examples.kubeloop.dev/v1
    kind: WebApp
    metadata: {name: shop, namespace: demo}
    spec: {image: "nginx:1.27", replicas: 2, message: "hello"}

Every reconcile *declares* the children (``ctx.apply``: server-side apply as field manager ``webapp``,
with the WebApp as controller owner) and the status. It never reads-modifies-writes, so it needs no
conflict handling, and it is quiet in steady state: ``ctx.apply`` skips a write the cache shows would
change nothing, ``generation_changed`` ignores the WebApp's own status updates, and the children are
watched (``owns``), so a child deleted or edited by hand is repaired at once.

    kubeloop manifests examples/webapp/controller.py | kubectl apply -f -   # the CRD, RBAC, a Deployment
    kubeloop run examples/webapp/controller.py                              # or run it from here
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.controller import generation_changed
from kubeloop.resources import CustomResource, Model, PrinterColumn


class WebAppSpec(Model):
    image: str = Field(min_length=1)
    replicas: int = Field(1, ge=0)
    message: str = "hello"


class WebAppStatus(Model):
    config_map: str
    deployment: str
    replicas: int
    observed_generation: int | None = None


class WebApp(CustomResource, group="examples.kubeloop.dev", version="v1",
             printer_columns=[PrinterColumn("Replicas", ".spec.replicas", "integer"),
                              PrinterColumn("Observed", ".status.observedGeneration", "integer")]):
    """A web server showing ``spec.message``."""

    spec: WebAppSpec
    status: WebAppStatus | None = None


def children(app: WebApp) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ConfigMap (the page) and the Deployment (serving it) a WebApp declares."""
    name = app.metadata.name
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "kubeloop-webapp"}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-content", "labels": labels},
              "data": {"index.html": f"<h1>{app.spec.message}</h1>\n"}}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": app.spec.replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "web", "image": app.spec.image, "ports": [{"containerPort": 80}],
                                    "volumeMounts": [{"name": "content", "mountPath": "/usr/share/nginx/html"}]}],
                    "volumes": [{"name": "content", "configMap": {"name": f"{name}-content"}}],
                },
            },
        },
    }
    return config, deployment


async def reconcile(req: Request, ctx: Context) -> Result | None:
    app = ctx.get(WebApp)  # from the cache, validated and read-only; None: deleted
    if app is None:
        return None  # its children go with it: the garbage collector follows their ownerReferences
    config, deployment = children(app)
    await ctx.apply(config, owner=app)  # in the WebApp's namespace; skipped when it would change nothing
    await ctx.apply(deployment, owner=app)
    status = WebAppStatus(config_map=config["metadata"]["name"], deployment=deployment["metadata"]["name"],
                          replicas=app.spec.replicas, observed_generation=app.metadata.generation)
    await ctx.apply_status(status.model_dump(exclude_none=True))
    return None


def make_controller(name: str = "webapp") -> Controller:
    """A fresh WebApp controller (a controller runs in one Manager at a time)."""
    return (Controller(name, for_=WebApp, reconcile=reconcile, predicates=[generation_changed])
            .owns("v1/ConfigMap")
            .owns("apps/v1/Deployment"))


def setup(manager: Manager) -> None:
    """``kubeloop run`` calls this with the Manager."""
    manager.add(make_controller())
