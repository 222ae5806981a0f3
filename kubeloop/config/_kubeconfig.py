"""Load a cluster from kubeconfig files, with client-go's rules.

- Files: an explicit path (must exist), else every entry of `KUBECONFIG` (missing entries are
  skipped, as client-go does), else `~/.kube/config`.
- Merging several files: for `clusters`, `users` and `contexts` the first file defining a name wins
  (entries are not merged field by field); the first non-empty `current-context` wins.
- Relative file paths inside a file resolve against that file's directory.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubeloop.config._cluster import ClusterConfig
from kubeloop.config._credentials import Auth, Credentials, StaticAuth, TokenFileAuth
from kubeloop.config._errors import ConfigError
from kubeloop.config._exec_plugin import EXEC_TIMEOUT, ExecAuth, cluster_info_for_exec


@dataclass
class _Entry:
    """A named entry (cluster, user or context) with the file it came from."""

    value: dict[str, Any]
    file: Path


@dataclass
class MergedKubeconfig:
    """Several kubeconfig files merged with client-go's precedence."""

    files: list[Path]
    clusters: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)
    contexts: dict[str, _Entry] = field(default_factory=dict)
    current_context: str = ""
    current_context_file: Path | None = None

    @property
    def source(self) -> str:
        return os.pathsep.join(str(f) for f in self.files)


def kubeconfig_paths(path: str | os.PathLike[str] | None = None) -> list[Path]:
    """The kubeconfig files to read, in precedence order (only existing ones for KUBECONFIG)."""
    if path is not None:
        p = Path(path).expanduser()
        if not p.exists():
            raise ConfigError("kubeconfig file does not exist", source=str(p))
        return [p]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        seen: list[Path] = []
        for part in env.split(os.pathsep):
            if not part:
                continue
            p = Path(part).expanduser()
            if p not in seen and p.exists():
                seen.append(p)
        if not seen:
            raise ConfigError("none of the files in KUBECONFIG exist", source=f"KUBECONFIG={env}")
        return seen
    p = Path("~/.kube/config").expanduser()
    if not p.exists():
        raise ConfigError("kubeconfig file does not exist (set KUBECONFIG or pass a path)", source=str(p))
    return [p]


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml  # here, not at module level: ~20 ms of imports a program without a kubeconfig never needs

    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig: {exc.strerror or exc}", source=str(path)) from None
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"invalid YAML{where}: {problem}", source=str(path)) from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"not a kubeconfig (top level is a {type(doc).__name__}, not a mapping)", source=str(path))
    return doc


def _named(doc: dict[str, Any], key: str, inner: str, path: Path) -> list[tuple[str, dict[str, Any]]]:
    items = doc.get(key) or []
    if not isinstance(items, list):
        raise ConfigError(f"'{key}' must be a list", source=str(path))
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ConfigError(f"{key}[{i}] has no name", source=str(path))
        value = item.get(inner) or {}
        if not isinstance(value, dict):
            raise ConfigError(f"{key}[{i}] ({item['name']}): '{inner}' must be a mapping", source=str(path))
        out.append((item["name"], value))
    return out


def merge_kubeconfigs(paths: list[Path]) -> MergedKubeconfig:
    """Read and merge kubeconfig files (first definition of a name wins)."""
    merged = MergedKubeconfig(files=list(paths))
    for path in paths:
        doc = _read_yaml(path)
        for key, inner, target in (("clusters", "cluster", merged.clusters), ("users", "user", merged.users),
                                   ("contexts", "context", merged.contexts)):
            for name, value in _named(doc, key, inner, path):
                target.setdefault(name, _Entry(value, path))
        cur = doc.get("current-context") or ""
        if cur and not merged.current_context:
            merged.current_context = str(cur)
            merged.current_context_file = path
    return merged


def _resolve(path_value: str, base: Path) -> Path:
    p = Path(os.path.expanduser(path_value))
    return p if p.is_absolute() else (base.parent / p)


def _file_or_data(entry: _Entry, file_key: str, data_key: str, what: str) -> bytes | None:
    """`<x>-data` (base64) wins over `<x>` (a file path), as in client-go.

    Line breaks inside the base64 text are ignored, as Go's decoder does: a CA pasted as a wrapped
    block (`openssl base64` wraps at 64 columns) works with kubectl, so it must work here.
    """
    data = entry.value.get(data_key)
    if data:
        try:
            return base64.b64decode("".join(str(data).split()), validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError(f"{data_key} of {what} is not valid base64", source=str(entry.file)) from None
    file_value = entry.value.get(file_key)
    if file_value:
        p = _resolve(str(file_value), entry.file)
        try:
            return p.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read {file_key} {str(p)!r} of {what}: {exc.strerror or exc}",
                              source=str(entry.file)) from None
    return None


def _build_auth(user: _Entry, user_name: str, cluster: dict[str, Any], ca: bytes | None,
                exec_timeout: float) -> Auth:
    u = user.value
    what = f"user {user_name!r}"
    cert = _file_or_data(user, "client-certificate", "client-certificate-data", what)
    key = _file_or_data(user, "client-key", "client-key-data", what)
    if bool(cert) != bool(key):
        raise ConfigError(f"{what} has a client certificate without a key or a key without a certificate",
                          source=str(user.file))
    base = Credentials(client_cert=cert, client_key=key)
    if u.get("auth-provider"):
        name = (u["auth-provider"] or {}).get("name", "?")
        raise ConfigError(
            f"{what} uses auth-provider {name!r}, which kubeloop does not support; use an exec plugin "
            "(e.g. kubelogin, gke-gcloud-auth-plugin)", source=str(user.file))
    if u.get("exec"):
        if not isinstance(u["exec"], dict):
            raise ConfigError(f"{what}: exec must be a mapping", source=str(user.file))
        return ExecAuth(u["exec"], source=str(user.file), cluster_info=cluster_info_for_exec(cluster, ca), base=base,
                        timeout=exec_timeout)
    if u.get("token"):
        return StaticAuth(Credentials(token=str(u["token"]), client_cert=cert, client_key=key))
    if u.get("tokenFile"):
        auth = TokenFileAuth(_resolve(str(u["tokenFile"]), user.file), base=base)
        auth.current()  # fail now on a missing file
        return auth
    if u.get("username") is not None and u.get("password") is not None:
        return StaticAuth(Credentials(username=str(u["username"]), password=str(u["password"]),
                                      client_cert=cert, client_key=key))
    return StaticAuth(base)


def _context(merged: MergedKubeconfig, context: str | None) -> tuple[str, dict[str, Any]]:
    """The name and body of ``context`` (default: the current context)."""
    ctx_name = context or merged.current_context
    if not ctx_name:
        raise ConfigError("no current-context is set and no context was given", source=merged.source)
    ctx_entry = merged.contexts.get(ctx_name)
    if ctx_entry is None:
        available = ", ".join(sorted(merged.contexts)) or "none"
        raise ConfigError(f"context {ctx_name!r} not found (available: {available})", source=merged.source)
    if not ctx_entry.value.get("cluster"):
        raise ConfigError(f"context {ctx_name!r} names no cluster", source=str(ctx_entry.file))
    return ctx_name, ctx_entry.value


def _cluster(merged: MergedKubeconfig, ctx_name: str, ctx: dict[str, Any]) -> tuple[str, _Entry]:
    """The context's cluster entry, its server and proxy checked."""
    cluster_name = str(ctx["cluster"])
    entry = merged.clusters.get(cluster_name)
    if entry is None:
        raise ConfigError(f"cluster {cluster_name!r} of context {ctx_name!r} not found", source=merged.source)
    server, proxy, where = entry.value.get("server"), entry.value.get("proxy-url"), str(entry.file)
    if not server:
        raise ConfigError(f"cluster {cluster_name!r} has no server", source=where)
    if not str(server).startswith(("https://", "http://")):
        raise ConfigError(f"cluster {cluster_name!r} server {str(server)!r} is not an http(s) URL", source=where)
    if proxy and not str(proxy).startswith(("http://", "https://")):
        raise ConfigError(f"cluster {cluster_name!r} proxy-url {proxy!r}: only http(s) proxies are supported",
                          source=where)
    return cluster_name, entry


def load_kubeconfig(
    path: str | os.PathLike[str] | None = None,
    *,
    context: str | None = None,
    namespace: str | None = None,
    exec_timeout: float = EXEC_TIMEOUT,
) -> ClusterConfig:
    """Load the cluster of `context` (default: the current context) from kubeconfig file(s).

    `exec_timeout`: seconds a non-interactive exec credential plugin may run before it is killed.

    Raises `ConfigError` (one line naming the file) if anything is missing or malformed.
    """
    merged = merge_kubeconfigs(kubeconfig_paths(path))
    source = merged.source
    ctx_name, ctx = _context(merged, context)
    cluster_name, cluster_entry = _cluster(merged, ctx_name, ctx)
    cluster = cluster_entry.value
    server = str(cluster["server"])
    ca = _file_or_data(cluster_entry, "certificate-authority", "certificate-authority-data",
                       f"cluster {cluster_name!r}")
    user_name = ctx.get("user")
    if user_name:
        user_entry = merged.users.get(str(user_name))
        if user_entry is None:
            raise ConfigError(f"user {user_name!r} of context {ctx_name!r} not found", source=source)
        auth = _build_auth(user_entry, str(user_name), cluster, ca, exec_timeout)
    else:
        auth = StaticAuth()
    return ClusterConfig(
        server=server,
        namespace=namespace or str(ctx.get("namespace") or "default"),
        auth=auth,
        ca_data=ca,
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
        tls_server_name=str(cluster["tls-server-name"]) if cluster.get("tls-server-name") else None,
        proxy_url=str(cluster["proxy-url"]) if cluster.get("proxy-url") else None,
        context=ctx_name,
        source=source,
    )
