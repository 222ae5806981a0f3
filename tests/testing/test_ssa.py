"""Server-side apply: the conformance scenario's steps plus keyed lists, defaults and pruning."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.listtypes import builtin_list_types
from kubeloop.testing.apiserver.managedfields import apply, update_managed_fields

T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"


def cm(data: dict[str, str] | None, labels: dict[str, str] | None = None, name: str = "s") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns"}
    if labels:
        meta["labels"] = labels
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data is not None:
        body["data"] = data
    return body


def managers(obj: dict[str, Any]) -> dict[str, Any]:
    """manager/operation -> fieldsV1, as the conformance projection shows them."""
    return {f"{e['manager']}/{e['operation']}": e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def ssa(live: dict[str, Any] | None, body: dict[str, Any], mgr: str, force: bool = False,
        now: str = T1, **kw: Any) -> dict[str, Any]:
    return apply(live, body, mgr, "v1", None, force, now, **kw)


def test_conformance_scenario_steps() -> None:
    # alice applies (creates)
    o1 = ssa(None, cm({"k1": "a", "k2": "a"}, {"owner": "alice"}), "alice", now=T0)
    assert o1["data"] == {"k1": "a", "k2": "a"}
    assert managers(o1) == {"alice/Apply": {"f:data": {"f:k1": {}, "f:k2": {}},
                                            "f:metadata": {"f:labels": {"f:owner": {}}}}}
    entry = o1["metadata"]["managedFields"][0]
    assert list(entry) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]
    assert entry["time"] == T0 and entry["fieldsType"] == "FieldsV1" and entry["apiVersion"] == "v1"
    # alice re-applies identical: nothing changes, not even the time
    o2 = ssa(o1, cm({"k1": "a", "k2": "a"}, {"owner": "alice"}), "alice", now=T2)
    assert json.dumps(o2) == json.dumps(o1)
    # bob applies k3
    o3 = ssa(o2, cm({"k3": "b"}), "bob")
    assert o3["data"] == {"k1": "a", "k2": "a", "k3": "b"}
    assert managers(o3)["bob/Apply"] == {"f:data": {"f:k3": {}}}
    assert managers(o3)["alice/Apply"] == managers(o1)["alice/Apply"]
    # bob applies conflicting k1 without force
    with pytest.raises(StatusError) as e:
        ssa(o3, cm({"k1": "b", "k3": "b"}), "bob")
    err = e.value
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.details == {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                       "field": ".data.k1"}]}
    assert err.message == 'Apply failed with 1 conflict: conflict with "alice": .data.k1'
    # ... with force
    o4 = ssa(o3, cm({"k1": "b", "k3": "b"}), "bob", force=True)
    assert o4["data"] == {"k1": "b", "k2": "a", "k3": "b"}
    assert managers(o4) == {"alice/Apply": {"f:data": {"f:k2": {}}, "f:metadata": {"f:labels": {"f:owner": {}}}},
                            "bob/Apply": {"f:data": {"f:k1": {}, "f:k3": {}}}}
    # alice re-applies without k1 and k2: k2 (hers alone) goes, k1 (bob's now) stays
    o5 = ssa(o4, cm({}, {"owner": "alice"}), "alice")
    assert o5["data"] == {"k1": "b", "k3": "b"}
    assert managers(o5)["alice/Apply"] == {"f:data": {}, "f:metadata": {"f:labels": {"f:owner": {}}}}
    # editor updates k3 via PUT
    put = copy.deepcopy(o5)
    put["data"]["k3"] = "edited"
    update_managed_fields(o5, put, "editor", "v1", None, T2)
    assert managers(put) == {"alice/Apply": {"f:data": {}, "f:metadata": {"f:labels": {"f:owner": {}}}},
                             "bob/Apply": {"f:data": {"f:k1": {}}},
                             "editor/Update": {"f:data": {"f:k3": {}}}}
    # bob re-applies k3: conflict with the Update manager names its version
    with pytest.raises(StatusError) as e:
        ssa(put, cm({"k1": "b", "k3": "b"}), "bob")
    assert e.value.details == {"causes": [{"reason": "FieldManagerConflict",
                                           "message": 'conflict with "editor" using v1', "field": ".data.k3"}]}
    assert e.value.message == 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.k3'
    # carol applies k4
    o6 = ssa(put, cm({"k4": "carol"}), "carol")
    assert o6["data"] == {"k1": "b", "k3": "edited", "k4": "carol"}
    mf = o6["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in mf] == [
        ("alice", "Apply"), ("bob", "Apply"), ("carol", "Apply"), ("editor", "Update")]


def test_apply_does_not_mutate_inputs_and_result_is_independent() -> None:
    live = ssa(None, cm({"a": "1"}), "alice")
    cfg = cm({"a": "1", "b": "2"})
    snap_live, snap_cfg = copy.deepcopy(live), copy.deepcopy(cfg)
    out = ssa(live, cfg, "alice")
    out["data"]["c"] = "3"
    out["metadata"]["managedFields"].append({})
    assert live == snap_live and cfg == snap_cfg


def test_same_value_is_shared_ownership_not_conflict() -> None:
    o = ssa(None, cm({"k": "v"}), "alice")
    o2 = ssa(o, cm({"k": "v"}), "bob")
    assert managers(o2)["bob/Apply"] == {"f:data": {"f:k": {}}}
    assert managers(o2)["alice/Apply"] == {"f:data": {"f:k": {}}}
    # bob drops it: alice still owns it, so it stays
    o3 = ssa(o2, cm(None), "bob")
    assert o3["data"] == {"k": "v"}
    assert "bob/Apply" not in managers(o3)


def test_multiple_conflicts_message_groups_by_manager() -> None:
    o = ssa(None, cm({"a": "1"}), "alice")
    o = ssa(o, cm({"b": "1"}), "bob")
    with pytest.raises(StatusError) as e:
        ssa(o, cm({"a": "2", "b": "2"}), "carol")
    assert e.value.message == ('Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\n'
                               'conflicts with "bob":\n- .data.b')
    assert sorted(c["field"] for c in e.value.details["causes"]) == [".data.a", ".data.b"]


def test_explicit_null_is_merged_as_null_and_is_owned() -> None:
    """structured-merge-diff merges a null as a null (the kind's decoding then makes it its zero value,
    `""` in a ConfigMap's data, as kube-apiserver 1.24 answers) and the applier owns the field."""
    o = ssa(None, cm({"a": "1", "b": "2"}), "alice")
    o2 = ssa(o, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}, "data": {"a": "1", "b": None}},
             "alice")
    assert o2["data"] == {"a": "1", "b": None}
    assert o2["metadata"]["managedFields"][0]["fieldsV1"]["f:data"] == {"f:a": {}, "f:b": {}}


def test_apply_without_kind_is_internal_error() -> None:
    with pytest.raises(StatusError) as e:
        apply(None, {"apiVersion": "v1", "metadata": {"name": "s"}}, "dave", "v1", None, False, T0)
    assert e.value.code == 500
    assert "no corresponding type for /v1, Kind=" in e.value.message


# ---- workloads: keyed lists and defaulted fields -------------------------------------------------------
DEPLOY = builtin_list_types("apps", "Deployment")


def deploy_cfg(*containers: dict[str, Any], replicas: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": list(containers)}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
            "spec": spec}


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    """A few of the defaults the real server fills in on create."""
    out = copy.deepcopy(obj)
    out["spec"].setdefault("replicas", 1)
    for c in out["spec"]["template"]["spec"]["containers"]:
        c.setdefault("imagePullPolicy", "IfNotPresent")
    return out


def test_defaults_are_owned_by_the_creator_and_conflict_with_an_applier() -> None:
    created = defaulted(deploy_cfg({"name": "main", "image": "nginx:1.21"}))
    from kubeloop.testing.apiserver.kinds.generated import zero_of_kind

    # compared with the zero Deployment, as the server does: its template spec holds `containers: null`
    update_managed_fields(None, created, "kubectl-create", "apps/v1", None, T0, list_types=DEPLOY,
                          zero=zero_of_kind("apps", "v1", "Deployment"))
    fv1 = managers(created)["kubectl-create/Update"]
    assert fv1["f:spec"]["f:replicas"] == {}
    assert fv1["f:spec"]["f:template"]["f:spec"]["f:containers"] == {
        'k:{"name":"main"}': {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}}}
    with pytest.raises(StatusError) as e:
        apply(created, deploy_cfg({"name": "main", "image": "nginx:1.21"}, replicas=3), "ctl", "apps/v1", None,
              False, T1, list_types=DEPLOY)
    assert [c["field"] for c in e.value.details["causes"]] == [".spec.replicas"]
    assert e.value.details["causes"][0]["message"] == 'conflict with "kubectl-create" using apps/v1'
    forced = apply(created, deploy_cfg({"name": "main", "image": "nginx:1.21"}, replicas=3), "ctl", "apps/v1",
                   None, True, T1, list_types=DEPLOY)
    assert forced["spec"]["replicas"] == 3
    assert "f:replicas" not in managers(forced)["kubectl-create/Update"]["f:spec"]
    assert managers(forced)["ctl/Apply"]["f:spec"]["f:replicas"] == {}


def test_containers_merge_by_name_and_owned_items_are_pruned() -> None:
    live = apply(None, deploy_cfg({"name": "main", "image": "a"}, {"name": "side", "image": "b"}), "ctl",
                 "apps/v1", None, False, T0, list_types=DEPLOY)
    live = defaulted(live)
    out = apply(live, deploy_cfg({"name": "main", "image": "a2"}), "ctl", "apps/v1", None, False, T1,
                list_types=DEPLOY)
    cs = out["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in cs] == ["main"]  # side was ctl's alone: removed
    assert cs[0] == {"name": "main", "image": "a2", "imagePullPolicy": "IfNotPresent"}  # defaults kept
    fv1 = managers(out)["ctl/Apply"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert fv1 == {'k:{"name":"main"}': {".": {}, "f:image": {}, "f:name": {}}}


def test_another_appliers_list_item_is_kept_and_order_follows_live() -> None:
    live = apply(None, deploy_cfg({"name": "a", "image": "1"}), "one", "apps/v1", None, False, T0,
                 list_types=DEPLOY)
    live = apply(live, deploy_cfg({"name": "b", "image": "2"}), "two", "apps/v1", None, False, T0,
                 list_types=DEPLOY)
    assert [c["name"] for c in live["spec"]["template"]["spec"]["containers"]] == ["a", "b"]
    out = apply(live, deploy_cfg({"name": "c", "image": "3"}), "one", "apps/v1", None, False, T1,
                list_types=DEPLOY)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["b", "c"]


def test_ports_keyed_by_port_and_protocol() -> None:
    live = apply(None, deploy_cfg({"name": "m", "image": "a", "ports": [{"containerPort": 80, "protocol": "TCP"},
                                                          {"containerPort": 80, "protocol": "UDP"}]}),
                 "x", "apps/v1", None, False, T0, list_types=DEPLOY)
    fv1 = managers(live)["x/Apply"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"m"}']
    assert set(fv1["f:ports"]) == {'k:{"containerPort":80,"protocol":"TCP"}',
                                   'k:{"containerPort":80,"protocol":"UDP"}'}
    # applying a different image over x's conflicts on that container's field only
    with pytest.raises(StatusError) as e:
        apply(live, deploy_cfg({"name": "m", "image": "z", "ports": [{"containerPort": 80, "protocol": "TCP"}]}),
              "y", "apps/v1", None, False, T1, list_types=DEPLOY)
    assert [c["field"] for c in e.value.details["causes"]] == ['.spec.template.spec.containers[name="m"].image']


def test_adding_unowned_subfield_is_no_conflict() -> None:
    live = apply(None, deploy_cfg({"name": "m", "ports": [{"containerPort": 80, "protocol": "UDP"}]}),
                 "x", "apps/v1", None, False, T0, list_types=DEPLOY)
    out = apply(live, deploy_cfg({"name": "m", "ports": [{"containerPort": 80, "protocol": "UDP", "name": "u"}]}),
                "y", "apps/v1", None, False, T1, list_types=DEPLOY)
    port = out["spec"]["template"]["spec"]["containers"][0]["ports"][0]
    assert port == {"containerPort": 80, "protocol": "UDP", "name": "u"}
    fv1 = managers(out)["y/Apply"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"m"}']
    assert fv1["f:ports"]['k:{"containerPort":80,"protocol":"UDP"}'] == {
        ".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}}


def test_finalizers_are_a_set() -> None:
    lt = builtin_list_types("", "ConfigMap")
    o = apply(None, {**cm(None), "metadata": {"name": "s", "finalizers": ["a"]}}, "one", "v1", None, False, T0,
              list_types=lt)
    o = apply(o, {**cm(None), "metadata": {"name": "s", "finalizers": ["b"]}}, "two", "v1", None, False, T0,
              list_types=lt)
    assert o["metadata"]["finalizers"] == ["a", "b"]
    assert managers(o)["two/Apply"] == {"f:metadata": {"f:finalizers": {'v:"b"': {}}}}
    o = apply(o, {**cm(None), "metadata": {"name": "s"}}, "one", "v1", None, False, T1, list_types=lt)
    assert o["metadata"]["finalizers"] == ["b"]


def test_status_subresource_apply_and_reset_fields() -> None:
    live = apply(None, deploy_cfg({"name": "m"}), "ctl", "apps/v1", None, False, T0, list_types=DEPLOY)
    cfg = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "status": {"replicas": 2}, "spec": {"replicas": 9}}
    out = apply(live, cfg, "kcm", "apps/v1", "status", False, T1, list_types=DEPLOY, reset_fields=[("spec",)])
    entry = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "kcm")
    assert entry["subresource"] == "status" and entry["operation"] == "Apply"
    assert entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_defaulted_key_field_names_the_same_item() -> None:
    live = apply(None, deploy_cfg({"name": "m", "ports": [{"containerPort": 80}]}), "x", "apps/v1", None, False,
                 T0, list_types=DEPLOY)
    live["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] = "TCP"  # server default
    out = apply(live, deploy_cfg({"name": "m", "ports": [{"containerPort": 80, "name": "http"}]}), "x",
                "apps/v1", None, False, T1, list_types=DEPLOY)
    assert out["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP", "name": "http"}]


def test_label_selector_is_atomic() -> None:
    live = apply(None, deploy_cfg({"name": "m"}), "x", "apps/v1", None, False, T0, list_types=DEPLOY)
    fv1 = managers(live)["x/Apply"]["f:spec"]
    assert fv1["f:selector"] == {}  # owned as one value, like the real server's fieldsV1
    cfg = deploy_cfg({"name": "m"})
    cfg["spec"]["selector"] = {"matchLabels": {"other": "1"}}
    with pytest.raises(StatusError) as e:
        apply(live, cfg, "y", "apps/v1", None, False, T1, list_types=DEPLOY)
    assert [c["field"] for c in e.value.details["causes"]] == [".spec.selector"]
    out = apply(live, cfg, "y", "apps/v1", None, True, T1, list_types=DEPLOY)
    assert out["spec"]["selector"] == {"matchLabels": {"other": "1"}}  # replaced, not merged


def test_crd_schema_atomic_map_and_list_map() -> None:
    from kubeloop.testing.apiserver.listtypes import schema_list_types

    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "cfg": {"type": "object", "x-kubernetes-map-type": "atomic",
                "additionalProperties": {"type": "string"}},
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                  "items": {"type": "object"}}}}}}
    lt = schema_list_types(schema)
    body = {"apiVersion": "ex.com/v1", "kind": "W", "metadata": {"name": "w"},
            "spec": {"cfg": {"a": "1", "b": "2"}, "items": [{"id": "x", "v": 1}]}}
    live = apply(None, body, "one", "ex.com/v1", None, False, T0, list_types=lt)
    assert managers(live)["one/Apply"] == {"f:spec": {"f:cfg": {}, "f:items": {
        'k:{"id":"x"}': {".": {}, "f:id": {}, "f:v": {}}}}}
    out = apply(live, {**body, "spec": {"cfg": {"c": "3"}, "items": [{"id": "y"}]}}, "one", "ex.com/v1", None,
                False, T1, list_types=lt)
    assert out["spec"] == {"cfg": {"c": "3"}, "items": [{"id": "y"}]}


# ---- fuzz: random live objects, configurations and managers -----------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_scalars = st.one_of(st.booleans(), st.integers(-2, 2), st.sampled_from(["a", "b"]), st.none())
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.lists(st.fixed_dictionaries({"name": st.sampled_from(["a", "b", "c"])}, optional={"v": inner}), max_size=3),
    st.dictionaries(st.sampled_from(["x", "y", "containers", "finalizers"]), inner, max_size=3)), max_leaves=8)
_bodies = st.builds(lambda spec, fin: {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", **fin},
                                       "spec": spec},
                    st.dictionaries(st.sampled_from(["x", "y", "containers", "template"]), _values, max_size=3),
                    st.dictionaries(st.just("finalizers"), st.lists(st.sampled_from(["f", "g"]), max_size=2,
                                                                    unique=True), max_size=1))
_LT = builtin_list_types("", "Pod")


def _lookup(path: tuple[str, ...]) -> Any:
    if path and path[-1] == "containers":
        return _LT(("spec", "containers"))
    return _LT(path)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3"]), st.booleans(), _bodies), min_size=1, max_size=4))
def test_apply_fuzz(steps: list[tuple[str, bool, dict[str, Any]]]) -> None:
    live: dict[str, Any] | None = None
    for i, (mgr, force, body) in enumerate(steps):
        snapshot = copy.deepcopy(body)
        try:
            out = apply(live, body, mgr, "v1", None, force, f"2026-01-01T00:00:{i:02d}Z", list_types=_lookup)
        except StatusError as e:
            assert e.code in (409, 500)
            assert e.code == 500 or not force
            continue
        assert body == snapshot
        again = apply(out, body, mgr, "v1", None, False, "2026-01-01T00:01:00Z", list_types=_lookup)
        if "managedFields" not in out["metadata"]:
            # nobody owns anything (an empty configuration): the next apply records the object's
            # fields as "before-first-apply", as the real server does
            again["metadata"].pop("managedFields", None)
        assert json.dumps(again, sort_keys=True) == json.dumps(out, sort_keys=True)
        for e in out["metadata"].get("managedFields", []):
            assert e["fieldsV1"], "a manager owning nothing is dropped"
        live = out


def test_first_apply_to_unmanaged_object_conflicts_with_before_first_apply() -> None:
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}, "data": {"a": "1", "b": "2"}}
    with pytest.raises(StatusError) as e:
        ssa(live, cm({"a": "9"}), "ctl")
    assert e.value.details["causes"][0]["message"] == 'conflict with "before-first-apply" using v1'
    out = ssa(live, cm({"a": "1", "c": "3"}), "ctl")
    assert managers(out) == {"before-first-apply/Update": {"f:data": {".": {}, "f:a": {}, "f:b": {}}},
                             "ctl/Apply": {"f:data": {"f:a": {}, "f:c": {}}}}


def test_pruning_many_list_items_is_one_walk() -> None:
    from kubeloop.testing.apiserver.listtypes import ListType

    lt = {("spec", "items"): ListType("map", ("id",))}.get
    body = {"apiVersion": "ex/v1", "kind": "W", "metadata": {"name": "w"},
            "spec": {"items": [{"id": str(i), "v": i} for i in range(400)]}}
    live = apply(None, body, "m", "ex/v1", None, False, T0, list_types=lt)
    live = apply(live, {**body, "spec": {"items": body["spec"]["items"][:100]}}, "other", "ex/v1", None, False, T0,
                 list_types=lt)
    out = apply(live, {**body, "spec": {"items": body["spec"]["items"][300:]}}, "m", "ex/v1", None, False, T1,
                list_types=lt)
    # items 0-99 are also "other"'s: kept; 100-299 were m's alone: gone; 300-399 still applied
    assert [it["id"] for it in out["spec"]["items"]] == [str(i) for i in [*range(100), *range(300, 400)]]
