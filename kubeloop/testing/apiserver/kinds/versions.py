"""The other versions kube-apiserver 1.24 serves of kinds stored in one version.

Each extra version shares its kind's storage (one object, one resourceVersion, watches of every
version see every write) and differs only in how the object looks: some versions are the same
shape (batch/v1beta1 CronJob, node.k8s.io/v1beta1 RuntimeClass, flowcontrol v1beta1, ...), others
are converted by their strategy (autoscaling/v1 HPA, discovery.k8s.io/v1beta1 EndpointSlice,
policy/v1beta1 PDB's empty selector, events.k8s.io/v1beta1's legacy validation).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..resources import ServedResource, Strategy
from ..shapes import Cause, Obj
from .discovery import EndpointSliceV1beta1Strategy
from .events import NewEventStrategy, legacy_validate, new_to_core
from .policy import pdb_v1beta1


class EventV1beta1Strategy(NewEventStrategy):
    """events.k8s.io/v1beta1: only the legacy Event validation (`ValidateEventCreate` skips the
    strict rules for requests in v1beta1, for compatibility)."""

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return legacy_validate(new_to_core(dict(obj)))


def _same(strategy: Strategy) -> Strategy:
    return strategy


#: (group, stored-in version, resource) -> [(other version, its strategy made from the stored one's)]
EXTRA_VERSIONS: dict[tuple[str, str, str], list[tuple[str, Callable[[Strategy], Strategy]]]] = {
    ("events.k8s.io", "v1", "events"): [("v1beta1", lambda s: EventV1beta1Strategy())],
    ("autoscaling", "v2", "horizontalpodautoscalers"): [("v1", _same), ("v2beta1", _same), ("v2beta2", _same)],
    ("batch", "v1", "cronjobs"): [("v1beta1", _same)],
    ("policy", "v1", "poddisruptionbudgets"): [("v1beta1", pdb_v1beta1)],  # type: ignore[list-item]
    ("storage.k8s.io", "v1", "csistoragecapacities"): [("v1beta1", _same)],
    ("node.k8s.io", "v1", "runtimeclasses"): [("v1beta1", _same)],
    ("discovery.k8s.io", "v1", "endpointslices"): [("v1beta1", lambda s: EndpointSliceV1beta1Strategy())],
    ("flowcontrol.apiserver.k8s.io", "v1beta2", "flowschemas"): [("v1beta1", _same)],
    ("flowcontrol.apiserver.k8s.io", "v1beta2", "prioritylevelconfigurations"): [("v1beta1", _same)],
}


def more_versions(resources: list[ServedResource]) -> list[ServedResource]:
    """`resources` and, after each, the other versions 1.24 serves of it (sharing its storage)."""
    out: list[ServedResource] = []
    for info in resources:
        out.append(info)
        for version, make in EXTRA_VERSIONS.get((info.group, info.version, info.resource), []):
            out.append(dataclasses.replace(info, version=version, strategy=make(info.strategy),
                                           storage=info.storage_key))
    return out
