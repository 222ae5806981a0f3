"""`SecretCertificates`: the webhook CA and serving certificate kept in one Secret, shared by replicas,
rotated before expiry, and the CA bundle injected where the API server reads it.

Every replica runs one (`run(stop)`); no leader is needed because every step is safe to race:

1. read the Secret; when it is missing, create it (`AlreadyExists`: another replica won; read it);
2. when the serving certificate (or the CA) is due, replace the Secret with the renewed bundle
   under its resourceVersion (`Conflict`: another replica renewed first; read theirs);
3. make sure `caBundle` is the current bundle in every entry of the webhook configurations and in
   the conversion block of every CRD named (an `update` guarded by resourceVersion; re-applied
   manifests that reset it to empty are fixed at the next check);
4. load the certificate into the server's SSLContext (in place: no restart), after the bundle
   that trusts it is in place.

Then sleep until the next renewal is due or `check_interval` passes, whichever is first.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import logging
from collections.abc import Sequence
from typing import Any

from kubeloop.client import AlreadyExists, ApiError, Client, Conflict, NotFound

from ._certs import CertificateBundle, Clock, Stop, _Serving, _sleep_until, _utcnow

__all__ = ["SecretCertificates", "inject_ca_bundle"]

log = logging.getLogger("kubeloop.webhooks")

#: how often a replica re-reads the Secret and re-checks the caBundles at the latest
CHECK_INTERVAL = 60.0
_CONFIG_KINDS = ("admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration",
                 "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration")


class SecretCertificates(_Serving):
    """The webhook server's certificate from Secret `namespace/name`, created and renewed as needed.

    `hosts`: the names the certificate is for (`service_hosts(namespace, service)` in a cluster,
    `["127.0.0.1"]` for a URL on loopback). `configurations`: names of the Validating/Mutating
    WebhookConfigurations to put the CA bundle into; `crds`: names of CRDs whose conversion webhook
    this server answers. `validity`, `ca_validity`: lifetimes of what it creates; each is renewed
    when `renew_fraction` of its life is left.
    """

    def __init__(self, client: Client, namespace: str, name: str, hosts: Sequence[str], *,
                 configurations: Sequence[str] = (), crds: Sequence[str] = (),
                 validity: datetime.timedelta = datetime.timedelta(days=90),
                 ca_validity: datetime.timedelta = datetime.timedelta(days=3650), renew_fraction: float = 1 / 3,
                 check_interval: float = CHECK_INTERVAL, ca_grace: float = 5.0, clock: Clock = _utcnow) -> None:
        super().__init__(f"secret:{namespace}/{name}")
        if not hosts:
            raise ValueError("SecretCertificates needs the host names the certificate is for")
        if not 0 < renew_fraction < 1:
            raise ValueError("renew_fraction must be between 0 and 1 (a third: renew with a third of the life left)")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.hosts = list(hosts)
        self.configurations = tuple(configurations)
        self.crds = tuple(crds)
        self.validity = validity
        self.ca_validity = ca_validity
        self.renew_fraction = renew_fraction
        self.check_interval = check_interval
        self.ca_grace = ca_grace
        self.clock = clock
        #: how many times this replica wrote a renewed bundle (tests, logs)
        self.renewals = 0

    async def run(self, stop: Stop) -> None:
        """Keep the certificate current until `stop` is set; errors are logged and retried."""
        while not stop.is_set():
            try:
                bundle = await self.sync()
                self.last_error = None
                wait = min(self.check_interval, (self._next_due(bundle) - self.clock()).total_seconds())
            except (ApiError, OSError, ValueError) as e:
                self.last_error = str(e)
                log.warning("webhook certificates in Secret %s/%s: %s; retrying", self.namespace, self.name, e)
                wait = min(self.check_interval, 5.0)
            await _sleep_until(stop, max(wait, 0.05))

    def _next_due(self, bundle: CertificateBundle) -> datetime.datetime:
        return min(bundle.renewal_due(self.renew_fraction), bundle.ca_renewal_due(self.renew_fraction))

    async def sync(self) -> CertificateBundle:
        """One round: read or create, renew when due, inject the CA bundle, load. Returns the bundle
        served.

        The bundle goes to the API server before the certificate is served: when a new CA signed
        it, the API server must trust that CA first (the old CA stays in the bundle, so the
        certificate served until now is trusted too). After a new CA is injected, `ca_grace`
        seconds pass before serving (an API server's informer sees the new bundle shortly after
        it is written)."""
        bundle = await self._current()
        served = self.bundle
        await inject_ca_bundle(self.client, bundle.ca_bundle(self.clock()), configurations=self.configurations,
                               crds=self.crds)
        if served is not None and bundle.cas[0] not in served.cas and (self.configurations or self.crds):
            await asyncio.sleep(self.ca_grace)
        self.load(bundle)
        return bundle

    async def _current(self) -> CertificateBundle:
        for _ in range(5):
            try:
                secret = await self.client.get("v1/Secret", self.name, namespace=self.namespace)
            except NotFound:
                created = await self._create()
                if created is not None:
                    return created
                continue  # another replica created it: read theirs
            try:
                bundle = CertificateBundle.from_secret_data(secret.get("data"))
            except ValueError as e:
                log.warning("Secret %s/%s does not hold a usable certificate (%s); replacing it", self.namespace,
                            self.name, e)
                bundle = None
            now = self.clock()
            renewed = (CertificateBundle.create(self.hosts, now=now, validity=self.validity,
                                                ca_validity=self.ca_validity) if bundle is None or not bundle.ca_key_pem
                       else bundle.renewed(self.hosts, now=now, validity=self.validity, ca_validity=self.ca_validity,
                                           fraction=self.renew_fraction))
            if renewed is bundle:
                return renewed
            try:
                await self.client.replace(self._secret(renewed, secret["metadata"]["resourceVersion"]),
                                          namespace=self.namespace)
            except Conflict:
                continue  # another replica renewed it first: read theirs
            self.renewals += 1
            log.info("renewed the webhook certificate in Secret %s/%s (expires %s)", self.namespace, self.name,
                     renewed.not_after.isoformat())
            return renewed
        raise ValueError(f"Secret {self.namespace}/{self.name} kept changing under this replica (5 attempts)")

    async def _create(self) -> CertificateBundle | None:
        bundle = CertificateBundle.create(self.hosts, now=self.clock(), validity=self.validity,
                                          ca_validity=self.ca_validity)
        try:
            await self.client.create(self._secret(bundle), namespace=self.namespace)
        except AlreadyExists:
            return None
        log.info("created the webhook CA and certificate in Secret %s/%s", self.namespace, self.name)
        return bundle

    def _secret(self, bundle: CertificateBundle, resource_version: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name, "namespace": self.namespace,
                                "labels": {"app.kubernetes.io/managed-by": "kubeloop"}}
        if resource_version:
            meta["resourceVersion"] = resource_version
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "kubernetes.io/tls",
                "data": bundle.secret_data()}


async def inject_ca_bundle(client: Client, ca_bundle: bytes, *, configurations: Sequence[str] = (),
                           crds: Sequence[str] = ()) -> int:
    """Put `ca_bundle` into every webhook of the named Validating/MutatingWebhookConfigurations and the
    conversion webhook of the named CRDs where it differs; returns how many objects were updated.
    Objects that do not exist (yet) are skipped; a conflict is retried on the fresh object."""
    encoded = base64.b64encode(ca_bundle).decode()
    updated = 0
    targets = [(kind, name) for name in configurations for kind in _CONFIG_KINDS]
    targets += [("apiextensions.k8s.io/v1/CustomResourceDefinition", name) for name in crds]
    for kind, name in targets:
        for _ in range(5):
            try:
                obj = await client.get(kind, name)
            except NotFound:
                break
            changed = _with_ca(obj, encoded)
            if changed is None:
                break
            try:
                await client.replace(changed)
            except Conflict:
                continue
            except NotFound:
                break
            updated += 1
            break
    return updated


def _with_ca(obj: Any, encoded: str) -> dict[str, Any] | None:
    """A copy of a configuration or CRD with `caBundle` set where it differs; None when it is current."""
    import copy

    out = copy.deepcopy(dict(obj))
    configs: list[dict[str, Any]]
    if out.get("kind") == "CustomResourceDefinition":
        webhook = ((out.get("spec") or {}).get("conversion") or {}).get("webhook")
        configs = [webhook["clientConfig"]] if isinstance(webhook, dict) and isinstance(
            webhook.get("clientConfig"), dict) else []
    else:
        configs = [w["clientConfig"] for w in out.get("webhooks") or [] if isinstance(w.get("clientConfig"), dict)]
    changed = False
    for cc in configs:
        if cc.get("caBundle") != encoded:
            cc["caBundle"] = encoded
            changed = True
    return out if changed else None
