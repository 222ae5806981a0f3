"""What the emulator knows about a resource: its names, scope, verbs and its strategy.

This mirrors kube-apiserver's registry: the generic request flow (in `registry.py`) is the same
for every resource, and everything that differs per kind (defaults, validation, when generation
bumps, what the status subresource may change, field-selector fields, version conversion) lives in
a `Strategy`. Built-in kinds and CRD-served kinds differ only in their `ResourceInfo` + `Strategy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_VERBS: tuple[str, ...] = (
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch",
)

Obj = dict[str, Any]


class Strategy:
    """Per-kind behaviour hooks called by the generic registry flow.

    All hooks receive objects in the version of `info` (the version the client addressed).
    Hooks mutate the object in place and raise `StatusError` to reject a request.
    The defaults implement the behaviour of a plain kind such as ConfigMap.
    """

    #: whether `metadata.generation` is maintained for this kind
    has_generation: bool = False

    def prepare_for_create(self, info: ResourceInfo, obj: Obj) -> None:
        """Apply defaults before validation; drop `status` if the kind has a status subresource."""

    def validate_create(self, info: ResourceInfo, obj: Obj) -> None:
        """Reject an invalid new object (422 Invalid with causes, or 400 for decoding-type errors)."""

    def prepare_for_update(self, info: ResourceInfo, new: Obj, old: Obj) -> None:
        """Before validating an update of the main resource: keep `status` from `old` when a status
        subresource exists, bump `generation` when the real server would."""

    def validate_update(self, info: ResourceInfo, new: Obj, old: Obj) -> None:
        """Reject an invalid update (immutable fields, ...)."""

    def prepare_for_status_update(self, info: ResourceInfo, new: Obj, old: Obj) -> None:
        """A write through `/status`: keep everything but `status` (and metadata the real server
        lets status writers change) from `old`; never bump generation."""

    def field_values(self, info: ResourceInfo, obj: Obj) -> dict[str, str]:
        """The fields usable in a fieldSelector for this kind, as strings."""
        meta = obj.get("metadata") or {}
        values = {"metadata.name": str(meta.get("name", ""))}
        if info.namespaced:
            values["metadata.namespace"] = str(meta.get("namespace", ""))
        return values

    def to_storage(self, info: ResourceInfo, obj: Obj) -> Obj:
        """Convert an object in `info`'s version to the stored form (shared by all versions)."""
        return obj

    def from_storage(self, info: ResourceInfo, stored: Obj) -> Obj:
        """Convert a stored object to `info`'s version. Must return a new dict if it changes it."""
        return stored


@dataclass(frozen=True, eq=False)
class ResourceInfo:
    """One served resource in one group/version."""

    group: str
    version: str
    resource: str  # plural, e.g. "configmaps"
    kind: str
    namespaced: bool
    singular: str = ""  # "" for every built-in resource in 1.24; filled in for CRDs
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = DEFAULT_VERBS
    subresources: frozenset[str] = frozenset()  # "status", "scale"
    storage: str = ""  # storage identity; versions/APIs sharing objects share it (core + events.k8s.io Events)
    strategy: Strategy = field(default_factory=Strategy)
    storage_version_hash: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def stats_key(self) -> str:
        """`<group>/<version>/<resource>` with the core group written `core` (the stats endpoint's key)."""
        return f"{self.group or 'core'}/{self.version}/{self.resource}"

    @property
    def storage_key(self) -> str:
        return self.storage or f"{self.group}/{self.resource}"
