"""`/openapi/v2` as protobuf: the OpenAPI document encoded as gnostic's `openapi.v2.Document`.

kubectl 1.24 (client-go's `DiscoveryClient.OpenAPISchema`) asks for
`application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and accepts nothing else; kube-apiserver
answers with the JSON document compiled by gnostic and marshalled with protobuf. This module does
the same from the JSON document: each message is a table of (JSON key, field number, kind), values
the schema does not model (`default`, `enum`, `example`, vendor extensions) are gnostic's `Any`
holding YAML text (JSON is YAML). Zero values are left out, as proto3 does.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import orjson

# field kinds: scalar wire formats, or the name of a message (a converter below)
_STRING, _BOOL, _DOUBLE, _INT64 = "string", "bool", "double", "int64"


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(num: int, wire: int) -> bytes:
    return _varint(num << 3 | wire)


def _len(num: int, payload: bytes) -> bytes:
    return _key(num, 2) + _varint(len(payload)) + payload


def _scalar(num: int, kind: str, value: Any) -> bytes:
    if kind == _STRING:
        return _len(num, str(value).encode()) if value != "" else b""
    if kind == _BOOL:
        return _key(num, 0) + b"\x01" if value else b""
    if kind == _DOUBLE:
        return _key(num, 1) + struct.pack("<d", float(value)) if value else b""
    if kind == _INT64:
        return _key(num, 0) + _varint(int(value)) if value else b""
    raise ValueError(kind)


Fields = tuple[tuple[str, int, str, bool], ...]  # (JSON key, number, kind, repeated)


def _message(fields: Fields, obj: dict[str, Any], vendor: int | None) -> bytes:
    out = bytearray()
    for key, num, kind, repeated in fields:
        if key not in obj:
            continue
        value = obj[key]
        values = (value if isinstance(value, list) else [value]) if repeated else [value]
        for v in values:
            if repeated and kind == _STRING:
                out += _len(num, str(v).encode())  # repeated strings keep their empty members
            elif kind in (_STRING, _BOOL, _DOUBLE, _INT64):
                out += _scalar(num, kind, v)
            else:
                out += _len(num, _CONVERT[kind](v))
    if vendor is not None:
        for k in sorted(obj):
            if k.startswith("x-"):
                out += _len(vendor, _named_any(k, obj[k]))
    return bytes(out)


def _any(value: Any) -> bytes:
    """gnostic `Any`: the value as YAML text (field 2)."""
    return _len(2, orjson.dumps(value, option=orjson.OPT_SORT_KEYS) + b"\n")


def _named_any(name: str, value: Any) -> bytes:
    return _len(1, name.encode()) + _len(2, _any(value))


def _named(items: dict[str, Any], convert: Callable[[Any], bytes], num: int = 1) -> bytes:
    out = bytearray()
    for name in sorted(items):
        if name.startswith("x-"):
            continue
        out += _len(num, _len(1, name.encode()) + _len(2, convert(items[name])))
    return bytes(out)


# ---- messages -------------------------------------------------------------------------------------------
_VALIDATIONS: Fields = (
    ("maximum", 0, _DOUBLE, False), ("exclusiveMaximum", 0, _BOOL, False), ("minimum", 0, _DOUBLE, False),
    ("exclusiveMinimum", 0, _BOOL, False), ("maxLength", 0, _INT64, False), ("minLength", 0, _INT64, False),
    ("pattern", 0, _STRING, False), ("maxItems", 0, _INT64, False), ("minItems", 0, _INT64, False),
    ("uniqueItems", 0, _BOOL, False), ("enum", 0, "Any", True), ("multipleOf", 0, _DOUBLE, False),
)


def _numbered(first: int, fields: Fields) -> Fields:
    return tuple((k, first + i, kind, rep) for i, (k, _n, kind, rep) in enumerate(fields))


def _schema(s: Any) -> bytes:
    if not isinstance(s, dict):
        return b""
    out = bytearray()
    out += _scalar(1, _STRING, s.get("$ref", ""))
    out += _scalar(2, _STRING, s.get("format", ""))
    out += _scalar(3, _STRING, s.get("title", ""))
    out += _scalar(4, _STRING, s.get("description", ""))
    if "default" in s:
        out += _len(5, _any(s["default"]))
    out += _scalar(6, _DOUBLE, s.get("multipleOf", 0))
    out += _scalar(7, _DOUBLE, s.get("maximum", 0))
    out += _scalar(8, _BOOL, s.get("exclusiveMaximum", False))
    out += _scalar(9, _DOUBLE, s.get("minimum", 0))
    out += _scalar(10, _BOOL, s.get("exclusiveMinimum", False))
    for num, key in ((11, "maxLength"), (12, "minLength")):
        out += _scalar(num, _INT64, s.get(key, 0))
    out += _scalar(13, _STRING, s.get("pattern", ""))
    for num, key in ((14, "maxItems"), (15, "minItems")):
        out += _scalar(num, _INT64, s.get(key, 0))
    out += _scalar(16, _BOOL, s.get("uniqueItems", False))
    for num, key in ((17, "maxProperties"), (18, "minProperties")):
        out += _scalar(num, _INT64, s.get(key, 0))
    for r in s.get("required") or ():
        out += _len(19, str(r).encode())
    for e in s.get("enum") or ():
        out += _len(20, _any(e))
    addl = s.get("additionalProperties")
    if isinstance(addl, dict):
        out += _len(21, _len(1, _schema(addl)))
    elif isinstance(addl, bool):
        out += _len(21, _key(2, 0) + (b"\x01" if addl else b"\x00"))
    t = s.get("type")
    if t:
        out += _len(22, b"".join(_len(1, str(x).encode()) for x in (t if isinstance(t, list) else [t])))
    items = s.get("items")
    if items is not None:
        out += _len(23, b"".join(_len(1, _schema(x)) for x in (items if isinstance(items, list) else [items])))
    for sub in s.get("allOf") or ():
        out += _len(24, _schema(sub))
    props = s.get("properties")
    if isinstance(props, dict):
        out += _len(25, _named(props, _schema))
    out += _scalar(26, _STRING, s.get("discriminator", ""))
    out += _scalar(27, _BOOL, s.get("readOnly", False))
    if "example" in s:
        out += _len(30, _any(s["example"]))
    for k in sorted(s):
        if k.startswith("x-"):
            out += _len(31, _named_any(k, s[k]))
    return bytes(out)


_NON_BODY_COMMON: Fields = (("required", 1, _BOOL, False), ("in", 2, _STRING, False),
                            ("description", 3, _STRING, False), ("name", 4, _STRING, False))


def _non_body(p: dict[str, Any]) -> bytes:
    where = p.get("in")
    if where == "query" or where == "formData":
        rest: Fields = (("allowEmptyValue", 5, _BOOL, False), ("type", 6, _STRING, False),
                        ("format", 7, _STRING, False), ("items", 8, "PrimitivesItems", False),
                        ("collectionFormat", 9, _STRING, False), ("default", 10, "Any", False),
                        *_numbered(11, _VALIDATIONS))
        body = _message(_NON_BODY_COMMON + rest, p, 23)
        return _len(3 if where == "query" else 2, body)
    rest = (("type", 5, _STRING, False), ("format", 6, _STRING, False), ("items", 7, "PrimitivesItems", False),
            ("collectionFormat", 8, _STRING, False), ("default", 9, "Any", False), *_numbered(10, _VALIDATIONS))
    body = _message(_NON_BODY_COMMON + rest, p, 22)
    return _len(4 if where == "path" else 1, body)


def _parameter_item(p: dict[str, Any]) -> bytes:
    if "$ref" in p:
        return _len(2, _scalar(1, _STRING, p["$ref"]) + _scalar(2, _STRING, p.get("description", "")))
    if p.get("in") == "body":
        body = _message((("description", 1, _STRING, False), ("name", 2, _STRING, False), ("in", 3, _STRING, False),
                         ("required", 4, _BOOL, False), ("schema", 5, "Schema", False)), p, 6)
        return _len(1, _len(1, body))
    return _len(1, _len(2, _non_body(p)))


def _primitives_items(p: dict[str, Any]) -> bytes:
    return _message((("type", 1, _STRING, False), ("format", 2, _STRING, False), ("items", 3, "PrimitivesItems", False),
                     ("collectionFormat", 4, _STRING, False), ("default", 5, "Any", False),
                     *_numbered(6, _VALIDATIONS)), p, 18)


def _response_value(r: dict[str, Any]) -> bytes:
    if "$ref" in r:
        return _len(2, _scalar(1, _STRING, r["$ref"]))
    body = _scalar(1, _STRING, r.get("description", ""))
    if isinstance(r.get("schema"), dict):
        body += _len(2, _len(1, _schema(r["schema"])))
    for k in sorted(r):
        if k.startswith("x-"):
            body += _len(5, _named_any(k, r[k]))
    return _len(1, body)


def _responses(rs: dict[str, Any]) -> bytes:
    out = _named(rs, _response_value)
    for k in sorted(rs):
        if k.startswith("x-"):
            out += _len(2, _named_any(k, rs[k]))
    return out


def _operation(o: dict[str, Any]) -> bytes:
    return _message((("tags", 1, _STRING, True), ("summary", 2, _STRING, False), ("description", 3, _STRING, False),
                     ("operationId", 5, _STRING, False), ("produces", 6, _STRING, True),
                     ("consumes", 7, _STRING, True), ("parameters", 8, "ParametersItem", True),
                     ("responses", 9, "Responses", False), ("schemes", 10, _STRING, True),
                     ("deprecated", 11, _BOOL, False), ("security", 12, "SecurityRequirement", True)), o, 13)


def _path_item(p: dict[str, Any]) -> bytes:
    return _message((("$ref", 1, _STRING, False), ("get", 2, "Operation", False), ("put", 3, "Operation", False),
                     ("post", 4, "Operation", False), ("delete", 5, "Operation", False),
                     ("options", 6, "Operation", False), ("head", 7, "Operation", False),
                     ("patch", 8, "Operation", False), ("parameters", 9, "ParametersItem", True)), p, 10)


def _paths(ps: dict[str, Any]) -> bytes:
    out = bytearray()
    for k in sorted(ps):
        if k.startswith("x-"):
            out += _len(1, _named_any(k, ps[k]))
    out += _named(ps, _path_item, num=2)
    return bytes(out)


def _security_requirement(req: dict[str, Any]) -> bytes:
    return _named(req, lambda v: b"".join(_len(1, str(x).encode()) for x in v or ()))


def _security_definitions(defs: dict[str, Any]) -> bytes:
    def item(d: dict[str, Any]) -> bytes:
        t = d.get("type")
        if t == "apiKey":
            return _len(2, _message((("type", 1, _STRING, False), ("name", 2, _STRING, False),
                                     ("in", 3, _STRING, False), ("description", 4, _STRING, False)), d, 5))
        return _len(1, _message((("type", 1, _STRING, False), ("description", 2, _STRING, False)), d, 3))
    return _named(defs, item)


def _info(i: dict[str, Any]) -> bytes:
    return _message((("title", 1, _STRING, False), ("version", 2, _STRING, False), ("description", 3, _STRING, False),
                     ("termsOfService", 4, _STRING, False)), i, 7)


_CONVERT: dict[str, Callable[[Any], bytes]] = {
    "Schema": _schema, "Any": lambda v: _any(v), "ParametersItem": _parameter_item,
    "PrimitivesItems": _primitives_items, "Responses": _responses, "Operation": _operation,
    "SecurityRequirement": _security_requirement, "Info": _info,
}


def encode_document(doc: dict[str, Any]) -> bytes:
    """The gnostic `openapi.v2.Document` protobuf of an OpenAPI v2 JSON document."""
    out = bytearray()
    out += _scalar(1, _STRING, doc.get("swagger", ""))
    if isinstance(doc.get("info"), dict):
        out += _len(2, _info(doc["info"]))
    out += _scalar(3, _STRING, doc.get("host", ""))
    out += _scalar(4, _STRING, doc.get("basePath", ""))
    for num, key in ((5, "schemes"), (6, "consumes"), (7, "produces")):
        for v in doc.get(key) or ():
            out += _len(num, str(v).encode())
    if isinstance(doc.get("paths"), dict):
        out += _len(8, _paths(doc["paths"]))
    if isinstance(doc.get("definitions"), dict):
        out += _len(9, _named(doc["definitions"], _schema))
    for req in doc.get("security") or ():
        out += _len(12, _security_requirement(req))
    if isinstance(doc.get("securityDefinitions"), dict):
        out += _len(13, _security_definitions(doc["securityDefinitions"]))
    for k in sorted(doc):
        if k.startswith("x-"):
            out += _len(16, _named_any(k, doc[k]))
    return bytes(out)
