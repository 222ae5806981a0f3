"""Decoding of Kubernetes protobuf request bodies for the few kinds `kubectl create <kind>` sends.

kubectl's typed clients send built-in objects as `application/vnd.kubernetes.protobuf`. The emulator
stores JSON, so it decodes the wire format for the kinds kubectl's imperative commands create most
(namespaces, configmaps, secrets, service accounts) into the JSON shape; other kinds stay 415.
Responses are always JSON, which every client accepts.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"

Obj = dict[str, Any]


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


def _map(entries: list[bytes], value: Callable[[bytes], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for e in entries:
        k = v = b""
        for num, _wt, val in fields(e):
            if num == 1:
                k = val
            elif num == 2:
                v = val
        out[_str(k)] = value(v)
    return out


def _b64(v: bytes) -> str:
    return base64.b64encode(v).decode()


_META_STRINGS = {1: "name", 2: "generateName", 3: "namespace", 5: "uid", 6: "resourceVersion"}


def object_meta(buf: bytes) -> Obj:
    meta: Obj = {}
    labels: list[bytes] = []
    annotations: list[bytes] = []
    finalizers: list[str] = []
    for num, _wt, val in fields(buf):
        if num in _META_STRINGS and val:
            meta[_META_STRINGS[num]] = _str(val)
        elif num == 11:
            labels.append(val)
        elif num == 12:
            annotations.append(val)
        elif num == 14:
            finalizers.append(_str(val))
    if labels:
        meta["labels"] = _map(labels, _str)
    if annotations:
        meta["annotations"] = _map(annotations, _str)
    if finalizers:
        meta["finalizers"] = finalizers
    return meta


def _configmap(buf: bytes) -> Obj:
    obj: Obj = {}
    data: list[bytes] = []
    binary: list[bytes] = []
    for num, _wt, val in fields(buf):
        if num == 1:
            obj["metadata"] = object_meta(val)
        elif num == 2:
            data.append(val)
        elif num == 3:
            binary.append(val)
        elif num == 4:
            obj["immutable"] = bool(val)
    if data:
        obj["data"] = _map(data, _str)
    if binary:
        obj["binaryData"] = _map(binary, _b64)
    return obj


def _secret(buf: bytes) -> Obj:
    obj: Obj = {}
    data: list[bytes] = []
    string_data: list[bytes] = []
    for num, _wt, val in fields(buf):
        if num == 1:
            obj["metadata"] = object_meta(val)
        elif num == 2:
            data.append(val)
        elif num == 3:
            obj["type"] = _str(val)
        elif num == 4:
            string_data.append(val)
        elif num == 5:
            obj["immutable"] = bool(val)
    if data:
        obj["data"] = _map(data, _b64)
    if string_data:
        obj["stringData"] = _map(string_data, _str)
    return obj


def _namespace(buf: bytes) -> Obj:
    obj: Obj = {}
    for num, _wt, val in fields(buf):
        if num == 1:
            obj["metadata"] = object_meta(val)
        elif num == 2:
            fins = [_str(v) for n, _w, v in fields(val) if n == 1]
            if fins:
                obj["spec"] = {"finalizers": fins}
    return obj


def _metadata_only(buf: bytes) -> Obj:
    obj: Obj = {}
    for n, _w, v in fields(buf):
        if n == 1:
            obj["metadata"] = object_meta(v)
    return obj


DECODERS: dict[tuple[str, str], Callable[[bytes], Obj]] = {
    ("v1", "ConfigMap"): _configmap,
    ("v1", "Secret"): _secret,
    ("v1", "Namespace"): _namespace,
    ("v1", "ServiceAccount"): _metadata_only,
}


def decode(body: bytes) -> Obj:
    """The JSON-shaped object in a `k8s\\x00` protobuf envelope; ProtobufError when unsupported."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing protobuf envelope")
    api_version = kind = ""
    raw = b""
    for num, _wt, val in fields(body[len(MAGIC):]):
        if num == 1:
            for n, _w, v in fields(val):
                if n == 1:
                    api_version = _str(v)
                elif n == 2:
                    kind = _str(v)
        elif num == 2:
            raw = val
    decoder = DECODERS.get((api_version, kind))
    if decoder is None:
        raise ProtobufError(f"protobuf bodies of {api_version}/{kind} are not supported by the emulator")
    obj = decoder(raw)
    obj["apiVersion"], obj["kind"] = api_version, kind
    obj.setdefault("metadata", {})
    return obj
