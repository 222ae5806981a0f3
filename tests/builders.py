"""Object builders shared by the tests (one definition each, instead of one per file).

`MINE` is a label the tests put on the objects they create when they list or watch a whole
namespace: a real cluster adds objects of its own to every namespace (the `kube-root-ca.crt`
ConfigMap, the `default` ServiceAccount), so a test scopes its reads to what it created.
"""

from __future__ import annotations

from typing import Any

MINE = "kubeloop-test"
"""Label key (value "1") marking an object as created by the test; also the selector for them."""


def cm(name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None, *,
       namespace: str | None = None) -> dict[str, Any]:
    """A ConfigMap manifest (``data`` defaults to empty)."""
    md: dict[str, Any] = {"name": name}
    if namespace is not None:
        md["namespace"] = namespace
    if labels:
        md["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": dict(data or {})}


def label(obj: dict[str, Any], **labels: str) -> dict[str, Any]:
    """``obj`` with the `MINE` label (and ``labels``) added, so a selector picks out the test's own objects."""
    md = obj.setdefault("metadata", {})
    md["labels"] = {**(md.get("labels") or {}), MINE: "1", **labels}
    return obj
