"""Discovery documents and live CRD changes of the catalog."""

from __future__ import annotations

from kubeloop.testing.apiserver.catalog import Catalog, default_catalog, version_priority
from kubeloop.testing.apiserver.kinds.builtins import storage_version_hash


def entry(doc: dict | None, name: str) -> dict:
    assert doc is not None
    found = [e for e in doc["resources"] if e["name"] == name]
    assert len(found) == 1, name
    return found[0]


def test_core_discovery_matches_1_24() -> None:
    cat = default_catalog()
    doc = cat.resource_list("", "v1")
    assert doc is not None and doc["kind"] == "APIResourceList" and doc["groupVersion"] == "v1"
    assert "apiVersion" not in doc
    ns = entry(doc, "namespaces")
    assert ns == {"name": "namespaces", "singularName": "", "namespaced": False, "kind": "Namespace",
                  "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"], "shortNames": ["ns"],
                  "storageVersionHash": "Q3oi5N2YM8M="}
    assert entry(doc, "namespaces/status")["verbs"] == ["get", "patch", "update"]
    assert entry(doc, "namespaces/finalize")["verbs"] == ["update"]
    assert entry(doc, "pods")["categories"] == ["all"] and entry(doc, "pods")["storageVersionHash"] == "xPOwRZ+Yhw8="
    assert entry(doc, "configmaps")["storageVersionHash"] == "qFsyl6wFWjQ="
    assert "shortNames" not in entry(doc, "secrets")
    names = [e["name"] for e in doc["resources"]]
    assert names == sorted(names)


def test_group_discovery() -> None:
    cat = default_catalog()
    apps = cat.resource_list("apps", "v1")
    assert apps is not None and apps["apiVersion"] == "v1"
    scale = entry(apps, "deployments/scale")
    assert scale == {"name": "deployments/scale", "singularName": "", "namespaced": True, "group": "autoscaling",
                     "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}
    assert entry(apps, "deployments")["storageVersionHash"] == "8aSe+NMegvE="
    events = cat.resource_list("events.k8s.io", "v1")
    assert entry(events, "events")["storageVersionHash"] == "r2yiGXH7wu8="
    crds = cat.resource_list("apiextensions.k8s.io", "v1")
    crd = entry(crds, "customresourcedefinitions")
    assert crd["shortNames"] == ["crd", "crds"] and crd["categories"] == ["api-extensions"]
    assert crd["storageVersionHash"] == "jfWCUB31mvA="
    assert entry(cat.resource_list("coordination.k8s.io", "v1"), "leases")["storageVersionHash"] == "gqkMMb/YqFM="
    groups = cat.api_group_list()
    assert groups["kind"] == "APIGroupList" and groups["apiVersion"] == "v1"
    by_name = {g["name"]: g for g in groups["groups"]}
    assert "" not in by_name and "core" not in by_name
    for g in ("apps", "batch", "coordination.k8s.io", "events.k8s.io", "apiextensions.k8s.io"):
        assert by_name[g]["preferredVersion"] == {"groupVersion": f"{g}/v1", "version": "v1"}
    assert cat.api_group("apps") == {"kind": "APIGroup", "apiVersion": "v1", "name": "apps",
                                     "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
                                     "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}
    assert cat.api_group("nonexistent.example.com") is None
    assert cat.resource_list("apps", "v7") is None
    assert cat.api_versions()["versions"] == ["v1"]
    info = cat.version_info()
    assert {type(v) for v in info.values()} == {str} and info["minor"] == "24"


def test_storage_version_hash() -> None:
    assert storage_version_hash("", "v1", "ConfigMap") == "qFsyl6wFWjQ="


def test_version_priority() -> None:
    versions = ["v1alpha1", "foo", "v1beta1", "v2", "v1", "v1beta2", "v10"]
    assert sorted(versions, key=version_priority) == ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]


def widget_crd(group: str = "example.com", versions: tuple[str, ...] = ("v1",), served: bool = True) -> dict:
    return {"metadata": {"name": f"widgets.{group}"}, "spec": {
        "group": group, "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wid"]},
        "versions": [{"name": v, "served": served or v == versions[0], "storage": v == versions[0],
                      "schema": {"openAPIV3Schema": {"type": "object"}},
                      "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                               "statusReplicasPath": ".status.replicas"}}}
                     for v in versions]}}


def test_crd_served_live() -> None:
    cat = default_catalog()
    infos = cat.add_crd(widget_crd(versions=("v1", "v1beta1", "v2alpha1")))
    assert [i.version for i in infos] == ["v1", "v1beta1", "v2alpha1"]
    info = cat.lookup("example.com", "v1beta1", "widgets")
    assert info is not None and info.custom and info.crd_name == "widgets.example.com" and info.namespaced
    assert info.singular == "widget" and info.has_status and info.list_items_have_kind
    assert "application/strategic-merge-patch+json" not in info.patch_types
    assert cat.lookup_kind("example.com", "v1", "Widget") is not None
    assert len(cat.sharing_storage(info)) == 3
    doc = cat.resource_list("example.com", "v1")
    widgets = entry(doc, "widgets")
    assert widgets["singularName"] == "widget" and widgets["shortNames"] == ["wid"]
    assert widgets["storageVersionHash"] == storage_version_hash("example.com", "v1", "Widget")
    assert entry(doc, "widgets/status")["singularName"] == ""
    assert entry(doc, "widgets/scale")["group"] == "autoscaling"
    group = cat.api_group("example.com")
    assert group is not None and group["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1", "v2alpha1"]
    assert "example.com" in [g["name"] for g in cat.api_group_list()["groups"]]
    cat.remove_crd(widget_crd())
    assert cat.lookup("example.com", "v1", "widgets") is None
    assert cat.api_group("example.com") is None and not cat.group_exists("example.com")


def test_unserved_versions_are_not_routed() -> None:
    cat = Catalog()
    cat.add_crd(widget_crd(versions=("v1", "v2"), served=False))
    assert cat.lookup("example.com", "v1", "widgets") is not None
    assert cat.lookup("example.com", "v2", "widgets") is None
    assert not cat.version_exists("example.com", "v2")
    # re-adding after an update replaces the served set
    cat.add_crd(widget_crd(versions=("v1", "v2")))
    assert cat.lookup("example.com", "v2", "widgets") is not None
    assert len(cat.crd_resources("widgets.example.com")) == 2


def test_crd_names_conflict() -> None:
    from kubeloop.testing.apiserver.kinds.crd import establish, is_established

    cat = default_catalog()
    cat.add_crd(widget_crd())
    assert cat.names_conflict(widget_crd()) is None  # a CRD never conflicts with itself
    other = widget_crd()
    other["metadata"]["name"] = "gadgets.example.com"
    other["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Widget", "listKind": "GadgetList"}
    assert cat.names_conflict(other) == '"Widget" is already in use'
    other["spec"]["names"].update(kind="Gadget", shortNames=["wid"])
    assert cat.names_conflict(other) == '"wid" is already in use'
    refused = establish(other, cat.names_conflict(other))
    assert not is_established(refused)
    assert {c["type"]: c["reason"] for c in refused["status"]["conditions"]} == {
        "NamesAccepted": "NameConflict", "Established": "NotAccepted"}
    builtin = widget_crd(group="apps")
    builtin["spec"]["names"] = {"plural": "deployments", "singular": "deployment", "kind": "Deployment"}
    assert cat.names_conflict(builtin) == '"deployments" is already in use'
