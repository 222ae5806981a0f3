"""`/scale` and `/status`: preconditions (resourceVersion, uid), validation, what each may change,
list and watch options."""

from __future__ import annotations

from ..harness import Run
from .common import MERGE, namespace


async def scenario_scale_and_status(run: Run) -> None:
    ns = await namespace(run, "sub")
    deps = f"/apis/apps/v1/namespaces/{ns}/deployments"
    created = await run.raw("POST", deps, {"metadata": {"name": "d"}, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    scale = f"{deps}/d/scale"
    got = await run.req("get scale", "GET", scale)
    body = got.obj
    body["spec"]["replicas"] = 3
    await run.req("put scale", "PUT", scale, body)
    await run.req("put scale with a stale resourceVersion", "PUT", scale, body)
    body["metadata"].pop("resourceVersion", None)
    body["spec"]["replicas"] = 4
    await run.req("put scale without resourceVersion", "PUT", scale, body)
    await run.req("put scale with a wrong uid", "PUT", scale, {**body, "metadata": {**body["metadata"],
                                                                                      "uid": "00000000-0000-0000-0000-000000000000"}})
    await run.req("put scale negative", "PUT", scale, {**body, "spec": {"replicas": -1}})
    await run.req("put scale name mismatch", "PUT", scale, {**body, "metadata": {**body["metadata"], "name": "x"}})
    await run.req("patch scale", "PATCH", scale, {"spec": {"replicas": 5}}, ctype=MERGE)
    await run.req("patch scale to 0", "PATCH", scale, {"spec": {"replicas": 0}}, ctype=MERGE)
    await run.req("scale of a missing deployment", "GET", f"{deps}/missing/scale")
    status = f"{deps}/d/status"
    current = (await run.raw("GET", f"{deps}/d")).obj
    stale_rv = created.rv
    await run.req("status with a stale resourceVersion", "PUT", status, {
        **current, "metadata": {**current["metadata"], "resourceVersion": stale_rv}, "status": {"replicas": 1}})
    await run.req("status with a wrong uid", "PUT", status, {
        **current, "metadata": {**current["metadata"], "uid": "00000000-0000-0000-0000-000000000000"},
        "status": {"replicas": 1}})
    await run.req("status ignores spec changes", "PUT", status, {
        **current, "spec": {**current["spec"], "replicas": 9}, "status": {"replicas": 1, "observedGeneration": 3}})
    await run.req("status available above ready", "PATCH", status, {"status": {"availableReplicas": 2,
                                                                                 "readyReplicas": 1, "replicas": 2}},
                  ctype=MERGE)
    await run.req("main resource ignores status", "PATCH", f"{deps}/d", {"status": {"replicas": 7}}, ctype=MERGE)
    await run.req("status of a missing deployment", "PATCH", f"{deps}/missing/status", {"status": {}}, ctype=MERGE)
    await run.req("delete with a stale resourceVersion precondition", "DELETE", f"{deps}/d",
                  {"preconditions": {"resourceVersion": stale_rv}})


async def scenario_list_options(run: Run) -> None:
    ns = await namespace(run, "lo")
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(3):
        await run.raw("POST", cms, {"metadata": {"name": f"c{i}", "labels": {"n": str(i)}}})
    listed = await run.raw("GET", cms)
    rv = listed.obj["metadata"]["resourceVersion"]
    await run.req("limit with resourceVersion 0 is ignored", "GET", cms, query={"limit": "1", "resourceVersion": "0"},
                  unordered=True)
    await run.req("limit with NotOlderThan pages", "GET", cms,
                  query={"limit": "1", "resourceVersion": rv, "resourceVersionMatch": "NotOlderThan"})
    await run.req("NotOlderThan without limit is whole", "GET", cms,
                  query={"resourceVersion": rv, "resourceVersionMatch": "NotOlderThan"}, unordered=True)
    await run.req("Exact with limit", "GET", cms, query={"limit": "2", "resourceVersion": rv,
                                                         "resourceVersionMatch": "Exact"})
    await run.req("match with continue and no resourceVersion", "GET", cms,
                  query={"limit": "1", "resourceVersionMatch": "NotOlderThan", "continue": "abc"})
    await run.req("unsupported match without resourceVersion", "GET", cms, query={"resourceVersionMatch": "Bogus"})
    await run.req("unsupported match", "GET", cms, query={"resourceVersionMatch": "Bogus", "resourceVersion": "0"})
    await run.req("Exact with 0", "GET", cms, query={"resourceVersionMatch": "Exact", "resourceVersion": "0"})
    await run.req("watch with resourceVersionMatch", "GET", cms, query={
        "watch": "true", "resourceVersionMatch": "NotOlderThan", "sendInitialEvents": "true",
        "allowWatchBookmarks": "true"})
    await run.req("list with sendInitialEvents (unknown in 1.24)", "GET", cms, query={
        "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "resourceVersion": rv}, unordered=True)
    await run.req("label selector set", "GET", cms, query={"labelSelector": "n in (0,2)"})
    await run.req("bad label selector", "GET", cms, query={"labelSelector": "n in (0"})
    await run.req("bad field selector label", "GET", cms, query={"fieldSelector": "data.k=v"})
    async with run.watching("watch sendInitialEvents is an ordinary watch", cms, query={
            "sendInitialEvents": "true", "resourceVersion": rv, "timeoutSeconds": "5"}) as w:
        await run.raw("POST", cms, {"metadata": {"name": "c9"}})
        await w.expect(1)
