"""How a caller names a kind (`ResourceRef`) and what discovery says about it (`ApiResource`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_CORE_VERSION = re.compile(r"v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?")
"""What a Kubernetes API version looks like (the first part of a core-group ref: "v1")."""


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """A group/version plus a kind (`"ConfigMap"`) or a plural resource name (`"configmaps"`).

    Written as `"v1/ConfigMap"`, `"apps/v1/Deployment"`, `"example.com/v1/Widget"`; the core group is "".
    """

    group: str
    version: str
    name: str  # a Kind (has an upper-case letter) or a plural resource name

    @classmethod
    def parse(cls, text: str) -> ResourceRef:
        parts = text.strip().split("/")
        if len(parts) == 2 and all(parts):
            if not _CORE_VERSION.fullmatch(parts[0]):
                # "batch/Job": a group without its version, not the core group's version "batch".
                raise ValueError(f"resource {text!r} has no version: write 'group/version/Kind' "
                                 f"(e.g. '{parts[0]}/v1/{parts[1]}'), or 'v1/Kind' for the core group")
            return cls("", parts[0], parts[1])
        if len(parts) == 3 and all(parts):
            return cls(parts[0], parts[1], parts[2])
        raise ValueError(f"resource {text!r} is not 'version/Kind' or 'group/version/Kind' (e.g. 'apps/v1/Deployment')")

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> ResourceRef:
        """The ref of an object from its `apiVersion` and `kind`."""
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not api_version or not kind:
            raise ValueError("object has no apiVersion/kind")
        group, _, version = str(api_version).rpartition("/")
        return cls(group, version, str(kind))

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}/{self.name}"


@dataclass(frozen=True, slots=True)
class ApiResource:
    """One served resource as discovery describes it (what the client needs to build URLs)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    verbs: frozenset[str] = frozenset()
    subresources: frozenset[str] = frozenset()
    singular: str = ""
    short_names: tuple[str, ...] = ()
    list_kind: str = field(default="", compare=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(self.group, self.version, self.kind)

    @property
    def base_path(self) -> str:
        """`/api/v1` or `/apis/<group>/<version>`."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The URL path of the collection, an object, or an object's subresource."""
        p = self.base_path
        if namespace and self.namespaced:
            p += f"/namespaces/{namespace}"
        p += f"/{self.plural}"
        if name is not None:
            p += f"/{name}"
            if subresource:
                p += f"/{subresource}"
        return p

    def __str__(self) -> str:
        return f"{self.api_version}/{self.kind}"


ResourceLike = str | ResourceRef | ApiResource
"""What every client method accepts as `resource`."""
