"""`Client`: the async Kubernetes API client every other kubeloop layer talks through.

Resources are named by short strings (`"v1/ConfigMap"`, `"apps/v1/Deployment"`) and resolved through
discovery; objects are plain dicts in and out (any `Mapping` is accepted in). Namespaces:

- `namespace=None` means the client's default namespace (from the kubeconfig context or the pod);
- `namespace=ALL_NAMESPACES` (`""`) means every namespace, for `list`, `list_page(s)` and `watch`;
- for cluster-scoped resources the namespace is ignored.

One module of ~500 lines on purpose: it is the client's public surface, one short method per REST
verb, all funnelled through `_write` (write hooks) and the transport; the parts with logic of their
own (discovery, watch streams, options, errors, retries) are their own modules.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Unpack

import aiohttp
import orjson

from kubeloop.client._list_stream import ListStream
from kubeloop.client._mapper import RESTMapper
from kubeloop.client._objects import ObjectList, Page, dumps
from kubeloop.client._options import ListKeywords, ListOptions
from kubeloop.client._resources import ApiResource, ResourceLike, ResourceRef
from kubeloop.client._transport import Transport, TransportOptions
from kubeloop.client._watch import WatchStream
from kubeloop.client._watch_event import WatchEvent
from kubeloop.config import ClusterConfig, load_config, load_in_cluster
from kubeloop.meta import (
    FieldSelectorLike,
    LabelSelectorLike,
    as_field_selector,
    as_label_selector,
    name_of,
    namespace_of,
)

ALL_NAMESPACES = ""
"""Pass as `namespace=` to list or watch across all namespaces."""

PatchType = Literal["merge", "json", "strategic", "apply"]
PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
ACCEPT_JSON = "application/json"
ACCEPT_META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
ACCEPT_META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

def format_label_selector(selector: LabelSelectorLike | None) -> str | None:
    """A label selector as the query string wants it: text as is (the server validates it), a Mapping
    in canonical form (:func:`kubeloop.meta.as_label_selector`), anything else as its ``str()``."""
    if selector is None or isinstance(selector, str):
        return selector
    return str(as_label_selector(selector) if isinstance(selector, Mapping) else selector)


def format_field_selector(selector: FieldSelectorLike | None) -> str | None:
    """A field selector as the query string wants it: text as is, a Mapping in canonical form (values
    escaped), anything else as its ``str()``."""
    if selector is None or isinstance(selector, str):
        return selector
    return str(as_field_selector(selector) if isinstance(selector, Mapping) else selector)


def _loads(data: bytes) -> dict[str, Any]:
    if not data:
        return {}
    doc = orjson.loads(data)
    return doc if isinstance(doc, dict) else {"value": doc}


def _selector_params(label_selector: LabelSelectorLike | None,
                     field_selector: FieldSelectorLike | None) -> dict[str, str]:
    """The `labelSelector`/`fieldSelector` query parameters (absent when empty)."""
    params: dict[str, str] = {}
    ls, fs = format_label_selector(label_selector), format_field_selector(field_selector)
    if ls:
        params["labelSelector"] = ls
    if fs:
        params["fieldSelector"] = fs
    return params


WriteVerb = Literal["create", "update", "patch", "delete", "deletecollection", "request"]


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """A write the client is about to send, as a write hook sees it.

    ``resource`` is None for `Client.request_json`; ``name`` is "" when the object is known only
    from the answer (``generateName``, collections, ``request_json``); ``namespace`` is "" for
    cluster-scoped resources (and when unknown).
    """

    verb: WriteVerb
    method: str
    path: str
    resource: ApiResource | None
    namespace: str
    name: str
    subresource: str | None
    dry_run: bool


WriteDone = Callable[[dict[str, Any] | None], None]
"""Called once the write ended: with the server's answer, or None if it failed (or was cancelled)."""

WriteHook = Callable[[WriteRequest], WriteDone | None]
"""Called before every write a client sends; may return a `WriteDone` to hear how it ended."""

_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Client:
    """Async client for one cluster. Use as `async with Client(config) as client:` (or call `close()`).

    Keyword options (`TransportOptions`, defaults in `Transport`): `qps`/`burst`: client-side token
    bucket (default 50/100; `qps=None` disables it). `timeout`: seconds for every request except
    watches (default 30; watches take `inactivity_timeout`). `retry`: retry policy for
    429/5xx/connection errors (see `kubeloop.client._retry`). `user_agent`, `connection_limit`
    (pooled connections for ordinary requests, default 100), `trust_env` (proxy variables).
    `compression`: ask for gzip-compressed responses (default: not from a server on this host or
    from inside the cluster, where the server's compressing costs more than the bytes it saves;
    see `kubeloop.client._transport.nearby`).
    """

    def __init__(self, config: ClusterConfig, **options: Unpack[TransportOptions]) -> None:
        self.config = config
        self.transport = Transport(config, **options)
        self.mapper = RESTMapper(self._get_json)
        self.write_hooks: tuple[WriteHook, ...] = ()
        self._owns_transport = True

    def with_write_hook(self, hook: WriteHook) -> Client:
        """A client sharing this one's connections and discovery whose every write also calls ``hook``.

        Every write path (create, replace, patch, apply, delete, delete_collection, the status
        variants and `request_json` with a writing method) calls ``hook(WriteRequest)`` before
        sending and the `WriteDone` it returns after, so a caller (read-your-writes) sees all of
        them without wrapping the client. Closing the derived client leaves the connections open:
        they belong to the original.
        """
        derived = object.__new__(type(self))
        derived.__dict__.update(self.__dict__)
        derived.write_hooks = (*self.write_hooks, hook)
        derived._owns_transport = False
        return derived

    # -- construction and lifetime --------------------------------------------------------------

    @classmethod
    async def from_kubeconfig(cls, path: str | None = None, context: str | None = None, *,
                              namespace: str | None = None, **options: Unpack[TransportOptions]) -> Client:
        """A client from kubeconfig (explicit path, else KUBECONFIG, in-cluster, ~/.kube/config).

        Credentials are fetched once here (an exec plugin runs now), so a broken configuration raises
        `ConfigError` at start-up.
        """
        client = cls(load_config(path, context=context, namespace=namespace), **options)
        await client.transport.check()
        return client

    @classmethod
    def in_cluster(cls, **options: Unpack[TransportOptions]) -> Client:
        """A client for the cluster this pod runs in (service-account credentials)."""
        return cls(load_in_cluster(), **options)

    @property
    def default_namespace(self) -> str:
        return self.config.namespace

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every pooled connection (open watches included); a no-op on a `with_write_hook` copy."""
        if self._owns_transport:
            await self.transport.close()

    # -- discovery ------------------------------------------------------------------------------

    async def _get_json(self, path: str) -> dict[str, Any]:
        _, data = await self.transport.request("GET", path)
        return _loads(data)

    async def resolve(self, resource: ResourceLike) -> ApiResource:
        """Discovery information for `resource` (cached; refreshed once on a miss)."""
        return await self.mapper.resolve(resource)

    async def request_json(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                           body: Any = None, content_type: str = "application/json") -> dict[str, Any]:
        """Escape hatch: any API path, JSON in and out, with the client's auth, retries and errors."""
        raw = None if body is None else (body if isinstance(body, bytes) else dumps(body))
        ctype = content_type if raw is not None else None
        if method.upper() in _WRITE_METHODS:
            dry = (params or {}).get("dryRun") == "All"
            target = WriteRequest("request", method.upper(), path, None, "", "", None, dry)
            return await self._write(target, params=params, body=raw, content_type=ctype)
        _, data = await self.transport.request(method, path, params=params, body=raw, content_type=ctype)
        return _loads(data)

    async def _write(self, target: WriteRequest, *, params: Mapping[str, str] | None, body: bytes | None,
                     content_type: str | None) -> dict[str, Any]:
        """Send one write, calling the write hooks around it (the single place every write goes through)."""
        hooks = self.write_hooks
        if not hooks:
            _, data = await self.transport.request(target.method, target.path, params=params, body=body,
                                                   content_type=content_type)
            return _loads(data)
        done: list[WriteDone] = []
        try:
            for hook in hooks:
                d = hook(target)
                if d is not None:
                    done.append(d)
            _, data = await self.transport.request(target.method, target.path, params=params, body=body,
                                                   content_type=content_type)
            result = _loads(data)
        except BaseException:
            for d in done:  # a failed (or cancelled) write: the hooks that began hear it ended
                d(None)
            raise
        for d in done:
            d(result)
        return result

    def _target(self, verb: WriteVerb, method: str, res: ApiResource, namespace: str | None, name: str,
                subresource: str | None, dry_run: bool) -> WriteRequest:
        return WriteRequest(verb, method, res.path(namespace, name or None, subresource), res, namespace or "",
                            name, subresource, dry_run)

    # -- helpers --------------------------------------------------------------------------------

    def _namespace(self, res: ApiResource, namespace: str | None, *, allow_all: bool = False) -> str | None:
        if not res.namespaced:
            return None
        if namespace is None:
            return self.config.namespace
        if namespace == ALL_NAMESPACES:
            if allow_all:
                return None
            raise ValueError(f"{res} is namespaced: this operation needs a namespace, not all namespaces")
        return namespace

    def _object_target(self, res: ApiResource, obj: Mapping[str, Any], namespace: str | None) -> str | None:
        obj_ns = namespace_of(obj)
        if res.namespaced and obj_ns and namespace and obj_ns != namespace:
            raise ValueError(f"object namespace {obj_ns!r} differs from namespace={namespace!r}")
        return self._namespace(res, obj_ns or namespace)

    @staticmethod
    def _write_params(dry_run: bool, field_manager: str | None, force: bool | None = None,
                      field_validation: str | None = None) -> dict[str, str]:
        params: dict[str, str] = {}
        if dry_run:
            params["dryRun"] = "All"
        if field_manager:
            params["fieldManager"] = field_manager
        if force is not None:
            params["force"] = "true" if force else "false"
        if field_validation:
            params["fieldValidation"] = field_validation
        return params

    @staticmethod
    def _name_of(obj: Mapping[str, Any]) -> str:
        name = name_of(obj)
        if name is None:
            raise ValueError("object has no metadata.name")
        return name

    # -- reads ----------------------------------------------------------------------------------

    async def get(self, resource: ResourceLike, name: str, *, namespace: str | None = None,
                  subresource: str | None = None, metadata_only: bool = False) -> dict[str, Any]:
        """One object (or its subresource). Raises `NotFound` and friends."""
        res = await self.resolve(resource)
        path = res.path(self._namespace(res, namespace), name, subresource)
        _, data = await self.transport.request("GET", path, accept=ACCEPT_META if metadata_only else ACCEPT_JSON)
        return _loads(data)

    async def list_page(self, resource: ResourceLike, options: ListOptions | None = None, *,
                        continue_token: str | None = None, fill_kind: bool = True,
                        **keywords: Unpack[ListKeywords]) -> Page:
        """One LIST request (`options` and/or the same fields as keywords): the first page, or the
        page after `continue_token` (the API forbids resourceVersion with continue, so those are only
        sent for the first page). A `Gone` error means the continue token expired: start over.
        `fill_kind` sets `kind`/`apiVersion` on items lacking them, as client-go's dynamic client does.

        The client-side rate limiter charges a LIST once, at its first page: continued pages are
        part of the same list, paced by the server. (client-go charges every page; at the default
        50 QPS, a quorum read of 100,000 objects in pages of 100 would be throttled to ~20 s.)"""
        opts = ListOptions.merged(options, keywords)
        res = await self.resolve(resource)
        path = res.path(self._namespace(res, opts.namespace, allow_all=True))
        accept = ACCEPT_META_LIST if opts.metadata_only else ACCEPT_JSON
        _, data = await self.transport.request("GET", path, params=self._list_params(opts, continue_token),
                                               accept=accept, throttle=not continue_token)
        body = orjson.loads(data)
        meta = body.get("metadata") or {}
        items = body.get("items") or []
        list_kind, api_version = body.get("kind", ""), body.get("apiVersion", "")
        if fill_kind and items and list_kind.endswith("List"):
            kind = list_kind[:-4]
            for item in items:
                if "kind" not in item:
                    item["kind"] = kind
                    item["apiVersion"] = api_version
        return Page(items, str(meta.get("resourceVersion", "")), meta.get("continue") or None,
                    meta.get("remainingItemCount"), list_kind, api_version)

    @staticmethod
    def _list_params(opts: ListOptions, continue_token: str | None) -> dict[str, str]:
        """A LIST's query: selectors, `limit`, and `continue` or the resourceVersion asked for."""
        params = _selector_params(opts.label_selector, opts.field_selector)
        if opts.limit:
            params["limit"] = str(opts.limit)
        if continue_token:
            params["continue"] = continue_token
        else:
            if opts.resource_version is not None:
                params["resourceVersion"] = opts.resource_version
            if opts.resource_version_match is not None:
                params["resourceVersionMatch"] = opts.resource_version_match
        return params

    def list_stream(self, resource: ResourceLike, options: ListOptions | None = None, *,
                    continue_token: str | None = None, fill_kind: bool = True,
                    **keywords: Unpack[ListKeywords]) -> ListStream:
        """One LIST request read item by item as it arrives (`ListStream`): what `list_page` asks,
        for a caller that stores each object while the rest is on the wire; use
        ``async with client.list_stream(...) as s:`` and ``await s.batches()`` until it returns [].

        A list served from the watch cache (``resource_version="0"``) is one response whatever
        its size; this reads it without holding it whole, bytes or objects."""
        opts = ListOptions.merged(options, keywords)
        accept = ACCEPT_META_LIST if opts.metadata_only else ACCEPT_JSON
        params = self._list_params(opts, continue_token)
        stream: ListStream

        async def opener() -> aiohttp.ClientResponse:
            res = await self.resolve(resource)
            if fill_kind:
                stream.set_kind(res.kind, res.api_version)
            path = res.path(self._namespace(res, opts.namespace, allow_all=True))
            return await self.transport.open_stream(path, params=params, accept=accept, watch=False,
                                                    throttle=not continue_token)

        stream = ListStream(opener)
        return stream

    async def list_pages(self, resource: ResourceLike, options: ListOptions | None = None, *,
                         fill_kind: bool = True, **keywords: Unpack[ListKeywords]) -> AsyncIterator[Page]:
        """LIST page by page (`limit` items each, following `continue`); see `list_page`."""
        opts = ListOptions.merged(options, keywords)
        token: str | None = None
        while True:
            page = await self.list_page(resource, opts, continue_token=token, fill_kind=fill_kind)
            yield page
            token = page.continue_token
            if not token:
                return

    async def list(self, resource: ResourceLike, options: ListOptions | None = None,
                   **keywords: Unpack[ListKeywords]) -> ObjectList:
        """Every matching object (all pages). `namespace=ALL_NAMESPACES` lists across namespaces."""
        items: builtins.list[dict[str, Any]] = []
        rv, kind, api_version = "", "", ""
        async for page in self.list_pages(resource, ListOptions.merged(options, keywords)):
            items.extend(page.items)
            rv, kind, api_version = page.resource_version, page.kind, page.api_version
        return ObjectList(items, rv, kind, api_version)

    def watch(
        self,
        resource: ResourceLike,
        options: ListOptions | None = None,
        *,
        allow_bookmarks: bool = True,
        timeout_seconds: int | None = None,
        send_initial_events: bool = False,
        inactivity_timeout: float | None = None,
        **keywords: Unpack[ListKeywords],
    ) -> WatchStream:
        """A watch as an async iterator of `WatchEvent`s; use `async with client.watch(...) as w:`.

        What it selects: `options` and/or the same fields as keywords (`limit` does not apply).
        ERROR events (e.g. 410 Expired) are yielded, not raised: `event.error()` gives the typed
        error. `send_initial_events=True` asks for a streaming list (sets resourceVersionMatch=
        NotOlderThan and bookmarks, as the API requires). `inactivity_timeout` closes a watch that
        received nothing for that many seconds (raising `WatchConnectionLost`).
        """
        opts = ListOptions.merged(options, keywords)
        namespace, resource_version = opts.namespace, opts.resource_version
        params: dict[str, str] = {"watch": "1"}
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if allow_bookmarks or send_initial_events:
            params["allowWatchBookmarks"] = "true"
        if timeout_seconds is not None:
            params["timeoutSeconds"] = str(int(timeout_seconds))
        params.update(_selector_params(opts.label_selector, opts.field_selector))
        if send_initial_events:
            params["sendInitialEvents"] = "true"
            params["resourceVersionMatch"] = "NotOlderThan"
            params.setdefault("resourceVersion", "")
        elif opts.resource_version_match is not None:
            params["resourceVersionMatch"] = opts.resource_version_match
        accept = ACCEPT_META if opts.metadata_only else ACCEPT_JSON

        async def opener() -> aiohttp.ClientResponse:
            res = await self.resolve(resource)
            path = res.path(self._namespace(res, namespace, allow_all=True))
            return await self.transport.open_stream(path, params=params, accept=accept,
                                                    inactivity_timeout=inactivity_timeout)

        return WatchStream(opener)

    # -- writes ---------------------------------------------------------------------------------

    async def create(self, obj: Mapping[str, Any], *, namespace: str | None = None, dry_run: bool = False,
                     field_manager: str | None = None, field_validation: str | None = None) -> dict[str, Any]:
        """POST a new object (its namespace: `metadata.namespace`, else `namespace`, else the default)."""
        res = await self.resolve(ResourceRef.of(obj))
        ns = self._object_target(res, obj, namespace)
        target = WriteRequest("create", "POST", res.path(ns), res, ns or "", name_of(obj) or "",
                              None, dry_run)
        return await self._write(
            target, params=self._write_params(dry_run, field_manager, field_validation=field_validation),
            body=dumps(obj), content_type="application/json")

    async def replace(self, obj: Mapping[str, Any], *, namespace: str | None = None,
                      subresource: str | None = None, dry_run: bool = False,
                      field_manager: str | None = None) -> dict[str, Any]:
        """PUT the whole object; with `metadata.resourceVersion` set this is a guarded update (`Conflict`)."""
        res = await self.resolve(ResourceRef.of(obj))
        target = self._target("update", "PUT", res, self._object_target(res, obj, namespace), self._name_of(obj),
                              subresource, dry_run)
        return await self._write(target, params=self._write_params(dry_run, field_manager), body=dumps(obj),
                                 content_type="application/json")

    async def patch(self, resource: ResourceLike, name: str, patch: Mapping[str, Any] | Sequence[Any] | bytes,
                    *, type: PatchType = "merge", namespace: str | None = None,
                    subresource: str | None = None, field_manager: str | None = None,
                    force: bool | None = None, dry_run: bool = False) -> dict[str, Any]:
        """PATCH with a merge (default), JSON (`type="json"`), strategic-merge or apply patch."""
        if type not in PATCH_CONTENT_TYPES:
            raise ValueError(f"patch type {type!r} is not one of {', '.join(PATCH_CONTENT_TYPES)}")
        res = await self.resolve(resource)
        target = self._target("patch", "PATCH", res, self._namespace(res, namespace), name, subresource, dry_run)
        body = patch if isinstance(patch, bytes) else dumps(patch)
        return await self._write(
            target, params=self._write_params(dry_run, field_manager, force if type == "apply" else None),
            body=body, content_type=PATCH_CONTENT_TYPES[type])

    async def apply(self, obj: Mapping[str, Any], *, field_manager: str, force: bool = False,
                    subresource: str | None = None, namespace: str | None = None,
                    dry_run: bool = False) -> dict[str, Any]:
        """Server-side apply `obj` (the fields this manager owns) as `field_manager`."""
        if not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        res = await self.resolve(ResourceRef.of(obj))
        target = self._target("patch", "PATCH", res, self._object_target(res, obj, namespace), self._name_of(obj),
                              subresource, dry_run)
        return await self._write(target, params=self._write_params(dry_run, field_manager, force), body=dumps(obj),
                                 content_type=PATCH_CONTENT_TYPES["apply"])

    @staticmethod
    def _delete_options(propagation_policy: str | None, preconditions: Mapping[str, str] | None,
                        grace_period_seconds: int | None, dry_run: bool) -> bytes | None:
        opts: dict[str, Any] = {}
        if propagation_policy:
            opts["propagationPolicy"] = propagation_policy
        if preconditions:
            opts["preconditions"] = dict(preconditions)
        if grace_period_seconds is not None:
            opts["gracePeriodSeconds"] = int(grace_period_seconds)
        if dry_run:
            opts["dryRun"] = ["All"]
        if not opts:
            return None
        return dumps({"kind": "DeleteOptions", "apiVersion": "v1", **opts})

    async def delete(self, resource: ResourceLike, name: str, *, namespace: str | None = None,
                     propagation_policy: Literal["Orphan", "Background", "Foreground"] | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     grace_period_seconds: int | None = None, dry_run: bool = False) -> dict[str, Any]:
        """DELETE one object. Returns the server's answer: a `Status` (gone now) or the object (still
        terminating: finalizers, foreground deletion). `preconditions`: `{"uid": ..., "resourceVersion": ...}`."""
        res = await self.resolve(resource)
        target = self._target("delete", "DELETE", res, self._namespace(res, namespace), name, None, dry_run)
        body = self._delete_options(propagation_policy, preconditions, grace_period_seconds, dry_run)
        return await self._write(target, params=None, body=body, content_type="application/json" if body else None)

    async def delete_collection(self, resource: ResourceLike, *, namespace: str | None = None,
                                label_selector: LabelSelectorLike | None = None, field_selector: FieldSelectorLike | None = None,
                                propagation_policy: Literal["Orphan", "Background", "Foreground"] | None = None,
                                grace_period_seconds: int | None = None, dry_run: bool = False) -> dict[str, Any]:
        """DELETE every matching object of a collection (in one namespace, or cluster-wide)."""
        res = await self.resolve(resource)
        target = self._target("deletecollection", "DELETE", res, self._namespace(res, namespace), "", None, dry_run)
        params = _selector_params(label_selector, field_selector)
        body = self._delete_options(propagation_policy, None, grace_period_seconds, dry_run)
        return await self._write(target, params=params, body=body,
                                 content_type="application/json" if body else None)

    # -- the status subresource -----------------------------------------------------------------

    async def get_status(self, resource: ResourceLike, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        """GET `<object>/status`."""
        return await self.get(resource, name, namespace=namespace, subresource="status")

    async def replace_status(self, obj: Mapping[str, Any], *, namespace: str | None = None,
                             dry_run: bool = False, field_manager: str | None = None) -> dict[str, Any]:
        """PUT `<object>/status` (only `status` changes)."""
        return await self.replace(obj, namespace=namespace, subresource="status", dry_run=dry_run,
                                  field_manager=field_manager)

    async def patch_status(self, resource: ResourceLike, name: str, patch: Mapping[str, Any] | Sequence[Any] | bytes,
                           *, type: PatchType = "merge", namespace: str | None = None,
                           field_manager: str | None = None, force: bool | None = None,
                           dry_run: bool = False) -> dict[str, Any]:
        """PATCH `<object>/status`."""
        return await self.patch(resource, name, patch, type=type, namespace=namespace, subresource="status",
                                field_manager=field_manager, force=force, dry_run=dry_run)

    async def apply_status(self, obj: Mapping[str, Any], *, field_manager: str, force: bool = False,
                           namespace: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        """Server-side apply to `<object>/status`."""
        return await self.apply(obj, field_manager=field_manager, force=force, subresource="status",
                                namespace=namespace, dry_run=dry_run)


__all__ = ["ACCEPT_META", "ACCEPT_META_LIST", "ALL_NAMESPACES", "Client", "PatchType", "WatchEvent", "WriteDone",
           "WriteHook", "WriteRequest", "WriteVerb", "format_field_selector", "format_label_selector"]
