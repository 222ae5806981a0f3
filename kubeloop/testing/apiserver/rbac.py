"""RBAC authorization, the access layer every request passes, and a request audit.

Authorization is on by default, as on a real cluster and in envtest: every caller but the admin
(any user in `system:masters`) is authorized the way kube-apiserver's RBAC authorizer does it,
from the Roles, ClusterRoles and bindings in the store, with the same 403 ``Forbidden`` Status.
The control plane's own RBAC objects are stored at start (`bootstrap.py`: `system:discovery`,
`system:basic-user`, `admin`/`edit`/`view`, ...), so a service account can read discovery and run
access reviews and nothing else until it is granted more. `APIServer(rbac=False)`
(`kubeloop apiserver --no-rbac`) turns authorization off: every authenticated caller may do
everything.

- request attributes come from the path alone, as kube-apiserver's RequestInfoFactory does
  (verb from the method, ``list``/``watch``/``deletecollection`` for collections, subresource,
  name, namespace), so a forbidden request is refused before the resource is looked up;
- ClusterRoleBindings grant everywhere, RoleBindings in their namespace (to a Role there or a
  ClusterRole); rules match verbs, apiGroups, resources (``x/status``, ``*``, ``*/status``),
  resourceNames and nonResourceURLs (``*`` suffix); a binding to a missing role adds the real
  server's ``RBAC: ... not found`` reason;
- `decide` also says which binding allowed a request, in the words SubjectAccessReviews use, and
  `rules_for` lists a user's rules for SelfSubjectRulesReview.

Who the caller is comes from `authn.py`. The audit records each (user, verb, group, resource,
subresource, namespace) used, for ``kubeloop manifests --observe``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from kubeloop.meta import FieldSelector, SelectorError

from . import errors
from .authn import CURRENT_USER, SA_PREFIX, AuthenticationError, Authenticator, User
from .catalog import Catalog
from .errors import StatusError
from .storage import VersionedStore

RBAC_GROUP = "rbac.authorization.k8s.io"
#: where `APIServer` appends its audit when it stops (read by ``kubeloop manifests --observe``)
AUDIT_FILE_ENV = "KUBELOOP_AUDIT_FILE"

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do (kube-apiserver's authorizer.Attributes)."""

    verb: str
    path: str
    resource_request: bool = False
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""


def request_attributes(method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The attributes of a request, from its method, path and query only (as RequestInfoFactory)."""
    verb = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
            "DELETE": "delete"}.get(method, method.lower())
    parts = [p for p in path.split("/") if p]
    if not parts or parts[0] not in ("api", "apis"):
        return Attributes(verb, path)
    if parts[0] == "api":
        if len(parts) < 2:
            return Attributes(verb, path)
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) < 3:
            return Attributes(verb, path)
        group, version, rest = parts[1], parts[2], parts[3:]
    if not rest:
        return Attributes(verb, path)  # a discovery document
    if rest[0] == "watch":  # the deprecated /watch/ prefix
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if query.get("watch", "").lower() in ("1", "true") else "list"
        try:  # as RequestInfoFactory: a list pinned to one name (`=` or `==`) is that name's
            selected = FieldSelector.parse(query.get("fieldSelector")).equals_value("metadata.name")
        except SelectorError:  # an unparsable selector leaves a plain list
            selected = None
        if selected:
            name = selected
    elif not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(verb, path, True, group, version, resource, subresource, name, namespace)


# ---------------------------------------------------------------------- rules

def _path_matches(rule_path: str, path: str) -> bool:
    return rule_path == "*" or rule_path == path or (rule_path.endswith("*") and path.startswith(rule_path[:-1]))


def rule_allows(rule: Mapping[str, Any], attrs: Attributes) -> bool:
    """True if one PolicyRule grants ``attrs`` (rbac/v1 helpers' matching)."""
    verbs = rule.get("verbs") or ()
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    if not attrs.resource_request:
        return any(_path_matches(p, attrs.path) for p in rule.get("nonResourceURLs") or ())
    groups = rule.get("apiGroups") or ()
    if "*" not in groups and attrs.api_group not in groups:
        return False
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    resources = rule.get("resources") or ()
    if not any(r == "*" or r == combined or (attrs.subresource and r == f"*/{attrs.subresource}")
               for r in resources):
        return False
    names = rule.get("resourceNames") or ()
    return not names or attrs.name in names


def _applies_to(subject: Mapping[str, Any], user: User, namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return bool(name == user.name)
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and user.name == f"{SA_PREFIX}{sa_namespace}:{name}"
    return False


def forbidden(user: User, attrs: Attributes, reason: str = "") -> StatusError:
    """kube-apiserver's 403 for a denied request (responsewriters.Forbidden + errors.NewForbidden)."""
    if not attrs.resource_request:
        msg = f'User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        msg = (f'User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" '
               f"{where}")
    if reason:
        msg = f"{msg}: {reason}"
    if not attrs.resource_request or not attrs.resource:
        return errors.forbidden(f"forbidden: {msg}", {})
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: dict[str, Any] = {}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.api_group:
        details["group"] = attrs.api_group
    details["kind"] = attrs.resource
    return errors.forbidden(f"{subject} is forbidden: {msg}", details)


# ---------------------------------------------------------------------- the access layer

@dataclass(frozen=True)
class AuditEntry:
    """One kind of request a user made (the unit ``--observe`` turns into rules)."""

    user: str
    verb: str
    api_group: str
    resource: str
    subresource: str
    namespace: str

    def to_json(self) -> dict[str, str]:
        return {"user": self.user, "verb": self.verb, "apiGroup": self.api_group, "resource": self.resource,
                "subresource": self.subresource, "namespace": self.namespace}


@dataclass(frozen=True)
class Decision:
    """What the authorizer decided, and why (the words of a SubjectAccessReview's status)."""

    allowed: bool
    reason: str = ""
    errors: tuple[str, ...] = ()


def _subject_text(subject: Mapping[str, Any], namespace: str) -> str:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "ServiceAccount":
        return f'ServiceAccount "{name}/{subject.get("namespace") or namespace}"'
    return f'{kind} "{name}"'


class Access:
    """Authentication (through `Authenticator`), RBAC authorization and the audit."""

    def __init__(self, store: VersionedStore, catalog: Catalog, authenticator: Authenticator, *, enforce: bool,
                 audit: bool) -> None:
        self.store = store
        self.catalog = catalog
        self.authenticator = authenticator
        self.enforce = enforce
        self.auditing = audit
        self._audit: set[AuditEntry] = set()

    # ---- authorization -----------------------------------------------------------------------
    def authorize(self, user: User, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason) as the RBAC authorizer decides; reason lists bindings to missing roles."""
        decision = self.decide(user, attrs)
        if decision.allowed:
            return True, ""
        return False, ("RBAC: " + ", ".join(decision.errors)) if decision.errors else ""

    def decide(self, user: User, attrs: Attributes) -> Decision:
        """The RBAC authorizer's decision: the first binding that allows `attrs`, or the errors met."""
        if user.admin:
            return Decision(True)
        problems: list[str] = []
        for binding, role_ref, rules, subject in self._rules_for(user, attrs.namespace, problems):
            if any(rule_allows(r, attrs) for r in rules):
                meta = binding.get("metadata") or {}
                if meta.get("namespace"):
                    where = f'RoleBinding "{meta.get("name")}/{meta.get("namespace")}"'
                else:
                    where = f'ClusterRoleBinding "{meta.get("name")}"'
                reason = (f"RBAC: allowed by {where} of {role_ref.get('kind')} \"{role_ref.get('name')}\" to "
                          f"{_subject_text(subject, meta.get('namespace', ''))}")
                return Decision(True, reason)
        return Decision(False, "", tuple(problems))

    def rules_for(self, user: User, namespace: str) -> tuple[list[Mapping[str, Any]], list[str]]:
        """Every PolicyRule `user` has in `namespace` (cluster-wide ones included), and the errors
        met on the way (bindings to missing roles), for SelfSubjectRulesReview."""
        problems: list[str] = []
        rules = [r for _, _, role_rules, _ in self._rules_for(user, namespace, problems) for r in role_rules]
        return rules, problems

    def _rules_for(self, user: User, namespace: str, problems: list[str]) -> Iterator[
            tuple[Mapping[str, Any], Mapping[str, Any], list[Mapping[str, Any]], Mapping[str, Any]]]:
        """(binding, roleRef, rules, matching subject) for each binding that applies to `user`."""
        cluster_roles = self._objects(RBAC_GROUP, "clusterroles")
        for _, binding in sorted(self._objects(RBAC_GROUP, "clusterrolebindings").items()):
            subject = next((s for s in binding.obj.get("subjects") or () if _applies_to(s, user, "")), None)
            if subject is None:
                continue
            ref = binding.obj.get("roleRef") or {}
            role = cluster_roles.get(("", ref.get("name", "")))
            if role is None:
                problems.append(f'clusterrole.rbac.authorization.k8s.io "{ref.get("name")}" not found')
                continue
            yield binding.obj, ref, list(role.obj.get("rules") or ()), subject
        if not namespace:
            return
        roles = self._objects(RBAC_GROUP, "roles")
        for (ns, _), binding in sorted(self._objects(RBAC_GROUP, "rolebindings").items()):
            if ns != namespace:
                continue
            subject = next((s for s in binding.obj.get("subjects") or () if _applies_to(s, user, ns)), None)
            if subject is None:
                continue
            ref = binding.obj.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                role = cluster_roles.get(("", ref.get("name", "")))
                what = f'clusterrole.rbac.authorization.k8s.io "{ref.get("name")}" not found'
            else:
                role = roles.get((ns, ref.get("name", "")))
                what = f'role.rbac.authorization.k8s.io "{ref.get("name")}" not found'
            if role is None:
                problems.append(what)
                continue
            yield binding.obj, ref, list(role.obj.get("rules") or ()), subject

    def _objects(self, group: str, resource: str) -> dict[tuple[str, str], Any]:
        info = self.catalog.lookup(group, "v1", resource)
        if info is None:
            return {}
        return self.store.bucket(info.storage_key).objects

    # ---- the request hook --------------------------------------------------------------------
    def authenticate(self, request: web.Request) -> User:
        """The caller of `request` (401 Status when its credentials are not valid)."""
        peer = None
        transport = request.transport
        if transport is not None:
            cert = transport.get_extra_info("peercert")
            peer = cert.get("subject") if isinstance(cert, dict) else None
        try:
            return self.authenticator.request(request.headers.get("Authorization", ""), peer)
        except AuthenticationError:
            raise errors.unauthorized() from None

    def check(self, request: web.Request) -> None:
        """Authenticate, audit and authorize ``request``: a `StatusError` (401/403) when refused.
        The caller is left in `authn.CURRENT_USER` (set in the request's own task)."""
        user = self.authenticate(request)
        CURRENT_USER.set(user)
        if not (self.auditing or (self.enforce and not user.admin)):
            return  # the admin's requests cost one dict lookup
        attrs = request_attributes(request.method, request.path, request.query)
        if self.auditing and attrs.resource_request and attrs.resource:
            self._audit.add(AuditEntry(user.name, attrs.verb, attrs.api_group, attrs.resource, attrs.subresource,
                                       attrs.namespace))
        if self.enforce:
            allowed, reason = self.authorize(user, attrs)
            if not allowed:
                raise forbidden(user, attrs, reason)

    # ---- audit -------------------------------------------------------------------------------
    def audit(self, user: str | None = None) -> list[AuditEntry]:
        """The kinds of requests made (by ``user``, or by everyone), sorted."""
        return sorted((e for e in self._audit if user is None or e.user == user),
                      key=lambda e: (e.user, e.api_group, e.resource, e.subresource, e.namespace, e.verb))

    def write_audit(self, path: str | os.PathLike[str]) -> None:
        """Append the audit to ``path`` as JSON lines (one entry a line)."""
        with open(path, "a", encoding="utf-8") as f:
            for e in self.audit():
                f.write(json.dumps(e.to_json()) + "\n")


def read_audit(lines: Iterable[str]) -> list[AuditEntry]:
    """Entries written by `Access.write_audit` (blank lines skipped)."""
    out = []
    for line in lines:
        if line.strip():
            d = json.loads(line)
            out.append(AuditEntry(d["user"], d["verb"], d["apiGroup"], d["resource"], d["subresource"],
                                  d["namespace"]))
    return out
