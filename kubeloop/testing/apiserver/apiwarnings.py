"""The `Warning` headers kube-apiserver 1.24 sends (`299 - "text"`, one header per warning).

- Deprecated API versions: every request to a resource of a deprecated built-in version carries
  the text the real server sent for it (`data/deprecated-apis.json`, recorded from a real 1.24
  server: `autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated in v1.23+, unavailable in
  v1.26+; use autoscaling/v2 HorizontalPodAutoscaler`), and so does every request to a CRD version
  marked `deprecated` (its `deprecationWarning`, or the default text naming the newest served,
  non-deprecated version).
- Pod specs (`pkg/api/pod/warnings.go`): deprecated node labels in selectors and affinity,
  deprecated annotations and volume plugins, duplicate names, fractional byte quantities, on the
  create of a pod and on the create or spec change of an object with a pod template; and a
  CronJob schedule with `TZ`.

Strategies add warnings to the request being served with `add()`; the HTTP layer collects them
(`collect()` around a request) and writes the headers.
"""

from __future__ import annotations

import contextlib
import unicodedata
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from functools import cache
from importlib import resources
from typing import Any

import orjson

from . import quantity
from .catalog import version_priority
from .shapes import Obj

_CURRENT: ContextVar[list[str] | None] = ContextVar("kubeloop_emulator_warnings", default=None)


@contextlib.contextmanager
def collect() -> Iterator[list[str]]:
    """Collect the warnings added while serving one request (in this task)."""
    bucket: list[str] = []
    token = _CURRENT.set(bucket)
    try:
        yield bucket
    finally:
        _CURRENT.reset(token)


def add(*texts: str) -> None:
    """Warn the client of the request being served (strategies, deprecations, admission webhooks'
    answers), as the warning recorder does: the same text once, an empty one or one with control
    characters (which `NewWarningHeader` refuses) not at all; outside a request, nothing."""
    bucket = _CURRENT.get()
    if bucket is None:
        return
    for text in texts:
        if text and text not in bucket and not any(unicodedata.category(c) == "Cc" for c in text):
            bucket.append(text)


ORPHANING_DELETE = ("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to "
                    "remove them or set propagationPolicy=Orphan to suppress this warning")


def orphaning_delete(orphans_by_default: bool, opts: Mapping[str, Any]) -> None:
    """A DELETE of a kind that orphans by default (batch/v1 Jobs) without a propagation policy or
    `orphanDependents` (the Job storage's `Delete` and `DeleteCollection`)."""
    if orphans_by_default and opts.get("propagationPolicy") is None and opts.get("orphanDependents") is None:
        add(ORPHANING_DELETE)


def header_value(text: str) -> str:
    """RFC 7234 warn-value with kube-apiserver's agent `-`: `299 - "text"` (quotes and backslashes escaped)."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- deprecated API versions ------------------------------------------------------------------------
@cache
def _recorded_deprecations() -> dict[str, str]:
    raw = (resources.files(__package__) / "data" / "deprecated-apis.json").read_bytes()
    return dict(orjson.loads(raw)["deprecated"])


def deprecated_api(group: str, version: str, resource: str, crd: Obj | None = None) -> str | None:
    """The warning every request to this resource version gets, None when it is not deprecated.
    `crd`: the CRD serving it (custom resources)."""
    if crd is None:
        return _recorded_deprecations().get(f"{group}/{version}/{resource}")
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    mine = next((v for v in versions if v.get("name") == version), None)
    if mine is None or not mine.get("deprecated"):
        return None
    if mine.get("deprecationWarning") is not None:
        return str(mine["deprecationWarning"])
    kind = str((spec.get("names") or {}).get("kind") or "")
    text = f"{group}/{version} {kind} is deprecated"
    # `defaultDeprecationWarning`: the newest served, non-deprecated version newer than this one
    newer = [str(v.get("name")) for v in versions if v.get("served") and not v.get("deprecated")
             and version_priority(str(v.get("name"))) < version_priority(version)]
    if newer:
        text += f"; use {group}/{min(newer, key=version_priority)} {kind}"
    return text


# ---- pod specs (pkg/api/pod/warnings.go) -------------------------------------------------------------
_DEPRECATED_NODE_LABELS = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region": 'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    "failure-domain.beta.kubernetes.io/zone": 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    "beta.kubernetes.io/instance-type": 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
}
_DEPRECATED_ANNOTATIONS = {
    "scheduler.alpha.kubernetes.io/critical-pod": 'non-functional in v1.16+; use the "priorityClassName" field instead',
    "security.alpha.kubernetes.io/sysctls": 'non-functional in v1.11+; use the "sysctls" field instead',
    "security.alpha.kubernetes.io/unsafe-sysctls": 'non-functional in v1.11+; use the "sysctls" field instead',
}
_DEPRECATED_VOLUMES = (
    ("photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    ("gitRepo", "deprecated in v1.11"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, support removal is planned in v1.26"),
    ("storageos", "deprecated in v1.22, support removal is planned in v1.26"),
    ("quobyte", "deprecated in v1.22, support removal is planned in v1.26"),
)
_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
_SECCOMP_TEXT = 'deprecated since v1.19, non-functional in v1.25+; use the "seccompProfile" field instead'


def _join(prefix: str, child: str) -> str:
    return f"{prefix}.{child}" if prefix else child


def _quoted(s: str) -> str:
    """Go's `%q` of a string."""
    return orjson.dumps(s).decode()


def _fractional_bytes(value: Any) -> str | None:
    """The quantity's text when it is not a whole number of bytes (`MilliValue() % 1000 != 0`)."""
    try:
        q = quantity.parse(str(value))
    except quantity.QuantityError:
        return None
    return str(q) if q.milli_value % 1000 else None


def pod_warnings(prefix: str, spec: Obj, meta: Obj) -> list[str]:
    """`warningsForPodSpecAndMeta`: `prefix` is the pod template's field path (`spec.template`;
    "" for a pod itself)."""
    out: list[str] = []
    spec_path = _join(prefix, "spec")
    annotations = meta.get("annotations") or {}
    for k in (spec.get("nodeSelector") or {}):
        if k in _DEPRECATED_NODE_LABELS:
            out.append(f"{spec_path}.nodeSelector[{k}]: {_DEPRECATED_NODE_LABELS[k]}")
    node_affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for i, term in enumerate(required.get("nodeSelectorTerms") or []):
        for j, e in enumerate((term or {}).get("matchExpressions") or []):
            key = (e or {}).get("key", "")
            if key in _DEPRECATED_NODE_LABELS:
                out.append(f"{spec_path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                           f"nodeSelectorTerms[{i}].matchExpressions[{j}].key: {key} is {_DEPRECATED_NODE_LABELS[key]}")
    for i, pref in enumerate(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        for j, e in enumerate(((pref or {}).get("preference") or {}).get("matchExpressions") or []):
            key = (e or {}).get("key", "")
            if key in _DEPRECATED_NODE_LABELS:
                out.append(f"{spec_path}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]."
                           f"preference.matchExpressions[{j}].key: {key} is {_DEPRECATED_NODE_LABELS[key]}")
    for i, t in enumerate(spec.get("topologySpreadConstraints") or []):
        key = (t or {}).get("topologyKey", "")
        if key in _DEPRECATED_NODE_LABELS:
            out.append(f"{spec_path}.topologySpreadConstraints[{i}].topologyKey: {key} is {_DEPRECATED_NODE_LABELS[key]}")
    meta_path = _join(prefix, "metadata")
    for key, text in _DEPRECATED_ANNOTATIONS.items():
        if key in annotations:
            out.append(f"{meta_path}.annotations[{key}]: {text}")
    volumes = spec.get("volumes") or []
    for i, v in enumerate(volumes):
        for plugin, text in _DEPRECATED_VOLUMES:
            if isinstance(v, dict) and v.get(plugin) is not None:
                shown = "storageOS" if plugin == "storageos" else plugin
                out.append(f"{spec_path}.volumes[{i}].{shown}: {text}")
    out += _duplicates(spec.get("hostAliases"), "ip", f"{spec_path}.hostAliases", "duplicate ip")
    out += _duplicates(spec.get("imagePullSecrets"), "name", f"{spec_path}.imagePullSecrets", "duplicate name")
    for i, s in enumerate(spec.get("imagePullSecrets") or []):
        if not (s or {}).get("name"):
            out.append(f'{spec_path}.imagePullSecrets[{i}].name: invalid empty name ""')
    out += _duplicates(volumes, "name", f"{spec_path}.volumes", "duplicate name")
    overhead = spec.get("overhead") or {}
    for res in ("memory", "ephemeral-storage"):
        frac = _fractional_bytes(overhead[res]) if res in overhead else None
        if frac:
            out.append(f'{spec_path}.overhead[{res}]: fractional byte value "{frac}" is invalid, must be an integer')
    if _SECCOMP_POD in annotations and not (spec.get("securityContext") or {}).get("seccompProfile"):
        out.append(f"{meta_path}.annotations[{_SECCOMP_POD}]: {_SECCOMP_TEXT}")
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(kind) or []):
            if not isinstance(c, dict):
                continue
            cpath = f"{spec_path}.{kind}[{i}]"
            key = _SECCOMP_CONTAINER + str(c.get("name", ""))
            if key in annotations and not (c.get("securityContext") or {}).get("seccompProfile"):
                out.append(f"{meta_path}.annotations[{key}]: {_SECCOMP_TEXT}")
            resources_ = c.get("resources") or {}
            for which in ("limits", "requests"):
                for name in ("memory", "ephemeral-storage"):
                    value = (resources_.get(which) or {}).get(name)
                    frac = _fractional_bytes(value) if value is not None else None
                    if frac:
                        out.append(f'{cpath}.resources.{which}[{name}]: fractional byte value "{frac}" is invalid, '
                                   "must be an integer")
            out += _duplicates(c.get("env"), "name", f"{cpath}.env", "duplicate name")
    return out


def _duplicates(items: Any, key: str, path: str, what: str) -> list[str]:
    out: list[str] = []
    seen: set[Any] = set()
    if not isinstance(items, list) or len(items) < 2:
        return out
    for i, item in enumerate(items):
        value = (item or {}).get(key, "") if isinstance(item, dict) else ""
        if value in seen:
            out.append(f"{path}[{i}].{key}: {what} {_quoted(str(value))}")
        else:
            seen.add(value)
    return out


def template_warnings(prefix: str, template: Any) -> list[str]:
    """`GetWarningsForPodTemplate` at `prefix` (`spec.template`)."""
    if not isinstance(template, dict):
        return []
    return pod_warnings(prefix, template.get("spec") or {}, template.get("metadata") or {})


def cron_schedule_warnings(spec: Obj) -> list[str]:
    """A CronJob schedule naming a time zone (the real text names `spec.spec.schedule`)."""
    if "TZ" in str(spec.get("schedule") or ""):
        return ["CRON_TZ or TZ used in spec.spec.schedule is not officially supported, see "
                "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"]
    return []

