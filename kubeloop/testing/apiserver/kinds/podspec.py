"""Pod spec defaults and checks shared by Pods and every workload template (apps, batch).

These are the `SetDefaults_PodSpec` / `SetDefaults_Container` values of kube-apiserver 1.24 that
clients see in every response (`dnsPolicy`, `imagePullPolicy`, `terminationMessagePath`, ...).
"""

from __future__ import annotations

from typing import Any

from kubeloop import meta as kv

from .. import quantity
from ..shapes import Cause
from . import meta as m


def image_pull_policy(image: str) -> str:
    """`Always` for an untagged or `:latest` image, else `IfNotPresent` (digests count as tagged)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    for handler in ("httpGet",):
        h = probe.get(handler)
        if isinstance(h, dict):
            h.setdefault("path", "/")
            h.setdefault("scheme", "HTTP")


def default_container(c: Any) -> None:
    if not isinstance(c, dict):
        return
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if "imagePullPolicy" not in c:
        c["imagePullPolicy"] = image_pull_policy(str(c.get("image") or ""))
    c.setdefault("resources", {})
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for env in c.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("fieldRef") if isinstance(env, dict) else None
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(probe))


def _default_volume(v: Any) -> None:
    if not isinstance(v, dict):
        return
    for src in ("secret", "configMap", "downwardAPI", "projected"):
        s = v.get(src)
        if isinstance(s, dict):
            s.setdefault("defaultMode", 420)
    if not any(k for k in v if k != "name"):
        v["emptyDir"] = {}


def default_pod_spec(spec: Any) -> None:
    """`SetDefaults_PodSpec` + containers + volumes."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    if spec.get("serviceAccountName") and not spec.get("serviceAccount"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    if spec.get("hostNetwork"):
        for c in spec.get("containers") or []:
            for port in (c or {}).get("ports") or []:
                if isinstance(port, dict) and "hostPort" not in port and "containerPort" in port:
                    port["hostPort"] = port["containerPort"]
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            default_container(c)
    for v in spec.get("volumes") or []:
        _default_volume(v)


def default_pod_template(template: Any) -> None:
    """A PodTemplateSpec: its ObjectMeta renders `creationTimestamp: null`, its spec gets defaults."""
    if not isinstance(template, dict):
        return
    meta = template.setdefault("metadata", {})
    meta.setdefault("creationTimestamp", None)
    template.setdefault("spec", {})
    default_pod_spec(template["spec"])


PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _validate_container_ports(ports: Any, fld: str) -> list[Cause]:
    """`validateContainerPorts`."""
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, dict):
            continue
        path = f"{fld}[{i}]"
        name = port.get("name") or ""
        if name:
            msgs = m.is_valid_port_name(name)
            causes += [m.invalid_cause(f"{path}.name", name, msg) for msg in msgs]
            if not msgs and name in names:
                causes.append(m.duplicate_cause(f"{path}.name", name))
            names.add(name)
        cp = port.get("containerPort") or 0
        if cp == 0:
            causes.append(m.required_cause(f"{path}.containerPort"))
        elif not 0 < cp < 65536:
            causes.append(m.invalid_cause(f"{path}.containerPort", cp, "must be between 1 and 65535, inclusive"))
        hp = port.get("hostPort") or 0
        if hp and not 0 < hp < 65536:
            causes.append(m.invalid_cause(f"{path}.hostPort", hp, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol") or ""
        if not protocol:
            causes.append(m.required_cause(f"{path}.protocol"))
        elif protocol not in PORT_PROTOCOLS:
            causes.append(m.not_supported_cause(f"{path}.protocol", protocol, PORT_PROTOCOLS))
    return causes


RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


def validate_pod_template(template: Any, fld: str) -> list[Cause]:
    """`ValidatePodTemplateSpec` (its metadata's labels and annotations are named without
    `metadata`: `spec.template.labels`)."""
    template = template if isinstance(template, dict) else {}
    tmeta = template.get("metadata") or {}
    causes = m.validate_labels(tmeta.get("labels"), f"{fld}.labels")
    causes += m.validate_annotations(tmeta.get("annotations"), f"{fld}.annotations")
    return causes + validate_pod_spec(template.get("spec") or {}, f"{fld}.spec")


def validate_pod_spec(spec: Any, fld: str, restart_policies: tuple[str, ...] = RESTART_POLICIES) -> list[Cause]:
    """The parts of `ValidatePodSpec` clients usually trip over, in its order: volumes, containers,
    init containers, restart and DNS policies, node selector, security context, affinity,
    tolerations."""
    if not isinstance(spec, dict):
        return [m.required_cause(fld)]
    causes, volumes = _validate_volumes(spec.get("volumes"), f"{fld}.volumes")
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    if not containers:
        causes.append(m.required_cause(f"{fld}.containers"))
    else:
        causes += _validate_containers(containers, f"{fld}.containers", volumes)
        causes += _host_port_conflicts(containers, f"{fld}.containers")
    init = [c for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    if init:
        causes += _validate_containers(init, f"{fld}.initContainers", volumes)
        names = {c.get("name") for c in containers}
        for i, c in enumerate(init):  # `validateInitContainers`: unique among all containers
            if c.get("name") in names:
                causes.append(m.duplicate_cause(f"{fld}.initContainers[{i}].name", c.get("name")))
            if c.get("name"):
                names.add(c.get("name"))
    rp = spec.get("restartPolicy")
    if rp not in restart_policies:
        if rp in RESTART_POLICIES:
            causes.append(m.not_supported_cause(f"{fld}.restartPolicy", rp, restart_policies))
        else:
            causes.append(m.not_supported_cause(f"{fld}.restartPolicy", rp or "", RESTART_POLICIES))
    dp = spec.get("dnsPolicy")
    if dp not in DNS_POLICIES:
        causes.append(m.not_supported_cause(f"{fld}.dnsPolicy", dp or "", DNS_POLICIES))
    causes += m.validate_labels(spec.get("nodeSelector"), f"{fld}.nodeSelector")
    causes += _validate_ids(spec.get("securityContext"), f"{fld}.securityContext", ("fsGroup", "runAsUser", "runAsGroup"))
    causes += _validate_affinity(spec.get("affinity"), f"{fld}.affinity")
    causes += _validate_tolerations(spec.get("tolerations"), f"{fld}.tolerations")
    # 1.24 accepts (and keeps) a negative terminationGracePeriodSeconds on create
    return causes


# `validateVolumeSource` counts the sources in this order; a second one is refused at its own path
VOLUME_SOURCES = ("emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs",
                  "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte",
                  "downwardAPI", "fc", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
                  "azureDisk", "storageos", "configMap", "scaleIO", "projected", "csi", "ephemeral")
# the one required name of the sources that name an object or a path
_SOURCE_NAME = {"hostPath": "path", "secret": "secretName", "configMap": "name", "persistentVolumeClaim": "claimName"}


def _validate_volumes(volumes: Any, fld: str) -> tuple[list[Cause], set[str]]:
    """`ValidateVolumes`: each volume's source, then its name; the names of the valid ones."""
    causes: list[Cause] = []
    names: set[str] = set()
    for i, vol in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(vol, dict):
            continue
        path = f"{fld}[{i}]"
        el: list[Cause] = []
        found = 0
        for source in VOLUME_SOURCES:
            if vol.get(source) is None:
                continue
            if found:
                el.append(m.forbidden_cause(f"{path}.{source}", "may not specify more than 1 volume type"))
                continue
            found += 1
            key = _SOURCE_NAME.get(source)
            if key and isinstance(vol[source], dict) and not vol[source].get(key):
                el.append(m.required_cause(f"{path}.{source}.{key}"))
        if not found:
            el.append(m.required_cause(path, "must specify a volume type"))
        name = vol.get("name") or ""
        if not name:
            el.append(m.required_cause(f"{path}.name"))
        else:
            el += [m.invalid_cause(f"{path}.name", name, msg) for msg in kv.is_dns1123_label(name)]
        if name in names:
            el.append(m.duplicate_cause(f"{path}.name", name))
        if el:
            causes += el
        else:
            names.add(name)
    return causes, names


PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


def _validate_containers(containers: list[dict[str, Any]], fld: str, volumes: set[str]) -> list[Cause]:
    """`validateContainers`, per container in its order (the checks modelled)."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        path = f"{fld}[{i}]"
        causes += m.validate_item_name(c.get("name") or "", f"{path}.name", seen, kv.is_dns1123_label)
        if not c.get("image"):
            causes.append(m.required_cause(f"{path}.image"))
        for probe in _PROBES:
            spec = c.get(probe)
            if isinstance(spec, dict) and not any(spec.get(h) is not None for h in _HANDLERS):
                causes.append(m.required_cause(f"{path}.{probe}", "must specify a handler type"))
        causes += _validate_container_ports(c.get("ports"), f"{path}.ports")
        causes += _validate_env(c.get("env"), f"{path}.env")
        causes += _validate_volume_mounts(c.get("volumeMounts"), f"{path}.volumeMounts", volumes)
        policy = c.get("imagePullPolicy")
        if policy not in PULL_POLICIES:
            causes.append(m.not_supported_cause(f"{path}.imagePullPolicy", policy or "", PULL_POLICIES))
        causes += _validate_resources(c.get("resources"), f"{path}.resources")
        causes += _validate_ids(c.get("securityContext"), f"{path}.securityContext", ("runAsUser", "runAsGroup"))
    return causes


def _validate_env(env: Any, fld: str) -> list[Cause]:
    """`ValidateEnv`: each name required and an environment variable name (`IsEnvVarName`)."""
    causes: list[Cause] = []
    for i, ev in enumerate(env if isinstance(env, list) else []):
        if not isinstance(ev, dict):
            continue
        name = ev.get("name") or ""
        if not name:
            causes.append(m.required_cause(f"{fld}[{i}].name"))
            continue
        causes += [m.invalid_cause(f"{fld}[{i}].name", name, msg) for msg in kv.is_env_var_name(name)]
    return causes


def _validate_volume_mounts(mounts: Any, fld: str, volumes: set[str]) -> list[Cause]:
    """`ValidateVolumeMounts`: a mount names a (valid) volume of the pod, at a path of its own."""
    causes: list[Cause] = []
    paths: set[str] = set()
    for i, mnt in enumerate(mounts if isinstance(mounts, list) else []):
        if not isinstance(mnt, dict):
            continue
        name, mount_path = mnt.get("name") or "", mnt.get("mountPath") or ""
        if not name:
            causes.append(m.required_cause(f"{fld}[{i}].name"))
        if name not in volumes:
            causes.append(m.cause_raw("FieldValueNotFound", f"{fld}[{i}].name", f'Not found: "{name}"'))
        if not mount_path:
            causes.append(m.required_cause(f"{fld}[{i}].mountPath"))
        if mount_path in paths:
            causes.append(m.invalid_cause(f"{fld}[{i}].mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
    return causes


def _validate_resources(resources: Any, fld: str) -> list[Cause]:
    """`ValidateResourceRequirements`: a request may not exceed its limit."""
    if not isinstance(resources, dict):
        return []
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    causes: list[Cause] = []
    for name, value in requests.items() if isinstance(requests, dict) and isinstance(limits, dict) else ():
        if name not in limits:
            continue
        try:
            request, limit = quantity.parse(str(value)), quantity.parse(str(limits[name]))
        except quantity.QuantityError:
            continue
        if request.value > limit.value:
            causes.append(m.invalid_cause(f"{fld}.requests", str(request), f"must be less than or equal to {name} limit"))
    return causes


def _validate_ids(context: Any, fld: str, keys: tuple[str, ...]) -> list[Cause]:
    """`IsValidUserID`/`IsValidGroupID` of a security context's ids."""
    causes: list[Cause] = []
    for key in keys if isinstance(context, dict) else ():
        value = context.get(key)
        if isinstance(value, int) and not 0 <= value <= 2147483647:
            causes.append(m.invalid_cause(f"{fld}.{key}", value, "must be between 0 and 2147483647, inclusive"))
    return causes


def _host_port_conflicts(containers: list[dict[str, Any]], fld: str) -> list[Cause]:
    """`AccumulateUniqueHostPorts`: a protocol/hostIP/hostPort is used once across the containers."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        for pi, port in enumerate(c.get("ports") or []):
            if not isinstance(port, dict) or not port.get("hostPort"):
                continue
            key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{port['hostPort']}"
            if key in seen:
                causes.append(m.duplicate_cause(f"{fld}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return causes


NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _validate_node_selector_requirements(exprs: Any, fld: str) -> list[Cause]:
    """`ValidateNodeSelectorRequirement` of each expression."""
    causes: list[Cause] = []
    for i, rq in enumerate(exprs if isinstance(exprs, list) else []):
        if not isinstance(rq, dict):
            continue
        path, op, values = f"{fld}[{i}]", rq.get("operator") or "", rq.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                causes.append(m.required_cause(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                causes.append(m.forbidden_cause(f"{path}.values",
                                                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                causes.append(m.required_cause(f"{path}.values",
                                               "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        else:
            causes.append(m.invalid_cause(f"{path}.operator", op, "not a valid selector operator"))
        key = rq.get("key") or ""
        causes += [m.invalid_cause(f"{path}.key", key, msg) for msg in kv.is_qualified_name(key)]
    return causes


def _validate_affinity(affinity: Any, fld: str) -> list[Cause]:
    """`validateNodeAffinity`'s node selector terms (required and preferred)."""
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    if not isinstance(node, dict):
        return []
    causes: list[Cause] = []
    path = f"{fld}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        terms = required.get("nodeSelectorTerms") or []
        if not terms:
            causes.append(m.required_cause(f"{path}.nodeSelectorTerms", "must have at least one node selector term"))
        for i, term in enumerate(terms if isinstance(terms, list) else []):
            if isinstance(term, dict):
                causes += _validate_node_selector_requirements(
                    term.get("matchExpressions"), f"{path}.nodeSelectorTerms[{i}].matchExpressions")
    path = f"{fld}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for i, pref in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        if isinstance(pref, dict) and isinstance(pref.get("preference"), dict):
            causes += _validate_node_selector_requirements(
                pref["preference"].get("matchExpressions"), f"{path}[{i}].preference.matchExpressions")
    return causes


TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _validate_tolerations(tolerations: Any, fld: str) -> list[Cause]:
    """`ValidateTolerations`."""
    causes: list[Cause] = []
    for i, t in enumerate(tolerations if isinstance(tolerations, list) else []):
        if not isinstance(t, dict):
            continue
        path, key, op = f"{fld}[{i}]", t.get("key") or "", t.get("operator") or ""
        if key:
            causes += [m.invalid_cause(f"{path}.key", key, msg) for msg in kv.is_qualified_name(key)]
        if not key and op != "Exists":
            causes.append(m.invalid_cause(f"{path}.operator", op, "operator must be Exists when `key` is empty, "
                                          "which means \"match all values and all keys\""))
        effect = t.get("effect") or ""
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(m.invalid_cause(f"{path}.effect", effect,
                                          "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        value = t.get("value") or ""
        if op in ("Equal", ""):
            causes += [m.invalid_cause(f"{path}.operator", value, msg) for msg in kv.is_label_value(value)]
        elif op == "Exists":
            if value:
                causes.append(m.invalid_cause(f"{path}.operator", t.get("value"),
                                              "value must be empty when `operator` is 'Exists'"))
        else:
            causes.append(m.not_supported_cause(f"{path}.operator", op, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            causes.append(m.not_supported_cause(f"{path}.effect", effect, TAINT_EFFECTS))
    return causes
