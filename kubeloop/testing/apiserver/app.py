"""The HTTP layer: routing Kubernetes REST paths to the registry, auth, faults, stats, watch streams.

One catch-all aiohttp handler parses the path itself (the REST layout is regular and a single
parser gives the real server's distinction between a JSON 404 Status and a plain-text
`404 page not found`). Handlers only translate between HTTP and `Registry` calls.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from kubeloop.meta import FieldSelector, LabelSelector

from . import apiwarnings, errors, listoptions, tables
from .actions import Call, actions
from .admission import Caller
from .authn import ADMIN as ADMIN_CALLER
from .authn import CURRENT_USER
from .catalog import Catalog
from .conversion import from_watch_cache
from .errors import StatusError
from .faults import Faults
from .negotiation import (
    JSON,
    PATCH_TYPES,
    POM,
    TABLES,
    YAML,
    decode_object,
    decode_yaml,
    go_json_error,
    media_type,
    negotiate,
    object_renderer,
    render_list,
    to_yaml,
)
from .openapi import Documents
from .rbac import Access
from .registry import Registry, parse_resource_version
from .resources import ServedResource
from .shapes import Obj
from .storage import Stored, key_range
from .watch import WatchQueue, bookmark_line, error_line, event_line

log = logging.getLogger(__name__)

ADMIN = "/_kubeloop/"
CRD_STORAGE = "apiextensions.k8s.io/customresourcedefinitions"
_PLAIN_404 = "404 page not found\n"


class PlainNotFound(Exception):
    """The real server's non-API 404: `text/plain` body `404 page not found`."""


@dataclass
class Target:
    """What a request path addresses."""

    info: ServedResource
    namespace: str | None  # None: cluster-scoped, or all namespaces
    name: str
    subresource: str
    #: addressed through the deprecated `/watch/` prefix (`/api/v1/watch/namespaces/ns/configmaps`),
    #: which kube-apiserver 1.24 still serves as a GET with `watch=true`
    watch_path: bool = False


def _status_response(err: StatusError, indented: bool = False) -> web.Response:
    headers = {}
    if err.retry_after is not None:
        headers["Retry-After"] = str(err.retry_after)
    return web.Response(status=err.code, body=errors.encode_status(err.status(), indented=indented),
                        content_type="application/json", headers=headers)


def _asks_for_conversion(request: web.Request) -> bool:
    """An Accept asking for a Table or metadata: kube-apiserver then writes errors indented (the
    meta.k8s.io serializer it negotiated pretty-prints) and without a final newline."""
    accept = request.headers.get("Accept", "")
    return "as=Table" in accept or "as=PartialObjectMetadata" in accept


def _json(body: bytes, status: int = 200, mode: str = JSON) -> web.Response:
    if mode == YAML:
        return web.Response(status=status, body=to_yaml(body), content_type="application/yaml")
    # Go's json.Encoder ends what it writes with a newline, and so does every kube-apiserver response
    return web.Response(status=status, body=body + b"\n", content_type="application/json")


def field_manager_of(request: web.Request) -> str:
    fm = request.query.get("fieldManager")
    if fm:
        return fm
    ua = request.headers.get("User-Agent", "")
    return ua.split("/", 1)[0] if ua else "unknown"


def _truthy(v: str | None) -> bool:
    return (v or "").lower() in ("1", "true", "yes")


class APIApp:
    """Builds the aiohttp application around a registry."""

    def __init__(self, registry: Registry, catalog: Catalog, faults: Faults, token: str | None,
                 access: Access | None = None) -> None:
        self.registry = registry
        self.catalog = catalog
        self.faults = faults
        self.token = token
        self.access = access  # service-account tokens, RBAC, audit (rbac.py); None: the admin token only
        self.watchers: set[WatchQueue] = set()
        self.stopping = False
        self.actions = actions()
        self.openapi = Documents()

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=self.registry.settings.max_body_bytes)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        app.on_response_prepare.append(_warning_headers)
        return app

    def close_watches(self, resource: str | None = None) -> int:
        from .faults import resource_matches

        n = 0
        for w in list(self.watchers):
            if resource_matches(resource, w.stats_key):
                w.close()
                n += 1
        return n

    # ---- entry -----------------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        with apiwarnings.collect() as warnings:  # what strategies warn about, sent as Warning headers
            request[WARNINGS] = warnings
            return await self._handle(request)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        try:
            if path.startswith(ADMIN):
                return await self.admin(request, path[len(ADMIN):])
            if self.access is not None:
                self.access.check(request)
            elif self.token is not None and not self._authorized(request):
                raise errors.unauthorized()
            if path in ("/healthz", "/readyz", "/livez"):
                return web.Response(text="ok")
            return await self.api(request, path)
        except StatusError as e:
            return _status_response(e, indented=_asks_for_conversion(request))
        except PlainNotFound:
            return web.Response(status=404, text=_PLAIN_404, content_type="text/plain")
        except web.HTTPRequestEntityTooLarge:
            limit = self.registry.settings.max_body_bytes
            return _status_response(StatusError(413, "RequestEntityTooLarge",
                                                f"Request entity too large: limit is {limit}", {}))
        except web.HTTPException:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as e:  # never let a bug in one request take the server down
            log.exception("unexpected error serving %s %s", request.method, request.path_qs)
            return _status_response(errors.internal_error(f"unexpected {type(e).__name__}: {e}"))

    def _authorized(self, request: web.Request) -> bool:
        auth = request.headers.get("Authorization", "")
        return auth == f"Bearer {self.token}"

    def _caller(self, request: web.Request) -> Caller:
        """Who sends `request` (an AdmissionReview's userInfo): the caller the access layer
        authenticated, or the admin where no access layer runs."""
        user = CURRENT_USER.get() or ADMIN_CALLER
        return Caller(user.name, user.groups)

    # ---- admin -----------------------------------------------------------------------------
    async def admin(self, request: web.Request, what: str) -> web.Response:
        q = request.query
        f = self.faults
        if what == "stats":
            return web.json_response(f.stats())
        if request.method != "POST":
            raise errors.method_not_allowed()
        res = q.get("resource") or None
        if what == "bulk-create":
            return web.json_response(await self.bulk_create(request))
        if what == "close-watches":
            return web.json_response({"closed": f.close_watches(res)})
        if what == "expire-next-watch":
            f.expire_next_watch(res or "*", int(q.get("count", "1")))
        elif what == "compact":
            f.compact()
        elif what == "delay":
            f.delay(float(q.get("seconds", "0")), res)
        elif what == "fail":
            f.fail_next(int(q.get("count", "1")), int(q.get("code", "500")), resource=res,
                        retry_after=int(q.get("retryAfter", "1")),
                        verbs=tuple(q["verbs"].split(",")) if q.get("verbs") else None)
        elif what == "reset":
            f.reset()
        else:
            raise PlainNotFound()
        return web.json_response({"ok": True})

    async def bulk_create(self, request: web.Request) -> dict[str, Any]:
        """``POST /_kubeloop/bulk-create?resource=configmaps[&group=G&version=V&namespace=NS&fieldManager=M]``
        with one JSON object per line: each goes through the same create path as ``POST`` (defaults,
        validation, admission, managedFields, watch events), without an HTTP round trip per object.

        A testing facility for loading 10^5-10^6 objects (the scale benchmark): creating them one
        request at a time takes ~1 ms each through a client. Objects that already exist are
        counted, not replaced. Yields to the event loop every 500 objects (watches keep flowing).
        """
        q = request.query
        info = self.catalog.lookup(q.get("group", ""), q.get("version", "v1"), q.get("resource", ""))
        if info is None:
            raise StatusError(404, "NotFound", f"no resource {q.get('resource', '')!r} in "
                                               f"{q.get('group', '')}/{q.get('version', 'v1')}", {})
        namespace = q.get("namespace", "") if info.namespaced else ""
        manager = q.get("fieldManager", "") or "kubeloop-bulk-create"
        reg = self.registry
        created = existing = 0
        started = time.monotonic()
        async for line in request.content:
            if not line.strip():
                continue
            try:
                reg.create(info, namespace, orjson.loads(line), manager=manager, dry_run=False)
                created += 1
            except StatusError as e:
                if e.code != 409:
                    raise
                existing += 1
            if (created + existing) % 500 == 0:
                await asyncio.sleep(0)
        return {"created": created, "existing": existing, "seconds": time.monotonic() - started}

    # ---- discovery + routing ---------------------------------------------------------------
    async def api(self, request: web.Request, path: str) -> web.StreamResponse:
        parts = [p for p in path.split("/") if p]
        cat = self.catalog
        if len(parts) <= 3 and request.method not in ("GET", "HEAD") and (
                not parts or parts[0] == "version" or (parts[0] == "api" and len(parts) <= 2)
                or (parts[0] == "apis" and len(parts) <= 3)):
            raise errors.method_not_allowed()
        if not parts:
            return web.json_response({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/version"]})
        if parts[0] == "openapi":
            return self._openapi(request, parts[1:])
        if parts[0] == "version" and len(parts) == 1:
            return web.json_response(cat.version_info())
        if parts[0] == "api":
            if len(parts) == 1:
                return _json(orjson.dumps(cat.api_versions()))
            group, version, rest = "", parts[1], parts[2:]
            if not cat.version_exists("", version):
                raise StatusError(404, "NotFound", "the server could not find the requested resource", {})
        elif parts[0] == "apis":
            if len(parts) == 1:
                return _json(orjson.dumps(cat.api_group_list()))
            group = parts[1]
            if not cat.group_exists(group):
                raise PlainNotFound()
            if len(parts) == 2:
                doc = cat.api_group(group)
                if doc is None:
                    raise PlainNotFound()
                return _json(orjson.dumps(doc))
            version, rest = parts[2], parts[3:]
            if not cat.version_exists(group, version):
                if self._custom_group(group):
                    raise PlainNotFound()
                raise StatusError(404, "NotFound", "the server could not find the requested resource", {})
        else:
            raise PlainNotFound()
        if not rest:
            if request.method != "GET":
                raise errors.method_not_allowed()
            doc = cat.resource_list(group, version)
            if doc is None:
                raise StatusError(404, "NotFound", "the server could not find the requested resource", {})
            return _json(orjson.dumps(doc))
        target = self._target(group, version, rest)
        return await self.resource(request, target)

    def _openapi(self, request: web.Request, parts: list[str]) -> web.Response:
        """`/openapi/v2` (JSON or gnostic protobuf) and `/openapi/v3[/<group-version>]` (openapi.py)."""
        from .openapi import serve

        crds = self.registry.store.bucket(CRD_STORAGE).objects
        served = [crds[("", n)].obj for n in self.catalog.served_crd_names() if ("", n) in crds]
        code, headers, body = serve(self.openapi, served, parts, request.headers.get("Accept", ""), request.query,
                                    request.headers.get("If-None-Match", ""))
        return web.Response(status=code, body=body, headers=headers)

    def _deprecation(self, info: ServedResource) -> str | None:
        """The warning every request to a deprecated API version gets (apiwarnings.py)."""
        if not info.custom:
            return apiwarnings.deprecated_api(info.group, info.version, info.resource)
        crd = self.registry.store.bucket(CRD_STORAGE).objects.get(("", info.crd_name))
        return apiwarnings.deprecated_api(info.group, info.version, info.resource, crd.obj if crd else None)

    def _custom_group(self, group: str) -> bool:
        return any(i.custom for i in self.catalog.all() if i.group == group)

    def _target(self, group: str, version: str, rest: list[str]) -> Target:
        not_found = StatusError(404, "NotFound", "the server could not find the requested resource", {})
        cat = self.catalog
        namespace: str | None = None
        watch_path = len(rest) > 1 and rest[0] == "watch"
        if watch_path:
            rest = rest[1:]
        if rest[0] == "namespaces" and len(rest) >= 3 and not (len(rest) == 3 and group == "" and rest[2] in (
                "status", "finalize")):
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3 and rest[2] == "proxy":
            rest = rest[:3]  # pods/<name>/proxy/<path>: the path is the proxied one's
        if len(rest) > 3:
            raise not_found
        info = cat.lookup(group, version, rest[0])
        if info is None:
            raise not_found
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if namespace is not None and not info.namespaced:
            if info.custom:
                raise PlainNotFound()
            raise not_found
        if sub and sub not in info.subresources:
            if info.custom:
                raise errors.not_found(info.resource, name, info.group)
            raise not_found
        if info.namespaced and namespace is None and name:
            raise not_found
        if watch_path and sub:
            raise not_found
        return Target(info, namespace, name, sub, watch_path)

    # ---- resources -------------------------------------------------------------------------
    async def resource(self, request: web.Request, t: Target) -> web.StreamResponse:
        method = request.method
        q = request.query
        info = t.info
        apiwarnings.add(self._deprecation(info) or "")
        if t.watch_path:
            if method != "GET":
                raise errors.method_not_allowed()
            verb = "watch"
        elif not t.name:
            if method == "GET":
                verb = "watch" if _truthy(q.get("watch")) else "list"
            elif method == "POST":
                verb = "create"
            elif method == "DELETE":
                verb = "deletecollection"
            else:
                raise errors.method_not_allowed()
            if info.namespaced and t.namespace is None and verb in ("create", "deletecollection"):
                raise errors.method_not_allowed()
        else:
            verb = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, "")
            if method == "POST" and t.subresource:
                verb = "create"  # a connect or named create: pods/x/eviction, serviceaccounts/x/token
            if not verb or (t.subresource and verb == "delete" and t.subresource != "proxy"):
                raise errors.method_not_allowed()
            if verb == "get" and _truthy(q.get("watch")):
                verb = "watch"
        if verb not in info.verbs and not t.subresource:
            raise errors.method_not_allowed()
        key = info.stats_key
        self.faults.requests[f"{verb} {key}"] += 1
        delay = self.faults.delay_for(key)
        if delay:
            await asyncio.sleep(delay)
        failure = self.faults.take_failure(verb, key)
        if failure is not None:
            raise _injected(*failure)
        ns = t.namespace or ""
        reg = self.registry
        manager = field_manager_of(request)
        action = self.actions.get((info.group, info.resource, t.subresource))
        if action is not None:
            return await action(Call(request, info, ns, t.name, t.subresource, verb, reg, self.access, manager))
        if verb == "create" and t.name:
            raise errors.method_not_allowed()
        if verb == "watch":
            return await self.watch(request, t)
        if verb == "list":
            mode = negotiate(request.headers.get("Accept"), is_list=True, kind=info.kind)
            return await self.list(request, t, mode)
        if verb == "get":
            mode = negotiate(request.headers.get("Accept"), is_list=False, kind=info.kind)
            if t.subresource == "scale":
                return _json(orjson.dumps(await reg.aget_scale(info, ns, t.name)), mode=mode)
            if mode in TABLES.values():
                include = tables.include_object(q)
                st = reg.get(info, ns, t.name)
                return self._table(info, [await reg.aview(info, st)], {"resourceVersion": str(st.rv)}, include, mode)
            # with a resourceVersion, kube-apiserver reads the watch cache (its copy is converted already)
            return await self._served_object(info, reg.get(info, ns, t.name), mode,
                                             from_cache=bool(q.get("resourceVersion")))
        caller = self._caller(request)
        options = {"fieldManager": q["fieldManager"]} if q.get("fieldManager") else {}
        if verb == "delete":
            body = await request.read()
            opts = self._delete_options(body)
            opts = reg.parse_delete_options(opts, q)
            dry = reg.check_dry_run(q.getall("dryRun", []) + _as_list(opts.get("dryRun")), "DeleteOptions")
            kept, status = await reg.adelete(info, ns, t.name, opts, dry_run=dry, caller=caller)
            if status is not None:
                return _json(orjson.dumps(status))
            mode = negotiate(request.headers.get("Accept"), is_list=False, kind=info.kind)
            assert kept is not None
            return await self._served_object(info, kept, mode)
        if verb == "deletecollection":
            body = await request.read()
            opts = reg.parse_delete_options(self._delete_options(body), q)
            dry = reg.check_dry_run(q.getall("dryRun", []) + _as_list(opts.get("dryRun")), "DeleteOptions")
            match, _has_sel = self._matcher(info, q)
            gone = await reg.adelete_collection(info, ns, opts, dry_run=dry, match=match, caller=caller)
            mode = negotiate(request.headers.get("Accept"), is_list=True, kind=info.kind)
            items = await reg.served(info, gone.items) if mode != POM else gone.items
            return _json(render_list(info, mode if mode == POM else JSON, items, gone.rv, "", None), mode=mode)
        body = await request.read()
        if verb == "create":
            mode = negotiate(request.headers.get("Accept"), is_list=False, kind=info.kind)
            dry = reg.check_dry_run(q.getall("dryRun", []), "CreateOptions")
            _check_field_manager(q.get("fieldManager", ""), "CreateOptions")
            obj = decode_object(body, request.headers.get("Content-Type", ""), info)
            st = await reg.acreate(info, ns, obj, manager=manager, dry_run=dry, subresource=t.subresource,
                                   caller=caller, options=options)
            return await self._served_object(info, st, mode, status=201)
        if verb == "update":
            mode = negotiate(request.headers.get("Accept"), is_list=False, kind=info.kind)
            dry = reg.check_dry_run(q.getall("dryRun", []), "UpdateOptions")
            _check_field_manager(q.get("fieldManager", ""), "UpdateOptions")
            if t.subresource == "scale":
                scale = await reg.aupdate_scale(info, ns, t.name, decode_yaml(body) if body else {}, manager=manager,
                                                dry_run=dry, caller=caller, options=options)
                return _json(orjson.dumps(scale), mode=mode)
            obj = decode_object(body, request.headers.get("Content-Type", ""), info)
            res = await reg.aupdate(info, ns, t.name, obj, manager=manager, dry_run=dry, subresource=t.subresource,
                                    allow_create=info.allow_create_on_update, caller=caller, options=options)
            return await self._served_object(info, res.stored, mode, status=201 if res.created else 200)
        # patch
        mode = negotiate(request.headers.get("Accept"), is_list=False, kind=info.kind)
        ctype = media_type(request.headers.get("Content-Type"))
        ptype = PATCH_TYPES.get(ctype)
        if ptype is None:
            raise StatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})
        if ptype == "smp" and info.custom:
            raise StatusError(415, "UnsupportedMediaType",
                              "the body of the request was in an unknown format - accepted media types include: "
                              "application/json-patch+json, application/merge-patch+json, "
                              "application/apply-patch+yaml")
        dry = reg.check_dry_run(q.getall("dryRun", []), "PatchOptions")
        _check_field_manager(q.get("fieldManager", ""), "PatchOptions")
        force = _truthy(q.get("force"))
        if ptype == "apply" and not q.get("fieldManager"):
            raise _patch_options_invalid("fieldManager", "FieldValueRequired",
                                         "Required value: is required for apply patch")
        if ptype != "apply" and "force" in q:
            raise _patch_options_invalid("force", "FieldValueForbidden",
                                         "Forbidden: may not be specified for non-apply patch")
        if t.subresource == "scale":
            scale = await reg.apatch_scale(info, ns, t.name, ptype, body, manager=manager, dry_run=dry,
                                           decode_yaml=decode_yaml, caller=caller, options=options)
            return _json(orjson.dumps(scale), mode=mode)
        res = await reg.apatch(info, ns, t.name, ptype, body, manager=manager, dry_run=dry,
                               subresource=t.subresource, force=force, decode_yaml=decode_yaml, caller=caller,
                               options=options)
        return await self._served_object(info, res.stored, mode, status=201 if res.created else 200)

    async def _served_object(self, info: ServedResource, st: Stored, mode: str, status: int = 200, *,
                             from_cache: bool = False) -> web.Response:
        """`_object` after converting `st` through the CRD's conversion webhook when it needs to be."""
        if mode != POM:
            st = (await self.registry.served(info, [st], from_cache=from_cache))[0]
        return self._object(info, st, mode, status)

    def _object(self, info: ServedResource, st: Stored, mode: str, status: int = 200) -> web.Response:
        body = object_renderer(info, POM if mode == POM else JSON)(st)
        if st.rv == 0:  # dry-run create: no resourceVersion
            d = orjson.loads(body)
            d.get("metadata", {}).pop("resourceVersion", None)
            body = orjson.dumps(d)
        return _json(body, status, mode)

    @staticmethod
    def _delete_options(body: bytes) -> Obj:
        if not body.strip():
            return {}
        try:
            opts = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            raise StatusError(500, "", f"couldn't get version/kind; json parse error: {go_json_error(body, e)}") \
                from None
        if not isinstance(opts, dict):
            raise errors.bad_request("DeleteOptions must be an object")
        return opts

    def _matcher(self, info: ServedResource, q: Any) -> tuple[Callable[[Obj], bool] | None, bool]:
        ls_text = q.get("labelSelector", "")
        fs_text = q.get("fieldSelector", "")
        ls = parse_label_selector(ls_text) if ls_text.strip() else None
        fs = parse_field_selector(fs_text) if fs_text.strip() else None
        if fs is not None:
            for label in sorted(fs.fields):
                info.strategy.check_field_label(info, label)
        if ls is None and fs is None:
            return None, False
        strategy = info.strategy
        convert = None if _identity(info) else (lambda o: strategy.from_storage(info, dict(o)))

        def match(obj: Obj) -> bool:
            if ls is not None and not ls.matches((obj.get("metadata") or {}).get("labels") or {}):
                return False
            if fs is not None:
                view = obj if convert is None else convert(obj)
                return bool(fs.matches(strategy.field_values(info, view)))
            return True
        return match, True

    async def list(self, request: web.Request, t: Target, mode: str) -> web.Response:
        reg, info, q = self.registry, t.info, request.query
        include = tables.include_object(q) if mode in TABLES.values() else ""
        match, has_sel = self._matcher(info, q)
        rv, _ = reg.parse_list_rv(q)
        if rv and rv > reg.store.rv and not q.get("continue"):
            await self._wait_for_rv(rv)  # the watch cache waits ~3 s for a future RV, then 504
        res = reg.list(info, t.namespace, q, match, has_sel)
        items = await reg.served(info, res.items, from_cache=from_watch_cache(q)) if mode != POM else res.items
        if include:  # a Table of the objects as served (converted through the CRD's webhook where needed)
            meta: dict[str, Any] = {"resourceVersion": str(res.rv)}
            if res.continue_token:
                meta["continue"] = res.continue_token
            if res.remaining is not None:
                meta["remainingItemCount"] = res.remaining
            return self._table(info, [await reg.aview(info, st) for st in items], meta, include, mode)
        body = render_list(info, POM if mode == POM else JSON, items, res.rv, res.continue_token, res.remaining)
        return _json(body, mode=mode)

    def _table(self, info: ServedResource, objects: builtins.list[Obj], meta: Obj, include: str,
               mode: str) -> web.Response:
        """A meta.k8s.io Table of `objects` (`tables.py`), in the Table version `mode` names."""
        version = next(v for v, m in TABLES.items() if m == mode)
        crd = None
        if info.custom:
            crds = self.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            stored = self.registry.bucket(crds).objects.get(("", info.crd_name)) if crds is not None else None
            crd = stored.obj if stored is not None else {}
        return _json(orjson.dumps(tables.table(info.group, info.resource, objects, meta, include, version, crd=crd,
                                               version=info.version)))

    async def _wait_for_rv(self, rv: int) -> None:
        reg = self.registry
        deadline = time.monotonic() + reg.settings.future_rv_wait
        while reg.store.rv < rv:
            if time.monotonic() >= deadline:
                raise reg.future_rv_error(rv)
            await asyncio.sleep(0.05)

    # ---- watch -----------------------------------------------------------------------------
    async def watch(self, request: web.Request, t: Target) -> web.StreamResponse:
        reg, info, q = self.registry, t.info, request.query
        mode = negotiate(request.headers.get("Accept"), is_list=True, is_watch=True, kind=info.kind)
        match, _ = self._matcher(info, q)
        if t.name:
            name = t.name
            inner = match

            def match_name(obj: Obj) -> bool:
                return bool(obj["metadata"]["name"] == name and (inner is None or inner(obj)))
            match = match_name
        rv = parse_resource_version(q.get("resourceVersion", ""))
        gates = reg.settings.features
        listoptions.validate(q, watch=True, gates=gates)
        send_initial = listoptions.send_initial_events(q, gates)  # None: not asked, or not in this version
        if send_initial and rv:
            await self._wait_for_rv(rv)
        timeout_text = q.get("timeoutSeconds", "")
        try:
            timeout = float(timeout_text) if timeout_text else 0.0
            if timeout <= 0:  # unset or 0: the server's own request timeout
                timeout = 1800.0
        except ValueError:
            raise errors.bad_request(f'strconv.ParseInt: parsing "{timeout_text}": invalid syntax') from None
        bookmarks = _truthy(q.get("allowWatchBookmarks"))
        bucket = reg.bucket(info)
        render_mode = POM if mode == POM else JSON
        render = object_renderer(info, render_mode)
        render_id: Any = (id(info), render_mode)
        convert: Callable[[bytes], Any] | None = None
        if render_mode == JSON and reg.conversion is not None and reg.conversion.webhook(info) is not None:
            # objects are rendered as stored and converted (one review per batch of lines) as sent
            render, render_id = _stored_renderer(info), ("stored", info.storage_key)
            convert = functools.partial(self._convert_lines, info)
        watcher = WatchQueue(info.stats_key, t.namespace if info.namespaced else None, match, render, render_id)
        expired = self.faults.take_expire(info.stats_key)
        replay: list[Any] | None = []
        if expired:
            replay = None
        elif send_initial or (send_initial is None and not rv):
            objs, keys = bucket.objects, bucket.sorted_keys()
            lo, hi = key_range(keys, watcher.namespace)
            watcher.start_initial([objs[keys[i]] for i in range(lo, hi)])
            if send_initial:
                watcher.push_line(bookmark_line(info.kind, info.api_version, reg.store.rv, initial_end=True))
        else:
            start = reg.store.rv if rv is None else rv  # sendInitialEvents=false: from now on
            watcher.min_rv = start
            replay = bucket.changes_since(min(start, reg.store.rv))
            if replay is not None:
                for ch in replay:
                    watcher.offer(ch)
        if replay is None:
            msg = f"too old resource version: {rv} ({bucket.oldest_rv})"
            watcher.push_line(error_line(errors.expired(msg).status()))
            watcher.closed = True
        else:
            bucket.watchers.add(watcher)
            self.watchers.add(watcher)
            self.faults.open_watches[info.stats_key] += 1
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                       "Cache-Control": "no-cache, private"})
        try:
            await resp.prepare(request)
            await self._pump(resp, watcher, timeout, bookmarks, info, convert)
        except (ConnectionResetError, asyncio.CancelledError, RuntimeError):
            pass
        finally:
            if replay is not None:
                bucket.watchers.discard(watcher)
                self.watchers.discard(watcher)
                self.faults.open_watches[info.stats_key] -= 1
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await resp.write_eof()
        return resp

    async def _convert_lines(self, info: ServedResource, data: bytes) -> bytes:
        """Watch event lines with their objects in `info`'s version: the watch cache's copies, converted
        when written (kube-apiserver serves watches from its watch cache)."""
        conv = self.registry.conversion
        assert conv is not None
        out = []
        for line in data.splitlines():
            if not line.strip():
                continue
            ev = orjson.loads(line)
            obj = ev.get("object")
            if ev.get("type") in ("ADDED", "MODIFIED", "DELETED") and isinstance(obj, dict) \
                    and obj.get("apiVersion") != info.api_version:
                obj = await conv.watch_cache.event_object(info, obj)
            out.append(event_line(ev["type"], orjson.dumps(obj)))
        return b"".join(out)

    async def _pump(self, resp: web.StreamResponse, w: WatchQueue, duration: float, bookmarks: bool,
                    info: ServedResource, convert: Callable[[bytes], Any] | None = None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + duration
        interval = self.registry.settings.bookmark_interval
        next_bookmark = loop.time() + interval
        # one timer per deadline (the end, the next bookmark), not a timeout context per event
        timer: asyncio.TimerHandle | None = None
        armed_at: float | None = None

        def fire() -> None:
            nonlocal armed_at
            armed_at = None  # fired: arm again on the next wait (a timer may run a hair early)
            w.wakeup.set()

        try:
            while True:
                if w.initial_pending:  # the objects present at the start, before any live change
                    if w.closed or self.stopping:
                        return
                    chunk = w.next_initial()
                    if chunk and not await self._send(resp, w, convert, chunk):
                        return
                    continue
                if w.lines:
                    lines = w.lines
                    data = b"".join(lines)
                    lines.clear()
                    if not await self._send(resp, w, convert, data):
                        return
                    continue
                if w.closed or self.stopping:
                    return
                now = loop.time()
                if now >= deadline:
                    if bookmarks:
                        await resp.write(bookmark_line(info.kind, info.api_version, self.registry.store.rv))
                    return
                if bookmarks and now >= next_bookmark:
                    await resp.write(bookmark_line(info.kind, info.api_version, self.registry.store.rv))
                    next_bookmark = now + interval
                    continue
                w.wakeup.clear()
                wake_at = min(deadline, next_bookmark) if bookmarks else deadline
                if wake_at != armed_at:
                    if timer is not None:
                        timer.cancel()
                    timer, armed_at = loop.call_at(wake_at, fire), wake_at
                await w.wakeup.wait()
        finally:
            if timer is not None:
                timer.cancel()


    @staticmethod
    async def _send(resp: web.StreamResponse, w: WatchQueue, convert: Callable[[bytes], Any] | None,
                    data: bytes) -> bool:
        """Write watch lines (converted first when the watch needs it); on a conversion failure an
        ERROR event ends the watch (False)."""
        if convert is not None:
            try:
                data = await convert(data)
            except StatusError as e:
                await resp.write(error_line(e.status()))
                w.closed = True
                return False
        await resp.write(data)
        return True


def _stored_renderer(info: ServedResource) -> Callable[[Stored], bytes]:
    """Full JSON of a stored object as stored (its own apiVersion), for converting afterwards."""
    kind = b'{"kind":' + orjson.dumps(info.kind) + b',"apiVersion":'

    def render(st: Stored) -> bytes:
        return kind + orjson.dumps(st.obj.get("apiVersion") or info.api_version) + b"," + st.body[1:]
    return render


WARNINGS = web.RequestKey("warnings", list)


async def _warning_headers(request: web.Request, response: web.StreamResponse) -> None:
    for text in request.get(WARNINGS) or ():
        response.headers.add("Warning", apiwarnings.header_value(text))


def _as_list(v: Any) -> list[str]:
    if not v:
        return []
    return [str(x) for x in v] if isinstance(v, list) else [str(v)]


def _identity(info: ServedResource) -> bool:
    from .registry import is_identity

    return is_identity(info.strategy)


def _injected(code: int, retry_after: int) -> StatusError:
    if code == 429:
        return StatusError(429, "TooManyRequests", "the server has received too many requests and has asked us "
                           "to try again later", {"retryAfterSeconds": retry_after}, retry_after=retry_after)
    if code == 503:
        return StatusError(503, "ServiceUnavailable", "the server is currently unable to handle the request",
                           {}, retry_after=retry_after)
    if code == 504:
        return StatusError(504, "Timeout", "the server was unable to return a response in the time allotted",
                           {"retryAfterSeconds": retry_after}, retry_after=retry_after)
    if code == 500:
        return StatusError(500, "InternalError", "Internal error occurred: injected fault", {})
    return StatusError(code, "", f"injected fault ({code})", {})


FIELD_MANAGER_MAX_LENGTH = 128


def _check_field_manager(manager: str, kind: str) -> None:
    """apimachinery's `ValidateFieldManager` (part of Create/Update/PatchOptions validation): at most
    128 bytes, printable characters only."""
    causes: list[dict[str, str]] = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        causes.append(errors.cause("FieldValueTooLong", f"Too long: must have at most {FIELD_MANAGER_MAX_LENGTH} bytes",
                                   "fieldManager"))
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            causes.append(errors.cause("FieldValueInvalid", f"Invalid value: {orjson.dumps(manager).decode()}: "
                                       f"invalid character U+{ord(ch):04X} (at position {i})", "fieldManager"))
    if causes:
        texts = list(dict.fromkeys(f"fieldManager: {c['message']}" for c in causes))
        text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        raise StatusError(422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: {text}',
                          {"group": "meta.k8s.io", "kind": kind, "causes": causes})


def _patch_options_invalid(field_name: str, reason: str, msg: str) -> StatusError:
    return StatusError(422, "Invalid", f'PatchOptions.meta.k8s.io "" is invalid: {field_name}: {msg}',
                       {"group": "meta.k8s.io", "kind": "PatchOptions",
                        "causes": [errors.cause(reason, msg, field_name)]})


def parse_label_selector(text: str) -> LabelSelector:
    """A `labelSelector` query parameter; bad syntax is the real server's 400 BadRequest."""
    try:
        return LabelSelector.parse(text)
    except ValueError as e:
        raise errors.bad_request(str(e)) from e


def parse_field_selector(text: str) -> FieldSelector:
    """A `fieldSelector` query parameter; bad syntax is the real server's 400 BadRequest."""
    try:
        return FieldSelector.parse(text)
    except ValueError as e:
        raise errors.bad_request(str(e)) from e
