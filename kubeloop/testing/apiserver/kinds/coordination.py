"""coordination.k8s.io/v1 Lease: MicroTime fields, created by PUT when missing."""

from __future__ import annotations

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy
from .schema import INT32, MICROTIME, STRING, struct, top_level

LEASE_SPEC = struct("LeaseSpec", holderIdentity=STRING, leaseDurationSeconds=INT32, acquireTime=MICROTIME,
                    renewTime=MICROTIME, leaseTransitions=INT32)


class LeaseStrategy(KindStrategy):
    schema = top_level("Lease", spec=LEASE_SPEC)

    def default(self, info: ServedResource, obj: Obj) -> None:
        obj.setdefault("spec", {})

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        duration = spec.get("leaseDurationSeconds")
        if isinstance(duration, int) and duration <= 0:
            causes.append(m.invalid_cause("spec.leaseDurationSeconds", duration, "must be greater than 0"))
        transitions = spec.get("leaseTransitions")
        if isinstance(transitions, int) and transitions < 0:
            causes.append(m.invalid_cause("spec.leaseTransitions", transitions,
                                          "must be greater than or equal to 0"))
        return causes
