"""The objects kube-apiserver 1.24 creates for itself at start, stored before the first request.

`data/bootstrap-1.24.json` was recorded from the real control plane (`tests/testing/record_surface.py
--bootstrap`): the bootstrap RBAC policy (the ClusterRoles, Roles and bindings every cluster has:
`cluster-admin`, `admin`/`edit`/`view`, `system:discovery`, `system:basic-user`, the controllers'
roles...), the two system PriorityClasses, API Priority and Fairness's default FlowSchemas and
PriorityLevelConfigurations, and an APIService for every built-in group version. They are
committed straight to the store (the server's own writes, trusted, not validated again).

`admin`, `edit` and `view` are stored as the apiserver creates them, with an aggregation rule and
no rules: kube-controller-manager's aggregation controller fills them in (`aggregation.py`, in
cluster mode), so a bare emulator has them empty, as envtest has.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

from kubeloop.meta import ADDED

from .objectmeta import new_uid, now_rfc3339
from .registry import Registry
from .shapes import Obj

#: data file key -> (group, version, resource, namespaced)
KINDS = {
    "clusterroles": ("rbac.authorization.k8s.io", "v1", "clusterroles"),
    "clusterrolebindings": ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    "roles": ("rbac.authorization.k8s.io", "v1", "roles"),
    "rolebindings": ("rbac.authorization.k8s.io", "v1", "rolebindings"),
    "priorityclasses": ("scheduling.k8s.io", "v1", "priorityclasses"),
    "prioritylevelconfigurations": ("flowcontrol.apiserver.k8s.io", "v1beta2", "prioritylevelconfigurations"),
    "flowschemas": ("flowcontrol.apiserver.k8s.io", "v1beta2", "flowschemas"),
    "apiservices": ("apiregistration.k8s.io", "v1", "apiservices"),
}


@functools.cache
def recorded() -> dict[str, list[Obj]]:
    """The recorded objects, by data file key (read once per process)."""
    text = resources.files(__package__).joinpath("data/bootstrap-1.24.json").read_text()
    data: dict[str, list[Obj]] = json.loads(text)
    return data


def install(registry: Registry) -> None:
    """Store every bootstrap object (skipping kinds the catalog does not serve)."""
    now = now_rfc3339()
    store = registry.store
    for key, objects in recorded().items():
        group, version, resource = KINDS[key]
        info = registry.catalog.lookup(group, version, resource)
        if info is None:
            continue
        bucket = registry.bucket(info)
        for recorded_obj in objects:
            obj = _stamped(copy.deepcopy(recorded_obj), now)
            meta = obj["metadata"]
            meta["uid"] = new_uid()
            meta["creationTimestamp"] = now
            if info.strategy.has_generation:
                meta["generation"] = 1
            obj["kind"], obj["apiVersion"] = info.kind, info.api_version
            if (meta.get("namespace", ""), meta["name"]) not in bucket.objects:
                store.commit(bucket, ADDED, registry.to_stored_form(info, obj), None)


def _stamped(obj: Any, now: str) -> Any:
    """Condition times the recording left out, set to now."""
    if isinstance(obj, dict):
        return {k: (now if k in ("lastTransitionTime", "lastUpdateTime") and v is None else _stamped(v, now))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_stamped(v, now) for v in obj]
    return obj
