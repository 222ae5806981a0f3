"""kube-controller-manager's workload controllers: Deployment -> ReplicaSet -> Pods, and Jobs -> Pods.

There is no scheduler and no kubelet (as on a control plane alone): Pods stay Pending without a
node, so Deployments never become Available and Jobs never complete, unless a test writes Pod
status itself (a Pod whose `Ready` condition is True counts as ready and available; a Pod in phase
`Succeeded` or `Failed` counts for its Job). The rules follow the real controllers
(pkg/controller/deployment, replicaset, job): the RollingUpdate arithmetic (maxSurge rounds up,
maxUnavailable down), the `pod-template-hash`, the revision and replicas annotations, the status
fields and conditions with their reasons. Not emulated: progress deadlines, proportional scaling of
several active ReplicaSets, `minReadySeconds`, indexed Jobs' completion indexes, pod failure policies.

Each controller syncs one object per job on the emulator's controller task (`Controllers._later`),
reading the store and writing through the registry as `kube-controller-manager`, like a client.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import orjson

from .errors import StatusError
from .govalues import TYPED, equal
from .objectmeta import now_rfc3339
from .shapes import Obj
from .storage import DELETED, Bucket, Commit, Key

if TYPE_CHECKING:
    from .controllers import Controllers
    from .resources import ServedResource


DEPLOY_BUCKET = "apps/deployments"
RS_BUCKET = "apps/replicasets"
JOB_BUCKET = "batch/jobs"
POD_BUCKET = "/pods"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
#: Deployment annotations not copied to its ReplicaSets (deployment/util.skipCopyAnnotation)
NOT_COPIED = {"kubectl.kubernetes.io/last-applied-configuration", REVISION, "deployment.kubernetes.io/revision-history",
              DESIRED, MAX}
MANAGER = "kube-controller-manager"
#: seconds before a controller whose Pod create was refused syncs again (the real ones requeue with
#: a rate-limited backoff from 5 ms; a refused create is usually waiting on something a user creates)
RETRY_AFTER = 1.0
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand: no vowels, no look-alikes


class Workloads:
    """Deployment, ReplicaSet and Job controllers; `changed` is fed every commit (cluster mode only)."""

    def __init__(self, controllers: Controllers) -> None:
        self.c = controllers
        self.registry = controllers.registry
        self.store = controllers.store
        self._queued: set[tuple[str, Key]] = set()

    # ---- event routing ---------------------------------------------------------------------
    def changed(self, bucket: Bucket, ch: Commit) -> None:
        name = bucket.name
        if name in (DEPLOY_BUCKET, RS_BUCKET, JOB_BUCKET) and ch.type != DELETED:
            self._queue(name, ch.key)
        if name in (RS_BUCKET, POD_BUCKET):  # a dependent changed: its controller syncs again
            for obj in (ch.new.obj, ch.old.obj if ch.old else None):
                ref = _controller_ref(obj) if obj is not None else None
                owner = self.c._by_uid.get(ref["uid"]) if ref else None
                if owner is not None and owner[0] in (DEPLOY_BUCKET, RS_BUCKET, JOB_BUCKET):
                    self._queue(*owner)

    def _requeue(self, bucket_name: str, key: Key) -> bool:
        """A scheduled job: sync `key` again (True: the job is done)."""
        self._queue(bucket_name, key)
        return True

    def _queue(self, bucket_name: str, key: Key) -> None:
        if (bucket_name, key) in self._queued:
            return
        self._queued.add((bucket_name, key))
        self.c._later(0, functools.partial(self._sync, bucket_name, key))

    def _sync(self, bucket_name: str, key: Key) -> bool:
        self._queued.discard((bucket_name, key))
        info = self._info(bucket_name)
        st = self.store.bucket(bucket_name).objects.get(key)
        if info is None or st is None or st.obj["metadata"].get("deletionTimestamp"):
            return True  # deletion is the garbage collector's
        obj = self.registry.view(info, st)
        {DEPLOY_BUCKET: self._sync_deployment, RS_BUCKET: self._sync_replicaset,
         JOB_BUCKET: self._sync_job}[bucket_name](info, obj)
        return True

    # ---- helpers ---------------------------------------------------------------------------
    def _info(self, bucket_name: str) -> ServedResource | None:
        group, _, resource = bucket_name.partition("/")
        version = {"": "v1", "apps": "v1", "batch": "v1"}[group]
        return self.registry.catalog.lookup(group, version, resource)

    def _owned(self, owner: Obj, bucket_name: str) -> list[Obj]:
        """The objects of `bucket_name` whose controller reference is `owner`, oldest first."""
        uid = owner["metadata"]["uid"]
        info = self._info(bucket_name)
        out: list[Obj] = []
        for ref in self.c._dependents.get(uid, ()):
            st = self.c._lookup(ref) if ref[0] == bucket_name else None
            if st is not None and info is not None and (_controller_ref(st.obj) or {}).get("uid") == uid:
                out.append(self.registry.view(info, st))
        out.sort(key=lambda o: (o["metadata"].get("creationTimestamp", ""), int(o["metadata"]["resourceVersion"])))
        return out

    def _update(self, bucket_name: str, obj: Obj, subresource: str = "") -> Obj | None:
        info = self._info(bucket_name)
        if info is None:
            return None
        meta = obj["metadata"]
        try:
            res = self.registry.update(info, meta.get("namespace", ""), meta["name"], obj, manager=MANAGER,
                                       dry_run=False, subresource=subresource)
        except StatusError:  # e.g. a conflict with a concurrent write: the next event syncs again
            return None
        return self.registry.view(info, res.stored)

    def _create_pod(self, owner: Obj, template: Obj, generate_name: str) -> StatusError | None:
        """Create one Pod of `owner`; the error if the server refused it (not when its namespace
        is terminating, which the real controllers ignore)."""
        info = self._info(POD_BUCKET)
        if info is None:
            return None
        tmeta = template.get("metadata") or {}
        meta: Obj = {"generateName": generate_name, "ownerReferences": [_ref_to(owner)]}
        for k in ("labels", "annotations", "finalizers"):
            if tmeta.get(k):
                meta[k] = _copy(tmeta[k])
        ns = owner["metadata"].get("namespace", "")
        try:
            self.registry.create(info, ns, {"metadata": meta, "spec": _copy(template.get("spec") or {})},
                                 manager=MANAGER, dry_run=False)
        except StatusError as e:
            causes = (e.details or {}).get("causes") or []
            if any(c.get("reason") == "NamespaceTerminating" for c in causes):
                return None
            return e
        return None

    def _scale_pods(self, owner: Obj, active: list[Obj], want: int,
                    bucket_name: str) -> tuple[list[Obj], StatusError | None]:
        """Create or delete pods of `owner` (from its spec.template; the least advanced go first)
        until `want` are active, as the ReplicaSet and Job controllers do: the active pods after,
        and the error that stopped a create (the owner is synced again in `RETRY_AFTER` seconds,
        as the real controllers requeue it; a ServiceAccount created meanwhile lets it through)."""
        failure: StatusError | None = None
        if len(active) < want:
            template = (owner.get("spec") or {}).get("template") or {}
            for _ in range(want - len(active)):
                failure = self._create_pod(owner, template, f"{owner['metadata']['name']}-")
                if failure is not None:  # the real controllers stop the batch at the first error
                    break
            if failure is not None:
                meta = owner["metadata"]
                key = (meta.get("namespace", ""), meta["name"])
                self.c._later(RETRY_AFTER, functools.partial(self._requeue, bucket_name, key))
        elif len(active) > want:
            for pod in sorted(active, key=_deletion_rank)[:len(active) - want]:
                self._delete(POD_BUCKET, pod)
        return [p for p in self._owned(owner, POD_BUCKET) if _active(p)], failure

    def _delete(self, bucket_name: str, obj: Obj) -> None:
        info = self._info(bucket_name)
        meta = obj["metadata"]
        if info is None:
            return
        try:
            self.registry.delete(info, meta.get("namespace", ""), meta["name"], {}, dry_run=False)
        except StatusError:
            pass

    # ---- ReplicaSets -------------------------------------------------------------------------
    def _sync_replicaset(self, info: ServedResource, rs: Obj) -> None:
        spec = rs.get("spec") or {}
        want = int(spec.get("replicas", 1))
        pods, failure = self._scale_pods(rs, [p for p in self._owned(rs, POD_BUCKET) if _active(p)], want, RS_BUCKET)
        tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        ready = sum(1 for p in pods if _pod_ready(p))
        status = _omit_zero({
            "replicas": len(pods),
            "fullyLabeledReplicas": sum(1 for p in pods if _has_labels(p, tlabels)),
            "readyReplicas": ready, "availableReplicas": ready,
            "observedGeneration": rs["metadata"].get("generation", 0)}, keep=("replicas",))
        conditions = _copy((rs.get("status") or {}).get("conditions") or [])
        held = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
        if failure is not None:  # `SetCondition`: kept as it is while status and reason stay
            if held is None or (held.get("status"), held.get("reason")) != ("True", "FailedCreate"):
                conditions = [c for c in conditions if c is not held]
                conditions.append({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": now_rfc3339(),
                                   "reason": "FailedCreate", "message": failure.message})
        elif held is not None:
            conditions = [c for c in conditions if c is not held]
        if conditions:
            status["conditions"] = conditions
        if status != rs.get("status"):
            self._update(RS_BUCKET, dict(rs, status=status), "status")

    # ---- Deployments ------------------------------------------------------------------------
    def _sync_deployment(self, info: ServedResource, d: Obj) -> None:
        spec = d.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        rss = self._owned(d, RS_BUCKET)
        template = spec.get("template") or {}
        new = next((rs for rs in rss if _same_template(rs, template)), None)
        olds = [rs for rs in rss if rs is not new]
        max_old_rev = max((_revision(rs) for rs in olds), default=0)
        surge, unavailable = _surge_and_unavailable(d, replicas)
        created = False
        if not spec.get("paused"):
            if new is None:
                new = self._create_replicaset(d, template, max_old_rev + 1, surge)
                created = new is not None
                if new is None:
                    return
            elif _revision(new) <= max_old_rev:  # a rollback to an older template: it is the newest again
                new = self._scale(d, new, int(new["spec"].get("replicas", 0)), surge, revision=max_old_rev + 1) or new
            if _strategy(d) == "Recreate":
                self._recreate(d, new, olds, replicas, surge)
            else:
                self._rolling(d, new, olds, replicas, surge, unavailable)
            self._cleanup(d, olds)
            # written with the status, through /status (no generation bump), as the real controller does
            d["metadata"].setdefault("annotations", {})[REVISION] = str(_revision(new))
            rss = self._owned(d, RS_BUCKET)
            new = next((rs for rs in rss if _same_template(rs, template)), new)
        self._deployment_status(d, rss, new, replicas, unavailable, created)

    def _create_replicaset(self, d: Obj, template: Obj, revision: int, surge: int) -> Obj | None:
        info = self._info(RS_BUCKET)
        if info is None:
            return None
        h = pod_template_hash(template, (d.get("status") or {}).get("collisionCount"))
        tpl = _copy(template)
        tpl.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
        selector = _copy((d.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = h
        replicas = int((d.get("spec") or {}).get("replicas", 1))
        annotations = {k: v for k, v in (d["metadata"].get("annotations") or {}).items() if k not in NOT_COPIED}
        annotations.update({DESIRED: str(replicas), MAX: str(replicas + surge), REVISION: str(revision)})
        rss = self._owned(d, RS_BUCKET)
        initial = 0 if _strategy(d) == "Recreate" else _new_rs_replicas(rss, None, replicas, surge)
        rs = {"metadata": {"name": f"{d['metadata']['name']}-{h}", "labels": dict(tpl["metadata"]["labels"]),
                           "annotations": annotations, "ownerReferences": [_ref_to(d)]},
              "spec": {"replicas": initial, "minReadySeconds": (d.get("spec") or {}).get("minReadySeconds", 0),
                       "selector": selector, "template": tpl}}
        try:
            st = self.registry.create(info, d["metadata"].get("namespace", ""), rs, manager=MANAGER, dry_run=False)
        except StatusError:  # a name collision: the real controller bumps status.collisionCount and retries
            status = dict(d.get("status") or {})
            status["collisionCount"] = int(status.get("collisionCount", 0)) + 1
            self._update(DEPLOY_BUCKET, dict(d, status=status), "status")
            return None
        return self.registry.view(info, st)

    def _scale(self, d: Obj, rs: Obj, replicas: int, surge: int, revision: int | None = None) -> Obj | None:
        """Set a ReplicaSet's size and its desired/max-replicas (and revision) annotations."""
        want = int((d.get("spec") or {}).get("replicas", 1))
        annotations = dict(rs["metadata"].get("annotations") or {})
        annotations.update({DESIRED: str(want), MAX: str(want + surge)})
        if revision is not None:
            annotations[REVISION] = str(revision)
        if replicas == int(rs["spec"].get("replicas", 0)) and annotations == rs["metadata"].get("annotations"):
            return rs
        rs = _copy(rs)
        rs["spec"]["replicas"] = replicas
        rs["metadata"]["annotations"] = annotations
        return self._update(RS_BUCKET, rs)

    def _rolling(self, d: Obj, new: Obj, olds: list[Obj], replicas: int, surge: int, unavailable: int) -> None:
        """rollingUpdate: scale the new ReplicaSet up within maxSurge, old ones down within maxUnavailable."""
        rss = [new, *olds]
        target = _new_rs_replicas(rss, new, replicas, surge)
        new = self._scale(d, new, target, surge) or new
        old_count = sum(int(rs["spec"].get("replicas", 0)) for rs in olds)
        if old_count == 0:
            return
        all_count = old_count + int(new["spec"].get("replicas", 0))
        min_available = replicas - unavailable
        new_unavailable = int(new["spec"].get("replicas", 0)) - int((new.get("status") or {}).get("availableReplicas", 0))
        budget = all_count - min_available - new_unavailable
        if budget <= 0:
            return
        for rs in olds:  # first the unhealthy old Pods (cleanupUnhealthyReplicas) ...
            size = int(rs["spec"].get("replicas", 0))
            unhealthy = size - int((rs.get("status") or {}).get("availableReplicas", 0))
            cut = min(budget, unhealthy)
            if cut > 0:
                self._scale(d, rs, size - cut, surge)
                rs["spec"]["replicas"] = size - cut
                budget -= cut
        available = sum(int((rs.get("status") or {}).get("availableReplicas", 0)) for rs in [new, *olds])
        budget = min(budget, available - min_available)
        for rs in olds:  # ... then available ones, as far as maxUnavailable allows
            size = int(rs["spec"].get("replicas", 0))
            cut = min(budget, size)
            if cut > 0:
                self._scale(d, rs, size - cut, surge)
                budget -= cut

    def _recreate(self, d: Obj, new: Obj, olds: list[Obj], replicas: int, surge: int) -> None:
        """Recreate: every old Pod goes before the new ReplicaSet gets any."""
        for rs in olds:
            if int(rs["spec"].get("replicas", 0)):
                self._scale(d, rs, 0, surge)
        if any(_active(p) for rs in olds for p in self._owned(rs, POD_BUCKET)):
            return
        self._scale(d, new, replicas, surge)

    def _cleanup(self, d: Obj, olds: list[Obj]) -> None:
        """Old, scaled-down ReplicaSets beyond revisionHistoryLimit are deleted (oldest first)."""
        limit = int((d.get("spec") or {}).get("revisionHistoryLimit", 10))
        idle = sorted((rs for rs in olds if not int(rs["spec"].get("replicas", 0))
                       and not int((rs.get("status") or {}).get("replicas", 0))), key=_revision)
        for rs in idle[:max(len(idle) - limit, 0)]:
            self._delete(RS_BUCKET, rs)

    def _deployment_status(self, d: Obj, rss: list[Obj], new: Obj | None, replicas: int, unavailable: int,
                           created: bool) -> None:
        def total(field: str, among: list[Obj]) -> int:
            return sum(int((rs.get("status") or {}).get(field, 0)) for rs in among)
        available = total("availableReplicas", rss)
        spec_total = sum(int(rs["spec"].get("replicas", 0)) for rs in rss)
        old = d.get("status") or {}
        status = _omit_zero({
            "observedGeneration": d["metadata"].get("generation", 0),
            "replicas": total("replicas", rss),
            "updatedReplicas": total("replicas", [new]) if new is not None else 0,
            "readyReplicas": total("readyReplicas", rss),
            "availableReplicas": available,
            "unavailableReplicas": max(spec_total - available, 0),
            "collisionCount": old.get("collisionCount", 0)}, keep=())
        if "collisionCount" in old:
            status["collisionCount"] = old["collisionCount"]
        conditions = _copy(old.get("conditions") or [])
        if available >= replicas - unavailable:
            _set_condition(conditions, "Available", "True", "MinimumReplicasAvailable",
                           "Deployment has minimum availability.", deployment=True)
        else:
            _set_condition(conditions, "Available", "False", "MinimumReplicasUnavailable",
                           "Deployment does not have minimum availability.", deployment=True)
        rs_name = new["metadata"]["name"] if new is not None else ""
        if (d.get("spec") or {}).get("paused"):
            _set_condition(conditions, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused",
                           deployment=True)
        elif new is not None and status.get("updatedReplicas", 0) == replicas and status.get("replicas", 0) == replicas \
                and available >= replicas:
            _set_condition(conditions, "Progressing", "True", "NewReplicaSetAvailable",
                           f'ReplicaSet "{rs_name}" has successfully progressed.', deployment=True)
        elif created:
            _set_condition(conditions, "Progressing", "True", "NewReplicaSetCreated",
                           f'Created new replica set "{rs_name}"', deployment=True)
        elif new is not None:
            _set_condition(conditions, "Progressing", "True", "ReplicaSetUpdated",
                           f'ReplicaSet "{rs_name}" is progressing.', deployment=True)
        status["conditions"] = conditions
        was = self.store.bucket(DEPLOY_BUCKET).objects.get((d["metadata"].get("namespace", ""), d["metadata"]["name"]))
        annotations_changed = was is not None and was.obj["metadata"].get("annotations") != d["metadata"].get("annotations")
        if annotations_changed or _without_times(status) != _without_times(old):
            self._update(DEPLOY_BUCKET, dict(d, status=status), "status")

    # ---- Jobs ------------------------------------------------------------------------------
    def _sync_job(self, info: ServedResource, job: Obj) -> None:
        spec = job.get("spec") or {}
        old = job.get("status") or {}
        conditions = _copy(old.get("conditions") or [])
        if any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions):
            return
        pods = self._owned(job, POD_BUCKET)
        active = [p for p in pods if _active(p)]
        succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        failed = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed")
        status: Obj = {k: v for k, v in old.items() if k in ("startTime", "completionTime", "collisionCount")}
        completions = spec.get("completions")
        done = succeeded >= completions if completions is not None else succeeded > 0 and not active
        now = now_rfc3339()
        if spec.get("suspend"):
            for p in active:
                self._delete(POD_BUCKET, p)
            active = []
            _set_condition(conditions, "Suspended", "True", "JobSuspended", "Job suspended")
        else:
            if any(c.get("type") == "Suspended" and c.get("status") == "True" for c in conditions):
                _set_condition(conditions, "Suspended", "False", "JobResumed", "Job resumed")
                status["startTime"] = now  # the active deadline counts from the resume
            status.setdefault("startTime", now)
            if failed > int(spec.get("backoffLimit", 6)):
                for p in active:
                    self._delete(POD_BUCKET, p)
                active = []
                _set_condition(conditions, "Failed", "True", "BackoffLimitExceeded",
                               "Job has reached the specified backoff limit")
            elif done:
                for p in active:
                    self._delete(POD_BUCKET, p)
                active = []
                status["completionTime"] = now
                _set_condition(conditions, "Complete", "True", "", "")
            else:
                parallelism = int(spec.get("parallelism", 1))
                want = parallelism if completions is None else min(parallelism, int(completions) - succeeded)
                want = 0 if completions is None and succeeded else want
                active, _ = self._scale_pods(job, active, want, JOB_BUCKET)
        status.update(_omit_zero({"active": len(active), "succeeded": succeeded, "failed": failed}, keep=()))
        status["ready"] = sum(1 for p in active if _pod_ready(p))
        if conditions:
            status["conditions"] = conditions
        if status != old:
            self._update(JOB_BUCKET, dict(job, status=status), "status")


# ---- pure helpers ----------------------------------------------------------------------------
def pod_template_hash(template: Obj, collision_count: int | None = None) -> str:
    """A stable hash of a Pod template, rendered as the real controller renders it (FNV-1a 32, safe alphabet)."""
    h = 0x811C9DC5
    for b in orjson.dumps(template, option=orjson.OPT_SORT_KEYS) + (
            str(collision_count).encode() if collision_count is not None else b""):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(ch) % len(_SAFE)] for ch in str(h))


def _copy(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value))


def _controller_ref(obj: Obj) -> Obj | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def _ref_to(owner: Obj) -> Obj:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _active(pod: Obj) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _pod_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _has_labels(pod: Obj, labels: dict[str, str]) -> bool:
    have = pod["metadata"].get("labels") or {}
    return all(have.get(k) == v for k, v in labels.items())


def _deletion_rank(pod: Obj) -> tuple[Any, ...]:
    """Which Pods a scale-down removes first: unscheduled, pending, not ready, then the newest."""
    phase = (pod.get("status") or {}).get("phase")
    created = pod["metadata"].get("creationTimestamp", "")
    return (bool((pod.get("spec") or {}).get("nodeName")), {"Pending": 0, "Unknown": 1}.get(phase or "", 2),
            _pod_ready(pod), _Desc(created), _Desc(pod["metadata"].get("resourceVersion", "0")))


@functools.total_ordering
class _Desc:
    """Reverses the order of a sort key component (newest first)."""

    def __init__(self, value: str) -> None:
        self.value = value.zfill(32) if value.isdigit() else value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value


def _omit_zero(values: Obj, keep: tuple[str, ...]) -> Obj:
    """Status fields as Go's `omitempty` writes them: zero counts left out."""
    return {k: v for k, v in values.items() if v or k in keep}


def _template_without_hash(template: Obj) -> Obj:
    t = _copy(template)
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
        if not labels:
            del t["metadata"]["labels"]
    return t


def _same_template(rs: Obj, template: Obj) -> bool:
    return equal(_template_without_hash((rs.get("spec") or {}).get("template") or {}),
                 _template_without_hash(template), TYPED)


def _revision(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def _strategy(d: Obj) -> str:
    return str(((d.get("spec") or {}).get("strategy") or {}).get("type") or "RollingUpdate")


def _resolve(value: Any, total: int, round_up: bool) -> int:
    """An IntOrString (`25%` or `1`) against `total`, as intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, str) and value.endswith("%"):
        try:
            scaled = int(value[:-1]) * total / 100
        except ValueError:
            return 0
        return math.ceil(scaled) if round_up else math.floor(scaled)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _surge_and_unavailable(d: Obj, replicas: int) -> tuple[int, int]:
    if _strategy(d) != "RollingUpdate":
        return 0, 0
    ru = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    surge = _resolve(ru.get("maxSurge", "25%"), replicas, True)
    unavailable = _resolve(ru.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # both zero would never make progress (deployment/util.ResolveFenceposts)
    return surge, min(unavailable, replicas)


def _new_rs_replicas(rss: list[Obj], new: Obj | None, replicas: int, surge: int) -> int:
    """NewRSNewReplicas for RollingUpdate: grow the new ReplicaSet as far as maxSurge allows."""
    current_new = int(new["spec"].get("replicas", 0)) if new is not None else 0
    if current_new >= replicas:
        return replicas
    pods = sum(int(rs["spec"].get("replicas", 0)) for rs in rss)
    room = replicas + surge - pods
    if room <= 0:
        return current_new
    return current_new + min(room, replicas - current_new)


def _set_condition(conditions: list[Obj], ctype: str, status: str, reason: str, message: str,
                   deployment: bool = False) -> None:
    """Set a condition in place; the transition time changes only with the status (as the real helpers)."""
    now = now_rfc3339()
    for c in conditions:
        if c.get("type") == ctype:
            if c.get("status") != status:
                c["lastTransitionTime"] = now
            if deployment and (c.get("status"), c.get("reason")) != (status, reason):
                c["lastUpdateTime"] = now
            c.update(status=status, reason=reason, message=message)
            if not reason:
                c.pop("reason", None)
            if not message:
                c.pop("message", None)
            return
    cond: Obj = {"type": ctype, "status": status}
    cond.update({"lastUpdateTime": now} if deployment else {"lastProbeTime": now})
    cond["lastTransitionTime"] = now
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    conditions.append(cond)


def _without_times(status: Obj) -> Obj:
    out = dict(status)
    out["conditions"] = [{k: v for k, v in c.items() if not k.endswith("Time")} for c in status.get("conditions") or []]
    return out


__all__ = ["Workloads", "pod_template_hash"]
