"""Admission webhooks: a typed Python function plus what the API server needs to know to call it.

    @webhooks.validating(Widget)
    def names(req: AdmissionRequest[Widget]) -> Verdict:
        return deny("...") if req.name.startswith("forbidden-") else allow()

An `AdmissionWebhook` holds the handler and derives its entry in a Validating/Mutating
WebhookConfiguration: rules from the model (or a `group/version/resource` string),
`objectSelector`/`namespaceSelector` from the handler's label and namespace filters, and stated
defaults (below). `answer()` runs the handler on one AdmissionReview request and returns what to
send back: it never raises for the handler's sake. A handler that raises, times out, or cannot
read the object as its model is answered for, per its failure policy, logged and counted.

Defaults (as kubebuilder's generated webhooks, with `sideEffects` stated instead of required):

| field | default | why |
|---|---|---|
| `failurePolicy` | `Fail` | a webhook that cannot answer blocks writes rather than letting invalid objects in |
| `sideEffects` | `None` | handlers are pure functions of the request; they are then called on dry runs too |
| `timeoutSeconds` | `10` | the API server's default; the handler gets this minus a margin (see `HANDLER_MARGIN`) |
| `matchPolicy` | `Equivalent` | a request in another version of the resource is converted to the handler's version |
| `reinvocationPolicy` (mutating) | `Never` | |
| `admissionReviewVersions` | `["v1"]` | |
| operations | `CREATE`, `UPDATE` | |
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kubeloop.meta import LabelSelector, LabelSelectorLike, as_label_selector, is_dns1123_subdomain

from ._patch import diff, rebase
from ._review import (
    OPERATIONS,
    AdmissionRequest,
    Operation,
    ReviewError,
    Verdict,
    allow,
    deny,
    request_from_review,
)

__all__ = ["AdmissionWebhook", "Answer", "ClientConfig", "FailurePolicy", "MatchPolicy", "SideEffects",
           "label_selector_dict"]

log = logging.getLogger("kubeloop.webhooks")

FailurePolicy = Literal["Fail", "Ignore"]
#: admissionregistration.k8s.io/v1 allows only these two (Some and Unknown were v1beta1's)
SideEffects = Literal["None", "NoneOnDryRun"]
MatchPolicy = Literal["Exact", "Equivalent"]
Scope = Literal["*", "Namespaced", "Cluster"]
#: the namespace label every namespace carries (kube-apiserver sets it): namespaces= filters use it
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: the handler answers this long before the API server's own timeout, so that its answer (and not
#: the API server's "context deadline exceeded") reaches the client: min(1 s, a quarter of it)
HANDLER_MARGIN = 1.0

Handler = Callable[[AdmissionRequest[Any]], Any]
_RESOURCE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


@dataclass(frozen=True)
class ClientConfig:
    """How the API server reaches the webhook server: a base `url` (`https://127.0.0.1:9443`, the
    dev loop) or a Service (`service_namespace`/`service_name`/`service_port`, in a cluster), and the
    CA bundle that signed its serving certificate (PEM)."""

    url: str | None = None
    service_namespace: str = ""
    service_name: str = ""
    service_port: int = 443
    ca_bundle: bytes = b""

    def __post_init__(self) -> None:
        if (self.url is None) == (not self.service_name):
            raise ValueError("ClientConfig needs either url= or service_name= (with service_namespace=)")
        if self.url is not None and not self.url.startswith("https://"):
            raise ValueError(f"the API server calls webhooks over HTTPS only, not {self.url!r}")

    def for_path(self, path: str) -> dict[str, Any]:
        """The `clientConfig` of the webhook at `path` (a WebhookClientConfig as JSON)."""
        import base64

        out: dict[str, Any]
        if self.url is not None:
            out = {"url": self.url.rstrip("/") + path}
        else:
            out = {"service": {"namespace": self.service_namespace, "name": self.service_name,
                               "port": self.service_port, "path": path}}
        if self.ca_bundle:
            out["caBundle"] = base64.b64encode(self.ca_bundle).decode()
        return out

    def with_ca(self, ca_bundle: bytes) -> ClientConfig:
        from dataclasses import replace

        return replace(self, ca_bundle=ca_bundle)


@dataclass(frozen=True)
class Answer:
    """What to send back for one AdmissionReview, and why (for logs and metrics)."""

    verdict: Verdict
    patch: list[dict[str, Any]] | None = None
    warnings: tuple[str, ...] = ()
    #: "", or why the handler's own answer is missing: "exception", "timeout", "invalid_object"
    failure: str = ""


def label_selector_dict(selector: LabelSelectorLike | LabelSelector) -> dict[str, Any]:
    """A label selector as the API's `LabelSelector` object (matchLabels / matchExpressions)."""
    parsed = as_label_selector(selector)
    match_labels: dict[str, str] = {}
    expressions: list[dict[str, Any]] = []
    ops = {"in": "In", "notin": "NotIn", "!=": "NotIn", "exists": "Exists", "!": "DoesNotExist"}
    for r in parsed.requirements:
        if r.operator == "=" and r.key not in match_labels:
            match_labels[r.key] = r.values[0]
        elif r.operator == "=":
            expressions.append({"key": r.key, "operator": "In", "values": list(r.values)})
        elif r.operator in ops:
            expr: dict[str, Any] = {"key": r.key, "operator": ops[r.operator]}
            if r.values:
                expr["values"] = list(r.values)
            expressions.append(expr)
        else:
            raise ValueError(f"label selector {str(parsed)!r}: {r.operator!r} has no LabelSelector form "
                             "(use =, !=, in, notin, exists or !)")
    out: dict[str, Any] = {}
    if match_labels:
        out["matchLabels"] = match_labels
    if expressions:
        out["matchExpressions"] = expressions
    return out


def _target(target: Any) -> tuple[Any, str, str, str, Scope]:
    """(model or None, group, version, resource, scope) of a CustomResource class or a
    `group/version/resource` string."""
    resource_info = getattr(target, "__resource__", None)
    if resource_info is not None and isinstance(target, type):
        info = resource_info
        return target, info.group, info.version, info.plural, info.scope
    if not isinstance(target, str):
        raise TypeError(f"a webhook is for a CustomResource class or a 'group/version/resource' string "
                        f"(e.g. 'apps/v1/deployments', 'v1/configmaps'), not {target!r}")
    parts = target.split("/")
    if len(parts) == 2:
        parts = ["", *parts]
    if len(parts) != 3 or not all(parts[1:]) or not _RESOURCE.match(parts[2]):
        raise ValueError(f"webhook target {target!r}: name the resource as webhook rules do, by group, version "
                         "and plural: 'apps/v1/deployments', 'v1/configmaps', '*/*/*' is not allowed")
    return None, parts[0], parts[1], parts[2], "*"


class AdmissionWebhook:
    """One validating or mutating webhook: its handler and its configuration entry."""

    def __init__(self, target: Any, handler: Handler, *, mutating: bool, name: str | None = None,
                 operations: Sequence[Operation] = ("CREATE", "UPDATE"), subresource: str = "",
                 failure_policy: FailurePolicy = "Fail", side_effects: SideEffects = "None",
                 timeout_seconds: int = 10, match_policy: MatchPolicy = "Equivalent",
                 reinvocation_policy: Literal["Never", "IfNeeded"] = "Never",
                 labels: LabelSelectorLike | None = None, namespace_labels: LabelSelectorLike | None = None,
                 namespaces: Sequence[str] | None = None, scope: Scope | None = None) -> None:
        self.model, self.group, self.version, self.resource, default_scope = _target(target)
        if not callable(handler):
            raise TypeError(f"a webhook handler must be callable, got {handler!r}")
        self.handler = handler
        self.mutating = mutating
        fn_name = getattr(handler, "__name__", "handler").strip("_").replace("_", "-").lower()
        self.name = name or f"{fn_name}.{self.resource}.{self.group or 'core'}"
        problems = is_dns1123_subdomain(self.name)
        if problems or self.name.count(".") < 2:
            raise ValueError(f"webhook name {self.name!r} must be a DNS subdomain of at least three segments "
                             f"(like 'check.widgets.example.com'){': ' + '; '.join(problems) if problems else ''}")
        bad_ops = [op for op in operations if op not in (*OPERATIONS, "*")]
        if bad_ops or not operations:
            raise ValueError(f"webhook {self.name}: operations must be some of {OPERATIONS} (or '*'), got "
                             f"{list(operations)}")
        self.operations = tuple(operations)
        self.subresource = subresource
        if failure_policy not in ("Fail", "Ignore"):
            raise ValueError(f"webhook {self.name}: failure_policy must be 'Fail' or 'Ignore'")
        if side_effects not in ("None", "NoneOnDryRun"):
            raise ValueError(f"webhook {self.name}: side_effects must be 'None' or 'NoneOnDryRun' (what "
                             "admissionregistration.k8s.io/v1 accepts); a webhook with side effects must make "
                             "none on a dry run")
        if not 1 <= int(timeout_seconds) <= 30:
            raise ValueError(f"webhook {self.name}: timeout_seconds must be between 1 and 30 (the API server's "
                             "limits)")
        if match_policy not in ("Exact", "Equivalent"):
            raise ValueError(f"webhook {self.name}: match_policy must be 'Exact' or 'Equivalent'")
        self.failure_policy = failure_policy
        self.side_effects = side_effects
        self.timeout_seconds = int(timeout_seconds)
        self.match_policy = match_policy
        self.reinvocation_policy = reinvocation_policy
        self.scope: Scope = scope or default_scope
        self.object_selector = label_selector_dict(labels) if labels else None
        ns_selector = label_selector_dict(namespace_labels) if namespace_labels else {}
        if namespaces:
            ns_selector.setdefault("matchExpressions", []).append(
                {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(set(namespaces))})
        self.namespace_selector = ns_selector or None

    # -- configuration -------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """Where the server answers this webhook: `/mutate/<name>` or `/validate/<name>`."""
        return f"/{'mutate' if self.mutating else 'validate'}/{self.name}"

    def configuration_entry(self, client_config: ClientConfig) -> dict[str, Any]:
        """This webhook's entry in a Validating/MutatingWebhookConfiguration's `webhooks`."""
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        rule: dict[str, Any] = {"apiGroups": [self.group], "apiVersions": [self.version],
                                "resources": [resource], "operations": list(self.operations), "scope": self.scope}
        entry: dict[str, Any] = {
            "name": self.name,
            "clientConfig": client_config.for_path(self.path),
            "rules": [rule],
            "failurePolicy": self.failure_policy,
            "sideEffects": self.side_effects,
            "timeoutSeconds": self.timeout_seconds,
            "matchPolicy": self.match_policy,
            "admissionReviewVersions": ["v1"],
            "namespaceSelector": self.namespace_selector or {},
            "objectSelector": self.object_selector or {},
        }
        if self.mutating:
            entry["reinvocationPolicy"] = self.reinvocation_policy
        return entry

    # -- serving -------------------------------------------------------------------------------
    def _read(self, raw: Any) -> Any:
        if raw is None:
            return None
        if self.model is not None:
            return self.model.from_object(raw)
        return copy.deepcopy(raw)

    async def answer(self, request: Mapping[str, Any]) -> Answer:
        """Run the handler on one AdmissionReview `request` and say what to send back."""
        raw_obj, raw_old = request.get("object"), request.get("oldObject")
        try:
            req = request_from_review(request, self._read(raw_obj), self._read(raw_old))
        except ReviewError:
            raise
        except ValueError as e:  # the object is not what the model reads (ResourceValidationError)
            log.info("webhook %s: %s", self.name, e)
            return Answer(deny(str(e), code=422, reason="Invalid"), failure="invalid_object")
        budget = max(self.timeout_seconds - min(HANDLER_MARGIN, self.timeout_seconds / 4), 0.1)
        try:
            async with asyncio.timeout(budget):
                result = self.handler(req)
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError:
            return self._failed(req, "timeout", f"the handler did not answer within {budget:g} s")
        except Exception as e:
            log.exception("webhook %s: the handler raised on %s %s/%s", self.name, req.operation, req.namespace,
                          req.name)
            return self._failed(req, "exception", f"the handler raised {type(e).__name__}: {e}")
        warnings = tuple(req.warnings)
        if isinstance(result, Verdict):
            return Answer(result, warnings=warnings)
        if not self.mutating:
            if result is None or result is True:
                return Answer(allow(), warnings=warnings)
            if result is False:
                return Answer(deny("denied"), warnings=warnings)
            return self._failed(req, "exception", f"a validating handler returns allow()/deny(...) or None, "
                                                  f"not {type(result).__name__}")
        if result is None:
            return Answer(allow(), warnings=warnings)
        try:
            patch = self._patch(raw_obj, req.object, result)
        except (TypeError, ValueError) as e:
            return self._failed(req, "exception", f"the handler's result cannot be a patch: {e}")
        return Answer(allow(), patch=patch or None, warnings=warnings)

    def _patch(self, raw: Any, typed_in: Any, result: Any) -> list[dict[str, Any]]:
        if raw is None:
            raise ValueError(f"there is no object to change in a {type(result).__name__} request")
        if self.model is not None and not isinstance(result, Mapping):
            if not isinstance(result, self.model):
                raise TypeError(f"expected a {self.model.__name__} (or None), got {type(result).__name__}")
            final = rebase(raw, typed_in.to_object(), result.to_object())
        elif isinstance(result, Mapping):
            final = result
        else:
            raise TypeError(f"expected the changed object (or None), got {type(result).__name__}")
        return diff(raw, final)

    def _failed(self, req: AdmissionRequest[Any], reason: str, message: str) -> Answer:
        """The answer for a handler that gave none, per the failure policy."""
        text = f"webhook {self.name}: {message}"
        if self.failure_policy == "Ignore":
            return Answer(allow(), warnings=(*req.warnings, f"{text}; allowed (failurePolicy Ignore)"),
                          failure=reason)
        return Answer(deny(text, code=500, reason="InternalError"), warnings=tuple(req.warnings), failure=reason)

    def __repr__(self) -> str:
        return f"AdmissionWebhook({self.name!r}, {'mutating' if self.mutating else 'validating'})"


