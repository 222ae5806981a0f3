"""What the emulator knows about a resource: its names, scope, verbs and its strategy.

This mirrors kube-apiserver's registry: the generic request flow (in `registry.py`) is the same
for every resource, and everything that differs per kind (defaults, validation, when generation
bumps, what the status subresource may change, field-selector fields, version conversion) lives in
a `Strategy`. Built-in kinds and CRD-served kinds differ only in their `ServedResource` + `Strategy`.

Order of calls the generic flow makes (all hooks are optional to override):

- create:  `decode` (typed decoding, scheme defaults) -> managedFields recorded (the request
           handler's field manager runs before the strategy) -> `prepare_for_create` (drops
           status, sets what the strategy sets) -> `validate_create`
- update:  `decode` -> managedFields -> `prepare_for_update(new, old)` (keeps status, bumps
           generation) -> `validate_update`
- /status: `prepare_for_status_update(new, old)` -> `validate_status_update`
  (`prepare_for_subresource_update(sub, new, old)` dispatches any subresource write, e.g. `finalize`)
- delete:  `prepare_for_delete(obj)` before the generic finalizer logic
- lists:   `check_field_label` for each fieldSelector label, then `field_values(obj)` per object
- /scale:  `get_scale(obj)` and `apply_scale(obj, scale)` (then the update path as above)

`decode` (400 for what the real server's JSON decoder rejects, normalization such as MicroTime,
pruning of unknown fields, scheme defaults) is called by the generic flow before anything else, so
the fields a strategy sets in `prepare_*` (a Job's generated selector, a reset status) are nobody's
in managedFields, as on the real server.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .errors import StatusError, bad_request, not_found
from .kinds import meta as objmeta
from .shapes import Obj

DEFAULT_VERBS: tuple[str, ...] = (
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch",
)
#: verbs of `status` and `scale` subresources in discovery
SUBRESOURCE_VERBS: tuple[str, ...] = ("get", "patch", "update")


#: whether the request being served is a dry run (what Go passes in `ctx`/options): allocators
#: (Service node ports) answer placeholder values instead of taking real ones
DRY_RUN: ContextVar[bool] = ContextVar("kubeloop_emulator_dry_run", default=False)

#: the stored objects, by (namespace, name), of the resource whose create or update is being
#: prepared: what an allocator checks a requested value against (a Service's cluster IP and node
#: ports are refused when another Service holds them)
PEERS: ContextVar[Mapping[tuple[str, str], Any]] = ContextVar(
    "kubeloop_emulator_peers", default=MappingProxyType({}))


class Strategy:
    """Per-kind behaviour hooks called by the generic registry flow.

    All hooks receive objects in the version of `info` (the version the client addressed).
    Hooks mutate the object in place and raise `StatusError` to reject a request.
    The defaults implement the behaviour of a plain kind such as ConfigMap.
    """

    #: whether `metadata.generation` is maintained for this kind
    has_generation: bool = False
    #: a PUT without `metadata.resourceVersion` overwrites (most built-ins); False: 422 (custom
    #: resources, CRDs), as the strategy's `AllowUnconditionalUpdate`
    allow_unconditional_update: bool = True
    #: writes record `metadata.managedFields` (a CertificateSigningRequest's do not)
    records_managed_fields: bool = True
    #: `DefaultGarbageCollectionPolicy` is OrphanDependents (batch/v1 Jobs, for compatibility): a
    #: DELETE without a policy adds the `orphan` finalizer
    orphans_by_default: bool = False

    # -- decoding (called by the generic flow before the prepare_* hooks) --------------------
    def decode(self, info: ServedResource, obj: Obj) -> None:
        """What the real server does while decoding a body: 400 BadRequest for type errors,
        normalize values, drop unknown fields, apply scheme defaults."""

    # -- create / update ---------------------------------------------------------------------
    def prepare_for_create(self, info: ServedResource, obj: Obj) -> None:
        """`PrepareForCreate` (after decoding): drop `status` if the kind has a status subresource."""

    def validate_create(self, info: ServedResource, obj: Obj) -> None:
        """Reject an invalid new object (422 Invalid with causes, or 400 for decoding-type errors).
        The default applies the generic ObjectMeta rules (DNS-subdomain names); the registry
        validates nothing itself, so a kind's strategy decides which rules apply."""
        objmeta.raise_invalid(info, obj, objmeta.validate_object_meta(obj.get("metadata") or {}, info.namespaced,
                                                                          kube=False))

    def prepare_for_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """Before validating an update of the main resource: keep `status` from `old` when a status
        subresource exists, bump `generation` when the real server would."""

    def validate_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """Reject an invalid update (immutable fields, ...); by default the ObjectMeta update rules."""
        objmeta.raise_invalid(info, new, objmeta.validate_object_meta_update(new.get("metadata") or {},
                                                                             old.get("metadata") or {}))

    def prepare_for_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """A write through `/status`: keep everything but `status` (and metadata the real server
        lets status writers change) from `old`; never bump generation."""

    def validate_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """Reject an invalid `/status` write; by default the ObjectMeta update rules."""
        objmeta.raise_invalid(info, new, objmeta.validate_object_meta_update(new.get("metadata") or {},
                                                                             old.get("metadata") or {}))

    def prepare_for_subresource_update(self, info: ServedResource, subresource: str, new: Obj, old: Obj) -> None:
        """A write through `/<subresource>` other than `/scale`: `status` goes to
        `prepare_for_status_update`; a Namespace's `finalize` changes only `spec.finalizers`."""
        if subresource == "status":
            self.prepare_for_status_update(info, new, old)
        else:
            self.prepare_for_update(info, new, old)

    def validate_subresource_update(self, info: ServedResource, subresource: str, new: Obj, old: Obj) -> None:
        """Reject an invalid write through `/<subresource>` (not `/scale`): `status` goes to
        `validate_status_update`, others (a Namespace's `finalize`) to `validate_update`; a kind
        with a subresource of its own (a CSR's `approval`) overrides this."""
        if subresource == "status":
            self.validate_status_update(info, new, old)
        else:
            self.validate_update(info, new, old)

    # -- delete ------------------------------------------------------------------------------
    def prepare_for_delete(self, info: ServedResource, obj: Obj) -> bool:
        """Called on DELETE of an object that is not terminating yet, before the generic flow
        looks at `metadata.finalizers`. May mutate `obj` (e.g. add a finalizer, set a phase).
        Returns True when the object must be kept although it has no `metadata.finalizers`
        (a Namespace waits for its `spec.finalizers`); the flow then sets `deletionTimestamp`,
        stores it and answers 200 with the object."""
        return False

    def graceful_delete_seconds(self, info: ServedResource, obj: Obj, opts: Obj) -> int:
        """`CheckGracefulDelete`: how many seconds the object stays, marked, before it is gone (a Pod
        on a node waits for its kubelet); 0 deletes it at once. `opts` are the delete options."""
        return 0

    # -- field selectors ---------------------------------------------------------------------
    def field_labels(self, info: ServedResource) -> tuple[str, ...]:
        """The fieldSelector labels this kind supports."""
        if info.namespaced:
            return ("metadata.name", "metadata.namespace")
        return ("metadata.name",)

    def check_field_label(self, info: ServedResource, label: str) -> None:
        """Raise the real server's 400 for a fieldSelector label this kind does not support."""
        if label in self.field_labels(info):
            return
        raise bad_request(f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"')

    def field_values(self, info: ServedResource, obj: Obj) -> dict[str, str]:
        """The fields usable in a fieldSelector for this kind, as strings."""
        meta = obj.get("metadata") or {}
        values = {"metadata.name": str(meta.get("name", ""))}
        if info.namespaced:
            values["metadata.namespace"] = str(meta.get("namespace", ""))
        return values

    # -- versions ----------------------------------------------------------------------------
    def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
        """Convert an object in `info`'s version to the stored form (shared by all versions)."""
        return obj

    def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
        """Convert a stored object to `info`'s version. Must return a new dict if it changes it."""
        return stored

    def decorate(self, info: ServedResource, obj: Obj) -> Obj:
        """The storage's `Decorator`: how an object is shown to clients (responses, lists, watch
        events), which is not what updates and patches start from. Must return a new dict if it
        changes it."""
        return obj

    # -- scale subresource -------------------------------------------------------------------
    def get_scale(self, info: ServedResource, obj: Obj) -> Obj:
        """The `autoscaling/v1` Scale of `obj` (only for kinds with a `scale` subresource)."""
        raise _no_scale(info, obj)

    def apply_scale(self, info: ServedResource, obj: Obj, scale: Obj) -> None:
        """Write `scale.spec.replicas` into `obj` in place (after validating the Scale); the
        registry then runs the normal update path (`prepare_for_update`, generation bump, ...)."""
        raise _no_scale(info, obj)

    def scale_replicas_field(self, info: ServedResource) -> tuple[str, ...]:
        """The object field `/scale` writes (see `managedfields.record_scale`)."""
        return ("spec", "replicas")

    #: a `/scale` write goes through a field manager of its own and records a `scale` entry
    #: (built-in kinds; 1.24's custom-resource scale endpoint has none)
    scale_has_field_manager: bool = True

    # -- server-side apply -------------------------------------------------------------------
    def zero_object(self, info: ServedResource) -> Obj | None:
        """The kind's zero value as Go encodes it (what managedFields compare a created object
        with); None: an empty object. Built-in kinds: their generated Go struct's."""
        from .kinds.generated import zero_of_kind

        return zero_of_kind(info.group, info.version, info.kind)

    def apply_type(self, info: ServedResource) -> Any:
        """The kind's structured-merge-diff type (`smd.py`), which apply configurations must fit;
        None: anything fits. Built-in kinds: their recorded OpenAPI definition."""
        from .smd import builtin_type

        return builtin_type(info.group, info.version, info.kind)


@dataclass(frozen=True)
class Subresource:
    """How discovery lists a subresource that is not a plain `status`-like one: its verbs, and the
    kind it takes and answers with when that is not the resource's own (`pods/eviction` takes a
    `policy/v1` Eviction, `*/scale` an `autoscaling/v1` Scale)."""

    verbs: tuple[str, ...] = SUBRESOURCE_VERBS
    kind: str = ""
    group: str | None = None
    version: str | None = None


def _no_scale(info: ServedResource, obj: Obj) -> StatusError:
    name = str((obj.get("metadata") or {}).get("name", ""))
    return not_found(info.resource, name, info.group)


@dataclass(frozen=True, eq=False)
class ServedResource:
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
    subresources: frozenset[str] = frozenset()  # "status", "scale", "finalize" (namespaces), "log", ...
    #: discovery's description of the subresources that are not `status`-like (see `Subresource`)
    subresource_specs: tuple[tuple[str, Subresource], ...] = ()
    storage: str = ""  # storage identity; versions/APIs sharing objects share it (core + events.k8s.io Events)
    strategy: Strategy = field(default_factory=Strategy)
    storage_version_hash: str = ""
    #: PUT to a missing object creates it (Lease, Event, Endpoints, Service, ...) instead of 404
    allow_create_on_update: bool = False
    #: the registry's `ReturnDeletedObject`: DELETE answers with the object, not a Status (Service,
    #: ServiceAccount)
    return_deleted_object: bool = False
    #: the CRD name (`<plural>.<group>`) for custom resources, "" for built-ins. Custom resources:
    #: list items carry kind/apiVersion, strategic merge patch -> 415, a body kind mismatch is a
    #: 422 from `validate_create` (not the built-in 400), unserved versions are not in the catalog.
    crd_name: str = ""

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

    @property
    def custom(self) -> bool:
        """True for resources served from a CustomResourceDefinition."""
        return bool(self.crd_name)

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def list_items_have_kind(self) -> bool:
        """Custom resource lists carry kind/apiVersion on items; built-in lists do not."""
        return self.custom

    @property
    def patch_types(self) -> tuple[str, ...]:
        """PATCH content types the real server accepts for this resource."""
        base = ("application/json-patch+json", "application/merge-patch+json")
        if self.custom:
            return (*base, "application/apply-patch+yaml")
        return (*base, "application/strategic-merge-patch+json", "application/apply-patch+yaml")
