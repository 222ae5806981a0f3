"""Build the `ssl.SSLContext` for a cluster.

`ssl.SSLContext.load_cert_chain` only accepts file paths, so in-memory client certificates (from
`client-certificate-data` or an exec plugin) are written to 0600 files in a private 0700 directory,
loaded, and removed at once: the key never outlives the call on disk.
"""

from __future__ import annotations

import os
import shutil
import ssl
import tempfile

from kubeloop.config._errors import ConfigError


def _write_private(directory: str, name: str, data: bytes) -> str:
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def load_client_cert(ctx: ssl.SSLContext, cert: bytes, key: bytes, *, source: str = "") -> None:
    """Load a PEM client certificate and key held in memory into `ctx`."""
    directory = tempfile.mkdtemp(prefix="kubeloop-tls-")  # mode 0700
    try:
        cert_path = _write_private(directory, "client.crt", cert)
        key_path = _write_private(directory, "client.key", key)
        ctx.load_cert_chain(cert_path, key_path)
    except ssl.SSLError as exc:
        raise ConfigError(f"invalid client certificate or key: {exc.reason or exc}", source=source or None) from None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def make_ssl_context(
    *,
    ca_data: bytes | None,
    insecure: bool,
    client_cert: bytes | None = None,
    client_key: bytes | None = None,
    source: str = "",
) -> ssl.SSLContext:
    """An SSL context verifying the server with `ca_data` alone (as client-go does: the kubeconfig's
    authority pins the server; loading the system roots as well cost ~20 ms of every start) or,
    without it, the system roots, and presenting the client certificate, if any. `insecure`
    disables verification (insecure-skip-tls-verify)."""
    if insecure:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca_data:
        try:
            ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH,
                                             cadata=ca_data.decode("ascii", errors="replace"))
        except ssl.SSLError as exc:
            raise ConfigError(f"invalid certificate authority data: {exc.reason or exc}", source=source or None) from None
    else:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if client_cert and client_key:
        load_client_cert(ctx, client_cert, client_key, source=source)
    return ctx
