"""How the lists of each kind merge: strategic-merge-patch keys and server-side-apply list types.

kube-apiserver learns this from Go struct tags (`patchStrategy`, `patchMergeKey`, `+listType`,
`+listMapKey`) for built-in kinds and from `x-kubernetes-list-type` / `x-kubernetes-list-map-keys`
for custom resources. Both the strategic merge patch and server-side apply need the same answer
("is `containers` merged by `name`?"), so it lives here once, as a lookup keyed by the *field path*
of the list: the field names from the object root, list items skipped
(`("spec", "template", "spec", "containers", "ports")`).

A lookup is any callable `ListTypes = Callable[[tuple[str, ...]], ListType | None]`; `None` means
"no information", which both SMP (replace) and SSA (atomic) treat as an atomic list. Asked about
an *object* path, `ListType("atomic")` marks an atomic struct or map (a label selector,
`x-kubernetes-map-type: atomic`), which server-side apply owns and replaces as one value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FieldPath = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ListType:
    """How one list field merges.

    `type` is the server-side-apply list type: `atomic` (replaced whole), `set` (scalars, merged
    by value) or `map` (objects, merged by `keys`). `merge_key`/`strategy` are the strategic merge
    patch tags: with `strategy == "merge"` a list of objects merges by `merge_key` and a list of
    scalars merges as a set; otherwise the patch replaces the list.
    """

    type: str = "atomic"
    keys: tuple[str, ...] = ()
    merge_key: str | None = None
    strategy: str = "replace"
    retain_keys: bool = False
    #: values the server defaults key fields to (a port's `protocol`), so that `{containerPort: 80}`
    #: in an apply configuration names the same item as the stored `{containerPort: 80, protocol: TCP}`
    key_defaults: Mapping[str, Any] | None = field(default=None, hash=False)


ListTypes = Callable[[FieldPath], "ListType | None"]

ATOMIC = ListType()


def _map(*keys: str, merge_key: str | None = None, smp: bool = True, retain_keys: bool = False,
         defaults: Mapping[str, Any] | None = None) -> ListType:
    """A list of objects keyed by `keys` (SSA); SMP merges by `merge_key` (default: first key)."""
    return ListType("map", tuple(keys), (merge_key or keys[0]) if smp else None,
                    "merge" if smp else "replace", retain_keys, defaults)


_TCP = {"protocol": "TCP"}


SET = ListType("set", (), None, "merge")

# ---- built-in kinds (kube-apiserver 1.24 struct tags) -----------------------------------------
_OBJECT_META: dict[FieldPath, ListType] = {
    ("finalizers",): SET,
    ("ownerReferences",): _map("uid"),
}

_CONTAINER: dict[FieldPath, ListType] = {
    ("ports",): _map("containerPort", "protocol", defaults=_TCP),
    ("env",): _map("name"),
    ("volumeMounts",): _map("mountPath"),
    ("volumeDevices",): _map("devicePath"),
    # atomic structs (`+structType=atomic`)
    ("env", "valueFrom", "configMapKeyRef"): ATOMIC,
    ("env", "valueFrom", "secretKeyRef"): ATOMIC,
    ("env", "valueFrom", "fieldRef"): ATOMIC,
    ("env", "valueFrom", "resourceFieldRef"): ATOMIC,
}

_POD_SPEC: dict[FieldPath, ListType] = {
    ("volumes",): _map("name", retain_keys=True),
    ("containers",): _map("name"),
    ("initContainers",): _map("name"),
    ("ephemeralContainers",): _map("name"),
    ("imagePullSecrets",): _map("name"),
    ("hostAliases",): _map("ip"),
    ("topologySpreadConstraints",): _map("topologyKey", "whenUnsatisfiable"),
    ("topologySpreadConstraints", "labelSelector"): ATOMIC,
    ("nodeSelector",): ATOMIC,  # +mapType=atomic
    ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"): ATOMIC,
}
for _c in ("containers", "initContainers", "ephemeralContainers"):
    for _p, _lt in _CONTAINER.items():
        _POD_SPEC[(_c, *_p)] = _lt

_POD_STATUS: dict[FieldPath, ListType] = {
    ("conditions",): _map("type"),
    ("podIPs",): _map("ip"),
    ("hostIPs",): _map("ip"),
}

_CONDITIONS: dict[FieldPath, ListType] = {("conditions",): _map("type")}


def _under(prefix: FieldPath, table: Mapping[FieldPath, ListType]) -> dict[FieldPath, ListType]:
    return {(*prefix, *p): lt for p, lt in table.items()}


def _with_meta(*parts: Mapping[FieldPath, ListType]) -> dict[FieldPath, ListType]:
    out = _under(("metadata",), _OBJECT_META)
    for part in parts:
        out.update(part)
    return out


def _template(prefix: FieldPath) -> dict[FieldPath, ListType]:
    """A pod template at `prefix` (its metadata and spec)."""
    out = _under((*prefix, "metadata"), _OBJECT_META)
    out.update(_under((*prefix, "spec"), _POD_SPEC))
    return out


_STATUS_CONDITIONS = _under(("status",), _CONDITIONS)
_SELECTOR: dict[FieldPath, ListType] = {("spec", "selector"): ATOMIC}  # metav1.LabelSelector is +structType=atomic

_BUILTIN: dict[tuple[str, str], dict[FieldPath, ListType]] = {
    ("", "Pod"): _with_meta(_under(("spec",), _POD_SPEC), _under(("status",), _POD_STATUS)),
    ("", "PodTemplate"): _with_meta(_template(("template",))),
    ("", "ReplicationController"): _with_meta(_template(("spec", "template")), _STATUS_CONDITIONS, _SELECTOR),
    ("apps", "Deployment"): _with_meta(_template(("spec", "template")), _STATUS_CONDITIONS, _SELECTOR),
    ("apps", "ReplicaSet"): _with_meta(_template(("spec", "template")), _STATUS_CONDITIONS, _SELECTOR),
    ("apps", "StatefulSet"): _with_meta(_template(("spec", "template")), _STATUS_CONDITIONS, _SELECTOR),
    ("apps", "DaemonSet"): _with_meta(_template(("spec", "template")), _STATUS_CONDITIONS, _SELECTOR),
    # JobStatus.conditions is `+listType=atomic` for SSA but merges by type in SMP
    ("batch", "Job"): _with_meta(_template(("spec", "template")), _SELECTOR, {
        ("status", "conditions"): ListType("atomic", (), "type", "merge")}),
    ("batch", "CronJob"): _with_meta(_template(("spec", "jobTemplate", "spec", "template")),
                                     _under(("spec", "jobTemplate", "metadata"), _OBJECT_META)),
    ("", "Service"): _with_meta({
        ("spec", "ports"): _map("port", "protocol", defaults=_TCP),
        ("spec", "selector"): ATOMIC,  # +mapType=atomic
        ("status", "conditions"): _map("type"),
    }),
    ("", "Namespace"): _with_meta(_STATUS_CONDITIONS),
    ("", "Node"): _with_meta({
        ("status", "conditions"): _map("type"),
        ("status", "addresses"): _map("type"),
        ("spec", "podCIDRs"): SET,
    }),
    ("", "ServiceAccount"): _with_meta({
        ("secrets",): _map("name"),
        ("imagePullSecrets",): ListType(),
    }),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _with_meta({
        ("status", "conditions"): _map("type", smp=False),
    }),
    ("policy", "PodDisruptionBudget"): _with_meta(_STATUS_CONDITIONS, _SELECTOR),
    ("", "Event"): _with_meta({("involvedObject",): ATOMIC, ("related",): ATOMIC}),
    ("events.k8s.io", "Event"): _with_meta({("regarding",): ATOMIC, ("related",): ATOMIC}),
    ("autoscaling", "HorizontalPodAutoscaler"): _with_meta(_STATUS_CONDITIONS),
}

_METADATA_ONLY = _with_meta()


def builtin_list_types(group: str, kind: str) -> ListTypes:
    """The lookup for a built-in kind; kinds without merged lists get the metadata lists only."""
    return _BUILTIN.get((group, kind), _METADATA_ONLY).get


def list_types_for(target: Any) -> ListTypes:
    """Resolve a lookup from what a caller has at hand.

    Accepts a `ListTypes` callable, a mapping of field paths, `None` (metadata lists only), or a
    `ServedResource`-like object: its strategy's `list_types` (attribute or method, as a CRD strategy
    derived from the schema may provide) wins, then the built-in table for `(group, kind)`.
    """
    if target is None:
        return _METADATA_ONLY.get
    if isinstance(target, Mapping):
        return target.get
    strategy = getattr(target, "strategy", None)
    lt = getattr(strategy, "list_types", None) if strategy is not None else None
    if callable(lt):
        lt = lt(target)  # a strategy method: list_types(info) -> mapping | lookup | None
    if isinstance(lt, Mapping):
        return lt.get
    if callable(lt):
        return lt
    if hasattr(target, "group") and hasattr(target, "kind"):
        return builtin_list_types(target.group, target.kind)
    if callable(target):
        return target
    return _METADATA_ONLY.get


# ---- custom resources -------------------------------------------------------------------------
def schema_list_types(schema: Mapping[str, Any] | None) -> dict[FieldPath, ListType]:
    """List types from a CRD's `openAPIV3Schema`: `x-kubernetes-list-type: map|set` (with
    `x-kubernetes-list-map-keys`) become merged lists; every other list is atomic, as are objects
    marked `x-kubernetes-map-type: atomic`. Custom resources
    do not support strategic merge patch, so only the SSA side matters. The object-meta lists
    (finalizers, ownerReferences) are included. Use `.get` of the result as a `ListTypes`."""
    out = dict(_under(("metadata",), _OBJECT_META))
    if isinstance(schema, Mapping):
        _walk_schema(schema, (), out, 0)
    return out


def _walk_schema(s: Mapping[str, Any], path: FieldPath, out: dict[FieldPath, ListType], depth: int) -> None:
    if depth > 64:
        return
    if s.get("type") == "array":
        kind = s.get("x-kubernetes-list-type")
        if kind == "map":
            keys = tuple(str(k) for k in s.get("x-kubernetes-list-map-keys") or ())
            if keys:
                out[path] = ListType("map", keys)
        elif kind == "set":
            out[path] = ListType("set")
        items = s.get("items")
        if isinstance(items, Mapping):
            _walk_schema(items, path, out, depth + 1)
        return
    if s.get("x-kubernetes-map-type") == "atomic" and path:
        out[path] = ATOMIC
        return
    props = s.get("properties")
    if isinstance(props, Mapping):
        for name, sub in props.items():
            if isinstance(sub, Mapping):
                _walk_schema(sub, (*path, str(name)), out, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in s.get(key) or ():
            if isinstance(sub, Mapping):
                _walk_schema(sub, path, out, depth + 1)


def combine(*lookups: ListTypes | Iterable[tuple[FieldPath, ListType]]) -> ListTypes:
    """A lookup answering from the first of `lookups` that knows the path."""
    fns: list[ListTypes] = []
    for lk in lookups:
        if callable(lk):
            fns.append(lk)
        else:
            fns.append(dict(lk).get)

    def lookup(path: FieldPath) -> ListType | None:
        for fn in fns:
            lt = fn(path)
            if lt is not None:
                return lt
        return None

    return lookup
