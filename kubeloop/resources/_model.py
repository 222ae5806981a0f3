"""Typed custom resources: a pydantic model per version, with the CRD facts declared on the class.

    class WebApp(CustomResource, group="example.com", version="v1", short_names=("wa",)):
        spec: WebAppSpec
        status: WebAppStatus | None = None

The class is both the schema source (`crd(WebApp)` derives the CustomResourceDefinition) and the
type a reconcile reads a cached object as (`WebApp.from_object(obj)`: validated, frozen). Models
are frozen so that a typed object, like the cache's read-only views it comes from, cannot be
changed by accident; `model_copy(update=...)` or `to_object()` give something to change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from kubeloop.meta import format_micro_time, format_time, go_json_numbers

from ._conditions import CONDITION_REASON, CONDITION_TYPE
from ._structural import SchemaError

__all__ = [
    "Atomic", "Condition", "CustomResource", "IntOrString", "ListMap", "ListSet", "MicroTime", "Model",
    "ObjectMeta", "PreserveUnknownFields", "PrinterColumn", "ResourceInfo", "ResourceValidationError", "Scale",
    "Time",
]

#: a `metav1.Time`: a datetime written as RFC 3339 in UTC with whole seconds (`2006-01-02T15:04:05Z`)
Time = Annotated[datetime, PlainSerializer(format_time, return_type=str, when_used="json")]
#: a `metav1.MicroTime`: a datetime written with exactly six fractional digits (`...05.000000Z`)
MicroTime = Annotated[datetime, PlainSerializer(format_micro_time, return_type=str, when_used="json")]
#: a field that holds an integer or a string (`x-kubernetes-int-or-string`), like ports and percentages
IntOrString = int | str


class ResourceValidationError(ValueError):
    """An object does not match its typed model (or is of another kind); the message names the object."""


# -- schema markers (use with typing.Annotated) --------------------------------------------------


class _Marker:
    """Adds Kubernetes schema extensions to the field it annotates."""

    def extensions(self) -> dict[str, Any]:
        raise NotImplementedError

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema.update(self.extensions())
        return schema


@dataclass(frozen=True, init=False)
class ListMap(_Marker):
    """`Annotated[list[Port], ListMap("name")]`: a list whose items are identified by key fields
    (`x-kubernetes-list-type: map`), so server-side apply merges items by key instead of replacing
    the whole list. The keys must be required fields of the item model or have defaults."""

    keys: tuple[str, ...]

    def __init__(self, *keys: str) -> None:
        if not keys or not all(isinstance(k, str) and k for k in keys):
            raise SchemaError("ListMap needs at least one key field name, e.g. ListMap('name')")
        object.__setattr__(self, "keys", keys)

    def extensions(self) -> dict[str, Any]:
        return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(self.keys)}


@dataclass(frozen=True)
class ListSet(_Marker):
    """`Annotated[list[str], ListSet()]`: a list of unique scalars (`x-kubernetes-list-type: set`);
    a `set[str]` or `frozenset[str]` field gets this without the marker."""

    def extensions(self) -> dict[str, Any]:
        return {"x-kubernetes-list-type": "set"}


@dataclass(frozen=True)
class Atomic(_Marker):
    """A list or map (or nested model) that server-side apply replaces as a whole."""

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        if target.get("type") == "array":
            schema["x-kubernetes-list-type"] = "atomic"
        else:
            schema["x-kubernetes-map-type"] = "atomic"
        return schema

    def extensions(self) -> dict[str, Any]:  # pragma: no cover - replaced above
        return {}


@dataclass(frozen=True)
class PreserveUnknownFields(_Marker):
    """Keep fields the schema does not list (`x-kubernetes-preserve-unknown-fields`) instead of
    letting the API server prune them. `Any` and `dict[str, Any]` fields, and models with
    `extra="allow"`, get this without the marker."""

    def extensions(self) -> dict[str, Any]:
        return {"x-kubernetes-preserve-unknown-fields": True}


# -- models --------------------------------------------------------------------------------------


class Model(BaseModel):
    """Base for the nested parts of a resource (spec, status, items): frozen, camelCase on the wire
    (`container_port` is `containerPort`), either name accepted when constructing, unknown fields
    ignored when reading (the API server has already pruned them)."""

    model_config = ConfigDict(frozen=True, alias_generator=to_camel, validate_by_name=True,
                              validate_by_alias=True, serialize_by_alias=True, extra="ignore")


class Condition(Model):
    """Condition contains details for one aspect of the current state of this resource."""

    # Python readers: use `Annotated[list[Condition], ListMap("type")]` under `status.conditions`,
    # and write conditions with `set_condition` on the status dict you send.
    # the constraints of metav1.Condition (as controller-gen emits them), shared with set_condition
    type: str = Field(max_length=316, pattern=CONDITION_TYPE.pattern)
    status: Literal["True", "False", "Unknown"]
    last_transition_time: Time
    reason: str = Field(min_length=1, max_length=1024, pattern=CONDITION_REASON.pattern)
    message: str = Field("", max_length=32768)
    observed_generation: int | None = Field(None, ge=0)


class ObjectMeta(Model):
    """The `metadata` of an object, as far as a reconcile usually reads it; other fields are kept
    (`model_extra`). The CRD does not constrain metadata: the API server validates it itself."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    finalizers: tuple[str, ...] = ()
    owner_references: tuple[dict[str, Any], ...] = ()

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # written back as the API server returns it: no empty labels, finalizers, ...
        return {k: v for k, v in handler(self).items() if v is not None and v != {} and v != [] and v != ()}


@dataclass(frozen=True)
class PrinterColumn:
    """An `additionalPrinterColumns` entry: what `kubectl get` shows (`json_path` like `.spec.replicas`)."""

    name: str
    json_path: str
    type: Literal["integer", "number", "string", "boolean", "date"] = "string"
    description: str | None = None
    format: str | None = None
    priority: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.format:
            out["format"] = self.format
        if self.priority:
            out["priority"] = self.priority
        return out


@dataclass(frozen=True)
class Scale:
    """The scale subresource (`kubectl scale`, HorizontalPodAutoscaler): where replicas live."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"specReplicasPath": self.spec_replicas_path, "statusReplicasPath": self.status_replicas_path}
        if self.label_selector_path:
            out["labelSelectorPath"] = self.label_selector_path
        return out


@dataclass(frozen=True)
class ResourceInfo:
    """What a `CustomResource` class declares about its kind and this version of it."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] = ()
    status: bool | None = None
    scale: Scale | None = None
    served: bool = True
    storage: bool | None = None
    deprecated: bool | str = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def ref(self) -> str:
        """`group/version/Kind`: how kubeloop's client and controllers name the resource."""
        return f"{self.group}/{self.version}/{self.kind}"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"


def _plural(kind: str) -> str:
    low = kind.lower()
    if re.search(r"[^aeiou]y$", low):
        return low[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", low):
        return low + "es"
    return low + "s"


_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$|^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_DECLARATION = frozenset({
    "group", "version", "kind", "plural", "singular", "list_kind", "scope", "short_names", "categories",
    "printer_columns", "status", "scale", "served", "storage", "deprecated",
})


def _declare(cls: type, parent: ResourceInfo | None, kwargs: dict[str, Any]) -> ResourceInfo | None:
    unknown = sorted(set(kwargs) - _DECLARATION)
    if unknown:
        raise TypeError(f"{cls.__name__}: unknown CustomResource option(s) {unknown}; "
                        f"expected some of {sorted(_DECLARATION)}")
    for key in ("short_names", "categories", "printer_columns"):
        if key in kwargs:
            if isinstance(kwargs[key], str) or not isinstance(kwargs[key], Sequence):
                raise TypeError(f"{cls.__name__}: {key} must be a list or tuple, got {kwargs[key]!r}")
            kwargs[key] = tuple(kwargs[key])
    if parent is not None:
        kind_changed = "kind" in kwargs and kwargs["kind"] != parent.kind
        base = {k: v for k, v in parent.__dict__.items() if not (kind_changed and k in (
            "plural", "singular", "list_kind"))}
        if kwargs.get("version", parent.version) != parent.version:
            # a new version inherits the shape (columns, subresources), not the parent's role
            base.update(storage=None, served=True, deprecated=False)
        merged = {**base, **kwargs}
    elif not kwargs:
        return None  # an abstract base for several resources: no CRD of its own
    else:
        merged = dict(kwargs)
        if "group" not in merged or "version" not in merged:
            raise TypeError(f"{cls.__name__}: a CustomResource needs group= and version= "
                            f"(e.g. class {cls.__name__}(CustomResource, group='example.com', version='v1'))")
        merged.setdefault("kind", cls.__name__)
    kind = merged["kind"]
    merged.setdefault("plural", _plural(kind))
    merged.setdefault("singular", kind.lower())
    merged.setdefault("list_kind", f"{kind}List")
    info = ResourceInfo(**merged)
    problems = _problems(info)
    if problems:
        raise TypeError(f"{cls.__name__}: " + "; ".join(problems))
    return info


def _problems(info: ResourceInfo) -> list[str]:
    """What the API server would reject in ``info`` (names, scope, printer columns, scale paths)."""
    problems = []
    if not _DNS_SUBDOMAIN.match(info.group):
        problems.append(f"group {info.group!r} must be a DNS subdomain with a dot, like 'example.com'")
    if not _VERSION.match(info.version):
        problems.append(f"version {info.version!r} must look like v1, v2beta1 or v1alpha2")
    if not _KIND.match(info.kind):
        problems.append(f"kind {info.kind!r} must be CamelCase, like 'WebApp'")
    labels = [("plural", info.plural), ("singular", info.singular), *(("short name", s) for s in info.short_names)]
    for what, value in labels:
        if not isinstance(value, str) or not _DNS_LABEL.match(value):
            problems.append(f"{what} {value!r} must be a lowercase DNS label")
    if info.scope not in ("Namespaced", "Cluster"):
        problems.append(f"scope must be 'Namespaced' or 'Cluster', not {info.scope!r}")
    for col in info.printer_columns:
        if not isinstance(col, PrinterColumn):
            problems.append(f"printer_columns must hold PrinterColumn(...), not {col!r}")
        elif not col.json_path.startswith(".") or col.type not in ("integer", "number", "string", "boolean", "date"):
            problems.append(f"printer column {col.name!r}: json_path must start with '.' (like '.spec.replicas') "
                            "and type be integer, number, string, boolean or date")
    if info.scale is not None:
        if not isinstance(info.scale, Scale):
            problems.append(f"scale must be a Scale(...) or None, not {info.scale!r}")
        else:
            # what the API server requires of the scale subresource's paths
            sc = info.scale
            if not sc.spec_replicas_path.startswith(".spec."):
                problems.append(f"scale spec_replicas_path {sc.spec_replicas_path!r} must be under .spec")
            if not sc.status_replicas_path.startswith(".status."):
                problems.append(f"scale status_replicas_path {sc.status_replicas_path!r} must be under .status")
            if sc.label_selector_path and not sc.label_selector_path.startswith((".spec.", ".status.")):
                problems.append(f"scale label_selector_path {sc.label_selector_path!r} must be under .spec or "
                                ".status")
    return problems


def _plain(value: Any) -> Any:
    """A deep copy of a (possibly read-only) cached object as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_plain(v) for v in value]
    return value


class CustomResource(Model):
    """Base class of a typed custom resource. Subclass it with the CRD facts as class options:

    - `group`, `version` (required), `kind` (default: the class name), `plural`, `singular`,
      `list_kind` (derived from the kind), `scope` ("Namespaced" or "Cluster"), `short_names`,
      `categories`;
    - per version: `printer_columns` (`PrinterColumn`s), `status` (the status subresource; default:
      on when the model has a `status` field), `scale` (a `Scale`), `served`, `storage` (exactly one
      version of a CRD stores objects; a CRD of one version needs nothing), `deprecated` (True or a
      warning message).

    A subclass of a resource class inherits its options, so a new version is
    `class WebAppV2(WebApp, version="v2", storage=True)` with the fields that changed.
    """

    __resource__: ClassVar[ResourceInfo]

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = ObjectMeta()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # the options are handled in __pydantic_init_subclass__, once pydantic has built the fields
        super().__init_subclass__()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        parent = next((b.__dict__["__resource__"] for b in cls.__mro__[1:] if "__resource__" in b.__dict__), None)
        info = _declare(cls, parent, dict(kwargs))
        if info is not None:
            cls.__resource__ = info

    @model_validator(mode="before")
    @classmethod
    def _identity(cls, data: Any) -> Any:
        """Fill apiVersion and kind on construction; refuse an object of another kind or version."""
        if not isinstance(data, dict) or "__resource__" not in cls.__dict__:
            return data
        info = cls.__resource__
        data = dict(data)
        for key, alias, want in (("api_version", "apiVersion", info.api_version), ("kind", "kind", info.kind)):
            have = data.get(alias, data.get(key))
            if not have:
                data.pop(key, None)
                data[alias] = want
            elif have != want:
                raise ValueError(f"{alias} is {have!r}, but {cls.__name__} is {want!r}")
        return data

    @classmethod
    def resource(cls) -> str:
        """`group/version/Kind`, the name to pass to the client and to `Controller.for_()`."""
        return declared(cls).ref

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> Self:
        """Read an object (a dict or a read-only cache view) as this type: validated and frozen.

        Raises `ResourceValidationError` (naming the object and every bad field) when it does not
        match: of another kind or version, or with fields the model rejects.
        """
        if not isinstance(obj, Mapping):
            raise ResourceValidationError(f"{cls.__name__}.from_object needs a Kubernetes object (a mapping), "
                                          f"got {type(obj).__name__}")
        try:
            return cls.model_validate(_plain(obj))
        except ValidationError as e:
            meta = obj.get("metadata") or {}
            where = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p) or "(no name)"
            raise ResourceValidationError(f"{obj.get('kind', '?')} {where} is not a valid {cls.__name__}: "
                                          f"{e}") from None

    def to_object(self) -> dict[str, Any]:
        """This object as a plain JSON-ready dict, for the client (create, update, apply).

        A float with an integral value is written as an integer, as the API server (Go) writes
        it: a `float` field read as ``1`` is written back as ``1``, not ``1.0``, which the server
        would see as a changed value (a new generation; see `kubeloop.meta.semantically_equal`).
        """
        out: dict[str, Any] = go_json_numbers(self.model_dump(mode="json", by_alias=True, exclude_none=True))
        return out

    @classmethod
    def openapi_schema(cls) -> dict[str, Any]:
        """The structural openAPIV3Schema of this version (checked against the structural rules)."""
        from ._crd import version_schema

        return version_schema(cls)


def declared(cls: Any) -> ResourceInfo:
    """The `ResourceInfo` of a concrete CustomResource class; a clear error for anything else."""
    if not (isinstance(cls, type) and issubclass(cls, CustomResource)) or "__resource__" not in cls.__dict__:
        raise TypeError(f"expected a CustomResource subclass declared with group= and version=, got {cls!r}")
    return cls.__resource__


#: public name: the `ResourceInfo` (group, version, kind, scope, ...) a CustomResource class declares
resource_info = declared
