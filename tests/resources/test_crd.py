"""Deriving CRDs from typed models: what each schema feature maps to, the structural-schema rules a
real kube-apiserver enforces, and clear errors for what cannot be expressed."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated, Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from kubeloop.resources import (
    Atomic,
    CustomResource,
    ListMap,
    ListSet,
    Model,
    PrinterColumn,
    ResourceValidationError,
    Scale,
    SchemaError,
    check_structural,
    crd,
    crd_yaml,
    structural_problems,
)

from .models import webapp_models


def walk(schema: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out = [(path, schema)]
    for key, sub in (schema.get("properties") or {}).items():
        out += walk(sub, f"{path}.{key}")
    if isinstance(schema.get("items"), dict):
        out += walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        out += walk(schema["additionalProperties"], f"{path}[*]")
    return out


@pytest.fixture
def webapp_crd() -> dict[str, Any]:
    return crd(*webapp_models("apps.example.com"))


def spec_schema(c: dict[str, Any], version: int = 1) -> dict[str, Any]:
    return c["spec"]["versions"][version]["schema"]["openAPIV3Schema"]["properties"]["spec"]


def test_crd_names_scope_versions_and_subresources(webapp_crd: dict[str, Any]) -> None:
    assert webapp_crd["metadata"]["name"] == "webapps.apps.example.com"
    spec = webapp_crd["spec"]
    assert spec["group"] == "apps.example.com" and spec["scope"] == "Namespaced"
    assert spec["names"] == {"plural": "webapps", "singular": "webapp", "kind": "WebApp", "listKind": "WebAppList",
                             "shortNames": ["wa"], "categories": ["all"]}
    v1, v2 = spec["versions"]
    assert (v1["name"], v1["served"], v1["storage"]) == ("v1", True, False)
    assert (v2["name"], v2["served"], v2["storage"]) == ("v2", True, True)
    assert v1["subresources"] == {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                         "statusReplicasPath": ".status.readyReplicas"}}
    assert v1["additionalPrinterColumns"] == [{"name": "Image", "type": "string", "jsonPath": ".spec.image"},
                                              {"name": "Ready", "type": "integer", "jsonPath": ".status.readyReplicas"}]
    assert "message" in v2["schema"]["openAPIV3Schema"]["properties"]
    assert "message" not in v1["schema"]["openAPIV3Schema"]["properties"]


def test_every_version_schema_is_structural(webapp_crd: dict[str, Any]) -> None:
    for version in webapp_crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        assert structural_problems(schema) == []
        assert schema["type"] == "object" and "default" not in schema
        assert schema["properties"]["metadata"] == {"type": "object"}
        assert schema["required"] == ["spec"]
        for path, node in walk(schema):
            assert not {"$ref", "$defs", "anyOf", "oneOf", "allOf", "not", "title", "uniqueItems"} & set(node), path
            assert "type" in node or node.get("x-kubernetes-int-or-string") or \
                node.get("x-kubernetes-preserve-unknown-fields"), path
            assert not ("properties" in node and "additionalProperties" in node), path
            assert "nullable" not in node or "type" in node, path


def test_schema_features_map_to_openapi(webapp_crd: dict[str, Any]) -> None:
    spec = spec_schema(webapp_crd)
    props = spec["properties"]
    assert spec["required"] == ["image"] and spec["description"] == "The desired state of a WebApp."
    assert props["image"] == {"minLength": 1, "pattern": "^[a-z0-9./:@-]+$", "type": "string"}
    assert props["replicas"] == {"default": 1, "description": "Pods to run.", "maximum": 10, "minimum": 0,
                                 "type": "integer"}
    assert props["weight"] == {"default": 1.0, "minimum": 0, "exclusiveMinimum": True, "type": "number"}
    assert props["tier"] == {"default": "frontend", "enum": ["frontend", "backend"], "type": "string"}
    assert props["paused"] == {"default": False, "type": "boolean"}
    ports = props["ports"]
    assert ports["x-kubernetes-list-type"] == "map" and ports["x-kubernetes-list-map-keys"] == ["name"]
    assert ports["items"]["required"] == ["name", "containerPort"]
    assert ports["items"]["properties"]["containerPort"] == {"maximum": 65535, "minimum": 1, "type": "integer"}
    assert ports["items"]["properties"]["protocol"]["default"] == "TCP"
    assert props["hosts"] == {"default": [], "items": {"type": "string"}, "type": "array",
                              "x-kubernetes-list-type": "set"}
    # X | None is just X, not required, no null default (the API server drops nulls of such fields)
    res = props["resources"]
    assert res["type"] == "object" and "default" not in res and "nullable" not in res
    assert res["properties"]["cpu"] == {"x-kubernetes-int-or-string": True, "default": "100m"}
    assert props["extra"]["x-kubernetes-preserve-unknown-fields"] is True
    conds = webapp_crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["status"][
        "properties"]["conditions"]
    assert conds["x-kubernetes-list-map-keys"] == ["type"]
    assert conds["items"]["properties"]["lastTransitionTime"] == {"format": "date-time", "type": "string"}
    assert conds["items"]["properties"]["status"]["enum"] == ["True", "False", "Unknown"]


def test_markers_any_and_extra_allow() -> None:
    class Free(Model):
        model_config = ConfigDict(extra="allow")
        known: int = 0

    class Spec(Model):
        anything: Any = None
        labels: dict[str, str] = {}
        blob: dict[str, Any] = {}
        ordered: Annotated[list[str], Atomic()] = []
        unique: Annotated[list[int], ListSet()] = []
        frozen_map: Annotated[dict[str, str], Atomic()] = {}
        free: Free = Free()

    class Thing(CustomResource, group="t.example.com", version="v1alpha1", scope="Cluster"):
        spec: Spec = Spec()

    c = crd(Thing)
    assert c["spec"]["scope"] == "Cluster" and "subresources" not in c["spec"]["versions"][0]
    props = spec_schema(c, 0)["properties"]
    assert props["anything"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert props["labels"] == {"additionalProperties": {"type": "string"}, "default": {}, "type": "object"}
    assert props["blob"] == {"x-kubernetes-preserve-unknown-fields": True, "default": {}, "type": "object"}
    assert props["ordered"]["x-kubernetes-list-type"] == "atomic"
    assert props["unique"]["x-kubernetes-list-type"] == "set"
    assert props["frozenMap"]["x-kubernetes-map-type"] == "atomic"
    assert props["free"]["x-kubernetes-preserve-unknown-fields"] is True
    assert props["free"]["properties"]["known"] == {"default": 0, "type": "integer"}
    assert props["free"]["default"] == {"known": 0}
    check_structural(c["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


def test_plain_pydantic_models_and_names() -> None:
    class Spec(BaseModel):  # not a kubeloop Model: field names as written
        max_size: int = Field(3, multiple_of=3)

    class Policy(CustomResource, group="p.example.com", version="v1", kind="Policy", plural="policies"):
        spec: Spec

    class Box(CustomResource, group="p.example.com", version="v1"):
        spec: Spec

    assert crd(Policy)["spec"]["names"]["plural"] == "policies"
    assert crd(Box)["spec"]["names"]["plural"] == "boxes"
    assert spec_schema(crd(Box), 0)["properties"]["max_size"] == {"default": 3, "multipleOf": 3, "type": "integer"}
    assert Box.resource() == "p.example.com/v1/Box"


def test_yaml_output_round_trips(webapp_crd: dict[str, Any]) -> None:
    text = crd_yaml(*webapp_models("apps.example.com"))
    assert text.startswith("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n")
    assert yaml.safe_load(text) == webapp_crd


def test_storage_version_rules() -> None:
    class A(CustomResource, group="s.example.com", version="v1"):
        spec: dict[str, Any] = {}

    class B(A, version="v2"):
        pass

    class C(A, version="v3", storage=True):
        pass

    class D(A, version="v4", storage=True):
        pass

    assert crd(A)["spec"]["versions"][0]["storage"] is True
    with pytest.raises(SchemaError, match="exactly one version must be the storage version"):
        crd(A, B)
    with pytest.raises(SchemaError, match="exactly one version"):
        crd(C, D)
    assert [v["storage"] for v in crd(A, B, C)["spec"]["versions"]] == [False, False, True]
    with pytest.raises(SchemaError, match="more than once"):
        crd(A, A)

    class E(C, version="v5"):  # a newer version does not inherit the parent's storage role
        pass

    assert [v["storage"] for v in crd(C, E)["spec"]["versions"]] == [True, False]

    class Other(CustomResource, group="s.example.com", version="v9", kind="Other"):
        spec: dict[str, Any] = {}

    with pytest.raises(SchemaError, match="differ in kind"):
        crd(C, Other)


def test_unstructural_models_are_clear_errors() -> None:
    class X(Model):
        a: int = 0

    class Y(Model):
        b: str = ""

    class Node(Model):
        children: list[Node] = []

    class Union(CustomResource, group="u.example.com", version="v1"):
        spec: X | Y

    class Tuple(CustomResource, group="u.example.com", version="v1"):
        spec: tuple[int, str]

    class Tree(CustomResource, group="u.example.com", version="v1"):
        spec: Node

    class BadDefault(CustomResource, group="u.example.com", version="v1"):
        spec: int = Field(20, le=10)

    with pytest.raises(SchemaError, match="union of"):
        crd(Union)
    with pytest.raises(SchemaError, match="tuples"):
        crd(Tuple)
    with pytest.raises(SchemaError, match="recursive"):
        crd(Tree)
    with pytest.raises(SchemaError, match="above the maximum"):
        crd(BadDefault)
    with pytest.raises(SchemaError, match="map key must be required or have a default"):
        class Item(Model):
            key: str | None = None

        class Keyed(CustomResource, group="u.example.com", version="v1"):
            items: Annotated[list[Item], ListMap("key")] = []

        crd(Keyed)


def test_bad_declarations_fail_at_class_definition() -> None:
    with pytest.raises(TypeError, match="needs group= and version="):
        class NoVersion(CustomResource, group="x.example.com"):
            pass
    with pytest.raises(TypeError, match="DNS subdomain"):
        class BadGroup(CustomResource, group="nodots", version="v1"):
            pass
    with pytest.raises(TypeError, match="look like v1"):
        class BadVersion(CustomResource, group="x.example.com", version="1.0"):
            pass
    with pytest.raises(TypeError, match="unknown CustomResource option"):
        class Typo(CustomResource, group="x.example.com", version="v1", shortnames=["x"]):
            pass
    with pytest.raises(TypeError, match="list or tuple"):
        class Str(CustomResource, group="x.example.com", version="v1", short_names="x"):
            pass
    with pytest.raises(TypeError, match=r"must be under \.status"):
        class BadScale(CustomResource, group="x.example.com", version="v1", scale=Scale(".spec.n", ".n")):
            pass
    with pytest.raises(TypeError, match="json_path must start with"):
        class BadColumn(CustomResource, group="x.example.com", version="v1",
                        printer_columns=[PrinterColumn("N", "spec.n")]):
            pass
    with pytest.raises(TypeError, match="expected a CustomResource subclass"):
        crd(CustomResource)  # the abstract base has no CRD
    with pytest.raises(SchemaError, match="status=True needs a `status` field"):
        class NoStatus(CustomResource, group="x.example.com", version="v1", status=True):
            pass
        crd(NoStatus)


def test_structural_checker_catches_what_kube_apiserver_rejects() -> None:
    def problems(props: dict[str, Any]) -> str:
        return "\n".join(structural_problems({"type": "object", "properties": props}))

    assert "type: must not be empty" in problems({"a": {"description": "no type"}})
    assert "'$ref' is not allowed" in problems({"a": {"$ref": "#/definitions/A"}})
    assert "mutually exclusive" in problems({"a": {"type": "object", "properties": {},
                                                   "additionalProperties": {"type": "string"}}})
    assert "additionalProperties: must be a schema" in problems({"a": {"type": "object",
                                                                       "additionalProperties": True}})
    assert "uniqueItems: cannot be true" in problems({"a": {"type": "array", "items": {"type": "string"},
                                                            "uniqueItems": True}})
    assert "nullable: needs a type" in problems({"a": {"nullable": True,
                                                        "x-kubernetes-preserve-unknown-fields": True}})
    assert "must be true or undefined" in problems({"a": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": False}})
    assert "null is not allowed" in problems({"a": {"type": "string", "default": None}})
    assert "unknown field (it would be pruned)" in problems({"a": {"type": "object", "properties": {},
                                                                   "default": {"x": 1}}})
    assert "'anyOf' is not allowed" in problems({"a": {"anyOf": [{"type": "string"}]}})
    assert "only name and generateName" in problems({"metadata": {"type": "object", "properties": {
        "labels": {"type": "object"}}}})
    assert "must be 'object' at the root" in "\n".join(structural_problems({"type": "string"}))
    assert "must not be set at the root" in "\n".join(structural_problems({"type": "object", "default": {}}))
    assert "a set's items must be scalars" in problems({"a": {"type": "array", "x-kubernetes-list-type": "set",
                                                              "items": {"type": "object"}}})
    assert "enum[1]: must be of type string" in problems({"a": {"type": "string", "enum": ["a", 1]}})
    with pytest.raises(SchemaError, match="not structural"):
        check_structural({"type": "object", "properties": {"a": {}}})


def test_from_object_is_validated_and_frozen() -> None:
    v1, _ = webapp_models("apps.example.com")
    obj = {"apiVersion": "apps.example.com/v1", "kind": "WebApp",
           "metadata": {"name": "a", "namespace": "ns", "labels": {"x": "y"},
                        "managedFields": [{"manager": "m"}]},
           "spec": {"image": "nginx", "replicas": 3, "ports": [{"name": "http", "containerPort": 80}]}}
    app = v1.from_object(obj)
    assert app.spec.replicas == 3 and app.metadata.labels == {"x": "y"}
    assert app.to_object()["metadata"] == {"name": "a", "namespace": "ns", "labels": {"x": "y"},
                                               "managedFields": [{"manager": "m"}]}
    with pytest.raises(ResourceValidationError, match="WebApp ns/a is not a valid WebApp"):
        v1.from_object({**obj, "spec": {"image": "nginx", "replicas": "many"}})
    with pytest.raises(ResourceValidationError, match="kind is 'Other'"):
        v1.from_object({**obj, "kind": "Other"})
    with pytest.raises(ResourceValidationError, match="needs a Kubernetes object"):
        v1.from_object([obj])
    with pytest.raises(ValueError, match="frozen"):
        app.spec.replicas = 4


def test_from_object_reads_read_only_views() -> None:
    from types import MappingProxyType

    v1, _ = webapp_models("apps.example.com")
    spec = MappingProxyType({"image": "nginx", "ports": (MappingProxyType({"name": "a", "containerPort": 1}),)})
    view = MappingProxyType({"apiVersion": "apps.example.com/v1", "kind": "WebApp",
                             "metadata": MappingProxyType({"name": "a"}), "spec": spec})
    assert v1.from_object(view).spec.ports[0].name == "a"


def test_typed_layer_is_not_imported_by_kubeloop_or_the_helpers() -> None:
    code = ("import sys, kubeloop, kubeloop.resources\n"
            "from kubeloop.resources import set_condition, format_time, object_reference\n"
            "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
            "from kubeloop.resources import CustomResource\n"
            "assert 'pydantic' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_printer_columns_and_deprecation() -> None:
    class Old(CustomResource, group="d.example.com", version="v1beta1", deprecated="use v1",
              printer_columns=[PrinterColumn("Age", ".metadata.creationTimestamp", "date", priority=1,
                                             description="how old")]):
        spec: dict[str, Any] = {}

    v = crd(Old)["spec"]["versions"][0]
    assert v["deprecated"] is True and v["deprecationWarning"] == "use v1"
    assert v["additionalPrinterColumns"] == [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                                              "description": "how old", "priority": 1}]


def test_enums_and_list_lengths() -> None:
    import enum

    class Color(enum.StrEnum):
        red = "red"
        blue = "blue"

    class Spec(Model):
        color: Color = Color.red
        names: list[str] = Field(default_factory=list, min_length=1, max_length=3)

    class Paint(CustomResource, group="e.example.com", version="v1"):
        spec: Spec

    props = spec_schema(crd(Paint), 0)["properties"]
    assert props["color"] == {"enum": ["red", "blue"], "type": "string", "default": "red"}
    assert props["names"] == {"items": {"type": "string"}, "maxItems": 3, "minItems": 1, "type": "array"}
