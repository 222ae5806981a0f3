"""The emulator's webhook calls beyond what the recorded comparison (tests/webhooks/test_recorded.py)
covers: reinvocation, the exemption of the configurations themselves, and the emulator's own
controllers, which never call webhooks (nor convert through one silently)."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import aiohttp.web
import pytest

from kubeloop import Client
from kubeloop.client import InternalError
from kubeloop.testing import APIServer, eventually, install_crd
from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.webhooks import AdmissionRequest, ClientConfig, EphemeralCertificates, Webhooks, WebhookServer

ADMISSION = "admissionregistration.k8s.io/v1"


@contextlib.asynccontextmanager
async def serve(hooks: Webhooks, client: Client) -> AsyncIterator[ClientConfig]:
    certs = EphemeralCertificates(["127.0.0.1"])
    async with WebhookServer(hooks, certs, host="127.0.0.1", port=0).running() as server:
        cc = ClientConfig(url=server.url, ca_bundle=certs.ca_bundle)
        configs = hooks.configurations(cc)
        for c in configs:
            await client.create(c)
        try:
            yield cc
        finally:
            for c in configs:
                await client.delete(f"{ADMISSION}/{c['kind']}", c["metadata"]["name"])


async def test_if_needed_webhooks_run_again_after_a_later_change(emulator: APIServer, client: Client,
                                                                 namespace: str) -> None:
    hooks = Webhooks("reinvoke.tests.kubeloop.dev")
    calls: list[str] = []

    @hooks.mutating("v1/configmaps", name="a.reinvoke.tests.kubeloop.dev", reinvocation_policy="IfNeeded",
                    namespaces=[namespace])
    def first(req: AdmissionRequest[dict[str, Any]]) -> dict[str, Any]:
        calls.append("a")
        obj = req.object
        assert obj is not None
        obj.setdefault("data", {})["seen-by-a"] = ",".join(sorted(obj.get("data", {})))
        return obj

    @hooks.mutating("v1/configmaps", name="b.reinvoke.tests.kubeloop.dev", namespaces=[namespace])
    def second(req: AdmissionRequest[dict[str, Any]]) -> dict[str, Any]:
        calls.append("b")
        obj = req.object
        assert obj is not None
        obj.setdefault("data", {})["from-b"] = "1"
        return obj

    async with serve(hooks, client):
        created = await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                                      namespace=namespace)
    assert calls == ["a", "b", "a"]
    assert created["data"] == {"seen-by-a": "from-b,seen-by-a", "from-b": "1"}


async def test_configurations_are_never_sent_to_webhooks(emulator: APIServer, client: Client, namespace: str) -> None:
    dead = {"name": "dead.tests.kubeloop.dev", "clientConfig": {"url": "https://127.0.0.1:1/x"},
            "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["*"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}
    config = {"apiVersion": ADMISSION, "kind": "ValidatingWebhookConfiguration",
              "metadata": {"name": f"dead-{namespace}"}, "webhooks": [dead]}
    await client.create(config)
    with pytest.raises(InternalError, match="connection refused"):
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, namespace=namespace)
    # the configuration itself can still be changed and deleted (else nothing could fix it)
    await client.patch(f"{ADMISSION}/ValidatingWebhookConfiguration", f"dead-{namespace}",
                       {"metadata": {"labels": {"x": "y"}}})
    await client.delete(f"{ADMISSION}/ValidatingWebhookConfiguration", f"dead-{namespace}")
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, namespace=namespace)


def crd_with_dead_webhook() -> dict[str, Any]:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.dead.tests.kubeloop.dev"},
            "spec": {"group": "dead.tests.kubeloop.dev", "scope": "Namespaced",
                     "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
                     "versions": [{"name": v, "served": True, "storage": v == "v2", "schema": schema}
                                  for v in ("v1", "v2")],
                     "conversion": {"strategy": "Webhook", "webhook": {
                         "conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://127.0.0.1:1/convert"}}}}}


async def test_the_emulators_controllers_never_convert_without_the_webhook(emulator: APIServer, client: Client,
                                                                           namespace: str) -> None:
    await install_crd(client, crd_with_dead_webhook())
    owner = await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}},
                                namespace=namespace)
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    await client.create({"apiVersion": "dead.tests.kubeloop.dev/v2", "kind": "Thing",
                         "metadata": {"name": "child", "ownerReferences": [ref]}}, namespace=namespace)
    with pytest.raises(InternalError, match=r"conversion webhook for dead\.tests\.kubeloop\.dev/v2, Kind=Thing failed"):
        await client.get("dead.tests.kubeloop.dev/v1/Thing", "child", namespace=namespace)
    info = emulator.catalog.lookup("dead.tests.kubeloop.dev", "v1", "things")
    assert info is not None
    stored = emulator.registry.get(info, namespace, "child")
    with pytest.raises(StatusError, match="synchronous path"):
        emulator.registry.view(info, stored)  # no silent apiVersion rewrite
    if not emulator.bare:  # the garbage collector deletes the child all the same
        await client.delete("v1/ConfigMap", "owner", namespace=namespace)

        async def collected() -> bool:
            return not [i for i in (await client.list("dead.tests.kubeloop.dev/v2/Thing", namespace=namespace)).items]
        await eventually(collected, what="the child collected")


async def test_webhook_warnings_reach_the_client_as_the_warning_recorder_writes_them(
        emulator: APIServer, client: Client, namespace: str) -> None:
    # kube-apiserver's warning recorder sends each text once and drops one NewWarningHeader refuses
    # (control characters); quotes are escaped
    hooks = Webhooks("warn.tests.kubeloop.dev")

    @hooks.validating("v1/configmaps", name="w.warn.tests.kubeloop.dev", namespaces=[namespace])
    def check(req: AdmissionRequest[dict[str, Any]]) -> None:
        req.warnings.extend(["same", "same", "tab\there", 'a "quoted" one'])

    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warned"}}
    async with serve(hooks, client), aiohttp.ClientSession() as s, s.post(
            f"{emulator.url}/api/v1/namespaces/{namespace}/configmaps", json=body) as r:
        assert r.status == 201, await r.text()
        assert r.headers.getall("Warning") == ['299 - "same"', '299 - "a \\"quoted\\" one"']


async def test_a_table_of_a_converted_kind_is_made_of_objects_the_webhook_converted(
        emulator: APIServer, client: Client, namespace: str) -> None:
    """``kubectl get`` through a version the CRD converts by webhook: each row's object comes
    through the webhook (a GET and a LIST, as for JSON)."""
    certs = EphemeralCertificates(["127.0.0.1"])
    reviews: list[int] = []

    async def convert(request: aiohttp.web.Request) -> aiohttp.web.Response:
        review = await request.json()
        req = review["request"]
        reviews.append(len(req["objects"]))
        converted = [{**o, "apiVersion": req["desiredAPIVersion"]} for o in req["objects"]]
        return aiohttp.web.json_response({**review, "response": {
            "uid": req["uid"], "result": {"status": "Success"}, "convertedObjects": converted}})

    app = aiohttp.web.Application()
    app.router.add_post("/convert", convert)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0, ssl_context=certs.ssl_context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    crd = crd_with_dead_webhook()
    crd["metadata"]["name"] = "things.live.tests.kubeloop.dev"
    crd["spec"]["group"] = "live.tests.kubeloop.dev"
    crd["spec"]["conversion"]["webhook"]["clientConfig"] = {
        "url": f"https://127.0.0.1:{port}/convert", "caBundle": base64.b64encode(certs.ca_bundle).decode()}
    try:
        await install_crd(client, crd)
        await client.create({"apiVersion": "live.tests.kubeloop.dev/v2", "kind": "Thing",
                             "metadata": {"name": "t"}}, namespace=namespace)
        path = f"{emulator.url}/apis/live.tests.kubeloop.dev/v1/namespaces/{namespace}/things"
        async with aiohttp.ClientSession(headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}) as s:
            for url in (path, f"{path}/t"):
                before = len(reviews)
                async with s.get(url) as r:
                    assert r.status == 200, await r.text()
                    table = await r.json()
                assert table["kind"] == "Table" and [row["cells"][0] for row in table["rows"]] == ["t"]
                assert len(reviews) > before  # the row's object came through the webhook
    finally:
        await client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", crd["metadata"]["name"])
        await runner.cleanup()
