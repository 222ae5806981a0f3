"""`TrackedClient`: the client a reconcile gets, which tells the write tracker about every write.

It wraps a `kubeloop.client.Client` for one cluster: writes (create, replace, patch, apply,
delete and the status variants) go to the server as usual and are recorded in the controller's
`WriteTracker` (read your own writes, own-event filtering); everything else (get, list, watch,
resolve, ...) is passed straight through.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from kubeloop.client import Client, ResourceRef
from kubeloop.client.resources import ResourceLike
from kubeloop.controller.readyourwrites import ObjectKey, WriteTracker
from kubeloop.meta import name_of, namespace_of, resource_version_of, uid_of

CacheLookup = Callable[[ObjectKey], Mapping[str, Any] | None]
"""key -> the cached object (None: not cached, or no cache for that kind)."""


class TrackedClient:
    """A `Client` for one cluster whose writes are recorded for read-your-writes."""

    def __init__(
        self,
        client: Client,
        cluster: str,
        tracker: WriteTracker | None,
        lookup: CacheLookup,
        owner: Hashable | None = None,
    ) -> None:
        self.client = client
        self.cluster = cluster
        self.tracker = tracker
        self._lookup = lookup
        self.owner = owner

    def __getattr__(self, name: str) -> Any:
        """Reads and anything else: the wrapped client's."""
        return getattr(self.client, name)

    # ------------------------------------------------------------------ keys

    async def object_key(self, resource: ResourceLike, name: str, namespace: str | None) -> ObjectKey:
        """The tracker key of an object named through a resource reference."""
        res = await self.client.resolve(resource)
        ns = (namespace or self.client.default_namespace) if res.namespaced else ""
        return (self.cluster, res.group, res.kind, ns, name)

    async def _key_of(self, obj: Mapping[str, Any], namespace: str | None) -> ObjectKey:
        return await self.object_key(ResourceRef.of(obj), name_of(obj) or "",
                                     namespace_of(obj) or namespace)

    async def _tracked(self, key: ObjectKey, call: Any, *, dry_run: bool = False, uid: str | None = None) -> Any:
        tracker = self.tracker
        if tracker is None or dry_run or not key[4]:
            return await call
        cached = self._lookup(key)
        prior = tracker.prior_rv(key, resource_version_of(cached))
        w = tracker.begin(key, prior, owner=self.owner, uid=uid or uid_of(cached))
        try:
            result = await call
        except BaseException:
            tracker.fail(w)
            raise
        tracker.finish(w, result if isinstance(result, Mapping) else None)
        return result

    # ------------------------------------------------------------------ writes

    async def create(self, obj: Mapping[str, Any], *, namespace: str | None = None, dry_run: bool = False,
                     **kwargs: Any) -> dict[str, Any]:
        """POST a new object (recorded)."""
        if not name_of(obj):  # generateName: the key is known only afterwards
            return await self.client.create(obj, namespace=namespace, dry_run=dry_run, **kwargs)
        key = await self._key_of(obj, namespace)
        return await self._tracked(key, self.client.create(obj, namespace=namespace, dry_run=dry_run, **kwargs),
                                   dry_run=dry_run)

    async def replace(self, obj: Mapping[str, Any], *, namespace: str | None = None, dry_run: bool = False,
                      **kwargs: Any) -> dict[str, Any]:
        """PUT the object (recorded)."""
        key = await self._key_of(obj, namespace)
        return await self._tracked(key, self.client.replace(obj, namespace=namespace, dry_run=dry_run, **kwargs),
                                   dry_run=dry_run)

    async def patch(self, resource: ResourceLike, name: str, patch: Mapping[str, Any] | Sequence[Any] | bytes,
                    *, namespace: str | None = None, dry_run: bool = False, **kwargs: Any) -> dict[str, Any]:
        """PATCH the object (recorded)."""
        key = await self.object_key(resource, name, namespace)
        return await self._tracked(key, self.client.patch(resource, name, patch, namespace=namespace,
                                                          dry_run=dry_run, **kwargs),
                                   dry_run=dry_run)

    async def apply(self, obj: Mapping[str, Any], *, field_manager: str, namespace: str | None = None,
                    dry_run: bool = False, **kwargs: Any) -> dict[str, Any]:
        """Server-side apply (recorded)."""
        key = await self._key_of(obj, namespace)
        return await self._tracked(key, self.client.apply(obj, field_manager=field_manager, namespace=namespace,
                                                          dry_run=dry_run, **kwargs),
                                   dry_run=dry_run)

    async def delete(self, resource: ResourceLike, name: str, *, namespace: str | None = None,
                     dry_run: bool = False, **kwargs: Any) -> dict[str, Any]:
        """DELETE the object (recorded: a read of it then sees it gone, or terminating)."""
        key = await self.object_key(resource, name, namespace)
        return await self._tracked(key, self.client.delete(resource, name, namespace=namespace, dry_run=dry_run,
                                                           **kwargs),
                                   dry_run=dry_run)

    async def replace_status(self, obj: Mapping[str, Any], *, namespace: str | None = None,
                             **kwargs: Any) -> dict[str, Any]:
        """PUT ``<object>/status`` (recorded)."""
        return await self.replace(obj, namespace=namespace, subresource="status", **kwargs)

    async def patch_status(self, resource: ResourceLike, name: str, patch: Mapping[str, Any] | Sequence[Any] | bytes,
                           *, namespace: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """PATCH ``<object>/status`` (recorded)."""
        return await self.patch(resource, name, patch, namespace=namespace, subresource="status", **kwargs)

    async def apply_status(self, obj: Mapping[str, Any], *, field_manager: str, namespace: str | None = None,
                           **kwargs: Any) -> dict[str, Any]:
        """Server-side apply to ``<object>/status`` (recorded)."""
        return await self.apply(obj, field_manager=field_manager, namespace=namespace, subresource="status",
                                **kwargs)
