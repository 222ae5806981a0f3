"""DaemonSets, StatefulSets, CronJobs and Jobs: defaults, validation causes, immutable fields,
generation, status writes, warnings on their pod templates."""

from __future__ import annotations

from ..harness import Run
from .common import APPLY, MERGE, SMP, namespace, template


async def scenario_daemonsets(run: Run) -> None:
    ns = await namespace(run, "ds")
    base = f"/apis/apps/v1/namespaces/{ns}/daemonsets"
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d1", "labels": {"app": "d"}},
          "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template({"app": "d"})}}
    created = await run.req("create daemonset (defaults)", "POST", base, ds)
    await run.req("create daemonset again", "POST", base, ds)
    await run.req("create without selector", "POST", base,
                  {"metadata": {"name": "d2"}, "spec": {"template": template({"app": "d"})}})
    await run.req("create selector not matching template", "POST", base,
                  {"metadata": {"name": "d3"}, "spec": {"selector": {"matchLabels": {"app": "x"}},
                                                         "template": template({"app": "d"})}})
    await run.req("create invalid update strategy", "POST", base,
                  {"metadata": {"name": "d4"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                         "template": template({"app": "d"}),
                                                         "updateStrategy": {"type": "Sideways"}}})
    await run.req("create rollingUpdate with OnDelete", "POST", base,
                  {"metadata": {"name": "d5"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                         "template": template({"app": "d"}),
                                                         "updateStrategy": {"type": "OnDelete",
                                                                            "rollingUpdate": {"maxUnavailable": 2}}}})
    await run.req("create maxUnavailable 0 and maxSurge 0", "POST", base,
                  {"metadata": {"name": "d6"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                         "template": template({"app": "d"}),
                                                         "updateStrategy": {"rollingUpdate": {
                                                             "maxUnavailable": 0, "maxSurge": 0}}}})
    await run.req("create restartPolicy Never", "POST", base,
                  {"metadata": {"name": "d7"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                         "template": template({"app": "d"}, restartPolicy="Never")}})
    await run.req("change selector (immutable)", "PATCH", f"{base}/d1",
                  {"spec": {"selector": {"matchLabels": {"app": "d", "x": "y"}},
                            "template": {"metadata": {"labels": {"app": "d", "x": "y"}}}}}, ctype=MERGE)
    changed = await run.req("change image", "PATCH", f"{base}/d1",
                            {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}}},
                            ctype=SMP)
    run.fact("generation after template change", changed.obj.get("metadata", {}).get("generation"))
    same = await run.req("change labels only", "PATCH", f"{base}/d1", {"metadata": {"labels": {"extra": "1"}}},
                         ctype=MERGE)
    run.fact("generation unchanged by labels", same.obj["metadata"].get("generation") ==
             changed.obj["metadata"].get("generation"))
    await run.req("status write", "PATCH", f"{base}/d1/status",
                  {"status": {"currentNumberScheduled": 2, "desiredNumberScheduled": 3, "numberMisscheduled": 0,
                              "numberReady": 1}}, ctype=MERGE)
    await run.req("status write negative", "PATCH", f"{base}/d1/status",
                  {"status": {"numberReady": -1}}, ctype=MERGE)
    await run.req("scale is not a daemonset subresource", "GET", f"{base}/d1/scale")
    await run.req("apply daemonset", "PATCH", f"{base}/d8", {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d8"},
        "spec": {"selector": {"matchLabels": {"app": "e"}}, "template": template({"app": "e"}),
                 "minReadySeconds": 5}}, ctype=APPLY, query={"fieldManager": "ops"})
    await run.req("get created", "GET", f"{base}/{created.obj.get('metadata', {}).get('name', 'd1')}")
    await run.req("delete daemonset", "DELETE", f"{base}/d1")


async def scenario_statefulsets(run: Run) -> None:
    ns = await namespace(run, "sts")
    base = f"/apis/apps/v1/namespaces/{ns}/statefulsets"
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s1"},
           "spec": {"serviceName": "svc", "selector": {"matchLabels": {"app": "s"}}, "template": template({"app": "s"}),
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    await run.req("create statefulset (defaults)", "POST", base, sts)
    await run.req("create without serviceName", "POST", base,
                  {"metadata": {"name": "s2"}, "spec": {"selector": {"matchLabels": {"app": "s"}},
                                                         "template": template({"app": "s"})}})
    await run.req("create negative replicas", "POST", base,
                  {"metadata": {"name": "s3"}, "spec": {"replicas": -1, "serviceName": "x",
                                                         "selector": {"matchLabels": {"app": "s"}},
                                                         "template": template({"app": "s"})}})
    await run.req("create bad podManagementPolicy", "POST", base,
                  {"metadata": {"name": "s4"}, "spec": {"serviceName": "x", "podManagementPolicy": "Random",
                                                         "selector": {"matchLabels": {"app": "s"}},
                                                         "template": template({"app": "s"})}})
    await run.req("create partition on OnDelete", "POST", base,
                  {"metadata": {"name": "s5"}, "spec": {"serviceName": "x", "selector": {"matchLabels": {"app": "s"}},
                                                         "template": template({"app": "s"}),
                                                         "updateStrategy": {"type": "OnDelete",
                                                                            "rollingUpdate": {"partition": 1}}}})
    await run.req("create with retention policy", "POST", base,
                  {"metadata": {"name": "s6"}, "spec": {"serviceName": "x", "selector": {"matchLabels": {"app": "s"}},
                                                         "template": template({"app": "s"}),
                                                         "persistentVolumeClaimRetentionPolicy": {
                                                             "whenDeleted": "Delete"}}})
    await run.req("change serviceName (forbidden)", "PATCH", f"{base}/s1", {"spec": {"serviceName": "other"}},
                  ctype=MERGE)
    await run.req("change volumeClaimTemplates (forbidden)", "PATCH", f"{base}/s1",
                  {"spec": {"volumeClaimTemplates": []}}, ctype=MERGE)
    await run.req("scale up", "PATCH", f"{base}/s1", {"spec": {"replicas": 3}}, ctype=MERGE)
    await run.req("change updateStrategy", "PATCH", f"{base}/s1",
                  {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}}, ctype=MERGE)
    await run.req("read scale", "GET", f"{base}/s1/scale")
    await run.req("status write", "PUT", f"{base}/s1/status", await _with_status(run, f"{base}/s1", {
        "replicas": 3, "readyReplicas": 1, "currentReplicas": 3, "updatedReplicas": 1, "availableReplicas": 1}))
    await run.req("status write ready above replicas", "PATCH", f"{base}/s1/status",
                  {"status": {"readyReplicas": 5}}, ctype=MERGE)
    await run.req("delete statefulset", "DELETE", f"{base}/s1")


async def _with_status(run: Run, path: str, status: dict[str, object]) -> dict[str, object]:
    current = (await run.raw("GET", path)).obj
    current["status"] = status
    return current


async def scenario_cronjobs_and_jobs(run: Run) -> None:
    ns = await namespace(run, "cj")
    base = f"/apis/batch/v1/namespaces/{ns}/cronjobs"
    job_template = {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                                   "containers": [{"name": "c", "image": "busybox"}]}}}}
    await run.req("create cronjob (defaults)", "POST", base,
                  {"metadata": {"name": "c1"}, "spec": {"schedule": "*/5 * * * *", "jobTemplate": job_template}})
    await run.req("create invalid schedule", "POST", base,
                  {"metadata": {"name": "c2"}, "spec": {"schedule": "every minute", "jobTemplate": job_template}})
    await run.req("create TZ schedule (warning)", "POST", base,
                  {"metadata": {"name": "c3"}, "spec": {"schedule": "TZ=UTC 0 * * * *", "jobTemplate": job_template}})
    await run.req("create bad concurrencyPolicy", "POST", base,
                  {"metadata": {"name": "c4"}, "spec": {"schedule": "@hourly", "concurrencyPolicy": "Maybe",
                                                         "jobTemplate": job_template}})
    await run.req("create restartPolicy Always", "POST", base,
                  {"metadata": {"name": "c5"}, "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {
                      "spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "busybox"}]}}}}}})
    await run.req("create name too long", "POST", base,
                  {"metadata": {"name": "c" * 60}, "spec": {"schedule": "@daily", "jobTemplate": job_template}})
    await run.req("create negative history limit", "POST", base,
                  {"metadata": {"name": "c6"}, "spec": {"schedule": "@daily", "successfulJobsHistoryLimit": -1,
                                                         "jobTemplate": job_template}})
    await run.req("suspend", "PATCH", f"{base}/c1", {"spec": {"suspend": True}}, ctype=MERGE)
    await run.req("change schedule", "PATCH", f"{base}/c1", {"spec": {"schedule": "0 0 * * *"}}, ctype=MERGE)
    await run.req("status lastScheduleTime", "PATCH", f"{base}/c1/status",
                  {"status": {"lastScheduleTime": "2024-01-02T03:04:05Z"}}, ctype=MERGE)
    await run.req("get cronjob", "GET", f"{base}/c1")
    jobs = f"/apis/batch/v1/namespaces/{ns}/jobs"
    await run.req("create job (defaults)", "POST", jobs, {"metadata": {"name": "j1"}, **job_template})
    await run.req("create job restartPolicy Always", "POST", jobs, {"metadata": {"name": "j2"}, "spec": {"template": {
        "spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "busybox"}]}}}})
    await run.req("create job negative parallelism", "POST", jobs, {"metadata": {"name": "j3"}, "spec": {
        "parallelism": -1, **job_template["spec"]}})
    await run.req("create indexed job without completions", "POST", jobs, {"metadata": {"name": "j4"}, "spec": {
        "completionMode": "Indexed", **job_template["spec"]}})
    # the message prints the whole Go struct, pointers included: compared for presence only
    await run.req("change job template (immutable)", "PATCH", f"{jobs}/j1", {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:2"}]}}}}, ctype=SMP, soft=("message",))
    await run.req("change job parallelism", "PATCH", f"{jobs}/j1", {"spec": {"parallelism": 3}}, ctype=MERGE)
    await run.req("delete job (orphans by default)", "DELETE", f"{jobs}/j1")


async def scenario_deployments(run: Run) -> None:
    ns = await namespace(run, "dep")
    base = f"/apis/apps/v1/namespaces/{ns}/deployments"

    def dep(name: str, **spec: object) -> dict[str, object]:
        return {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                      "template": template({"app": "d"}), **spec}}

    await run.req("create deployment (defaults)", "POST", base, dep("d1"))
    await run.req("create bad strategy type", "POST", base, dep("d2", strategy={"type": "Sideways"}))
    await run.req("create Recreate with rollingUpdate", "POST", base,
                  dep("d3", strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}))
    await run.req("create maxUnavailable and maxSurge 0", "POST", base,
                  dep("d4", strategy={"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}}))
    await run.req("create maxUnavailable over 100%", "POST", base,
                  dep("d5", strategy={"rollingUpdate": {"maxUnavailable": "120%"}}))
    await run.req("create maxSurge not a percent", "POST", base, dep("d6", strategy={"rollingUpdate": {"maxSurge": "x"}}))
    await run.req("create empty selector", "POST", base,
                  {"metadata": {"name": "d7"}, "spec": {"selector": {}, "template": template({"app": "d"})}})
    await run.req("create bad selector operator", "POST", base,
                  {"metadata": {"name": "d8"}, "spec": {"selector": {"matchExpressions": [
                      {"key": "app", "operator": "Like", "values": ["d"]}]}, "template": template({"app": "d"})}})
    await run.req("create progressDeadline below minReady", "POST", base,
                  dep("d9", minReadySeconds=30, progressDeadlineSeconds=10))
    await run.req("create invalid template label", "POST", base,
                  {"metadata": {"name": "d10"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                          "template": template({"app": "d", "b@d": "x"})}})
    await run.req("create container without image", "POST", base,
                  {"metadata": {"name": "d11"}, "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                      "metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c"}]}}}})
    await run.req("create restartPolicy OnFailure", "POST", base,
                  dep("d12", template=template({"app": "d"}, restartPolicy="OnFailure")))
    await run.req("annotation change keeps the generation", "PATCH", f"{base}/d1",
                  {"metadata": {"annotations": {"note": "x"}}}, ctype=MERGE)
    await run.req("paused", "PATCH", f"{base}/d1", {"spec": {"paused": True}}, ctype=MERGE)
    await run.req("selector change (immutable)", "PATCH", f"{base}/d1",
                  {"spec": {"selector": {"matchLabels": {"app": "e"}}, "template": {"metadata": {"labels": {
                      "app": "e"}}}}}, ctype=MERGE)
    await run.req("status available above ready", "PATCH", f"{base}/d1/status",
                  {"status": {"replicas": 2, "readyReplicas": 1, "availableReplicas": 2}}, ctype=MERGE)
    await run.req("scale through /scale", "PATCH", f"{base}/d1/scale", {"spec": {"replicas": 4}}, ctype=MERGE)
    await run.req("get deployment", "GET", f"{base}/d1")


async def scenario_replicasets(run: Run) -> None:
    ns = await namespace(run, "rs")
    base = f"/apis/apps/v1/namespaces/{ns}/replicasets"
    await run.req("create replicaset (defaults)", "POST", base,
                  {"metadata": {"name": "r1"}, "spec": {"selector": {"matchLabels": {"app": "r"}},
                                                         "template": template({"app": "r"})}})
    await run.req("create without selector", "POST", base,
                  {"metadata": {"name": "r2"}, "spec": {"template": template({"app": "r"})}})
    await run.req("create selector not matching", "POST", base,
                  {"metadata": {"name": "r3"}, "spec": {"selector": {"matchLabels": {"app": "x"}},
                                                         "template": template({"app": "r"})}})
    await run.req("create negative minReadySeconds", "POST", base,
                  {"metadata": {"name": "r4"}, "spec": {"minReadySeconds": -1, "selector": {"matchLabels": {"app": "r"}},
                                                         "template": template({"app": "r"})}})
    await run.req("change template (allowed)", "PATCH", f"{base}/r1", {"spec": {"template": {"metadata": {
        "labels": {"extra": "1"}}}}}, ctype=SMP)
    await run.req("status fullyLabeled above replicas", "PATCH", f"{base}/r1/status",
                  {"status": {"replicas": 1, "fullyLabeledReplicas": 2}}, ctype=MERGE)
    await run.req("status write", "PATCH", f"{base}/r1/status",
                  {"status": {"replicas": 1, "fullyLabeledReplicas": 1, "readyReplicas": 1}}, ctype=MERGE)
    await run.req("read scale", "GET", f"{base}/r1/scale")
    await run.req("delete replicaset", "DELETE", f"{base}/r1")


async def scenario_jobs_more(run: Run) -> None:
    ns = await namespace(run, "job")
    base = f"/apis/batch/v1/namespaces/{ns}/jobs"
    spec = {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}
    await run.req("create suspended job", "POST", base, {"metadata": {"name": "j1"}, "spec": {"suspend": True, **spec}})
    await run.req("suspended: node selector may change", "PATCH", f"{base}/j1", {"spec": {"template": {"spec": {
        "nodeSelector": {"zone": "a"}}}}}, ctype=SMP)
    await run.req("create indexed job", "POST", base,
                  {"metadata": {"name": "j2"}, "spec": {"completionMode": "Indexed", "completions": 3, **spec}})
    await run.req("change completions (immutable)", "PATCH", f"{base}/j2", {"spec": {"completions": 4}}, ctype=MERGE)
    await run.req("change completionMode (immutable)", "PATCH", f"{base}/j2",
                  {"spec": {"completionMode": "NonIndexed"}}, ctype=MERGE)
    await run.req("create manual selector not matching", "POST", base, {"metadata": {"name": "j3"}, "spec": {
        "manualSelector": True, "selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "c"}}, **spec["template"]}}})
    await run.req("create negative backoffLimit", "POST", base,
                  {"metadata": {"name": "j4"}, "spec": {"backoffLimit": -1, **spec}})
    await run.req("create bad completionMode", "POST", base,
                  {"metadata": {"name": "j5"}, "spec": {"completionMode": "Sometimes", **spec}})
    await run.req("status negative", "PATCH", f"{base}/j2/status", {"status": {"active": -1}}, ctype=MERGE)
    await run.req("delete in the foreground (no warning)", "DELETE", f"{base}/j2",
                  {"propagationPolicy": "Foreground"})
    await run.req("delete orphaning explicitly (no warning)", "DELETE", f"{base}/j1", {"propagationPolicy": "Orphan"})
