"""Service-account tokens, RBAC authorization and a request audit (opt-in: ``APIServer(rbac=True)``).

Why: a test should prove that the Role an operator ships is enough, and catch a missing rule
before a real cluster does. So the emulator authorizes service-account tokens the way
kube-apiserver's RBAC authorizer does, with the same 403 ``Forbidden`` Status:

- a token is minted for an existing ServiceAccount through the TokenRequest subresource
  (``POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token``) or `APIServer.service_account_token`;
  it authenticates as ``system:serviceaccount:<ns>:<name>`` with the groups
  ``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and ``system:authenticated``, and
  stops working (401) when the ServiceAccount is deleted;
- request attributes come from the path alone, as kube-apiserver's RequestInfoFactory does
  (verb from the method, ``list``/``watch``/``deletecollection`` for collections, subresource,
  name, namespace), so a forbidden request is refused before the resource is looked up;
- ClusterRoleBindings grant everywhere, RoleBindings in their namespace (to a Role there or a
  ClusterRole); rules match verbs, apiGroups, resources (``x/status``, ``*``, ``*/status``),
  resourceNames and nonResourceURLs (``*`` suffix); a binding to a missing role adds the real
  server's ``RBAC: ... not found`` reason. Aggregated ClusterRoles are not computed;
- what the default ClusterRoles ``system:discovery``/``system:public-info-viewer`` grant every
  authenticated user (discovery, ``/version``, ``/healthz``...) is built in, not stored.

The admin (the server's ``token``; when it has none, any request without a bearer token) keeps
full access. The audit records
each (user, verb, group, resource, subresource, namespace) used, for ``kubeloop manifests --observe``.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from kubeloop.meta import FieldSelector, SelectorError

from . import errors
from .catalog import Catalog
from .errors import StatusError
from .storage import VersionedStore

RBAC_GROUP = "rbac.authorization.k8s.io"
ADMIN_USER = "kubeloop:admin"
SA_PREFIX = "system:serviceaccount:"
TOKEN_PREFIX = "kubeloop-sa."
#: where `APIServer` appends its audit when it stops (read by ``kubeloop manifests --observe``)
AUDIT_FILE_ENV = "KUBELOOP_AUDIT_FILE"

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
#: what system:discovery and system:public-info-viewer give every authenticated user
_PUBLIC_PATHS = ("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version", "/version/",
                 "/openapi", "/openapi/*")


@dataclass(frozen=True)
class User:
    """An authenticated caller."""

    name: str
    groups: tuple[str, ...] = ()

    @property
    def admin(self) -> bool:
        return self.name == ADMIN_USER


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


class Access:
    """Authentication (admin and service-account tokens), RBAC authorization and the audit."""

    def __init__(self, store: VersionedStore, catalog: Catalog, admin_token: str | None, *, enforce: bool,
                 audit: bool) -> None:
        self.store = store
        self.catalog = catalog
        self.admin_token = admin_token
        self.enforce = enforce
        self.auditing = audit
        self._tokens: dict[str, tuple[str, str]] = {}  # token -> (namespace, service account)
        self._audit: set[AuditEntry] = set()

    # ---- tokens ------------------------------------------------------------------------------
    def mint(self, namespace: str, name: str) -> str:
        """A token for ServiceAccount ``namespace/name`` (404 Status when it does not exist)."""
        if self._objects("", "serviceaccounts").get((namespace, name)) is None:
            raise errors.not_found("serviceaccounts", name)
        token = TOKEN_PREFIX + secrets.token_urlsafe(24)
        self._tokens[token] = (namespace, name)
        return token

    def authenticate(self, header: str) -> User:
        """The caller of a request with this Authorization header; 401 Status when unknown."""
        token = header[7:] if header.startswith("Bearer ") else ""
        sa = self._tokens.get(token)
        if sa is not None:
            ns, name = sa
            if self._objects("", "serviceaccounts").get((ns, name)) is None:
                raise errors.unauthorized()
            return User(f"{SA_PREFIX}{ns}:{name}",
                        ("system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"))
        if token == self.admin_token or (self.admin_token is None and not (token and self.enforce)):
            # with RBAC on, an unknown token is refused even when the admin needs none: a test that
            # meant to act as a service account must not silently act as the admin
            return User(ADMIN_USER, ("system:masters", "system:authenticated"))
        raise errors.unauthorized()

    # ---- authorization -----------------------------------------------------------------------
    def authorize(self, user: User, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason) as the RBAC authorizer decides; reason lists bindings to missing roles."""
        if user.admin:
            return True, ""
        if not attrs.resource_request and any(_path_matches(p, attrs.path) for p in _PUBLIC_PATHS) \
                and attrs.verb == "get":
            return True, ""
        problems: list[str] = []
        for rules in self._rules_for(user, attrs.namespace, problems):
            if any(rule_allows(r, attrs) for r in rules):
                return True, ""
        return False, ("RBAC: " + ", ".join(problems)) if problems else ""

    def _rules_for(self, user: User, namespace: str, problems: list[str]) -> Iterator[list[Mapping[str, Any]]]:
        cluster_roles = self._objects(RBAC_GROUP, "clusterroles")
        for binding in self._objects(RBAC_GROUP, "clusterrolebindings").values():
            if any(_applies_to(s, user, "") for s in binding.obj.get("subjects") or ()):
                ref = binding.obj.get("roleRef") or {}
                role = cluster_roles.get(("", ref.get("name", "")))
                if role is None:
                    problems.append(f'clusterrole.rbac.authorization.k8s.io "{ref.get("name")}" not found')
                    continue
                yield list(role.obj.get("rules") or ())
        if not namespace:
            return
        roles = self._objects(RBAC_GROUP, "roles")
        for (ns, _), binding in list(self._objects(RBAC_GROUP, "rolebindings").items()):
            if ns != namespace or not any(_applies_to(s, user, ns) for s in binding.obj.get("subjects") or ()):
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
            yield list(role.obj.get("rules") or ())

    def _objects(self, group: str, resource: str) -> dict[tuple[str, str], Any]:
        info = self.catalog.lookup(group, "v1", resource)
        if info is None:
            return {}
        return self.store.bucket(info.storage_key).objects

    # ---- the request hook --------------------------------------------------------------------
    def check(self, request: web.Request) -> web.Response | None:
        """Authenticate, audit and authorize ``request``: a `StatusError` (401/403) when refused, a
        response when this layer serves it (TokenRequest), None to let the API handle it."""
        user = self.authenticate(request.headers.get("Authorization", ""))
        if not (self.enforce or self.auditing or request.path.endswith("/token")):
            return None  # the common case costs one dict lookup
        attrs = request_attributes(request.method, request.path, request.query)
        if self.auditing and attrs.resource_request and attrs.resource:
            self._audit.add(AuditEntry(user.name, attrs.verb, attrs.api_group, attrs.resource, attrs.subresource,
                                       attrs.namespace))
        if self.enforce:
            allowed, reason = self.authorize(user, attrs)
            if not allowed:
                raise forbidden(user, attrs, reason)
        if (attrs.verb == "create" and attrs.api_group == "" and attrs.resource == "serviceaccounts"
                and attrs.subresource == "token" and attrs.namespace):
            return self._token_request(attrs.namespace, attrs.name)
        return None

    def _token_request(self, namespace: str, name: str) -> web.Response:
        token = self.mint(namespace, name)
        now = time.time()
        body = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
                "spec": {"audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": 3600,
                         "boundObjectRef": None},
                "status": {"token": token, "expirationTimestamp": time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 3600))}}
        return web.json_response(body, status=201)

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
