"""Serving a `kubeloop.webhooks.Webhooks` set from the Manager: how (`WebhookOptions`), and the
runnables `Manager.add_webhooks` adds.

    manager = Manager(webhook_options=WebhookOptions(service="widgets-webhook"))   # in a cluster
    manager.add_webhooks(webhooks)                                                # or a module's `webhooks`

- ``servers`` group, every replica (the API server calls any endpoint of the Service):
  `WebhookCertificates` (the certificate source, started first: the server needs a certificate to
  listen with) then `WebhookServing` (the HTTPS server). Both are in ``/readyz``. They start before
  the caches because the caches may need them: listing a custom resource through a version other
  than the one its objects are stored in goes through the conversion webhook.
- ``others`` group, the dev loop only (``dev_host``): `WebhookInstall` installs the webhook
  configurations and the CRDs' conversion pointing at the local server, and puts the cluster back
  when the manager stops, while the server still serves (``others`` stops before ``servers``).
- ``leader`` group, with ``migrate``: `StorageVersionMigration` rewrites stored objects to the
  storage version and prunes ``storedVersions`` (one replica is enough). It never holds readiness
  back: a long migration must not take the webhook server, which it needs, out of the Service.

The certificate source comes from the options, in one of three modes: ``dev_host`` (a CA and
certificate made in memory for that address), ``cert_dir`` (cert-manager: files from a mounted
Secret) or ``service`` (the default in a cluster: a CA and certificate in a Secret, created and
rotated by the replicas themselves, the CA bundle injected into the configurations and CRDs).

`kubeloop.webhooks` needs the ``webhooks`` extra (cryptography); it is imported only when webhooks
are added.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubeloop.client import Client
from kubeloop.manager._errors import ManagerError
from kubeloop.manager._runnable import RunnableGroup, Stop

if TYPE_CHECKING:
    from kubeloop.webhooks import (
        CertificateSource,
        Installation,
        StorageVersionMigrator,
        Webhooks,
        WebhookServer,
    )

__all__ = ["ServedWebhooks", "StorageVersionMigration", "WebhookCertificates", "WebhookInstall", "WebhookOptions", "WebhookServing",
           "webhook_service_name"]

log = logging.getLogger("kubeloop.manager")


def webhook_service_name(operator: str) -> str:
    """The webhook Service of operator ``operator`` (a DNS label): ``<operator>-webhook``, what
    `kubeloop manifests` creates and `kubeloop run` defaults to (from the module's name)."""
    return f"{operator[:55].rstrip('-')}-webhook"


@dataclass(frozen=True)
class WebhookOptions:
    """How a Manager serves the webhooks `Manager.add_webhooks` registers (`kubeloop run`'s
    ``--webhook-*`` flags).

    - ``port``: the HTTPS port (None: 9443, controller-runtime's); ``host``: the address it binds
      (None: the manager's ``bind_address``).
    - Certificates, for `add_webhooks` without ``certificates=``, in one of three modes:
      ``service`` (in a cluster: the Service the API server calls, in the manager's namespace;
      `SecretCertificates` keeps the CA and certificate in Secret ``secret``, by default
      ``<service>-tls``), ``cert_dir`` (cert-manager mode: `DirectoryCertificates`), or
      ``dev_host`` (the dev loop: `EphemeralCertificates` for that address, which the server
      binds; the webhook configurations and the CRDs' conversion are installed pointing at
      ``https://<dev_host>:<port>`` and put back when the manager stops).
    - ``migrate``: also run the storage-version migration of the converted CRDs (leader only).
    """

    port: int | None = None
    host: str | None = None
    service: str | None = None
    secret: str | None = None
    cert_dir: str | None = None
    dev_host: str | None = None
    migrate: bool = False

    def __post_init__(self) -> None:
        if self.port is not None and not 0 <= self.port <= 65535:
            raise ValueError(f"webhook port {self.port} is not a port (0-65535; 0 picks a free one)")
        if self.dev_host is not None and self.cert_dir is not None:
            raise ValueError("the dev loop (dev_host) makes its own certificates: it takes no cert_dir")
        if self.dev_host in ("", "0.0.0.0", "::"):
            raise ValueError(f"the dev loop's host {self.dev_host!r} must be an address the API server can call "
                             "(such as 127.0.0.1), not a wildcard")
        if self.secret is not None and self.service is None:
            raise ValueError("secret= names the Secret of SecretCertificates, which also needs service=")

    def certificates(self, webhooks: Webhooks, client: Client, namespace: str) -> CertificateSource:
        """The certificate source the options say (see the class docstring); `ManagerError` when
        they say none, or the cert-manager directory cannot be read."""
        from kubeloop.webhooks import (
            DirectoryCertificates,
            EphemeralCertificates,
            SecretCertificates,
            service_hosts,
        )

        if self.dev_host is not None:
            return EphemeralCertificates([self.dev_host])
        if self.cert_dir is not None:
            try:
                return DirectoryCertificates(self.cert_dir)
            except ValueError as e:
                raise ManagerError(str(e)) from None
        if self.service is not None:
            return SecretCertificates(client, namespace, self.secret or f"{self.service}-tls",
                                      service_hosts(namespace, self.service),
                                      configurations=[webhooks.name] if webhooks.admission else [],
                                      crds=webhooks.crd_names)
        raise ManagerError(f"{webhooks!r} needs certificates: give add_webhooks(certificates=...), or "
                           "Manager(webhook_options=WebhookOptions(service=... | cert_dir=... | dev_host=...)) "
                           "(kubeloop run: --webhook-service, --webhook-cert-dir or --webhook-host)")


class ServedWebhooks:
    """A Manager's webhooks: how it serves them (the options, the manager's bind address and
    connect timeout) and, once `add` ran, the set and its server. One home for what
    `Manager.add_webhooks` needs, so the Manager holds one field for webhooks, not four."""

    def __init__(self, options: WebhookOptions, bind_address: str, connect_timeout: float) -> None:
        self.options = options
        self._bind_address = bind_address
        self._connect_timeout = connect_timeout
        self.added: tuple[Webhooks, WebhookServer] | None = None

    def add(self, webhooks: Webhooks, certificates: CertificateSource | None, migrate: bool | None,
            client: Client, namespace: str, groups: Mapping[str, RunnableGroup]) -> WebhookServer:
        """Build the server and add its runnables to ``groups`` (see `Manager.add_webhooks`)."""
        from kubeloop.webhooks import DEFAULT_PORT, StorageVersionMigrator, Webhooks, WebhookServer

        if not isinstance(webhooks, Webhooks):
            raise TypeError(f"add_webhooks takes a kubeloop.webhooks.Webhooks, not {type(webhooks).__name__}")
        if self.added is not None:
            raise ValueError(f"this manager already serves {self.added[0]!r}: one Webhooks set per manager "
                             "(declare every handler and conversion on it)")
        opts = self.options
        if certificates is None:
            certificates = opts.certificates(webhooks, client, namespace)
        server = WebhookServer(webhooks, certificates, host=opts.dev_host or opts.host or self._bind_address,
                               port=DEFAULT_PORT if opts.port is None else opts.port)
        self.added = (webhooks, server)
        groups["servers"].add(WebhookCertificates(certificates, self._connect_timeout))
        groups["servers"].add(WebhookServing(server))
        if opts.dev_host is not None:
            groups["others"].add(WebhookInstall(client, webhooks, server, certificates))
        if (opts.migrate if migrate is None else migrate) and webhooks.crd_names:
            groups["leader"].add(StorageVersionMigration(StorageVersionMigrator(client, webhooks.crd_names)))
        return server


class WebhookCertificates:
    """The certificate source as a runnable of the ``servers`` group: started once it holds a
    certificate (the server listens only with one); `ManagerError` naming the last error when it
    has none after ``timeout`` seconds."""

    name = "webhook certificates"
    needs_leader = False

    def __init__(self, source: CertificateSource, timeout: float) -> None:
        self.source = source
        self.timeout = timeout

    async def run(self, stop: Stop) -> None:
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(self.source.run(stop))
            ready = tg.create_task(self.source.wait_ready())
            await asyncio.wait({task, ready}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED)
            if ready.done():
                stop.started()
            else:
                ready.cancel()
                if not task.done():
                    raise ManagerError(f"webhook certificates: none after {self.timeout:g}s: "
                                       f"{self._last_error() or 'no error was reported'}")

    def _last_error(self) -> str | None:
        return getattr(self.source, "last_error", None)

    def readiness(self) -> list[str]:
        if self.source.ready:
            return []
        error = self._last_error()
        return [f"webhook certificates: none loaded yet{f' ({error})' if error else ''}"]


class WebhookServing:
    """The `WebhookServer` as a runnable of the ``servers`` group: started once it listens; a port
    that is taken fails the start with one line naming it."""

    name = "webhook server"
    needs_leader = False

    def __init__(self, server: WebhookServer) -> None:
        self.server = server

    async def run(self, stop: Stop) -> None:
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(self._serve(stop))
            ready = tg.create_task(self.server.wait_ready())
            await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
            if ready.done():
                stop.started()
            else:
                ready.cancel()

    async def _serve(self, stop: Stop) -> None:
        try:
            await self.server.run(stop)
        except OSError as e:
            raise ManagerError(f"cannot serve webhooks on {self.server.host}:{self.server.port}: "
                               f"{e.strerror or e}") from None

    def readiness(self) -> list[str]:
        return [] if self.server.ready else [f"webhook server: not serving on {self.server.url} yet"]


class WebhookInstall:
    """The dev loop: the webhook configurations and the CRDs' conversion installed pointing at the
    local server while the manager runs, the cluster put back when it stops (`kubeloop.webhooks.install`)."""

    name = "webhook installation"
    needs_leader = False

    def __init__(self, client: Client, webhooks: Webhooks, server: WebhookServer,
                 certificates: CertificateSource) -> None:
        self.client = client
        self.webhooks = webhooks
        self.server = server
        self.certificates = certificates
        self.installation: Installation | None = None

    async def run(self, stop: Stop) -> None:
        from kubeloop.webhooks import ClientConfig, install

        cc = ClientConfig(url=self.server.url, ca_bundle=self.certificates.ca_bundle)
        self.installation = await install(self.client, self.webhooks, cc)
        stop.changed()
        try:
            await stop.wait()
        finally:
            installation, self.installation = self.installation, None
            await installation.remove()

    def readiness(self) -> list[str]:
        return [] if self.installation is not None else ["webhook configurations: not installed yet"]


class StorageVersionMigration:
    """`StorageVersionMigrator` as a leader-only runnable; never in readiness (see the module docstring)."""

    name = "storage-version migration"
    needs_leader = True

    def __init__(self, migrator: StorageVersionMigrator) -> None:
        self.migrator = migrator

    async def run(self, stop: Stop) -> None:
        await self.migrator.run(stop)

    def readiness(self) -> list[str]:
        return []
