"""Cluster mode: what kube-controller-manager does next to the API server (the emulator's default)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tests.testing.conftest import Http

NS = "/api/v1/namespaces"


async def _until(probe: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], within: float = 3.0) -> Any:
    """Poll `probe` until `done` holds (controllers react asynchronously, as on a real cluster)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = await probe()
        if done(value) or loop.time() > deadline:
            return value
        await asyncio.sleep(0.01)


async def test_new_namespace_gets_root_ca_and_default_service_account(cluster_http: Http) -> None:
    http = cluster_http
    await http.post(NS, {"metadata": {"name": "boot"}})
    cm_path = f"{NS}/boot/configmaps/kube-root-ca.crt"

    async def both() -> list[int]:
        return [(await http.get(cm_path))[0], (await http.get(f"{NS}/boot/serviceaccounts/default"))[0]]
    assert await _until(both, lambda v: v == [200, 200]) == [200, 200]
    _, root_ca = await http.get(cm_path)
    assert root_ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    assert [m["manager"] for m in root_ca["metadata"]["managedFields"]] == ["kube-controller-manager"]

    # deleted: re-created (a new uid); edited: the CA bundle is put back, other edits stay
    await http.req("DELETE", cm_path)
    recreated = await _until(lambda: http.get(cm_path),
                             lambda r: r[0] == 200 and r[1]["metadata"]["uid"] != root_ca["metadata"]["uid"])
    assert recreated[0] == 200 and recreated[1]["data"] == root_ca["data"]
    await http.req("PATCH", cm_path, {"data": {"ca.crt": "tampered"}, "metadata": {"labels": {"x": "1"}}},
                   ctype="application/merge-patch+json")
    _, restored = await _until(lambda: http.get(cm_path), lambda r: r[1]["data"] == root_ca["data"])
    assert restored["data"] == root_ca["data"] and restored["metadata"]["labels"] == {"x": "1"}

    await http.req("DELETE", f"{NS}/boot/serviceaccounts/default")
    code, _ = await _until(lambda: http.get(f"{NS}/boot/serviceaccounts/default"), lambda r: r[0] == 200)
    assert code == 200


async def test_bare_namespace_is_empty_and_stays_terminating(http: Http) -> None:
    """`bare=True` is kube-apiserver alone: no bootstrap content, and no namespace controller."""
    await http.post(NS, {"metadata": {"name": "bare"}})
    await asyncio.sleep(0.05)
    _, cms = await http.get(f"{NS}/bare/configmaps")
    _, sas = await http.get(f"{NS}/bare/serviceaccounts")
    assert cms["items"] == [] and sas["items"] == []
    await http.req("DELETE", f"{NS}/bare")
    await asyncio.sleep(0.2)  # well past the fixture's namespace_delete_delay
    code, ns = await http.get(f"{NS}/bare")
    assert code == 200 and ns["status"]["phase"] == "Terminating"


def _deployment(replicas: int, image: str = "nginx:1.21") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "main", "image": image}]}}}}


async def test_deployment_makes_a_replicaset_and_pending_pods_and_rolls_out_a_new_template(cluster_http: Http) -> None:
    http = cluster_http
    await http.post(NS, {"metadata": {"name": "apps"}})
    deps, rss, pods = ("/apis/apps/v1/namespaces/apps/deployments", "/apis/apps/v1/namespaces/apps/replicasets",
                       f"{NS}/apps/pods")

    async def state() -> dict[str, Any]:
        _, d = await http.get(deps + "/web")
        _, r = await http.get(rss, labelSelector="app=web")
        _, p = await http.get(pods, labelSelector="app=web")
        return {"d": d, "rss": r["items"], "pods": p["items"]}

    def rolled_out(replicas: int, revision: str, n_rs: int) -> Callable[[dict[str, Any]], bool]:
        def check(s: dict[str, Any]) -> bool:
            st = s["d"].get("status") or {}
            return (st.get("observedGeneration") == s["d"]["metadata"]["generation"] and len(s["rss"]) == n_rs
                    and s["d"]["metadata"].get("annotations", {}).get("deployment.kubernetes.io/revision") == revision
                    and len(s["pods"]) == sum(rs["spec"]["replicas"] for rs in s["rss"])
                    and all((rs.get("status") or {}).get("replicas", 0) == rs["spec"]["replicas"] for rs in s["rss"])
                    and st.get("updatedReplicas") == replicas)
        return check

    code, _ = await http.post(deps, _deployment(2))
    assert code == 201
    s = await _until(state, rolled_out(2, "1", 1))
    assert rolled_out(2, "1", 1)(s), s
    rs = s["rss"][0]
    h = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{h}" and rs["spec"]["selector"]["matchLabels"] == {"app": "web",
                                                                                               "pod-template-hash": h}
    assert {k: v for k, v in rs["metadata"]["annotations"].items() if k.startswith("deployment.kubernetes.io/")} == {
        "deployment.kubernetes.io/desired-replicas": "2", "deployment.kubernetes.io/max-replicas": "3",
        "deployment.kubernetes.io/revision": "1"}
    assert all(p["status"]["phase"] == "Pending" and not p["spec"].get("nodeName")
               and p["spec"]["serviceAccountName"] == "default"
               and p["metadata"]["ownerReferences"][0]["name"] == rs["metadata"]["name"] for p in s["pods"])
    st = s["d"]["status"]
    assert (st["replicas"], st["unavailableReplicas"], st.get("availableReplicas")) == (2, 2, None)
    assert {c["type"]: (c["status"], c["reason"]) for c in st["conditions"]} == {
        "Available": ("False", "MinimumReplicasUnavailable"), "Progressing": ("True", "ReplicaSetUpdated")}

    # scaling keeps the ReplicaSet; a new template is revision 2, stuck on Pods that never become ready
    await http.req("PATCH", deps + "/web/scale", {"spec": {"replicas": 1}}, ctype="application/merge-patch+json")
    s = await _until(state, lambda s: rolled_out(1, "1", 1)(s) and len(s["pods"]) == 1)
    assert len(s["pods"]) == 1 and s["rss"][0]["metadata"]["name"] == f"web-{h}"
    await http.req("PATCH", deps + "/web", {"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:1.22"}]}}}}, ctype="application/strategic-merge-patch+json")
    s = await _until(state, rolled_out(1, "2", 2))
    assert rolled_out(1, "2", 1 + 1)(s), s
    assert sorted((rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], rs["spec"]["replicas"])
                  for rs in s["rss"]) == [("1", 1), ("2", 1)]

    # the garbage collector takes the ReplicaSets and their Pods with the Deployment
    await http.req("DELETE", deps + "/web")
    s = await _until(lambda: http.get(pods, labelSelector="app=web"), lambda r: r[1]["items"] == [])
    assert s[1]["items"] == [] and (await http.get(rss, labelSelector="app=web"))[1]["items"] == []


async def test_job_runs_parallel_pods_and_suspends(cluster_http: Http) -> None:
    http = cluster_http
    await http.post(NS, {"metadata": {"name": "batch"}})
    jobs, pods = "/apis/batch/v1/namespaces/batch/jobs", f"{NS}/batch/pods"
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "work"},
           "spec": {"parallelism": 2, "completions": 3, "template": {"spec": {
               "containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"}}}}
    assert (await http.post(jobs, job))[0] == 201

    async def state() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        _, j = await http.get(jobs + "/work")
        _, p = await http.get(pods, labelSelector="job-name=work")
        return j, p["items"]
    j, ps = await _until(state, lambda s: len(s[1]) == 2 and s[0].get("status", {}).get("active") == 2)
    assert len(ps) == 2 and j["status"]["active"] == 2 and j["status"]["ready"] == 0 and j["status"]["startTime"]
    uid = j["metadata"]["uid"]
    assert all(p["metadata"]["labels"] == {"controller-uid": uid, "job-name": "work"} for p in ps)

    await http.req("PATCH", jobs + "/work", {"spec": {"suspend": True}}, ctype="application/merge-patch+json")
    j, ps = await _until(state, lambda s: not s[1] and any(
        c["type"] == "Suspended" for c in s[0].get("status", {}).get("conditions", [])))
    assert ps == [] and "active" not in j["status"]
    assert [(c["type"], c["status"], c["reason"]) for c in j["status"]["conditions"]] == [
        ("Suspended", "True", "JobSuspended")]
    await http.req("PATCH", jobs + "/work", {"spec": {"suspend": False}}, ctype="application/merge-patch+json")
    j, ps = await _until(state, lambda s: len(s[1]) == 2)
    assert len(ps) == 2 and [(c["type"], c["status"], c["reason"]) for c in j["status"]["conditions"]] == [
        ("Suspended", "False", "JobResumed")]


async def test_pod_status_written_by_a_test_drives_availability_and_completion(cluster_http: Http) -> None:
    """No kubelet: a test plays it by writing Pod status, and the controllers react as on a cluster."""
    http = cluster_http
    await http.post(NS, {"metadata": {"name": "kubelet"}})
    deps, pods = "/apis/apps/v1/namespaces/kubelet/deployments", f"{NS}/kubelet/pods"
    await http.post(deps, _deployment(1))
    _, found = await _until(lambda: http.get(pods, labelSelector="app=web"), lambda r: len(r[1]["items"]) == 1)
    pod = found["items"][0]
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    code, _ = await http.req("PUT", f"{pods}/{pod['metadata']['name']}/status", pod)
    assert code == 200

    def available(r: tuple[int, Any]) -> bool:
        return (r[1].get("status") or {}).get("availableReplicas") == 1
    _, d = await _until(lambda: http.get(deps + "/web"), available)
    assert {c["type"]: (c["status"], c["reason"]) for c in d["status"]["conditions"]} == {
        "Available": ("True", "MinimumReplicasAvailable"), "Progressing": ("True", "NewReplicaSetAvailable")}
    assert "unavailableReplicas" not in d["status"]

    jobs = "/apis/batch/v1/namespaces/kubelet/jobs"
    await http.post(jobs, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
                           "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}],
                                                          "restartPolicy": "Never"}}}})
    _, found = await _until(lambda: http.get(pods, labelSelector="job-name=once"), lambda r: len(r[1]["items"]) == 1)
    pod = found["items"][0]
    pod["status"] = {"phase": "Succeeded"}
    await http.req("PUT", f"{pods}/{pod['metadata']['name']}/status", pod)
    _, job = await _until(lambda: http.get(jobs + "/once"), lambda r: (r[1].get("status") or {}).get("succeeded") == 1)
    assert job["status"]["succeeded"] == 1 and job["status"]["completionTime"]
    assert [(c["type"], c["status"]) for c in job["status"]["conditions"]] == [("Complete", "True")]


async def test_a_replicaset_whose_pods_are_refused_reports_it_and_retries(cluster_http: Http) -> None:
    # as kube-controller-manager 1.24 does, seen on the real cluster: the ServiceAccount admission
    # refuses the Pods of a template naming a ServiceAccount that does not exist yet; the ReplicaSet
    # shows a ReplicaFailure condition with the refusal and creates them once it exists
    http = cluster_http
    await http.post(NS, {"metadata": {"name": "later-sa"}})
    body = _deployment(1)
    body["spec"]["template"]["spec"]["serviceAccountName"] = "later"
    code, _ = await http.post("/apis/apps/v1/namespaces/later-sa/deployments", body)
    assert code == 201
    rss, pods = "/apis/apps/v1/namespaces/later-sa/replicasets", f"{NS}/later-sa/pods"

    async def replicasets() -> list[dict[str, Any]]:
        return (await http.get(rss))[1]["items"]

    items = await _until(replicasets, lambda rs: bool(rs) and bool((rs[0].get("status") or {}).get("conditions")))
    rs = items[0]
    assert rs["status"]["conditions"] == [{
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
        "lastTransitionTime": rs["status"]["conditions"][0]["lastTransitionTime"],
        "message": f'pods "{rs["metadata"]["name"]}-" is forbidden: error looking up service account '
                   'later-sa/later: serviceaccount "later" not found'}]
    assert rs["status"]["replicas"] == 0 and (await http.get(pods))[1]["items"] == []
    code, _ = await http.post(f"{NS}/later-sa/serviceaccounts", {"metadata": {"name": "later"}})
    assert code == 201
    items = await _until(replicasets, lambda rs: rs[0]["status"].get("replicas") == 1
                         and "conditions" not in rs[0]["status"], within=5.0)
    assert items[0]["status"]["replicas"] == 1 and "conditions" not in items[0]["status"]
    assert len((await http.get(pods))[1]["items"]) == 1
