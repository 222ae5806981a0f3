"""batch/v1 Job and CronJob."""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.meta import is_dns1123_label

from .. import apiwarnings
from ..errors import bad_request
from ..govalues import TYPED, equal
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import cron, podspec
from . import meta as m
from .apps import LABEL_SELECTOR_GO, WorkloadStrategy, selector_empty, selector_matches, selector_mismatch
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
        """`generateSelector` (the real server does it during create validation, once uid and name
        exist), then `ValidateJob`."""
        spec = obj.setdefault("spec", {})
        meta = obj.get("metadata") or {}
        if not spec.get("manualSelector"):
            uid = meta.get("uid") or ""
            tmeta = spec.setdefault("template", {}).setdefault("metadata", {})
            labels = tmeta.get("labels")
            if not isinstance(labels, dict):
                labels = tmeta["labels"] = {}
            labels.setdefault("job-name", meta.get("name") or "")
            labels.setdefault("controller-uid", uid)
            selector = spec.get("selector")
            if not isinstance(selector, dict):
                selector = spec["selector"] = {}
            match = selector.get("matchLabels")
            if not isinstance(match, dict):
                match = selector["matchLabels"] = {}
            match.setdefault("controller-uid", uid)
            if not meta.get("labels") and isinstance(obj.get("metadata"), dict):
                # the stored object is defaulted again when read back from etcd: the Job's own labels
                # default to its template's, now with the generated ones
                obj["metadata"]["labels"] = dict(labels)
        return self._validate_job(info, obj)

    def _validate_job(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateJob`: ObjectMeta, the generated selector, the spec."""
        causes = super().validate(info, obj)
        spec = obj.get("spec") or {}
        meta = obj.get("metadata") or {}
        selector = spec.get("selector")
        if not spec.get("manualSelector") and selector is not None:
            if not meta.get("uid"):
                causes.append(m.required_cause("metadata.uid"))
            tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            expected = {"controller-uid": meta.get("uid") or "", "job-name": meta.get("name") or ""}
            for key, value in expected.items():
                causes += _has_label(tlabels, key, value)
            if m.label_selector_parses(selector) and not selector_matches(selector, expected):
                causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, selector, "`selector` not auto-generated"))
        causes += _validate_job_spec_with_selector(spec)
        if spec.get("completionMode") == "Indexed" and int(spec.get("completions") or 0) > 0:
            hostname = f"{meta.get('name') or ''}-{int(spec['completions']) - 1}"
            if is_dns1123_label(hostname):
                causes.append(m.invalid_cause("metadata.name", meta.get("name") or "",
                                              f"will not able to create pod with invalid DNS label: {hostname}"))
        return causes

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return []  # all of it is in `validate` (ValidateJob)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """`ValidateJob` then `ValidateJobUpdate`."""
        causes = self._validate_job(info, new)
        causes += m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        ns, os_ = new.get("spec") or {}, old.get("spec") or {}
        causes += _validate_job_spec_with_selector(ns)
        if not equal(ns.get("completions"), os_.get("completions"), TYPED):
            causes.append(m.invalid_typed("spec.completions", "*int32", ns.get("completions"), "field is immutable"))
        if not equal(ns.get("selector"), os_.get("selector"), TYPED):
            causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, ns.get("selector"), "field is immutable"))
        template, old_template = ns.get("template"), os_.get("template")
        if os_.get("suspend") and not (old.get("status") or {}).get("startTime"):
            # JobMutableNodeSchedulingDirectives: a suspended Job that never started may change these
            old_template = _with_scheduling_of(old_template, template)
        if not equal(template, old_template, TYPED):
            causes.append(m.invalid_typed("spec.template", _POD_TEMPLATE_GO, template, "field is immutable"))
        if not equal(ns.get("completionMode"), os_.get("completionMode"), TYPED):
            causes.append(m.invalid_typed("spec.completionMode", _COMPLETION_MODE_GO, ns.get("completionMode"),
                                          "field is immutable"))
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

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        (obj.get("spec") or {}).pop("timeZone", None)  # CronJobTimeZone is alpha in 1.24

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        if (old.get("spec") or {}).get("timeZone") is None:
            (new.get("spec") or {}).pop("timeZone", None)

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateCronJobCreate`: a name the controller can suffix (52 characters at most)."""
        causes = super().validate(info, obj) + _validate_cron_job_spec(obj.get("spec") or {}, None)
        name = (obj.get("metadata") or {}).get("name") or ""
        if len(name) > 52:
            causes.append(m.invalid_cause("metadata.name", name, "must be no more than 52 characters"))
        return causes

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return []  # all of it is in `validate` (ValidateCronJobCreate)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """`ValidateCronJobUpdate`."""
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + _validate_cron_job_spec(new.get("spec") or {}, old.get("spec") or {})


_POD_TEMPLATE_GO = "*k8s.io/kubernetes/pkg/apis/core.PodTemplateSpec"
_COMPLETION_MODE_GO = "*k8s.io/kubernetes/pkg/apis/batch.CompletionMode"
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")


def _has_label(labels: Obj, key: str, value: str) -> list[Cause]:
    """`ValidateHasLabel` on the pod template's metadata."""
    fld = "spec.template.metadata"
    if key not in labels:
        return [m.cause_raw("FieldValueRequired", fld, f"Required value: must be '{key}: {value}'")]
    if labels[key] != value:
        return [m.invalid_typed(fld, "map[string]string", labels, f"must be '{key}: {value}'")]
    return []


def _with_scheduling_of(old_template: Any, template: Any) -> Any:
    """The old template with the new one's node affinity, node selector, tolerations, labels and
    annotations (what `validatePodTemplateUpdate` lets a suspended Job change)."""
    if not isinstance(old_template, dict) or not isinstance(template, dict):
        return old_template
    out = copy.deepcopy(old_template)
    ospec, nspec = out.setdefault("spec", {}), template.get("spec") or {}
    affinity, old_affinity = nspec.get("affinity"), ospec.get("affinity")
    if affinity is None and old_affinity is not None:
        rest = {k: v for k, v in old_affinity.items() if k != "nodeAffinity" and v is not None}
        ospec["affinity"] = rest or None
        if not rest:
            ospec.pop("affinity")
    elif affinity is not None:
        merged = dict(old_affinity or {})
        merged["nodeAffinity"] = affinity.get("nodeAffinity")
        ospec["affinity"] = {k: v for k, v in merged.items() if v is not None}
    for key in ("nodeSelector", "tolerations"):
        if key in nspec:
            ospec[key] = nspec[key]
        else:
            ospec.pop(key, None)
    ometa, nmeta = out.setdefault("metadata", {}), template.get("metadata") or {}
    for key in ("labels", "annotations"):
        if key in nmeta:
            ometa[key] = nmeta[key]
        else:
            ometa.pop(key, None)
    return out


def validate_job_spec(spec: Obj, fld: str) -> list[Cause]:
    """`validateJobSpec` (what a Job and a CronJob's job template share)."""
    causes: list[Cause] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            causes.append(m.invalid_cause(f"{fld}.{key}", value, "must be greater than or equal to 0"))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            causes.append(m.not_supported_typed(f"{fld}.completionMode", _COMPLETION_MODE_GO, mode,
                                                ("NonIndexed", "Indexed")))
        if mode == "Indexed":
            if spec.get("completions") is None:
                causes.append(m.required_cause(f"{fld}.completions", "when completion mode is Indexed"))
            parallelism = spec.get("parallelism")
            if isinstance(parallelism, int) and parallelism > 100_000:
                causes.append(m.invalid_cause(f"{fld}.parallelism", parallelism,
                                              "must be less than or equal to 100000 when completion mode is Indexed"))
    template = spec.get("template") or {}
    causes += podspec.validate_pod_template(template, f"{fld}.template")
    policy = (template.get("spec") or {}).get("restartPolicy") or ""
    if policy in ("Always", ""):
        causes.append(m.required_cause(f"{fld}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
    elif policy not in JOB_RESTART:
        causes.append(m.not_supported_cause(f"{fld}.template.spec.restartPolicy", policy, JOB_RESTART))
    return causes


def _validate_job_spec_with_selector(spec: Obj) -> list[Cause]:
    """`ValidateJobSpec`: the shared rules, a selector, and the template matching it."""
    causes = validate_job_spec(spec, "spec")
    selector = spec.get("selector")
    if selector is None:
        causes.append(m.required_cause("spec.selector"))
    else:
        causes += m.validate_label_selector(selector, "spec.selector")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if m.label_selector_parses(selector) and (selector is None or (
            not selector_empty(selector) and not selector_matches(selector, labels))):
        causes.append(selector_mismatch(spec))
    return causes


def _validate_cron_job_spec(spec: Obj, old: Obj | None) -> list[Cause]:
    """`validateCronJobSpec`."""
    causes: list[Cause] = []
    schedule = spec.get("schedule") or ""
    time_zone = spec.get("timeZone")
    if not schedule:
        causes.append(m.required_cause("spec.schedule"))
    else:
        try:
            cron.parse_standard(schedule)
        except cron.CronError as e:
            causes.append(m.invalid_cause("spec.schedule", schedule, str(e)))
        if "TZ" in schedule and time_zone is not None:
            causes.append(m.invalid_cause("spec.schedule", schedule,
                                          "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    deadline = spec.get("startingDeadlineSeconds")
    if isinstance(deadline, int) and deadline < 0:
        causes.append(m.invalid_cause("spec.startingDeadlineSeconds", deadline, "must be greater than or equal to 0"))
    if old is None or old.get("timeZone") != time_zone:
        causes += _validate_time_zone(time_zone)
    policy = spec.get("concurrencyPolicy") or ""
    if not policy:
        causes.append(m.required_cause("spec.concurrencyPolicy"))
    elif policy not in CONCURRENCY_POLICIES:
        causes.append(m.not_supported_cause("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    jspec = (spec.get("jobTemplate") or {}).get("spec") or {}
    causes += validate_job_spec(jspec, "spec.jobTemplate.spec")
    if jspec.get("selector") is not None:
        causes.append(m.invalid_typed("spec.jobTemplate.spec.selector", LABEL_SELECTOR_GO, jspec["selector"],
                                      "`selector` will be auto-generated"))
    if jspec.get("manualSelector"):
        causes.append(m.not_supported_typed("spec.jobTemplate.spec.manualSelector", "*bool", True, ("nil", "false")))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            causes.append(m.invalid_cause(f"spec.{key}", value, "must be greater than or equal to 0"))
    return causes


def _validate_time_zone(time_zone: Any) -> list[Cause]:
    if time_zone is None:
        return []
    if time_zone == "":
        return [m.invalid_typed("spec.timeZone", "*string", "", "timeZone must be nil or non-empty string")]
    causes: list[Cause] = []
    if str(time_zone).lower() == "local":
        causes.append(m.invalid_typed("spec.timeZone", "*string", time_zone,
                                      "timeZone must be an explicit time zone as defined in "
                                      "https://www.iana.org/time-zones"))
    problem = cron.time_zone_error(str(time_zone))
    if problem:
        causes.append(m.invalid_typed("spec.timeZone", "*string", time_zone, problem))
    return causes
