"""`Webhooks`: the admission handlers and conversions one operator serves, and what is derived from them.

    webhooks = Webhooks("widgets")                 # names the two WebhookConfigurations

    @webhooks.validating(Widget)
    def names(req: AdmissionRequest[Widget]) -> Verdict: ...

    @webhooks.mutating(Widget)
    def label(req: AdmissionRequest[Widget]) -> Widget | None: ...

    webhooks.conversion(VERSIONS)                  # Versions(hub, Spoke(...), ...)

From it: `validating_configuration(cc)` and `mutating_configuration(cc)` (the
admissionregistration.k8s.io/v1 objects), `crds(cc)` (each converted resource's CRD with its
`conversion: Webhook` block) for a `ClientConfig` `cc` (a URL or a Service, and the CA bundle), and
the routes the server answers (`/validate/<name>`, `/mutate/<name>`, `/convert`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from kubeloop.meta import LabelSelectorLike, is_dns1123_subdomain

from ._admission import (
    AdmissionWebhook,
    ClientConfig,
    FailurePolicy,
    Handler,
    MatchPolicy,
    Scope,
    SideEffects,
)
from ._conversion import Converter
from ._review import Operation

if TYPE_CHECKING:
    from kubeloop.resources import Versions

__all__ = ["CONVERT_PATH", "Webhooks"]

#: where the conversion webhook is served (one path for every converted resource)
CONVERT_PATH = "/convert"


class Webhooks:
    """A set of admission webhooks and conversions, served by one `WebhookServer`."""

    def __init__(self, name: str) -> None:
        problems = is_dns1123_subdomain(name)
        if problems:
            raise ValueError(f"Webhooks({name!r}): the name becomes the WebhookConfigurations' names and must be a "
                             f"DNS subdomain: {'; '.join(problems)}")
        self.name = name
        self._admission: dict[str, AdmissionWebhook] = {}
        self.converter = Converter()

    # -- declaring -----------------------------------------------------------------------------
    def add(self, webhook: AdmissionWebhook) -> AdmissionWebhook:
        if webhook.name in self._admission:
            raise ValueError(f"webhook {webhook.name!r} is declared twice; give one of them name=")
        self._admission[webhook.name] = webhook
        return webhook

    def validating(self, target: Any, *, name: str | None = None,
                   operations: Sequence[Operation] = ("CREATE", "UPDATE"), subresource: str = "",
                   failure_policy: FailurePolicy = "Fail", side_effects: SideEffects = "None",
                   timeout_seconds: int = 10, match_policy: MatchPolicy = "Equivalent",
                   labels: LabelSelectorLike | None = None, namespace_labels: LabelSelectorLike | None = None,
                   namespaces: Sequence[str] | None = None, scope: Scope | None = None) -> Callable[[Handler], Handler]:
        """Declare a validating handler for `target` (a `CustomResource` class, or
        `"group/version/resource"` such as `"apps/v1/deployments"`): it returns `allow()` or
        `deny(message)` (None means allow). `labels` becomes the `objectSelector`,
        `namespace_labels` and `namespaces` the `namespaceSelector`."""
        def register(handler: Handler) -> Handler:
            self.add(AdmissionWebhook(target, handler, mutating=False, name=name, operations=operations,
                                      subresource=subresource, failure_policy=failure_policy,
                                      side_effects=side_effects, timeout_seconds=timeout_seconds,
                                      match_policy=match_policy, labels=labels, namespace_labels=namespace_labels,
                                      namespaces=namespaces, scope=scope))
            return handler
        return register

    def mutating(self, target: Any, *, name: str | None = None,
                 operations: Sequence[Operation] = ("CREATE", "UPDATE"), subresource: str = "",
                 failure_policy: FailurePolicy = "Fail", side_effects: SideEffects = "None",
                 timeout_seconds: int = 10, match_policy: MatchPolicy = "Equivalent",
                 reinvocation_policy: Literal["Never", "IfNeeded"] = "Never",
                 labels: LabelSelectorLike | None = None, namespace_labels: LabelSelectorLike | None = None,
                 namespaces: Sequence[str] | None = None, scope: Scope | None = None) -> Callable[[Handler], Handler]:
        """Declare a mutating handler for `target`: it returns the changed object (the model's
        instance, or a dict for untyped targets), None for no change, or `deny(message)`. kubeloop
        sends the JSON patch from the object received to the one returned."""
        def register(handler: Handler) -> Handler:
            self.add(AdmissionWebhook(target, handler, mutating=True, name=name, operations=operations,
                                      subresource=subresource, failure_policy=failure_policy,
                                      side_effects=side_effects, timeout_seconds=timeout_seconds,
                                      match_policy=match_policy, reinvocation_policy=reinvocation_policy,
                                      labels=labels, namespace_labels=namespace_labels, namespaces=namespaces,
                                      scope=scope))
            return handler
        return register

    def conversion(self, *versions: Versions) -> None:
        """Serve the conversions of these multi-version resources at `/convert`."""
        for v in versions:
            self.converter.add(v)

    # -- what is declared ----------------------------------------------------------------------
    @property
    def admission(self) -> tuple[AdmissionWebhook, ...]:
        return tuple(self._admission.values())

    def webhook(self, path: str) -> AdmissionWebhook | None:
        """The admission webhook served at `path` (`/validate/<name>` or `/mutate/<name>`)."""
        kind, _, name = path.strip("/").partition("/")
        hook = self._admission.get(name)
        if hook is None or kind != ("mutate" if hook.mutating else "validate"):
            return None
        return hook

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the server answers on."""
        return (*(w.path for w in self._admission.values()), *((CONVERT_PATH,) if self.converter else ()))

    # -- derived objects -----------------------------------------------------------------------
    def validating_configuration(self, client_config: ClientConfig) -> dict[str, Any] | None:
        """The ValidatingWebhookConfiguration named after this set (None when it has no validating webhook)."""
        return self._configuration("ValidatingWebhookConfiguration", False, client_config)

    def mutating_configuration(self, client_config: ClientConfig) -> dict[str, Any] | None:
        """The MutatingWebhookConfiguration named after this set (None when it has no mutating webhook)."""
        return self._configuration("MutatingWebhookConfiguration", True, client_config)

    def configurations(self, client_config: ClientConfig) -> list[dict[str, Any]]:
        """Both configurations (those that have webhooks)."""
        return [c for c in (self.mutating_configuration(client_config),
                            self.validating_configuration(client_config)) if c is not None]

    def _configuration(self, kind: str, mutating: bool, client_config: ClientConfig) -> dict[str, Any] | None:
        hooks = [w for w in self._admission.values() if w.mutating == mutating]
        if not hooks:
            return None
        return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": self.name},
                "webhooks": [w.configuration_entry(client_config) for w in hooks]}

    def crds(self, client_config: ClientConfig) -> list[dict[str, Any]]:
        """The CRD of every converted resource, its conversion webhook at `client_config`."""
        from kubeloop.resources import crd

        return [crd(v, client_config=client_config.for_path(CONVERT_PATH)) for v in self.converter.resources]

    @property
    def crd_names(self) -> tuple[str, ...]:
        return tuple(v.info.crd_name for v in self.converter.resources)

    def __repr__(self) -> str:
        return f"Webhooks({self.name!r}, {len(self._admission)} admission, {len(self.converter.resources)} converted)"
