"""PeriodicJob: the kubebuilder book's CronJob controller, with an interval instead of a cron line.

    apiVersion: examples.kubeloop.dev/v1
    kind: PeriodicJob
    metadata: {name: backup, namespace: demo}
    spec:
      intervalSeconds: 3600
      jobTemplate: {spec: {template: {spec: {restartPolicy: Never,
                    containers: [{name: backup, image: busybox, command: [sh, -c, "echo backup"]}]}}}}

Each reconcile does what the book's does: list the children (Jobs it owns), write the status from
them, then start a Job if one is due and ask to run again at the next due time.

The status is written *before* the new Job exists. It still reports that Job a moment later:
the watch event of a child the reconcile created reconciles its owner again, as in
controller-runtime (`Controller(suppress_own_writes=...)` explains the rule), instead of waiting
for the next run, an hour away.

Each Job is named after its scheduled time (``backup-1767225600``), so a reconcile that runs twice
for the same slot applies the same Job twice: no duplicate. Run with ``kubeloop run
examples/periodic_job/controller.py`` after ``kubectl apply -f examples/periodic_job/crd.yaml``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from examples.crds import install, load_crd
from kubeloop import Client, Context, Controller, Manager, Request, Result

GROUP = "examples.kubeloop.dev"
PERIODIC_JOB = f"{GROUP}/v1/PeriodicJob"
JOB = "batch/v1/Job"
SCHEDULED_AT = f"{GROUP}/scheduled-at"  # annotation: the slot (unix seconds) a Job was started for
CRD_FILE = Path(__file__).with_name("crd.yaml")


def outcome(job: Mapping[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` once the Job finished, else None (still active)."""
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return str(cond["type"])
    return None


def rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def job_for(parent: Mapping[str, Any], slot: int) -> dict[str, Any]:
    """The Job that runs ``parent``'s template for the time slot ``slot``."""
    template = parent["spec"]["jobTemplate"]
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"{parent['metadata']['name']}-{slot}",
                         "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                         "annotations": {SCHEDULED_AT: str(slot)}},
            "spec": template["spec"]}


async def reconcile(req: Request, ctx: Context) -> Result | None:
    parent = ctx.get()
    if parent is None:
        return None  # deleted: its Jobs are garbage-collected through their ownerReferences
    # 1. the children, and the status they make
    jobs = ctx.owned(JOB)
    outcomes = [outcome(j) for j in jobs]
    slots = [int(j["metadata"]["annotations"][SCHEDULED_AT]) for j in jobs
             if SCHEDULED_AT in (j["metadata"].get("annotations") or {})]
    last = max(slots, default=None)
    status: dict[str, Any] = {
        "active": sorted(j["metadata"]["name"] for j, o in zip(jobs, outcomes, strict=True) if o is None),
        "succeeded": outcomes.count("Complete"),
        "failed": outcomes.count("Failed"),
    }
    if last is not None:
        status["lastScheduleTime"] = rfc3339(last)
    await ctx.apply_status(status)

    # 2. a new child, if one is due
    spec = parent["spec"]
    every = int(spec["intervalSeconds"])
    now = time.time()
    if spec.get("suspend"):
        return None
    if last is not None and now < last + every:
        return Result(requeue_after=last + every - now)
    slot = int(now) if last is None else last + every * int((now - last) // every)  # the latest missed slot
    await ctx.apply(job_for(parent, slot), owner=parent)
    ctx.log.info("started job for %s", rfc3339(slot))
    return Result(requeue_after=slot + every - now)


def make_controller(name: str = "periodic-job") -> Controller:
    """A fresh PeriodicJob controller. Jobs are cached whole: the status reads theirs."""
    return (Controller(name, for_=PERIODIC_JOB, reconcile=reconcile)
            .owns(JOB, metadata_only=False))


def setup(manager: Manager) -> None:
    """``kubeloop run`` calls this with the Manager."""
    manager.add(make_controller())


def crd() -> dict[str, Any]:
    """The CustomResourceDefinition (crd.yaml)."""
    return load_crd(CRD_FILE)


async def install_crd(client: Client, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Create the CRD (if missing) and wait until the API serves PeriodicJobs."""
    await install(client, crd(), PERIODIC_JOB, timeout)
