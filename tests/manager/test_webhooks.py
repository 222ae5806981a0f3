"""The Manager serves webhooks (`Manager.add_webhooks`, `WebhookOptions`): in the ``servers`` group on
every replica, in ``/readyz``, with controller-runtime's metrics on ``/metrics``; start-up failures
are one line. Reviews are sent to the server as the API server sends them (HTTPS, checked against
the CA), so nothing is installed in the cluster."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import types
import uuid
from typing import Any

import aiohttp
import pytest

from kubeloop import Client, Manager
from kubeloop.manager import (
    LeaderElection,
    LoadError,
    ManagerError,
    WebhookOptions,
    check_module,
    setup_manager,
)
from kubeloop.webhooks import (
    AdmissionRequest,
    CertificateSource,
    DirectoryCertificates,
    EphemeralCertificates,
    SecretCertificates,
    Verdict,
    Webhooks,
    WebhookServer,
    allow,
    deny,
    service_hosts,
)

hooks = Webhooks("manager-tests.kubeloop.dev")


@hooks.validating("v1/configmaps", name="names.manager-tests.kubeloop.dev")
def names(req: AdmissionRequest[Any]) -> Verdict:
    return deny("no 'no-' names") if req.name.startswith("no-") else allow()


PATH = "/validate/names.manager-tests.kubeloop.dev"


async def ask(server: WebhookServer, ca: bytes, name: str) -> dict[str, Any]:
    """An AdmissionReview for ConfigMap `name`, sent as the API server sends it; the response."""
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"}, "name": name, "namespace": "ns",
        "operation": "CREATE", "userInfo": {"username": "alice"}, "dryRun": False,
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}}}
    ctx = ssl.create_default_context(cadata=ca.decode())
    async with aiohttp.ClientSession() as session, session.post(server.url + PATH, json=review, ssl=ctx) as r:
        assert r.status == 200, await r.text()
        return dict((await r.json())["response"])


def manager_for(client: Client, **kw: Any) -> Manager:
    return Manager(client, health_port=0, metrics_port=0, bind_address="127.0.0.1",
                   webhook_options=WebhookOptions(port=0, host="127.0.0.1"), **kw)


class Switch:
    """A certificate source whose certificate can be taken away (to see readiness follow it)."""

    def __init__(self) -> None:
        self.inner = EphemeralCertificates(["127.0.0.1"])
        self.on = True
        self.last_error: str | None = None
        self.ssl_context = self.inner.ssl_context
        self.ca_bundle = self.inner.ca_bundle

    @property
    def ready(self) -> bool:
        return self.on

    async def wait_ready(self) -> None:
        await self.inner.wait_ready()

    async def run(self, stop: Any) -> None:
        await stop.wait()


async def test_the_manager_serves_webhooks_in_readyz_and_metrics(client: Client) -> None:
    source = Switch()
    manager = manager_for(client)
    server = manager.add_webhooks(hooks, source)
    assert manager.webhooks is hooks and manager.webhook_server is server
    async with manager:
        assert await manager.wait_ready(20), manager.readiness()
        assert server.ready and server.port
        assert (await ask(server, source.ca_bundle, "no-thanks"))["allowed"] is False
        assert (await ask(server, source.ca_bundle, "fine"))["allowed"] is True
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{manager.health_url}/readyz") as r:
                assert r.status == 200
            async with session.get(f"{manager.metrics_url}/metrics") as r:
                text = await r.text()
            for family in ("controller_runtime_webhook_requests_total", "controller_runtime_webhook_latency_seconds",
                           "controller_runtime_webhook_requests_in_flight"):
                assert f'{family.removesuffix("_total")}' in text
                assert any(line.startswith(family) and f'webhook="{PATH}"' in line for line in text.splitlines()), \
                    family
            assert any(line.startswith("controller_runtime_webhook_requests_total{") and f'webhook="{PATH}"' in line
                       and 'code="200"' in line for line in text.splitlines())
            assert 'kubeloop_webhook_certificate_expiry_timestamp_seconds{certificate="serving",source="ephemeral"}' \
                in text
            source.on = False  # the certificate gone: not ready, and /readyz says why
            async with session.get(f"{manager.health_url}/readyz") as r:
                assert r.status == 503
                assert "webhook certificates: none loaded yet" in await r.text()
            assert "webhook server: not serving" in "\n".join(manager.readiness())
            source.on = True
            assert await manager.wait_ready(5)


async def test_every_replica_serves_webhooks_while_one_leads(client: Client, namespace: str) -> None:
    """The webhook server is not leader-only: a standby answers reviews too."""
    name = f"webhooks-{uuid.uuid4().hex[:6]}"
    managers = [manager_for(client, leader_election=LeaderElection(name, namespace=namespace, identity=f"replica-{i}",
                                                                   lease_duration=2, renew_deadline=1.5,
                                                                   retry_period=0.2)) for i in range(2)]
    sources = [EphemeralCertificates(["127.0.0.1"]) for _ in managers]
    servers = [m.add_webhooks(hooks, s) for m, s in zip(managers, sources, strict=True)]
    async with contextlib.AsyncExitStack() as stack:
        for m in managers:
            await stack.enter_async_context(m)
        for m in managers:
            assert await m.wait_ready(20), m.readiness()
        assert [m.is_leader for m in managers].count(True) == 1
        for server, source in zip(servers, sources, strict=True):
            assert (await ask(server, source.ca_bundle, "no-way"))["allowed"] is False


def taken_port() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


async def test_a_taken_webhook_port_fails_the_start_in_one_line(client: Client) -> None:
    with taken_port() as s:
        port = s.getsockname()[1]
        manager = Manager(client, webhook_options=WebhookOptions(port=port, host="127.0.0.1"))
        manager.add_webhooks(hooks, EphemeralCertificates(["127.0.0.1"]))
        with pytest.raises(ManagerError) as failed:
            await manager.start(20)
        assert str(failed.value).startswith(f"cannot serve webhooks on 127.0.0.1:{port}: "), failed.value


class Never:
    """A certificate source that never gets a certificate, saying why."""

    ready = False
    last_error = "Secret ops/tls: 403 Forbidden: secrets is forbidden"

    async def wait_ready(self) -> None:
        await asyncio.Event().wait()

    async def run(self, stop: Any) -> None:
        await stop.wait()


async def test_certificates_that_never_come_fail_the_start_naming_why(client: Client) -> None:
    manager = Manager(client, connect_timeout=0.3)
    never: Any = Never()
    manager.add_webhooks(hooks, never)
    with pytest.raises(ManagerError) as failed:
        await manager.start(20)
    assert str(failed.value) == f"webhook certificates: none after 0.3s: {Never.last_error}"


async def test_webhook_options_say_where_the_certificates_come_from(client: Client, tmp_path: Any) -> None:
    secret = WebhookOptions(service="widgets-webhook").certificates(hooks, client, "ops")
    assert isinstance(secret, SecretCertificates)
    assert (secret.namespace, secret.name, secret.hosts) == ("ops", "widgets-webhook-tls",
                                                            service_hosts("ops", "widgets-webhook"))
    assert list(secret.configurations) == [hooks.name] and list(secret.crds) == []
    named = WebhookOptions(service="w", secret="mine").certificates(hooks, client, "ops")
    assert isinstance(named, SecretCertificates) and named.name == "mine"
    dev = WebhookOptions(dev_host="127.0.0.1").certificates(hooks, client, "ops")
    assert isinstance(dev, EphemeralCertificates) and dev.hosts == ["127.0.0.1"]
    source: CertificateSource = EphemeralCertificates(["x.svc"])
    bundle = source.ca_bundle  # a cert-manager directory: the mounted Secret's files
    eph: Any = source
    assert eph.bundle is not None
    (tmp_path / "tls.crt").write_bytes(eph.bundle.cert_pem)
    (tmp_path / "tls.key").write_bytes(eph.bundle.key_pem)
    (tmp_path / "ca.crt").write_bytes(bundle)
    assert isinstance(WebhookOptions(cert_dir=str(tmp_path)).certificates(hooks, client, "ops"), DirectoryCertificates)
    with pytest.raises(ManagerError, match=r"webhook certificates in .*missing"):
        WebhookOptions(cert_dir=str(tmp_path / "missing")).certificates(hooks, client, "ops")
    with pytest.raises(ManagerError, match="needs certificates: give add_webhooks"):
        WebhookOptions().certificates(hooks, client, "ops")
    for bad, message in (({"dev_host": "0.0.0.0"}, "must be an address the API server can call"),
                         ({"dev_host": "127.0.0.1", "cert_dir": "/x"}, "takes no cert_dir"),
                         ({"port": 70000}, "is not a port"), ({"secret": "s"}, "also needs service=")):
        with pytest.raises(ValueError, match=message):
            WebhookOptions(**bad)


async def test_one_webhooks_set_per_manager(client: Client) -> None:
    manager = Manager(client)
    manager.add_webhooks(hooks, EphemeralCertificates())
    with pytest.raises(ValueError, match="one Webhooks set per manager"):
        manager.add_webhooks(Webhooks("other.kubeloop.dev"), EphemeralCertificates())
    with pytest.raises(TypeError, match=r"takes a kubeloop\.webhooks\.Webhooks"):
        Manager(client).add_webhooks("hooks", EphemeralCertificates())  # type: ignore[arg-type]


async def test_a_module_serves_its_webhooks_by_convention(client: Client) -> None:
    only_webhooks = types.ModuleType("only_webhooks")
    only_webhooks.webhooks = hooks  # type: ignore[attr-defined]
    check_module(only_webhooks)  # webhooks alone are something to run
    manager = Manager(client, webhook_options=WebhookOptions(dev_host="127.0.0.1", port=0))
    await setup_manager(only_webhooks, manager)
    assert manager.webhooks is hooks and manager.runnables == []

    own = Webhooks("own.kubeloop.dev")
    registers = types.ModuleType("registers")
    registers.webhooks = hooks  # type: ignore[attr-defined]
    registers.setup = lambda m: m.add_webhooks(own, EphemeralCertificates())  # type: ignore[attr-defined]
    manager = Manager(client)
    await setup_manager(registers, manager)
    assert manager.webhooks is own  # setup() decided: the module-level set is not added as well

    not_a_set = types.ModuleType("not_a_set")
    not_a_set.webhooks = ["no"]  # type: ignore[attr-defined]
    with pytest.raises(LoadError, match=r"defines no controllers: .* or `webhooks = Webhooks"):
        check_module(not_a_set)
