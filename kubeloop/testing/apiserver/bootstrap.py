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

import functools
import json
import os
from collections.abc import Iterator
from importlib import resources
from typing import Any

import orjson

from kubeloop.meta import ADDED

from .objectmeta import now_rfc3339
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
def _recorded_json() -> bytes:
    """The recorded objects as compact JSON (read once per process; each server decodes its own copy,
    which is several times cheaper than copying the decoded objects)."""
    text = resources.files(__package__).joinpath("data/bootstrap-1.24.json").read_text()
    return orjson.dumps(json.loads(text))


def recorded() -> dict[str, list[Obj]]:
    """A fresh copy of the recorded objects, by data file key."""
    data: dict[str, list[Obj]] = orjson.loads(_recorded_json())
    return data


def install(registry: Registry) -> None:
    """Store every bootstrap object (skipping kinds the catalog does not serve)."""
    now = now_rfc3339()
    store = registry.store
    data = recorded()
    uids = _uids(sum(len(objects) for objects in data.values()))
    for key, objects in data.items():
        group, version, resource = KINDS[key]
        info = registry.catalog.lookup(group, version, resource)
        if info is None:
            continue
        bucket = registry.bucket(info)
        for recorded_obj in objects:
            obj = _stamped(recorded_obj, now)
            meta = obj["metadata"]
            meta["uid"] = next(uids)
            meta["creationTimestamp"] = now
            if info.strategy.has_generation:
                meta["generation"] = 1
            obj["kind"], obj["apiVersion"] = info.kind, info.api_version
            if (meta.get("namespace", ""), meta["name"]) not in bucket.objects:
                store.commit(bucket, ADDED, registry.to_stored_form(info, obj), None)


def _uids(count: int) -> Iterator[str]:
    """`count` random (version 4) uids from one read of the system's randomness (the store takes
    ~170 objects at every start: a `uuid4()` each costs more than storing them)."""
    raw = os.urandom(16 * count)
    for i in range(count):
        b = bytearray(raw[16 * i:16 * i + 16])
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        h = b.hex()
        yield f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _stamped(obj: Any, now: str) -> Any:
    """Condition times the recording left out, set to now."""
    if isinstance(obj, dict):
        return {k: (now if k in ("lastTransitionTime", "lastUpdateTime") and v is None else _stamped(v, now))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_stamped(v, now) for v in obj]
    return obj
