"""Client operations over real HTTP against the emulator (or a real cluster): CRUD, lists, selectors,
patches, server-side apply, the status subresource, delete options, discovery of new CRDs."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest

from kubeloop.client import (
    ALL_NAMESPACES,
    AlreadyExists,
    BadRequest,
    Client,
    Conflict,
    Invalid,
    ListOptions,
    NotFound,
    ResourceRef,
    UnknownKind,
    UnknownResource,
    WriteRequest,
)
from kubeloop.testing import install_crd

from ..builders import cm
from .crds import widget_crd


async def test_create_get_replace_delete(client: Client, ns: str) -> None:
    created = await client.create(cm("a", {"x": "1"}), namespace=ns)
    assert created["metadata"]["namespace"] == ns and created["metadata"]["uid"]
    got = await client.get("v1/ConfigMap", "a", namespace=ns)
    assert got["data"] == {"x": "1"} and got["kind"] == "ConfigMap"
    got["data"]["x"] = "2"
    replaced = await client.replace(got)
    assert replaced["data"] == {"x": "2"}
    assert int(replaced["metadata"]["resourceVersion"]) > int(got["metadata"]["resourceVersion"])
    await client.delete("v1/ConfigMap", "a", namespace=ns)
    with pytest.raises(NotFound) as exc:
        await client.get("v1/ConfigMap", "a", namespace=ns)
    assert exc.value.code == 404 and exc.value.details.get("name") == "a"


async def test_default_namespace_from_kubeconfig(client: Client, apiserver: Any) -> None:
    from kubeloop.config import load_kubeconfig
    expected = load_kubeconfig(apiserver.kubeconfig).namespace
    assert client.default_namespace == expected
    if apiserver.is_emulator:
        assert expected == "default"  # what the emulator's kubeconfig says
    name = f"kl-{secrets.token_hex(3)}"
    await client.create(cm(name))
    try:
        assert (await client.get("v1/ConfigMap", name))["metadata"]["namespace"] == expected
    finally:
        await client.delete("v1/ConfigMap", name)


async def test_typed_errors_from_real_answers(client: Client, ns: str) -> None:
    obj = await client.create(cm("dup"), namespace=ns)
    with pytest.raises(AlreadyExists):
        await client.create(cm("dup"), namespace=ns)
    stale = dict(obj, data={"n": "1"})
    await client.replace(dict(obj, data={"n": "0"}))
    with pytest.raises(Conflict):
        await client.replace(stale)
    with pytest.raises(Invalid) as inv:
        await client.create(cm("Not_A_Valid_Name"), namespace=ns)
    assert any(c.get("field") == "metadata.name" for c in inv.value.causes)
    with pytest.raises(BadRequest):
        await client.list("v1/ConfigMap", namespace=ns, label_selector="a in (")
    with pytest.raises(NotFound):
        await client.delete("v1/ConfigMap", "missing", namespace=ns)


async def test_object_namespace_must_match_argument(client: Client, ns: str) -> None:
    obj = cm("x")
    obj["metadata"]["namespace"] = ns
    with pytest.raises(ValueError):
        await client.create(obj, namespace="other")


async def test_a_misspelt_built_in_kind_fails_at_once_with_suggestions(client: Client) -> None:
    """Issue 11 item 14: no CRD can add kinds to a built-in group, so `v1/ConfigMapp` is a typo."""
    with pytest.raises(UnknownKind, match=r"did you mean 'ConfigMap'.*no CRD can add kinds"):
        await client.resolve("v1/ConfigMapp")
    with pytest.raises(UnknownKind, match=r"'Deployment'"):
        await client.list("apps/v1/Deploymnet", namespace="default")
    with pytest.raises(UnknownResource) as info:  # a CRD group: the CRD may simply not exist yet
        await client.resolve("nonexistent.example.com/v1/Thing")
    assert not isinstance(info.value, UnknownKind)


async def test_a_near_miss_of_a_served_custom_kind_is_a_typo(client: Client) -> None:
    """Issue 31 item 13: `Widgit` where discovery serves `Widget` in that group is a typo, reported at
    once; a kind not close to a served one may be a CRD still to come."""
    group = f"kl{secrets.token_hex(3)}.example.com"
    await install_crd(client, widget_crd(group))
    try:
        for typo in ("Widgit", "Widgett", "wigdets", "Wdget"):
            with pytest.raises(UnknownKind, match=rf"serves 'Widget' \(did you mean '{group}/v1/Widget'\?\)"):
                await client.resolve(f"{group}/v1/{typo}")
        for other in ("Gadget", "WidgetBackup", "Wi"):  # a CRD of that group may still be installed
            with pytest.raises(UnknownResource) as info:
                await client.resolve(f"{group}/v1/{other}")
            assert not isinstance(info.value, UnknownKind), info.value
    finally:
        await client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")


async def test_unknown_kind_is_typed(client: Client) -> None:
    with pytest.raises(UnknownResource):
        await client.get("v1/NoSuchKind", "x")
    with pytest.raises(UnknownResource):
        await client.get("nonexistent.example.com/v1/Thing", "x")


async def test_resolve_by_kind_and_plural(client: Client) -> None:
    dep = await client.resolve("apps/v1/Deployment")
    assert (dep.plural, dep.namespaced) == ("deployments", True)
    assert "status" in dep.subresources and "scale" in dep.subresources
    assert (await client.resolve("apps/v1/deployments")) == dep
    nsr = await client.resolve(ResourceRef("", "v1", "Namespace"))
    assert not nsr.namespaced


async def test_list_options_value_selects_as_the_keywords_do_and_bad_options_are_typed_errors(
        client: Client, ns: str) -> None:
    await client.create(cm("a", labels={"tier": "web"}), namespace=ns)
    await client.create(cm("b", labels={"tier": "db"}), namespace=ns)
    web = ListOptions(namespace=ns, label_selector={"tier": "web"}, limit=1)
    by_value = await client.list("v1/ConfigMap", web)
    by_keywords = await client.list("v1/ConfigMap", namespace=ns, label_selector="tier=web", limit=1)
    assert [o["metadata"]["name"] for o in by_value.items] == [o["metadata"]["name"] for o in by_keywords.items] == ["a"]
    # keywords refine a value
    db = await client.list("v1/ConfigMap", web, label_selector="tier=db")
    assert [o["metadata"]["name"] for o in db.items] == ["b"]
    with pytest.raises(TypeError, match="unexpected list option"):
        await client.list("v1/ConfigMap", namespace=ns, label=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="limit"):
        ListOptions(limit=-1)
    with pytest.raises(TypeError, match="namespace"):
        ListOptions(namespace=3)  # type: ignore[arg-type]


async def test_list_pagination_and_resource_version(client: Client, ns: str) -> None:
    for i in range(7):  # labelled: a real cluster has its own ConfigMaps in every namespace
        await client.create(cm(f"p{i}", labels={"paged": "yes"}), namespace=ns)
    pages = [p async for p in client.list_pages("v1/ConfigMap", namespace=ns, label_selector="paged", limit=3)]
    assert [len(p.items) for p in pages] == [3, 3, 1]
    assert pages[0].continue_token and pages[1].continue_token and pages[2].continue_token is None
    assert len({p.resource_version for p in pages}) == 1  # one snapshot
    assert all(item["kind"] == "ConfigMap" and item["apiVersion"] == "v1" for p in pages for item in p.items)
    full = await client.list("v1/ConfigMap", namespace=ns, label_selector="paged", limit=2)
    assert sorted(o["metadata"]["name"] for o in full) == [f"p{i}" for i in range(7)]
    assert full.resource_version == pages[0].resource_version or int(full.resource_version) >= int(pages[0].resource_version)
    assert full.kind == "ConfigMapList"


async def test_list_all_namespaces(client: Client, ns: str) -> None:
    await client.create(cm("everywhere", labels={"probe": ns}), namespace=ns)
    other = f"{ns}-b"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
    try:
        await client.create(cm("everywhere", labels={"probe": ns}), namespace=other)
        found = await client.list("v1/ConfigMap", namespace=ALL_NAMESPACES, label_selector={"probe": ns})
        assert sorted(o["metadata"]["namespace"] for o in found) == sorted([ns, other])
    finally:
        await client.delete("v1/Namespace", other)


async def test_label_and_field_selectors(client: Client, ns: str) -> None:
    await client.create(cm("a", labels={"app": "web", "tier": "fe"}), namespace=ns)
    await client.create(cm("b", labels={"app": "web", "tier": "be"}), namespace=ns)
    await client.create(cm("c", labels={"app": "db"}), namespace=ns)

    async def names(**kw: Any) -> list[str]:
        return sorted(o["metadata"]["name"] for o in await client.list("v1/ConfigMap", namespace=ns, **kw))

    assert await names(label_selector="app=web") == ["a", "b"]
    assert await names(label_selector={"app": "web", "tier": "be"}) == ["b"]
    assert await names(label_selector="app in (db),!tier") == ["c"]
    assert await names(field_selector="metadata.name=c") == ["c"]
    assert await names(field_selector={"metadata.name": "a"}, label_selector="app") == ["a"]
    from kubeloop.meta import FieldSelector, LabelSelector
    assert await names(label_selector=LabelSelector.parse("app=web,tier notin (fe)")) == ["b"]
    assert await names(field_selector=FieldSelector.parse("metadata.name!=a"), label_selector="app=web") == ["b"]


async def test_patch_types(client: Client, ns: str) -> None:
    await client.create(cm("p", {"a": "1"}, labels={"l": "1"}), namespace=ns)
    out = await client.patch("v1/ConfigMap", "p", {"data": {"b": "2"}}, namespace=ns)
    assert out["data"] == {"a": "1", "b": "2"}
    out = await client.patch("v1/ConfigMap", "p", [{"op": "remove", "path": "/data/a"}], type="json", namespace=ns)
    assert out["data"] == {"b": "2"}
    out = await client.patch("v1/ConfigMap", "p", {"metadata": {"labels": {"m": "2"}}}, type="strategic",
                             namespace=ns)
    assert out["metadata"]["labels"] == {"l": "1", "m": "2"}
    with pytest.raises((Invalid, Conflict)):  # a failing JSON-patch test op
        await client.patch("v1/ConfigMap", "p", [{"op": "test", "path": "/data/b", "value": "nope"}], type="json",
                           namespace=ns)
    with pytest.raises(ValueError):
        await client.patch("v1/ConfigMap", "p", {}, type="bogus", namespace=ns)  # type: ignore[arg-type]


async def test_server_side_apply(client: Client, ns: str) -> None:
    obj = cm("ssa", {"owned": "by-a"})
    obj["metadata"]["namespace"] = ns
    out = await client.apply(obj, field_manager="manager-a")
    assert out["data"] == {"owned": "by-a"}
    assert any(m["manager"] == "manager-a" and m["operation"] == "Apply" for m in out["metadata"]["managedFields"])
    clash = cm("ssa", {"owned": "by-b"})
    with pytest.raises(Conflict) as exc:
        await client.apply(clash, field_manager="manager-b", namespace=ns)
    assert any(c.get("reason") == "FieldManagerConflict" for c in exc.value.details.get("causes", []))
    forced = await client.apply(clash, field_manager="manager-b", force=True, namespace=ns)
    assert forced["data"] == {"owned": "by-b"}
    dry = await client.apply(cm("ssa", {"owned": "dry"}), field_manager="manager-b", namespace=ns, dry_run=True)
    assert dry["data"] == {"owned": "dry"}
    assert (await client.get("v1/ConfigMap", "ssa", namespace=ns))["data"] == {"owned": "by-b"}
    with pytest.raises(ValueError):
        await client.apply(obj, field_manager="")


async def test_metadata_only_reads(client: Client, ns: str) -> None:
    await client.create(cm("m", {"big": "x" * 100}), namespace=ns)
    got = await client.get("v1/ConfigMap", "m", namespace=ns, metadata_only=True)
    assert got["kind"] == "PartialObjectMetadata" and "data" not in got and got["metadata"]["name"] == "m"
    listed = await client.list("v1/ConfigMap", namespace=ns, metadata_only=True)
    assert listed.kind == "PartialObjectMetadataList"
    mine = [o for o in listed if o["metadata"]["name"] == "m"]  # a real cluster adds kube-root-ca.crt
    assert len(mine) == 1 and all("data" not in o for o in listed)


async def test_delete_options(client: Client, ns: str) -> None:
    obj = await client.create(cm("d"), namespace=ns)
    with pytest.raises(Conflict):
        await client.delete("v1/ConfigMap", "d", namespace=ns, preconditions={"uid": "not-the-uid"})
    await client.delete("v1/ConfigMap", "d", namespace=ns, dry_run=True)
    assert (await client.get("v1/ConfigMap", "d", namespace=ns))["metadata"]["uid"] == obj["metadata"]["uid"]
    out = await client.delete("v1/ConfigMap", "d", namespace=ns, propagation_policy="Background",
                              grace_period_seconds=0,
                              preconditions={"uid": obj["metadata"]["uid"],
                                             "resourceVersion": obj["metadata"]["resourceVersion"]})
    assert out.get("kind") in ("Status", "ConfigMap")
    with pytest.raises(NotFound):
        await client.get("v1/ConfigMap", "d", namespace=ns)


async def test_delete_returns_object_while_finalizers_remain(client: Client, ns: str) -> None:
    obj = cm("f")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(obj, namespace=ns)
    out = await client.delete("v1/ConfigMap", "f", namespace=ns)
    assert out["kind"] == "ConfigMap" and out["metadata"]["deletionTimestamp"]
    await client.patch("v1/ConfigMap", "f", {"metadata": {"finalizers": None}}, namespace=ns)
    with pytest.raises(NotFound):
        await client.get("v1/ConfigMap", "f", namespace=ns)


async def test_delete_collection(client: Client, ns: str) -> None:
    for i, app in enumerate(["x", "x", "y"]):
        await client.create(cm(f"c{i}", labels={"app": app}), namespace=ns)
    await client.delete_collection("v1/ConfigMap", namespace=ns, label_selector={"app": "x"})
    left = await client.list("v1/ConfigMap", namespace=ns)
    assert [o["metadata"]["name"] for o in left if o["metadata"]["name"] in ("c0", "c1", "c2")] == ["c2"]


async def test_crd_created_after_start_and_status_subresource(client: Client, ns: str) -> None:
    group = f"kl{secrets.token_hex(3)}.example.com"
    ref = f"{group}/v1/Widget"
    with pytest.raises(UnknownResource):
        await client.resolve(ref)
    try:
        assert await install_crd(client, widget_crd(group)) == ref  # served shortly after creation
        res = await client.resolve(ref)
        assert res.plural == "widgets" and res.namespaced and "status" in res.subresources
        w = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 1}}
        created = None
        for _ in range(100):
            try:
                created = await client.create(w, namespace=ns)
                break
            except NotFound:
                await asyncio.sleep(0.05)
        assert created is not None and created["metadata"]["generation"] == 1
        # status writes go through /status only
        created["status"] = {"ready": True}
        out = await client.replace_status(created)
        assert out["status"] == {"ready": True}
        st = await client.get_status(ref, "w1", namespace=ns)
        assert st["status"] == {"ready": True}
        out = await client.patch_status(ref, "w1", {"status": {"phase": "Running"}}, namespace=ns)
        assert out["status"] == {"ready": True, "phase": "Running"}
        out = await client.apply_status({"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                                         "status": {"phase": "Done"}}, field_manager="status-writer", force=True,
                                        namespace=ns)
        assert out["status"]["phase"] == "Done"
        # spec changes through the main resource do not touch status
        spec = await client.patch(ref, "w1", {"spec": {"size": 2}, "status": {"phase": "Ignored"}}, namespace=ns)
        assert spec["spec"]["size"] == 2 and spec["status"]["phase"] == "Done"
        assert spec["metadata"]["generation"] == 2
    finally:
        await client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")


async def test_list_page_and_expired_continue_token(client: Client, ns: str, apiserver: Any) -> None:
    from kubeloop.client import Gone
    for i in range(4):  # labelled: a real cluster has its own ConfigMaps in every namespace
        await client.create(cm(f"e{i}", labels={"paged": "yes"}), namespace=ns)
    first = await client.list_page("v1/ConfigMap", namespace=ns, label_selector="paged", limit=2)
    assert len(first.items) == 2 and first.continue_token
    second = await client.list_page("v1/ConfigMap", namespace=ns, label_selector="paged", limit=2,
                                    continue_token=first.continue_token,
                                    resource_version="ignored-with-continue")
    assert [o["metadata"]["name"] for o in second.items] == ["e2", "e3"]
    if second.continue_token:  # a real server may hand out a token when other objects follow in storage
        rest = await client.list_page("v1/ConfigMap", namespace=ns, label_selector="paged", limit=2,
                                      continue_token=second.continue_token)
        assert rest.items == [] and rest.continue_token is None
    faults = apiserver.require_faults()
    await client.create(cm("e4", labels={"paged": "yes"}), namespace=ns)
    faults.compact()  # the snapshot behind the token is gone
    with pytest.raises(Gone) as exc:
        await client.list_page("v1/ConfigMap", namespace=ns, label_selector="paged", limit=2,
                               continue_token=first.continue_token)
    assert exc.value.code == 410


async def test_write_hooks_see_every_write_path(client: Client, ns: str) -> None:
    seen: list[tuple[str, str, str, bool]] = []  # (verb, name, outcome, dry_run)

    def hook(w: WriteRequest) -> Any:
        def done(result: dict[str, Any] | None) -> None:
            seen.append((w.verb, w.name, "failed" if result is None else str(result.get("kind")), w.dry_run))
        return done

    hooked = client.with_write_hook(hook)
    assert hooked.transport is client.transport and client.write_hooks == ()  # the original is untouched
    labels = {"hook-test": "yes"}
    await hooked.create(cm("h1", labels=labels), namespace=ns)
    await hooked.create(cm("h2", labels=labels), namespace=ns, dry_run=True)
    await hooked.patch("v1/ConfigMap", "h1", {"data": {"a": "1"}}, namespace=ns)
    await hooked.apply(cm("h1", {"a": "2"}), field_manager="hook-test", namespace=ns, force=True)
    await hooked.request_json("POST", f"/api/v1/namespaces/{ns}/configmaps", body=cm("h3", labels=labels))
    with pytest.raises(AlreadyExists):
        await hooked.create(cm("h1"), namespace=ns)
    await hooked.delete_collection("v1/ConfigMap", namespace=ns, label_selector=labels)
    await client.create(cm("unhooked"), namespace=ns)  # the original client calls no hook
    assert seen[:3] == [("create", "h1", "ConfigMap", False), ("create", "h2", "ConfigMap", True),
                        ("patch", "h1", "ConfigMap", False)]
    assert seen[3] == ("patch", "h1", "ConfigMap", False)  # server-side apply is a PATCH
    assert seen[4] == ("request", "", "ConfigMap", False) and seen[5] == ("create", "h1", "failed", False)
    assert seen[6][0] == "deletecollection" and seen[6][2] == "ConfigMapList" and len(seen) == 7
    await hooked.close()  # a derived client does not close the shared connections
    assert (await client.get("v1/ConfigMap", "unhooked", namespace=ns))["metadata"]["name"] == "unhooked"
