"""`ClusterConfig`: everything needed to talk to one cluster, whatever it was loaded from."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubeloop.config._credentials import Auth, StaticAuth


@dataclass
class ClusterConfig:
    """Where a cluster is and how to authenticate to it.

    `ca_data` is PEM bytes (files are read at load time so a missing file fails at start-up).
    `auth` produces the credentials sent with every request (token, client certificate, basic).
    """

    server: str
    namespace: str = "default"
    auth: Auth = field(default_factory=StaticAuth)
    ca_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    context: str | None = None
    source: str = ""  # the file(s) or "in-cluster": named in errors

    def __post_init__(self) -> None:
        self.server = self.server.rstrip("/")

    @property
    def name(self) -> str:
        """A short human name: the context, else the server."""
        return self.context or self.server
