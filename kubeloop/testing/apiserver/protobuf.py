"""Decoding of Kubernetes protobuf request bodies for the few kinds `kubectl create <kind>` sends.

kubectl's typed clients send built-in objects as `application/vnd.kubernetes.protobuf`. The emulator
stores JSON, so it decodes the wire format for the kinds kubectl's imperative commands create most
(namespaces, configmaps, secrets, service accounts) into the JSON shape; other kinds stay 415.
Responses are always JSON, which every client accepts.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .shapes import Obj

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """The body is not a decodable Kubernetes protobuf message."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ProtobufError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) for every field of one message."""
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        val: Any
        if wt == 0:
            val, i = _varint(buf, i)
        elif wt == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ProtobufError("truncated field")
            val, i = buf[i:i + n], i + n
        elif wt == 1:
            val, i = buf[i:i + 8], i + 8
        elif wt == 5:
            val, i = buf[i:i + 4], i + 4
        else:
            raise ProtobufError(f"unsupported wire type {wt}")
        out.append((num, wt, val))
    return out


def _str(v: bytes) -> str:
    return v.decode("utf-8")


def _b64(v: bytes) -> str:
    return base64.b64encode(v).decode()


def _raw(v: bytes) -> bytes:
    return v


@dataclass(frozen=True)
class _Field:
    """How one field number lands in the JSON object: `scalar` (last wins), `nonempty` (set only when
    truthy: gogo emits empty strings and messages), `list` (repeated), `map` (repeated key/value entries)."""

    name: str
    value: Callable[[bytes], Any] = _str
    shape: Literal["scalar", "nonempty", "list", "map"] = "scalar"


def _message(schema: dict[int, _Field]) -> Callable[[bytes], Obj]:
    """A decoder for one message type described by a field table; unknown fields are skipped."""
    def decode_message(buf: bytes) -> Obj:
        obj: Obj = {}
        for num, _wt, val in fields(buf):
            f = schema.get(num)
            if f is None:
                continue
            if f.shape == "map":
                entry = {n: v for n, _w, v in fields(val)}
                obj.setdefault(f.name, {})[_str(entry.get(1, b""))] = f.value(entry.get(2, b""))
                continue
            v = f.value(val)
            if f.shape == "list":
                obj.setdefault(f.name, []).append(v)
            elif f.shape == "scalar" or v:
                obj[f.name] = v
        return obj
    return decode_message


object_meta = _message({
    1: _Field("name", shape="nonempty"),
    2: _Field("generateName", shape="nonempty"),
    3: _Field("namespace", shape="nonempty"),
    5: _Field("uid", shape="nonempty"),
    6: _Field("resourceVersion", shape="nonempty"),
    11: _Field("labels", shape="map"),
    12: _Field("annotations", shape="map"),
    14: _Field("finalizers", shape="list"),
})
_METADATA = _Field("metadata", object_meta, "nonempty")

DECODERS: dict[tuple[str, str], Callable[[bytes], Obj]] = {
    ("v1", "ConfigMap"): _message({
        1: _METADATA,
        2: _Field("data", shape="map"),
        3: _Field("binaryData", _b64, "map"),
        4: _Field("immutable", bool),
    }),
    ("v1", "Secret"): _message({
        1: _METADATA,
        2: _Field("data", _b64, "map"),
        3: _Field("type"),
        4: _Field("stringData", shape="map"),
        5: _Field("immutable", bool),
    }),
    ("v1", "Namespace"): _message({
        1: _METADATA,
        2: _Field("spec", _message({1: _Field("finalizers", shape="list")}), "nonempty"),
    }),
    ("v1", "ServiceAccount"): _message({1: _METADATA}),
}

_TYPE_META = _message({1: _Field("apiVersion"), 2: _Field("kind")})
_UNKNOWN = _message({1: _Field("typeMeta", _TYPE_META), 2: _Field("raw", _raw)})


def decode(body: bytes) -> Obj:
    """The JSON-shaped object in a `k8s\\x00` protobuf envelope; ProtobufError when unsupported."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing protobuf envelope")
    envelope = _UNKNOWN(body[len(MAGIC):])
    type_meta = envelope.get("typeMeta", {})
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    decoder = DECODERS.get((api_version, kind))
    if decoder is None:
        raise ProtobufError(f"protobuf bodies of {api_version}/{kind} are not supported by the emulator")
    obj = decoder(envelope.get("raw", b""))
    obj["apiVersion"], obj["kind"] = api_version, kind
    obj.setdefault("metadata", {})
    return obj
