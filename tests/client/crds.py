"""A sample CustomResourceDefinition for integration tests of the layers that work with CRDs."""

from __future__ import annotations

from typing import Any


def widget_crd(group: str, *, status: bool = True) -> dict[str, Any]:
    """`widgets.<group>`: a namespaced Widget kind, any fields, with a status subresource unless `status=False`."""
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [version]},
    }
