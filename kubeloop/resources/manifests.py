"""RBAC rules and deployment manifests derived from what the controllers declare (pure, sans-IO).

Why: the rules an operator needs follow from its `ControllerSpec`s (controller-gen needs a marker
per rule; no Python framework derives them). What each declaration needs:

- every ``for_``/``owns``/``watches`` source and every Manager informer: get, list, watch;
- the primary (``for_``), as ``primary_writes`` says: ``"object"`` (the default) update, patch
  (finalizers and metadata, which `finalize` writes) and, when its kind has a status subresource,
  update and patch on ``<plural>/status``; ``"status"`` the status only; ``"none"`` nothing;
- ``owns``: create, update, patch, delete of the children, and update on ``<primary>/finalizers``
  (setting ``blockOwnerDeletion`` on a child's owner reference needs it where the
  OwnerReferencesPermissionEnforcement admission plugin is on);
- ``record_events`` (the default): create, patch on ``events.k8s.io`` events (the recorder posts
  only events.k8s.io/v1 Events and patches their series);
- ``writes=[...]``: create, update, patch, delete of each kind named;
- ``targets=[...]`` (what ``ctx.watch_target`` reads): get, list, watch of each kind, in the
  ClusterRole (a target cache watches its kind in all namespaces) or, for a ``Target`` declared in
  one namespace, in a Role there; nothing in the management cluster for a ``remote`` one; a kind not
  resolvable offline may be named by its plural (``helm.toolkit.fluxcd.io/v2/helmreleases``), since
  that is all RBAC needs;
- a runnable's ``reads`` (`kubeloop.manager.ClustersFromSecrets`: Secrets in its namespace) and
  every Manager informer: get, list, watch;
- leader election: get, update on the Lease (by name) and create on leases, in its namespace;
- sharding (``kubeloop run --sharding``): get, list, create, update, delete on leases in its
  namespace (each replica creates its own membership Lease, lists its peers' and deletes its own
  on leave; the names are per replica, so not known in advance).

The management cluster needs all of that; another cluster (``needs(..., cluster=NAME)``, behind
``kubeloop manifests --for-cluster NAME``) what the controllers running there read and write and
what the targets read there need, and no Lease, informer or runnable rule. A need with a namespace
(a source narrowed to one) becomes a Role there; anything else goes in the ClusterRole. Kinds are resolved offline: built-in kinds from a table, custom kinds from the CRDs
the module declares (typed resources or CRD dicts); anything else raises `UnresolvedKind`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubeloop.client import ResourceRef, misspelt_kind
from kubeloop.controller import ControllerSpec
from kubeloop.meta import DEFAULT_CLUSTER

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "patch", "update")
RBAC_API = "rbac.authorization.k8s.io/v1"


class UnresolvedKind(ValueError):
    """A kind neither built in nor declared by the module (its plural and scope are unknown offline)."""


@dataclass(frozen=True)
class Kind:
    """What RBAC needs to know about a kind: its group, plural, scope and subresources."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str] = frozenset()


# group/version/Kind plural scope(N|C) subresources: the built-in kinds operators use most
_BUILTIN = """
v/Namespace namespaces C status,finalize
v/ConfigMap configmaps N
v/Secret secrets N
v/Service services N status
v/Pod pods N status,log,exec,eviction,binding,portforward,attach
v/Event events N
v/ServiceAccount serviceaccounts N token
v/Endpoints endpoints N
v/PersistentVolumeClaim persistentvolumeclaims N status
v/PersistentVolume persistentvolumes C status
v/Node nodes C status
v/PodTemplate podtemplates N
v/ResourceQuota resourcequotas N status
v/LimitRange limitranges N
apps/v1/Deployment deployments N status,scale
apps/v1/StatefulSet statefulsets N status,scale
apps/v1/ReplicaSet replicasets N status,scale
apps/v1/DaemonSet daemonsets N status
batch/v1/Job jobs N status
batch/v1/CronJob cronjobs N status
coordination.k8s.io/v1/Lease leases N
events.k8s.io/v1/Event events N
networking.k8s.io/v1/Ingress ingresses N status
networking.k8s.io/v1/NetworkPolicy networkpolicies N
policy/v1/PodDisruptionBudget poddisruptionbudgets N status
autoscaling/v2/HorizontalPodAutoscaler horizontalpodautoscalers N status
autoscaling/v1/HorizontalPodAutoscaler horizontalpodautoscalers N status
discovery.k8s.io/v1/EndpointSlice endpointslices N
storage.k8s.io/v1/StorageClass storageclasses C
rbac.authorization.k8s.io/v1/Role roles N
rbac.authorization.k8s.io/v1/RoleBinding rolebindings N
rbac.authorization.k8s.io/v1/ClusterRole clusterroles C
rbac.authorization.k8s.io/v1/ClusterRoleBinding clusterrolebindings C
apiextensions.k8s.io/v1/CustomResourceDefinition customresourcedefinitions C status
"""


def _builtin_kinds() -> list[Kind]:
    out = []
    for line in _BUILTIN.strip().splitlines():
        gvk, plural, scope, *subs = line.split()
        ref = ResourceRef.parse("v1/" + gvk[2:] if gvk.startswith("v/") else gvk)
        out.append(Kind(ref.group, ref.version, ref.name, plural, scope == "N",
                        frozenset(subs[0].split(",")) if subs else frozenset()))
    return out


def kinds_of_crd(crd: Mapping[str, Any]) -> list[Kind]:
    """The kinds (one per version) a CustomResourceDefinition serves."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    try:
        group, kind, plural = spec["group"], names["kind"], names["plural"]
    except KeyError as e:
        raise ValueError(f"CustomResourceDefinition {crd.get('metadata', {}).get('name')!r} lacks spec.{e.args[0]}") \
            from None
    out = []
    for v in spec.get("versions") or ():
        subs = frozenset((v.get("subresources") or spec.get("subresources") or {}).keys())
        out.append(Kind(group, v["name"], kind, plural, spec.get("scope", "Namespaced") == "Namespaced", subs))
    return out


class Resolver:
    """Kind or plural name -> `Kind`, from the built-in table and the CRDs given."""

    def __init__(self, crds: Iterable[Mapping[str, Any]] = (), kinds: Iterable[Kind] = ()) -> None:
        self._by: dict[tuple[str, str, str], Kind] = {}
        for k in [*_builtin_kinds(), *(k for c in crds for k in kinds_of_crd(c)), *kinds]:
            self._by[(k.group, k.version, k.kind)] = k
            self._by[(k.group, k.version, k.plural)] = k

    def resolve(self, resource: str) -> Kind:
        ref = ResourceRef.parse(resource)
        found = self._by.get((ref.group, ref.version, ref.name))
        if found is None:
            typo = self.suggestion(ref)
            hint = f" (did you mean '{ref.api_version}/{typo}'?)" if typo else ""
            raise UnresolvedKind(
                f"cannot resolve {resource} offline{hint}: it is not a built-in kind kubeloop knows nor a custom "
                "resource the module declares (a CustomResource class, or `crds`/`crd()`); declare its CRD in the "
                "module, or give --kubeconfig to read it from the cluster's discovery")
        return found

    def suggestion(self, ref: ResourceRef) -> str | None:
        """The known kind of ``ref``'s group and version that ``ref`` is a typo of, if any (for built-in
        groups, the closest name; for CRD groups, only a near miss, as the client's RESTMapper judges)."""
        kinds: dict[str, set[str]] = {}
        for (group, version, _), k in self._by.items():
            if (group, version) == (ref.group, ref.version):
                kinds.setdefault(k.kind, set()).update((k.kind, k.plural))
        typo = misspelt_kind(ref.name, kinds)
        if typo is None and "." not in ref.group:
            import difflib  # only to word this error

            close = difflib.get_close_matches(ref.name, sorted(kinds), n=1)
            typo = close[0] if close else None
        return typo


# ---------------------------------------------------------------------- what the operator needs

@dataclass(frozen=True)
class Need:
    """Verbs on one resource (``plural`` or ``plural/sub``) in one namespace (None: cluster-wide)."""

    group: str
    resource: str
    verbs: frozenset[str]
    namespace: str | None = None
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Operator:
    """What the Manager declares: its controllers, its extra informers and its Lease."""

    controllers: tuple[ControllerSpec, ...]
    informers: tuple[tuple[str, str | None], ...] = ()  # (resource, namespace): informers and runnables' reads
    lease: tuple[str, str] | None = None  # (name, namespace)
    shard_namespace: str | None = None  # sharding: where the membership Leases live


def needs(op: Operator, resolver: Resolver, cluster: str = DEFAULT_CLUSTER) -> list[Need]:
    """Every permission the operator needs in ``cluster`` (see the module docstring), unmerged: in the
    management cluster (the default) everything; in another cluster what the controllers running
    there and the targets read there need, without the Manager's own Lease and informers."""
    out: list[Need] = []
    management = cluster == DEFAULT_CLUSTER

    def add(resource: str, verbs: Iterable[str], namespace: str | None, sub: str = "") -> Kind:
        k = resolver.resolve(resource)
        out.append(Need(k.group, f"{k.plural}/{sub}" if sub else k.plural, frozenset(verbs),
                        namespace if k.namespaced else None))
        return k

    for spec in op.controllers:
        primary = spec.primary
        here = spec.sources_on(cluster)
        for src in here:
            add(src.resource, READ, src.selection.namespace)
        if any(src is primary for src in here):  # its reconciles run here: they write here
            scope = primary.selection.namespace
            pk = resolver.resolve(primary.resource)
            if spec.primary_writes == "object":
                add(primary.resource, ("update", "patch"), scope)
            if spec.primary_writes in ("object", "status"):
                if "status" in pk.subresources:
                    add(primary.resource, ("update", "patch"), scope, "status")
                elif spec.primary_writes == "status":  # no status subresource: status is written with the object
                    add(primary.resource, ("update", "patch"), scope)
            owned = [s for s in spec.sources if s.role == "owns"]
            for src in owned:
                add(src.resource, WRITE, src.selection.namespace if src.selection.namespace is not None else scope)
            if owned:
                add(primary.resource, ("update",), scope, "finalizers")
            for w in spec.writes:
                add(w, WRITE, scope)
            if spec.record_events:
                event_ns = scope if pk.namespaced else "default"
                add("events.k8s.io/v1/Event", ("create", "patch"), event_ns)
        for t in spec.targets or ():
            if t.remote and management:
                continue  # read only in other clusters, with their credentials
            group, plural, namespaced = target_kind(t.kind, resolver)
            out.append(Need(group, plural, frozenset(READ), t.namespace if namespaced is not False else None))
    if management:
        for resource, namespace in op.informers:
            add(resource, READ, namespace)
        out += manager_needs(op)
    return out


def manager_needs(op: Operator) -> list[Need]:
    """What the Manager itself needs in the management cluster: its Lease (leader election) or the
    membership Leases (sharding)."""
    out = []
    if op.lease is not None:
        name, namespace = op.lease
        out.append(Need("coordination.k8s.io", "leases", frozenset({"get", "update"}), namespace, (name,)))
        out.append(Need("coordination.k8s.io", "leases", frozenset({"create"}), namespace))
    if op.shard_namespace is not None:
        out.append(Need("coordination.k8s.io", "leases", frozenset({"get", "list", "create", "update", "delete"}),
                        op.shard_namespace))
    return out


def target_kind(resource: str, resolver: Resolver) -> tuple[str, str, bool | None]:
    """(group, plural, namespaced) of a ``targets`` entry: resolved, or as written when it is a plural
    (its scope then unknown: None)."""
    try:
        k = resolver.resolve(resource)
        return k.group, k.plural, k.namespaced
    except UnresolvedKind as exc:
        ref = ResourceRef.parse(resource)
        if ref.name[:1].islower():
            return ref.group, ref.name, None
        raise UnresolvedKind(f"{exc}; or, for targets=, name it by its plural: "
                             f"'{ref.group}/{ref.version}/<plural>'") from None


@dataclass(frozen=True)
class Rule:
    """One PolicyRule."""

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"apiGroups": list(self.api_groups), "resources": list(self.resources)}
        if self.resource_names:
            d["resourceNames"] = list(self.resource_names)
        d["verbs"] = list(self.verbs)
        return d


@dataclass
class Permissions:
    """The rules by scope: ``cluster`` for the ClusterRole, ``namespaced[ns]`` for a Role in ``ns``."""

    cluster: list[Rule] = field(default_factory=list)
    namespaced: dict[str, list[Rule]] = field(default_factory=dict)


def merge(all_needs: Iterable[Need]) -> Permissions:
    """Fewest rules: one per (group, verbs, names) with the resources that share them, per scope.

    A namespaced need already covered cluster-wide is dropped (the ClusterRole grants it everywhere).
    """
    verbs: dict[tuple[str | None, str, str, tuple[str, ...]], set[str]] = defaultdict(set)
    for n in all_needs:
        verbs[(n.namespace, n.group, n.resource, n.names)] |= n.verbs
    for (ns, group, resource, names), vs in list(verbs.items()):
        if ns is not None:
            wide = verbs.get((None, group, resource, ()), set()) | verbs.get((None, group, resource, names), set())
            vs -= wide
            if not vs:
                del verbs[(ns, group, resource, names)]
    grouped: dict[tuple[str | None, str, tuple[str, ...], tuple[str, ...]], list[str]] = defaultdict(list)
    for (ns, group, resource, names), vs in verbs.items():
        grouped[(ns, group, tuple(sorted(vs)), names)].append(resource)
    perms = Permissions()
    for (ns, group, verb_list, names), resources in sorted(grouped.items(), key=lambda kv: (
            kv[0][0] or "", kv[0][1], sorted(kv[1]), kv[0][2], kv[0][3])):
        rule = Rule((group,), tuple(sorted(resources)), verb_list, names)
        (perms.cluster if ns is None else perms.namespaced.setdefault(ns, [])).append(rule)
    return perms


# ---------------------------------------------------------------------- the documents

@dataclass(frozen=True)
class Deployment:
    """How the operator is deployed (what ``kubeloop run`` is told)."""

    name: str
    namespace: str
    image: str
    target: str  # the module ``kubeloop run`` loads
    metrics_port: int = 8080
    health_port: int = 8081
    leader_election: bool = True
    lease_name: str = ""
    replicas: int = 1
    sharding: bool = False  # replicas share the work (``--sharding``, group named ``lease_name``)
    env: tuple[tuple[str, str], ...] = ()  # the container's environment variables (name, value)
    webhook_port: int | None = None  # the container's ``webhook`` port (webhooks served)
    args: tuple[str, ...] = ()  # more flags of ``kubeloop run``
    secret_mounts: tuple[tuple[str, str], ...] = ()  # (Secret, directory) mounted read-only


_NAME = re.compile(r"[^a-z0-9-]+")


def dns_name(text: str) -> str:
    """``text`` as a DNS-1123 label (lower case, ``-`` for anything else, 63 characters at most)."""
    return (_NAME.sub("-", text.lower()).strip("-") or "kubeloop")[:63].rstrip("-")


_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


def parse_env(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` strings -> (name, value) pairs, in order, a name given twice keeping its last
    value; a `ValueError` naming the bad item for anything the API server would reject."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not _ENV_NAME.match(name):
            raise ValueError(f"environment variable {item!r} must be NAME=VALUE with a NAME of letters, digits, "
                             "'_', '-' or '.', not starting with a digit")
        out.pop(name, None)
        out[name] = value
    return tuple(out.items())


def rbac_documents(perms: Permissions, name: str, namespace: str) -> list[dict[str, Any]]:
    """ServiceAccount ``namespace/name``, and the ClusterRole and Roles of ``perms`` bound to it."""
    labels = labels_of(name)
    sa = {"kind": "ServiceAccount", "name": name, "namespace": namespace}
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "ServiceAccount",
                                   "metadata": {"name": name, "namespace": namespace, "labels": labels}}]
    if perms.cluster:
        docs.append({"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": {"name": name, "labels": labels},
                     "rules": [r.to_dict() for r in perms.cluster]})
        docs.append({"apiVersion": RBAC_API, "kind": "ClusterRoleBinding",
                     "metadata": {"name": name, "labels": labels},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                     "subjects": [sa]})
    for ns, rules in sorted(perms.namespaced.items()):
        docs.append({"apiVersion": RBAC_API, "kind": "Role",
                     "metadata": {"name": name, "namespace": ns, "labels": labels},
                     "rules": [r.to_dict() for r in rules]})
        docs.append({"apiVersion": RBAC_API, "kind": "RoleBinding",
                     "metadata": {"name": name, "namespace": ns, "labels": labels},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                     "subjects": [sa]})
    return docs


def labels_of(name: str) -> dict[str, str]:
    """The labels of everything the manifests of operator ``name`` create."""
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "kubeloop"}


def selector_of(name: str) -> dict[str, str]:
    """The labels selecting operator ``name``'s pods (its Deployment's and its Services' selector)."""
    return {"app.kubernetes.io/name": name}


def manifests(perms: Permissions, dep: Deployment, crds: Sequence[Mapping[str, Any]] = (), *,
              services: Sequence[Mapping[str, Any]] = (),
              configurations: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The documents to apply, in order: CRDs, ServiceAccount, roles and bindings, ``services`` (a
    webhook Service, its certificate's), Deployment, then ``configurations`` (webhook configurations:
    last, so that applying the rest is never sent to a webhook that is not running yet)."""
    labels = labels_of(dep.name)
    docs: list[dict[str, Any]] = [dict(c) for c in crds]
    docs += rbac_documents(perms, dep.name, dep.namespace)
    docs += [dict(s) for s in services]
    args = ["run", dep.target, "--namespace", dep.namespace, "--metrics-port", str(dep.metrics_port),
            "--health-port", str(dep.health_port), "--log-format", "json"]
    if dep.sharding:
        args += ["--sharding", "--sharding-name", dep.lease_name or dep.name]
    elif dep.leader_election:
        args += ["--leader-election", "--leader-election-id", dep.lease_name or dep.name]
    args += dep.args
    probe = {"initialDelaySeconds": 5, "periodSeconds": 10}
    ports = [{"name": "metrics", "containerPort": dep.metrics_port}, {"name": "health", "containerPort": dep.health_port}]
    if dep.webhook_port is not None:
        ports.append({"name": "webhook", "containerPort": dep.webhook_port})
    container: dict[str, Any] = {
        "name": "operator", "image": dep.image, "command": ["kubeloop"], "args": args, "ports": ports,
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "health"}, **probe},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "health"}, **probe},
        # what any Python image runs with (runAsNonRoot would refuse images that run as root)
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    if dep.env:
        container["env"] = [{"name": k, "value": v} for k, v in dep.env]
    pod: dict[str, Any] = {"serviceAccountName": dep.name, "terminationGracePeriodSeconds": 35,
                           "containers": [container]}
    if dep.secret_mounts:
        volumes = [(f"secret-{i}", secret, path) for i, (secret, path) in enumerate(dep.secret_mounts)]
        container["volumeMounts"] = [{"name": v, "mountPath": path, "readOnly": True} for v, _, path in volumes]
        pod["volumes"] = [{"name": v, "secret": {"secretName": secret}} for v, secret, _ in volumes]
    docs.append({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": dep.name, "namespace": dep.namespace, "labels": labels},
        "spec": {"replicas": dep.replicas, "selector": {"matchLabels": selector_of(dep.name)},
                 "template": {"metadata": {"labels": labels}, "spec": pod}},
    })
    docs += [dict(c) for c in configurations]
    return docs


# ---------------------------------------------------------------------- observed rules

def needs_from_audit(entries: Iterable[Any], user: str | None = None, home: str | None = None) -> list[Need]:
    """Needs from an emulator audit (``AuditEntry``-like: user, verb, api_group, resource,
    subresource, namespace), for ``kubeloop manifests --observe``; ``user`` filters by caller.

    A ``list``/``watch`` made across all namespaces is cluster-wide; other verbs keep their namespace
    when it is ``home`` (the operator's own, ``--namespace``), and are cluster-wide in any other: the
    tests' namespaces are throwaway names, so a rule there must hold wherever the objects will be.
    Two verbs bring another, for what kube-apiserver authorizes beyond the request's own verb:
    - ``watch`` brings ``list``: an informer's first list is a LIST then a WATCH, or, with
      ``streaming_list``, a streaming list (a WATCH with sendInitialEvents) where the server serves
      those (kube-apiserver 1.27+, the emulator with its WatchList feature gate) and a LIST where
      it does not, so the observation of one needs the rules of the other;
    - ``patch`` of an object (not a subresource) brings ``create``: a server-side apply creates
      the object when it does not exist, and kube-apiserver then also authorizes ``create``
      (``withAuthorization`` in its patch handler); the audit does not say whether a patch created.
    """
    out = []
    for e in entries:
        if user is not None and e.user != user:
            continue
        resource = f"{e.resource}/{e.subresource}" if e.subresource else e.resource
        verbs = {e.verb}
        if e.verb == "watch":
            verbs.add("list")
        elif e.verb == "patch" and not e.subresource:
            verbs.add("create")
        namespace = e.namespace or None
        if home is not None and namespace != home:
            namespace = None
        out.append(Need(e.api_group, resource, frozenset(verbs), namespace))
    return out
