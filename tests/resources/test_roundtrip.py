"""A derived CRD round-trips instances on the API server (emulator or real cluster) over HTTP:
served, defaults applied, invalid objects rejected with 422, status through the subresource,
objects read back as the typed model."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from kubeloop.client import Client, Invalid, NotFound, UnknownResource
from kubeloop.meta import semantically_equal
from kubeloop.resources import ResourceValidationError, crd, find_condition, set_condition

from .models import webapp_models

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


async def _served(client: Client, ref: str, namespace: str) -> None:
    """Wait until `ref` is discovered and its objects can be listed (a fresh CRD takes a moment)."""
    for _ in range(200):
        try:
            await client.resolve(ref)
            await client.list(ref, namespace=namespace)
            return
        except (UnknownResource, NotFound):
            await asyncio.sleep(0.05)
    pytest.fail(f"{ref} was never served")


@pytest.fixture
async def webapps(client: Client, namespace: str) -> AsyncIterator[tuple[Any, Any]]:
    group = f"kl{secrets.token_hex(3)}.example.com"
    v1, v2 = webapp_models(group)
    await client.create(crd(v1, v2))
    try:
        await _served(client, v1.resource(), namespace)
        await _served(client, v2.resource(), namespace)
        yield v1, v2
    finally:
        await client.delete(CRD, f"webapps.{group}")


async def test_defaults_are_applied_and_object_reads_back_typed(
        client: Client, namespace: str, webapps: tuple[Any, Any]) -> None:
    v1, v2 = webapps
    created = await client.create({"apiVersion": v2.__resource__.api_version, "kind": "WebApp",
                                   "metadata": {"name": "shop"},
                                   "spec": {"image": "nginx:1.25", "ports": [{"name": "http", "containerPort": 80}],
                                            "resources": {}, "extra": {"anything": {"goes": [1, "x"]}}}},
                                  namespace=namespace)
    spec = created["spec"]
    assert spec["replicas"] == 1 and spec["tier"] == "frontend" and spec["paused"] is False
    assert spec["ports"] == [{"name": "http", "containerPort": 80, "protocol": "TCP"}]
    assert spec["resources"] == {"cpu": "100m", "memory": "128Mi"}
    assert spec["extra"] == {"anything": {"goes": [1, "x"]}}  # preserved, not pruned
    assert created["message"] == "hello"
    got = await client.get(v2.resource(), "shop", namespace=namespace)
    app = v2.from_object(got)
    assert app.metadata.name == "shop" and app.metadata.namespace == namespace
    assert app.spec.ports[0].container_port == 80 and app.spec.resources.cpu == "100m"
    assert app.message == "hello" and app.status is None
    with pytest.raises(ValidationError):
        app.spec = app.spec  # frozen: a typed object is read-only like the cache
    # the same object served at v1 reads as the v1 model, not as v2
    old = await client.get(v1.resource(), "shop", namespace=namespace)
    assert v1.from_object(old).spec.image == "nginx:1.25"
    with pytest.raises(ResourceValidationError):
        v2.from_object(old)


async def test_unknown_fields_are_pruned(client: Client, namespace: str, webapps: tuple[Any, Any]) -> None:
    _, v2 = webapps
    created = await client.create({"apiVersion": v2.__resource__.api_version, "kind": "WebApp",
                                   "metadata": {"name": "pruned"},
                                   "spec": {"image": "nginx", "bogus": 1, "ports": [
                                       {"name": "http", "containerPort": 80, "junk": True}]}},
                                  namespace=namespace)
    assert "bogus" not in created["spec"] and "junk" not in created["spec"]["ports"][0]


@pytest.mark.parametrize(("spec", "field"), [
    ({"image": "nginx", "replicas": 11}, "spec.replicas"),
    ({"image": "nginx", "replicas": "two"}, "spec.replicas"),
    ({"image": "NGINX"}, "spec.image"),
    ({"image": ""}, "spec.image"),
    ({"image": "nginx", "tier": "middle"}, "spec.tier"),
    ({"image": "nginx", "weight": 0}, "spec.weight"),
    ({"image": "nginx", "ports": [{"name": "http"}]}, "spec.ports[0].containerPort"),
    ({"image": "nginx", "ports": [{"name": "a", "containerPort": 1}, {"name": "a", "containerPort": 2}]},
     "spec.ports[1]"),
    ({"image": "nginx", "hosts": ["a", "a"]}, "spec.hosts[1]"),
    ({"replicas": 1}, "spec.image"),
])
async def test_invalid_instances_are_rejected_with_422(
        client: Client, namespace: str, webapps: tuple[Any, Any], spec: dict, field: str) -> None:
    _, v2 = webapps
    with pytest.raises(Invalid) as err:
        await client.create({"apiVersion": v2.__resource__.api_version, "kind": "WebApp",
                             "metadata": {"name": "bad"}, "spec": spec}, namespace=namespace)
    assert err.value.code == 422
    assert any(c.get("field") == field for c in err.value.causes), err.value.causes


async def test_status_through_the_subresource_and_typed_conditions(
        client: Client, namespace: str, webapps: tuple[Any, Any]) -> None:
    _, v2 = webapps
    app = v2(metadata={"name": "st"}, spec={"image": "nginx", "replicas": 2})
    created = await client.create(app.to_object(), namespace=namespace)
    status: dict = {"readyReplicas": 2, "observedGeneration": created["metadata"]["generation"]}
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert set_condition(status, "Ready", True, "AllReplicasReady", "2/2 ready", at=at)
    created["status"] = status
    written = await client.replace_status(created, namespace=namespace)
    assert written["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-02T03:04:05Z"
    # a status written through the main resource is ignored, as with every status subresource
    spec_write = await client.patch(v2.resource(), "st", {"status": {"readyReplicas": 0}}, namespace=namespace)
    assert spec_write["status"]["readyReplicas"] == 2
    typed = v2.from_object(await client.get(v2.resource(), "st", namespace=namespace))
    assert typed.status is not None and typed.status.ready_replicas == 2
    ready = typed.status.conditions[0]
    assert (ready.type, ready.status, ready.reason) == ("Ready", "True", "AllReplicasReady")
    assert ready.last_transition_time == at
    assert find_condition(written["status"], "Ready") == written["status"]["conditions"][0]
    # scale subresource reads replicas from the paths the model declared
    scale = await client.request_json(
        "GET", f"/apis/{v2.__resource__.group}/v2/namespaces/{namespace}/webapps/st/scale")
    assert scale["spec"]["replicas"] == 2 and scale["status"]["replicas"] == 2


async def test_typed_object_written_back_is_unchanged(
        client: Client, namespace: str, webapps: tuple[Any, Any]) -> None:
    _, v2 = webapps
    # written as a user would (`weight: 1` in YAML): the float field holds the integer 1
    created = await client.create({"apiVersion": v2.__resource__.api_version, "kind": "WebApp",
                                   "metadata": {"name": "rt"}, "spec": {"image": "nginx", "weight": 1}},
                                  namespace=namespace)
    assert type(created["spec"]["weight"]) is int
    typed = v2.from_object(created)
    again = typed.to_object()
    for key in ("apiVersion", "kind", "spec", "message"):
        # as kube-apiserver compares: 1.0 where it stored 1 would be a spec change (a new generation)
        assert semantically_equal(again[key], created[key]), (key, again[key], created[key])
    replaced = await client.replace(again, namespace=namespace)
    assert replaced["metadata"]["generation"] == created["metadata"]["generation"]
    half = await client.replace(v2.from_object(replaced).model_copy(
        update={"spec": typed.spec.model_copy(update={"weight": 1.5})}).to_object(), namespace=namespace)
    assert half["spec"]["weight"] == 1.5 and half["metadata"]["generation"] == created["metadata"]["generation"] + 1
    again = v2.from_object(half).to_object()
    assert semantically_equal(again["spec"], half["spec"])
