"""`/openapi/v3/<group-version>` documents, made from the v2 document as kube-openapi's v3 builder
makes them from the same definitions: one document per group-version (and per root path such as
`api`, `apis/apps`, `version`), parameters carrying a `schema`, bodies as `requestBody` and
responses with one `content` entry per media type, `$ref`s into `#/components/schemas/`. The v3
definitions keep the generated defaults the v2 document strips (`data/api-facts.json.gz`), a `$ref`
beside a description or default is wrapped in `allOf`, and `Quantity` / `IntOrString` are `oneOf`.
"""

from __future__ import annotations

import copy
from typing import Any

from .openapi import V2_PREFIX, V3_PREFIX, BuiltinSpec, crd_definitions, crd_paths, served_versions
from .shapes import Obj

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
_ONE_OF = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": [{"type": "string"}, {"type": "number"}],
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": [{"type": "integer"}, {"type": "string"}],
}


def path_group(path: str) -> str:
    """The v3 document a v2 path belongs to: `api/v1`, `apis/<group>/<version>`, `apis/<group>`, ..."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return ""
    if parts[0] == "api":
        return "api/v1" if len(parts) > 1 and parts[1] == "v1" else "api"
    if parts[0] == "apis":
        if len(parts) >= 3:
            return "/".join(parts[:3])
        return "/".join(parts[:2])
    if parts[0] in ("openid", ".well-known"):
        return "/".join(parts[:3]) if parts[0] == "openid" else "/".join(parts[:2])
    return parts[0]


def group_versions(v2: Obj) -> list[str]:
    return sorted({g for g in (path_group(p) for p in v2.get("paths") or {}) if g})


def _ref3(ref: str) -> str:
    return V3_PREFIX + ref[len(V2_PREFIX):] if ref.startswith(V2_PREFIX) else ref


def _refs(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith(V2_PREFIX):
            out.add(ref[len(V2_PREFIX):])
        for v in value.values():
            _refs(v, out)
    elif isinstance(value, list):
        for v in value:
            _refs(v, out)


def _schema(s: Any, default: dict[str, Any], at: str) -> Any:
    """One v2 schema as v3: `$ref`s moved, generated defaults put back (`default` is keyed by the
    property path inside the definition: `prop`, `prop/items`, `prop/additionalProperties`)."""
    if not isinstance(s, dict):
        return s
    out: Obj = {}
    for k, v in s.items():
        if k == "$ref":
            continue
        if k == "properties" and isinstance(v, dict):
            out[k] = {name: _schema(p, default, name if not at else f"{at}/{name}") for name, p in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            out[k] = _schema(v, default, f"{at}/{k}" if at else k)
        else:
            out[k] = copy.deepcopy(v)
    if at and at in default and "default" not in out:
        out["default"] = copy.deepcopy(default[at])
    ref = s.get("$ref")
    if isinstance(ref, str):
        if out:
            out["allOf"] = [{"$ref": _ref3(ref)}]
        else:
            out["$ref"] = _ref3(ref)
    return out


def _definition(name: str, d: Obj, spec: BuiltinSpec) -> Obj:
    out = _schema(d, spec.defaults.get(name) or {}, "")
    if name in _ONE_OF:
        out.pop("type", None)
        out["oneOf"] = copy.deepcopy(_ONE_OF[name])
    return out


def _parameter(p: Obj) -> Obj:
    out: Obj = {"name": p.get("name"), "in": p.get("in")}
    if p.get("description"):
        out["description"] = p["description"]
    if p.get("required"):
        out["required"] = True
    schema: Obj = {}
    for k in ("type", "format", "uniqueItems", "items", "enum", "default"):
        if k in p:
            schema[k] = copy.deepcopy(p[k])
    out["schema"] = schema
    return out


def _content(types: list[str], schema: Obj) -> Obj:
    return {t: {"schema": _schema(schema, {}, "")} for t in sorted(types)}


def _operation(op: Obj) -> Obj:
    out: Obj = {}
    for k in ("tags", "summary", "description", "operationId"):
        if k in op:
            out[k] = copy.deepcopy(op[k])
    params = [p for p in op.get("parameters") or [] if p.get("in") != "body"]
    body = next((p for p in op.get("parameters") or [] if p.get("in") == "body"), None)
    if params:
        out["parameters"] = [_parameter(p) for p in params]
    if body is not None:
        out["requestBody"] = {"content": _content(list(op.get("consumes") or ["*/*"]), body.get("schema") or {})}
    responses: Obj = {}
    for code, r in (op.get("responses") or {}).items():
        resp: Obj = {"description": r.get("description", "")}
        if isinstance(r.get("schema"), dict):
            resp["content"] = _content(list(op.get("produces") or []), r["schema"])
        responses[code] = resp
    out["responses"] = responses
    for k, v in op.items():
        if k.startswith("x-") or k == "deprecated":
            out[k] = copy.deepcopy(v)
    return out


def document(v2: Obj, gv: str, spec: BuiltinSpec) -> Obj:
    """The v3 document of one group-version (or root path) of the v2 document `v2`."""
    paths: Obj = {}
    for path, item in (v2.get("paths") or {}).items():
        if path_group(path) != gv:
            continue
        conv: Obj = {}
        for m in _METHODS:
            if isinstance(item.get(m), dict):
                conv[m] = _operation(item[m])
        if item.get("parameters"):
            conv["parameters"] = [_parameter(p) for p in item["parameters"]]
        paths[path] = conv
    defs: dict[str, Obj] = v2.get("definitions") or {}
    wanted: set[str] = set()
    _refs([item for p, item in (v2.get("paths") or {}).items() if path_group(p) == gv], wanted)
    todo = list(wanted)
    while todo:
        name = todo.pop()
        found: set[str] = set()
        _refs(defs.get(name), found)
        for f in found - wanted:
            wanted.add(f)
            todo.append(f)
    schemas = {name: _definition(name, defs[name], spec) for name in sorted(wanted) if name in defs}
    security = copy.deepcopy(v2.get("securityDefinitions") or {})
    components: Obj = {"schemas": schemas} if schemas else {}
    components["securitySchemes"] = security
    return {"openapi": "3.0.0", "info": copy.deepcopy(v2.get("info") or {}), "paths": paths,
            "components": components}


def crd_group_versions(crds: list[Obj]) -> list[str]:
    """`apis/<group>/<version>` of every served CRD version (no group documents for CRD groups)."""
    out = set()
    for crd in crds:
        group = str((crd.get("spec") or {}).get("group") or "")
        for v in served_versions(crd):
            out.add(f"apis/{group}/{v.get('name')}")
    return sorted(out)


def crd_document(crds: list[Obj], gv: str, spec: BuiltinSpec) -> Obj:
    """The v3 document of a CRD group-version: the builder's v3 paths and definitions of every CRD
    serving it, merged, with the built-in definitions they refer to."""
    paths: Obj = {}
    defs: dict[str, Obj] = {}
    for crd in crds:
        group = str((crd.get("spec") or {}).get("group") or "")
        for v in served_versions(crd):
            if f"apis/{group}/{v.get('name')}" != gv:
                continue
            defs.update(crd_definitions(crd, v, v2=False))
            paths.update(crd_paths(crd, v, spec, v2=False))
    converted: Obj = {}
    for path, item in paths.items():
        conv: Obj = {m: _operation(item[m]) for m in _METHODS if isinstance(item.get(m), dict)}
        if item.get("parameters"):
            conv["parameters"] = [_parameter(p) for p in item["parameters"]]
        converted[path] = conv
    wanted: set[str] = set()
    _refs([paths, defs], wanted)
    todo = list(wanted)
    while todo:
        found: set[str] = set()
        _refs(spec.definitions.get(todo.pop()), found)
        for f in found - wanted:
            wanted.add(f)
            todo.append(f)
    schemas: Obj = {name: _schema(d, {}, "") for name, d in defs.items()}
    for name in sorted(wanted - set(defs)):
        if name in spec.definitions:  # named by the CRD builder's own namer: no group-version-kinds
            schemas[name] = _definition(name, spec.definitions[name], spec)
            schemas[name].pop("x-kubernetes-group-version-kind", None)
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
            "paths": converted, "components": {"schemas": dict(sorted(schemas.items()))}}
