"""The in-process controllers a real control plane runs next to kube-apiserver.

- CRDs: register served resources when a CRD is stored, set `Established`, and on deletion remove
  the custom resources, then the CRD (the `customresourcecleanup` finalizer).
- Namespaces: after a DELETE, remove everything in the namespace, then the namespace (after a short
  delay, so a client still sees it `Terminating` right after its DELETE, as on a real cluster).
- Garbage collector: ownerReferences dependents, background and foreground deletion, orphaning
  (kube-controller-manager's behaviour), switchable.
- Namespace bootstrap: every active namespace gets the `kube-root-ca.crt` ConfigMap and the `default`
  ServiceAccount (root-ca-cert-publisher and serviceaccounts controllers), restored when deleted or
  the CA bundle is edited.

The CRD controllers are part of kube-apiserver and always run; the others are
kube-controller-manager's and run only in cluster mode (`Settings.cluster`; `--bare` turns them off,
as envtest serves kube-apiserver alone).

They subscribe to the store's commits synchronously (only to queue work) and do the writes from one
asyncio task, so a commit never re-enters the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from kubeloop.meta import ADDED, DELETED, MODIFIED

from . import errors
from .aggregation import Aggregation
from .disruption import Disruption
from .errors import StatusError
from .managedfields import record_update
from .objectmeta import now_rfc3339
from .registry import CRD_FINALIZER, CRDS, Registry
from .resources import ServedResource
from .storage import Bucket, Commit, Key, Stored
from .workloads import Workloads

log = logging.getLogger(__name__)

CRD_BUCKET = "apiextensions.k8s.io/customresourcedefinitions"
NS_BUCKET = "/namespaces"
CM_BUCKET = "/configmaps"
SA_BUCKET = "/serviceaccounts"
ROOT_CA_NAME = "kube-root-ca.crt"
ROOT_CA_KEY = "ca.crt"
DEFAULT_SA = "default"
SA_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
#: the namespace controller's conditions when all is well (type, reason, message), in its order
NS_OK_CONDITIONS = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)
#: the name kube-controller-manager's writes are recorded under (managedFields)
KCM_MANAGER = "kube-controller-manager"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as "
    "the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "
    "Kubernetes clusters.")
Ref = tuple[str, Key]  # (bucket name, key)


class Controllers:
    """Queues work from commits and runs it in one background task."""

    def __init__(self, registry: Registry, on_resource_removed: Callable[[ServedResource], None],
                 root_ca_pem: str = "") -> None:
        self.registry = registry
        self.root_ca_pem = root_ca_pem
        self.store = registry.store
        self.settings = registry.settings
        self.on_resource_removed = on_resource_removed
        self._work: deque[tuple[float, Callable[[], bool]]] = deque()
        self._wake = asyncio.Event()
        # garbage collector indexes
        self._dependents: dict[str, set[Ref]] = {}
        self._by_uid: dict[str, Ref] = {}
        self._scheduled_ns: set[str] = set()
        self._scheduled_crd: set[str] = set()
        self.workloads = Workloads(self)
        self.aggregation = Aggregation(self)
        self.disruption = Disruption(self)
        self.store.listeners.append(self._on_commit)
        if self.settings.cluster:
            registry.admission.append(self._service_account_admission)

    def _service_account_admission(self, info: ServedResource, namespace: str, obj: dict[str, Any],
                                   requested_name: str) -> None:
        spec = obj.get("spec") if (info.group, info.resource) == ("", "pods") else None
        if not isinstance(spec, dict):
            return
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SA
        sa = self.store.bucket(SA_BUCKET).objects.get((namespace, name))
        if sa is None and name != DEFAULT_SA:
            # the plugin's `getServiceAccount` (the cache, then one live read; `default` is retried
            # for a second or two while the controller creates it, which this one does at once)
            pod = requested_name or (obj.get("metadata") or {}).get("generateName") or "Unknown"  # extractResourceName
            raise errors.forbidden(f'pods "{pod}" is forbidden: error looking up service account {namespace}/{name}: '
                                   f'serviceaccount "{name}" not found', {"name": pod, "kind": "pods"})
        _service_account_admission(info, namespace, obj, sa.obj if sa is not None else None)

    # ---- scheduling ------------------------------------------------------------------------
    def _later(self, delay: float, job: Callable[[], bool]) -> None:
        """Run `job` after `delay`; a job returning False is retried shortly after."""
        loop = asyncio.get_event_loop()
        self._work.append((loop.time() + delay, job))
        self._wake.set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            now = loop.time()
            pending: list[tuple[float, Callable[[], bool]]] = []
            while self._work:
                at, job = self._work.popleft()
                if at > now:
                    pending.append((at, job))
                    continue
                try:
                    done = job()
                except StatusError:
                    done = True
                except Exception:  # a controller bug must not stop the others
                    log.exception("emulator controller job failed")
                    done = True
                if not done:
                    pending.append((loop.time() + 0.2, job))  # waiting on finalizers: poll gently
            self._work.extend(pending)
            timeout = min((at for at, _ in self._work), default=now + 3600) - loop.time()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(timeout, 0.005)):  # not wait_for: no task per wait
                    await self._wake.wait()

    def _info_for(self, bucket_name: str) -> ServedResource | None:
        for info in self.registry.catalog.all():
            if info.storage_key == bucket_name:
                return info
        return None

    # ---- commit listener -------------------------------------------------------------------
    def _on_commit(self, bucket: Bucket, ch: Commit) -> None:
        obj = ch.new.obj
        meta = obj["metadata"]
        uid = meta.get("uid", "")
        self._index(bucket.name, ch)
        if bucket.name == CRD_BUCKET:
            self._crd_changed(ch)
            return
        if not self.settings.cluster:
            return
        if bucket.name in (NS_BUCKET, CM_BUCKET, SA_BUCKET):
            self._bootstrap_changed(bucket.name, ch)
        self.workloads.changed(bucket, ch)
        self.aggregation.changed(bucket, ch)
        self.disruption.changed(bucket, ch)
        if bucket.name == NS_BUCKET and ch.type == MODIFIED and meta.get("deletionTimestamp"):
            name = meta["name"]
            if name not in self._scheduled_ns:
                self._scheduled_ns.add(name)
                self._later(self.settings.namespace_delete_delay, lambda: self._finalize_namespace(name))
        if not self.settings.gc_enabled:
            return
        if ch.type == DELETED:
            if uid in self._dependents:
                self._later(0, lambda: self._collect(uid))
            for ref in meta.get("ownerReferences") or []:
                owner_uid = ref.get("uid")
                if isinstance(owner_uid, str) and owner_uid in self._by_uid:
                    self._later(0, functools.partial(self._collect, owner_uid))
        elif meta.get("deletionTimestamp") and {"foregroundDeletion", "orphan"} & set(meta.get("finalizers") or []):
            self._later(0, lambda: self._collect(uid))
        else:
            dangling = [r.get("uid") for r in meta.get("ownerReferences") or []
                        if isinstance(r, dict) and r.get("uid") not in self._by_uid]
            if dangling:  # owners that do not exist (any more): kube-controller-manager deletes the dependent
                self._later(0.1, functools.partial(self._collect_dangling, bucket.name, ch.key))

    def _index(self, bucket_name: str, ch: Commit) -> None:
        old_refs = {r.get("uid") for r in (ch.old.obj["metadata"].get("ownerReferences") or [])} if ch.old else set()
        new_refs = set() if ch.type == DELETED else {
            r.get("uid") for r in (ch.new.obj["metadata"].get("ownerReferences") or [])}
        ref: Ref = (bucket_name, ch.key)
        for u in old_refs - new_refs:
            deps = self._dependents.get(u)
            if deps is not None:
                deps.discard(ref)
                if not deps:
                    del self._dependents[u]
        for u in new_refs - old_refs:
            if u:
                self._dependents.setdefault(u, set()).add(ref)
        uid = ch.new.obj["metadata"].get("uid")
        if uid:
            if ch.type == DELETED:
                self._by_uid.pop(uid, None)
            else:
                self._by_uid[uid] = ref

    def _lookup(self, ref: Ref) -> Stored | None:
        b = self.store.buckets.get(ref[0])
        return b.objects.get(ref[1]) if b is not None else None

    # ---- low-level writes (bypass strategies: these are server-internal) --------------------
    def _write(self, bucket_name: str, old: Stored, mutate: Callable[[dict[str, Any]], None]) -> None:
        obj = _copy(old.obj)
        mutate(obj)
        meta = obj["metadata"]
        for k in ("finalizers", "ownerReferences"):
            if k in meta and not meta[k]:
                del meta[k]
        bucket = self.store.bucket(bucket_name)
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not (
                bucket_name == NS_BUCKET and (obj.get("spec") or {}).get("finalizers")):
            self.store.commit(bucket, DELETED, _copy(old.obj), old)
        elif obj != old.obj:
            self.store.commit(bucket, MODIFIED, obj, old)

    def _remove_finalizer(self, bucket_name: str, old: Stored, fin: str) -> None:
        def drop(obj: dict[str, Any]) -> None:
            obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f != fin]
        self._write(bucket_name, old, drop)

    def _delete(self, ref: Ref, policy: str = "Background") -> None:
        st = self._lookup(ref)
        info = self._info_for(ref[0])
        if st is None or info is None or st.obj["metadata"].get("deletionTimestamp"):
            return
        with contextlib.suppress(StatusError):
            self.registry.delete(info, ref[1][0], ref[1][1], {"propagationPolicy": policy}, dry_run=False)

    # ---- garbage collector -----------------------------------------------------------------
    def _collect(self, uid: str) -> bool:
        if not self.settings.gc_enabled:
            return True
        owner_ref = self._by_uid.get(uid)
        owner = self._lookup(owner_ref) if owner_ref else None
        deps = sorted(self._dependents.get(uid, ()))
        if owner is None:
            for ref in deps:
                dep = self._lookup(ref)
                if dep is None:
                    continue
                refs = dep.obj["metadata"].get("ownerReferences") or []
                others = [r for r in refs if r.get("uid") != uid and r.get("uid") in self._by_uid]
                if others:
                    self._write(ref[0], dep, lambda o: o["metadata"].__setitem__(
                        "ownerReferences", [r for r in o["metadata"].get("ownerReferences") or []
                                            if r.get("uid") != uid]))
                else:
                    self._delete(ref)
            return True
        meta = owner.obj["metadata"]
        if not meta.get("deletionTimestamp"):
            return True
        fins = meta.get("finalizers") or []
        assert owner_ref is not None
        if "orphan" in fins:
            for ref in deps:
                dep = self._lookup(ref)
                if dep is not None:
                    self._write(ref[0], dep, lambda o: o["metadata"].__setitem__(
                        "ownerReferences", [r for r in o["metadata"].get("ownerReferences") or []
                                            if r.get("uid") != uid]))
            owner = self._lookup(owner_ref)
            if owner is not None:
                self._remove_finalizer(owner_ref[0], owner, "orphan")
            return True
        if "foregroundDeletion" in fins:
            for ref in deps:
                dep = self._lookup(ref)
                if dep is not None:  # a dependent with dependents of its own goes in the foreground too
                    dep_uid = dep.obj["metadata"].get("uid", "")
                    self._delete(ref, "Foreground" if self._dependents.get(dep_uid) else "Background")
            # only dependents whose reference says blockOwnerDeletion hold the owner back
            if any(self._blocks(self._lookup(r), uid) for r in deps):
                return True  # re-queued when a dependent goes away
            owner = self._lookup(owner_ref)
            if owner is not None:
                self._remove_finalizer(owner_ref[0], owner, "foregroundDeletion")
        return True

    @staticmethod
    def _blocks(dep: Stored | None, owner_uid: str) -> bool:
        return dep is not None and any(
            isinstance(r, dict) and r.get("uid") == owner_uid and r.get("blockOwnerDeletion")
            for r in dep.obj["metadata"].get("ownerReferences") or [])

    def _collect_dangling(self, bucket_name: str, key: Key) -> bool:
        dep = self._lookup((bucket_name, key))
        if dep is None or not self.settings.gc_enabled:
            return True
        refs = [r for r in dep.obj["metadata"].get("ownerReferences") or [] if isinstance(r, dict)]
        if refs and all(r.get("uid") not in self._by_uid for r in refs):
            self._delete((bucket_name, key))
        return True

    # ---- namespaces ------------------------------------------------------------------------
    def _finalize_namespace(self, name: str) -> bool:
        ns = self.store.bucket(NS_BUCKET).objects.get(("", name))
        if ns is None or not ns.obj["metadata"].get("deletionTimestamp"):
            self._scheduled_ns.discard(name)
            return True
        for info in self._namespaced_infos():
            bucket = self.store.bucket(info.storage_key)
            for key in [k for k in bucket.sorted_keys() if k[0] == name]:
                self._delete((info.storage_key, key))
        by_resource: dict[str, int] = {}
        by_finalizer: dict[str, int] = {}
        for info in self._namespaced_infos():
            for key, st in self.store.bucket(info.storage_key).objects.items():
                if key[0] == name:
                    gr = f"{info.resource}.{info.group}"
                    by_resource[gr] = by_resource.get(gr, 0) + 1
                    for f in st.obj["metadata"].get("finalizers") or []:
                        by_finalizer[f] = by_finalizer.get(f, 0) + 1
        self._namespace_conditions(ns, by_resource, by_finalizer)
        if by_resource:
            return False
        self._scheduled_ns.discard(name)

        def finalize(obj: dict[str, Any]) -> None:
            spec = obj.setdefault("spec", {})
            spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != "kubernetes"]
            if not spec["finalizers"]:
                del spec["finalizers"]
        self._write(NS_BUCKET, ns, finalize)
        return True

    def _namespace_conditions(self, ns: Stored, by_resource: dict[str, int], by_finalizer: dict[str, int]) -> None:
        """The namespace controller's five deletion conditions (status False and an "ok" reason when fine)."""
        new = {t: ("False", reason, message) for t, reason, message in NS_OK_CONDITIONS}
        if by_resource:
            new["NamespaceContentRemaining"] = ("True", "SomeResourcesRemain", "Some resources are remaining: " + ", ".join(
                sorted(f"{gr} has {n} resource instances" for gr, n in by_resource.items())))
        if by_finalizer:
            new["NamespaceFinalizersRemaining"] = (
                "True", "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: " + ", ".join(
                    sorted(f"{f} in {n} resource instances" for f, n in by_finalizer.items())))
        old = {c.get("type"): c for c in (ns.obj.get("status") or {}).get("conditions") or [] if isinstance(c, dict)}
        if all(old.get(t, {}).get("status") == v[0] and old[t].get("reason") == v[1] and old[t].get("message") == v[2]
               for t, v in new.items()):
            return
        ts = now_rfc3339()
        conds = [{"type": t, "status": st, "lastTransitionTime": old[t].get("lastTransitionTime", ts)
                  if t in old and old[t].get("status") == st else ts, "reason": reason, "message": message}
                 for t, (st, reason, message) in new.items()]
        self._write(NS_BUCKET, ns, lambda o: o.setdefault("status", {}).__setitem__("conditions", conds))

    def _namespaced_infos(self) -> list[ServedResource]:
        seen: dict[str, ServedResource] = {}
        for info in self.registry.catalog.all():
            if info.namespaced and info.storage_key not in seen:
                seen[info.storage_key] = info
        return list(seen.values())

    # ---- namespace bootstrap (root-ca-cert-publisher, serviceaccounts controller) ----------
    def _bootstrap_changed(self, bucket_name: str, ch: Commit) -> None:
        meta = ch.new.obj["metadata"]
        if bucket_name == NS_BUCKET:
            if ch.type == ADDED:
                name = meta["name"]
                self._later(0, lambda: self._ensure_root_ca(name))
                self._later(0, lambda: self._ensure_default_sa(name))
            return
        ns = meta.get("namespace", "")
        if bucket_name == CM_BUCKET and meta.get("name") == ROOT_CA_NAME:
            if ch.type == DELETED or (ch.new.obj.get("data") or {}) != {ROOT_CA_KEY: self.root_ca_pem}:
                self._later(0, lambda: self._ensure_root_ca(ns))
        elif bucket_name == SA_BUCKET and meta.get("name") == DEFAULT_SA and ch.type == DELETED:
            self._later(0, lambda: self._ensure_default_sa(ns))

    def _namespace_active(self, name: str) -> bool:
        ns = self.store.bucket(NS_BUCKET).objects.get(("", name))
        return ns is not None and not ns.obj["metadata"].get("deletionTimestamp")

    def _ensure_root_ca(self, namespace: str) -> bool:
        """The CA bundle ConfigMap: created if missing, its data and description put back if changed."""
        info = self.registry.catalog.lookup("", "v1", "configmaps")
        if info is None or not self._namespace_active(namespace):
            return True
        data = {ROOT_CA_KEY: self.root_ca_pem}
        cur = self.store.bucket(CM_BUCKET).objects.get((namespace, ROOT_CA_NAME))
        if cur is None:
            self.registry.create(info, namespace, {"metadata": {
                "name": ROOT_CA_NAME, "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
                "data": data}, manager=KCM_MANAGER, dry_run=False)
            return True
        view = self.registry.view(info, cur)
        annotations = view["metadata"].get("annotations") or {}
        if view.get("data") == data and annotations.get("kubernetes.io/description"):
            return True
        obj = _copy(view)
        obj["data"] = data
        obj.pop("binaryData", None)
        obj["metadata"].setdefault("annotations", {})["kubernetes.io/description"] = ROOT_CA_DESCRIPTION
        self.registry.update(info, namespace, ROOT_CA_NAME, obj, manager=KCM_MANAGER, dry_run=False)
        return True

    def _ensure_default_sa(self, namespace: str) -> bool:
        info = self.registry.catalog.lookup("", "v1", "serviceaccounts")
        if info is None or not self._namespace_active(namespace):
            return True
        if (namespace, DEFAULT_SA) not in self.store.bucket(SA_BUCKET).objects:
            self.registry.create(info, namespace, {"metadata": {"name": DEFAULT_SA}}, manager=KCM_MANAGER,
                                 dry_run=False)
        return True

    # ---- CRDs ------------------------------------------------------------------------------
    def _crd_changed(self, ch: Commit) -> None:
        obj = ch.new.obj
        meta = obj["metadata"]
        name = meta["name"]
        if ch.type == DELETED:
            return
        if meta.get("deletionTimestamp"):
            if CRD_FINALIZER in (meta.get("finalizers") or []) and name not in self._scheduled_crd:
                self._scheduled_crd.add(name)
                # the finalizer controller deletes the instances at once; the CRD goes after the delay
                self._later(0, lambda: self._delete_instances(name) is not None)
                self._later(self.settings.crd_cleanup_delay, lambda: self._cleanup_crd(name))
            return
        conflict = self.registry.catalog.names_conflict(obj)
        if conflict is None:
            self.registry.catalog.add_crd(_copy(obj))
        if ch.type == ADDED or not _established(obj):
            self._later(0, lambda: self._establish(name))

    def _establish(self, name: str) -> bool:
        bucket = self.store.bucket(CRD_BUCKET)
        st = bucket.objects.get(("", name))
        if st is None or st.obj["metadata"].get("deletionTimestamp"):
            return True

        conflict = self.registry.catalog.names_conflict(st.obj)
        crd_info = self.registry.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")

        def mutate(obj: dict[str, Any]) -> None:
            before = _copy(obj)
            _set_crd_status(obj)
            if crd_info is not None:  # the apiserver's own status writes are recorded as kube-apiserver's
                record_update(crd_info, obj, before, "kube-apiserver", "status")

        def _set_crd_status(obj: dict[str, Any]) -> None:
            spec = obj.get("spec") or {}
            names = dict(spec.get("names") or {})
            names.setdefault("singular", str(names.get("kind", "")).lower())
            names.setdefault("listKind", f"{names.get('kind', '')}List")
            status = obj.setdefault("status", {})
            ts = now_rfc3339()
            if conflict is not None:  # kube-apiserver's naming controller refuses the names
                status.setdefault("acceptedNames", {"plural": "", "kind": ""})
                status["conditions"] = [
                    {"type": "NamesAccepted", "status": "False", "lastTransitionTime": ts,
                     "reason": "NameConflict", "message": conflict},
                    {"type": "Established", "status": "False", "lastTransitionTime": ts,
                     "reason": "NotAccepted", "message": "not all names are accepted"},
                ]
                return
            status["acceptedNames"] = names
            status["conditions"] = [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": ts, "reason": "NoConflicts",
                 "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": ts,
                 "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
            ]
            storage = [v.get("name") for v in spec.get("versions") or [] if v.get("storage")]
            stored = list(status.get("storedVersions") or [])
            for v in storage:
                if v not in stored:
                    stored.append(v)
            status["storedVersions"] = stored
        crd_info = self._info_for(CRD_BUCKET)

        def write_status(obj: dict[str, Any]) -> None:
            # the naming and establishing controllers write status as `kube-apiserver` (an Update of `status`)
            before = _copy(obj)
            mutate(obj)
            if crd_info is not None:
                record_update(crd_info, obj, before, "kube-apiserver", "status")
        if not _established(st.obj) and not (conflict is not None and _conditions(st.obj).get("NamesAccepted") == "False"):
            self._write(CRD_BUCKET, st, write_status)
        return True

    def _delete_instances(self, name: str) -> list[ServedResource]:
        """Delete every instance of a CRD (those with finalizers are only marked); its resources."""
        infos = [i for i in self.registry.catalog.all() if i.crd_name == name]
        for info in infos:
            b = self.store.bucket(info.storage_key)
            for key in list(b.sorted_keys()):
                self._delete((info.storage_key, key))
        return infos

    def _cleanup_crd(self, name: str) -> bool:
        bucket = self.store.bucket(CRD_BUCKET)
        st = bucket.objects.get(("", name))
        if st is None:
            self._scheduled_crd.discard(name)
            return True
        infos = self._delete_instances(name)
        if any(self.store.bucket(i.storage_key).objects for i in infos):
            return False
        self.registry.catalog.remove_crd(_copy(st.obj))
        for info in infos:
            self.on_resource_removed(info)
            self.store.drop_bucket(info.storage_key)
        self._scheduled_crd.discard(name)
        st = bucket.objects.get(("", name))
        if st is not None:
            self._remove_finalizer(CRD_BUCKET, st, CRD_FINALIZER)
        return True


def _service_account_admission(info: ServedResource, namespace: str, obj: dict[str, Any],
                               service_account: dict[str, Any] | None = None) -> None:
    """The ServiceAccount admission plugin, as a cluster runs it: a Pod without one runs as `default`,
    and gets the projected `kube-api-access-*` volume (token, CA bundle, namespace) mounted in every
    container, unless it or its ServiceAccount opts out with `automountServiceAccountToken: false`.

    (envtest, like `--bare`, turns it off: without kube-controller-manager no ServiceAccount exists.)"""
    if (info.group, info.resource) != ("", "pods"):
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec.get("serviceAccount") or DEFAULT_SA
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
    automount = spec.get("automountServiceAccountToken")
    if automount is None and service_account is not None:
        automount = service_account.get("automountServiceAccountToken")
    if automount is False:
        return
    containers = [c for key in ("initContainers", "containers") for c in spec.get(key) or [] if isinstance(c, dict)]
    if any(m.get("mountPath") == SA_MOUNT_PATH for c in containers for m in c.get("volumeMounts") or []
           if isinstance(m, dict)):
        return
    from .objectmeta import generate_name

    name = generate_name("kube-api-access-")
    spec.setdefault("volumes", []).append({"name": name, "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": ROOT_CA_NAME, "items": [{"key": ROOT_CA_KEY, "path": ROOT_CA_KEY}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                    "fieldPath": "metadata.namespace"}}]}}],
        "defaultMode": 420}})
    for c in containers:
        c.setdefault("volumeMounts", []).append({"name": name, "readOnly": True, "mountPath": SA_MOUNT_PATH})


def _conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {str(c.get("type")): str(c.get("status")) for c in (obj.get("status") or {}).get("conditions") or []
            if isinstance(c, dict)}


def _established(obj: dict[str, Any]) -> bool:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Established" and c.get("status") == "True":
            return True
    return False


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    import orjson

    out: dict[str, Any] = orjson.loads(orjson.dumps(obj))
    return out


__all__ = ["CRDS", "Controllers"]
