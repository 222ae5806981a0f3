"""Admission webhooks as kube-apiserver 1.24 calls them (MutatingAdmissionWebhook, ValidatingAdmissionWebhook).

The configurations are read from the store on every request (the real server's informer, without
its delay). For each write the registry asks `mutate` (after decoding and defaulting, before the
object gets its uid, generation or generated name) and `validate` (after the kind's validation,
just before storing):

- which webhooks: configurations sorted by name, their webhooks in order; a webhook is called when
  a rule matches (operations, groups, versions, resources and subresources with `*`, scope), its
  `namespaceSelector` matches the namespace's labels (the object's own for a Namespace; always for
  cluster-scoped objects) and its `objectSelector` the new or the old object's labels. With
  `matchPolicy: Equivalent` a rule for another version of the same resource matches too, and the
  webhook sees the objects converted to its version (`kind`/`resource` say so, `requestKind` the
  request's). The webhook configurations themselves are never sent to webhooks;
- mutating webhooks are called one after another, each seeing the previous one's patch (a JSON
  patch, applied, then decoded again: pruned and defaulted); `reinvocationPolicy: IfNeeded`
  webhooks run once more when a later one changed the object. Validating webhooks are called
  concurrently; the first denial wins;
- a dry run is refused (400) by a webhook whose `sideEffects` is not None/NoneOnDryRun;
- a webhook that cannot be called, times out (`timeoutSeconds`, default 10) or answers badly is
  skipped under `failurePolicy: Ignore` and is a 500 `failed calling webhook` under `Fail` (the
  default); a denial is the webhook's status (code at least 400) with
  `admission webhook "<name>" denied the request: <message>`;
- warnings of every webhook are returned to the client as `Warning` headers.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubeloop.meta import LabelSelector

from . import apiwarnings, errors
from .catalog import Catalog
from .errors import StatusError
from .patch import json_patch
from .resources import ServedResource
from .shapes import Obj, copy_json
from .storage import VersionedStore
from .webhookcall import CallError, WebhookCaller

__all__ = ["Admission", "AdmissionCall", "Caller"]

MUTATING = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING = "admissionregistration.k8s.io/validatingwebhookconfigurations"
NAMESPACES = "/namespaces"
DEFAULT_TIMEOUT = 10

#: converts an object between two served versions of one resource (the registry's conversion)
Convert = Callable[[Obj, ServedResource, ServedResource], Awaitable[Obj]]


@dataclass(frozen=True)
class Caller:
    """Who makes the request, as an AdmissionReview's `userInfo` says."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""

    def user_info(self) -> Obj:
        out: Obj = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        return out


@dataclass
class AdmissionCall:
    """One request's admission attributes (the object in the request's version)."""

    info: ServedResource
    operation: str
    namespace: str
    name: str
    obj: Obj | None
    old: Obj | None
    caller: Caller
    dry_run: bool
    subresource: str = ""
    options: Obj = field(default_factory=dict)


@dataclass
class _Hook:
    configuration: str
    spec: Mapping[str, Any]
    mutating: bool

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")


class Admission:
    """The admission webhooks of one emulator."""

    def __init__(self, store: VersionedStore, catalog: Catalog, caller: WebhookCaller, convert: Convert) -> None:
        self.store = store
        self.catalog = catalog
        self.caller = caller
        self.convert = convert
        #: AdmissionReviews sent, per webhook name
        self.calls: dict[str, int] = {}

    def _hooks(self, bucket_name: str, mutating: bool) -> list[_Hook]:
        bucket = self.store.buckets.get(bucket_name)
        if bucket is None or not bucket.objects:
            return []
        out: list[_Hook] = []
        for st in sorted(bucket.objects.values(), key=lambda s: str(s.obj["metadata"]["name"])):
            for spec in st.obj.get("webhooks") or []:
                if isinstance(spec, Mapping):
                    out.append(_Hook(str(st.obj["metadata"]["name"]), spec, mutating))
        return out

    def configured(self) -> bool:
        """Whether any webhook configuration exists (the common case answers False at once)."""
        return any(bool(b.objects) for name in (MUTATING, VALIDATING)
                   if (b := self.store.buckets.get(name)) is not None)

    # -- matching ------------------------------------------------------------------------------
    def _match(self, hook: _Hook, call: AdmissionCall) -> ServedResource | None:
        """The served resource (version) the webhook is called with, or None when it is not called."""
        info = call.info
        if info.group == "admissionregistration.k8s.io" and info.resource in (
                "validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
            return None
        if not self._namespace_matches(hook, call) or not self._object_matches(hook, call):
            return None
        rules = [r for r in hook.spec.get("rules") or [] if isinstance(r, Mapping)]
        if any(_rule_matches(r, call, info) for r in rules):
            return info
        if (hook.spec.get("matchPolicy") or "Equivalent") == "Equivalent":
            for other in sorted(self.catalog.sharing_storage(info), key=lambda i: (i.group, i.version)):
                if other is not info and other.resource == info.resource and \
                        any(_rule_matches(r, call, other) for r in rules):
                    return other
        return None

    def _namespace_matches(self, hook: _Hook, call: AdmissionCall) -> bool:
        selector = hook.spec.get("namespaceSelector") or {}
        is_namespace = call.info.group == "" and call.info.resource == "namespaces"
        if (not call.namespace and not is_namespace) or not selector:
            return True
        if is_namespace and not call.subresource and call.operation in ("CREATE", "UPDATE"):
            labels = ((call.obj or {}).get("metadata") or {}).get("labels") or {}
        else:
            ns = self.store.bucket(NAMESPACES).objects.get(("", call.namespace or call.name))
            if ns is None:
                raise errors.not_found("namespaces", call.namespace or call.name)
            labels = ns.obj["metadata"].get("labels") or {}
        return _selector(selector).matches(labels)

    @staticmethod
    def _object_matches(hook: _Hook, call: AdmissionCall) -> bool:
        selector = hook.spec.get("objectSelector") or {}
        if not selector:
            return True
        parsed = _selector(selector)
        return any(o is not None and parsed.matches((o.get("metadata") or {}).get("labels") or {})
                   for o in (call.obj, call.old))

    # -- calling -------------------------------------------------------------------------------
    async def mutate(self, call: AdmissionCall) -> Obj | None:
        """Run the mutating webhooks; the changed object (request version), or None when unchanged."""
        hooks = [(h, v) for h in self._hooks(MUTATING, True) if (v := self._match(h, call)) is not None]
        if not hooks:
            return None
        current = call.obj
        changed = False
        invoked: list[tuple[_Hook, ServedResource]] = []
        for round_ in (0, 1):
            todo = hooks if round_ == 0 else [
                (h, v) for h, v in invoked if h.spec.get("reinvocationPolicy") == "IfNeeded"]
            if round_ == 1 and not (changed and todo):
                break
            changed_this_round = False
            for hook, version in todo:
                versioned = await self._as(current, call.info, version)
                old = await self._as(call.old, call.info, version)
                answer = await self._call(hook, call, version, versioned, old)
                invoked.append((hook, version))
                if answer is None:
                    continue
                patch = answer.get("patch")
                if not patch:
                    continue
                if versioned is None:
                    raise errors.internal_error(f'admission webhook "{hook.name}" attempted to modify the object, '
                                                "which is not supported for this operation")
                try:
                    ops = orjson.loads(base64.b64decode(str(patch)))
                    patched = json_patch(versioned, ops)
                except (ValueError, TypeError, StatusError) as e:
                    raise errors.internal_error(str(getattr(e, "message", e))) from None
                if not isinstance(patched, dict):
                    raise errors.internal_error("the patched object is not an object")
                version.strategy.decode(version, patched)
                if patched != versioned:
                    changed = changed_this_round = True
                current = await self._as(patched, version, call.info)
            if round_ == 1 or not changed_this_round:
                break
        return current if changed else None

    async def validate(self, call: AdmissionCall) -> None:
        """Run the validating webhooks (concurrently); raises the first denial or failure."""
        hooks = [(h, v) for h in self._hooks(VALIDATING, False) if (v := self._match(h, call)) is not None]
        if not hooks:
            return
        cache: dict[int, tuple[Obj | None, Obj | None]] = {}
        for _hook, version in hooks:
            if id(version) not in cache:
                cache[id(version)] = (await self._as(call.obj, call.info, version),
                                      await self._as(call.old, call.info, version))
        results = await asyncio.gather(*(self._call(h, call, v, *cache[id(v)]) for h, v in hooks),
                                       return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r

    async def _as(self, obj: Obj | None, source: ServedResource, target: ServedResource) -> Obj | None:
        if obj is None or source is target:
            return obj
        return await self.convert(obj, source, target)

    async def _call(self, hook: _Hook, call: AdmissionCall, version: ServedResource, obj: Obj | None,
                    old: Obj | None) -> Mapping[str, Any] | None:
        """Call one webhook: its response (allowed), None (failed open); raises a denial or failure."""
        spec = hook.spec
        if call.dry_run and spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        uid = str(uuid.uuid4())
        info = call.info
        optional = {"subResource": call.subresource, "requestSubResource": call.subresource, "name": call.name,
                    "namespace": call.namespace}  # left out when empty, as Go's omitempty does
        request: Obj = {
            "uid": uid,
            "kind": {"group": version.group, "version": version.version, "kind": version.kind},
            "resource": {"group": version.group, "version": version.version, "resource": version.resource},
            "requestKind": {"group": info.group, "version": info.version, "kind": info.kind},
            "requestResource": {"group": info.group, "version": info.version, "resource": info.resource},
            **{k: v for k, v in optional.items() if v},
            "operation": call.operation, "userInfo": call.caller.user_info(), "object": obj, "oldObject": old,
            "dryRun": call.dry_run, "options": call.options,
        }
        review = {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": request}
        self.calls[hook.name] = self.calls.get(hook.name, 0) + 1
        timeout = float(spec.get("timeoutSeconds") or DEFAULT_TIMEOUT)
        try:
            try:
                answer = await self.caller.post(spec.get("clientConfig") or {}, review, timeout)
            except CallError as e:
                raise CallError(f"failed to call webhook: {e}") from None
            response = _verify(answer, uid, hook.mutating)
        except CallError as e:
            if (spec.get("failurePolicy") or "Fail") == "Ignore":
                return None
            text = f'failed calling webhook "{hook.name}": {e}'
            raise StatusError(500, "InternalError", f"Internal error occurred: {text}",
                              {"causes": [{"message": text}]}) from None
        apiwarnings.add(*(str(w) for w in response.get("warnings") or []))
        if not response.get("allowed"):
            raise _denied(hook.name, response.get("status"))
        return response


def _verify(answer: Any, uid: str, mutating: bool) -> Mapping[str, Any]:
    """`VerifyAdmissionResponse`: the response of an AdmissionReview v1 answer, or `CallError`."""
    if not isinstance(answer, dict):
        raise CallError("received invalid webhook response: webhook response was absent")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise CallError("received invalid webhook response: webhook response was absent")
    if response.get("uid") != uid:
        raise CallError(f'received invalid webhook response: expected response.uid="{uid}", '
                        f'got "{response.get("uid", "")}"')
    if answer.get("apiVersion") != "admission.k8s.io/v1" or answer.get("kind") != "AdmissionReview":
        raise CallError("received invalid webhook response: expected webhook response of admission.k8s.io/v1, "
                        f"Kind=AdmissionReview, got {answer.get('apiVersion', '')}, Kind={answer.get('kind', '')}")
    patch, patch_type = response.get("patch"), response.get("patchType")
    if mutating:
        if patch and patch_type is None:
            raise CallError("received invalid webhook response: webhook returned response.patch but not "
                            "response.patchType")
        if not patch and patch_type is not None:
            raise CallError("received invalid webhook response: webhook returned response.patchType but not "
                            "response.patch")
        if patch_type is not None and patch_type != "JSONPatch":
            raise CallError(f'unsupported patch type "{patch_type}"')
    elif patch:
        raise CallError("received invalid webhook response: validating webhook may not return response.patch")
    elif patch_type is not None:
        raise CallError("received invalid webhook response: validating webhook may not return response.patchType")
    return response


def _denied(name: str, status: Any) -> StatusError:
    """`ToStatusErr`: the webhook's status, code at least 400, message prefixed with who denied it."""
    status = status if isinstance(status, dict) else {}
    code = int(status.get("code") or 0)
    code = max(code, 400)
    denied_by = f'admission webhook "{name}" denied the request'
    if status.get("message"):
        message = f"{denied_by}: {status['message']}"
    elif status.get("reason"):
        message = f"{denied_by}: {status['reason']}"
    else:
        message = f"{denied_by} without explanation"
    details = status.get("details") if isinstance(status.get("details"), dict) else None
    return StatusError(code, str(status.get("reason") or ""), message, copy_json(details) if details else None)


def _rule_matches(rule: Mapping[str, Any], call: AdmissionCall, info: ServedResource) -> bool:
    scope = rule.get("scope") or "*"
    is_namespace = info.group == "" and info.resource == "namespaces"
    if scope == "Namespaced" and (is_namespace or not call.namespace):
        return False
    if scope == "Cluster" and not (is_namespace or not call.namespace):
        return False
    ops = rule.get("operations") or []
    if "*" not in ops and call.operation not in ops:
        return False
    if not _any(rule.get("apiGroups"), info.group) or not _any(rule.get("apiVersions"), info.version):
        return False
    for res in rule.get("resources") or []:
        name, _, sub = str(res).partition("/")
        if name in ("*", info.resource) and sub in ("*", call.subresource):
            return True
    return False


def _any(items: Any, value: str) -> bool:
    return any(i in ("*", value) for i in items or [])


def _selector(spec: Mapping[str, Any]) -> LabelSelector:
    try:
        return LabelSelector.from_dict(spec)
    except ValueError as e:
        raise errors.internal_error(str(e)) from None
