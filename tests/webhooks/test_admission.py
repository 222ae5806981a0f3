"""Admission webhooks: what is derived from a declaration, and how a handler is answered for, through
the HTTPS server (a real TLS connection, as the API server makes)."""

from __future__ import annotations

import asyncio
import base64
import ssl
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from kubeloop import metrics
from kubeloop.webhooks import (
    AdmissionRequest,
    AdmissionWebhook,
    ClientConfig,
    EphemeralCertificates,
    Verdict,
    Webhooks,
    WebhookServer,
    allow,
    deny,
)

from .models import Gadget


def review(obj: Any, *, operation: str = "CREATE", old: Any = None, dry_run: bool = False) -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": {"group": "tests.kubeloop.dev", "version": "v1", "kind": "Gadget"},
        "resource": {"group": "tests.kubeloop.dev", "version": "v1", "resource": "gadgets"},
        "name": (obj or old or {}).get("metadata", {}).get("name", ""), "namespace": "ns", "operation": operation,
        "userInfo": {"username": "alice", "groups": ["devs"]}, "object": obj, "oldObject": old, "dryRun": dry_run,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}}}


def gadget(name: str = "g", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "tests.kubeloop.dev/v1", "kind": "Gadget", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"color": "red", **spec}}


hooks = Webhooks("gadgets.tests.kubeloop.dev")
seen: list[AdmissionRequest[Any]] = []


@hooks.validating(Gadget, operations=("CREATE", "UPDATE", "DELETE"), labels={"team": "a"},
                  namespaces=["prod", "dev"], namespace_labels="env in (prod)")
def check(req: AdmissionRequest[Gadget]) -> Verdict:
    seen.append(req)
    if req.object is not None and req.object.spec.color == "black":
        req.warn("black is not a color")
        return deny("no black gadgets", code=422, reason="Invalid")
    return allow("looked at it")


@hooks.mutating(Gadget)
def paint(req: AdmissionRequest[Gadget]) -> Gadget | None:
    assert req.object is not None
    if req.object.spec.color == "blue":
        return None
    return req.object.model_copy(update={"spec": req.object.spec.model_copy(update={"color": "blue"})})


@hooks.validating(Gadget, name="raises.gadgets.tests.kubeloop.dev")
def raises(req: AdmissionRequest[Gadget]) -> Verdict:
    raise RuntimeError("boom")


@hooks.validating(Gadget, name="sleeps.gadgets.tests.kubeloop.dev", timeout_seconds=1, failure_policy="Ignore")
async def sleeps(req: AdmissionRequest[Gadget]) -> Verdict:
    await asyncio.sleep(5)
    return allow()


@hooks.mutating("v1/configmaps", name="untyped.configmaps.core")
def untyped(req: AdmissionRequest[dict[str, Any]]) -> dict[str, Any]:
    assert isinstance(req.object, dict)
    obj = req.object
    obj.setdefault("data", {})["added"] = req.user_info.username
    return obj


def test_configuration_entries_state_the_defaults_and_derive_the_selectors() -> None:
    cc = ClientConfig(url="https://127.0.0.1:9443", ca_bundle=b"PEM")
    validating = hooks.validating_configuration(cc)
    assert validating is not None and validating["metadata"]["name"] == "gadgets.tests.kubeloop.dev"
    entry = next(w for w in validating["webhooks"] if w["name"] == "check.gadgets.tests.kubeloop.dev")
    assert entry["clientConfig"] == {"url": "https://127.0.0.1:9443/validate/check.gadgets.tests.kubeloop.dev",
                                     "caBundle": base64.b64encode(b"PEM").decode()}
    assert entry["rules"] == [{"apiGroups": ["tests.kubeloop.dev"], "apiVersions": ["v1"], "resources": ["gadgets"],
                               "operations": ["CREATE", "UPDATE", "DELETE"], "scope": "Namespaced"}]
    assert (entry["failurePolicy"], entry["sideEffects"], entry["timeoutSeconds"], entry["matchPolicy"],
            entry["admissionReviewVersions"]) == ("Fail", "None", 10, "Equivalent", ["v1"])
    assert entry["objectSelector"] == {"matchLabels": {"team": "a"}}
    assert entry["namespaceSelector"] == {"matchExpressions": [
        {"key": "env", "operator": "In", "values": ["prod"]},
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["dev", "prod"]}]}
    mutating = hooks.mutating_configuration(ClientConfig(service_namespace="ops", service_name="gadgets"))
    assert mutating is not None
    paint_entry = next(w for w in mutating["webhooks"] if w["name"].startswith("paint."))
    assert paint_entry["clientConfig"] == {"service": {"namespace": "ops", "name": "gadgets", "port": 443,
                                                       "path": "/mutate/paint.gadgets.tests.kubeloop.dev"}}
    assert paint_entry["reinvocationPolicy"] == "Never" and paint_entry["objectSelector"] == {}
    untyped_entry = next(w for w in mutating["webhooks"] if w["name"] == "untyped.configmaps.core")
    assert untyped_entry["rules"][0]["apiGroups"] == [""] and untyped_entry["rules"][0]["scope"] == "*"


def test_bad_declarations_fail_at_once_with_a_reason() -> None:
    with pytest.raises(ValueError, match="three segments"):
        AdmissionWebhook(Gadget, check, mutating=False, name="too.short")
    with pytest.raises(ValueError, match="between 1 and 30"):
        AdmissionWebhook(Gadget, check, mutating=False, timeout_seconds=31)
    with pytest.raises(ValueError, match="NoneOnDryRun"):
        AdmissionWebhook(Gadget, check, mutating=False, side_effects="Some")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="plural"):
        AdmissionWebhook("apps/v1/Deployment", check, mutating=False)
    with pytest.raises(ValueError, match="declared twice"):
        hooks.validating(Gadget)(check)
    with pytest.raises(ValueError, match="HTTPS"):
        ClientConfig(url="http://127.0.0.1:9443")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[tuple[WebhookServer, EphemeralCertificates]]:
    certs = EphemeralCertificates(["127.0.0.1"])
    async with WebhookServer(hooks, certs, host="127.0.0.1", port=0).running() as srv:
        yield srv, certs


async def post(srv: WebhookServer, certs: EphemeralCertificates, path: str, body: Any) -> tuple[int, Any]:
    ctx = ssl.create_default_context(cadata=certs.ca_bundle.decode())
    async with aiohttp.ClientSession() as s, s.post(srv.url + path, data=orjson.dumps(body), ssl=ctx) as r:
        raw = await r.read()
        try:
            return r.status, orjson.loads(raw)
        except orjson.JSONDecodeError:
            return r.status, raw.decode()


def count(name: str, path: str, *labels: str) -> float:
    value = metrics.REGISTRY.get_sample_value(name, dict(zip(("webhook", *(("code",) if labels else ())),
                                                              (path, *labels), strict=True)))
    return value or 0.0


async def test_validating_answers_carry_the_verdict_and_warnings(server: Any) -> None:
    srv, certs = server
    path = "/validate/check.gadgets.tests.kubeloop.dev"
    before = count("controller_runtime_webhook_requests_total", path, "200")
    status, body = await post(srv, certs, path, review(gadget(color="black")))
    assert status == 200
    response = body["response"]
    assert response["allowed"] is False
    assert response["status"] == {"code": 422, "message": "no black gadgets", "reason": "Invalid"}
    assert response["warnings"] == ["black is not a color"]
    assert seen[-1].user_info.username == "alice" and seen[-1].user_info.groups == ("devs",)
    assert isinstance(seen[-1].object, Gadget) and seen[-1].operation == "CREATE"
    _, body = await post(srv, certs, path, review(gadget()))
    assert body["response"] == {"uid": body["response"]["uid"], "allowed": True, "warnings": ["looked at it"]}
    _, body = await post(srv, certs, path, review(None, operation="DELETE", old=gadget()))
    assert body["response"]["allowed"] is True and seen[-1].object is None and seen[-1].old_object is not None
    assert count("controller_runtime_webhook_requests_total", path, "200") == before + 3
    assert count("controller_runtime_webhook_requests_in_flight", path) == 0


async def test_mutating_answers_with_a_json_patch_from_the_returned_object(server: Any) -> None:
    srv, certs = server
    obj = gadget(size=2)
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    obj["status"] = {"unmodelled": True}
    _, body = await post(srv, certs, "/mutate/paint.gadgets.tests.kubeloop.dev", review(obj))
    response = body["response"]
    assert response["patchType"] == "JSONPatch"
    # only the handler's change: fields the model drops or defaults are left alone
    assert orjson.loads(base64.b64decode(response["patch"])) == [
        {"op": "replace", "path": "/spec/color", "value": "blue"}]
    _, body = await post(srv, certs, "/mutate/paint.gadgets.tests.kubeloop.dev", review(gadget(color="blue")))
    assert "patch" not in body["response"] and body["response"]["allowed"] is True
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    _, body = await post(srv, certs, "/mutate/untyped.configmaps.core", review(cm))
    assert orjson.loads(base64.b64decode(body["response"]["patch"])) == [
        {"op": "add", "path": "/data", "value": {"added": "alice"}}]


async def test_a_handler_that_fails_is_answered_for_by_its_failure_policy(server: Any) -> None:
    srv, certs = server
    raising = "/validate/raises.gadgets.tests.kubeloop.dev"
    before = metrics.REGISTRY.get_sample_value("kubeloop_webhook_handler_failures_total",
                                               {"webhook": raising, "reason": "exception"}) or 0.0
    status, body = await post(srv, certs, raising, review(gadget()))
    assert status == 200 and body["response"]["allowed"] is False  # failurePolicy Fail: denied, with why
    assert body["response"]["status"]["code"] == 500
    assert "raised RuntimeError: boom" in body["response"]["status"]["message"]
    assert metrics.REGISTRY.get_sample_value("kubeloop_webhook_handler_failures_total",
                                             {"webhook": raising, "reason": "exception"}) == before + 1
    # failurePolicy Ignore: allowed, with a warning saying why; answered before the API server gives up
    loop = asyncio.get_running_loop()
    started = loop.time()
    _, body = await post(srv, certs, "/validate/sleeps.gadgets.tests.kubeloop.dev", review(gadget()))
    assert loop.time() - started < 1.0
    assert body["response"]["allowed"] is True
    assert "did not answer within 0.75 s" in body["response"]["warnings"][0]
    # an object the model cannot read is denied as invalid, whatever the policy
    bad = gadget()
    bad["spec"] = {"color": 5}
    _, body = await post(srv, certs, "/validate/check.gadgets.tests.kubeloop.dev", review(bad))
    assert body["response"]["allowed"] is False and body["response"]["status"]["code"] == 422
    assert "spec.color" in body["response"]["status"]["message"]
    # the server is still there
    status, _ = await post(srv, certs, "/validate/check.gadgets.tests.kubeloop.dev", review(gadget()))
    assert status == 200


async def test_what_is_not_a_review_is_refused_plainly(server: Any) -> None:
    srv, certs = server
    status, text = await post(srv, certs, "/validate/nobody.gadgets.tests.kubeloop.dev", review(gadget()))
    assert status == 404 and "no webhook" in text
    status, text = await post(srv, certs, "/validate/check.gadgets.tests.kubeloop.dev", {"kind": "Nope"})
    assert status == 400 and "AdmissionReview" in text
    status, text = await post(srv, certs, "/convert", {"kind": "ConversionReview"})
    assert status == 404  # this server converts nothing
    ctx = ssl.create_default_context(cadata=certs.ca_bundle.decode())
    async with aiohttp.ClientSession() as s, s.get(srv.url + "/readyz", ssl=ctx) as r:
        assert r.status == 200 and srv.ready
