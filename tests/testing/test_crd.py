"""CustomResourceDefinition strategy and the strategy of CRD-served resources."""

from __future__ import annotations

import copy

import pytest

from kubeloop.testing.apiserver.catalog import default_catalog
from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.kinds import crd as crdmod

from .test_kinds_core import create, info, invalid_fields, update

SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0},
        "replicas": {"type": "integer"},
        "color": {"type": "string", "default": "blue", "enum": ["blue", "red"]},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "weight": {"type": "integer", "default": 1}}},
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}}},
    "status": {"type": "object", "properties": {"phase": {"type": "string"}, "replicas": {"type": "integer"}}}}}


def crd_body(status: bool = True, scope: str = "Namespaced") -> dict:
    v: dict = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA}}
    if status:
        v["subresources"] = {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                     "statusReplicasPath": ".status.replicas"}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": scope, "versions": [v],
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wid"]}}}


def test_crd_create_defaults_and_status() -> None:
    crds = info("apiextensions.k8s.io", "customresourcedefinitions")
    obj = create(crds, crd_body() | {"status": {"storedVersions": ["x"]}})
    assert obj["spec"]["conversion"] == {"strategy": "None"}
    assert obj["spec"]["names"]["singular"] == "widget" and obj["spec"]["names"]["listKind"] == "WidgetList"
    # `conditions` has no omitempty: a new CRD's is null (as kube-apiserver 1.24 answers)
    assert obj["status"] == {"conditions": None, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}
    assert obj["metadata"]["generation"] == 1 and not crdmod.is_established(obj)
    est = crdmod.establish(obj)
    assert crdmod.is_established(est)
    assert est["status"]["acceptedNames"] == obj["spec"]["names"]
    assert sorted((c["type"], c["status"], c["reason"]) for c in est["status"]["conditions"]) == [
        ("Established", "True", "InitialNamesAccepted"), ("NamesAccepted", "True", "NoConflicts")]
    kept = copy.deepcopy(est)
    assert crds.strategy.prepare_for_delete(crds, kept) is False
    assert kept["metadata"]["finalizers"] == [crdmod.CLEANUP_FINALIZER]
    done = crdmod.finish_deletion(kept)
    assert "finalizers" not in done["metadata"]


def test_crd_validation() -> None:
    crds = info("apiextensions.k8s.io", "customresourcedefinitions")
    wrong_name = crd_body()
    wrong_name["metadata"]["name"] = "gadgets.example.com"
    assert invalid_fields(create, crds, wrong_name) == [("metadata.name", "FieldValueInvalid")]
    no_schema = crd_body()
    del no_schema["spec"]["versions"][0]["schema"]
    assert invalid_fields(create, crds, no_schema) == [("spec.versions[0].schema.openAPIV3Schema",
                                                        "FieldValueRequired")]
    untyped = crd_body()
    untyped["spec"]["versions"][0]["schema"] = {"openAPIV3Schema": {"type": "object", "properties": {"a": {}}}}
    assert invalid_fields(create, crds, untyped) == [
        ("spec.versions[0].schema.openAPIV3Schema.properties[a].type", "FieldValueRequired")]
    bad_scope = crd_body(scope="Galaxy")
    assert invalid_fields(create, crds, bad_scope) == [("spec.scope", "FieldValueNotSupported")]
    old = create(crds, crd_body())
    changed = copy.deepcopy(old)
    changed["spec"]["scope"] = "Cluster"
    assert ("spec.scope", "FieldValueInvalid") in invalid_fields(update, crds, changed, old)


def served(status: bool = True, scope: str = "Namespaced"):  # type: ignore[no-untyped-def]
    cat = default_catalog()
    obj = create(info("apiextensions.k8s.io", "customresourcedefinitions"), crd_body(status, scope))
    cat.add_crd(obj)
    found = cat.lookup("example.com", "v1", "widgets")
    assert found is not None
    return found


def widget(**spec: object) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": dict(spec)}


def test_cr_pruning_defaults_and_status_dropped() -> None:
    w = served()
    obj = create(w, widget(size=1, bogus="pruned", extra={"any": {"thing": [1, 2]}}, items=[{"name": "a"}])
                 | {"status": {"phase": "set-on-create"}, "topLevelJunk": True})
    assert obj["spec"] == {"size": 1, "color": "blue", "extra": {"any": {"thing": [1, 2]}},
                           "items": [{"name": "a", "weight": 1}]}
    assert "status" not in obj and "topLevelJunk" not in obj and obj["metadata"]["generation"] == 1
    g = served(status=False, scope="Cluster")
    kept = create(g, widget(size=1) | {"status": {"phase": "kept"}})
    assert kept["status"] == {"phase": "kept"} and not g.namespaced


def test_cr_generation_and_status_subresource() -> None:
    w = served()
    v1 = create(w, widget(size=1))
    v1["metadata"]["resourceVersion"] = "5"
    lab = copy.deepcopy(v1)
    lab["metadata"]["labels"] = {"l": "1"}
    lab["status"] = {"phase": "Ignored"}
    v2 = update(w, lab, v1)
    assert v2["metadata"]["generation"] == 1 and "status" not in v2
    spec = copy.deepcopy(v2)
    spec["spec"]["size"] = 2
    v3 = update(w, spec, v2)
    assert v3["metadata"]["generation"] == 2
    st = copy.deepcopy(v3)
    st["status"] = {"phase": "Ready"}
    st["spec"]["size"] = 50
    st["metadata"]["labels"] = {"l": "changed"}
    v4 = update(w, st, v3, status=True)
    assert v4["status"] == {"phase": "Ready"} and v4["spec"]["size"] == 2
    assert v4["metadata"]["labels"] == {"l": "1"} and v4["metadata"]["generation"] == 2
    # without a status subresource a status change is a change like any other
    g = served(status=False)
    o1 = create(g, widget(size=1))
    o2 = copy.deepcopy(o1)
    o2["status"] = {"phase": "x"}
    assert update(g, o2, o1)["metadata"]["generation"] == 2


def test_cr_schema_validation_messages() -> None:
    w = served()
    with pytest.raises(StatusError) as e:
        create(w, widget(size="big"))
    assert e.value.code == 422 and e.value.details == {"name": "w1", "group": "example.com", "kind": "Widget",
                                                       "causes": [{"reason": "FieldValueTypeInvalid",
                                                                   "message": 'Invalid value: "string": spec.size in '
                                                                              'body must be of type integer: "string"',
                                                                   "field": "spec.size"}]}
    with pytest.raises(StatusError) as e:
        create(w, widget(size=-1))
    assert e.value.details["causes"] == [  # type: ignore[index]
        {"reason": "FieldValueInvalid", "message": "Invalid value: -1: spec.size in body should be greater than or "
                                                   "equal to 0", "field": "spec.size"}]
    assert invalid_fields(create, w, widget(color="green")) == [("spec.color", "FieldValueNotSupported")]
    assert invalid_fields(create, w, widget(items=[{"name": "a"}, {"name": "a"}])) == [
        ("spec.items[1]", "FieldValueDuplicate")]
    with pytest.raises(StatusError) as e:
        create(w, widget() | {"kind": "Gadget"})
    assert e.value.details == {"name": "w1", "group": "example.com", "kind": "Gadget", "causes": [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "Gadget": must be Widget', "field": "kind"}]}


def test_cr_scale_and_list_types() -> None:
    w = served()
    obj = create(w, widget(replicas=2))
    obj["status"] = {"replicas": 1}
    scale = w.strategy.get_scale(w, obj)
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 1}
    w.strategy.apply_scale(w, obj, {"spec": {"replicas": 4}})
    assert obj["spec"]["replicas"] == 4
    lookup = w.strategy.list_types(w)  # type: ignore[attr-defined]
    items = lookup(("spec", "items"))
    assert items is not None and items.keys == ("name",)


def test_cr_version_conversion_keeps_body() -> None:
    w = served()
    obj = create(w, widget(size=1))
    stored = w.strategy.to_storage(w, obj)
    assert stored["apiVersion"] == "example.com/v1"
    assert w.strategy.from_storage(w, stored) is stored


def test_crd_status_write_keeps_metadata_and_spec() -> None:
    crds = info("apiextensions.k8s.io", "customresourcedefinitions")
    old = create(crds, crd_body())
    new = copy.deepcopy(crdmod.establish(old))
    new["metadata"]["labels"] = {"x": "y"}
    new["spec"]["scope"] = "Cluster"
    out = update(crds, new, old, status=True)
    assert "labels" not in out["metadata"] and out["spec"]["scope"] == "Namespaced"
    assert crdmod.is_established(out)


def test_crd_defaults_must_match_their_schema() -> None:
    crds = info("apiextensions.k8s.io", "customresourcedefinitions")
    body = crd_body()
    props = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    props["size"] = {"type": "integer", "default": "big"}
    with pytest.raises(StatusError) as e:
        create(crds, body)
    assert e.value.details["causes"] == [  # type: ignore[index]
        {"reason": "FieldValueTypeInvalid", "field":
         "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].default",
         "message": 'Invalid value: "string": spec.size in body must be of type integer: "string"'}]


def test_cr_read_in_another_version_gets_its_defaults() -> None:
    from kubeloop.testing.apiserver.catalog import Catalog

    body = crd_body()
    v2 = copy.deepcopy(body["spec"]["versions"][0])
    v2.update(name="v2", storage=False)
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["shape"] = {"type": "string",
                                                                                   "default": "round"}
    body["spec"]["versions"].append(v2)
    cat = Catalog()
    cat.add_crd(body)
    w1, w2 = cat.lookup("example.com", "v1", "widgets"), cat.lookup("example.com", "v2", "widgets")
    assert w1 is not None and w2 is not None
    stored = w1.strategy.to_storage(w1, create(w1, widget(size=1)))
    read = w2.strategy.from_storage(w2, stored)
    assert read["apiVersion"] == "example.com/v2" and read["spec"]["shape"] == "round"
    assert "shape" not in stored["spec"]
