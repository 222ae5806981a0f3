"""A small typed description of built-in kinds, used the way kube-apiserver's JSON decoder uses
Go structs: values of the wrong JSON type are a 400 BadRequest (not 422), unknown fields are
dropped silently, `null` means "unset", and time values are parsed and re-rendered in UTC
(`metav1.Time` at second precision, `metav1.MicroTime` needing exactly six fractional digits).

Only the fields the emulator models are described; a struct marked `open` keeps fields it does
not describe (so nothing a client sends for an unmodelled part is lost). A field marked `omitempty`
is dropped when it holds its zero value (0, false, "", an empty map or list), as Go's encoder drops
a non-pointer `omitempty` field: the real server never returns `data: {}` or `minReadySeconds: 0`,
so a PUT that leaves them out is not a change. Pointer fields (`*int32 replicas`) keep their zero.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

import orjson

from kubeloop.meta import go_json_numbers

from .. import quantity
from ..errors import StatusError
from ..govalues import json_kind
from ..shapes import copy_json
from .meta import GO_JSON_TYPES


class DecodeError(Exception):
    """The detail of a decoding failure (becomes `<Kind> in version ... cannot be handled as ...`)."""


#: `Node.fill` of a field Go leaves out of its JSON when unset (a pointer, or `omitempty`)
NO_FILL: Any = object()


@dataclass(frozen=True)
class Node:
    """A scalar: kind is string, int32, int64, bool, float64, time, microtime, bytes, intorstr,
    quantity or any."""

    kind: str
    #: Go `omitempty` on a non-pointer field: the zero value is not kept
    omitempty: bool = field(default=False, kw_only=True)
    #: the Go type decoding errors name, when it is not the one `kind` implies (`v1.Protocol`)
    go: str = field(default="", kw_only=True)
    #: what Go's encoder writes for the field when it holds its zero value and the body left it
    #: out (`""` for a string without omitempty, null for a zero `metav1.Time`, `{}` for a struct);
    #: `NO_FILL`: nothing (described fields of hand-written structs never fill)
    fill: Any = field(default=NO_FILL, kw_only=True, compare=False)

    @property
    def go_type(self) -> str:
        if self.go:
            return self.go
        return {"time": "v1.Time", "microtime": "v1.MicroTime", "bytes": "[]uint8",
                "intorstr": "intstr.IntOrString", "quantity": "resource.Quantity",
                "any": "interface {}"}.get(self.kind, self.kind)


@dataclass(frozen=True)
class Struct(Node):
    go_name: str = ""
    fields: dict[str, Node] = field(default_factory=dict)
    open: bool = False
    #: the fields (and their zero values) Go always encodes: filled in when a body leaves them out
    fills: Sequence[tuple[str, Any]] = field(default=(), compare=False)

    @property
    def go_type(self) -> str:
        return self.go or "v1." + self.go_name


@dataclass(frozen=True)
class Collection(Node):
    """A map (kind "map", string keys) or list (kind "list") of `elem`."""

    elem: Node = field(default_factory=lambda: Node("string"))

    @property
    def go_type(self) -> str:
        return self.go or ("map[string]" if self.kind == "map" else "[]") + self.elem.go_type


def struct(go_name: str, open: bool = False, **fields: Node) -> Struct:
    return Struct("struct", go_name, fields, open)


def map_of(value: Node, omitempty: bool = True) -> Collection:
    return Collection("map", value, omitempty=omitempty)


def list_of(item: Node, omitempty: bool = True) -> Collection:
    return Collection("list", item, omitempty=omitempty)


def is_zero(value: Any) -> bool:
    """Go's `omitempty` test for a decoded JSON value (false, 0, "", {} and [])."""
    if isinstance(value, bool):
        return not value
    return value == 0 or value == "" or value == {} or value == []


STRING = Node("string", omitempty=True)  # nearly every Go string field is `omitempty`
INT32 = Node("int32")  # a pointer (`*int32`) or a field without omitempty: 0 is kept
INT64 = Node("int64")
BOOL = Node("bool")
OMIT_INT32 = Node("int32", omitempty=True)
OMIT_INT64 = Node("int64", omitempty=True)
OMIT_BOOL = Node("bool", omitempty=True)
FLOAT = Node("float64")
TIME = Node("time")
MICROTIME = Node("microtime")
BYTES = Node("bytes")
INT_OR_STRING = Node("intorstr")
QUANTITY = Node("quantity")
ANY = Node("any")


# -- time formats -------------------------------------------------------------------------------

_TIME_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(.*)", re.DOTALL)
RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"


def _parse_tz(rest: str, text: str, layout: str) -> timezone | None:
    if rest in ("Z", "z"):
        return UTC
    m = re.fullmatch(r"([+-])(\d{2}):(\d{2})", rest)
    if not m:
        raise DecodeError(f'parsing time "{text}" as "{layout}": cannot parse "{rest}" as "Z07:00"')
    sign = 1 if m.group(1) == "+" else -1
    return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))


def parse_time(text: str, micro: bool) -> datetime:
    """Parse like Go's `time.Parse(RFC3339[Micro])` (MicroTime needs exactly 6 fractional digits)."""
    layout = RFC3339_MICRO if micro else RFC3339
    m = _TIME_RE.fullmatch(text)
    if not m:
        raise DecodeError(f'parsing time "{text}" as "{layout}": cannot parse "{text}" as "2006"')
    rest = m.group(7)
    frac = ""
    if micro:
        fm = re.match(r"\.(\d+)", rest)
        if not fm or len(fm.group(1)) != 6:
            raise DecodeError(f'parsing time "{text}" as "{layout}": cannot parse "{rest}" as ".000000"')
        frac, rest = fm.group(1), rest[fm.end():]
    else:
        fm = re.match(r"\.(\d+)", rest)
        if fm:
            frac, rest = fm.group(1), rest[fm.end():]
    tz = _parse_tz(rest, text, layout)
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    try:
        dt = datetime(year, month, day, hour, minute, second, int((frac + "000000")[:6] or 0), tzinfo=tz)
    except ValueError as e:
        raise DecodeError(f'parsing time "{text}": {e}') from None
    return dt.astimezone(UTC)


@lru_cache(maxsize=4096)
def _normal_time(text: str, micro: bool) -> str:
    """A decoded time field as the server writes it back (UTC, Go's layout). Every write decodes
    the object's timestamps again (creationTimestamp, managedFields times), mostly the same few
    strings: cached (a malformed time raises each time: exceptions are not cached)."""
    dt = parse_time(text, micro)
    return format_micro_time(dt) if micro else format_time(dt)


def format_time(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def check_base64(text: str) -> None:
    """Go's `base64.StdEncoding` rules (newlines ignored)."""
    cleaned = text.replace("\r", "").replace("\n", "")
    try:
        base64.b64decode(cleaned, validate=True)
        return
    except (binascii.Error, ValueError):
        pass
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, ch in enumerate(cleaned):
        if ch not in alphabet:
            if ch == "=" and i >= len(cleaned) - 2 and len(cleaned) % 4 == 0:
                continue
            raise DecodeError(f"illegal base64 data at input byte {i}")
    raise DecodeError(f"illegal base64 data at input byte {len(cleaned) - len(cleaned) % 4}")


# -- decoding -----------------------------------------------------------------------------------

def _type_error(value: Any, node: Node, struct_name: str, path: str) -> DecodeError:
    jt = "object" if value is None else GO_JSON_TYPES[json_kind(value)]
    if jt == "number" and node.kind in ("int32", "int64", "intorstr"):
        jt = f"number {value}"
    return DecodeError(f"json: cannot unmarshal {jt} into Go struct field {struct_name}.{path} of type {node.go_type}")


def decode_value(node: Node, value: Any, struct_name: str, path: str) -> Any:
    """Check and normalize one value; returns the value to keep."""
    k = node.kind
    if k == "any":
        return value
    if isinstance(node, Struct):
        if not isinstance(value, dict):
            raise _type_error(value, node, struct_name, path)
        decode_struct(node, value, path)
        return value
    if isinstance(node, Collection) and k == "map":
        if not isinstance(value, dict):
            raise _type_error(value, node, struct_name, path)
        if node.elem.kind == "string" and all(type(v) is str for v in value.values()):
            return value  # fast path: the common map[string]string
        for key in list(value):
            v = value[key]
            if v is None:
                value[key] = "" if node.elem.kind == "string" else v
                continue
            value[key] = decode_value(node.elem, v, struct_name, path)
        return value
    if isinstance(node, Collection) and k == "list":
        if not isinstance(value, list):
            raise _type_error(value, node, struct_name, path)
        if node.elem.kind == "string" and all(type(v) is str for v in value):
            return value
        for i, v in enumerate(value):
            if v is not None:
                value[i] = decode_value(node.elem, v, struct_name, path)
        return value
    if k == "string":
        if not isinstance(value, str):
            raise _type_error(value, node, struct_name, path)
        return value
    if k in ("int32", "int64"):
        if isinstance(value, bool) or not isinstance(value, int):  # Go rejects 1.0 as well
            raise _type_error(value, node, struct_name, path)
        return value
    if k == "bool":
        if not isinstance(value, bool):
            raise _type_error(value, node, struct_name, path)
        return value
    if k == "float64":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(value, node, struct_name, path)
        return go_json_numbers(value)  # Go writes float64 1.0 as `1`
    if k == "intorstr":
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise _type_error(value, node, struct_name, path)
        return value
    if k == "quantity":
        try:
            return quantity.normalize(value)  # written back in canonical form: 1.5 -> "1500m"
        except quantity.QuantityError as e:
            raise DecodeError(str(e)) from None
    if k in ("time", "microtime"):
        if not isinstance(value, str):
            raise _type_error(value, node, struct_name, path)
        return _normal_time(value, k == "microtime")
    if k == "bytes":
        if not isinstance(value, str):
            raise _type_error(value, node, struct_name, path)
        check_base64(value)
        return value
    return value


#: (node, path, JSON bytes) of values that decoded without error to exactly themselves (see `_decode_memo`)
_ALREADY_DECODED: set[tuple[int, str, bytes]] = set()
_ALREADY_DECODED_MAX = 1024
#: where values repeat from write to write (a spec, a status, managedFields), so remembering pays
_MEMO_PATHS = frozenset(("metadata.managedFields", "metadata.ownerReferences"))


def _decode_memo(node: Node, value: Any, struct_name: str, path: str) -> Any:
    """`decode_value` for a big value that is most often already decoded: an update rewrites an
    object's spec, status and managedFields as the server last stored them.

    A value whose JSON bytes once decoded without error to the same bytes is returned as it is:
    decoding is a function of the node and the value alone, and it would change nothing. Anything
    else decodes as usual (and is remembered when it turns out to be decoded already).
    """
    try:
        before = orjson.dumps(value)
    except TypeError:  # not plain JSON (an integer beyond 64 bits): no memo
        return decode_value(node, value, struct_name, path)
    if b"null" in before:  # orjson writes NaN and infinities (from a YAML body) as null too: no memo
        return decode_value(node, value, struct_name, path)
    key = (id(node), path, before)
    if key in _ALREADY_DECODED:
        return value
    value = decode_value(node, value, struct_name, path)
    if orjson.dumps(value) == before:
        if len(_ALREADY_DECODED) >= _ALREADY_DECODED_MAX:
            _ALREADY_DECODED.clear()
        _ALREADY_DECODED.add(key)
    return value


def decode_struct(node: Struct, obj: dict[str, Any], path: str = "") -> None:
    """Check, normalize and prune `obj` in place against `node`; then put in the zero values Go's
    encoder would write for the fields the body left out (`Struct.fills`)."""
    for key in list(obj):
        sub = node.fields.get(key)
        if sub is None:
            if not node.open:
                del obj[key]
            continue
        value = obj[key]
        if value is None:
            del obj[key]
            continue
        at = f"{path}.{key}" if path else key
        if type(value) in (dict, list) and ((not path and key != "metadata") or at in _MEMO_PATHS):
            value = _decode_memo(sub, value, node.go_name, at)
        else:
            value = decode_value(sub, value, node.go_name, at)
        if sub.omitempty and is_zero(value):
            del obj[key]
        else:
            obj[key] = value
    for key, zero in node.fills:
        if key not in obj:
            obj[key] = copy_json(zero) if isinstance(zero, dict | list) else zero


def decode_object(node: Struct, obj: dict[str, Any], kind: str, version: str) -> None:
    """Decode a whole request body; raise the real server's 400 for what Go's decoder rejects."""
    try:
        decode_struct(node, obj)
    except DecodeError as e:
        raise decode_failure(kind, version, str(e)) from None


class DecodeFailure(StatusError):
    """The 400 for a body the kind's types cannot hold; `detail` is the decoder's own error (a
    patch whose result cannot be decoded reports it differently, see `Registry.patch`)."""

    def __init__(self, kind: str, version: str, detail: str) -> None:
        super().__init__(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}')
        self.detail = detail


def decode_failure(kind: str, version: str, detail: str) -> StatusError:
    return DecodeFailure(kind, version, detail)


# -- common structures ---------------------------------------------------------------------------

OWNER_REFERENCE = struct("OwnerReference", apiVersion=STRING, kind=STRING, name=STRING, uid=STRING,
                         controller=BOOL, blockOwnerDeletion=BOOL)
MANAGED_FIELDS_ENTRY = struct("ManagedFieldsEntry", manager=STRING, operation=STRING, apiVersion=STRING,
                              time=TIME, fieldsType=STRING, fieldsV1=ANY, subresource=STRING)
OBJECT_META = struct(
    "ObjectMeta", name=STRING, generateName=STRING, namespace=STRING, selfLink=STRING, uid=STRING,
    resourceVersion=STRING, generation=OMIT_INT64, creationTimestamp=TIME, deletionTimestamp=TIME,
    deletionGracePeriodSeconds=INT64, labels=map_of(STRING), annotations=map_of(STRING),
    ownerReferences=list_of(OWNER_REFERENCE), finalizers=list_of(STRING), clusterName=STRING,
    managedFields=list_of(MANAGED_FIELDS_ENTRY),
)
LABEL_SELECTOR_REQUIREMENT = struct("LabelSelectorRequirement", key=STRING, operator=STRING,
                                    values=list_of(STRING))
LABEL_SELECTOR = struct("LabelSelector", matchLabels=map_of(STRING),
                        matchExpressions=list_of(LABEL_SELECTOR_REQUIREMENT))
OBJECT_REFERENCE = struct("ObjectReference", kind=STRING, namespace=STRING, name=STRING, uid=STRING,
                          apiVersion=STRING, resourceVersion=STRING, fieldPath=STRING)
CONTAINER_PORT = struct("ContainerPort", name=STRING, hostPort=OMIT_INT32, containerPort=INT32, protocol=STRING,
                        hostIP=STRING)
ENV_VAR = struct("EnvVar", open=True, name=STRING, value=STRING)
RESOURCE_REQUIREMENTS = struct("ResourceRequirements", limits=map_of(QUANTITY), requests=map_of(QUANTITY))
CONTAINER = struct(
    "Container", open=True, name=STRING, image=STRING, command=list_of(STRING), args=list_of(STRING),
    workingDir=STRING, ports=list_of(CONTAINER_PORT), env=list_of(ENV_VAR), resources=RESOURCE_REQUIREMENTS,
    terminationMessagePath=STRING, terminationMessagePolicy=STRING, imagePullPolicy=STRING,
    stdin=OMIT_BOOL, stdinOnce=OMIT_BOOL, tty=OMIT_BOOL,
)
POD_SPEC = struct(
    "PodSpec", open=True, containers=list_of(CONTAINER), initContainers=list_of(CONTAINER),
    restartPolicy=STRING, terminationGracePeriodSeconds=INT64, activeDeadlineSeconds=INT64,
    dnsPolicy=STRING, nodeSelector=map_of(STRING), serviceAccountName=STRING, serviceAccount=STRING,
    automountServiceAccountToken=BOOL, nodeName=STRING, hostNetwork=OMIT_BOOL, hostPID=OMIT_BOOL, hostIPC=OMIT_BOOL,
    hostname=STRING, subdomain=STRING, schedulerName=STRING, priorityClassName=STRING, priority=INT32,
    enableServiceLinks=BOOL, preemptionPolicy=STRING,
)
POD_TEMPLATE_SPEC = struct("PodTemplateSpec", metadata=OBJECT_META, spec=POD_SPEC)


def top_level(kind: str, **fields: Node) -> Struct:
    """The struct of a whole object: TypeMeta + metadata + the kind's fields."""
    return Struct("struct", kind, {"apiVersion": STRING, "kind": STRING, "metadata": OBJECT_META, **fields})
