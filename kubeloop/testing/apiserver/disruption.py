"""kube-controller-manager's disruption controller (cluster mode): PodDisruptionBudget status.

For each budget it counts the pods its selector matches (`expectedPods`), the ready ones that are
not terminating nor recently evicted (`currentHealthy`), what the budget requires
(`desiredHealthy`: `minAvailable`, or the controllers' scale minus `maxUnavailable`, percentages
rounded up), and `disruptionsAllowed`, with the `DisruptionAllowed` condition; evictions
(`podsubresources.eviction`) read and decrement it. As `pkg/controller/disruption`, a percentage or
`maxUnavailable` needs the pods' controllers (ReplicaSet, Deployment, StatefulSet,
ReplicationController) for the expected count, and a budget over pods without one reports
`SyncFailed`.
"""

from __future__ import annotations

import copy
import functools
import math
from typing import TYPE_CHECKING, Any

from .errors import StatusError
from .kinds.apps import selector_matches
from .podsubresources import set_disruption_allowed
from .shapes import Obj
from .storage import Bucket, Commit

if TYPE_CHECKING:
    from .controllers import Controllers

PDB_BUCKET = "policy/poddisruptionbudgets"
POD_BUCKET = "/pods"
MANAGER = "kube-controller-manager"
#: how a pod's controller is found: kind -> (group, resource)
SCALABLE = {"ReplicaSet": ("apps", "replicasets"), "Deployment": ("apps", "deployments"),
            "StatefulSet": ("apps", "statefulsets"), "ReplicationController": ("", "replicationcontrollers")}


class Disruption:
    """Keeps PodDisruptionBudget status; `changed` is fed every commit."""

    def __init__(self, controllers: Controllers) -> None:
        self.c = controllers
        self.registry = controllers.registry
        self._queued: set[str] = set()

    def changed(self, bucket: Bucket, ch: Commit) -> None:
        if bucket.name not in (PDB_BUCKET, POD_BUCKET):
            return
        namespace = ch.key[0]
        if namespace not in self._queued:
            self._queued.add(namespace)
            self.c._later(0, functools.partial(self._sync, namespace))

    def _sync(self, namespace: str) -> bool:
        self._queued.discard(namespace)
        info = self.registry.catalog.lookup("policy", "v1", "poddisruptionbudgets")
        pods_info = self.registry.catalog.lookup("", "v1", "pods")
        if info is None or pods_info is None:
            return True
        pods = [st.obj for (ns, _), st in self.registry.bucket(pods_info).objects.items() if ns == namespace]
        for (ns, name), st in list(self.registry.bucket(info).objects.items()):
            if ns != namespace or st.obj["metadata"].get("deletionTimestamp"):
                continue
            budget = self.registry.view(info, st)
            status = self._status(budget, pods)
            if status != budget.get("status"):
                budget["status"] = status
                try:
                    self.registry.update(info, ns, name, budget, manager=MANAGER, dry_run=False,
                                         subresource="status")
                except StatusError:
                    continue  # a concurrent write: its commit queues another pass
        return True

    def _status(self, budget: Obj, pods: list[Obj]) -> Obj:
        spec = budget.get("spec") or {}
        generation = budget["metadata"].get("generation")
        old = budget.get("status") or {}
        selector = spec.get("selector")
        matched = [p for p in pods if isinstance(selector, dict) and selector_matches(
            selector, p["metadata"].get("labels") or {})]
        status: Obj = copy.deepcopy(old)
        try:
            expected, desired = self._expected_and_desired(spec, matched)
        except LookupError as e:
            status.update(observedGeneration=generation, disruptionsAllowed=0)
            _condition(status, generation, "False", "SyncFailed", str(e))
            return status
        disrupted = {k: v for k, v in (old.get("disruptedPods") or {}).items()
                     if any(p["metadata"]["name"] == k and not p["metadata"].get("deletionTimestamp")
                            for p in matched)}
        healthy = sum(1 for p in matched if _ready(p) and not p["metadata"].get("deletionTimestamp")
                      and p["metadata"]["name"] not in disrupted)
        allowed = max(healthy - desired, 0)
        status.update(observedGeneration=generation, disruptionsAllowed=allowed, currentHealthy=healthy,
                      desiredHealthy=desired, expectedPods=expected)
        if disrupted:
            status["disruptedPods"] = disrupted
        else:
            status.pop("disruptedPods", None)
        set_disruption_allowed(status, generation, allowed > 0)
        return status

    def _expected_and_desired(self, spec: Obj, pods: list[Obj]) -> tuple[int, int]:
        minimum, maximum = spec.get("minAvailable"), spec.get("maxUnavailable")
        if maximum is None and isinstance(minimum, int):
            return len(pods), minimum
        expected = self._scale_of(pods)
        if maximum is not None:
            return expected, max(expected - _resolve(maximum, expected), 0)
        if minimum is not None:
            return expected, _resolve(minimum, expected)
        return expected, expected  # neither: maxUnavailable 0

    def _scale_of(self, pods: list[Obj]) -> int:
        """The summed scale of the pods' distinct controllers (LookupError when a pod has none)."""
        seen: dict[str, int] = {}
        for pod in pods:
            owner = self._controller_of(pod)
            if owner is None:
                raise LookupError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            uid, replicas = owner
            seen[uid] = replicas
        return sum(seen.values())

    def _controller_of(self, obj: Obj) -> tuple[str, int] | None:
        ref = next((r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        if ref is None or ref.get("kind") not in SCALABLE:
            return None
        located = self.c._by_uid.get(ref.get("uid"))
        owner = self.c._lookup(located) if located else None
        if owner is None:
            return None
        if ref["kind"] == "ReplicaSet":  # a Deployment's ReplicaSet counts as its Deployment
            parent = self._controller_of(owner.obj)
            if parent is not None:
                return parent
        return owner.obj["metadata"]["uid"], int((owner.obj.get("spec") or {}).get("replicas") or 0)


def _ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _resolve(value: Any, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def _condition(status: Obj, generation: Any, value: str, reason: str, message: str) -> None:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionAllowed"]
    from .objectmeta import now_rfc3339

    conditions.append({"type": "DisruptionAllowed", "status": value, "observedGeneration": generation,
                       "lastTransitionTime": now_rfc3339(), "reason": reason, "message": message})
    status["conditions"] = conditions
