"""CustomResourceDefinitions (apiextensions.k8s.io/v1) derived from `CustomResource` classes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from ._model import CustomResource, ResourceInfo, declared
from ._schema import to_structural
from ._structural import SchemaError, check_structural
from ._versions import Versions

__all__ = ["crd", "crd_yaml", "version_schema"]

#: root fields every Kubernetes object has; their schema is fixed (the API server owns metadata)
_ROOT = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}


def version_schema(model: type[CustomResource]) -> dict[str, Any]:
    """The structural openAPIV3Schema of one `CustomResource` class."""
    declared(model)
    try:
        raw = model.model_json_schema(by_alias=True, mode="validation")
    except SchemaError:
        raise
    except Exception as e:  # pydantic cannot describe a field type (a custom class, a callable, ...)
        raise SchemaError(f"{model.__name__}: pydantic cannot derive a JSON schema: {e}") from e
    try:
        schema = to_structural(raw)
    except SchemaError as e:
        raise SchemaError(f"{model.__name__}: {e}") from None
    props = dict(schema.get("properties") or {})
    props.update(_ROOT)
    schema["properties"] = {**_ROOT, **{k: v for k, v in props.items() if k not in _ROOT}}
    required = [r for r in schema.get("required") or () if r not in _ROOT]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    schema.pop("default", None)
    schema.pop("x-kubernetes-preserve-unknown-fields", None)
    if "description" not in schema and model.__doc__:
        schema["description"] = model.__doc__.strip()
    try:
        check_structural(schema)
    except SchemaError as e:
        raise SchemaError(f"{model.__name__}: {e}") from None
    return schema


def _version(model: type[CustomResource], info: ResourceInfo, storage: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": info.version, "served": info.served, "storage": storage}
    if info.deprecated:
        out["deprecated"] = True
        if isinstance(info.deprecated, str):
            out["deprecationWarning"] = info.deprecated
    out["schema"] = {"openAPIV3Schema": version_schema(model)}
    subresources: dict[str, Any] = {}
    status = info.status if info.status is not None else "status" in model.model_fields
    if status:
        if "status" not in model.model_fields:
            raise SchemaError(f"{model.__name__}: status=True needs a `status` field")
        subresources["status"] = {}
    if info.scale is not None:
        subresources["scale"] = info.scale.to_dict()
    if subresources:
        out["subresources"] = subresources
    if info.printer_columns:
        out["additionalPrinterColumns"] = [c.to_dict() for c in info.printer_columns]
    return out


def crd(*models: type[CustomResource] | Versions, client_config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The CustomResourceDefinition of one kind, from one `CustomResource` class per version, or
    from a `Versions` (hub and spokes with conversion functions).

    All classes must agree on group, kind, names and scope; versions must be distinct, and exactly
    one is the storage version (`storage=True`; a single version is it without saying so; with
    `Versions`, the hub unless another version says so). With `Versions`, the CRD converts through
    the conversion webhook at `client_config` (`{"url": ...}` or `{"service": ...}`, with
    `caBundle`; `kubeloop.webhooks` derives it): `spec.conversion` is `strategy: Webhook`.
    """
    versions: Versions | None = None
    if len(models) == 1 and isinstance(models[0], Versions):
        versions = models[0]
        if client_config is None:
            raise SchemaError(f"{versions!r} converts through a webhook: crd() needs its client_config "
                              "(a url or a service, and the caBundle; see kubeloop.webhooks)")
        models = versions.models
    elif any(isinstance(m, Versions) for m in models):
        raise TypeError("crd() takes either CustomResource classes or one Versions, not both")
    elif client_config is not None:
        raise SchemaError("client_config is the conversion webhook's: it needs crd(Versions(...))")
    if not models:
        raise TypeError("crd() needs at least one CustomResource class")
    classes: list[type[CustomResource]] = [m for m in models if not isinstance(m, Versions)]
    return _crd(classes, versions, client_config)


def _crd(models: list[type[CustomResource]], hub_spoke: Versions | None,
         client_config: Mapping[str, Any] | None) -> dict[str, Any]:
    infos = [declared(m) for m in models]
    first = infos[0]
    shared = ("group", "kind", "plural", "singular", "list_kind", "scope", "short_names", "categories")
    for model, info in zip(models[1:], infos[1:], strict=True):
        diff = [f"{k}: {getattr(first, k)!r} != {getattr(info, k)!r}" for k in shared
                if getattr(first, k) != getattr(info, k)]
        if diff:
            raise SchemaError(f"{models[0].__name__} and {model.__name__} are versions of one CRD but differ in "
                              + "; ".join(diff))
    versions = [i.version for i in infos]
    dupes = sorted({v for v in versions if versions.count(v) > 1})
    if dupes:
        raise SchemaError(f"version(s) {dupes} declared more than once")
    if hub_spoke is not None:
        storage = [m is hub_spoke.storage for m in models]
    elif len(infos) == 1:
        storage = [infos[0].storage is not False]
    else:
        storage = [i.storage is True for i in infos]
    if sum(storage) != 1:
        named = [m.__name__ for m, s in zip(models, storage, strict=True) if s]
        raise SchemaError(f"exactly one version must be the storage version (storage=True); got {named or 'none'} "
                          f"among {[m.__name__ for m in models]}")
    if not any(i.served for i in infos):
        raise SchemaError("at least one version must be served")
    names: dict[str, Any] = {"plural": first.plural, "singular": first.singular, "kind": first.kind,
                             "listKind": first.list_kind}
    if first.short_names:
        names["shortNames"] = list(first.short_names)
    if first.categories:
        names["categories"] = list(first.categories)
    spec: dict[str, Any] = {
        "group": first.group,
        "names": names,
        "scope": first.scope,
        "versions": [_version(m, i, s) for m, i, s in zip(models, infos, storage, strict=True)],
    }
    if hub_spoke is not None and client_config is not None:
        spec["conversion"] = hub_spoke.conversion_block(client_config)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": first.crd_name},
        "spec": spec,
    }


def crd_yaml(*models: type[CustomResource] | Versions, client_config: Mapping[str, Any] | None = None) -> str:
    """`crd(*models)` as a YAML document (for `kubectl apply -f`), keys in Kubernetes' usual order."""
    return yaml.safe_dump(crd(*models, client_config=client_config), sort_keys=False, default_flow_style=False,
                          width=120)
