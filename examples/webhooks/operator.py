"""Widget: one resource in two versions, with conversion, validating and mutating webhooks.

    apiVersion: webhooks.examples.kubeloop.dev/v1        apiVersion: webhooks.examples.kubeloop.dev/v2
    kind: Widget                                         kind: Widget
    spec: {size: medium}          <- conversion ->       spec: {replicas: 3}

- `v1` has `spec.size` (small, medium or large); `v2`, the storage version and the hub, has
  `spec.replicas` (1-10). small = 1, medium = 3, large = 5 replicas. A `v2` Widget with another
  count (7) reads as `v1` with the nearest size at or below it (`large`), and the 7 is kept in
  the `kubeloop.dev/conversion-data` annotation, so it reads back as 7 in `v2` after any `v1`
  round trip (kubectl get -o yaml | kubectl replace); a `v1` client who changes the size gets
  that size's count.
- A validating webhook denies Widgets whose name starts with `forbidden-`.
- A mutating webhook adds the label `webhooks.examples.kubeloop.dev/managed=true` when missing.

Everything else is derived from the declarations below: the CRD with its `conversion: Webhook`
block (`webhooks.crds(client_config)`), the Validating/MutatingWebhookConfigurations
(`webhooks.configurations(client_config)`), the routes of the `WebhookServer`, and the
certificates (`SecretCertificates` in a cluster, `EphemeralCertificates` on loopback).
`examples/webhooks/test_operator.py` runs it on the emulator (and on a real cluster with
`KUBELOOP_TEST_KUBECONFIG`): the webhook server runs in the test process and the API server calls
it at `https://127.0.0.1:<port>`.

    kubeloop run examples/webhooks/operator.py --webhook-host 127.0.0.1 --kubeconfig K   # the dev loop
    kubeloop manifests examples/webhooks/operator.py -n widgets --image I                # to install it

`kubeloop run` finds `webhooks` below by the module convention and serves it (the module needs no
controller); with `--webhook-host` it installs the configurations and the CRD for the run and puts
the cluster back on exit.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kubeloop.resources import CustomResource, Model, PrinterColumn, Spoke, Versions
from kubeloop.webhooks import AdmissionRequest, Verdict, Webhooks, allow, deny

GROUP = "webhooks.examples.kubeloop.dev"
MANAGED_LABEL = f"{GROUP}/managed"
#: replicas of each v1 size
SIZES = {"small": 1, "medium": 3, "large": 5}


class WidgetSpecV1(Model):
    size: Literal["small", "medium", "large"]


class WidgetV1(CustomResource, group=GROUP, version="v1", kind="Widget",
               printer_columns=[PrinterColumn("Size", ".spec.size")]):
    """A widget, sized by name."""

    spec: WidgetSpecV1


class WidgetSpec(Model):
    replicas: int = Field(ge=1, le=10, description="How many of it to run.")


class Widget(CustomResource, group=GROUP, version="v2", storage=True,
             printer_columns=[PrinterColumn("Replicas", ".spec.replicas", "integer")]):
    """A widget, sized by replica count."""

    spec: WidgetSpec


def to_v2(widget: WidgetV1) -> Widget:
    return Widget(spec=WidgetSpec(replicas=SIZES[widget.spec.size]))


def to_v1(widget: Widget) -> WidgetV1:
    replicas = widget.spec.replicas
    size = "large" if replicas >= SIZES["large"] else "medium" if replicas >= SIZES["medium"] else "small"
    return WidgetV1(spec=WidgetSpecV1(size=size))


VERSIONS = Versions(Widget, Spoke(WidgetV1, to_hub=to_v2, from_hub=to_v1))

webhooks = Webhooks(f"widgets.{GROUP}")
webhooks.conversion(VERSIONS)


@webhooks.validating(Widget)
def forbidden_names(req: AdmissionRequest[Widget]) -> Verdict:
    if req.name.startswith("forbidden-"):
        return deny(f"Widget names may not start with 'forbidden-' (got {req.name!r})")
    return allow()


@webhooks.mutating(Widget)
def managed_label(req: AdmissionRequest[Widget]) -> Widget | None:
    widget = req.object
    if widget is None or MANAGED_LABEL in widget.metadata.labels:
        return None
    labels = {**widget.metadata.labels, MANAGED_LABEL: "true"}
    return widget.model_copy(update={"metadata": widget.metadata.model_copy(update={"labels": labels})})
