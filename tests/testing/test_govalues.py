"""Go's value semantics, where the emulator decides "changed" and prints values.

The expectations are what a real kube-apiserver 1.24 answered to the same requests (checked by hand
on the real server; the differential recordings in `differential/` cover more).
"""

from __future__ import annotations

from typing import Any

from kubeloop.meta import go_json_numbers
from kubeloop.testing.apiserver.govalues import (
    GO,
    SMD,
    TYPED,
    equal,
    format_float_g,
    sprint_sharp_v,
    sprint_v,
)

from .conftest import Http

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "gv.example.com"
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": f"gadgets.{GROUP}"},
       "spec": {"group": GROUP, "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "size": {"type": "integer"}, "weight": {"type": "number"},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}}}]}}
GADGETS = f"/apis/{GROUP}/v1/namespaces/default/gadgets"


def test_equal_modes() -> None:
    assert equal(1, 1.0, TYPED) and equal(1, 1.0, SMD) and not equal(1, 1.0, GO)
    assert not equal(True, 1, GO) and not equal(True, 1, TYPED) and not equal(True, 1, SMD)
    assert equal({"a": None}, {}, TYPED) and equal({"a": []}, {"a": None}, TYPED)
    assert not equal({"a": None}, {}, GO) and not equal({"a": None}, {}, SMD)
    assert not equal({"a": {}}, {"a": None}, GO)
    assert equal({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]}, GO)
    assert equal(2**63, float(2**63), GO)  # past int64 the server decodes an integer literal as float64 too
    # what the stored object holds once Go has written it and read it back
    assert go_json_numbers({"a": [1.0, 2.5, True], "b": 3e30}) == {"a": [1, 2.5, True], "b": 3e30}
    assert type(go_json_numbers(1.0)) is int and type(go_json_numbers(3e30)) is float


def test_printing_as_go_fmt() -> None:
    # fmt.Printf("%v") of float64, run against Go 1.19
    got = [format_float_g(f) for f in (1.0, 1.5, 1e21, 1e20, 123456.0, 1234567.0, 1e-5, 1.25e-7, 3e6)]
    assert got == ["1", "1.5", "1e+21", "1e+20", "123456", "1.234567e+06", "1e-05", "1.25e-07", "3e+06"]
    value: Any = {"a": 1.0, "b": [1, "s", True, None]}
    assert sprint_v(value) == "map[a:1 b:[1 s true <nil>]]"
    assert sprint_sharp_v(value) == 'map[string]interface {}{"a":1, "b":[]interface {}{1, "s", true, interface {}(nil)}}'


async def _gadget(http: Http) -> None:
    code, out = await http.post(CRDS, CRD)
    assert code == 201, out
    for _ in range(50):
        code, _ = await http.get(GADGETS)
        if code == 200:
            return
        import asyncio

        await asyncio.sleep(0.05)
    raise AssertionError("the CRD was not served")


async def _merge(http: Http, name: str, patch: dict[str, Any]) -> dict[str, Any]:
    code, out = await http.req("PATCH", f"{GADGETS}/{name}", patch, ctype="application/merge-patch+json")
    assert code == 200, out
    return dict(out)


def _gen_rv(obj: dict[str, Any]) -> tuple[int, int]:
    return obj["metadata"]["generation"], int(obj["metadata"]["resourceVersion"])


async def test_custom_resource_int_and_float_differ(http: Http) -> None:
    await _gadget(http)
    code, obj = await http.post(GADGETS, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"},
                                          "spec": {"size": 2, "weight": 1, "free": {"x": True}}})
    assert code == 201
    gen, rv = _gen_rv(obj)
    # the stored int64 1 and a float64 1.0 are different values to Go: every such write bumps
    # generation (the real server: 1 -> 2 -> 3), and what comes back is written `1`
    for expected in (gen + 1, gen + 2):
        obj = await _merge(http, "g", {"spec": {"weight": 1.0}})
        assert obj["metadata"]["generation"] == expected and int(obj["metadata"]["resourceVersion"]) > rv
        assert obj["spec"]["weight"] == 1 and type(obj["spec"]["weight"]) is int
        rv = int(obj["metadata"]["resourceVersion"])
    # true and 1 differ too; the same value again is a no-op (same generation and resourceVersion)
    changed = await _merge(http, "g", {"spec": {"free": {"x": 1}}})
    assert changed["spec"]["free"] == {"x": 1} and changed["metadata"]["generation"] == gen + 3
    same = await _merge(http, "g", {"spec": {"free": {"x": 1}}})
    assert _gen_rv(same) == _gen_rv(changed)
    # a fraction is kept as written, and rewriting it is a no-op
    half = await _merge(http, "g", {"spec": {"weight": 2.5}})
    assert half["spec"]["weight"] == 2.5
    assert _gen_rv(await _merge(http, "g", {"spec": {"weight": 2.5}})) == _gen_rv(half)


async def test_builtin_float_fields_compare_as_numbers(http: Http) -> None:
    """A CRD's `minimum` is a Go float64: 1 and 1.0 are the same value, written `1`."""
    crd: dict[str, Any] = {**CRD, "metadata": {"name": f"widgets.{GROUP}"},
                           "spec": {**CRD["spec"], "names": {"plural": "widgets", "singular": "widget",
                                                             "kind": "Widget", "listKind": "WidgetList"}}}
    versions = crd["spec"]["versions"]
    crd["spec"]["versions"] = [{**versions[0], "schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer", "minimum": 1.0}}}}}}}]
    code, created = await http.post(CRDS, crd)
    assert code == 201, created
    size = created["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]
    assert size["minimum"] == 1 and type(size["minimum"]) is int
    code, current = await http.get(f"{CRDS}/widgets.{GROUP}")  # the CRD controllers wrote its status since
    code, again = await http.req("PUT", f"{CRDS}/widgets.{GROUP}", {**current, "spec": crd["spec"]})
    assert code == 200, again
    assert again["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]  # a no-op
    assert again["metadata"]["generation"] == current["metadata"]["generation"]
