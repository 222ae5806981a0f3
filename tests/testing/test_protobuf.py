"""The protobuf bodies `kubectl create configmap|secret|namespace` sends, decoded to JSON (sans-IO)."""

from __future__ import annotations

import pytest

from kubeloop.testing.apiserver.protobuf import MAGIC, ProtobufError, decode


def _field(num: int, payload: bytes) -> bytes:
    def varint(n: int) -> bytes:
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            out += bytes([b | (0x80 if n else 0)])
            if not n:
                return out
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version.encode()) + _field(2, kind.encode())
    return MAGIC + _field(1, type_meta) + _field(2, raw)


def test_configmap_with_labels_and_binary_data() -> None:
    meta = _field(1, b"foo") + _field(2, b"") + _field(11, _field(1, b"app") + _field(2, b"web"))
    raw = _field(1, meta) + _field(2, _field(1, b"a") + _field(2, b"b")) + _field(3, _field(1, b"bin") +
                                                                                 _field(2, b"\x00\x01"))
    assert decode(_envelope("v1", "ConfigMap", raw)) == {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "foo", "labels": {"app": "web"}},
        "data": {"a": "b"}, "binaryData": {"bin": "AAE="}}


def test_secret_and_unsupported_kinds() -> None:
    raw = _field(1, _field(1, b"s")) + _field(2, _field(1, b"pw") + _field(2, b"x")) + _field(3, b"Opaque")
    assert decode(_envelope("v1", "Secret", raw))["data"] == {"pw": "eA=="}
    with pytest.raises(ProtobufError):
        decode(_envelope("apps/v1", "Deployment", b""))
    with pytest.raises(ProtobufError):
        decode(b"not protobuf")
