"""Merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch, as kube-apiserver applies them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.listtypes import (
    ListType,
    builtin_list_types,
    combine,
    list_types_for,
    schema_list_types,
)
from kubeloop.testing.apiserver.patch import json_equal, json_merge_patch, json_patch, strategic_merge_patch

# ---- generators -----------------------------------------------------------------------------------
keys = st.sampled_from(["a", "b", "c", "d", "x/y", "~t", ""])
scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)), max_leaves=12)
docs = st.dictionaries(keys, values, max_size=4)


def make_merge_patch(a: Any, b: Any) -> Any:
    """The RFC 7386 patch that turns `a` into `b` (b holds no nulls)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return b
    p: dict[str, Any] = {}
    for k in a:
        if k not in b:
            p[k] = None
    for k, v in b.items():
        if k not in a:
            p[k] = v
        elif isinstance(v, dict) and isinstance(a[k], dict):
            sub = make_merge_patch(a[k], v)
            if sub:
                p[k] = sub
        elif not json_equal(a[k], v) or isinstance(v, dict):
            p[k] = v
    return p


def ptr(*tokens: str) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


# ---- merge patch ----------------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(docs, docs)
def test_merge_patch_of_two_docs_turns_first_into_second(a: dict[str, Any], b: dict[str, Any]) -> None:
    before = copy.deepcopy(a)
    patch = make_merge_patch(a, b)
    assert json_merge_patch(a, patch) == b
    assert a == before  # inputs untouched


@settings(max_examples=100, deadline=None)
@given(docs, docs)
def test_merge_patch_result_shares_nothing_with_inputs(a: dict[str, Any], p: dict[str, Any]) -> None:
    out = json_merge_patch(a, p)
    snapshot_a, snapshot_p = copy.deepcopy(a), copy.deepcopy(p)

    def scribble(v: Any) -> None:
        if isinstance(v, dict):
            for x in list(v.values()):
                scribble(x)
            v["zz"] = 1
        elif isinstance(v, list):
            for x in v:
                scribble(x)
            v.append(1)

    scribble(out)
    assert a == snapshot_a and p == snapshot_p


@settings(max_examples=100, deadline=None)
@given(docs)
def test_empty_merge_patch_is_identity(a: dict[str, Any]) -> None:
    assert json_merge_patch(a, {}) == a


def test_merge_patch_rfc7386_examples() -> None:
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"},
              "tags": ["example", "sample"], "content": "This will be unchanged"}
    patch = {"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": None},
             "tags": ["example"]}
    assert json_merge_patch(target, patch) == {
        "title": "Hello!", "author": {"givenName": "John"}, "tags": ["example"],
        "content": "This will be unchanged", "phoneNumber": "+01-123-456-7890"}
    assert json_merge_patch({"a": "b"}, {"a": {"b": None}}) == {"a": {}}
    assert json_merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert json_merge_patch({"a": "foo"}, ["c"]) == ["c"]


def test_merge_patch_null_body_is_invalid_json_patch() -> None:
    with pytest.raises(StatusError) as e:
        json_merge_patch({"a": 1}, None)
    assert (e.value.code, e.value.reason, e.value.message) == (400, "BadRequest", "Invalid JSON Patch")


def test_merge_patch_replaces_lists_whole() -> None:
    doc = {"spec": {"containers": [{"name": "main", "image": "a"}]}}
    out = json_merge_patch(doc, {"spec": {"containers": [{"name": "only", "image": "b"}]}})
    assert out == {"spec": {"containers": [{"name": "only", "image": "b"}]}}


# ---- JSON patch -----------------------------------------------------------------------------------
def conformance_doc() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p", "labels": {"x": "1"}},
            "data": {"a": "1", "c": "3"}}


def test_json_patch_conformance_sequence() -> None:
    doc = conformance_doc()
    out = json_patch(doc, [{"op": "replace", "path": "/data/a", "value": "10"},
                           {"op": "add", "path": "/data/d", "value": "4"},
                           {"op": "remove", "path": "/data/c"},
                           {"op": "add", "path": "/metadata/annotations", "value": {"note": "n"}}])
    assert out["data"] == {"a": "10", "d": "4"}
    assert out["metadata"]["annotations"] == {"note": "n"}
    assert doc == conformance_doc()
    out2 = json_patch(out, [{"op": "test", "path": "/data/a", "value": "10"},
                            {"op": "replace", "path": "/data/a", "value": "11"}])
    assert out2["data"]["a"] == "11"


def test_json_patch_replace_sets_a_missing_object_key() -> None:
    """evanphx/json-patch v4, which kube-apiserver 1.24 applies JSON patches with: `replace` of a key
    an object lacks sets it (a list's missing index is still an error)."""
    out = json_patch(conformance_doc(), [{"op": "replace", "path": "/data/nope", "value": "1"}])
    assert out["data"] == {"a": "1", "c": "3", "nope": "1"}


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/data/a", "value": "nope"}, {"op": "replace", "path": "/data/a", "value": "12"}],
    [{"op": "remove", "path": "/data/nope"}],
    [{"op": "frobnicate", "path": "/data/a"}],
    [{"op": "replace", "path": "/nope/deeper", "value": "1"}],
    [{"op": "replace", "path": "/metadata/finalizers/0", "value": "1"}],
    [{"op": "add", "path": "/nope/deeper", "value": "1"}],
    [{"op": "add", "path": "/data"}],  # no value
    [{"op": "move", "from": "/nope", "path": "/x"}],
    [{"op": "move", "from": "/metadata", "path": "/metadata/labels/m"}],
    [{"op": "add", "path": "data", "value": 1}],  # not a pointer
    [{"path": "/data/a"}],
])
def test_json_patch_failures_are_422_with_empty_details(ops: list[Any]) -> None:
    doc = conformance_doc()
    with pytest.raises(StatusError) as e:
        json_patch(doc, ops)
    assert e.value.code == 422 and e.value.reason == "Invalid"
    assert e.value.details == {}
    assert e.value.status()["message"] == "the server rejected our request due to an error in our request"
    assert doc == conformance_doc()  # atomic: nothing applied


@pytest.mark.parametrize(("body", "word"), [({"op": "add"}, "object"), ("x", "string"), (3, "number"),
                                            (None, "null")])
def test_json_patch_body_not_an_array_is_400(body: Any, word: str) -> None:
    with pytest.raises(StatusError) as e:
        json_patch({}, body)
    assert e.value.code == 400 and e.value.reason == "BadRequest"
    assert e.value.message == f"json: cannot unmarshal {word} into Go value of type jsonpatch.Patch"


def test_json_patch_array_ops_and_escaping() -> None:
    doc = {"l": [1, 2, 3], "a/b": {"m~n": 1}}
    assert json_patch(doc, [{"op": "add", "path": "/l/-", "value": 4}])["l"] == [1, 2, 3, 4]
    assert json_patch(doc, [{"op": "add", "path": "/l/0", "value": 0}])["l"] == [0, 1, 2, 3]
    assert json_patch(doc, [{"op": "add", "path": "/l/3", "value": 9}])["l"] == [1, 2, 3, 9]
    assert json_patch(doc, [{"op": "remove", "path": "/l/1"}])["l"] == [1, 3]
    assert json_patch(doc, [{"op": "replace", "path": "/a~1b/m~0n", "value": 2}])["a/b"] == {"m~n": 2}
    assert json_patch(doc, [{"op": "copy", "from": "/l", "path": "/k"}])["k"] == [1, 2, 3]
    moved = json_patch(doc, [{"op": "move", "from": "/l/0", "path": "/l/-"}])
    assert moved["l"] == [2, 3, 1]
    # negative indices count from the end, as in kube-apiserver's JSON patch library
    assert json_patch(doc, [{"op": "remove", "path": "/l/-1"}])["l"] == [1, 2]
    assert json_patch(doc, [{"op": "add", "path": "/l/-1", "value": 9}])["l"] == [1, 2, 9, 3]
    assert json_patch(doc, [{"op": "replace", "path": "/l/-3", "value": 0}])["l"] == [0, 2, 3]
    for bad in ("/l/4", "/l/01", "/l/-4", "/l/x", "/l/--1"):
        with pytest.raises(StatusError):
            json_patch(doc, [{"op": "add", "path": bad, "value": 0}])
    with pytest.raises(StatusError):
        json_patch(doc, [{"op": "remove", "path": "/l/-"}])


def test_json_patch_copy_is_independent() -> None:
    out = json_patch({"a": {"b": [1]}}, [{"op": "copy", "from": "/a", "path": "/c"}])
    out["c"]["b"].append(2)
    assert out["a"] == {"b": [1]}


def test_json_patch_test_op_semantics() -> None:
    doc = {"n": 1, "b": True, "s": "1", "o": {"x": [1, {"y": None}]}}
    ok = [("/n", 1), ("/n", 1.0), ("/b", True), ("/s", "1"), ("/o", {"x": [1, {"y": None}]}), ("", doc),
          ("/missing", None)]
    for path, value in ok:
        json_patch(doc, [{"op": "test", "path": path, "value": value}])
    bad = [("/n", True), ("/b", 1), ("/s", 1), ("/n", "1"), ("/o", {"x": [1]}), ("/missing", 0),
           ("/missing/deeper", None)]
    for path, value in bad:
        with pytest.raises(StatusError):
            json_patch(doc, [{"op": "test", "path": path, "value": value}])


@settings(max_examples=150, deadline=None)
@given(docs, st.text(min_size=1, max_size=4), values)
def test_json_patch_add_then_remove_roundtrips(doc: dict[str, Any], key: str, value: Any) -> None:
    if key in doc:
        return
    added = json_patch(doc, [{"op": "add", "path": ptr(key), "value": value}])
    assert json_equal(added[key], value)
    json_patch(added, [{"op": "test", "path": ptr(key), "value": value}])
    assert json_patch(added, [{"op": "remove", "path": ptr(key)}]) == doc
    assert json_patch(doc, [{"op": "add", "path": ptr(key), "value": value},
                            {"op": "remove", "path": ptr(key)}]) == doc


@settings(max_examples=100, deadline=None)
@given(docs, docs)
def test_json_patch_replace_root_fields_reaches_target(a: dict[str, Any], b: dict[str, Any]) -> None:
    ops: list[dict[str, Any]] = [{"op": "remove", "path": ptr(k)} for k in a if k not in b]
    ops += [{"op": "add", "path": ptr(k), "value": v} for k, v in b.items()]
    assert json_patch(a, ops) == b


ops_strategy = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
     "path": st.sampled_from(["", "/a", "/a/b", "/a/0", "/a/-", "/b/~1", "/c/1/x", "x"])},
    optional={"value": values, "from": st.sampled_from(["/a", "/b", "/a/0", "/nope"])}), max_size=4)


@settings(max_examples=200, deadline=None)
@given(docs, ops_strategy)
def test_json_patch_fuzz_only_status_errors(doc: dict[str, Any], ops: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(doc)
    try:
        json_patch(doc, ops)
    except StatusError as e:
        assert e.code in (400, 422)
    assert doc == before


# ---- strategic merge patch ------------------------------------------------------------------------
DEPLOY = builtin_list_types("apps", "Deployment")


def deployment(*containers: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "web"}},
                                                 "spec": {"containers": list(containers)}}}}


def containers(d: dict[str, Any]) -> list[dict[str, Any]]:
    return d["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


def test_smp_adds_new_container_first_and_merges_existing_by_name() -> None:
    doc = deployment({"name": "main", "image": "nginx:1.21", "imagePullPolicy": "IfNotPresent"})
    out = strategic_merge_patch(
        doc, {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}}, DEPLOY)
    assert [c["name"] for c in containers(out)] == ["side", "main"]
    assert containers(out)[1]["imagePullPolicy"] == "IfNotPresent"
    out2 = strategic_merge_patch(
        out, {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}}}, DEPLOY)
    assert [(c["name"], c["image"]) for c in containers(out2)] == [("side", "busybox"), ("main", "nginx:2")]
    assert containers(out2)[1]["imagePullPolicy"] == "IfNotPresent"
    assert [c["name"] for c in containers(doc)] == ["main"]


def test_smp_keeps_order_of_existing_items_and_patch_order_of_new_ones() -> None:
    doc = deployment({"name": "a"}, {"name": "b"})
    out = strategic_merge_patch(
        doc, {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "x"}, {"name": "c"}]}}}},
        DEPLOY)
    assert [c["name"] for c in containers(out)] == ["a", "b", "c"]


def test_smp_patch_delete_and_replace_directives() -> None:
    doc = deployment({"name": "a", "image": "1"}, {"name": "b", "image": "2"})
    out = strategic_merge_patch(
        doc, {"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}}, DEPLOY)
    assert containers(out) == [{"name": "b", "image": "2"}]
    out = strategic_merge_patch(
        doc, {"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"},
                                                            {"name": "b", "$patch": "delete"}]}}}}, DEPLOY)
    assert containers(out) == []
    out = strategic_merge_patch(
        doc, {"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "z"}]}}}}, DEPLOY)
    assert containers(out) == [{"name": "z"}]
    out = strategic_merge_patch(doc, {"spec": {"template": {"$patch": "replace", "spec": {}}}}, DEPLOY)
    assert out["spec"]["template"] == {"spec": {}}
    out = strategic_merge_patch(doc, {"spec": {"template": {"metadata": {"$patch": "delete"}}}}, DEPLOY)
    assert "metadata" not in out["spec"]["template"]


def test_smp_nested_lists_merge_by_their_keys() -> None:
    doc = deployment({"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                      "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]})
    out = strategic_merge_patch(doc, {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "ports": [{"containerPort": 443}], "env": [{"name": "Y", "value": "3"}, {"name": "X", "$patch": "delete"}]}]}}}},
        DEPLOY)
    c = containers(out)[0]
    assert c["ports"] == [{"containerPort": 443}, {"containerPort": 80, "protocol": "TCP"}]
    assert c["env"] == [{"name": "Y", "value": "3"}]


def test_smp_finalizers_merge_as_a_set_and_null_deletes() -> None:
    cm = {"metadata": {"name": "p", "labels": {"x": "1"}}, "data": {"a": "1", "d": "4"}}
    out = strategic_merge_patch(cm, {"data": {"e": "5", "a": None}, "metadata": {"finalizers": ["example.com/x"]}},
                                builtin_list_types("", "ConfigMap"))
    assert out == {"metadata": {"name": "p", "labels": {"x": "1"}, "finalizers": ["example.com/x"]},
                   "data": {"d": "4", "e": "5"}}
    again = strategic_merge_patch(out, {"metadata": {"finalizers": ["example.com/x", "b"]}}, None)
    assert again["metadata"]["finalizers"] == ["example.com/x", "b"]
    gone = strategic_merge_patch(again, {"metadata": {"finalizers": None}}, None)
    assert "finalizers" not in gone["metadata"]
    removed = strategic_merge_patch(again, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}, None)
    assert removed["metadata"]["finalizers"] == ["example.com/x"]


def test_smp_set_element_order_and_retain_keys() -> None:
    doc = deployment({"name": "a"}, {"name": "b"}, {"name": "c"})
    out = strategic_merge_patch(doc, {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}],
        "containers": [{"name": "b", "image": "x"}]}}}}, DEPLOY)
    assert [c["name"] for c in containers(out)] == ["c", "b", "a"]
    strat = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    out = strategic_merge_patch(strat, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
                                DEPLOY)
    assert out == {"spec": {"strategy": {"type": "Recreate"}}}


def test_smp_lists_without_strategy_are_replaced() -> None:
    doc = {"spec": {"template": {"spec": {"tolerations": [{"key": "a"}], "containers": [
        {"name": "m", "args": ["1", "2"]}]}}}}
    out = strategic_merge_patch(doc, {"spec": {"template": {"spec": {"tolerations": [{"key": "b"}], "containers": [
        {"name": "m", "args": ["3"]}]}}}}, DEPLOY)
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "b"}]
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "m", "args": ["3"]}]
    # an unknown kind: every list is replaced
    assert strategic_merge_patch({"l": [{"name": "a"}]}, {"l": [{"name": "b"}]}, {})["l"] == [{"name": "b"}]


def test_smp_errors() -> None:
    with pytest.raises(StatusError) as e:
        strategic_merge_patch(deployment({"name": "a"}),
                              {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}, DEPLOY)
    assert e.value.code == 400
    with pytest.raises(StatusError):
        strategic_merge_patch({}, {"a": {"$patch": "frob"}}, DEPLOY)
    with pytest.raises(StatusError):
        strategic_merge_patch({}, [], DEPLOY)


@settings(max_examples=100, deadline=None)
@given(docs, docs)
def test_smp_without_lists_or_directives_equals_merge_patch(a: dict[str, Any], b: dict[str, Any]) -> None:
    patch = make_merge_patch(a, b)
    if "$" in repr(patch):
        return
    assert strategic_merge_patch(a, patch, None) == json_merge_patch(a, patch)


# ---- list types -----------------------------------------------------------------------------------
def test_builtin_list_types() -> None:
    lt = builtin_list_types("apps", "Deployment")
    c = lt(("spec", "template", "spec", "containers"))
    assert c is not None and (c.type, c.keys, c.merge_key, c.strategy) == ("map", ("name",), "name", "merge")
    p = lt(("spec", "template", "spec", "containers", "ports"))
    assert p is not None and p.keys == ("containerPort", "protocol") and p.merge_key == "containerPort"
    tolerations = lt(("spec", "template", "spec", "tolerations"))  # no merge tags: atomic, replaced by SMP
    assert tolerations is not None and (tolerations.type, tolerations.strategy) == ("atomic", "replace")
    f = lt(("metadata", "finalizers"))
    assert f is not None and f.type == "set"
    svc = builtin_list_types("", "Service")(("spec", "ports"))
    assert svc is not None and svc.keys == ("port", "protocol") and svc.merge_key == "port"
    assert builtin_list_types("", "ConfigMap")(("metadata", "ownerReferences")) == ListType(
        "map", ("uid",), "uid", "merge")


def test_schema_list_types_for_crds() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                  "items": {"type": "object", "properties": {"tags": {
                      "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                      "id": {"type": "string", "default": "x"}}}},
        "plain": {"type": "array", "items": {"type": "string"}}}}}}
    table = schema_list_types(schema)
    items = table(("spec", "items"))
    assert items == ListType("map", ("id",))
    assert items is not None and dict(items.key_defaults or {}) == {"id": "x"}  # the schema's default
    assert table(("spec", "items", "tags")) == ListType("set")
    assert table(("spec", "plain")) == ListType("atomic")
    finalizers = table(("metadata", "finalizers"))
    assert finalizers is not None and finalizers.type == "set"
    lookup = combine(table, builtin_list_types("", "ConfigMap"))
    assert lookup(("spec", "items")) == ListType("map", ("id",))


def test_list_types_for_resolves_strategies() -> None:
    class Strategy:
        def list_types(self, info: Any) -> dict[tuple[str, ...], ListType]:
            return {("spec", "x"): ListType("set")}

    class Info:
        group, kind = "example.com", "Widget"
        strategy = Strategy()

    assert list_types_for(Info())(("spec", "x")) == ListType("set")

    class Plain:
        group, kind = "apps", "Deployment"
        strategy = object()

    assert list_types_for(Plain())(("spec", "template", "spec", "containers")) is not None


def test_json_patch_operation_limit() -> None:
    with pytest.raises(StatusError) as e:
        json_patch({}, [{"op": "test", "path": "", "value": {}}] * 10001)
    assert (e.value.code, e.value.reason) == (413, "RequestEntityTooLarge")
    assert json_patch({}, [{"op": "test", "path": "", "value": {}}] * 10000) == {}


smp_patches = st.recursive(
    st.one_of(scalars, st.none()),
    lambda inner: st.one_of(
        st.lists(st.one_of(inner, st.fixed_dictionaries({"name": st.sampled_from(["a", "b"])}, optional={
            "$patch": st.sampled_from(["delete", "replace", "merge", "bogus"]), "image": scalars})), max_size=3),
        st.dictionaries(st.sampled_from(["containers", "finalizers", "spec", "x", "$patch", "$retainKeys",
                                         "$setElementOrder/containers", "$deleteFromPrimitiveList/finalizers"]),
                        inner, max_size=3)),
    max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(docs, st.dictionaries(st.sampled_from(["spec", "metadata", "containers", "finalizers"]), smp_patches,
                             max_size=3))
def test_smp_fuzz_only_status_errors(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    lookup = combine({("containers",): builtin_list_types("", "Pod")(("spec", "containers")),
                      ("finalizers",): ListType("set", (), None, "merge")}.get, DEPLOY)
    before = copy.deepcopy(doc)
    try:
        out = strategic_merge_patch(doc, patch, lookup)
    except StatusError as e:
        # a directive's malformed value is a 400; an unknown `$patch` type (mergepatch.ErrBadPatchType) is
        # no error the handler interprets: a plain 500
        assert e.code == 400 or (e.code == 500 and e.message.startswith("unknown patch type"))
    else:
        assert isinstance(out, dict)
    assert doc == before
