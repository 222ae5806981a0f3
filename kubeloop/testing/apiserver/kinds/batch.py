"""batch/v1 Job and CronJob."""

from __future__ import annotations

from .. import apiwarnings
from ..errors import bad_request
from ..govalues import TYPED, equal
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from . import podspec
from .apps import WorkloadStrategy, validate_selector_and_template
from .core import FieldLabelStrategy, count_field
from .schema import (
    ANY,
    BOOL,
    INT32,
    INT64,
    LABEL_SELECTOR,
    OBJECT_META,
    OMIT_INT32,
    POD_TEMPLATE_SPEC,
    STRING,
    TIME,
    list_of,
    struct,
    top_level,
)

JOB_RESTART = ("OnFailure", "Never")
JOB_SPEC = struct(
    "JobSpec", open=True, parallelism=INT32, completions=INT32, activeDeadlineSeconds=INT64, backoffLimit=INT32,
    selector=LABEL_SELECTOR, manualSelector=BOOL, template=POD_TEMPLATE_SPEC, ttlSecondsAfterFinished=INT32,
    completionMode=STRING, suspend=BOOL,
)
JOB_STATUS = struct(
    "JobStatus", open=True, conditions=list_of(ANY), startTime=TIME, completionTime=TIME, active=OMIT_INT32,
    succeeded=OMIT_INT32, failed=OMIT_INT32, completedIndexes=STRING, ready=INT32,
)
CRON_JOB_SPEC = struct(
    "CronJobSpec", schedule=STRING, timeZone=STRING, startingDeadlineSeconds=INT64, concurrencyPolicy=STRING,
    suspend=BOOL, jobTemplate=struct("JobTemplateSpec", metadata=OBJECT_META, spec=JOB_SPEC),
    successfulJobsHistoryLimit=INT32, failedJobsHistoryLimit=INT32,
)


def default_job_spec(spec: Obj) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("template", {})
    podspec.default_pod_template(spec["template"])


class JobStrategy(WorkloadStrategy, FieldLabelStrategy):
    schema = top_level("Job", spec=JOB_SPEC, status=JOB_STATUS)
    kind_word = "job"
    status_keeps_labels = False
    orphans_by_default = True  # batch/v1 keeps the pre-garbage-collector default
    selectable_fields = {"status.successful": count_field("status.succeeded")}

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        default_job_spec(spec)
        labels = (spec["template"].get("metadata") or {}).get("labels")
        meta = obj["metadata"]
        if labels and not meta.get("labels"):
            meta["labels"] = dict(labels)

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        # generateSelector: the real server does this during create validation, once uid and name exist
        spec = obj.setdefault("spec", {})
        meta = obj.get("metadata") or {}
        if not spec.get("manualSelector"):
            uid = meta.get("uid") or ""
            tmeta = spec.setdefault("template", {}).setdefault("metadata", {})
            labels = tmeta.setdefault("labels", {})
            labels.setdefault("controller-uid", uid)
            labels.setdefault("job-name", meta.get("name") or "")
            if spec.get("selector") is None:
                spec["selector"] = {"matchLabels": {"controller-uid": uid}}
            if not meta.get("labels") and isinstance(obj.get("metadata"), dict):
                # the stored object is defaulted again when read back from etcd: the Job's own labels
                # default to its template's, now with the generated ones
                obj["metadata"]["labels"] = dict(labels)
        return super().validate(info, obj)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        for key in ("parallelism", "completions", "backoffLimit"):
            value = spec.get(key)
            if isinstance(value, int) and value < 0:
                causes.append(m.invalid_cause(f"spec.{key}", value, "must be greater than or equal to 0"))
        ads = spec.get("activeDeadlineSeconds")
        if isinstance(ads, int) and ads <= 0:
            causes.append(m.invalid_cause("spec.activeDeadlineSeconds", ads, "must be greater than 0"))
        mode = spec.get("completionMode")
        if mode not in ("NonIndexed", "Indexed"):
            causes.append(m.not_supported_cause("spec.completionMode", mode or "", ("NonIndexed", "Indexed")))
        elif mode == "Indexed" and spec.get("completions") is None:
            causes.append(m.required_cause("spec.completions",
                                           "when completion mode is Indexed"))
        causes += validate_selector_and_template(spec, "job", podspec.RESTART_POLICIES)
        policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
        if policy not in JOB_RESTART:  # upstream words it as Required, whatever the value
            causes.append(m.required_cause("spec.template.spec.restartPolicy",
                                           'valid values: "OnFailure", "Never"'))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = super().validate_update_causes(info, new, old)
        ns, os_ = new.get("spec") or {}, old.get("spec") or {}
        for key in ("completions", "completionMode"):
            if not equal(ns.get(key), os_.get(key), TYPED):
                causes.append(m.invalid_cause(f"spec.{key}", ns.get(key), "field is immutable"))
        if not os_.get("suspend") and not equal(ns.get("template"), os_.get("template"), TYPED):
            causes.append(m.invalid_cause("spec.template", ns.get("template"), "field is immutable"))
        return causes

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`validateJobStatus`: the pod counts are non-negative."""
        status = obj.get("status") or {}
        causes: list[Cause] = []
        for key in ("active", "succeeded", "failed", "ready"):
            value = status.get(key)
            if isinstance(value, int) and value < 0:
                causes.append(m.invalid_cause(f"status.{key}", value, "must be greater than or equal to 0"))
        return causes

    def check_field_label(self, info: ServedResource, label: str) -> None:
        if label not in self.field_labels(info):
            raise bad_request(f"field label {label!r} not supported for batchv1.Job".replace("'", '"'))



class CronJobStrategy(WorkloadStrategy):
    schema = top_level("CronJob", spec=CRON_JOB_SPEC, status=ANY)
    kind_word = "cronjob"
    status_keeps_labels = False
    pod_template_path = ("spec", "jobTemplate", "spec", "template")

    def warnings_on_create(self, info: ServedResource, obj: Obj) -> list[str]:
        return super().warnings_on_create(info, obj) + apiwarnings.cron_schedule_warnings(obj.get("spec") or {})

    def warnings_on_update(self, info: ServedResource, new: Obj, old: Obj) -> list[str]:
        return super().warnings_on_update(info, new, old) + apiwarnings.cron_schedule_warnings(new.get("spec") or {})

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        jt = spec.setdefault("jobTemplate", {})
        jt.setdefault("metadata", {}).setdefault("creationTimestamp", None)
        jspec = jt.setdefault("spec", {})
        jspec.setdefault("template", {})
        podspec.default_pod_template(jspec["template"])

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        schedule = spec.get("schedule") or ""
        if not schedule:
            causes.append(m.required_cause("spec.schedule"))
        elif len(schedule.split()) not in (5, 6) and not schedule.startswith("@"):
            causes.append(m.invalid_cause("spec.schedule", schedule,
                                          f"expected exactly 5 fields, found {len(schedule.split())}: {schedule}"))
        cp = spec.get("concurrencyPolicy")
        if cp not in ("Allow", "Forbid", "Replace"):
            causes.append(m.not_supported_cause("spec.concurrencyPolicy", cp or "", ("Allow", "Forbid", "Replace")))
        tspec = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        for c in podspec.validate_pod_spec(tspec.get("spec"), "spec.jobTemplate.spec.template.spec", JOB_RESTART):
            causes.append(c)
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + self.validate_spec(info, new)
