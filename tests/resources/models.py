"""Sample typed resources for the tests: a WebApp kind in two versions, built per group so that
tests on a shared (real) cluster never collide."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from kubeloop.resources import (
    Condition,
    CustomResource,
    IntOrString,
    ListMap,
    Model,
    PreserveUnknownFields,
    PrinterColumn,
    Scale,
)


class Port(Model):
    """A port the application listens on."""

    name: str = Field(max_length=15)
    container_port: int = Field(ge=1, le=65535)
    protocol: Literal["TCP", "UDP"] = "TCP"


class Resources(Model):
    cpu: IntOrString = "100m"
    memory: str = "128Mi"


class WebAppSpec(Model):
    """The desired state of a WebApp."""

    image: str = Field(min_length=1, pattern=r"^[a-z0-9./:@-]+$")
    replicas: int = Field(1, ge=0, le=10, description="Pods to run.")
    ports: Annotated[list[Port], ListMap("name")] = []
    hosts: set[str] = set()
    resources: Resources | None = None
    tier: Literal["frontend", "backend"] = "frontend"
    paused: bool = False
    weight: float = Field(1.0, gt=0)
    extra: Annotated[dict[str, Any], PreserveUnknownFields()] = {}


class WebAppStatus(Model):
    ready_replicas: int = 0
    observed_generation: int | None = None
    conditions: Annotated[list[Condition], ListMap("type")] = []


def webapp_models(group: str) -> tuple[Any, Any]:
    """`WebApp` v1 (served, not stored) and v2 (the storage version, with a `message` field); typed
    as Any because the classes are made at run time (the group is random per test)."""

    class WebApp(CustomResource, group=group, version="v1", short_names=["wa"], categories=["all"],
                 printer_columns=[PrinterColumn("Image", ".spec.image"),
                                  PrinterColumn("Ready", ".status.readyReplicas", "integer")],
                 scale=Scale(status_replicas_path=".status.readyReplicas")):
        """A web application: a Deployment and a Service, managed as one."""

        spec: WebAppSpec
        status: WebAppStatus | None = None

    class WebAppV2(WebApp, version="v2", storage=True):
        """A web application (v2)."""

        message: str = "hello"

    return WebApp, WebAppV2
