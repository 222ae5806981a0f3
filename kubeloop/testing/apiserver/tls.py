"""A throwaway certificate authority and serving certificate, generated at start-up.

The emulator serves HTTPS like a real cluster; clients trust it through the CA written into the
kubeconfig. The same CA signs client certificates (`client_certificate`), which the server asks
for and accepts as kubeadm's clusters do (the CN is the user, each O a group). Keys are EC P-256
(fast to generate) and live only in memory and a temp directory.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class ServingCert:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    ca_key_pem: bytes = b""

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        # a client certificate is optional (tokens work too) and, when sent, must come from our CA
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(cadata=self.ca_pem.decode())
        fd, path = tempfile.mkstemp(prefix="kubeloop-tls-", suffix=".pem")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.cert_pem + self.key_pem)
            ctx.load_cert_chain(path)
        finally:
            os.unlink(path)
        return ctx


def generate(hosts: list[str]) -> ServingCert:
    """A CA and a certificate for `hosts` (DNS names or IP addresses) signed by it."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubeloop-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=365))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for h in dict.fromkeys([*hosts, "localhost", "127.0.0.1", "::1"]):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubeloop-apiserver")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return ServingCert(
        ca_pem=ca.public_bytes(pem),
        cert_pem=cert.public_bytes(pem),
        key_pem=key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
        ca_key_pem=ca_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def client_certificate(serving: ServingCert, user: str, groups: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    """A client certificate (and its key, PEM) for `user` in `groups`, signed by the emulator's CA."""
    now = datetime.datetime.now(datetime.UTC)
    ca = x509.load_pem_x509_certificate(serving.ca_pem)
    ca_key = serialization.load_pem_private_key(serving.ca_key_pem, None)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups),
                         x509.NameAttribute(NameOID.COMMON_NAME, user)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))  # type: ignore[arg-type]
    pem = serialization.Encoding.PEM
    return cert.public_bytes(pem), key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption())


@functools.cache
def placeholder_ca_pem() -> bytes:
    """A CA certificate for a plain-HTTP emulator's `kube-root-ca.crt` (one per process: nothing trusts it)."""
    return generate([]).ca_pem
