"""Strategic-merge-patch directives and JSON patch edge cases on built-in kinds."""

from __future__ import annotations

from ..harness import Run
from .common import JSONPATCH, MERGE, SMP, namespace


async def scenario_strategic_merge(run: Run) -> None:
    ns = await namespace(run, "smp")
    deps = f"/apis/apps/v1/namespaces/{ns}/deployments"
    await run.raw("POST", deps, {"metadata": {"name": "d", "finalizers": ["a.example.com/x", "b.example.com/y"]},
                                 "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                                     "metadata": {"labels": {"app": "d"}},
                                     "spec": {"containers": [
                                         {"name": "a", "image": "x", "env": [{"name": "E1", "value": "1"},
                                                                             {"name": "E2", "value": "2"}],
                                          "args": ["--one", "--two"]},
                                         {"name": "b", "image": "y"}],
                                         "volumes": [{"name": "v", "emptyDir": {}}]}}}})
    path = f"{deps}/d"
    await run.req("merge a container by name", "PATCH", path, {"spec": {"template": {"spec": {"containers": [
        {"name": "b", "image": "y2"}]}}}}, ctype=SMP)
    await run.req("add a new container (goes first)", "PATCH", path, {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "z"}]}}}}, ctype=SMP)
    await run.req("delete a container with $patch", "PATCH", path, {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "$patch": "delete"}]}}}}, ctype=SMP)
    await run.req("replace the env list with $patch replace", "PATCH", path, {"spec": {"template": {"spec": {
        "containers": [{"name": "a", "env": [{"name": "E3", "value": "3"}, {"$patch": "replace"}]}]}}}}, ctype=SMP)
    await run.req("set element order", "PATCH", path, {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"name": "a", "image": "x2"}]}}}},
        ctype=SMP)
    await run.req("delete from a primitive list", "PATCH", path, {"metadata": {
        "$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]}}, ctype=SMP)
    await run.req("retainKeys on a volume", "PATCH", path, {"spec": {"template": {"spec": {"volumes": [
        {"name": "v", "$retainKeys": ["name", "configMap"], "configMap": {"name": "cm"}}]}}}}, ctype=SMP)
    await run.req("args are replaced, not merged", "PATCH", path, {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "args": ["--three"]}]}}}}, ctype=SMP)
    await run.req("bogus $patch", "PATCH", path, {"spec": {"$patch": "bogus"}}, ctype=SMP, soft=("message",))
    await run.req("$patch delete on the whole spec", "PATCH", path, {"spec": {"$patch": "delete"}}, ctype=SMP)
    await run.req("null deletes a field", "PATCH", path, {"spec": {"template": {"metadata": {"labels": {
        "extra": "1"}}, "spec": {"volumes": None}}}}, ctype=SMP)
    await run.req("setElementOrder naming a missing item", "PATCH", path, {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "zz"}]}}}}, ctype=SMP, soft=("message",))
    await run.req("strategic merge on a custom-like kind path", "PATCH", path, {"metadata": {"labels": {"l": "v"}}},
                  ctype=SMP)


async def scenario_json_patch(run: Run) -> None:
    ns = await namespace(run, "jp")
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    await run.raw("POST", cms, {"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v", "n": "1"}})
    path = f"{cms}/c"
    await run.req("replace a missing key", "PATCH", path, [{"op": "replace", "path": "/data/missing", "value": "x"}],
                  ctype=JSONPATCH)
    await run.req("test a missing key", "PATCH", path, [{"op": "test", "path": "/data/missing", "value": "x"}],
                  ctype=JSONPATCH)
    await run.req("test a wrong value", "PATCH", path, [{"op": "test", "path": "/data/k", "value": "w"}],
                  ctype=JSONPATCH)
    await run.req("remove a missing key", "PATCH", path, [{"op": "remove", "path": "/data/missing"}], ctype=JSONPATCH)
    await run.req("add under a missing parent", "PATCH", path, [{"op": "add", "path": "/metadata/annotations/x",
                                                                "value": "1"}], ctype=JSONPATCH)
    await run.req("add a map", "PATCH", path, [{"op": "add", "path": "/metadata/annotations", "value": {"x": "1"}}],
                  ctype=JSONPATCH)
    await run.req("move a key", "PATCH", path, [{"op": "move", "from": "/data/n", "path": "/data/m"}], ctype=JSONPATCH)
    await run.req("copy a key", "PATCH", path, [{"op": "copy", "from": "/data/k", "path": "/data/k2"}],
                  ctype=JSONPATCH)
    await run.req("escaped path", "PATCH", path, [{"op": "add", "path": "/metadata/labels/example.com~1team",
                                                   "value": "x"}], ctype=JSONPATCH)
    await run.req("test then replace", "PATCH", path, [{"op": "test", "path": "/data/k", "value": "v"},
                                                       {"op": "replace", "path": "/data/k", "value": "v2"}],
                  ctype=JSONPATCH)
    await run.req("bad op", "PATCH", path, [{"op": "frobnicate", "path": "/data/k"}], ctype=JSONPATCH)
    await run.req("missing path", "PATCH", path, [{"op": "add", "value": "1"}], ctype=JSONPATCH)
    await run.req("replace the whole data", "PATCH", path, [{"op": "replace", "path": "/data", "value": {"z": "1"}}],
                  ctype=JSONPATCH)
    await run.req("value of a wrong type", "PATCH", path, [{"op": "add", "path": "/data/num", "value": 1}],
                  ctype=JSONPATCH)
    await run.req("patch the name", "PATCH", path, [{"op": "replace", "path": "/metadata/name", "value": "other"}],
                  ctype=JSONPATCH)
    deps = f"/apis/apps/v1/namespaces/{ns}/deployments"
    await run.raw("POST", deps, {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                                     "template": {"metadata": {"labels": {"app": "d"}},
                                                                                  "spec": {"containers": [
                                                                                      {"name": "a", "image": "x"}]}}}})
    await run.req("append a container", "PATCH", f"{deps}/d", [{"op": "add", "path": "/spec/template/spec/containers/-",
                                                                "value": {"name": "b", "image": "y"}}], ctype=JSONPATCH)
    await run.req("index out of range", "PATCH", f"{deps}/d", [{"op": "remove",
                                                                "path": "/spec/template/spec/containers/5"}],
                  ctype=JSONPATCH)
    await run.req("replace replicas with a string", "PATCH", f"{deps}/d", [{"op": "replace", "path": "/spec/replicas",
                                                                            "value": "3"}], ctype=JSONPATCH)
    await run.req("merge patch null on a required field", "PATCH", f"{deps}/d", {"spec": {"selector": None}},
                  ctype=MERGE)
