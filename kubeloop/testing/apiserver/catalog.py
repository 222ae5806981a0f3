"""The set of resources the emulator serves: built-in kinds plus those of installed CRDs.

The catalog answers lookups for the router (group/version/resource and kind), renders the
discovery documents, and changes live when CRDs come and go (`add_crd` / `remove_crd`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .resources import SUBRESOURCE_VERBS, ServedResource, Subresource
from .shapes import Obj

VERSION_INFO: Obj = {
    "major": "1", "minor": "24", "gitVersion": "v1.24.0", "gitCommit": "4ce5a8954017644c5420bae81d72b09b735c21f0",
    "gitTreeState": "clean", "buildDate": "2022-05-03T13:38:19Z", "goVersion": "go1.18.1", "compiler": "gc",
    "platform": "linux/amd64",
}

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for kube-like versions: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > others (alphabetical)."""
    mt = _KUBE_VERSION.match(version)
    if not mt:
        return (3, 0, 0, version)
    major = int(mt.group(1))
    stage = {None: 0, "beta": 1, "alpha": 2}[mt.group(2)]
    minor = int(mt.group(3) or 0)
    return (stage, -major, -minor, version)


class Catalog:
    """All served resources, indexed for routing and discovery."""

    def __init__(self, builtins: Iterable[ServedResource] = (), server_address: str = "127.0.0.1:6443") -> None:
        self._by_resource: dict[tuple[str, str, str], ServedResource] = {}
        self._by_kind: dict[tuple[str, str, str], ServedResource] = {}
        self._crds: dict[str, list[ServedResource]] = {}
        self._builtin_groups: list[str] = []
        #: what `/api` reports in serverAddressByClientCIDRs; the server sets it once it listens
        self.server_address = server_address
        for info in builtins:
            self.add(info)
            if info.group and info.group not in self._builtin_groups:
                self._builtin_groups.append(info.group)

    def add(self, info: ServedResource) -> None:
        self._by_resource[(info.group, info.version, info.resource)] = info
        self._by_kind[(info.group, info.version, info.kind)] = info

    def remove(self, info: ServedResource) -> None:
        if self._by_resource.get((info.group, info.version, info.resource)) is info:
            del self._by_resource[(info.group, info.version, info.resource)]
        if self._by_kind.get((info.group, info.version, info.kind)) is info:
            del self._by_kind[(info.group, info.version, info.kind)]

    def lookup(self, group: str, version: str, resource: str) -> ServedResource | None:
        return self._by_resource.get((group, version, resource))

    def lookup_kind(self, group: str, version: str, kind: str) -> ServedResource | None:
        return self._by_kind.get((group, version, kind))

    def group_exists(self, group: str) -> bool:
        return any(g == group for (g, _v, _r) in self._by_resource)

    def version_exists(self, group: str, version: str) -> bool:
        return any(g == group and v == version for (g, v, _r) in self._by_resource)

    def all(self) -> list[ServedResource]:
        return list(self._by_resource.values())

    def sharing_storage(self, info: ServedResource) -> list[ServedResource]:
        """Every served resource that stores its objects where `info` does (all versions of a CRD,
        core/v1 and events.k8s.io/v1 Events), `info` included."""
        key = info.storage_key
        return [i for i in self._by_resource.values() if i.storage_key == key]

    # CRD lifecycle (called by the registry after a CRD is stored / removed) ------------------------
    def add_crd(self, crd: Obj) -> list[ServedResource]:
        """Serve (or re-serve after an update) the served versions of `crd`; returns their infos."""
        from .kinds.builtins import storage_version_hash
        from .kinds.crd import storage_version
        from .kinds.custom import CustomResourceStrategy

        name = str((crd.get("metadata") or {}).get("name") or "")
        self.remove_crd(crd)
        spec = crd.get("spec") or {}
        group = str(spec.get("group") or "")
        names = spec.get("names") or {}
        plural, kind = str(names.get("plural") or ""), str(names.get("kind") or "")
        singular = str(names.get("singular") or kind.lower())
        namespaced = spec.get("scope") != "Cluster"
        stored_version = storage_version(crd)
        webhook = ((spec.get("conversion") or {}).get("strategy")) == "Webhook"
        infos: list[ServedResource] = []
        for v in spec.get("versions") or []:
            if not isinstance(v, dict) or not v.get("served"):
                continue
            version = str(v.get("name") or "")
            subs = v.get("subresources") or {}
            subresources = {s for s in ("status", "scale") if isinstance(subs.get(s), dict)}
            scale = subs.get("scale") if isinstance(subs.get("scale"), dict) else None
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            strategy = CustomResourceStrategy(group, version, kind, schema if isinstance(schema, dict) else None,
                                              scale, stored_version, webhook)
            info = ServedResource(
                group, version, plural, kind, namespaced, singular=singular,
                short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
                subresources=frozenset(subresources), storage=f"crd:{group}/{plural}", strategy=strategy,
                storage_version_hash=storage_version_hash(group, stored_version, kind), crd_name=name,
            )
            self.add(info)
            infos.append(info)
        self._crds[name] = infos
        return infos

    def remove_crd(self, crd: Obj) -> None:
        """Stop serving the resources of `crd` (after it is finally deleted)."""
        name = str((crd.get("metadata") or {}).get("name") or "")
        for info in self._crds.pop(name, []):
            self.remove(info)

    def served_crd_names(self) -> list[str]:
        """The names of the CRDs whose versions are served (what the OpenAPI documents include)."""
        return sorted(self._crds)

    def names_conflict(self, crd: Obj) -> str | None:
        """What kube-apiserver's naming controller would refuse: a plural, singular, kind, listKind or
        short name of `crd` already used by another resource of the same group (None: no conflict)."""
        spec = crd.get("spec") or {}
        group = str(spec.get("group") or "")
        name = str((crd.get("metadata") or {}).get("name") or "")
        names = spec.get("names") or {}
        others = [i for i in self._by_resource.values() if i.group == group and i.crd_name != name]
        used_resources = {i.resource for i in others} | {i.singular for i in others if i.singular}
        used_kinds = {i.kind for i in others} | {i.list_kind for i in others}
        used_short = {s for i in others for s in i.short_names}
        for key in ("plural", "singular"):
            value = names.get(key)
            if value and value in used_resources:
                return f'"{value}" is already in use'
        for value in names.get("shortNames") or []:
            if value in used_short or value in used_resources:
                return f'"{value}" is already in use'
        for key in ("kind", "listKind"):
            value = names.get(key)
            if value and value in used_kinds:
                return f'"{value}" is already in use'
        return None

    def crd_resources(self, crd_name: str) -> list[ServedResource]:
        return list(self._crds.get(crd_name, []))

    # discovery documents ---------------------------------------------------------------------------
    def version_info(self) -> Obj:
        """`GET /version`."""
        return dict(VERSION_INFO)

    def api_versions(self) -> Obj:
        """`GET /api`."""
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.server_address}]}

    def _groups(self) -> list[str]:
        present = {g for (g, _v, _r) in self._by_resource if g}
        ordered = [g for g in self._builtin_groups if g in present]
        from .kinds.builtins import GROUP_VERSIONS

        order = list(GROUP_VERSIONS)
        ordered.sort(key=lambda g: order.index(g) if g in order else len(order))
        custom = sorted(present - set(ordered))
        return ordered + custom

    def _group_doc(self, group: str) -> Obj | None:
        from .kinds.builtins import GROUP_VERSIONS

        # a built-in group lists its versions in kube-apiserver's order (autoscaling: v2, v1, v2beta1,
        # v2beta2), a CRD's group by version priority
        order = GROUP_VERSIONS.get(group, ())
        versions = sorted({v for (g, v, _r) in self._by_resource if g == group},
                          key=lambda v: (order.index(v) if v in order else len(order), version_priority(v)))
        if not versions:
            return None
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": entries, "preferredVersion": dict(entries[0])}

    def api_group_list(self) -> Obj:
        """`GET /apis`."""
        groups = [doc for g in self._groups() if (doc := self._group_doc(g)) is not None]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group: str) -> Obj | None:
        """`GET /apis/<group>`; None when unknown."""
        doc = self._group_doc(group) if group else None
        if doc is None:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **doc}

    def resource_list(self, group: str, version: str) -> Obj | None:
        """`GET /api/v1` or `GET /apis/<group>/<version>`; None when unknown."""
        infos = [i for (g, v, _r), i in self._by_resource.items() if g == group and v == version]
        if not infos:
            return None
        resources: list[Obj] = []
        for info in infos:
            resources.append(resource_entry(info))
            for sub in sorted(info.subresources):
                resources.append(subresource_entry(info, sub))
        resources.sort(key=lambda e: e["name"])
        doc: Obj = {"kind": "APIResourceList", "groupVersion": f"{group}/{version}" if group else version,
                    "resources": resources}
        if group:
            doc["apiVersion"] = "v1"
        return doc


def resource_entry(info: ServedResource) -> Obj:
    """One `APIResource` of a discovery document."""
    entry: Obj = {"name": info.resource, "singularName": info.singular, "namespaced": info.namespaced,
                  "kind": info.kind, "verbs": list(info.verbs)}
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if info.categories:
        entry["categories"] = list(info.categories)
    if info.storage_version_hash:
        entry["storageVersionHash"] = info.storage_version_hash
    return entry


def subresource_entry(info: ServedResource, sub: str) -> Obj:
    spec = dict(info.subresource_specs).get(sub)
    if spec is None and sub == "scale":
        spec = Subresource(kind="Scale", group="autoscaling", version="v1")
    entry: Obj = {"name": f"{info.resource}/{sub}", "singularName": "", "namespaced": info.namespaced,
                  "kind": info.kind, "verbs": ["update"] if sub == "finalize" else list(SUBRESOURCE_VERBS)}
    if spec is not None:
        entry["verbs"] = list(spec.verbs)
        if spec.group is not None:
            entry["group"] = spec.group
        if spec.version is not None:
            entry["version"] = spec.version
        entry["kind"] = spec.kind or info.kind
    return entry


def default_catalog() -> Catalog:
    """A catalog with every built-in kind the emulator models."""
    from .kinds.builtins import builtin_resources

    return Catalog(builtin_resources())
