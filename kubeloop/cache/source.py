"""`ClientSource`: the `WatchSource` an informer uses, backed by `kubeloop.client.Client`.

One source is bound to one scope (resource, namespace, selectors, metadata-only). It resolves the
resource through discovery on every call (cached by the client's RESTMapper, refreshed on a miss),
so a kind whose CRD is not installed yet fails with `UnknownResource` (the watcher waits and polls
with backoff) and starts working as soon as discovery serves it.

Failures are reported to an optional `on_error(verb, exc)` hook before being re-raised, and
successes to `on_success()`, so the informer can log a 403 loudly with the server's message (which
names the missing permission) and track readiness.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import orjson

from kubeloop.client.client import ALL_NAMESPACES, Client
from kubeloop.client.resources import ApiResource, ResourceLike
from kubeloop.watch.source import CONNECTED, ListPage, RawEvent

__all__ = ["ClientSource"]

ACCEPT_JSON = "application/json"
ACCEPT_META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
ACCEPT_META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


class ClientSource:
    """List pages and watch streams of one scope through a `Client` (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        resource: ResourceLike,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        on_error: Callable[[str, BaseException], None] | None = None,
        on_success: Callable[[], None] | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace or None
        self.label_selector = label_selector or None
        self.field_selector = field_selector or None
        self.metadata_only = metadata_only
        self.on_error = on_error
        self.on_success = on_success
        self.api_resource: ApiResource | None = resource if isinstance(resource, ApiResource) else None

    async def _resolve(self) -> ApiResource:
        res = await self.client.resolve(self.resource)
        self.api_resource = res
        return res

    def _params(self) -> dict[str, str]:
        params: dict[str, str] = {}
        if self.label_selector:
            params["labelSelector"] = self.label_selector
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        return params

    def _failed(self, verb: str, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(verb, exc)

    async def list_page(
        self,
        *,
        limit: int | None,
        continue_token: str | None,
        resource_version: str | None,
        resource_version_match: str | None,
    ) -> ListPage:
        """One LIST page (decoded with one `orjson.loads`; items get `kind`/`apiVersion`)."""
        try:
            res = await self._resolve()
            params = self._params()
            if limit:
                params["limit"] = str(limit)
            if continue_token:
                params["continue"] = continue_token
            else:
                if resource_version is not None:
                    params["resourceVersion"] = resource_version
                if resource_version_match is not None:
                    params["resourceVersionMatch"] = resource_version_match
            path = res.path(self.namespace if res.namespaced else None)
            accept = ACCEPT_META_LIST if self.metadata_only else ACCEPT_JSON
            _, data = await self.client.transport.request("GET", path, params=params, accept=accept)
        except Exception as exc:
            self._failed("list", exc)
            raise
        body = orjson.loads(data)
        meta = body.get("metadata") or {}
        items: list[dict[str, Any]] = body.get("items") or []
        list_kind: str = body.get("kind") or ""
        if items and list_kind.endswith("List"):
            kind, api_version = list_kind[:-4], body.get("apiVersion") or ""
            for item in items:
                if "kind" not in item:
                    item["kind"] = kind
                    item["apiVersion"] = api_version
        if self.on_success is not None:
            self.on_success()
        return ListPage(items, str(meta.get("resourceVersion") or ""), meta.get("continue") or None)

    async def watch(
        self,
        *,
        resource_version: str | None,
        resource_version_match: str | None,
        timeout_seconds: int,
        allow_bookmarks: bool,
        send_initial_events: bool,
    ) -> AsyncGenerator[RawEvent, None]:
        """One WATCH: yields CONNECTED once the server said 200, then the events in batches."""
        try:
            res = await self._resolve()
            stream = self.client.watch(
                res,
                namespace=self.namespace if self.namespace else ALL_NAMESPACES,
                resource_version=resource_version,
                allow_bookmarks=allow_bookmarks,
                timeout_seconds=timeout_seconds,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
                send_initial_events=send_initial_events,
                metadata_only=self.metadata_only,
            )
            await stream.open()
        except Exception as exc:
            self._failed("watch", exc)
            raise
        try:
            if self.on_success is not None:
                self.on_success()
            yield RawEvent(CONNECTED, None)
            while True:
                batch = await stream.batches()
                if not batch:
                    return
                for ev in batch:
                    yield RawEvent(ev.type, ev.object)
        finally:
            await stream.aclose()
