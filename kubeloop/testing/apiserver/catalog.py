"""The set of resources the emulator serves: built-in kinds plus those of installed CRDs.

The catalog answers lookups for the router (group/version/resource and kind), renders the
discovery documents, and changes live when CRDs come and go.

NOTE: this is the initial contract; the built-in kinds and discovery rendering are filled in
by `kinds/` modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .resources import ResourceInfo

Obj = dict[str, Any]


class Catalog:
    """All served resources, indexed for routing and discovery."""

    def __init__(self, builtins: Iterable[ResourceInfo] = ()) -> None:
        self._by_resource: dict[tuple[str, str, str], ResourceInfo] = {}
        self._by_kind: dict[tuple[str, str, str], ResourceInfo] = {}
        for info in builtins:
            self.add(info)

    def add(self, info: ResourceInfo) -> None:
        self._by_resource[(info.group, info.version, info.resource)] = info
        self._by_kind[(info.group, info.version, info.kind)] = info

    def remove(self, info: ResourceInfo) -> None:
        self._by_resource.pop((info.group, info.version, info.resource), None)
        self._by_kind.pop((info.group, info.version, info.kind), None)

    def lookup(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        return self._by_resource.get((group, version, resource))

    def lookup_kind(self, group: str, version: str, kind: str) -> ResourceInfo | None:
        return self._by_kind.get((group, version, kind))

    def group_exists(self, group: str) -> bool:
        return any(g == group for (g, _v, _r) in self._by_resource)

    def version_exists(self, group: str, version: str) -> bool:
        return any(g == group and v == version for (g, v, _r) in self._by_resource)

    def all(self) -> list[ResourceInfo]:
        return list(self._by_resource.values())

    # CRD lifecycle (called by the registry after a CRD is stored / removed)
    def add_crd(self, crd: Obj) -> None:
        raise NotImplementedError

    def remove_crd(self, crd: Obj) -> None:
        raise NotImplementedError

    # discovery documents
    def version_info(self) -> Obj:
        raise NotImplementedError

    def api_versions(self) -> Obj:
        """`GET /api`."""
        raise NotImplementedError

    def api_group_list(self) -> Obj:
        """`GET /apis`."""
        raise NotImplementedError

    def api_group(self, group: str) -> Obj | None:
        """`GET /apis/<group>`; None when unknown."""
        raise NotImplementedError

    def resource_list(self, group: str, version: str) -> Obj | None:
        """`GET /api/v1` or `GET /apis/<group>/<version>`; None when unknown."""
        raise NotImplementedError


def default_catalog() -> Catalog:
    """A catalog with every built-in kind the emulator models."""
    from .resources import Strategy

    return Catalog([
        ResourceInfo("", "v1", "namespaces", "Namespace", False, short_names=("ns",),
                     subresources=frozenset({"status"}), strategy=Strategy()),
        ResourceInfo("", "v1", "configmaps", "ConfigMap", True, short_names=("cm",), strategy=Strategy()),
    ])
