"""Extract, from a Kubernetes 1.24 source tree, the facts about built-in API types that the served
OpenAPI document does not carry, into `kubeloop/testing/apiserver/data/api-facts.json.gz`.

- Go field facts, per OpenAPI definition and JSON field: the Go type as written (`*int32`,
  `[]Container`, `metav1.Time`, `Protocol`) and whether the field is `omitempty`. The emulator's
  typed decoder needs them as kube-apiserver's JSON decoder has them: which zero values the
  encoder drops, and what type a decoding error names.
- Go struct layouts (`go_structs`), versioned and internal (`k8s.io/kubernetes/pkg/apis/...`):
  field names, Go types and JSON names in declaration order, with the package each type named in
  a field comes from. Validation messages print Go values with `%#v`
  (`apps.DaemonSetUpdateStrategy{Type:"x", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}`),
  which needs exactly this.
- Defaults, per OpenAPI definition and property: kube-apiserver builds its server-side-apply
  schema from the generated OpenAPI definitions, defaults included (`protocol: TCP`, `""` for a
  required string); the document it serves at `/openapi/v2` strips them. Structured-merge-diff uses
  them for the key fields of associative lists.

Run it by hand when the recorded version changes (it is not part of the test suite):

    python tests/testing/differential/extract_api_facts.py /tmp/realk8s/src/microshift/vendor
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

OUT = Path(__file__).resolve().parents[3] / "kubeloop" / "testing" / "apiserver" / "data" / "api-facts.json.gz"

#: Go packages whose types the built-in kinds use (relative to the vendor directory)
PACKAGES = [
    *(f"k8s.io/api/{p}" for p in (
        "admissionregistration/v1", "apiserverinternal/v1alpha1", "apps/v1", "authentication/v1",
        "authorization/v1", "autoscaling/v1", "autoscaling/v2", "autoscaling/v2beta1", "autoscaling/v2beta2",
        "batch/v1", "batch/v1beta1", "certificates/v1", "coordination/v1", "core/v1", "discovery/v1",
        "discovery/v1beta1", "events/v1", "events/v1beta1", "flowcontrol/v1beta1", "flowcontrol/v1beta2",
        "networking/v1", "node/v1", "node/v1beta1", "policy/v1", "policy/v1beta1", "rbac/v1",
        "scheduling/v1", "storage/v1", "storage/v1beta1")),
    "k8s.io/apimachinery/pkg/apis/meta/v1",
    "k8s.io/apimachinery/pkg/runtime",
    "k8s.io/apimachinery/pkg/util/intstr",
    "k8s.io/apimachinery/pkg/api/resource",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
    "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
]

_STRUCT = re.compile(r"^type (\w+) struct \{\s*$")
_IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"\s*$')
#: internal packages whose types validation messages print (k8s.io/kubernetes/pkg/apis/<group>)
INTERNAL = ["apps", "autoscaling", "batch", "coordination", "core", "discovery", "events", "networking", "policy",
            "rbac", "storage", "scheduling", "node"]
_FIELD = re.compile(r"^\s+(?:(\w+)\s+)?([\w.*\[\]]+(?:\[[\w.]+\][\w.*\[\]]+)?)\s+`([^`]*)`")
_JSON_TAG = re.compile(r'json:"([^"]*)"')


def openapi_name(pkg: str, name: str) -> str:
    """`k8s.io/api/core/v1`, `Pod` -> `io.k8s.api.core.v1.Pod` (the reversed domain, then the path)."""
    domain, _, rest = pkg.partition("/")
    return ".".join([*reversed(domain.split(".")), *rest.split("/"), name])


def _sources(directory: Path) -> list[Path]:
    return [p for p in sorted(directory.glob("*.go")) if not (
        p.name.endswith("_test.go") or p.name.startswith("zz_generated") or "generated.pb" in p.name)]


def _struct_fields(lines: list[str]) -> Iterator[tuple[str, str | None]]:
    """(struct name, None) where a struct begins, then (struct name, line) for each line at the top
    level of its body (comments skipped)."""
    current: str | None = None
    depth = 0
    for line in lines:
        if current is None:
            m = _STRUCT.match(line)
            if m:
                current, depth = m.group(1), 1
                yield current, None
            continue
        if line.strip().startswith("//"):
            continue
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            current = None
        elif depth == 1:
            yield current, line


def parse_package(directory: Path) -> dict[str, list[tuple[str, str, bool, bool]]]:
    """Struct name -> [(json name, Go type, omitempty, inline)] for every struct in the package."""
    structs: dict[str, list[tuple[str, str, bool, bool]]] = {}
    for path in _sources(directory):
        for current, line in _struct_fields(path.read_text().splitlines()):
            fields = structs.setdefault(current, [])
            m = _FIELD.match(line) if line is not None else None
            if not m:
                continue
            go_name, go_type, tags = m.groups()
            tag = _JSON_TAG.search(tags)
            if tag is None:
                continue
            parts = tag.group(1).split(",")
            json_name, opts = parts[0], parts[1:]
            if json_name == "-":
                continue
            inline = "inline" in opts or (go_name is None and not json_name)
            fields.append((json_name, go_type, "omitempty" in opts, inline))
    return structs


def parse_layouts(directory: Path, pkg: str) -> dict[str, list[list[str]]]:
    """Struct name -> [[Go field name, Go type (package-qualified by path), JSON name, ("embedded")]]
    in declaration order."""
    out: dict[str, list[list[str]]] = {}
    for path in _sources(directory):
        text = path.read_text().splitlines()
        imports: dict[str, str] = {}
        in_import = False
        for line in text:
            if line.startswith("import ("):
                in_import = True
                continue
            if in_import:
                if line.startswith(")"):
                    in_import = False
                    continue
                m = _IMPORT.match(line)
                if m:
                    alias, ipath = m.groups()
                    imports[alias or ipath.rsplit("/", 1)[-1]] = ipath
        for current, line in _struct_fields(text):
            fields = out.setdefault(current, [])
            if line is None:
                continue
            m = re.match(r"^\s+(\w+)\s+([\w.*\[\]]+(?:\[[\w.]+\][\w.*\[\]]+)?)(?:\s+`([^`]*)`)?", line)
            em = re.match(r"^\s+(\*?[\w.]+)(?:\s+`([^`]*)`)?\s*$", line)
            embedded = False
            if m and m.group(2) not in ("struct",):
                go_name, go_type, tags = m.group(1), m.group(2), m.group(3) or ""
            elif em:
                go_type, tags = em.group(1), em.group(2) or ""
                go_name = go_type.lstrip("*").rsplit(".", 1)[-1]
                embedded = True
            else:
                continue
            tag = _JSON_TAG.search(tags)
            json_name = tag.group(1).split(",")[0] if tag else go_name
            fields.append([go_name, _qualify(go_type, pkg, imports), json_name, *(["embedded"] if embedded else [])])
    return out


def _qualify(go_type: str, pkg: str, imports: dict[str, str]) -> str:
    """A Go type expression with every named type written `<package path>.<Name>`."""
    def one(t: str) -> str:
        if t in ("string", "bool", "int", "int32", "int64", "uint8", "byte", "float32", "float64", "uint64",
                 "uint32", "uint16", "int16", "int8", "interface{}"):
            return t
        if "." in t:
            alias, _, name = t.partition(".")
            return f"{imports.get(alias, alias)}.{name}"
        return f"{pkg}.{t}"
    return re.sub(r"[\w.]+(?:\{\})?", lambda m: m.group(0) if m.group(0) == "map" else one(m.group(0)), go_type)


def main(vendor: str) -> None:
    root = Path(vendor)
    parsed = {pkg: parse_package(root / pkg) for pkg in PACKAGES}
    aliases = {"metav1": "k8s.io/apimachinery/pkg/apis/meta/v1", "runtime": "k8s.io/apimachinery/pkg/runtime",
               "intstr": "k8s.io/apimachinery/pkg/util/intstr", "resource": "k8s.io/apimachinery/pkg/api/resource",
               "v1": "k8s.io/api/core/v1", "corev1": "k8s.io/api/core/v1", "apiv1": "k8s.io/api/core/v1"}

    def fields_of(pkg: str, name: str, seen: frozenset[str] = frozenset()) -> dict[str, list[object]]:
        out: dict[str, list[object]] = {}
        for json_name, go_type, omitempty, inline in parsed[pkg].get(name, []):
            if inline:
                target = go_type.lstrip("*")
                tpkg, _, tname = target.rpartition(".")
                tpkg = aliases.get(tpkg, pkg) if tpkg else pkg
                if f"{tpkg}.{tname}" not in seen and tpkg in parsed:
                    out.update(fields_of(tpkg, tname, seen | {f"{tpkg}.{tname}"}))
                continue
            out[json_name] = [go_type, omitempty]
        return out

    facts: dict[str, object] = {}
    for pkg, structs in parsed.items():
        for name in structs:
            fields = fields_of(pkg, name)
            if fields:
                facts[openapi_name(pkg, name)] = fields
    defaults = extract_defaults(root / "k8s.io/kubernetes/pkg/generated/openapi/zz_generated.openapi.go")
    layouts: dict[str, list[list[str]]] = {}
    for pkg in [*PACKAGES, *(f"k8s.io/kubernetes/pkg/apis/{g}" for g in INTERNAL)]:
        for name, fields in parse_layouts(root / pkg, pkg).items():
            layouts[f"{pkg}.{name}"] = fields
    body = {"source": "Kubernetes 1.24 (openshift/kubernetes 3882f8f20de9, vendored in openshift/microshift 68d67ff7)",
            "go_fields": facts, "defaults": defaults, "go_structs": layouts}
    OUT.write_bytes(gzip.compress(json.dumps(body, sort_keys=True, separators=(",", ":")).encode(), mtime=0))
    print(f"{OUT}: {len(facts)} structs, {len(defaults)} definitions with defaults, {len(layouts)} layouts")


_FUNC = re.compile(r'^func schema_(\w+)\(ref common\.ReferenceCallback\)')
_NAME_MAP = re.compile(r'^\t\t"([^"]+)":\s+schema_(\w+)\(ref\),')
_PROP = re.compile(r'^(\t+)"([^"]+)": \{$')
_NESTED = re.compile(r'^(\t+)(Items: &spec\.SchemaOrArray|AdditionalProperties: &spec\.SchemaOrBool)\{$')
_DEFAULT = re.compile(r'^(\t+)Default:\s+(.*),$')


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip("\t"))


def extract_defaults(path: Path) -> dict[str, dict[str, object]]:
    """Definition -> {"prop" | "prop/items" | "prop/additionalProperties": default}, for every schema
    in a definition that carries a `Default` (the generated definitions; the served document has none)."""
    text = path.read_text().splitlines()
    names: dict[str, str] = {}
    for line in text:
        m = _NAME_MAP.match(line)
        if m:
            go_path, func = m.groups()
            pkg, _, name = go_path.rpartition(".")
            names[func] = openapi_name(pkg, name)
    out: dict[str, dict[str, object]] = {}
    current: str | None = None
    stack: list[tuple[int, str]] = []
    in_props = False
    for line in text:
        m = _FUNC.match(line)
        if m:
            current, stack = names.get(m.group(1)), []
            continue
        if current is None or not line.strip():
            continue
        ind = _indent(line)
        while stack and ind <= stack[-1][0]:
            stack.pop()
        if "Properties: map[string]spec.Schema{" in line:
            in_props = True
            continue
        m = _PROP.match(line)
        if m and in_props:
            stack.append((ind, m.group(2)))
            continue
        m = _NESTED.match(line)
        if m:
            stack.append((ind, "items" if m.group(2).startswith("Items") else "additionalProperties"))
            continue
        m = _DEFAULT.match(line)
        if m and stack:
            raw = m.group(2).strip()
            value: object
            if raw.startswith('"'):
                value = json.loads(raw)
            elif raw in ("true", "false"):
                value = raw == "true"
            elif re.fullmatch(r"-?\d+", raw):
                value = int(raw)
            elif raw.startswith("map[string]interface{}{}"):
                value = {}
            elif raw.startswith("[]interface{}{}"):
                value = []
            else:
                continue
            out.setdefault(current, {})["/".join(seg for _, seg in stack)] = value
    return out


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/realk8s/src/microshift/vendor")
