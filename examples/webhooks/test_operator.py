"""The Widget operator's contract, on the emulator (and on a real cluster with KUBELOOP_TEST_KUBECONFIG):
admission, conversion both ways, lossless round trips, a certificate rotation while serving, the
migration of objects stored as v1, and the dev loop through `kubeloop run --webhook-host`.

The webhook server runs in the test process on 127.0.0.1; the API server calls it through URL
clientConfigs (a real API server on the same machine reaches it on loopback too).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime
import signal
import socket
import ssl
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography import x509

from kubeloop import Client
from kubeloop.client import ApiError, Forbidden, NotFound
from kubeloop.testing import TestCluster, check_lossless, eventually, install_crd
from kubeloop.webhooks import (
    CertificateSource,
    ClientConfig,
    EphemeralCertificates,
    SecretCertificates,
    WebhookServer,
    migrate_storage_version,
)

from .operator import GROUP, MANAGED_LABEL, VERSIONS, webhooks

V1, V2 = f"{GROUP}/v1/Widget", f"{GROUP}/v2/Widget"
CRD_NAME = f"widgets.{GROUP}"
CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


def widget(version: str, name: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Widget", "metadata": meta, "spec": spec}


async def _gone(client: Client, kind: str, name: str) -> bool:
    try:
        await client.get(kind, name)
    except NotFound:
        return True
    return False


@contextlib.asynccontextmanager
async def serving(client: Client, certificates: CertificateSource, *,
                  storage: str = "v2") -> AsyncIterator[WebhookServer]:
    """The webhook server running, the CRD and the webhook configurations installed pointing at it;
    all removed afterwards (the CRD waited for, so the next test can install it again)."""
    async with WebhookServer(webhooks, certificates, host="127.0.0.1", port=0).running() as server:
        cc = ClientConfig(url=server.url, ca_bundle=certificates.ca_bundle)
        async with _installed(client, cc, storage):
            yield server


@contextlib.asynccontextmanager
async def _installed(client: Client, cc: ClientConfig, storage: str) -> AsyncIterator[None]:
    """The Widget CRD and the webhook configurations at `cc`, removed afterwards."""
    definition = webhooks.crds(cc)[0]
    if storage != "v2":
        for v in definition["spec"]["versions"]:
            v["storage"] = v["name"] == storage
    configurations = webhooks.configurations(cc)
    try:
        await eventually(lambda: _gone(client, CRD, CRD_NAME), 60, interval=0.2, what="an earlier Widget CRD gone")
        await install_crd(client, definition)
        for c in configurations:
            await client.create(c)
        yield
    finally:
        for c in configurations:
            with contextlib.suppress(NotFound):
                await client.delete(f"admissionregistration.k8s.io/v1/{c['kind']}", c["metadata"]["name"])
        with contextlib.suppress(NotFound):
            await client.delete(CRD, CRD_NAME)
        await eventually(lambda: _gone(client, CRD, CRD_NAME), 60, interval=0.2, what="the Widget CRD gone")


async def admitted(client: Client, obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """Create `obj`, retrying while a real API server has not seen the new configurations yet."""
    async def attempt() -> dict[str, Any] | None:
        try:
            created = await client.create(obj, namespace=namespace, dry_run=True)
        except ApiError:
            return None
        if MANAGED_LABEL not in (created["metadata"].get("labels") or {}):
            return None  # the mutating webhook is not in effect yet
        return await client.create(obj, namespace=namespace)
    return await eventually(attempt, 20, interval=0.2, what="the webhooks in effect")


async def test_admission_denies_forbidden_names_and_labels_widgets(client: Client, namespace: str) -> None:
    async with serving(client, EphemeralCertificates(["127.0.0.1"])):
        created = await admitted(client, widget("v2", "plain", {"replicas": 2}), namespace)
        assert created["metadata"]["labels"] == {MANAGED_LABEL: "true"}
        kept = await client.create(widget("v1", "kept", {"size": "small"}, {MANAGED_LABEL: "no"}), namespace=namespace)
        assert kept["metadata"]["labels"] == {MANAGED_LABEL: "no"}  # added only when missing
        for version, spec in (("v2", {"replicas": 1}), ("v1", {"size": "large"})):
            with pytest.raises(Forbidden) as denied:
                await client.create(widget(version, "forbidden-one", spec), namespace=namespace)
            assert "may not start with 'forbidden-'" in str(denied.value)
            assert "forbidden-names.widgets" in str(denied.value)  # the message names the webhook
        with pytest.raises(NotFound):
            await client.get(V2, "forbidden-one", namespace=namespace)
        # an update is admitted too: the label comes back when removed
        await client.patch(V2, "plain", [{"op": "remove", "path": "/metadata/labels"}], type="json",
                           namespace=namespace)
        assert (await client.get(V2, "plain", namespace=namespace))["metadata"]["labels"] == {MANAGED_LABEL: "true"}


async def test_conversion_both_ways_and_round_trips(client: Client, namespace: str) -> None:
    async with serving(client, EphemeralCertificates(["127.0.0.1"])):
        await admitted(client, widget("v1", "medium", {"size": "medium"}), namespace)
        assert (await client.get(V2, "medium", namespace=namespace))["spec"] == {"replicas": 3}
        await client.create(widget("v2", "seven", {"replicas": 7}), namespace=namespace)
        as_v1 = await client.get(V1, "seven", namespace=namespace)
        assert as_v1["spec"] == {"size": "large"}
        # a v1 round trip (read, change a label, write back) keeps the 7
        as_v1["metadata"]["labels"]["team"] = "blue"
        await client.replace(as_v1, namespace=namespace)
        back = await client.get(V2, "seven", namespace=namespace)
        assert back["spec"] == {"replicas": 7} and back["metadata"]["labels"]["team"] == "blue"
        assert "kubeloop.dev/conversion-data" not in (back["metadata"].get("annotations") or {})
        # a v1 client who changes the size gets that size's replicas
        await client.patch(V1, "seven", {"spec": {"size": "small"}}, namespace=namespace)
        assert (await client.get(V2, "seven", namespace=namespace))["spec"] == {"replicas": 1}
        listed = await client.list(V1, namespace=namespace)
        assert {i["metadata"]["name"]: i["spec"] for i in listed.items} == {
            "medium": {"size": "medium"}, "seven": {"size": "small"}}


def test_every_version_converts_to_the_other_and_back_unchanged() -> None:
    check_lossless(VERSIONS, max_examples=60)


def _served_certificate(port: int, ca: bytes) -> x509.Certificate:
    ctx = ssl.create_default_context(cadata=ca.decode())
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock, \
            ctx.wrap_socket(sock, server_hostname="127.0.0.1") as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


async def test_certificate_rotation_while_serving(client: Client, namespace: str) -> None:
    """A serving certificate of 4 s and a CA of 9 s, renewed with a third of their life left: the
    server keeps answering through renewals of both, on the same port, with no restart."""
    certs = SecretCertificates(client, namespace, "widgets-webhook-tls", ["127.0.0.1"],
                               configurations=[webhooks.name], crds=webhooks.crd_names,
                               validity=datetime.timedelta(seconds=4), ca_validity=datetime.timedelta(seconds=9),
                               check_interval=0.5, ca_grace=1.0)
    stop = asyncio.Event()
    keeper = asyncio.create_task(certs.run(stop))
    try:
        await eventually(lambda: certs.ready, 10, what="the first certificate")
        async with serving(client, certs) as server:
            port = server.port
            first = certs.bundle
            assert first is not None
            await admitted(client, widget("v1", "w0", {"size": "small"}), namespace)
            serials, ca_subjects = set(), set()
            for i in range(1, 14):  # ~13 s: the CA is renewed once, the serving certificate several times
                await client.create(widget("v1" if i % 2 else "v2", f"w{i}", {"size": "small"} if i % 2 else
                                           {"replicas": 1}), namespace=namespace)
                assert (await client.get(V2, f"w{i}", namespace=namespace))["metadata"]["labels"][MANAGED_LABEL]
                bundle = certs.bundle
                assert bundle is not None
                served = await asyncio.to_thread(_served_certificate, port, bundle.ca_bundle())
                serials.add(served.serial_number)
                ca_subjects.add(bundle.cas[0].subject.rfc4514_string())
                await asyncio.sleep(1.0)
            assert server.port == port and server.ready
            assert len(serials) >= 3, serials  # renewed while serving
            assert len(ca_subjects) >= 2, ca_subjects  # the CA too
            secret = await client.get("v1/Secret", "widgets-webhook-tls", namespace=namespace)
            assert secret["type"] == "kubernetes.io/tls" and {"tls.crt", "tls.key", "ca.crt", "ca.key"} <= set(
                secret["data"])
    finally:
        stop.set()
        await keeper


async def test_two_replicas_share_one_secret(client: Client, namespace: str) -> None:
    """Replicas starting together agree on one CA and certificate (the API server settles the race)."""
    replicas = [SecretCertificates(client, namespace, "shared-tls", ["127.0.0.1"]) for _ in range(3)]
    bundles = await asyncio.gather(*(r.sync() for r in replicas))
    assert len({b.cert_pem for b in bundles}) == 1
    assert len({b.ca_pem for b in bundles}) == 1


async def test_migration_of_objects_stored_as_v1(apiserver: TestCluster, client: Client, namespace: str) -> None:
    async with serving(client, EphemeralCertificates(["127.0.0.1"]), storage="v1"):
        for i in range(7):
            await admitted(client, widget("v1", f"old-{i}", {"size": "medium"}), namespace)
        crd = await client.get(CRD, CRD_NAME)
        assert crd["status"]["storedVersions"] == ["v1"]
        changed = copy.deepcopy(crd)
        for v in changed["spec"]["versions"]:
            v["storage"] = v["name"] == "v2"
        await client.replace(changed)
        assert (await client.get(CRD, CRD_NAME))["status"]["storedVersions"] == ["v1", "v2"]

        result = await migrate_storage_version(client, CRD_NAME, page_size=3)
        assert result.done and result.rewritten >= 7, result
        assert (await client.get(CRD, CRD_NAME))["status"]["storedVersions"] == ["v2"]
        if apiserver.server is not None:  # the emulator shows how objects are stored
            bucket = apiserver.server.store.buckets[f"crd:{GROUP}/widgets"]
            assert {st.obj["apiVersion"] for k, st in bucket.objects.items() if k[0] == namespace} == {f"{GROUP}/v2"}
        assert {i["spec"]["replicas"] for i in (await client.list(V2, namespace=namespace)).items} == {3}

        again = await migrate_storage_version(client, CRD_NAME)
        assert again.done and again.rewritten == 0 and again.stored_before == ["v2"]


ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_dev_loop_through_the_cli(apiserver: TestCluster, client: Client, namespace: str) -> None:
    """`kubeloop run operator.py --webhook-host 127.0.0.1` serves the webhooks against the cluster: the
    denial, the label and the conversion seen by a client; its metrics on /metrics; and after SIGINT
    the webhook configurations are gone and the CRD's conversion is what it was (none: it created the
    CRD), its Widgets kept."""
    await eventually(lambda: _gone(client, CRD, CRD_NAME), 60, interval=0.2, what="an earlier Widget CRD gone")
    root = ROOT
    port, webhook_port = _free_port(), _free_port()
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("kubeloop")), "run", "examples/webhooks/operator.py",
        "--webhook-host", "127.0.0.1", "--webhook-port", str(webhook_port), "--kubeconfig", apiserver.kubeconfig,
        "--health-port", str(port), "--metrics-port", str(port), "--bind-address", "127.0.0.1", cwd=str(root),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with aiohttp.ClientSession() as session:
            async def ready() -> bool:
                assert proc.returncode is None, "kubeloop run exited"
                try:
                    async with session.get(f"http://127.0.0.1:{port}/readyz") as r:
                        return r.status == 200
                except aiohttp.ClientError:
                    return False
            await eventually(ready, 30, interval=0.1, what="kubeloop run ready")
            crd = await client.get(CRD, CRD_NAME)
            assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"] == \
                f"https://127.0.0.1:{webhook_port}/convert"
            created = await admitted(client, widget("v1", "medium", {"size": "medium"}), namespace)
            assert created["spec"] == {"size": "medium"}
            as_v2 = await client.get(V2, "medium", namespace=namespace)
            assert as_v2["spec"] == {"replicas": 3} and as_v2["metadata"]["labels"] == {MANAGED_LABEL: "true"}
            with pytest.raises(Forbidden, match="may not start with 'forbidden-'"):
                await client.create(widget("v2", "forbidden-one", {"replicas": 1}), namespace=namespace)
            async with session.get(f"http://127.0.0.1:{port}/metrics") as r:
                text = await r.text()
            assert any(line.startswith("controller_runtime_webhook_requests_total{") and 'webhook="/convert"' in line
                       for line in text.splitlines())
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    try:
        assert proc.returncode == 0, err.decode()
        for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            with pytest.raises(NotFound):
                await client.get(f"admissionregistration.k8s.io/v1/{kind}", webhooks.name)
        crd = await client.get(CRD, CRD_NAME)
        assert crd["spec"]["conversion"] == {"strategy": "None"}
        assert (await client.get(V2, "medium", namespace=namespace))["spec"] == {"replicas": 3}
    finally:
        with contextlib.suppress(NotFound):
            await client.delete(CRD, CRD_NAME)
        await eventually(lambda: _gone(client, CRD, CRD_NAME), 60, interval=0.2, what="the Widget CRD gone")
