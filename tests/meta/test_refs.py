"""ObjectReference and OwnerReference builders."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from kubeloop import meta
from kubeloop.meta import AlreadyOwnedError, IncompleteObjectError, InvalidOwnerError


def obj(kind: str, name: str, uid: str, namespace: str | None = "ns", api: str = "example.com/v1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": uid, "resourceVersion": "7"}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta}


def test_object_reference() -> None:
    app = obj("WebApp", "shop", "u1")
    assert meta.object_reference(app) == {"apiVersion": "example.com/v1", "kind": "WebApp", "name": "shop",
                                     "namespace": "ns", "uid": "u1", "resourceVersion": "7"}
    assert meta.object_reference(app, field_path="spec.ports{http}", resource_version=False) == {
        "apiVersion": "example.com/v1", "kind": "WebApp", "name": "shop", "namespace": "ns", "uid": "u1",
        "fieldPath": "spec.ports{http}"}
    node = obj("Node", "n1", "u2", namespace=None, api="v1")
    assert "namespace" not in meta.object_reference(MappingProxyType(node))
    with pytest.raises(IncompleteObjectError, match="missing kind"):
        meta.object_reference({"apiVersion": "v1", "metadata": {"name": "x"}})


def test_owner_reference_needs_the_uid() -> None:
    assert meta.owner_reference(obj("WebApp", "shop", "u1")) == {
        "apiVersion": "example.com/v1", "kind": "WebApp", "name": "shop", "uid": "u1", "controller": True,
        "blockOwnerDeletion": True}
    with pytest.raises(IncompleteObjectError, match=r"metadata\.uid"):
        meta.owner_reference({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "local"}})


def test_set_controller_reference_updates_same_owner_and_refuses_another() -> None:
    owner = obj("WebApp", "shop", "u1")
    child: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}
    assert meta.set_controller_reference(owner, child) is child
    meta.set_controller_reference(obj("WebApp", "shop", "u1", api="example.com/v2"), child)  # version moved on
    refs = child["metadata"]["ownerReferences"]
    assert len(refs) == 1 and refs[0]["apiVersion"] == "example.com/v2"
    assert meta.controller_of(child) == refs[0] and meta.is_owned_by(child, owner)
    with pytest.raises(AlreadyOwnedError, match="already controlled by WebApp 'shop'"):
        meta.set_controller_reference(obj("WebApp", "other", "u9"), child)
    meta.set_owner_reference(obj("Team", "t", "u3"), child)
    assert [r["controller"] for r in child["metadata"]["ownerReferences"]] == [True, False]
    assert not meta.is_owned_by(child, obj("WebApp", "other", "u9"))


def test_cross_namespace_owner_is_refused() -> None:
    with pytest.raises(InvalidOwnerError, match="cross-namespace"):
        meta.set_controller_reference(obj("WebApp", "shop", "u1", namespace="a"),
                                 {"metadata": {"name": "c", "namespace": "b"}})
    # a cluster-scoped owner may own a namespaced object
    child: dict[str, Any] = {"metadata": {"name": "c", "namespace": "b"}}
    meta.set_controller_reference(obj("Tenant", "t", "u5", namespace=None), child)
    assert meta.controller_of(child) is not None and meta.controller_of({"metadata": {}}) is None
