"""Request and response formats: body decoding, Accept negotiation and object rendering.

Rendering reuses each stored object's pre-encoded bytes: a full object is `{"kind":..,"apiVersion":..,`
glued in front of the stored body, a built-in list item is the stored body as it is, and a list is
the items joined with commas. Only conversions (Events between API groups) and metadata-only
renderings encode anew.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
import yaml

from . import errors
from .errors import StatusError
from .registry import is_identity
from .resources import ServedResource
from .shapes import Obj
from .storage import Stored

try:
    _YamlLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _YamlLoader = yaml.SafeLoader

JSON = "json"
YAML = "yaml"
POM = "pom"  # PartialObjectMetadata / PartialObjectMetadataList
#: a meta.k8s.io Table in v1 or v1beta1 (`tables.py`)
TABLES = {"v1": "table", "v1beta1": "table-v1beta1"}

PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "smp",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}


def media_type(header: str | None) -> str:
    return (header or "").split(";")[0].strip().lower()


def decode_yaml(body: bytes) -> Any:
    """A YAML body (apply patches, YAML creates); JSON, what clients send, skips the YAML parser."""
    if body[:1] in (b"{", b"["):
        obj = _json_read_as_yaml(body)
        if obj is not _NOT_PLAIN:
            return obj
    try:
        return yaml.load(body, Loader=_YamlLoader)
    except yaml.YAMLError as e:
        raise errors.bad_request(f"error converting YAML to JSON: {e}") from None


_NOT_PLAIN = object()
_NOT_YAML_PRINTABLE = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbf[\xbe\xbf]")


def _json_read_as_yaml(body: bytes) -> Any:
    """`body` decoded by orjson when that is what the YAML parser would return, else `_NOT_PLAIN`.

    They differ on floats (YAML 1.1 reads `1e3` as a string, orjson big integers as floats),
    `\\u` escapes (YAML refuses surrogate pairs), characters YAML refuses (DEL, C1 controls,
    U+FFFE/U+FFFF) or reads as line breaks (NEL, U+2028, U+2029) and keys over 1022 characters as written (YAML refuses them; a
    decoded key of at most 511 characters was written in at most 1022).
    """
    if b"\\u" in body or _NOT_YAML_PRINTABLE.search(body):
        return _NOT_PLAIN
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _NOT_PLAIN
    return obj if _plain(obj) else _NOT_PLAIN


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(len(k) <= 511 and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return not isinstance(value, float)


def decode_object(body: bytes, ctype: str, info: ServedResource) -> Obj:
    """The request body of a create/update as a dict (JSON or YAML); 415 for other types."""
    mt = media_type(ctype)
    if mt in ("application/yaml", "application/x-yaml", "text/yaml"):
        obj = decode_yaml(body) if body.strip() else None
    elif mt == "application/vnd.kubernetes.protobuf":
        from .protobuf import ProtobufError, decode

        try:
            obj = decode(body)
        except (ProtobufError, UnicodeDecodeError):
            raise StatusError(415, "UnsupportedMediaType",
                              "the body of the request was in an unknown format - accepted media types include: "
                              "application/json, application/yaml") from None
    elif mt in ("application/json", "", "*/*"):
        try:
            obj = orjson.loads(body) if body.strip() else None
        except orjson.JSONDecodeError as e:
            detail = go_json_error(body, e)
            if not detail.startswith("unexpected end"):  # that one carries the summary already
                detail += f" ({summarize(body)})"
            raise errors.bad_request(
                f"the object provided is unrecognized (must be of type {info.kind}): couldn't get version/kind; "
                f"json parse error: {detail}") from None
    else:
        raise StatusError(415, "UnsupportedMediaType",
                          "the body of the request was in an unknown format - accepted media types include: "
                          "application/json, application/yaml, application/vnd.kubernetes.protobuf")
    if obj is None:
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {info.kind}): couldn't get version/kind; "
            "json parse error: unexpected end of JSON input (<empty>)")
    if not isinstance(obj, dict):
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {info.kind}): couldn't get version/kind; "
            "json parse error: json: cannot unmarshal into Go value of type struct")
    check_kind(obj, info)
    return obj


def summarize(body: bytes, limit: int = 30) -> str:
    """`summarizeData`: how kube-apiserver quotes an undecodable body in its 400 (text when it
    starts like JSON, hex otherwise, cut at `limit` bytes)."""
    if not body:
        return "<empty>"
    cut = body[:limit]
    text = cut.decode("utf-8", "replace") if body[:1] == b"{" else cut.hex()
    return text + " ..." if len(body) > limit else text


def go_json_error(body: bytes, e: orjson.JSONDecodeError) -> str:
    """Go's encoding/json wording for a syntax error (what kube-apiserver's messages carry)."""
    if e.pos >= len(body.rstrip()) or "end of" in e.msg:
        shown = body[:30].decode("utf-8", "replace")
        return f"unexpected end of JSON input ({shown} ...)" if len(body) > 30 else \
            f"unexpected end of JSON input ({shown})"
    ch = body[e.pos:e.pos + 1].decode("utf-8", "replace")
    if "key" in e.msg:
        return f"invalid character '{ch}' looking for beginning of object key string"
    return f"invalid character '{ch}' looking for beginning of value"


def check_kind(obj: Obj, info: ServedResource) -> None:
    """A body of another kind or version: 400 for built-ins (the scheme rejects it); custom resources
    get a 422 from their strategy's validation instead."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if info.custom:
        if api_version not in (None, "", info.api_version):
            raise errors.bad_request(f'{kind} in version "{api_version}" cannot be handled as a {info.kind}')
        return
    if api_version not in (None, "") and api_version != info.api_version:
        raise errors.bad_request(
            f'{kind or info.kind} in version "{api_version}" cannot be handled as a {info.kind}: no kind '
            f'"{kind or info.kind}" is registered for version "{api_version}" in scheme '
            '"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"')
    if kind not in (None, "") and kind != info.kind:
        raise errors.bad_request(
            f'{kind} in version "{api_version or info.version}" cannot be handled as a {info.kind}: converting '
            f"(v1.{kind}) to (core.{info.kind}): unknown conversion")


def negotiate(accept: str | None, *, is_list: bool, is_watch: bool = False, kind: str = "") -> str:
    """JSON, YAML or POM for the Accept header; 406 for what the real server refuses."""
    if not accept:
        return JSON
    table_refused = False
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        mt = fields[0].lower()
        params = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        as_ = params.get("as")
        if mt not in ("application/json", "application/yaml", "*/*", "application/*"):
            continue
        if as_:
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and params.get("g") == "meta.k8s.io":
                if is_watch:
                    return POM
                if as_ == "PartialObjectMetadata" and is_list:
                    raise errors.not_acceptable(
                        f"you requested PartialObjectMetadata, but the requested object is a list (*core.{kind}List)")
                if as_ == "PartialObjectMetadataList" and not is_list:
                    raise errors.not_acceptable(
                        f"you requested PartialObjectMetadataList, but the requested object is not a list "
                        f"(*core.{kind})")
                return POM
            if as_ == "Table" and params.get("g") == "meta.k8s.io" and not is_watch:
                if params.get("v") in TABLES:
                    return TABLES[params["v"]]
                table_refused = True
            continue  # others (and a Table of a watch) are not served: try the next media type
        return YAML if mt == "application/yaml" else JSON
    if table_refused:
        raise StatusError(406, "NotAcceptable", "only the following media types are accepted: application/json, "
                                                "application/yaml, application/vnd.kubernetes.protobuf")
    raise StatusError(406, "NotAcceptable", "406: Not Acceptable", {})


def object_renderer(info: ServedResource, mode: str) -> Callable[[Stored], bytes]:
    """Full JSON bytes of a stored object as served through `info` (kind/apiVersion included)."""
    if mode == POM:
        def render_pom(st: Stored) -> bytes:
            meta = st.obj["metadata"]
            return orjson.dumps({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
        return render_pom
    prefix = b'{"kind":' + orjson.dumps(info.kind) + b',"apiVersion":' + orjson.dumps(info.api_version) + b","
    if is_identity(info.strategy):
        def render(st: Stored) -> bytes:
            return prefix + st.body[1:]
        return render

    def render_converted(st: Stored) -> bytes:
        obj = dict(st.obj)
        obj = info.strategy.decorate(info, info.strategy.from_storage(info, obj))
        body = orjson.dumps({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
        return prefix + body[1:]
    return render_converted


def item_renderer(info: ServedResource, mode: str) -> Callable[[Stored], bytes]:
    """List item bytes: built-in lists carry no kind/apiVersion on items, custom resource lists do."""
    if mode == POM or info.list_items_have_kind or not is_identity(info.strategy):
        full = object_renderer(info, mode)
        if mode == POM or info.list_items_have_kind:
            return full
        strip_len = len(b'{"kind":' + orjson.dumps(info.kind) + b',"apiVersion":' + orjson.dumps(info.api_version)
                        + b",")
        return lambda st: b"{" + full(st)[strip_len:]
    return lambda st: st.body


def render_list(info: ServedResource, mode: str, items: list[Stored], rv: int, cont: str,
                remaining: int | None) -> bytes:
    meta: Obj = {"resourceVersion": str(rv)}
    if cont:
        meta["continue"] = cont
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    if mode == POM:
        head = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    else:
        head = {"kind": info.list_kind, "apiVersion": info.api_version, "metadata": meta}
    render = item_renderer(info, mode)
    return orjson.dumps(head)[:-1] + b',"items":[' + b",".join([render(st) for st in items]) + b"]}"


def to_yaml(body: bytes) -> bytes:
    return yaml.safe_dump(orjson.loads(body), sort_keys=False).encode()
