"""One custom resource served in several versions: a hub model, spokes, and conversion between them.

    VERSIONS = Versions(Widget, Spoke(WidgetV1, to_hub=v1_to_v2, from_hub=v2_to_v1))
    VERSIONS.convert(obj, "webhooks.examples.kubeloop.dev/v1")       # any version to any other
    crd(VERSIONS, client_config={"url": "https://127.0.0.1:9443/convert", "caBundle": ...})

Hub and spoke (as controller-runtime's `conversion.Hub`/`Convertible`): every version converts to
and from the hub only, so n versions need 2(n-1) functions, and a spoke-to-spoke conversion goes
through the hub. The functions are typed (`WidgetV1 -> Widget`) and convert what the models hold
(spec, status); `metadata` is carried over from the source unchanged, because the API server keeps
the source's metadata anyway (only labels and annotations may change in a conversion).

**Nothing is lost in a round trip.** The hub must express everything a spoke holds (spoke -> hub ->
spoke is lossless by the functions themselves: `kubeloop.testing.check_lossless` checks it). A
spoke may express less than the hub (`v2` with `replicas: 7` read as `v1`, whose `size` only knows
1, 3 and 5): then the hub's content is kept in the annotation `kubeloop.dev/conversion-data` of the
spoke object, as kubebuilder projects do by hand (cluster-api's `conversion-data`). Converting back
to the hub restores from it every field whose value the spoke cannot see: a field is restored when
putting it back does not change what the spoke shows, so a `v1` client who changed `size` gets the
replicas of the new size, and one who changed only a label gets `replicas: 7` back. This is decided
by running the conversion functions, never by field names, so it holds for any pair of models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ._model import CustomResource, ResourceInfo, _plain, declared
from ._structural import SchemaError

__all__ = ["CONVERSION_ANNOTATION", "ConversionError", "Spoke", "Versions"]

#: where hub content a spoke cannot express is kept on the spoke (JSON: {hub version: {spec, status, ...}})
CONVERSION_ANNOTATION = "kubeloop.dev/conversion-data"
_TYPE_META = ("apiVersion", "kind", "metadata")
_MISSING: Any = object()


class ConversionError(ValueError):
    """An object could not be converted (unknown version, invalid for its model, a function failed);
    the message names the object and the versions."""


@dataclass(frozen=True)
class Spoke:
    """A version other than the hub, with its two conversion functions (typed, pure)."""

    model: type[CustomResource]
    to_hub: Callable[[Any], CustomResource]
    from_hub: Callable[[Any], CustomResource]


class Versions:
    """The versions of one custom resource: the hub model and its spokes.

    The storage version is the version declared with `storage=True` (the hub when none is); it
    need not be the hub. All versions must agree on group, kind, names and scope (checked by
    `crd()`, as for several versions without conversion).
    """

    def __init__(self, hub: type[CustomResource], *spokes: Spoke,
                 annotation: str = CONVERSION_ANNOTATION) -> None:
        hub_info = declared(hub)
        self.hub = hub
        self.annotation = annotation
        self._spokes: dict[str, Spoke] = {}
        for spoke in spokes:
            if not isinstance(spoke, Spoke):
                raise TypeError(f"Versions({hub.__name__}, ...) takes Spoke(model, to_hub=, from_hub=), "
                                f"got {spoke!r}")
            info = declared(spoke.model)
            if (info.group, info.kind) != (hub_info.group, hub_info.kind):
                raise SchemaError(f"{spoke.model.__name__} is {info.group}/{info.kind}, but the hub "
                                  f"{hub.__name__} is {hub_info.group}/{hub_info.kind}")
            if info.version == hub_info.version or info.version in self._spokes:
                raise SchemaError(f"version {info.version!r} of {hub_info.kind} declared more than once")
            for fn in (spoke.to_hub, spoke.from_hub):
                if not callable(fn):
                    raise TypeError(f"{spoke.model.__name__}: conversion functions must be callable, got {fn!r}")
            self._spokes[info.version] = spoke
        self._models: dict[str, type[CustomResource]] = {
            hub_info.version: hub, **{v: s.model for v, s in self._spokes.items()}}
        storage = [m for m in self._models.values() if declared(m).storage is True]
        if len(storage) > 1:
            raise SchemaError(f"exactly one version may be the storage version; got "
                              f"{[m.__name__ for m in storage]}")
        self.storage = storage[0] if storage else hub

    # -- what is declared ----------------------------------------------------------------------
    @property
    def info(self) -> ResourceInfo:
        """The hub's declaration (group, kind, names, scope are the same for every version)."""
        return declared(self.hub)

    @property
    def models(self) -> tuple[type[CustomResource], ...]:
        """Every version's model, the hub first."""
        return tuple(self._models.values())

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(self._models)

    def model(self, version: str) -> type[CustomResource]:
        """The model of `version` (a version name like `v1`, or an apiVersion `group/v1`)."""
        name = version.rpartition("/")[2]
        model = self._models.get(name)
        if model is None:
            raise ConversionError(f"{self.info.kind} has no version {name!r}; it has {sorted(self._models)}")
        return model

    def conversion_block(self, client_config: Mapping[str, Any]) -> dict[str, Any]:
        """The CRD's `spec.conversion`: strategy Webhook, ConversionReview v1, at `client_config`
        (a `WebhookClientConfig` as JSON: `url` or `service`, and `caBundle`)."""
        if not isinstance(client_config, Mapping) or not ({"url", "service"} & set(client_config)):
            raise SchemaError("the conversion webhook's client config needs a 'url' or a 'service', got "
                              f"{client_config!r}")
        return {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                                                   "clientConfig": _plain(client_config)}}

    # -- conversion ----------------------------------------------------------------------------
    def convert(self, obj: Mapping[str, Any], api_version: str) -> dict[str, Any]:
        """`obj` (any served version, a dict or read-only view) as `api_version`; a new dict.

        Raises `ConversionError` naming the object when it does not fit its version's model or a
        conversion function fails.
        """
        source = str(obj.get("apiVersion") or "")
        group = source.rpartition("/")[0]
        if group != self.info.group or obj.get("kind") != self.info.kind:
            raise ConversionError(f"{_where(obj)}: not a {self.info.group}/{self.info.kind}")
        self.model(source)
        target_model = self.model(api_version)
        target = declared(target_model).version
        out = _plain(obj)
        version = source.rpartition("/")[2]
        if version == target:
            return out
        hub = self.info.version
        if version != hub:
            out = self._step(out, version, hub)
        if target != hub:
            out = self._step(out, hub, target)
        return out

    def _step(self, obj: dict[str, Any], source: str, target: str) -> dict[str, Any]:
        """One conversion along a spoke: to the hub (restoring what the spoke could not express), or
        from it (keeping in the annotation what the spoke cannot express)."""
        hub = self.info.version
        meta = dict(obj.get("metadata") or {})
        annotations = dict(meta.get("annotations") or {})
        saved = self._saved(annotations.pop(self.annotation, None), obj)
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)
        obj = {**obj, "metadata": meta}  # the functions never see the conversion data
        src_content = self._content(source, obj)
        converted = self._apply(source, target, src_content, obj)
        if target == hub:
            restore = saved.get(hub)
            if restore is not None:
                converted = self._restore(converted, restore, source, target, src_content, obj)
        elif self._apply(target, source, converted, obj) != src_content:
            meta["annotations"] = {**annotations, self.annotation: orjson.dumps(
                {hub: src_content}, option=orjson.OPT_SORT_KEYS).decode()}
        out = {"apiVersion": f"{self.info.group}/{target}", "kind": self.info.kind, "metadata": meta}
        out.update(converted)
        return out

    def _apply(self, source: str, target: str, content: Mapping[str, Any], obj: Mapping[str, Any]) -> dict[str, Any]:
        """The user's function from `source` to `target` on `content` (no metadata): the target's content."""
        spoke = self._spokes[target] if source == self.info.version else self._spokes[source]
        fn = spoke.from_hub if source == self.info.version else spoke.to_hub
        src_model, dst_model = self._models[source], self._models[target]
        typed = self._typed(src_model, content, obj)
        try:
            result = fn(typed)
        except Exception as e:
            raise ConversionError(f"{_where(obj)}: converting {self.info.kind} {source} -> {target} "
                                  f"({getattr(fn, '__qualname__', fn)}) failed: {type(e).__name__}: {e}") from e
        if not isinstance(result, dst_model):
            raise ConversionError(f"{_where(obj)}: {getattr(fn, '__qualname__', fn)} returned "
                                  f"{type(result).__name__}, expected {dst_model.__name__}")
        return _strip(result.to_object())

    def _content(self, version: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """`obj`'s content as its model normalizes it (what a round trip is compared on)."""
        return _strip(self._typed(self._models[version], _strip(obj), obj).to_object())

    def _typed(self, model: type[CustomResource], content: Mapping[str, Any], obj: Mapping[str, Any]) -> Any:
        info = declared(model)
        try:
            return model.from_object({"apiVersion": info.api_version, "kind": info.kind,
                                      "metadata": _plain(obj.get("metadata") or {}), **content})
        except ValueError as e:
            raise ConversionError(f"{_where(obj)}: not a valid {model.__name__}: {e}") from None

    def _restore(self, converted: dict[str, Any], saved: Any, source: str, target: str,
                 src_content: dict[str, Any], obj: Mapping[str, Any]) -> dict[str, Any]:
        """`converted` with every field of `saved` put back that `source` cannot see."""
        if not isinstance(saved, dict):
            return converted

        def invisible(candidate: dict[str, Any]) -> bool:
            try:
                return self._apply(target, source, candidate, obj) == src_content
            except ConversionError:
                return False

        if saved != converted and invisible(saved):
            return saved
        out = converted
        for path in sorted(set(_leaves(saved)) | set(_leaves(converted))):
            want = _get(saved, path)
            if want == _get(out, path):
                continue
            trial = _set(out, path, want)
            if invisible(trial):
                out = trial
        return out

    @staticmethod
    def _saved(raw: Any, obj: Mapping[str, Any]) -> dict[str, Any]:
        if raw is None:
            return {}
        try:
            saved = orjson.loads(raw)
        except (orjson.JSONDecodeError, TypeError):
            raise ConversionError(f"{_where(obj)}: annotation {CONVERSION_ANNOTATION} is not JSON") from None
        if not isinstance(saved, dict):
            raise ConversionError(f"{_where(obj)}: annotation {CONVERSION_ANNOTATION} must hold a JSON object")
        return {k.rpartition("/")[2]: v for k, v in saved.items()}

    def __repr__(self) -> str:
        return f"Versions({self.hub.__name__}, {', '.join(s.model.__name__ for s in self._spokes.values())})"


def _where(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p) or "(no name)"
    return f"{obj.get('kind', '?')} {name} ({obj.get('apiVersion', '?')})"


def _strip(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in _TYPE_META}


Path = tuple[str, ...]


def _leaves(value: Any, path: Path = ()) -> Iterator[Path]:
    """Paths to the non-object values in `value` (lists are leaves: they are compared whole)."""
    if isinstance(value, dict) and value:
        for key, sub in value.items():
            yield from _leaves(sub, (*path, key))
    elif path:
        yield path


def _get(value: Any, path: Path) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _set(value: dict[str, Any], path: Path, new: Any) -> dict[str, Any]:
    """A copy of `value` with `path` set to `new` (removed when `new` is missing), parents created."""
    out = dict(value)
    head, rest = path[0], path[1:]
    if not rest:
        if new is _MISSING:
            out.pop(head, None)
        else:
            out[head] = new
        return out
    child = out.get(head)
    out[head] = _set(child if isinstance(child, dict) else {}, rest, new)
    return out
