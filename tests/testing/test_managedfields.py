"""managedFields for ordinary writes (operation Update) and the fieldsV1 encoding."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.testing.apiserver.fieldpath import (
    compare,
    decode_fields,
    encode_fields,
    object_fields,
    path_string,
)
from kubeloop.testing.apiserver.listtypes import builtin_list_types
from kubeloop.testing.apiserver.managedfields import apply, record_update, update_managed_fields
from kubeloop.testing.apiserver.patch import json_equal
from kubeloop.testing.apiserver.resources import ServedResource

T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"
CM = builtin_list_types("", "ConfigMap")


def cm(data: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns", "uid": "u", "resourceVersion": "5", **meta},
            "data": data}


def created(data: dict[str, Any], manager: str = "creator", **meta: Any) -> dict[str, Any]:
    obj = cm(data, **meta)
    update_managed_fields(None, obj, manager, "v1", None, T0, CM)
    return obj


def fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {f"{e['manager']}/{e['operation']}{'/' + e['subresource'] if e.get('subresource') else ''}":
            e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def test_create_gives_the_creator_every_field_update_style() -> None:
    obj = created({"a": "1", "b": "2"}, labels={"x": "1"})
    assert obj["metadata"]["managedFields"] == [{
        "manager": "creator", "operation": "Update", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {".": {}, "f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}}}]


def test_noop_write_keeps_managed_fields_identical() -> None:
    old = created({"a": "1"})
    new = copy.deepcopy(old)
    update_managed_fields(old, new, "someone-else", "v1", None, T2, CM)
    assert json.dumps(new) == json.dumps(old)
    # a client that sends no managedFields (e.g. a cache that dropped them) changes nothing either
    new2 = copy.deepcopy(old)
    del new2["metadata"]["managedFields"]
    update_managed_fields(old, new2, "x", "v1", None, T2, CM)
    assert json.dumps(new2) == json.dumps(old)
    # nor does a change to a stripped field alone (resourceVersion, generation, ...)
    new3 = copy.deepcopy(old)
    new3["metadata"]["resourceVersion"] = "9"
    new3["metadata"]["generation"] = 4
    update_managed_fields(old, new3, "x", "v1", None, T2, CM)
    assert new3["metadata"]["managedFields"] == old["metadata"]["managedFields"]


def test_writer_takes_changed_fields_from_other_managers() -> None:
    old = created({"a": "1", "b": "2"})
    new = copy.deepcopy(old)
    new["data"]["a"] = "changed"
    new["data"]["c"] = "3"
    update_managed_fields(old, new, "editor", "v1", None, T1, CM)
    assert fields(new) == {"creator/Update": {"f:data": {".": {}, "f:b": {}}},
                           "editor/Update": {"f:data": {"f:a": {}, "f:c": {}}}}
    assert next(e for e in new["metadata"]["managedFields"] if e["manager"] == "creator")["time"] == T0
    assert next(e for e in new["metadata"]["managedFields"] if e["manager"] == "editor")["time"] == T1


def test_removal_only_write_adds_no_entry_and_strips_owners() -> None:
    old = created({"a": "1", "b": "2"})
    new = copy.deepcopy(old)
    del new["data"]["b"]
    update_managed_fields(old, new, "editor", "v1", None, T1, CM)
    assert fields(new) == {"creator/Update": {"f:data": {".": {}, "f:a": {}}}}
    new2 = copy.deepcopy(new)
    del new2["data"]
    update_managed_fields(new, new2, "editor", "v1", None, T1, CM)
    assert "managedFields" not in new2["metadata"]  # nobody owns anything: no managers left


def test_same_manager_different_version_or_subresource_are_separate_entries() -> None:
    old = created({"a": "1"})
    new = copy.deepcopy(old)
    new["data"]["b"] = "2"
    update_managed_fields(old, new, "creator", "v2", None, T1, CM)
    new2 = copy.deepcopy(new)
    new2["data"]["c"] = "3"
    update_managed_fields(new, new2, "creator", "v1", "status", T2, CM)
    entries = new2["metadata"]["managedFields"]
    assert [(e["manager"], e["apiVersion"], e.get("subresource")) for e in entries] == [
        ("creator", "v1", None), ("creator", "v2", None), ("creator", "v1", "status")]
    assert list(entries[2]) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1",
                                "subresource"]


def test_client_supplied_managed_fields_are_used_and_reset_removes_them() -> None:
    old = created({"a": "1"})
    new = copy.deepcopy(old)
    new["metadata"]["managedFields"] = [{"manager": "other", "operation": "Update", "apiVersion": "v1",
                                         "time": T0, "fieldsType": "FieldsV1",
                                         "fieldsV1": {"f:data": {"f:a": {}}}}]
    update_managed_fields(old, new, "editor", "v1", None, T1, CM)
    assert fields(new) == {"other/Update": {"f:data": {"f:a": {}}}}
    reset = copy.deepcopy(old)
    reset["metadata"]["managedFields"] = [{}]
    update_managed_fields(old, reset, "editor", "v1", None, T1, CM)
    assert "managedFields" not in reset["metadata"]
    # a reset that also changes a field leaves the writer owning just that change
    reset2 = copy.deepcopy(old)
    reset2["metadata"]["managedFields"] = [{}]
    reset2["data"]["z"] = "1"
    update_managed_fields(old, reset2, "editor", "v1", None, T1, CM)
    assert fields(reset2) == {"editor/Update": {"f:data": {"f:z": {}}}}
    # through a subresource the request's managedFields are ignored
    sub = copy.deepcopy(new)
    update_managed_fields(old, sub, "editor", "v1", "status", T1, CM)
    assert sub["metadata"]["managedFields"] == old["metadata"]["managedFields"]


def test_apply_after_update_only_touches_its_fields() -> None:
    old = created({"a": "1"})
    out = apply(old, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"b": "2"}},
                "ctl", "v1", None, False, T1, CM)
    assert fields(out) == {"ctl/Apply": {"f:data": {"f:b": {}}},
                           "creator/Update": {"f:data": {".": {}, "f:a": {}}}}
    # Apply entries come first, then Update entries by time
    assert [e["operation"] for e in out["metadata"]["managedFields"]] == ["Apply", "Update"]


def test_record_update_uses_resource_info() -> None:
    info = ServedResource("apps", "v1", "deployments", "Deployment", True, subresources=frozenset({"status"}))
    old = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}, "status": {}}
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"].insert(0, {"name": "b", "image": "y"})
    new["status"] = {"replicas": 3}  # a main-resource write cannot own status fields
    record_update(info, new, old, "mgr", "", now=T1)
    assert fields(new) == {"mgr/Update": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"b"}': {".": {}, "f:image": {}, "f:name": {}}}}}}}}


def test_compare_keyed_lists() -> None:
    lt = builtin_list_types("apps", "Deployment")
    old = {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}]}}}}
    new = {"spec": {"template": {"spec": {"containers": [{"name": "b"}, {"name": "a", "image": "2"},
                                                         {"name": "c"}]}}}}
    added, modified, removed = compare(old, new, lt)
    base = ("f:spec", "f:template", "f:spec", "f:containers")
    assert added == {(*base, 'k:{"name":"c"}'), (*base, 'k:{"name":"c"}', "f:name")}
    assert modified == {(*base, 'k:{"name":"a"}', "f:image")}
    assert removed == set()


def test_path_string() -> None:
    assert path_string(("f:data", "f:k1")) == ".data.k1"
    assert path_string(("f:spec", "f:containers", 'k:{"name":"a"}', "f:image")) == '.spec.containers[name="a"].image'
    assert path_string(("f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')) == \
        '.ports[containerPort=80,protocol="TCP"]'
    assert path_string(("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'
    assert path_string(("f:l", "i:3")) == ".l[3]"


elements = st.one_of(st.text("abc", min_size=1, max_size=3).map(lambda s: "f:" + s),
                     st.sampled_from(['k:{"name":"a"}', 'v:"x"', "i:0"]))
paths = st.lists(elements, min_size=1, max_size=4).map(tuple)


@settings(max_examples=200, deadline=None)
@given(st.sets(paths, max_size=12))
def test_fields_v1_roundtrip(s: set[tuple[str, ...]]) -> None:
    encoded = encode_fields(s)
    assert decode_fields(json.loads(json.dumps(encoded))) == s
    assert encode_fields(decode_fields(encoded)) == encoded


scalars = st.one_of(st.booleans(), st.integers(-3, 3), st.text("xy", max_size=2))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)), max_leaves=8)
objs = st.dictionaries(st.sampled_from(["data", "spec", "x"]), values, max_size=3)


@settings(max_examples=150, deadline=None)
@given(objs, objs)
def test_compare_is_consistent(a: dict[str, Any], b: dict[str, Any]) -> None:
    added, modified, removed = compare(a, b, CM)
    if json_equal(a, b):
        assert not (added or modified or removed)
    assert compare(a, a, CM) == (set(), set(), set())
    back_added, back_modified, back_removed = compare(b, a, CM)
    assert back_added == removed and back_removed == added and back_modified == modified
    assert object_fields(b, CM) >= added


@settings(max_examples=100, deadline=None)
@given(objs, objs)
def test_update_then_noop_is_stable(a: dict[str, Any], b: dict[str, Any]) -> None:
    old = {"metadata": {"name": "n"}, **a}
    update_managed_fields(None, old, "one", "v1", None, T0, CM)
    new = {"metadata": {"name": "n", **({"managedFields": old["metadata"]["managedFields"]}
                                         if "managedFields" in old["metadata"] else {})}, **b}
    update_managed_fields(old, new, "two", "v1", None, T1, CM)
    again = copy.deepcopy(new)
    update_managed_fields(new, again, "three", "v1", None, T2, CM)
    assert again == new
    owned = set()
    for e in new["metadata"].get("managedFields", []):
        assert e["fieldsV1"], "managers owning nothing are dropped"
        owned |= decode_fields(e["fieldsV1"])


DEPLOY = builtin_list_types("apps", "Deployment")
containers = st.lists(st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", "c"])},
    optional={"image": scalars, "ports": st.lists(st.fixed_dictionaries(
        {"containerPort": st.integers(1, 3)}, optional={"protocol": st.sampled_from(["TCP", "UDP"])}),
        max_size=3), "args": st.lists(scalars, max_size=2)}), max_size=3)
deployments = st.builds(lambda cs, extra, fin: {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "d", "uid": "u", **({"finalizers": fin} if fin else {}), **extra},
    "spec": {"template": {"spec": {"containers": cs}}}}, containers,
    st.dictionaries(st.sampled_from(["labels", "annotations"]), st.dictionaries(st.sampled_from("xy"),
                                                                                 st.just("v")), max_size=2),
    st.lists(st.sampled_from(["f1", "f2"]), max_size=2))


@settings(max_examples=150, deadline=None)
@given(st.one_of(objs, deployments))
def test_create_fast_path_matches_set_encoding(obj: dict[str, Any]) -> None:
    """The create fast path is structured-merge-diff's comparison with an empty object (or the
    kind's zero value), encoded: the same fields as the general comparison finds added."""
    from kubeloop.testing.apiserver.fieldpath import compare, has_duplicate_keys, update_fields_v1
    from kubeloop.testing.apiserver.kinds.generated import zero_of_kind

    assert update_fields_v1(obj, DEPLOY) == encode_fields(compare({}, obj, DEPLOY)[0])
    zero = zero_of_kind("apps", "v1", "Deployment")
    assert zero is not None
    added, modified, _ = compare(zero, obj, DEPLOY)
    assert update_fields_v1(obj, DEPLOY, zero) == encode_fields(added | modified)
    via_update = copy.deepcopy({"metadata": {}, **obj})
    update_managed_fields(None, via_update, "m", "v1", None, T0, DEPLOY)
    if has_duplicate_keys(obj, DEPLOY):
        # structured-merge-diff cannot type a list with duplicate keys: the field manager records nothing
        assert "managedFields" not in via_update["metadata"]
        return
    fv1 = via_update["metadata"].get("managedFields", [{}])[0].get("fieldsV1")
    assert decode_fields(fv1 or {}) == compare({}, obj, DEPLOY)[0]


@settings(max_examples=100, deadline=None)
@given(deployments, deployments)
def test_apply_is_idempotent_and_owns_exactly_its_config(live: dict[str, Any], cfg: dict[str, Any]) -> None:
    from kubeloop.testing.apiserver.errors import StatusError
    from kubeloop.testing.apiserver.fieldpath import applied_fields

    update_managed_fields(None, live, "creator", "apps/v1", None, T0, DEPLOY)
    cfg["metadata"].pop("uid")
    try:
        out = apply(live, cfg, "ctl", "apps/v1", None, True, T1, DEPLOY)
    except StatusError as e:  # force never conflicts; duplicate keys in a configuration are refused
        assert e.code == 500 and "duplicate entries" in e.message
        return
    again = apply(out, cfg, "ctl", "apps/v1", None, False, T2, DEPLOY)
    assert json.dumps(again) == json.dumps(out)
    mine = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "ctl") if applied_fields(
        cfg, DEPLOY) else None
    if mine is not None:
        assert decode_fields(mine["fieldsV1"]) == applied_fields(cfg, DEPLOY)


def test_update_managers_are_capped_into_ancient_changes() -> None:
    obj = created({"k0": "0"}, manager="m00")
    for i in range(1, 13):
        new = copy.deepcopy(obj)
        new["data"][f"k{i}"] = str(i)
        update_managed_fields(obj, new, f"m{i:02d}", "v1", None, f"2026-01-01T00:00:{i:02d}Z", CM)
        obj = new
    entries = obj["metadata"]["managedFields"]
    assert len(entries) == 10
    assert [e["manager"] for e in entries][:1] == ["ancient-changes"]
    ancient = decode_fields(entries[0]["fieldsV1"])
    assert {("f:data", f"f:k{i}") for i in range(4)} <= ancient
    owned = set().union(*(decode_fields(e["fieldsV1"]) for e in entries))
    assert {("f:data", f"f:k{i}") for i in range(13)} <= owned


def test_empty_metadata_fields_are_no_fields() -> None:
    obj = cm({"a": "1"}, labels={}, finalizers=[], generateName="")
    update_managed_fields(None, obj, "creator", "v1", None, T0, CM)
    assert fields(obj) == {"creator/Update": {"f:data": {".": {}, "f:a": {}}}}
    new = copy.deepcopy(obj)
    del new["metadata"]["labels"]
    new["metadata"]["annotations"] = {}
    update_managed_fields(obj, new, "other", "v1", None, T1, CM)
    assert new["metadata"]["managedFields"] == obj["metadata"]["managedFields"]
