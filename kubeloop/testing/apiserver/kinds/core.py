"""core/v1 kinds: Namespace, ConfigMap, Secret, ServiceAccount, Endpoints, Service, Pod,
PersistentVolumeClaim, Node (Events live in `events.py`)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from kubeloop import meta as kv

from .. import apiwarnings, gojson
from ..errors import bad_request
from ..govalues import TYPED, equal, json_kind
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from . import podspec
from .base import KindStrategy, without
from .schema import (
    ANY,
    BOOL,
    BYTES,
    INT32,
    OBJECT_REFERENCE,
    POD_SPEC,
    POD_TEMPLATE_SPEC,
    STRING,
    list_of,
    map_of,
    struct,
    top_level,
)

METADATA_NAME_LABEL = "kubernetes.io/metadata.name"


def _get(obj: Obj, path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


FieldValue = Callable[[Obj], str]


def text_field(path: str) -> FieldValue:
    """A fieldSelector value read as a string ("" when absent)."""
    return lambda obj: str(_get(obj, path) or "")


def count_field(path: str) -> FieldValue:
    """A fieldSelector value read as a decimal count ("0" when absent)."""
    return lambda obj: str(int(_get(obj, path) or 0))


def flag_field(path: str) -> FieldValue:
    """A fieldSelector value read as Go prints a bool."""
    return lambda obj: "true" if _get(obj, path) else "false"


class FieldLabelStrategy(KindStrategy):
    """Kinds with a registered field-label conversion: `selectable_fields` maps each extra fieldSelector label
    (in the order the server lists them) to its value's reader; unsupported labels get the short message."""

    selectable_fields: ClassVar[Mapping[str, FieldValue]] = {}

    def field_labels(self, info: ServedResource) -> tuple[str, ...]:
        return super().field_labels(info) + tuple(self.selectable_fields)

    def check_field_label(self, info: ServedResource, label: str) -> None:
        if label not in self.field_labels(info):
            raise bad_request(f"field label not supported: {label}")

    def field_values(self, info: ServedResource, obj: Obj) -> dict[str, str]:
        values = super().field_values(info, obj)
        for label, read in self.selectable_fields.items():
            values[label] = read(obj)
        return values


# -- Namespace --------------------------------------------------------------------------------

class NamespaceStrategy(FieldLabelStrategy):
    schema = top_level("Namespace", spec=struct("NamespaceSpec", finalizers=list_of(STRING)),
                       status=struct("NamespaceStatus", phase=STRING, conditions=list_of(ANY)))
    name_fn = staticmethod(m.name_is_dns_label)
    selectable_fields = {"status.phase": text_field("status.phase")}

    def default(self, info: ServedResource, obj: Obj) -> None:
        meta = obj["metadata"]
        if meta.get("name"):
            meta.setdefault("labels", {})[METADATA_NAME_LABEL] = meta["name"]
        status = obj.get("status")
        if isinstance(status, dict):
            status.setdefault("phase", "Active")

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        fins = spec.setdefault("finalizers", [])
        if "kubernetes" not in fins:
            fins.append("kubernetes")

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        # Canonicalize: a generated name gets its label once the name is known
        meta = obj.setdefault("metadata", {})
        if meta.get("name"):
            meta.setdefault("labels", {})[METADATA_NAME_LABEL] = meta["name"]
        return super().validate(info, obj)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        for i, f in enumerate((obj.get("spec") or {}).get("finalizers") or []):
            for msg in kv.is_qualified_name(f):
                causes.append(m.invalid_cause(f"spec.finalizers[{i}]", f, msg))
            if "/" not in f and f not in m.STANDARD_FINALIZERS:
                causes.append(m.invalid_cause(f"spec.finalizers[{i}]", f,
                                              "name is neither a standard finalizer name nor is it fully qualified"))
        return causes

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        new["spec"] = copy.deepcopy(old.get("spec") or {})

    def prepare_for_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(info, new, old)

    def prepare_for_subresource_update(self, info: ServedResource, subresource: str, new: Obj, old: Obj) -> None:
        if subresource == "finalize":
            self.prepare_for_finalize_update(info, new, old)
        else:
            super().prepare_for_subresource_update(info, subresource, new, old)

    def prepare_for_finalize_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """PUT `/namespaces/<name>/finalize`: only `spec.finalizers` may change."""
        m.carry_system_fields(new, old)
        spec = new.get("spec") or {}
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
        new["spec"] = {"finalizers": list(spec.get("finalizers") or [])} if spec.get("finalizers") else {}

    def prepare_for_delete(self, info: ServedResource, obj: Obj) -> bool:
        obj.setdefault("status", {})["phase"] = "Terminating"
        return bool((obj.get("spec") or {}).get("finalizers"))



# -- ConfigMap / Secret -----------------------------------------------------------------------

MAX_SECRET_SIZE = 1024 * 1024
IMMUTABLE_MSG = "field is immutable when `immutable` is set"


def _validate_keys(data: Any, fld: str) -> list[Cause]:
    causes: list[Cause] = []
    if not data or kv.config_keys_ok(data):
        return causes
    for key in data:
        if kv.config_key_ok(key):
            continue
        for msg in kv.is_config_key(key):
            causes.append(m.invalid_cause(f"{fld}[{key}]", key, msg))
    return causes


def _immutable_causes(new: Obj, old: Obj, fields: tuple[str, ...]) -> list[Cause]:
    if old.get("immutable") is not True:
        return []
    causes: list[Cause] = []
    if new.get("immutable") is not True:
        causes.append(m.forbidden_cause("immutable", IMMUTABLE_MSG))
    for f in fields:
        if not equal(new.get(f), old.get(f), TYPED):
            causes.append(m.forbidden_cause(f, IMMUTABLE_MSG))
    return causes


class ConfigMapStrategy(KindStrategy):
    schema = top_level("ConfigMap", data=map_of(STRING), binaryData=map_of(BYTES), immutable=BOOL)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        causes = _validate_keys(data, "data")
        for key in binary:
            for msg in kv.is_config_key(key):
                causes.append(m.invalid_cause(f"binaryData[{key}]", key, msg))
            if key in data:
                causes.append(m.invalid_cause(f"data[{key}]", key, "duplicate of key present in binaryData"))
        size = sum(len(k) + len(v) for k, v in data.items()) + sum(
            len(k) + len(v) * 3 // 4 for k, v in binary.items())
        if size > MAX_SECRET_SIZE:
            causes.append(m.too_long_cause("", MAX_SECRET_SIZE))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += _immutable_causes(new, old, ("data", "binaryData"))
        return causes + self.validate(info, new) + self.validate_spec(info, new)


def _json_object_error(encoded: str) -> str | None:
    """What `json.Unmarshal(data, &map[string]interface{}{})` says of base64 data (None: an object)."""
    try:
        raw = base64.b64decode(encoded)
    except ValueError:
        return None  # undecodable data is a decoding error before validation
    problem = gojson.syntax_error(raw)
    if problem:
        return problem
    value = json.loads(raw)
    if isinstance(value, dict) or value is None:
        return None
    return f"json: cannot unmarshal {m.GO_JSON_TYPES[json_kind(value)]} into Go value of type map[string]interface {{}}"


SECRET_TYPE_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.key", "tls.crt"),
}


class SecretStrategy(FieldLabelStrategy):
    schema = top_level("Secret", data=map_of(BYTES), stringData=map_of(STRING), type=STRING, immutable=BOOL)
    selectable_fields = {"type": text_field("type")}

    def default(self, info: ServedResource, obj: Obj) -> None:
        if not obj.get("type"):
            obj["type"] = "Opaque"
        string_data = obj.pop("stringData", None)
        if string_data:
            data = obj.get("data") or {}
            for k, v in string_data.items():
                data[k] = base64.b64encode(v.encode()).decode()
            obj["data"] = data

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        data = obj.get("data") or {}
        causes = _validate_keys(data, "data")
        kind = obj.get("type") or ""
        meta = obj.get("metadata") or {}
        if kind == "kubernetes.io/service-account-token":
            if not (meta.get("annotations") or {}).get("kubernetes.io/service-account.name"):
                causes.append(m.required_cause("metadata.annotations[kubernetes.io/service-account.name]"))
        elif kind == "kubernetes.io/basic-auth":
            if "username" not in data and "password" not in data:
                causes.append(m.required_cause("data[username]"))
                causes.append(m.required_cause("data[password]"))
        elif kind == "kubernetes.io/ssh-auth":
            if not data.get("ssh-privatekey"):
                causes.append(m.required_cause("data[ssh-privatekey]"))
        elif kind == "kubernetes.io/tls":
            causes += [m.required_cause(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
        elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
            key = SECRET_TYPE_KEYS[kind][0]
            if key not in data:
                causes.append(m.required_cause(f"data[{key}]"))
            else:
                problem = _json_object_error(data[key])
                if problem:
                    causes.append(m.invalid_cause(f"data[{key}]", "<secret contents redacted>", problem))
        size = sum(len(k) + len(v) * 3 // 4 for k, v in data.items())
        if size > MAX_SECRET_SIZE:
            causes.append(m.too_long_cause("data", MAX_SECRET_SIZE))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += m.immutable_causes("type", new.get("type"), old.get("type"))
        causes += _immutable_causes(new, old, ("data",))
        return causes + self.validate(info, new) + self.validate_spec(info, new)



# -- ServiceAccount / Endpoints ---------------------------------------------------------------

class ServiceAccountStrategy(KindStrategy):
    update_validates_new = True
    schema = top_level("ServiceAccount", secrets=list_of(OBJECT_REFERENCE),
                       imagePullSecrets=list_of(struct("LocalObjectReference", name=STRING)),
                       automountServiceAccountToken=BOOL)


ENDPOINT_PORT = struct("EndpointPort", name=STRING, port=INT32, protocol=STRING, appProtocol=STRING)
ENDPOINT_SUBSET = struct("EndpointSubset", addresses=list_of(ANY), notReadyAddresses=list_of(ANY),
                         ports=list_of(ENDPOINT_PORT))


class EndpointsStrategy(KindStrategy):
    schema = top_level("Endpoints", subsets=list_of(ENDPOINT_SUBSET))

    def default(self, info: ServedResource, obj: Obj) -> None:
        for subset in obj.get("subsets") or []:
            for port in (subset or {}).get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


# -- Pod --------------------------------------------------------------------------------------

NOT_READY_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]
POD_UPDATE_MSG = (
    "pod updates may not change fields other than `spec.containers[*].image`, "
    "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to "
    "existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously negative)"
)


def qos_class(spec: Obj) -> str:
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        res = (c or {}).get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or str(req.get(r, lim.get(r))) != str(lim[r]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _pod_ips(pod: Obj) -> str:
    ips = [str((ip or {}).get("ip") or "") for ip in _get(pod, "status.podIPs") or []]
    return ",".join(ips) if ips else str(_get(pod, "status.podIP") or "")


class PodStrategy(FieldLabelStrategy):
    schema = top_level("Pod", spec=POD_SPEC, status=ANY)

    def warnings_on_create(self, info: ServedResource, obj: Obj) -> list[str]:
        return apiwarnings.pod_warnings("", obj.get("spec") or {}, obj.get("metadata") or {})

    def warnings_on_update(self, info: ServedResource, new: Obj, old: Obj) -> list[str]:
        return []  # none on pod updates in 1.24 (a high-frequency path humans rarely write)
    selectable_fields = {
        **{label: text_field(label) for label in ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                                                  "spec.serviceAccountName", "status.phase", "status.podIP")},
        "status.podIPs": _pod_ips,
        "status.nominatedNodeName": text_field("status.nominatedNodeName"),
        "spec.host": text_field("spec.nodeName"),
    }

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        podspec.default_pod_spec(spec)
        spec.setdefault("enableServiceLinks", True)
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            res = (c or {}).get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and res.get("limits"):
                req = res.setdefault("requests", {})
                for k, v in res["limits"].items():
                    req.setdefault(k, v)

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        spec = obj["spec"]
        # admission plugins every real cluster runs: Priority, DefaultTolerationSeconds
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        tolerations = spec.setdefault("tolerations", [])
        for t in NOT_READY_TOLERATIONS:
            if not any(isinstance(x, dict) and x.get("key") == t["key"] for x in tolerations):
                tolerations.append(dict(t))

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return podspec.validate_pod_spec(obj.get("spec"), "spec")

    def graceful_delete_seconds(self, info: ServedResource, obj: Obj, opts: Obj) -> int:
        """A pod on a node is deleted gracefully (its kubelet would stop it, then delete it with
        grace 0); one without a node, or finished, goes at once (the pod strategy's
        `CheckGracefulDelete`)."""
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        asked = opts.get("gracePeriodSeconds")
        try:
            grace = int(asked) if asked is not None else int(spec.get("terminationGracePeriodSeconds", 30))
        except (TypeError, ValueError):
            grace = 30
        return max(grace, 0)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = super().validate_update_causes(info, new, old)

        def mutable_masked(spec: Obj) -> Obj:
            spec = copy.deepcopy(spec or {})
            for key in ("containers", "initContainers"):
                for c in spec.get(key) or []:
                    if isinstance(c, dict):
                        c.pop("image", None)
            for key in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"):
                spec.pop(key, None)
            return spec

        if not equal(mutable_masked(new.get("spec") or {}), mutable_masked(old.get("spec") or {}), TYPED):
            causes.append(m.forbidden_cause("spec", POD_UPDATE_MSG))
        return causes



# -- PodTemplate --------------------------------------------------------------------------------

class PodTemplateStrategy(KindStrategy):
    schema = top_level("PodTemplate", template=POD_TEMPLATE_SPEC)
    pod_template_path = ("template",)
    has_generation = True  # bumped when the template changes

    def default(self, info: ServedResource, obj: Obj) -> None:
        obj.setdefault("template", {})
        podspec.default_pod_template(obj["template"])

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        template = obj.get("template") or {}
        causes = m.validate_labels((template.get("metadata") or {}).get("labels"), "template.metadata.labels")
        return causes + podspec.validate_pod_spec(template.get("spec"), "template.spec")


# -- PersistentVolumeClaim / Node ---------------------------------------------------------------

def add_finalizer(obj: Obj, finalizer: str) -> None:
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)


class PersistentVolumeClaimStrategy(KindStrategy):
    schema = top_level("PersistentVolumeClaim", spec=struct(
        "PersistentVolumeClaimSpec", open=True, accessModes=list_of(STRING), storageClassName=STRING,
        volumeMode=STRING, volumeName=STRING), status=ANY)

    def default(self, info: ServedResource, obj: Obj) -> None:
        obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"phase": "Pending"}

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        add_finalizer(obj, "kubernetes.io/pvc-protection")  # the StorageObjectInUseProtection admission plugin

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        if not spec.get("accessModes"):
            causes.append(m.required_cause("spec.accessModes", "at least 1 access mode is required"))
        if not ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
            causes.append(m.required_cause("spec.resources[storage]"))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = super().validate_update_causes(info, new, old)
        ns, os_ = without(new.get("spec") or {}, "resources"), without(old.get("spec") or {}, "resources")
        if os_.get("volumeName") and not equal(ns, os_, TYPED):
            causes.append(m.forbidden_cause("spec", "spec is immutable after creation except "
                                            "resources.requests for bound claims"))
        return causes


class NodeStrategy(FieldLabelStrategy):
    schema = top_level("Node", spec=struct("NodeSpec", open=True, unschedulable=BOOL, podCIDR=STRING,
                                           podCIDRs=list_of(STRING), providerID=STRING), status=ANY)
    selectable_fields = {"spec.unschedulable": flag_field("spec.unschedulable")}

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {
            "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
            "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "",
            "operatingSystem": "", "architecture": ""}}

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("podCIDR") and not spec.get("podCIDRs"):
            spec["podCIDRs"] = [spec["podCIDR"]]  # SetDefaults_NodeSpec

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        # the TaintNodesByCondition admission plugin: a new node is not ready until its kubelet says so
        taints = spec.setdefault("taints", [])
        if not any(isinstance(t, dict) and t.get("key") == "node.kubernetes.io/not-ready" for t in taints):
            taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})

