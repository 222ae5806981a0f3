"""Helpers shared by the scenarios: namespaces, bodies."""

from __future__ import annotations

from typing import Any

from ..harness import Run

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSONPATCH = "application/json-patch+json"
SMP = "application/strategic-merge-patch+json"


async def namespace(run: Run, tag: str) -> str:
    """A namespace of this run's own (created unrecorded; deleted at the end)."""
    ns = run.ns(tag)
    await run.raw("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    run.on_cleanup(f"/api/v1/namespaces/{ns}")
    return ns


def template(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec}}


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, **extra}
