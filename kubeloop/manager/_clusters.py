"""`ClustersFromSecrets`: the Manager's clusters kept in sync with Secrets holding kubeconfigs.

    manager.add_runnable(ClustersFromSecrets("fleet"))       # Cluster API: <name>-kubeconfig, key "value"
    manager.add_runnable(ClustersFromSecrets("fleet", selector="example.com/cluster", key="kubeconfig"))

Two layouts, chosen by ``selector``:

- ``selector=None``: Cluster API's. Secrets labelled ``cluster.x-k8s.io/cluster-name`` and named
  ``<cluster>-kubeconfig`` hold the kubeconfig under the key ``value``; the cluster is named after
  the label (the name without ``-kubeconfig`` if the label is empty).
- a label selector: every Secret it matches holds a kubeconfig under ``key``; the cluster is named
  after the Secret.

Level-triggered: after any change of a watched Secret, the whole set is compared with the clusters
this source added (`plan`, no I/O). A new Secret adds a cluster, a deleted one removes it
(`Manager.remove_cluster`). A changed kubeconfig (rotation) with the same server and CA only swaps
the credentials of the existing client, so its caches and watches are kept; a new server or CA
replaces the client (`Manager.replace_cluster`: its target caches are rebuilt on demand).

A kubeconfig from a Secret may not run commands (``exec``, ``auth-provider``) or name files of this
pod (``certificate-authority``, ``client-certificate``, ``client-key``, ``tokenFile``): whoever can
write that Secret could otherwise run code or read files in the operator. Such a Secret, or one that
does not parse or cannot be applied, is logged and skipped (its cluster, if it had one, stays as it
was). A cluster whose Secret was skipped is explained
to the shared cache (`SharedCache.explain_absent`): ``ctx.watch_target(..., cluster=...)`` then
says why the cluster is unknown, not only that it is.
It runs on every replica (add it without ``leader_election``): every replica needs the clusters.
It needs get, list and watch on Secrets in ``namespace`` (its ``reads``, which ``kubeloop manifests``
turns into a Role there, or a ClusterRole rule for all namespaces).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubeloop.config import ClusterConfig, ConfigError, load_kubeconfig
from kubeloop.meta import DEFAULT_CLUSTER, LabelSelector

if TYPE_CHECKING:
    from kubeloop.manager._manager import Manager

__all__ = ["CAPI_CLUSTER_LABEL", "ClustersFromSecrets", "Plan", "kubeconfig_from_secret", "plan"]

log = logging.getLogger("kubeloop.manager")

CAPI_CLUSTER_LABEL = "cluster.x-k8s.io/cluster-name"
_CAPI_SUFFIX = "-kubeconfig"
_FORBIDDEN_USER_KEYS = ("exec", "auth-provider", "tokenFile", "client-certificate", "client-key")
_FORBIDDEN_CLUSTER_KEYS = ("certificate-authority",)


@dataclass(frozen=True)
class Plan:
    """What to change so the clusters match the Secrets (cluster names)."""

    add: tuple[str, ...] = ()
    rotate: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()


def plan(current: Mapping[str, str], desired: Mapping[str, str]) -> Plan:
    """Compare ``current`` (cluster -> digest of the kubeconfig it was made from) with ``desired``."""
    return Plan(add=tuple(sorted(set(desired) - set(current))),
                rotate=tuple(sorted(n for n in desired if n in current and current[n] != desired[n])),
                remove=tuple(sorted(set(current) - set(desired))))


def kubeconfig_from_secret(raw: bytes, source: str) -> ClusterConfig:
    """A `ClusterConfig` from kubeconfig bytes read from a Secret (see the module docstring for
    what is refused). Raises `ConfigError` naming ``source``."""
    import yaml  # only when a kubeconfig Secret is read (as in kubeloop.config's _read_yaml)

    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(f"not a kubeconfig: {exc}", source=source) from None
    if not isinstance(doc, dict):
        raise ConfigError("not a kubeconfig (not a mapping)", source=source)
    for entries, inner, forbidden in (("users", "user", _FORBIDDEN_USER_KEYS),
                                      ("clusters", "cluster", _FORBIDDEN_CLUSTER_KEYS)):
        for item in doc.get(entries) or ():
            value = (item or {}).get(inner) or {} if isinstance(item, dict) else {}
            bad = [k for k in forbidden if k in value]
            if bad:
                raise ConfigError(f"{entries[:-1]} {item.get('name')!r} uses {', '.join(bad)}: a kubeconfig from "
                                  "a Secret may not run commands or read local files", source=source)
    fd, path = tempfile.mkstemp(prefix="kubeloop-secret-", suffix=".kubeconfig")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        config = load_kubeconfig(path)
    except ConfigError as exc:
        raise ConfigError(str(exc.args[0]) if exc.args else str(exc), source=source) from None
    finally:
        os.unlink(path)
    config.source = source
    return config


def _same_endpoint(a: ClusterConfig, b: ClusterConfig) -> bool:
    return (a.server, a.ca_data, a.insecure_skip_tls_verify, a.tls_server_name, a.proxy_url) == (
        b.server, b.ca_data, b.insecure_skip_tls_verify, b.tls_server_name, b.proxy_url)


class ClustersFromSecrets:
    """A runnable (``manager.add_runnable(ClustersFromSecrets(...))``) that keeps the Manager's
    clusters in sync with kubeconfig Secrets in ``namespace`` (None: all namespaces) of the
    ``default`` cluster; see the module docstring for the two layouts."""

    def __init__(self, namespace: str | None, *, selector: str | Mapping[str, str] | None = None,
                 key: str = "value") -> None:
        if selector is not None:
            parsed = LabelSelector.parse(selector) if isinstance(selector, str) else LabelSelector.from_labels(selector)
            if parsed.empty:
                raise ValueError("ClustersFromSecrets: an empty selector would take every Secret; name a label")
        self.namespace = namespace
        self.selector = selector
        self.key = key
        self.__name__ = "clusters from secrets"
        # what it lists and watches: `kubeloop manifests` grants it (a Role when namespaced)
        self.reads: tuple[tuple[str, str | None], ...] = (("v1/Secret", namespace),)
        self._digests: dict[str, str] = {}  # cluster -> digest of its kubeconfig (the clusters we added)
        self.problems: dict[str, str] = {}  # Secret (namespace/name) -> why it is skipped
        self.skipped: dict[str, str] = {}  # cluster -> why it is not added: its Secret was skipped

    @property
    def clusters(self) -> list[str]:
        """The clusters this source added (and has not removed)."""
        return sorted(self._digests)

    def desired(self, secrets: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, bytes]]:
        """cluster -> (the Secret's namespace/name, kubeconfig bytes), from the Secrets in scope."""
        out: dict[str, tuple[str, bytes]] = {}
        for secret in secrets:
            meta = secret.get("metadata") or {}
            name, ref = str(meta.get("name")), f"{meta.get('namespace')}/{meta.get('name')}"
            if self.selector is None:
                if not name.endswith(_CAPI_SUFFIX):
                    continue
                cluster = str((meta.get("labels") or {}).get(CAPI_CLUSTER_LABEL) or name[:-len(_CAPI_SUFFIX)])
            else:
                cluster = name
            data = (secret.get("data") or {}).get(self.key)
            if not data:
                self._problem(ref, f"no key {self.key!r} in the Secret", cluster)
                continue
            try:
                raw = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                self._problem(ref, f"key {self.key!r} is not base64", cluster)
                continue
            if cluster in out:
                self._problem(ref, f"cluster {cluster!r} is also defined by Secret {out[cluster][0]}")
                continue
            out[cluster] = (ref, raw)
        return out

    def _problem(self, ref: str, why: str, cluster: str | None = None) -> None:
        """Skip the Secret ``ref`` (logged once per reason); ``cluster``: the cluster it would
        define, which is not added because of it."""
        if self.problems.get(ref) != why:
            log.error("clusters from secrets: Secret %s skipped: %s", ref, why)
        self.problems[ref] = why
        if cluster is not None:
            self.skipped[cluster] = f"its Secret {ref} was skipped: {why}"

    async def sync(self, manager: Manager, secrets: Sequence[Mapping[str, Any]]) -> None:
        """Make the Manager's clusters match ``secrets`` (what this source added only)."""
        explained = set(self.skipped)
        self.skipped = {}
        wanted = self.desired(secrets)
        digests = {c: hashlib.sha256(raw).hexdigest() for c, (_, raw) in wanted.items()}
        todo = plan(self._digests, digests)
        for cluster in todo.remove:
            del self._digests[cluster]
            await manager.remove_cluster(cluster)
        for cluster in (*todo.add, *todo.rotate):
            ref, raw = wanted[cluster]
            try:
                await self._apply(manager, cluster, ref, raw, add=cluster in todo.add)
            except (ConfigError, ValueError) as exc:  # this Secret's content: it explains itself
                self._problem(ref, str(exc), cluster)
                continue
            self.problems.pop(ref, None)
            self._digests[cluster] = digests[cluster]
        cache = manager.cache
        if cache is not None:
            for cluster in explained - set(self.skipped):
                cache.explain_absent(cluster, None)
            for cluster, why in self.skipped.items():
                cache.explain_absent(cluster, why)

    async def _apply(self, manager: Manager, cluster: str, ref: str, raw: bytes, *, add: bool) -> None:
        """Add ``cluster`` from the kubeconfig ``raw`` of Secret ``ref``, or rotate or replace its client."""
        config = kubeconfig_from_secret(raw, f"Secret {ref}")
        if add:
            if cluster in manager.clusters:
                raise ValueError(f"cluster {cluster!r} already exists (not from a Secret); left alone")
            manager.add_cluster(cluster, config)
            return
        client = manager.client(cluster)
        if _same_endpoint(client.config, config):
            client.config.auth = config.auth  # new credentials, same cluster: caches kept
            log.info("cluster %r: credentials rotated from Secret %s", cluster, ref)
        else:
            await manager.replace_cluster(cluster, config)
            log.info("cluster %r: endpoint changed in Secret %s; client replaced", cluster, ref)

    async def __call__(self, manager: Manager) -> None:
        """Run until cancelled (the Manager's shutdown)."""
        cache = manager.cache
        if cache is None:
            raise RuntimeError("ClustersFromSecrets runs inside a running Manager (add_runnable)")
        async with await cache.informer_for(DEFAULT_CLUSTER, "v1/Secret", namespace=self.namespace,
                                            label_selector=self.selector or CAPI_CLUSTER_LABEL) as secrets:
            changes = secrets.subscribe(name="clusters from secrets", replay=False)
            while not secrets.synced:
                try:
                    await secrets.wait_synced(30.0)
                except TimeoutError as exc:
                    log.warning("clusters from secrets: waiting for the Secrets' cache: %s", exc)
            while True:
                await self.sync(manager, secrets.list())
                await changes.get()
                while changes.get_nowait() is not None:
                    pass
