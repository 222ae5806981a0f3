"""CronJob: the kubebuilder book's CronJob controller (book.kubebuilder.io, "Implementing a controller").

    apiVersion: examples.kubeloop.dev/v1
    kind: CronJob
    metadata: {name: backup, namespace: demo}
    spec:
      schedule: "0 * * * *"               # every hour (schedule.py: 5 fields, names, @hourly, ...)
      concurrencyPolicy: Forbid           # Allow (default) | Forbid | Replace
      startingDeadlineSeconds: 600        # a run missed by more than this is skipped
      successfulJobsHistoryLimit: 3       # finished Jobs kept (default 3 and 1)
      failedJobsHistoryLimit: 1
      jobTemplate: {spec: {template: {spec: {restartPolicy: Never,
                    containers: [{name: backup, image: busybox, command: [sh, -c, "echo backup"]}]}}}}

Each reconcile does what the book's does: sort the Jobs it owns into active, succeeded and failed;
write ``status.active`` and ``status.lastScheduleTime``; delete the finished Jobs beyond the history
limits; unless suspended, start the latest missed run (if concurrencyPolicy allows); and ask to run
again at the next scheduled time. A Job is named after its scheduled time (``backup-1767229200``),
so a reconcile that runs twice for one slot applies the same Job twice: no duplicate.

The time is ``ctx.now()``, never ``datetime.now()``: the tests run a week of schedule in a second
on `kubeloop.testing.VirtualClock`. The CRD is derived from the `CronJob` model: ``kubeloop
manifests examples/cronjob/controller.py`` prints it with the RBAC rules and a Deployment; run
the operator with ``kubeloop run examples/cronjob/controller.py``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from kubeloop import Context, Controller, Manager, Request, Result, TerminalError
from kubeloop.client import NotFound
from kubeloop.resources import (
    CustomResource,
    Model,
    PrinterColumn,
    Time,
    format_time,
    is_condition_true,
    object_reference,
    parse_time,
)

from .schedule import Schedule, ScheduleError

JOB = "batch/v1/Job"
SCHEDULED_AT = "examples.kubeloop.dev/scheduled-at"  # annotation: the run a Job was started for
MAX_MISSED = 100  # as the book: more missed runs than this means a clock problem, not a schedule


class CronJobSpec(Model):
    schedule: str = Field(min_length=1, description="A cron line: minute hour day-of-month month day-of-week.")
    starting_deadline_seconds: int | None = Field(None, ge=0)
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] = "Allow"
    suspend: bool = False
    job_template: dict[str, Any]  # kept as written (x-kubernetes-preserve-unknown-fields)
    successful_jobs_history_limit: int = Field(3, ge=0)
    failed_jobs_history_limit: int = Field(1, ge=0)


class CronJobStatus(Model):
    active: list[dict[str, str]] = []
    last_schedule_time: Time | None = None


class CronJob(CustomResource, group="examples.kubeloop.dev", version="v1",
              printer_columns=[PrinterColumn("Schedule", ".spec.schedule", "string"),
                               PrinterColumn("Last", ".status.lastScheduleTime", "date")]):
    """Runs a Job on a cron schedule."""

    spec: CronJobSpec
    status: CronJobStatus | None = None


def scheduled_time(job: Mapping[str, Any]) -> datetime | None:
    at = (job["metadata"].get("annotations") or {}).get(SCHEDULED_AT)
    return parse_time(at) if at else None


def runs(cron: CronJob, last: datetime | None, now: datetime) -> tuple[datetime | None, datetime]:
    """(the latest run missed since ``last`` or the creation, or None; the next run after ``now``).

    A bad schedule or too many missed runs is a `TerminalError`: retrying cannot help, a new spec can.
    """
    spec = cron.spec
    try:
        schedule = Schedule(spec.schedule)
    except ScheduleError as exc:
        raise TerminalError(str(exc)) from None
    earliest = last or cron.metadata.creation_timestamp or now
    if spec.starting_deadline_seconds is not None:  # runs older than the deadline are not started
        earliest = max(earliest, now - timedelta(seconds=spec.starting_deadline_seconds))
    missed, t = None, schedule.next_after(earliest)
    for _ in range(MAX_MISSED + 1):
        if t > now:
            return missed, schedule.next_after(now)
        missed, t = t, schedule.next_after(t)
    raise TerminalError(f"more than {MAX_MISSED} missed runs: set or lower startingDeadlineSeconds, or check the clock")


async def delete(ctx: Context, jobs: list[Any]) -> None:
    for job in jobs:
        with contextlib.suppress(NotFound):  # already gone: fine
            await ctx.client.delete(JOB, job["metadata"]["name"], namespace=ctx.request.namespace,
                                    propagation_policy="Background")


async def reconcile(req: Request, ctx: Context) -> Result | None:
    obj = ctx.get()
    if obj is None:
        return None  # deleted: its Jobs are garbage-collected through their ownerReferences
    cron, now = CronJob.from_object(obj), ctx.now()

    # 1. the Jobs it owns, by state, oldest first; the status they make
    jobs = sorted(ctx.owned(JOB), key=lambda j: scheduled_time(j) or now)
    finished: dict[str, list[Any]] = {"Complete": [], "Failed": []}
    active: list[Any] = []
    for job in jobs:
        state = next((c for c in finished if is_condition_true(job.get("status"), c)), None)
        (finished[state] if state else active).append(job)
    last = max(filter(None, [*map(scheduled_time, jobs), cron.status and cron.status.last_schedule_time]),
               default=None)
    status: dict[str, Any] = {"active": [object_reference(j, resource_version=False) for j in active]}
    if last is not None:
        status["lastScheduleTime"] = format_time(last)
    await ctx.patch_status(status)

    # 2. history limits: the oldest finished Jobs go
    spec = cron.spec
    await delete(ctx, finished["Complete"][:max(0, len(finished["Complete"]) - spec.successful_jobs_history_limit)])
    await delete(ctx, finished["Failed"][:max(0, len(finished["Failed"]) - spec.failed_jobs_history_limit)])

    # 3. the run that is due, if any
    if spec.suspend:
        return None
    missed, next_run = runs(cron, last, now)
    again = Result(requeue_after=(next_run - now).total_seconds())
    if missed is None:
        return again
    if active and spec.concurrency_policy == "Forbid":
        ctx.log.info("run of %s skipped: a Job is still active (concurrencyPolicy Forbid)", format_time(missed))
        return again
    if spec.concurrency_policy == "Replace":
        await delete(ctx, active)
    template = spec.job_template
    meta = template.get("metadata") or {}
    await ctx.apply({"apiVersion": "batch/v1", "kind": "Job",
                     "metadata": {"name": f"{req.name}-{int(missed.timestamp())}", "labels": meta.get("labels", {}),
                                  "annotations": {**meta.get("annotations", {}), SCHEDULED_AT: format_time(missed)}},
                     "spec": template["spec"]}, owner=obj)
    ctx.log.info("started the run of %s", format_time(missed))
    return again


def make_controller(name: str = "cronjob") -> Controller:
    """A fresh CronJob controller. Jobs are cached whole: their status says if they finished."""
    return Controller(name, for_=CronJob, reconcile=reconcile).owns(JOB, metadata_only=False)


def setup(manager: Manager) -> None:
    """``kubeloop run`` calls this with the Manager."""
    manager.add(make_controller())
