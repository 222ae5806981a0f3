"""Serving certificates for the webhook server, with no cert-manager needed (and with it).

Three sources of a certificate, one protocol (`CertificateSource`): an `ssl_context` that stays the
same object while its certificate is reloaded in place (new TLS connections get the new
certificate, open ones finish with the old, nothing restarts), the `ca_bundle` to give the API
server, and `run(stop)` keeping both current.

- `SecretCertificates` (the default in a cluster): a CA and a serving certificate kept in one
  Secret. Every replica runs it; the first one creates the Secret and the API server settles the
  race (create; on AlreadyExists, read). It rotates the serving certificate when a third of its
  life is left, and the CA the same way (the old CA stays in the bundle until it expires, so
  replicas still serving a certificate of the old CA are trusted meanwhile); a rotation is a
  replace with the Secret's resourceVersion, so two replicas rotating at once conflict and the
  loser reads the winner's. It injects the bundle into the webhook configurations and the CRDs'
  conversion blocks it is given. Every replica serves: nothing here needs the leader.
- `DirectoryCertificates` (cert-manager mode): `tls.crt`, `tls.key` and `ca.crt` from a mounted
  Secret directory, reloaded when they change; cert-manager's CA injector fills `caBundle`
  (the configurations carry `cert-manager.io/inject-ca-from`).
- `EphemeralCertificates` (tests and the dev loop): a CA and certificate made in memory.

The certificate's expiry is the metric `kubeloop_webhook_certificate_expiry_timestamp_seconds`.
Needs `cryptography` (`pip install 'kubeloop[webhooks]'`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import ipaddress
import logging
import os
import ssl
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CERT_MANAGER_INJECT_ANNOTATION", "CertificateBundle", "CertificateSource", "DirectoryCertificates",
           "EphemeralCertificates", "service_hosts"]

log = logging.getLogger("kubeloop.webhooks")

Clock = Callable[[], datetime.datetime]
#: the annotation cert-manager's CA injector reads: `<namespace>/<Certificate name>`
CERT_MANAGER_INJECT_ANNOTATION = "cert-manager.io/inject-ca-from"
#: Secret keys (kubernetes.io/tls, plus the CA's key so that any replica can renew)
TLS_CRT, TLS_KEY, CA_CRT, CA_KEY = "tls.crt", "tls.key", "ca.crt", "ca.key"


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def service_hosts(namespace: str, name: str) -> list[str]:
    """The names the API server may use for a Service (it checks `<name>.<namespace>.svc`)."""
    return [name, f"{name}.{namespace}", f"{name}.{namespace}.svc", f"{name}.{namespace}.svc.cluster.local"]


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _backdate(validity: datetime.timedelta) -> datetime.timedelta:
    """notBefore is set back a little for clock skew between replicas and the API server."""
    return min(datetime.timedelta(minutes=1), validity / 10)


def new_ca(now: datetime.datetime, validity: datetime.timedelta) -> tuple[bytes, bytes]:
    """A self-signed CA: (certificate PEM, key PEM)."""
    key = _key()
    name = _name(f"kubeloop-webhook-ca-{int(now.timestamp())}")
    ku = x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                       key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                       decipher_only=False)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - _backdate(validity))
            .not_valid_after(now + validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(ku, critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def issue(ca_pem: bytes, ca_key_pem: bytes, hosts: Sequence[str], now: datetime.datetime,
          validity: datetime.timedelta) -> tuple[bytes, bytes]:
    """A serving certificate for `hosts` (DNS names or IPs) signed by the CA: (cert PEM, key PEM).
    It never outlives its CA."""
    ca = x509.load_pem_x509_certificate(ca_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key must be an EC key")
    key = _key()
    sans: list[x509.GeneralName] = []
    for h in dict.fromkeys(hosts):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    if not sans:
        raise ValueError("a serving certificate needs at least one host name or IP address")
    not_after = min(now + validity, ca.not_valid_after_utc)
    cert = (x509.CertificateBuilder().subject_name(_name(hosts[0])).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - _backdate(validity)).not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def _certs(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem) if pem.strip() else []


@dataclass(frozen=True)
class CertificateBundle:
    """The CA bundle (PEM, newest first, maybe an older CA too), the CA's key (PEM; empty when an
    outside issuer keeps it), and the serving certificate and key (PEM)."""

    ca_pem: bytes
    ca_key_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    @classmethod
    def create(cls, hosts: Sequence[str], *, now: datetime.datetime | None = None,
               validity: datetime.timedelta = datetime.timedelta(days=90),
               ca_validity: datetime.timedelta = datetime.timedelta(days=3650)) -> CertificateBundle:
        now = now or _utcnow()
        ca, ca_key = new_ca(now, ca_validity)
        cert, key = issue(ca, ca_key, hosts, now, validity)
        return cls(ca, ca_key, cert, key)

    @property
    def serving(self) -> x509.Certificate:
        return _certs(self.cert_pem)[0]

    @property
    def cas(self) -> list[x509.Certificate]:
        return _certs(self.ca_pem)

    @property
    def not_after(self) -> datetime.datetime:
        """When the serving certificate expires."""
        return self.serving.not_valid_after_utc

    def renewal_due(self, fraction: float = 1 / 3) -> datetime.datetime:
        """When the serving certificate should be renewed: `fraction` of its life before it ends."""
        cert = self.serving
        life = cert.not_valid_after_utc - cert.not_valid_before_utc
        return cert.not_valid_after_utc - life * fraction

    def ca_renewal_due(self, fraction: float = 1 / 3) -> datetime.datetime:
        ca = self.cas[0]
        life = ca.not_valid_after_utc - ca.not_valid_before_utc
        return ca.not_valid_after_utc - life * fraction

    def valid_for(self, hosts: Sequence[str]) -> bool:
        """Whether the serving certificate names every host and is signed by the newest CA."""
        cert = self.serving
        try:
            sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return False
        names = {str(v) for v in sans.get_values_for_type(x509.DNSName)}
        names |= {str(v) for v in sans.get_values_for_type(x509.IPAddress)}
        return set(hosts) <= names and cert.issuer == self.cas[0].subject

    def renewed(self, hosts: Sequence[str], *, now: datetime.datetime, validity: datetime.timedelta,
                ca_validity: datetime.timedelta, fraction: float = 1 / 3) -> CertificateBundle:
        """This bundle with what is due renewed: the CA (the old one kept in the bundle while it is
        valid) and/or the serving certificate; `self` when nothing is due."""
        if not self.ca_key_pem:
            raise ValueError("this bundle has no CA key: its issuer renews it")
        ca_pem, ca_key = self.ca_pem, self.ca_key_pem
        if now >= self.ca_renewal_due(fraction):
            new, ca_key = new_ca(now, ca_validity)
            keep = [c for c in self.cas if c.not_valid_after_utc > now][:1]
            ca_pem = new + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in keep)
        elif now < self.renewal_due(fraction) and self.valid_for(hosts):
            return self
        cert, key = issue(ca_pem, ca_key, hosts, now, validity)
        return CertificateBundle(ca_pem, ca_key, cert, key)

    def ca_bundle(self, now: datetime.datetime | None = None) -> bytes:
        """The CAs still valid, PEM, to put in `caBundle`."""
        now = now or _utcnow()
        return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in self.cas
                        if c.not_valid_after_utc > now) or self.ca_pem

    def secret_data(self) -> dict[str, str]:
        data = {TLS_CRT: self.cert_pem, TLS_KEY: self.key_pem, CA_CRT: self.ca_pem}
        if self.ca_key_pem:
            data[CA_KEY] = self.ca_key_pem
        return {k: base64.b64encode(v).decode() for k, v in data.items()}

    @classmethod
    def from_secret_data(cls, data: Any) -> CertificateBundle:
        """From a Secret's `data`; `ValueError` when a key is missing or not PEM."""
        data = data or {}
        try:
            raw = {k: base64.b64decode(data.get(k) or "") for k in (CA_CRT, CA_KEY, TLS_CRT, TLS_KEY)}
        except (ValueError, TypeError) as e:
            raise ValueError(f"the Secret's data is not base64: {e}") from None
        bundle = cls(raw[CA_CRT], raw[CA_KEY], raw[TLS_CRT], raw[TLS_KEY])
        bundle.check()
        return bundle

    def check(self) -> None:
        """`ValueError` naming what is missing or unreadable."""
        missing = [k for k, v in ((CA_CRT, self.ca_pem), (TLS_CRT, self.cert_pem), (TLS_KEY, self.key_pem))
                   if not v.strip()]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        try:
            self.serving  # noqa: B018 - parses
            self.cas  # noqa: B018
            serialization.load_pem_private_key(self.key_pem, password=None)
        except ValueError as e:
            raise ValueError(f"unreadable certificate or key: {e}") from None


class Stop(Protocol):
    """What `run(stop)` waits on (an `asyncio.Event`)."""

    def is_set(self) -> bool: ...

    async def wait(self) -> Any: ...


class CertificateSource(Protocol):
    """Where the webhook server's certificate comes from."""

    @property
    def ssl_context(self) -> ssl.SSLContext: ...

    @property
    def ca_bundle(self) -> bytes: ...

    @property
    def ready(self) -> bool: ...

    async def wait_ready(self) -> None:
        """Return once a certificate is loaded."""

    async def run(self, stop: Stop) -> None: ...


class _Serving:
    """The part every source shares: one SSLContext whose chain is (re)loaded in place, and the metric."""

    def __init__(self, label: str) -> None:
        self._ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        self._label = label
        self._bundle: CertificateBundle | None = None
        self._ready = asyncio.Event() if _has_loop() else None
        #: why the last attempt to get a certificate failed (None: it did not), for readiness and logs
        self.last_error: str | None = None

    @property
    def ssl_context(self) -> ssl.SSLContext:
        return self._ctx

    @property
    def ready(self) -> bool:
        return self._bundle is not None

    @property
    def bundle(self) -> CertificateBundle | None:
        return self._bundle

    @property
    def ca_bundle(self) -> bytes:
        if self._bundle is None:
            raise RuntimeError("no certificate loaded yet (wait until the source is ready)")
        return self._bundle.ca_bundle()

    def load(self, bundle: CertificateBundle) -> bool:
        """Serve `bundle`'s certificate from now on; False when it is the one already served."""
        if self._bundle is not None and self._bundle.cert_pem == bundle.cert_pem \
                and self._bundle.ca_pem == bundle.ca_pem:
            return False
        fd, path = tempfile.mkstemp(prefix="kubeloop-webhook-", suffix=".pem")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(bundle.cert_pem + b"\n" + bundle.key_pem)
            self._ctx.load_cert_chain(path)
        finally:
            os.unlink(path)
        first = self._bundle is None
        self._bundle = bundle
        if self._ready is not None:
            self._ready.set()
        from kubeloop import metrics

        metrics.WEBHOOK_CERTIFICATE_EXPIRY.labels(self._label, "serving").set(bundle.not_after.timestamp())
        metrics.WEBHOOK_CERTIFICATE_EXPIRY.labels(self._label, "ca").set(bundle.cas[0].not_valid_after_utc.timestamp())
        log.info("webhook server certificate %s (%s): expires %s", "loaded" if first else "reloaded", self._label,
                 bundle.not_after.isoformat())
        return True

    async def wait_ready(self) -> None:
        if self._ready is None:
            self._ready = asyncio.Event()
            if self._bundle is not None:
                self._ready.set()
        await self._ready.wait()


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _sleep_until(stop: Stop, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(seconds, 0.0)):
            await stop.wait()


class EphemeralCertificates(_Serving):
    """A CA and serving certificate made in memory for `hosts` (tests, `kubeloop run --webhook-host`)."""

    def __init__(self, hosts: Sequence[str] = ("127.0.0.1", "localhost"), *,
                 validity: datetime.timedelta = datetime.timedelta(days=30)) -> None:
        super().__init__("ephemeral")
        self.hosts = list(hosts)
        self.load(CertificateBundle.create(self.hosts, validity=validity, ca_validity=validity * 2))

    async def run(self, stop: Stop) -> None:
        await stop.wait()


class DirectoryCertificates(_Serving):
    """cert-manager mode: the certificate from a mounted Secret directory (`tls.crt`, `tls.key`,
    `ca.crt`), reloaded when the files change (kubelet updates the mount when cert-manager renews)."""

    def __init__(self, directory: str | os.PathLike[str], *, poll_interval: float = 10.0) -> None:
        super().__init__(f"dir:{directory}")
        self.directory = Path(directory)
        self.poll_interval = poll_interval
        self._seen: tuple[float, ...] | None = None
        self.reload()

    def _stamp(self) -> tuple[float, ...]:
        return tuple((self.directory / n).stat().st_mtime if (self.directory / n).exists() else 0.0
                     for n in (TLS_CRT, TLS_KEY, CA_CRT))

    def reload(self) -> bool:
        """Load the files if they changed; False when unchanged or unreadable (kept serving the old)."""
        stamp = self._stamp()
        if stamp == self._seen:
            return False
        try:
            bundle = CertificateBundle(
                (self.directory / CA_CRT).read_bytes() if (self.directory / CA_CRT).exists() else b"", b"",
                (self.directory / TLS_CRT).read_bytes(), (self.directory / TLS_KEY).read_bytes())
            bundle.check()
        except (OSError, ValueError) as e:
            self.last_error = f"{self.directory}: {e}"
            if self._bundle is None:
                raise ValueError(f"webhook certificates in {self.directory}: {e}") from None
            log.warning("webhook certificates in %s unreadable (%s); still serving the previous ones",
                        self.directory, e)
            return False
        self._seen = stamp
        self.last_error = None
        return self.load(bundle)

    @property
    def ca_bundle(self) -> bytes:
        if self._bundle is None or not self._bundle.ca_pem:
            raise RuntimeError(f"{self.directory / CA_CRT} is missing: cert-manager injects the caBundle itself")
        return self._bundle.ca_bundle()

    async def run(self, stop: Stop) -> None:
        while not stop.is_set():
            self.reload()
            await _sleep_until(stop, self.poll_interval)
