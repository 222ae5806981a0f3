"""Webhook scenarios run against a cluster, written down as a normalized transcript.

The same scenarios run against the real kube-apiserver 1.24 (recorded once into
`data/real-1.24.json`) and against the emulator (`test_recorded.py` compares): what each webhook
received (the AdmissionReview/ConversionReview requests), what the client got back (status, body,
`Warning` headers), which webhooks were called and how many conversions each request cost.

The webhooks here are plain aiohttp handlers speaking the review protocols directly, not
kubeloop.webhooks, so the oracle does not depend on the code under test. They listen on
127.0.0.1 with a CA of their own; the API server reaches them through URL clientConfigs. Every
webhook is narrowed to this run's namespace (or this run's CRD group), so the scenarios can run on
a shared cluster; everything created is deleted.

Record (needs a real cluster):

    python -m tests.webhooks.scenarios --kubeconfig /tmp/realk8s/kubeconfig --out tests/webhooks/data/real-1.24.json
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import copy
import json
import os
import re
import secrets
import ssl
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from kubeloop.config import load_kubeconfig
from kubeloop.testing import eventually
from kubeloop.testing.apiserver.tls import ServingCert, generate

ADMISSION = "admissionregistration.k8s.io/v1"
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
RECORDING = Path(__file__).parent / "data" / "real-1.24.json"


# -- the webhook side ------------------------------------------------------------------------------


class Hooks:
    """An HTTPS server whose paths answer with per-scenario handlers, recording what they receive."""

    def __init__(self) -> None:
        self.cert: ServingCert = generate(["127.0.0.1"])
        self.handlers: dict[str, Handler] = {}
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def client_config(self, path: str, ca: bytes | None = None) -> dict[str, Any]:
        return {"url": self.url + path, "caBundle": base64.b64encode(ca or self.cert.ca_pem).decode()}

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/{path:.*}", self._serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.cert.server_context())
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _serve(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        review = orjson.loads(await request.read())
        self.received.append((path, review))
        handler = self.handlers.get(path)
        if handler is None:
            return web.Response(status=404)
        answer = await handler(review)
        if answer is None:
            return web.Response(status=500, text="no answer")
        return web.json_response(answer)


def admission_answer(review: dict[str, Any], *, allowed: bool = True, status: dict[str, Any] | None = None,
                     patch: list[dict[str, Any]] | None = None, warnings: list[str] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": allowed}
    if status is not None:
        response["status"] = status
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
    if warnings:
        response["warnings"] = warnings
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


# -- the API side ----------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    body: Any
    warnings: list[str]


@dataclass
class Env:
    """One run: the cluster (raw HTTP with the kubeconfig's credentials), the hooks, and names to normalize."""

    kubeconfig: str
    hooks: Hooks
    namespace: str = field(default_factory=lambda: f"kl-wh-{secrets.token_hex(3)}")
    group: str = field(default_factory=lambda: f"r{secrets.token_hex(3)}.webhooks.kubeloop.dev")
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    #: seconds to let the API server's watch caches finish converting a write (they convert it once
    #: per other served version, in the background) before the next step is counted
    settle: float = 0.0
    _session: aiohttp.ClientSession | None = None
    _base: str = ""
    _headers: dict[str, str] = field(default_factory=dict)
    _ssl: ssl.SSLContext | bool = False
    generated: list[str] = field(default_factory=list)

    async def open(self) -> None:
        cfg = load_kubeconfig(self.kubeconfig)
        self._base = cfg.server.rstrip("/")
        creds = await cfg.auth.credentials()
        auth = creds.authorization()
        if auth:
            self._headers["Authorization"] = auth
        if self._base.startswith("https"):
            ctx = ssl.create_default_context(cadata=cfg.ca_data.decode() if cfg.ca_data else None)
            if cfg.insecure_skip_tls_verify:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            if creds.client_cert and creds.client_key:
                with tempfile.TemporaryDirectory() as d:
                    cert, key = Path(d) / "c.pem", Path(d) / "k.pem"
                    cert.write_bytes(creds.client_cert)
                    key.write_bytes(creds.client_key)
                    ctx.load_cert_chain(cert, key)
            self._ssl = ctx
        self._session = aiohttp.ClientSession()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def call(self, method: str, path: str, body: Any = None, *, params: dict[str, str] | None = None,
                   content_type: str = "application/json") -> Reply:
        assert self._session is not None
        headers = dict(self._headers, Accept="application/json")
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = orjson.dumps(body)
        async with self._session.request(method, self._base + path, data=data, params=params, headers=headers,
                                         ssl=self._ssl) as resp:
            raw = await resp.read()
            warnings = resp.headers.getall("Warning", [])
        try:
            parsed = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            parsed = raw.decode(errors="replace")
        return Reply(resp.status, parsed, list(warnings))

    async def ok(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        r = await self.call(method, path, body, **kw)
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {r.body}")
        return r.body

    def cm_path(self, name: str = "") -> str:
        return f"/api/v1/namespaces/{self.namespace}/configmaps" + (f"/{name}" if name else "")

    def cr_path(self, version: str, name: str = "", resource: str = "widgets") -> str:
        return f"/apis/{self.group}/{version}/namespaces/{self.namespace}/{resource}" + (f"/{name}" if name else "")

    # -- normalization -------------------------------------------------------------------------
    def normalize(self, value: Any) -> Any:
        """`value` with what differs from run to run replaced by placeholders."""
        value = copy.deepcopy(value)
        text = orjson.dumps(value).decode()
        for name in self.generated:
            text = text.replace(name, "<generated>")
        text = text.replace(self.namespace, "<ns>").replace(self.group, "<group>").replace(self.tag, "<tag>")
        text = text.replace(f"127.0.0.1:{self.hooks.port}", "<hooks>")
        text = re.sub(r"127\.0\.0\.1:\d+", "<closed>", text)
        return _scrub(orjson.loads(text))


_UID_IN_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _scrub(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("uid", "resourceVersion") and isinstance(v, str) and v:
                out[k] = f"<{k}>"
            elif k in ("creationTimestamp", "time", "lastTransitionTime") and isinstance(v, str):
                out[k] = "<time>"
            elif k == "userInfo":
                out[k] = "<user>"
            elif k == "caBundle":
                out[k] = "<ca>"
            else:
                out[k] = _scrub(v, k)
        return out
    if isinstance(value, list):
        return [_scrub(v, key) for v in value]
    if isinstance(value, str):
        return _UID_IN_TEXT.sub("<uid>", value)
    return value


def reviews(env: Env, since: int = 0) -> list[dict[str, Any]]:
    """The admission requests received since `since`, normalized (probes left out)."""
    out = []
    for path, review in env.hooks.received[since:]:
        req = review.get("request") or {}
        name = req.get("name") or ((req.get("object") or {}).get("metadata") or {}).get("name") or ""
        if str(name).startswith("probe-"):
            continue
        out.append({"path": path, "request": env.normalize(req)})
    return out


def reply(env: Env, r: Reply, *, whole: bool = False) -> dict[str, Any]:
    """A client-side answer: its status, its Warning headers, and the Status body (or the object's
    labels and spec when `whole` is False and it is an object)."""
    body = r.body
    if isinstance(body, dict) and body.get("kind") != "Status" and not whole:
        body = {"labels": (body.get("metadata") or {}).get("labels"), "spec": body.get("spec"),
                "apiVersion": body.get("apiVersion")}
    return {"status": r.status, "warnings": env.normalize(r.warnings), "body": env.normalize(body)}


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    await eventually(check, 20.0, interval=0.2, what=what)


async def install(env: Env, kind: str, name: str, webhooks: list[dict[str, Any]], probe_path: str) -> None:
    """Create a webhook configuration and wait until the API server calls it (a dry-run probe)."""
    resource = "mutatingwebhookconfigurations" if kind.startswith("Mutating") else "validatingwebhookconfigurations"
    await env.ok("POST", f"/apis/{ADMISSION}/{resource}",
                 {"apiVersion": ADMISSION, "kind": kind, "metadata": {"name": name}, "webhooks": webhooks})
    seen = len(env.hooks.received)

    async def called() -> bool:
        probe = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": f"probe-{secrets.token_hex(3)}", "labels": {"scenario": "probe", "tag": env.tag}}}
        await env.call("POST", env.cm_path(), probe, params={"dryRun": "All"})
        return any(p == probe_path for p, _ in env.hooks.received[seen:])
    await until(called, f"{name} in effect")


async def uninstall(env: Env, kind: str, name: str) -> None:
    resource = "mutatingwebhookconfigurations" if kind.startswith("Mutating") else "validatingwebhookconfigurations"
    await env.call("DELETE", f"/apis/{ADMISSION}/{resource}/{name}")


def hook(env: Env, name: str, path: str, scenarios: list[str], **spec: Any) -> dict[str, Any]:
    """A webhook entry narrowed to this run's namespace and to ConfigMaps labelled with `scenarios` (or probes)."""
    out: dict[str, Any] = {
        "name": f"{name}.{env.tag}.kubeloop.dev",
        "clientConfig": env.hooks.client_config(path),
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                   "operations": ["CREATE", "UPDATE", "DELETE"], "scope": "Namespaced"}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": env.namespace}},
        "objectSelector": {"matchExpressions": [{"key": "scenario", "operator": "In",
                                                 "values": [*scenarios, "probe"]}]},
    }
    out.update(spec)
    return out


def cm(name: str, scenario: str, *, generate: bool = False, data: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": {"scenario": scenario}}
    meta["generateName" if generate else "name"] = name
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {"a": "1"}}


# -- scenarios -------------------------------------------------------------------------------------


async def admission_flow(env: Env) -> dict[str, Any]:
    """Mutating then validating on create (generateName), patch, dry-run create and delete."""
    async def mutate(review: dict[str, Any]) -> dict[str, Any]:
        req = review["request"]
        if req["operation"] == "DELETE" or (req.get("object") or {}).get("metadata", {}).get("labels", {}).get(
                "scenario") == "probe":
            return admission_answer(review)
        return admission_answer(review, patch=[{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}],
                                warnings=["from the mutating webhook"])

    async def validate(review: dict[str, Any]) -> dict[str, Any]:
        return admission_answer(review, warnings=['from the validating webhook, "quoted"'])

    env.hooks.handlers.update({"/flow/mutate": mutate, "/flow/validate": validate})
    await install(env, "MutatingWebhookConfiguration", f"flow-m-{env.tag}",
                  [hook(env, "mutate", "/flow/mutate", ["flow"])], "/flow/mutate")
    await install(env, "ValidatingWebhookConfiguration", f"flow-v-{env.tag}",
                  [hook(env, "validate", "/flow/validate", ["flow"])], "/flow/validate")
    start = len(env.hooks.received)
    out: dict[str, Any] = {}
    try:
        created = await env.call("POST", env.cm_path(), cm("flow-", "flow", generate=True))
        name = created.body["metadata"]["name"]
        env.generated.append(name)
        out["create"] = reply(env, created)
        out["patch"] = reply(env, await env.call("PATCH", env.cm_path(name), {"data": {"b": "2"}},
                                                 content_type="application/merge-patch+json"))
        out["dry-run create"] = reply(env, await env.call("POST", env.cm_path(), cm("flow-dry", "flow"),
                                                          params={"dryRun": "All", "fieldManager": "recorder"}))
        out["delete"] = reply(env, await env.call("DELETE", env.cm_path(name)), whole=True)
        out["reviews"] = reviews(env, start)
    finally:
        await uninstall(env, "MutatingWebhookConfiguration", f"flow-m-{env.tag}")
        await uninstall(env, "ValidatingWebhookConfiguration", f"flow-v-{env.tag}")
    return out


async def denials(env: Env) -> dict[str, Any]:
    """How denials reach the client: a message, a code and reason of the webhook's, no message at all."""
    async def deny(review: dict[str, Any]) -> dict[str, Any]:
        name = review["request"].get("name", "")
        if name == "deny-message":
            return admission_answer(review, allowed=False, status={"message": "not this one", "code": 403},
                                    warnings=["denied with a warning"])
        if name == "deny-code":
            return admission_answer(review, allowed=False, status={"message": "bad field", "code": 422,
                                                                    "reason": "Invalid"})
        if name == "deny-bare":
            return admission_answer(review, allowed=False)
        if name == "deny-low-code":
            return admission_answer(review, allowed=False, status={"code": 200, "reason": "Lowly"})
        return admission_answer(review)

    env.hooks.handlers["/deny"] = deny
    await install(env, "ValidatingWebhookConfiguration", f"deny-{env.tag}", [hook(env, "deny", "/deny", ["deny"])],
                  "/deny")
    out: dict[str, Any] = {}
    try:
        for name in ("deny-message", "deny-code", "deny-bare", "deny-low-code"):
            out[name] = reply(env, await env.call("POST", env.cm_path(), cm(name, "deny")))
    finally:
        await uninstall(env, "ValidatingWebhookConfiguration", f"deny-{env.tag}")
    return out


async def failures(env: Env) -> dict[str, Any]:
    """Webhooks that cannot answer: unreachable (Fail, Ignore), a CA that does not match, too slow,
    a malformed answer. (A webhook with side effects cannot be configured in v1: `sideEffects` is
    None or NoneOnDryRun.)"""
    closed = _closed_port()
    other_ca = generate(["127.0.0.1"]).ca_pem

    async def slow(review: dict[str, Any]) -> dict[str, Any]:
        if review["request"].get("name", "").startswith("probe-"):
            return admission_answer(review)
        await asyncio.sleep(2.5)
        return admission_answer(review)

    async def wrong_uid(review: dict[str, Any]) -> dict[str, Any]:
        if review["request"].get("name", "").startswith("probe-"):
            return admission_answer(review)
        answer = admission_answer(review)
        answer["response"]["uid"] = "not-the-request-uid"
        return answer

    async def allow(review: dict[str, Any]) -> dict[str, Any]:
        return admission_answer(review)

    env.hooks.handlers.update({"/slow": slow, "/wrong-uid": wrong_uid, "/allow": allow})
    hooks = [
        hook(env, "probe", "/allow", []),
        hook(env, "closed-fail", "/x", ["closed-fail"], clientConfig={"url": f"https://127.0.0.1:{closed}/x"}),
        hook(env, "closed-ignore", "/x", ["closed-ignore"], failurePolicy="Ignore",
             clientConfig={"url": f"https://127.0.0.1:{closed}/x"}),
        hook(env, "other-ca", "/allow", ["other-ca"], clientConfig=env.hooks.client_config("/allow", other_ca)),
        hook(env, "slow", "/slow", ["slow"], timeoutSeconds=1),
        hook(env, "wrong-uid", "/wrong-uid", ["wrong-uid"]),
    ]
    await install(env, "ValidatingWebhookConfiguration", f"fail-{env.tag}", hooks, "/allow")
    out: dict[str, Any] = {}
    try:
        for scenario in ("closed-fail", "closed-ignore", "other-ca", "slow", "wrong-uid"):
            r = await env.call("POST", env.cm_path(), cm(scenario, scenario))
            out[scenario] = reply(env, r)
    finally:
        await uninstall(env, "ValidatingWebhookConfiguration", f"fail-{env.tag}")
    return out


async def selectors(env: Env) -> dict[str, Any]:
    """Which webhooks are called: object selector on the new or the old labels, namespace selector,
    operations, and the order of mutating webhooks (configuration name, then list order)."""
    calls: list[str] = []

    def named(label: str) -> Handler:
        async def handler(review: dict[str, Any]) -> dict[str, Any]:
            if not review["request"].get("name", "").startswith("probe-"):
                calls.append(f"{label} {review['request']['operation']} {review['request'].get('name', '')}")
            return admission_answer(review)
        return handler

    for label in ("a1", "a2", "b1", "other-ns", "update-only"):
        env.hooks.handlers[f"/sel/{label}"] = named(label)
    other_ns = {"matchLabels": {"kubernetes.io/metadata.name": f"{env.namespace}-other"}}
    await install(env, "MutatingWebhookConfiguration", f"sel-b-{env.tag}",
                  [hook(env, "b1", "/sel/b1", ["sel"])], "/sel/b1")
    await install(env, "MutatingWebhookConfiguration", f"sel-a-{env.tag}", [
        hook(env, "a1", "/sel/a1", ["sel"]), hook(env, "a2", "/sel/a2", ["sel"]),
        hook(env, "other-ns", "/sel/other-ns", ["sel"], namespaceSelector=other_ns),
        hook(env, "update-only", "/sel/update-only", ["sel"],
             rules=[{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                     "operations": ["UPDATE"]}]),
    ], "/sel/a1")
    try:
        await env.ok("POST", env.cm_path(), cm("sel-1", "sel"))
        await env.ok("POST", env.cm_path(), cm("unselected", "none"))
        # leaving the selector: the old object still matches
        await env.ok("PATCH", env.cm_path("sel-1"), {"metadata": {"labels": {"scenario": "none"}}},
                     content_type="application/merge-patch+json")
        await env.ok("PATCH", env.cm_path("unselected"), {"data": {"b": "1"}},
                     content_type="application/merge-patch+json")
    finally:
        await uninstall(env, "MutatingWebhookConfiguration", f"sel-a-{env.tag}")
        await uninstall(env, "MutatingWebhookConfiguration", f"sel-b-{env.tag}")
    return {"calls": calls}


# -- conversion ------------------------------------------------------------------------------------


def widget_crd(env: Env, storage: str, *, webhook: bool = True) -> dict[str, Any]:
    def version(name: str, spec_props: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "served": True, "storage": name == storage, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": {"type": "object", "properties": spec_props}}}}}
    spec: dict[str, Any] = {
        "group": env.group, "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [version("v1", {"size": {"type": "string"}}), version("v2", {"replicas": {"type": "integer"}})],
    }
    if webhook:
        spec["conversion"] = {"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"], "clientConfig": env.hooks.client_config("/convert")}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{env.group}"}, "spec": spec}


SIZES = {"small": 1, "medium": 3, "large": 5}


def convert_one(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["apiVersion"] = desired
    spec = out.get("spec") or {}
    if desired.endswith("/v2") and "size" in spec:
        out["spec"] = {"replicas": SIZES[spec["size"]]}
    elif desired.endswith("/v1") and "replicas" in spec:
        r = spec["replicas"]
        out["spec"] = {"size": "large" if r >= 5 else "medium" if r >= 3 else "small"}
    return out


class Conversions:
    """The conversion webhook of the scenarios: counts reviews, can be told to fail."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        self.fail = False

    async def __call__(self, review: dict[str, Any]) -> dict[str, Any]:
        req = review["request"]
        self.log.append({"desired": req["desiredAPIVersion"],
                         "objects": [o.get("apiVersion") for o in req["objects"]]})
        if self.fail:
            result: dict[str, Any] = {"status": "Failure", "message": "conversion refused by the scenario"}
            converted: list[Any] = []
        else:
            result = {"status": "Success"}
            converted = [convert_one(o, req["desiredAPIVersion"]) for o in req["objects"]]
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": req["uid"], "convertedObjects": converted, "result": result}}

    def take(self, env: Env) -> list[dict[str, Any]]:
        out = env.normalize(self.log)
        self.log = []
        return out


async def conversion(env: Env) -> dict[str, Any]:
    """What each request costs in ConversionReviews, and what a failing webhook does to it."""
    conv = Conversions()
    env.hooks.handlers["/convert"] = conv
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{env.group}"
    await env.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd(env, "v2"))
    out: dict[str, Any] = {}
    try:
        async def served() -> bool:
            r = await env.call("GET", env.cr_path("v1"))
            return r.status == 200
        await until(served, "the CRD served")

        def widget(version: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
            return {"apiVersion": f"{env.group}/{version}", "kind": "Widget", "metadata": {"name": name},
                    "spec": spec}

        first_review: dict[str, Any] = {}
        original = conv.__call__

        async def keep_first(review: dict[str, Any]) -> dict[str, Any]:
            if not first_review:
                first_review.update(review)
            return await original(review)
        env.hooks.handlers["/convert"] = keep_first
        steps: list[tuple[str, Callable[[], Awaitable[Reply]]]] = [
            ("create v1", lambda: env.call("POST", env.cr_path("v1"), widget("v1", "a", {"size": "medium"}))),
            ("create v2", lambda: env.call("POST", env.cr_path("v2"), widget("v2", "b", {"replicas": 7}))),
            ("get v1", lambda: env.call("GET", env.cr_path("v1", "a"))),
            ("get v2", lambda: env.call("GET", env.cr_path("v2", "a"))),
            ("list v1", lambda: env.call("GET", env.cr_path("v1"))),
            ("list v2", lambda: env.call("GET", env.cr_path("v2"))),
            ("patch v1", lambda: env.call("PATCH", env.cr_path("v1", "a"), {"spec": {"size": "large"}},
                                          content_type="application/merge-patch+json")),
            ("delete v1", lambda: env.call("DELETE", env.cr_path("v1", "b"))),
        ]
        for what, step in steps:
            await asyncio.sleep(env.settle)
            conv.take(env)
            r = await step()
            await asyncio.sleep(env.settle)
            out[what] = {"reply": reply(env, r), "reviews": conv.take(env)}
        out["review"] = env.normalize(first_review)
        # a watch through v1: the existing object, then a change made through v2
        out["watch v1"] = await _watch(env, conv)
        conv.fail = True
        out["get v1, failing"] = {"reply": reply(env, await env.call("GET", env.cr_path("v1", "a"))),
                                  "reviews": conv.take(env)}
        out["list v1, failing"] = {"reply": reply(env, await env.call("GET", env.cr_path("v1"))),
                                   "reviews": conv.take(env)}
        out["create v1, failing"] = {"reply": reply(env, await env.call(
            "POST", env.cr_path("v1"), widget("v1", "c", {"size": "small"}))), "reviews": conv.take(env)}
        conv.fail = False
    finally:
        await remove_crd(env, crd_path)
    return out


async def _watch(env: Env, conv: Conversions) -> dict[str, Any]:
    assert env._session is not None
    events: list[dict[str, Any]] = []
    headers = dict(env._headers, Accept="application/json")
    async with env._session.get(env._base + env.cr_path("v1"), params={"watch": "true", "timeoutSeconds": "5"},
                                headers=headers, ssl=env._ssl) as resp:
        async def read(n: int) -> None:
            while len(events) < n:
                line = await resp.content.readline()
                if not line:
                    return
                ev = orjson.loads(line)
                events.append({"type": ev["type"], "apiVersion": ev["object"].get("apiVersion"),
                               "spec": ev["object"].get("spec")})
        await asyncio.wait_for(read(1), 10)
        await env.ok("PATCH", env.cr_path("v2", "a"), {"spec": {"replicas": 1}},
                     content_type="application/merge-patch+json")
        await asyncio.wait_for(read(2), 10)
    return {"events": env.normalize(events), "reviews": conv.take(env)}


async def watch_cache(env: Env) -> dict[str, Any]:
    """Which reads convert at request time and which are served from the watch cache, whose copy of a
    served version is converted once per write, in the background: what each step costs in
    ConversionReviews (and objects per review), counted once the background work is done."""
    conv = Conversions()
    env.hooks.handlers["/convert"] = conv
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{env.group}"
    await env.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd(env, "v2"))
    out: dict[str, Any] = {}
    settle = env.settle  # the background conversions of a write are done by then
    try:
        async def served() -> bool:
            return (await env.call("GET", env.cr_path("v1"))).status == 200
        await until(served, "the CRD served")

        def widget(name: str, replicas: int) -> dict[str, Any]:
            return {"apiVersion": f"{env.group}/v2", "kind": "Widget", "metadata": {"name": name},
                    "spec": {"replicas": replicas}}

        def items(r: Reply) -> int:
            return len(r.body.get("items") or []) if isinstance(r.body, dict) else -1

        async def step(what: str, call: Callable[[], Awaitable[Reply]]) -> Reply:
            await asyncio.sleep(settle)
            conv.take(env)
            r = await call()
            await asyncio.sleep(settle)
            out[what] = {"status": r.status, "items": items(r), "reviews": conv.take(env)}
            return r

        for i in range(3):
            created = await step(f"create v2 #{i}", lambda i=i: env.call("POST", env.cr_path("v2"),
                                                                          widget(f"w{i}", 3)))
        # the last write's: a watch cache has seen it (a LIST's resourceVersion is etcd's, which other
        # writers on a shared cluster move on, and a 1.24 watch cache waits 3 s for it, then says 504)
        rv = created.body["metadata"]["resourceVersion"]
        await step("list v1", lambda: env.call("GET", env.cr_path("v1")))
        cases: list[tuple[str, str, dict[str, str]]] = [
            ("list v1, resourceVersion=0", env.cr_path("v1"), {"resourceVersion": "0"}),
            ("list v1, resourceVersion=0, limit=2", env.cr_path("v1"), {"resourceVersion": "0", "limit": "2"}),
            ("list v1, resourceVersion=<last write's>", env.cr_path("v1"), {"resourceVersion": rv}),
            ("list v1, resourceVersion=<last write's>, limit=2", env.cr_path("v1"),
             {"resourceVersion": rv, "limit": "2"}),
            ("list v1, limit=2", env.cr_path("v1"), {"limit": "2"}),
            ("list v1 in all namespaces, resourceVersion=0", f"/apis/{env.group}/v1/widgets", {"resourceVersion": "0"}),
            ("list v2", env.cr_path("v2"), {}),
            ("get v1", env.cr_path("v1", "w0"), {}),
            ("get v1, resourceVersion=0", env.cr_path("v1", "w0"), {"resourceVersion": "0"}),
        ]
        for what, path, params in cases:
            await step(what, lambda path=path, params=params: env.call("GET", path, params=params))
        out["watch v1, initial events"] = await _watch_from(env, conv, settle, {})
        out["watch v1 from the last write's resourceVersion, a write through v2"] = await _watch_from(
            env, conv, settle, {"resourceVersion": rv}, write=lambda: env.ok(
                "PATCH", env.cr_path("v2", "w1"), {"spec": {"replicas": 1}},
                content_type="application/merge-patch+json"))
        await step("patch v2", lambda: env.call("PATCH", env.cr_path("v2", "w2"), {"spec": {"replicas": 5}},
                                                content_type="application/merge-patch+json"))
        await step("delete v2", lambda: env.call("DELETE", env.cr_path("v2", "w0")))
    finally:
        await remove_crd(env, crd_path)
    return out


async def _watch_from(env: Env, conv: Conversions, settle: float, params: dict[str, str], *,
                      write: Callable[[], Awaitable[Any]] | None = None) -> dict[str, Any]:
    """A watch through v1 for a while (with `write` made meanwhile): its events and what it cost."""
    assert env._session is not None
    await asyncio.sleep(settle)
    conv.take(env)
    events: list[str] = []
    headers = dict(env._headers, Accept="application/json")
    async with env._session.get(env._base + env.cr_path("v1"), headers=headers, ssl=env._ssl,
                                params={"watch": "true", "timeoutSeconds": "2", **params}) as resp:
        if write is not None:
            await asyncio.sleep(settle)
            await write()
        async for line in resp.content:
            if line.strip():
                ev = orjson.loads(line)
                events.append(f"{ev['type']} {ev['object'].get('apiVersion', '')}")
    await asyncio.sleep(settle)
    return {"events": env.normalize(events), "reviews": conv.take(env)}


async def match_policy(env: Env) -> dict[str, Any]:
    """A webhook registered for v2 only, called for a v1 request (matchPolicy Equivalent) and not
    (Exact); and storedVersions as the storage version changes."""
    env.group = f"mp{env.group}"  # a CRD of its own (the previous one may still be terminating)
    conv = Conversions()
    env.hooks.handlers["/convert"] = conv
    seen: list[dict[str, Any]] = []

    async def record(review: dict[str, Any]) -> dict[str, Any]:
        seen.append(review["request"])
        return admission_answer(review, patch=[{"op": "add", "path": "/metadata/labels", "value": {"seen": "v2"}}])

    env.hooks.handlers["/v2-only"] = record
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{env.group}"
    await env.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd(env, "v1"))
    out: dict[str, Any] = {}
    name = f"mp-{env.tag}"
    try:
        async def served() -> bool:
            return (await env.call("GET", env.cr_path("v2"))).status == 200
        await until(served, "the CRD served")

        def entry(policy: str, label: str) -> dict[str, Any]:
            return {"name": f"{label}.{env.tag}.kubeloop.dev", "clientConfig": env.hooks.client_config("/v2-only"),
                    "rules": [{"apiGroups": [env.group], "apiVersions": ["v2"], "resources": ["widgets"],
                               "operations": ["CREATE"]}],
                    "matchPolicy": policy, "sideEffects": "None", "admissionReviewVersions": ["v1"],
                    "objectSelector": {"matchLabels": {"policy": label}}}
        await env.ok("POST", f"/apis/{ADMISSION}/mutatingwebhookconfigurations", {
            "apiVersion": ADMISSION, "kind": "MutatingWebhookConfiguration", "metadata": {"name": name},
            "webhooks": [entry("Equivalent", "equivalent"), entry("Exact", "exact")]})

        async def in_effect() -> bool:
            probe = {"apiVersion": f"{env.group}/v2", "kind": "Widget",
                     "metadata": {"name": f"probe-{secrets.token_hex(3)}", "labels": {"policy": "equivalent"}},
                     "spec": {"replicas": 1}}
            await env.call("POST", env.cr_path("v2"), probe, params={"dryRun": "All"})
            return bool(seen)
        await until(in_effect, "the configuration in effect")
        seen.clear()
        for label in ("equivalent", "exact"):
            await asyncio.sleep(env.settle)
            conv.take(env)
            obj = {"apiVersion": f"{env.group}/v1", "kind": "Widget",
                   "metadata": {"name": label, "labels": {"policy": label}}, "spec": {"size": "small"}}
            r = await env.call("POST", env.cr_path("v1"), obj)
            await asyncio.sleep(env.settle)
            out[f"create v1, {label}"] = {"reply": reply(env, r), "reviews": conv.take(env),
                                          "admission": env.normalize(seen)}
            seen.clear()
        crd = await env.ok("GET", crd_path)
        out["storedVersions, storage v1"] = crd["status"]["storedVersions"]
        crd["spec"]["versions"][0]["storage"], crd["spec"]["versions"][1]["storage"] = False, True
        crd = await env.ok("PUT", crd_path, crd)
        out["storedVersions, storage v2"] = crd["status"]["storedVersions"]
        # a no-op update through the storage version rewrites an object stored as v1
        obj = await env.ok("GET", env.cr_path("v2", "equivalent"))
        await asyncio.sleep(env.settle)
        conv.take(env)
        rewritten = await env.call("PUT", env.cr_path("v2", "equivalent"), obj)
        await asyncio.sleep(env.settle)
        out["no-op update of an object stored as v1"] = {
            "resourceVersion changed": rewritten.body["metadata"]["resourceVersion"] != obj["metadata"][
                "resourceVersion"], "reviews": conv.take(env)}
        again = await env.call("PUT", env.cr_path("v2", "equivalent"), rewritten.body)
        await asyncio.sleep(env.settle)
        out["no-op update of an object stored as v2"] = {
            "resourceVersion changed": again.body["metadata"]["resourceVersion"] != rewritten.body["metadata"][
                "resourceVersion"], "reviews": conv.take(env)}
        crd = await env.ok("GET", crd_path)
        status = await env.call("PATCH", crd_path + "/status", {"status": {"storedVersions": ["v2"]}},
                                content_type="application/merge-patch+json")
        out["prune storedVersions"] = status.body["status"]["storedVersions"] if status.status == 200 else \
            reply(env, status)
        bad = await env.call("PATCH", crd_path + "/status", {"status": {"storedVersions": ["v1"]}},
                             content_type="application/merge-patch+json")
        out["storedVersions without the storage version"] = bad.body["status"]["storedVersions"] \
            if bad.status == 200 else reply(env, bad)
    finally:
        await env.call("DELETE", f"/apis/{ADMISSION}/mutatingwebhookconfigurations/{name}")
        await remove_crd(env, crd_path)
    return out


async def remove_crd(env: Env, crd_path: str) -> None:
    """Delete the CRD and wait until it is gone, while the conversion webhook still serves: the API
    server deletes its objects first, reading those stored in another version through the webhook."""
    conv = env.hooks.handlers.get("/convert")
    if isinstance(conv, Conversions):
        conv.fail = False
    await env.call("DELETE", crd_path)

    async def gone() -> bool:
        return (await env.call("GET", crd_path)).status == 404
    await until(gone, "the CRD deleted")


SCENARIOS: dict[str, Callable[[Env], Awaitable[dict[str, Any]]]] = {
    "admission flow": admission_flow,
    "denials": denials,
    "failures": failures,
    "selectors": selectors,
    "conversion": conversion,
    "conversion from the watch cache": watch_cache,
    "match policy and stored versions": match_policy,
}


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def run(kubeconfig: str, names: list[str] | None = None, *, settle: float = 0.0) -> dict[str, Any]:
    """Run the scenarios against the cluster of `kubeconfig`; the transcript."""
    hooks = Hooks()
    await hooks.start()
    env = Env(kubeconfig, hooks, settle=settle)
    await env.open()
    out: dict[str, Any] = {}
    try:
        await env.ok("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": env.namespace}})
        for name, scenario in SCENARIOS.items():
            if names and name not in names:
                continue
            hooks.handlers.clear()
            out[name] = await scenario(env)
    finally:
        with contextlib.suppress(Exception):
            await env.call("DELETE", f"/api/v1/namespaces/{env.namespace}")
        await env.close()
        await hooks.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"), required=False)
    parser.add_argument("--out", default=str(RECORDING))
    parser.add_argument("--only", action="append")
    args = parser.parse_args()
    if not args.kubeconfig:
        sys.exit("--kubeconfig (or KUBECONFIG) names the cluster to record")
    transcript = asyncio.run(run(args.kubeconfig, args.only, settle=0.5))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(transcript, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
