"""`APIServer`: the emulator as an async context manager (and the engine of `kubeloop apiserver`).

    async with APIServer(token="t", tls=True) as api:
        api.url, api.token, api.kubeconfig        # a kubeconfig file for clients
        api.faults.fail_next(2, 503)              # fault injection
        api.stats()                               # open watches and request counts
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml
from aiohttp import web

from . import bootstrap, errors
from .admission import Admission
from .app import APIApp
from .authn import Authenticator, User
from .catalog import Catalog, default_catalog
from .controllers import Controllers
from .conversion import CRDConversion
from .faults import Faults
from .features import FeatureGates
from .rbac import AUDIT_FILE_ENV, Access, AuditEntry
from .registry import Registry, Settings
from .resources import ServedResource
from .storage import VersionedStore
from .webhookcall import WebhookCaller

BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class APIServer:
    """An in-process Kubernetes API server emulator on a real socket.

    By default it also runs what kube-controller-manager would (namespace bootstrap and deletion,
    garbage collection, Deployments, ReplicaSets, Jobs), so tests see what a real cluster does;
    `bare=True` serves the API server alone, as envtest does. It is Kubernetes 1.24; features of
    later versions are switched on by name (`feature_gates={"WatchList": True}`: features.py).
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        tls: bool = False,
        kubeconfig_path: str | os.PathLike[str] | None = None,
        bare: bool = False,
        gc: bool = True,
        history_size: int = 10_000,
        bookmark_interval: float = 60.0,
        namespace_delete_delay: float = 2.0,
        crd_cleanup_delay: float = 0.2,
        future_rv_wait: float = 3.0,
        catalog: Catalog | None = None,
        rbac: bool = True,
        audit: bool = False,
        users: Mapping[str, User] | None = None,
        feature_gates: Mapping[str, bool] | str | FeatureGates | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.token = token
        self.tls = tls
        self.settings = Settings(gc_enabled=gc, cluster=not bare, namespace_delete_delay=namespace_delete_delay,
                                 crd_cleanup_delay=crd_cleanup_delay, future_rv_wait=future_rv_wait,
                                 history_size=history_size, bookmark_interval=bookmark_interval,
                                 features=FeatureGates.of(feature_gates))
        self.catalog = catalog if catalog is not None else default_catalog()
        self.store = VersionedStore(history_size=history_size)
        self.registry = Registry(self.store, self.catalog, self.settings)
        # authn.py: the admin token, static `users` tokens, service-account tokens, client certificates;
        # rbac.py: RBAC unless `rbac=False`, and the request audit with `audit` or when
        # KUBELOOP_AUDIT_FILE names a file to append it to at stop (`manifests --observe`)
        self._audit_file = os.environ.get(AUDIT_FILE_ENV) or None
        self.authenticator = Authenticator(self._lookup, token, users)
        self.access = Access(self.store, self.catalog, self.authenticator, enforce=rbac,
                             audit=audit or bool(self._audit_file))
        self._serving: Any = None
        self._app = APIApp(self.registry, self.catalog, Faults(self.store, self._close_watches), token, self.access)
        self.store.listeners.append(_fan_out)
        self._kubeconfig_path = Path(kubeconfig_path) if kubeconfig_path else None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self._runner: web.AppRunner | None = None
        self._webhook_caller: WebhookCaller | None = None
        self._task: asyncio.Task[None] | None = None
        self.ca_pem: bytes | None = None
        self.url = ""
        self.kubeconfig = ""

    # ---- public surface --------------------------------------------------------------------
    @property
    def faults(self) -> Faults:
        """Fault injection switches (close watches, 410 next watch, compact, delay, fail next N)."""
        return self._app.faults

    def stats(self) -> dict[str, Any]:
        """`{"open_watches": {...}, "requests": {...}}`, as `GET /_kubeloop/stats` returns."""
        return self._app.faults.stats()

    def service_account_token(self, namespace: str, name: str) -> str:
        """A token for ServiceAccount ``namespace/name`` (as the TokenRequest subresource mints one);
        404 Status when it does not exist. RBAC applies to it: grant it what it needs."""
        try:
            return self.authenticator.mint(namespace, name)[0]
        except LookupError:
            raise errors.not_found("serviceaccounts", name) from None

    def client_certificate(self, user: str, groups: Sequence[str] = ()) -> tuple[bytes, bytes]:
        """A client certificate and key (PEM) for `user` in `groups`, signed by the server's CA, as
        kubeadm issues them; needs ``tls=True``. ``groups=("system:masters",)`` makes an admin."""
        if self._serving is None:
            raise RuntimeError("client certificates need a TLS emulator (APIServer(tls=True)), started")
        from .tls import client_certificate

        return client_certificate(self._serving, user, tuple(groups))

    def _lookup(self, group: str, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        info = self.catalog.lookup(group, "v1", resource)
        st = self.store.bucket(info.storage_key).objects.get((namespace, name)) if info is not None else None
        return st.obj if st is not None else None

    def audit(self, user: str | None = None) -> list[AuditEntry]:
        """The kinds of requests made so far (by ``user``); needs ``audit=True`` or ``rbac=True``."""
        return self.access.audit(user)

    @property
    def feature_gates(self) -> FeatureGates:
        """The later-version features switched on (none by default)."""
        return self.settings.features

    @property
    def bare(self) -> bool:
        """The API server alone, without kube-controller-manager's controllers (``bare=True``)."""
        return not self.settings.cluster

    @property
    def gc_enabled(self) -> bool:
        return self.settings.gc_enabled

    @gc_enabled.setter
    def gc_enabled(self, value: bool) -> None:
        self.settings.gc_enabled = value

    async def start(self) -> None:
        ssl_ctx = None
        if self.tls:
            from .tls import generate

            cert = await asyncio.to_thread(generate, [self.host])
            self._serving = cert
            self.ca_pem = cert.ca_pem
            ssl_ctx = cert.server_context()
        root_ca = ""
        if not self.bare:  # what the namespaces' kube-root-ca.crt publishes: the serving CA, or a stand-in
            from .tls import placeholder_ca_pem

            root_ca = (self.ca_pem if self.ca_pem else await asyncio.to_thread(placeholder_ca_pem)).decode()
        for info in self.catalog.all():
            self.store.bucket(info.storage_key)
        self._webhook_caller = WebhookCaller()
        self.registry.conversion = CRDConversion(self.store, self._webhook_caller)
        self.registry.webhooks = Admission(self.store, self.catalog, self._webhook_caller, self.registry.aconvert)
        self.controllers = Controllers(self.registry, self._resource_removed, root_ca_pem=root_ca)
        ns_info = self.catalog.lookup("", "v1", "namespaces")
        if ns_info is not None:
            for name in BOOTSTRAP_NAMESPACES:
                self.registry.create(ns_info, "", {"metadata": {"name": name}}, manager="", dry_run=False)
        bootstrap.install(self.registry)
        self._task = asyncio.get_running_loop().create_task(self.controllers.run())
        # handler_cancellation: a client hanging up on a watch ends its handler at once, so the
        # open-watch counters tests read are exact
        self._runner = web.AppRunner(self._app.make_app(), access_log=None, handle_signals=False,
                                     shutdown_timeout=0.5, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ssl_ctx, reuse_address=True)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.port = port
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"{'https' if self.tls else 'http'}://{shown}:{port}"
        self.catalog.server_address = f"{shown}:{port}"
        self.kubeconfig = str(self.write_kubeconfig(self._kubeconfig_path))

    async def stop(self) -> None:
        self._app.stopping = True
        if self._audit_file:
            with contextlib.suppress(OSError):
                self.access.write_audit(self._audit_file)
        self._close_watches(None)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.registry.conversion is not None:
            await self.registry.conversion.close()
        if self._webhook_caller is not None:
            await self._webhook_caller.close()
            self._webhook_caller = None
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    async def __aenter__(self) -> APIServer:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    def kubeconfig_dict(self) -> dict[str, Any]:
        cluster: dict[str, Any] = {"server": self.url}
        if self.ca_pem:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem).decode()
        user: dict[str, Any] = {"token": self.token} if self.token else {}
        if not self.token and self._serving is not None:
            # as kubeadm's admin.conf: a client certificate in system:masters
            cert_pem, key_pem = self.client_certificate("kubernetes-admin", ("system:masters",))
            user = {"client-certificate-data": base64.b64encode(cert_pem).decode(),
                    "client-key-data": base64.b64encode(key_pem).decode()}
        return {
            "apiVersion": "v1", "kind": "Config", "current-context": "kubeloop",
            "clusters": [{"name": "kubeloop", "cluster": cluster}],
            "users": [{"name": "kubeloop", "user": user}],
            "contexts": [{"name": "kubeloop", "context": {"cluster": "kubeloop", "user": "kubeloop",
                                                          "namespace": "default"}}],
            "preferences": {},
        }

    def write_kubeconfig(self, path: Path | None = None) -> Path:
        if path is None:
            if self._tmpdir is None:
                self._tmpdir = tempfile.TemporaryDirectory(prefix="kubeloop-")
            path = Path(self._tmpdir.name) / "kubeconfig"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.kubeconfig_dict(), sort_keys=False))
        with contextlib.suppress(OSError):
            path.chmod(0o600)
        return path

    # ---- internals -------------------------------------------------------------------------
    def _close_watches(self, resource: str | None) -> int:
        return self._app.close_watches(resource)

    def _resource_removed(self, info: ServedResource) -> None:
        self._app.close_watches(info.stats_key)


def _fan_out(bucket: Any, ch: Any) -> None:
    for w in bucket.watchers:
        w.offer(ch)


def random_token() -> str:
    return secrets.token_urlsafe(24)
