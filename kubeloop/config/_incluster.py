"""Load the cluster a pod runs in: service-account token, CA and namespace files, and the
KUBERNETES_SERVICE_HOST/PORT environment the kubelet sets."""

from __future__ import annotations

import os
from pathlib import Path

from kubeloop.config._cluster import ClusterConfig
from kubeloop.config._credentials import TokenFileAuth
from kubeloop.config._errors import ConfigError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def in_cluster_available(env: dict[str, str] | None = None) -> bool:
    """Whether the in-cluster environment variables are set."""
    e = os.environ if env is None else env
    return bool(e.get("KUBERNETES_SERVICE_HOST")) and bool(e.get("KUBERNETES_SERVICE_PORT"))


def load_in_cluster(
    *,
    service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
    env: dict[str, str] | None = None,
    token_reread_after: float = 60.0,
) -> ClusterConfig:
    """The in-cluster config. The token file is re-read every `token_reread_after` seconds and after a
    401, because bound service-account tokens rotate."""
    e = os.environ if env is None else env
    host, port = e.get("KUBERNETES_SERVICE_HOST"), e.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set",
                          source="in-cluster")
    sa = Path(service_account_dir)
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6 literal
    auth = TokenFileAuth(sa / "token", reread_after=token_reread_after)
    auth.current()
    ca_path = sa / "ca.crt"
    try:
        ca = ca_path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read service-account CA: {exc.strerror or exc}", source=str(ca_path)) from None
    try:
        namespace = (sa / "namespace").read_text().strip() or "default"
    except OSError:
        namespace = "default"
    return ClusterConfig(server=f"https://{host}:{port}", namespace=namespace, auth=auth, ca_data=ca,
                         context=None, source="in-cluster")
