"""Property tests for conversions between versions: `check_lossless(VERSIONS)` in a test.

    from kubeloop.testing import check_lossless

    def test_widget_conversion_is_lossless() -> None:
        check_lossless(VERSIONS)           # hypothesis: every version -> every other -> back

Objects are generated from each version's structural schema (the one its CRD carries, so every
object is one the API server would accept: types, enums, bounds, lengths, patterns, required
fields, list-map keys), with names, labels and annotations. For every version X and every other
version Y, converting X -> Y -> X must give back X as its model reads it: spoke -> hub -> spoke and
hub -> spoke -> hub, including what the other version cannot express (kept in the conversion
annotation). A failure is shrunk by hypothesis to a small object and reported with both versions.
"""

from __future__ import annotations

import datetime
import re
import string
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if TYPE_CHECKING:
    from kubeloop.resources import CustomResource, Versions

__all__ = ["check_lossless", "resource_objects"]

_LABEL = st.from_regex(re.compile(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?"), fullmatch=True)
_TEXT = st.text(string.ascii_letters + string.digits + " -_.", max_size=12)


def resource_objects(model: type[CustomResource], *, namespace: str | None = "default") -> st.SearchStrategy[dict[str, Any]]:
    """Objects of `model`'s version as the API server would store them, generated from its schema."""
    from kubeloop.resources import resource_info

    info = resource_info(model)
    schema = model.openapi_schema()
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in ("apiVersion", "kind", "metadata")}
    body = _object({"type": "object", "properties": props, "required": schema.get("required") or []})
    meta = st.fixed_dictionaries({"name": _LABEL}, optional={
        "labels": st.dictionaries(_LABEL, _LABEL, min_size=1, max_size=2),
        "annotations": st.dictionaries(st.sampled_from(["note", "example.com/owner"]), _TEXT, min_size=1, max_size=2),
    })

    def build(parts: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
        content, metadata = parts
        if namespace is not None and info.scope == "Namespaced":
            metadata = {**metadata, "namespace": namespace}
        return {"apiVersion": info.api_version, "kind": info.kind, "metadata": metadata, **content}

    def valid(obj: dict[str, Any]) -> bool:
        try:
            model.from_object(obj)
        except ValueError:
            return False  # the model is stricter than its schema (a validator): not an object it reads
        return True

    return st.tuples(body, meta).map(build).filter(valid)


def check_lossless(versions: Versions, *, max_examples: int = 100) -> None:
    """Assert (with hypothesis) that every version converts to every other and back unchanged."""
    models = versions.models
    for source in models:
        targets = [m for m in models if m is not source]
        if targets:
            _round_trips(versions, source, targets, max_examples)


def _round_trips(versions: Versions, source: type[CustomResource], targets: list[type[CustomResource]],
                 max_examples: int) -> None:
    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(obj=resource_objects(source), target=st.sampled_from(targets))
    def round_trip(obj: dict[str, Any], target: type[CustomResource]) -> None:
        there = versions.convert(obj, target.__resource__.api_version)
        back = versions.convert(there, source.__resource__.api_version)
        want = source.from_object(obj).to_object()
        got = source.from_object(back).to_object()
        assert got == want, (
            f"{source.__name__} -> {target.__name__} -> {source.__name__} is not lossless:\n"
            f"  start: {want}\n  as {target.__name__}: {there}\n  back:  {got}")
        assert back.get("metadata") == obj.get("metadata"), (
            f"metadata changed in {source.__name__} -> {target.__name__} -> back: "
            f"{obj.get('metadata')} -> {back.get('metadata')}")

    round_trip()


# -- structural schema -> strategy ---------------------------------------------------------------


def _node(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, 100), _TEXT)
    kind = schema.get("type")
    if kind == "object" or (kind is None and schema.get("x-kubernetes-preserve-unknown-fields")):
        return _object(schema)
    if kind == "array":
        return _array(schema)
    if kind == "string":
        return _string(schema)
    if kind == "integer":
        return _number(schema, integer=True)
    if kind == "number":
        return _number(schema, integer=False)
    if kind == "boolean":
        return st.booleans()
    return st.none()


def _object(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    props: Mapping[str, Any] = schema.get("properties") or {}
    if props:
        required = set(schema.get("required") or ())
        return st.fixed_dictionaries({k: _node(v) for k, v in props.items() if k in required},
                                     optional={k: _node(v) for k, v in props.items() if k not in required})
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        return st.dictionaries(_LABEL, _node(extra), max_size=3)
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return st.dictionaries(_LABEL, st.one_of(st.integers(-5, 5), _TEXT, st.booleans()), max_size=3)
    return st.just({})


def _array(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    items = schema.get("items") or {}
    lo, hi = int(schema.get("minItems", 0)), int(schema.get("maxItems", 4))
    hi = max(lo, min(hi, lo + 4))
    kind = schema.get("x-kubernetes-list-type")
    if kind == "set":
        return st.lists(_node(items), min_size=lo, max_size=hi, unique=True)
    if kind == "map":
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        return st.lists(_node(items), min_size=lo, max_size=hi,
                        unique_by=lambda item: tuple(repr(item.get(k)) for k in keys))
    return st.lists(_node(items), min_size=lo, max_size=hi)


def _string(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    if schema.get("format") == "date-time":
        return st.datetimes(min_value=datetime.datetime(2000, 1, 1), max_value=datetime.datetime(2100, 1, 1)).map(
            lambda d: d.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ"))
    lo, hi = int(schema.get("minLength", 0)), schema.get("maxLength")
    pattern = schema.get("pattern")
    if pattern:
        out: st.SearchStrategy[str] = st.from_regex(pattern, fullmatch=True)
    else:
        out = st.text(string.ascii_letters + string.digits + "-_.: ", min_size=lo,
                      max_size=min(int(hi), lo + 16) if hi is not None else lo + 16)
    return out.filter(lambda s: len(s) >= lo and (hi is None or len(s) <= int(hi)))


def _number(schema: Mapping[str, Any], *, integer: bool) -> st.SearchStrategy[Any]:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if integer:
        lo_i = None if lo is None else int(lo) + (1 if schema.get("exclusiveMinimum") else 0)
        hi_i = None if hi is None else int(hi) - (1 if schema.get("exclusiveMaximum") else 0)
        out: st.SearchStrategy[Any] = st.integers(
            lo_i if lo_i is not None else -(10**6), hi_i if hi_i is not None else 10**6)
    else:
        out = st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False,
                        exclude_min=bool(schema.get("exclusiveMinimum")),
                        exclude_max=bool(schema.get("exclusiveMaximum")), width=32)
    step = schema.get("multipleOf")
    if step:
        out = out.filter(lambda n: (n / step) == int(n / step))
    return out
