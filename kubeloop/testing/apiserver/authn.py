"""Who is calling: the authenticators kube-apiserver chains, as a cluster has them.

- **x509 client certificates** signed by the emulator's CA (served over TLS): the subject's
  common name is the user, each organization a group, as kubeadm and kind issue them
  (`APIServer.client_certificate(user, groups)` mints one; the kubeconfig of a TLS emulator without
  a token carries one for the admin, `CN=kubernetes-admin, O=system:masters`);
- **bearer tokens**: the server's admin token and static tokens (`APIServer(users={token: User})`,
  kube-apiserver's `--token-auth-file`);
- **service-account tokens**: JWTs minted by the TokenRequest subresource, bound to the
  ServiceAccount's uid (and a Pod or Secret when asked), with an audience and an expiry; one
  stops working when its ServiceAccount (or bound object) is gone, is replaced or it expires.

A request with none of these is `system:anonymous` (group `system:unauthenticated`), which RBAC
lets read only the public paths; an emulator started without any token treats it as the admin
instead, so a test needs no credentials. Every authenticated user is in `system:authenticated`;
a user in `system:masters` is allowed everything, as kube-apiserver's privileged group is.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

ADMIN_USER = "kubeloop:admin"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
SA_PREFIX = "system:serviceaccount:"
#: the issuer and default audience of service-account tokens (kube-apiserver's
#: `--service-account-issuer` / `--api-audiences` as the recorded control plane sets them)
ISSUER = "https://kubernetes.default.svc"
API_AUDIENCES = (ISSUER,)
INVALID_TOKEN = "invalid bearer token"


@dataclass(frozen=True)
class User:
    """An authenticated caller (kube-apiserver's `user.Info`)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def admin(self) -> bool:
        """In `system:masters`: every request is allowed, RBAC is not asked."""
        return MASTERS in self.groups

    def to_json(self) -> dict[str, Any]:
        """The `UserInfo` a TokenReview answers with."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


ADMIN = User(ADMIN_USER, groups=(MASTERS, AUTHENTICATED))
ANONYMOUS = User("system:anonymous", groups=("system:unauthenticated",))

#: the caller of the request being served (set by the access layer; read by kinds that record
#: the requester, as a CertificateSigningRequest's `spec.username` does)
CURRENT_USER: ContextVar[User | None] = ContextVar("kubeloop_emulator_user", default=None)


def authenticated(user: User) -> User:
    """`user` with `system:authenticated` added, as the authenticator chain adds it."""
    if AUTHENTICATED in user.groups or user.name == ANONYMOUS.name:
        return user
    return User(user.name, user.uid, (*user.groups, AUTHENTICATED), user.extra)


class AuthenticationError(Exception):
    """A credential was presented and is not valid (401); the message is the authenticators' error."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


#: reads a stored object: (group, resource, namespace, name) -> its JSON, or None
Lookup = Callable[[str, str, str, str], Mapping[str, Any] | None]


class Authenticator:
    """Static tokens, service-account JWTs and client certificates, in kube-apiserver's order."""

    def __init__(self, lookup: Lookup, admin_token: str | None, users: Mapping[str, User] | None = None) -> None:
        self._lookup = lookup
        self.admin_token = admin_token
        self._static: dict[str, User] = {t: authenticated(u) for t, u in (users or {}).items()}
        if admin_token is not None and admin_token not in self._static:
            self._static[admin_token] = ADMIN
        self._key = secrets.token_bytes(32)
        #: anonymous requests are the admin when the server asks for no credentials at all
        self.anonymous_is_admin = admin_token is None and not users

    def add_token(self, token: str, user: User) -> None:
        self._static[token] = authenticated(user)

    # ---- service-account tokens -----------------------------------------------------------------
    def mint(self, namespace: str, name: str, *, audiences: tuple[str, ...] = API_AUDIENCES,
             expiration: int = 3600, bound: Mapping[str, Any] | None = None) -> tuple[str, int]:
        """A signed token for ServiceAccount `namespace/name` (which must exist); returns it and
        its expiry (epoch seconds). `bound` is the TokenRequest's `boundObjectRef` with the uid."""
        sa = self._lookup("", "serviceaccounts", namespace, name)
        if sa is None:
            raise LookupError(name)
        now = int(time.time())
        private: dict[str, Any] = {"namespace": namespace, "serviceaccount": {
            "name": name, "uid": (sa.get("metadata") or {}).get("uid", "")}}
        if bound:
            private[str(bound["kind"]).lower()] = {"name": bound["name"], "uid": bound["uid"]}
        claims = {"aud": list(audiences), "exp": now + expiration, "iat": now, "iss": ISSUER,
                  "kubernetes.io": private, "nbf": now, "sub": f"{SA_PREFIX}{namespace}:{name}"}
        header = _b64(json.dumps({"alg": "HS256", "kid": _b64(hashlib.sha256(self._key).digest()[:12])},
                                 separators=(",", ":")).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signature = hmac.new(self._key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{_b64(signature)}", now + expiration

    def _service_account(self, token: str, audiences: tuple[str, ...]) -> User | None:
        """The user of a service-account token; None when it is not one of ours; AuthenticationError
        when it is one but no longer valid."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            expected = hmac.new(self._key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
            if not hmac.compare_digest(expected, _unb64(parts[2])):
                return None
            claims = json.loads(_unb64(parts[1]))
        except (ValueError, TypeError):
            return None
        if claims.get("iss") != ISSUER:
            return None
        token_aud = [str(a) for a in claims.get("aud") or []]
        if not any(a in token_aud for a in audiences):
            raise AuthenticationError(f"token audiences {_go_strings(token_aud)} is invalid for the target "
                                      f"audiences {_go_strings(audiences)}")
        if int(claims.get("exp") or 0) < time.time():
            raise AuthenticationError("service account token has expired")
        private = claims.get("kubernetes.io") or {}
        namespace = str(private.get("namespace") or "")
        ref = private.get("serviceaccount") or {}
        sa = self._lookup("", "serviceaccounts", namespace, str(ref.get("name") or ""))
        if sa is None:
            raise AuthenticationError(f'serviceaccounts "{ref.get("name")}" not found')
        uid = (sa.get("metadata") or {}).get("uid", "")
        if uid != ref.get("uid"):
            raise AuthenticationError(f"service account UID ({uid}) does not match claim ({ref.get('uid')})")
        extra: dict[str, tuple[str, ...]] = {}
        for kind, resource in (("pod", "pods"), ("secret", "secrets")):
            bound = private.get(kind)
            if not bound:
                continue
            obj = self._lookup("", resource, namespace, str(bound.get("name") or ""))
            if obj is None or (obj.get("metadata") or {}).get("uid") != bound.get("uid"):
                raise AuthenticationError("service account token has been invalidated")
            if kind == "pod":
                extra = {"authentication.kubernetes.io/pod-name": (str(bound["name"]),),
                         "authentication.kubernetes.io/pod-uid": (str(bound["uid"]),)}
        return User(f"{SA_PREFIX}{namespace}:{ref.get('name')}", uid,
                    ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED), extra)

    # ---- the chain --------------------------------------------------------------------------------
    def token(self, token: str, audiences: tuple[str, ...] = API_AUDIENCES) -> tuple[User, tuple[str, ...]]:
        """The user of a bearer token and the audiences it is good for; AuthenticationError with
        kube-apiserver's message otherwise."""
        static = self._static.get(token)
        if static is not None:
            return static, API_AUDIENCES
        try:
            user = self._service_account(token, audiences)
        except AuthenticationError as e:
            raise AuthenticationError(f"[{INVALID_TOKEN}, {e}]") from None
        if user is None:
            raise AuthenticationError(INVALID_TOKEN)
        return user, tuple(a for a in audiences)

    def request(self, authorization: str, peer_subject: Any) -> User:
        """The caller of a request: its bearer token, else its client certificate, else anonymous
        (the admin when the server asks for no credentials)."""
        if authorization.startswith("Bearer ") or authorization.startswith("bearer "):
            return self.token(authorization[7:].strip())[0]
        if peer_subject:
            user = user_of_certificate(peer_subject)
            if user is not None:
                return user
        return ADMIN if self.anonymous_is_admin else ANONYMOUS


def _go_strings(values: Any) -> str:
    """A []string as Go's `%q` prints it: `["a" "b"]`."""
    return "[" + " ".join(json.dumps(str(v)) for v in values) + "]"


def user_of_certificate(subject: Any) -> User | None:
    """CN -> user, O -> groups, from `ssl`'s `getpeercert()["subject"]`."""
    name, groups = "", []
    for rdn in subject or ():
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    if not name:
        return None
    return authenticated(User(name, groups=tuple(groups)))
