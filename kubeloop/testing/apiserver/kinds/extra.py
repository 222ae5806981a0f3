"""Kinds served as plain documents with only their generic rules (names, generation, status):
RBAC, networking, policy, autoscaling, storage, quotas. Controllers often own or watch them, so
the emulator serves them rather than answering 404; their kind-specific defaults are not modelled.
"""

from __future__ import annotations

from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy


class GenericStrategy(KindStrategy):
    """A kind with optional generation (bumped by any change outside metadata/status) and
    optional initial status."""

    def __init__(self, generation: bool = False, status: Any = None, name_fn: m.NameValidator | None = None) -> None:
        self.has_generation = generation
        self._status = status
        if name_fn is not None:
            self.name_fn = name_fn

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        import copy

        return copy.deepcopy(self._status)


def rbac() -> GenericStrategy:
    """RBAC objects: names only need to be valid path segments (`system:controller:x` is fine)."""
    return GenericStrategy(name_fn=m.validate_path_segment_name)


class IngressStrategy(GenericStrategy):
    def __init__(self) -> None:
        super().__init__(generation=True, status={"loadBalancer": {}})

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        for i, rule in enumerate((obj.get("spec") or {}).get("rules") or []):
            for j, path in enumerate(((rule or {}).get("http") or {}).get("paths") or []):
                fld = f"spec.rules[{i}].http.paths[{j}]"
                pt = (path or {}).get("pathType")
                if not pt:
                    causes.append(m.required_cause(f"{fld}.pathType", "pathType must be specified"))
                elif pt not in ("Exact", "Prefix", "ImplementationSpecific"):
                    causes.append(m.not_supported_cause(f"{fld}.pathType", pt,
                                                        ("Exact", "Prefix", "ImplementationSpecific")))
        return causes
