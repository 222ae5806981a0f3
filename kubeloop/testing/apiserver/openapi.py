"""The OpenAPI documents of the emulated kube-apiserver 1.24, and the recorded schemas behind them.

`data/openapi-v2.json.gz` is a real 1.24 server's `/openapi/v2` for the built-in kinds; it is the
emulator's source for what a built-in kind can hold (the typed decoder in `kinds/generated.py`,
server-side apply's schema in `smd.py`). `data/api-facts.json.gz` adds what the served document
leaves out (Go field facts and the generated definitions' defaults; see
`tests/testing/differential/extract_api_facts.py`).

The documents served are the built-in one plus, for every served version of every CRD, the
definitions and paths kube-apiserver's CRD OpenAPI builder produces (`/openapi/v2` as JSON or as
gnostic protobuf, which is what kubectl 1.24 asks for), and `/openapi/v3` (beta and on in 1.24):
a root listing one document per group-version, each converted from the same definitions. Neither
advertises `fieldValidation`: server-side field validation is alpha and off in 1.24, and kubectl
skips its own client-side validation when it believes the server validates.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import orjson

from .shapes import Obj

V2_PREFIX = "#/definitions/"
V3_PREFIX = "#/components/schemas/"
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
#: the definitions a CRD's document carries in its own (defaulted) form; merged into the served
#: document under these names whenever a CRD is served
CRD_SHARED_SUFFIX = "_v2"


def _data(name: str) -> bytes:
    raw = (resources.files(__package__) / "data" / name).read_bytes()
    return gzip.decompress(raw) if name.endswith(".gz") else raw


class BuiltinSpec:
    """The recorded document, split into the built-in part and the CRD-shared definitions, with indexes."""

    def __init__(self, doc: Obj, facts: Obj, crd: Obj) -> None:
        defs: dict[str, Obj] = doc["definitions"]
        self.crd_shared = {k: v for k, v in defs.items() if k.endswith(CRD_SHARED_SUFFIX)}
        self.definitions = {k: v for k, v in defs.items() if not k.endswith(CRD_SHARED_SUFFIX)}
        self.doc = {k: v for k, v in doc.items() if k != "definitions"}
        self.go_fields: dict[str, dict[str, list[Any]]] = facts["go_fields"]
        self.defaults: dict[str, dict[str, Any]] = facts["defaults"]
        #: Go struct layouts, versioned and internal (what `gostruct.py` prints)
        self.go_structs: dict[str, list[list[str]]] = facts.get("go_structs", {})
        #: the parameters of CRD paths, and the definitions a CRD with a scale subresource brings
        self.crd_parameters: dict[str, Obj] = crd["parameters"]
        self.crd_scale_definitions: dict[str, Obj] = crd["scale_definitions"]
        self.by_gvk: dict[tuple[str, str, str], str] = {}
        for name, d in self.definitions.items():
            for gvk in d.get("x-kubernetes-group-version-kind") or ():
                key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
                # DeleteOptions/WatchEvent are listed under every group: keep the first (meta) one
                self.by_gvk.setdefault(key, name)

    def definition_for(self, group: str, version: str, kind: str) -> str | None:
        """The definition name of a built-in kind (`io.k8s.api.apps.v1.Deployment`), None if unknown."""
        return self.by_gvk.get((group, version, kind))


@cache
def builtin_spec() -> BuiltinSpec:
    """The recorded document (parsed once per process: about 3.4 MB of JSON)."""
    return BuiltinSpec(orjson.loads(_data("openapi-v2.json.gz")), orjson.loads(_data("api-facts.json.gz")),
                       orjson.loads(_data("crd-openapi.json")))


# ---- CRD parts (apiextensions-apiserver's controller/openapi/builder, v2) ----------------------------
def rest_friendly_name(group: str, version: str, kind: str) -> str:
    """`util.ToRESTFriendlyName("group/version/kind")`: the group's domain reversed."""
    g = ".".join(reversed(group.split("."))) if "." in group else group
    return f"{g}.{version}.{kind}"


def _go_title(s: str) -> str:
    return s[:1].upper() + s[1:]


def _tag(group: str, version: str) -> str:
    """kube-openapi's tag for a group-version: the group's dotted words camel-cased, then `_version`."""
    parts = [p for p in group.replace("-", ".").split(".") if p]
    return (parts[0] + "".join(_go_title(p) for p in parts[1:]) if parts else "core") + "_" + version


def _operation_prefix(group: str, version: str) -> str:
    parts = [p for p in group.replace("-", ".").split(".") if p]
    return "".join(_go_title(p) for p in parts) + _go_title(version)


def _article(noun: str) -> str:
    return " an " if noun[:1].lower() in "aeiou" else " a "


_SCHEMA_KEYS = ("type", "format", "title", "description", "default", "nullable", "maximum", "exclusiveMaximum",
                "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
                "uniqueItems", "multipleOf", "enum", "maxProperties", "minProperties", "required", "allOf",
                "oneOf", "anyOf", "not", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
                "x-kubernetes-map-type", "x-kubernetes-validations")


def _structural_v2(s: Obj) -> Obj:
    """`ToStructuralOpenAPIV2(...).ToKubeOpenAPI()` of one CRD schema node: junctors dropped, nullable
    and preserve-unknown-fields nodes left untyped and without children, arrays without items untyped."""
    # junctors go; so do defaults, which the served v2 document strips everywhere
    out: Obj = {k: copy.deepcopy(s[k]) for k in _SCHEMA_KEYS
                if k in s and k not in ("allOf", "oneOf", "anyOf", "not", "default")}
    props = s.get("properties")
    items = s.get("items")
    addl = s.get("additionalProperties")
    if isinstance(props, dict):
        out["properties"] = {k: _structural_v2(v) for k, v in props.items() if isinstance(v, dict)}
    if isinstance(items, dict):
        out["items"] = _structural_v2(items)
    if isinstance(addl, dict):
        out["additionalProperties"] = _structural_v2(addl)
    elif isinstance(addl, bool):
        out["additionalProperties"] = addl
    if out.pop("nullable", False):
        out.pop("type", None)
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("x-kubernetes-preserve-unknown-fields"):
        out.pop("items", None)
        out.pop("properties", None)
    if "items" not in out and out.get("type") == "array":
        out.pop("type")
    if out.get("x-kubernetes-preserve-unknown-fields") and out.get("type") == "object":
        out.pop("type")
    nullable = {k for k, v in (props or {}).items() if isinstance(v, Mapping) and v.get("nullable")}
    if nullable and out.get("required"):
        out["required"] = [r for r in out["required"] if r not in nullable] or None
        if out["required"] is None:
            del out["required"]
    if isinstance(addl, Mapping) and addl.get("nullable"):
        out.pop("required", None)
    return out


def _structural_v3(s: Obj) -> Obj:
    """`Structural.Unfold().ToKubeOpenAPI()` of one CRD schema node (the v3 document keeps
    defaults, nullable and junctors; `x-kubernetes-int-or-string` gains its `anyOf`)."""
    out: Obj = {k: copy.deepcopy(s[k]) for k in _SCHEMA_KEYS if k in s}
    for key in ("properties",):
        if isinstance(s.get(key), dict):
            out[key] = {k: _structural_v3(v) for k, v in s[key].items() if isinstance(v, dict)}
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), dict):
            out[key] = _structural_v3(s[key])
        elif isinstance(s.get(key), bool):
            out[key] = s[key]
    if out.get("x-kubernetes-int-or-string") and not out.get("anyOf") and not any(
            isinstance(a, dict) and a.get("anyOf") for a in out.get("allOf") or ()):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


def _embedded(s: Obj, v2: bool) -> None:
    """`addEmbeddedProperties`: TypeMeta and ObjectMeta on `x-kubernetes-embedded-resource` nodes
    (in v2 not below `x-kubernetes-preserve-unknown-fields`)."""
    for v in (s.get("properties") or {}).values():
        _embedded(v, v2)
    if isinstance(s.get("items"), dict):
        _embedded(s["items"], v2)
    if isinstance(s.get("additionalProperties"), dict):
        _embedded(s["additionalProperties"], v2)
    if v2 and s.get("x-kubernetes-preserve-unknown-fields"):
        return
    if s.get("x-kubernetes-embedded-resource"):
        props = s.setdefault("properties", {})
        props["apiVersion"] = {"description": "apiVersion defines the versioned schema of this representation of "
                               "an object. More info: https://git.k8s.io/community/contributors/devel/"
                               "sig-architecture/api-conventions.md#resources", "type": "string"}
        props["kind"] = {"description": "kind is a string value representing the type of this object. In CamelCase. "
                         "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                         "api-conventions.md#types-kinds", "type": "string"}
        props["metadata"] = _object_meta_property(v2)
        req = list(s.get("required") or [])
        for k in ("kind", "apiVersion"):
            if k not in req:
                req.append(k)
        s["required"] = req


def _object_meta_property(v2: bool) -> Obj:
    return {"description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
                           "sig-architecture/api-conventions.md#metadata",
            "$ref": _meta_ref("ObjectMeta", v2)}


def _meta_ref(name: str, v2: bool) -> str:
    """A reference to a meta/v1 definition from a CRD's document: in v2 the CRD-shared copy
    (`ObjectMeta_v2`), in v3 (a document of its own) the definition itself."""
    return V2_PREFIX + META + name + CRD_SHARED_SUFFIX if v2 else V2_PREFIX + META + name


_TYPE_META = {
    "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object. "
                                  "Servers should convert recognized schemas to the latest internal value, and may "
                                  "reject unrecognized values. More info: https://git.k8s.io/community/contributors/"
                                  "devel/sig-architecture/api-conventions.md#resources", "type": "string"},
    "kind": {"description": "Kind is a string value representing the REST resource this object represents. Servers "
                            "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
                            "CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                            "api-conventions.md#types-kinds", "type": "string"},
}


def crd_version_schema(crd: Obj, version: Obj) -> Obj | None:
    spec = crd.get("spec") or {}
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(schema, dict):
        schema = ((spec.get("validation") or {}).get("openAPIV3Schema")) if isinstance(spec.get("validation"), dict) \
            else None
    return schema if isinstance(schema, dict) else None


def crd_definitions(crd: Obj, version: Obj, v2: bool = True) -> dict[str, Obj]:
    """The object and list definitions of one served CRD version, as the builder makes them for v2
    or v3 (references in v2 form either way; `openapi_v3` moves them)."""
    cspec = crd.get("spec") or {}
    group = str(cspec.get("group") or "")
    names = cspec.get("names") or {}
    kind, list_kind = str(names.get("kind") or ""), str(names.get("listKind") or f"{names.get('kind')}List")
    plural = str(names.get("plural") or "")
    v = str(version.get("name") or "")
    gvk = [{"group": group, "kind": kind, "version": v}]
    schema = crd_version_schema(crd, version)
    if schema is None or (v2 and (schema.get("x-kubernetes-preserve-unknown-fields")
                                  or cspec.get("preserveUnknownFields"))):
        obj: Obj = {"type": "object"}
    else:
        obj = _structural_v2(schema) if v2 else _structural_v3(schema)
        props = obj.setdefault("properties", {})
        props["metadata"] = _object_meta_property(v2)
        props.update(copy.deepcopy(_TYPE_META))
        _embedded(obj, v2)
    obj["x-kubernetes-group-version-kind"] = gvk
    name = rest_friendly_name(group, v, kind)
    lst: Obj = {
        "description": f"{list_kind} is a list of {kind}", "required": ["items"],
        "properties": {
            **copy.deepcopy(_TYPE_META),
            "items": {"description": f"List of {plural}. More info: https://git.k8s.io/community/contributors/devel/"
                                     "sig-architecture/api-conventions.md",
                      "type": "array", "items": {"$ref": V2_PREFIX + name}},
            "metadata": {"description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/"
                                        "devel/sig-architecture/api-conventions.md#types-kinds",
                         "$ref": V2_PREFIX + META + "ListMeta"},
        },
        "x-kubernetes-group-version-kind": [{"group": group, "kind": list_kind, "version": v}],
    }
    return {name: obj, rest_friendly_name(group, v, list_kind): lst}


_LIST_PARAMS = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
                "resourceVersionMatch", "timeoutSeconds", "watch")


def crd_paths(crd: Obj, version: Obj, spec: BuiltinSpec, v2: bool = True) -> dict[str, Obj]:
    """The paths of one served CRD version, as the builder's routes give them."""
    cspec = crd.get("spec") or {}
    group = str(cspec.get("group") or "")
    names = cspec.get("names") or {}
    kind, plural = str(names.get("kind") or ""), str(names.get("plural") or "")
    list_kind = str(names.get("listKind") or f"{kind}List")
    v = str(version.get("name") or "")
    namespaced = cspec.get("scope") != "Cluster"
    lib = spec.crd_parameters
    gvk = {"group": group, "kind": kind, "version": v}
    obj_ref = {"$ref": V2_PREFIX + rest_friendly_name(group, v, kind)}
    list_ref = {"$ref": V2_PREFIX + rest_friendly_name(group, v, list_kind)}
    status_ref = {"$ref": _meta_ref("Status", v2)}
    scale_ref = {"$ref": V2_PREFIX + "io.k8s.api.autoscaling.v1.Scale" + (CRD_SHARED_SUFFIX if v2 else "")}
    patch_ref = {"$ref": V2_PREFIX + META + "Patch"}
    tag = _tag(group, v)
    prefix = _operation_prefix(group, v)
    ns_word = "Namespaced" if namespaced else ""
    subs = version.get("subresources") or {}

    def param(name: str) -> Obj:
        p = copy.deepcopy(lib[name])
        if name == "name":
            p["description"] = p["description"].replace("{kind}", kind)
        return p

    def body(schema: Obj, required: bool = True) -> Obj:
        b: Obj = {"name": "body", "in": "body", "schema": schema}
        if required:
            b["required"] = True
        return b

    def op(verb: str, action: str, sub: str, sample: Obj, params: list[Obj], codes: Iterable[str],
           op_id: str | None = None) -> Obj:
        sub_words = f" {sub} of" if sub else ""
        if verb == "list":
            desc = f"list objects of kind {kind}"
        elif verb in ("read", "replace", "patch"):
            desc = {"read": "read", "replace": "replace", "patch": "partially update"}[verb] + sub_words + \
                " the specified " + kind
        elif verb in ("create", "delete"):
            desc = verb + sub_words + _article(kind) + kind
        else:
            desc = "delete collection of" + (sub_words + " a" if sub else "") + " " + kind
        responses: Obj = {}
        for code in codes:
            text = {"200": "OK", "201": "Created", "202": "Accepted"}[code]
            responses[code] = {"description": text, "schema": sample}
        responses["401"] = {"description": "Unauthorized"}
        consumes = (["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
                    if action == "patch" else ["application/json", "application/yaml"])
        oid = op_id or (verb + prefix + ns_word + kind + _go_title(sub))
        return {"description": desc, "consumes": consumes, "produces": ["application/json", "application/yaml"],
                "schemes": ["https"], "tags": [tag], "operationId": oid, "parameters": params,
                "responses": responses, "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk}

    def item(ops: dict[str, Obj], common: list[str]) -> Obj:
        """kube-openapi keeps the parameters every operation of a path shares at the path level."""
        shared = [p for p in common]
        out: Obj = {m: o for m, o in ops.items()}
        for o in out.values():
            o["parameters"] = sorted(o["parameters"], key=lambda p: p["name"])
            if not o["parameters"]:
                del o["parameters"]
        out["parameters"] = sorted((param(n) for n in shared), key=lambda p: p["name"])
        return out

    list_params = [param(n) for n in _LIST_PARAMS]
    write_params = [param("dryRun"), param("fieldManager")]
    delete_params = [body({"$ref": _meta_ref("DeleteOptions", v2)}, required=False),
                     param("dryRun"), param("gracePeriodSeconds"), param("orphanDependents"), param("propagationPolicy")]
    base = f"/apis/{group}/{v}"
    paths: dict[str, Obj] = {}
    root = f"{base}/{plural}"
    if namespaced:
        all_ns = op("list", "list", "", list_ref, [], ["200"],
                    op_id=f"list{prefix}{kind}ForAllNamespaces")
        paths[root] = item({"get": all_ns}, ["pretty", *_LIST_PARAMS])
        root = f"{base}/namespaces/{{namespace}}/{plural}"
    scope = ["namespace"] if namespaced else []
    paths[root] = item({
        "get": op("list", "list", "", list_ref, list_params, ["200"]),
        "post": op("create", "post", "", obj_ref, [body(obj_ref), *write_params], ["200", "201", "202"]),
        "delete": op("deletecollection", "deletecollection", "", status_ref, [param(n) for n in _LIST_PARAMS],
                     ["200"], op_id=f"delete{prefix}Collection{ns_word}{kind}"),
    }, [*scope, "pretty"])
    named = [*scope, "name", "pretty"]
    paths[root + "/{name}"] = item({
        "get": op("read", "get", "", obj_ref, [param("resourceVersion")], ["200"]),
        "put": op("replace", "put", "", obj_ref, [body(obj_ref), *write_params], ["200", "201"]),
        "delete": op("delete", "delete", "", status_ref, delete_params, ["200", "202"]),
        "patch": op("patch", "patch", "", obj_ref, [body(patch_ref), *write_params], ["200"]),
    }, named)
    for sub, sample in (("status", obj_ref), ("scale", scale_ref)):
        if not isinstance(subs.get(sub), dict):
            continue
        paths[root + "/{name}/" + sub] = item({
            "get": op("read", "get", sub, sample, [param("resourceVersion")], ["200"]),
            "put": op("replace", "put", sub, sample, [body(sample), *write_params], ["200", "201"]),
            "patch": op("patch", "patch", sub, sample, [body(patch_ref), *write_params], ["200"]),
        }, named)
    return paths


def served_versions(crd: Obj) -> list[Obj]:
    return [v for v in ((crd.get("spec") or {}).get("versions") or []) if isinstance(v, dict) and v.get("served")]


# ---- the served documents ----------------------------------------------------------------------------
class Documents:
    """The served OpenAPI documents for one emulator, rebuilt when its set of CRDs changes."""

    def __init__(self) -> None:
        self._key: bytes | None = None
        self._v2: Obj | None = None
        self._v2_json: bytes | None = None
        self._v2_pb: bytes | None = None
        self._v3: dict[str, bytes] = {}
        self._crds: list[Obj] = []

    def refresh(self, crds: list[Obj]) -> None:
        key = hashlib.sha256(orjson.dumps(
            [[(c.get("metadata") or {}).get("name"), c.get("spec")] for c in crds], option=orjson.OPT_SORT_KEYS)).digest()
        if key == self._key:
            return
        self._key = key
        spec = builtin_spec()
        defs = dict(spec.definitions)
        paths = dict(spec.doc["paths"])
        if crds:
            defs.update(spec.crd_shared)
        for crd in crds:
            for version in served_versions(crd):
                if isinstance((version.get("subresources") or {}).get("scale"), dict):
                    defs.update(spec.crd_scale_definitions)
                for name, d in crd_definitions(crd, version).items():
                    defs.setdefault(name, d)
                for p, item in crd_paths(crd, version, spec).items():
                    paths.setdefault(p, item)  # the static spec wins a conflict
        self._v2 = {**spec.doc, "definitions": defs, "paths": paths}
        self._crds = crds
        self._v2_json = self._v2_pb = None
        self._v3 = {}

    @property
    def v2(self) -> Obj:
        assert self._v2 is not None, "refresh() first"
        return self._v2

    def v2_json(self) -> bytes:
        if self._v2_json is None:
            self._v2_json = orjson.dumps(self.v2, option=orjson.OPT_SORT_KEYS)
        return self._v2_json

    def v2_protobuf(self) -> bytes:
        if self._v2_pb is None:
            from .openapi_pb import encode_document

            self._v2_pb = encode_document(self.v2)
        return self._v2_pb

    def v2_etag(self) -> str:
        return '"' + hashlib.sha512(self.v2_json()).hexdigest().upper() + '"'

    # -- v3 ---------------------------------------------------------------------------------------------
    def _v3_names(self) -> list[str]:
        from .openapi_v3 import crd_group_versions, group_versions

        # kube-aggregator's own API (apiregistration.k8s.io) is in the v2 document but not in 1.24's v3 root
        builtin = {gv for gv in group_versions(builtin_spec().doc) if not gv.startswith("apis/apiregistration.k8s.io")}
        return sorted(builtin | set(crd_group_versions(self._crds)))

    def v3_root(self) -> Obj:
        return {"paths": {gv: {"serverRelativeURL": f"/openapi/v3/{gv}?hash={self._v3_hash(gv)}"}
                          for gv in self._v3_names()}}

    def v3_document(self, gv: str) -> bytes | None:
        from .openapi_v3 import crd_document, crd_group_versions, document

        if gv not in self._v3:
            spec = builtin_spec()
            if gv in crd_group_versions(self._crds):
                doc = crd_document(self._crds, gv, spec)
            elif gv in self._v3_names():
                doc = document(self.v2, gv, spec)
            else:
                return None
            self._v3[gv] = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
        return self._v3[gv]

    def _v3_hash(self, gv: str) -> str:
        body = self.v3_document(gv)
        return hashlib.sha512(body or b"").hexdigest().upper()

    def v3_etag(self, gv: str) -> str:
        return '"' + self._v3_hash(gv) + '"'


# ---- HTTP ---------------------------------------------------------------------------------------------
PROTOBUF_V2 = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",)


def _accepts(accept: str, offered: tuple[str, ...]) -> str | None:
    """The first acceptable media type of `offered` (kube-openapi's negotiation: exact types, `*/*`,
    `application/*`; no header means the first offered)."""
    if not accept.strip():
        return offered[0]
    ranges: list[tuple[float, str]] = []
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        q = 1.0
        for f in fields[1:]:
            if f.startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        ranges.append((q, fields[0].lower()))
    ranges.sort(key=lambda r: -r[0])
    for q, mt in ranges:
        if q <= 0:
            continue
        for o in offered:
            if mt == o or mt == "*/*" or (mt.endswith("/*") and o.startswith(mt[:-1])):
                return o
    return None


def serve(documents: Documents, crds: list[Obj], parts: list[str], accept: str, query: Mapping[str, str],
          if_none_match: str) -> tuple[int, dict[str, str], bytes]:
    """`GET /openapi/v2` and `/openapi/v3[/<group-version>]`: (status, headers, body). A JSON document
    goes out as `text/plain; charset=utf-8`, as Go's `http.ServeContent` labels it on the real server."""
    documents.refresh(crds)
    plain = {"Content-Type": "text/plain; charset=utf-8", "Vary": "Accept"}
    if parts == ["v2"]:
        mt = _accepts(accept, ("application/json", *PROTOBUF_V2))
        if mt is None:
            return 406, {}, b""
        etag = documents.v2_etag()
        if if_none_match == etag:
            return 304, {"ETag": etag}, b""
        if mt in PROTOBUF_V2:
            return 200, {"Content-Type": "application/octet-stream", "ETag": etag, "Vary": "Accept"}, \
                documents.v2_protobuf()
        return 200, {**plain, "ETag": etag}, documents.v2_json()
    if parts == ["v3"]:
        return 200, plain, orjson.dumps(documents.v3_root(), option=orjson.OPT_SORT_KEYS)
    if len(parts) >= 2 and parts[0] == "v3":
        gv = "/".join(parts[1:])
        body = documents.v3_document(gv)
        if body is None:
            return 404, {}, b""
        etag = documents.v3_etag(gv)
        want = query.get("hash")
        if want is not None and f'"{want}"' != etag:
            return 301, {"Location": f"/openapi/v3/{gv}?hash={etag.strip(chr(34))}"}, b""
        if if_none_match == etag:
            return 304, {"ETag": etag}, b""
        return 200, {**plain, "ETag": etag}, body
    return 404, {}, b""
