"""Pod spec defaults and checks shared by Pods and every workload template (apps, batch).

These are the `SetDefaults_PodSpec` / `SetDefaults_Container` values of kube-apiserver 1.24 that
clients see in every response (`dnsPolicy`, `imagePullPolicy`, `terminationMessagePath`, ...).
"""

from __future__ import annotations

from typing import Any

from kubeloop import meta as kv

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
    """The parts of `ValidatePodSpec` clients usually trip over."""
    causes: list[Cause] = []
    if not isinstance(spec, dict):
        return [m.required_cause(fld)]
    containers = spec.get("containers") or []
    if not containers:
        causes.append(m.required_cause(f"{fld}.containers"))
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            path = f"{fld}.{key}[{i}]"
            if not isinstance(c, dict):
                continue
            causes += m.validate_item_name(c.get("name") or "", f"{path}.name", seen, kv.is_dns1123_label)
            if not c.get("image"):
                causes.append(m.required_cause(f"{path}.image"))
            policy = c.get("imagePullPolicy")
            if policy not in ("Always", "IfNotPresent", "Never"):
                causes.append(m.not_supported_cause(f"{path}.imagePullPolicy", policy or "",
                                                    ("Always", "IfNotPresent", "Never")))
            causes += _validate_container_ports(c.get("ports"), f"{path}.ports")
    rp = spec.get("restartPolicy")
    if rp not in restart_policies:
        if rp in RESTART_POLICIES:
            causes.append(m.not_supported_cause(f"{fld}.restartPolicy", rp, restart_policies))
        else:
            causes.append(m.not_supported_cause(f"{fld}.restartPolicy", rp or "", RESTART_POLICIES))
    dp = spec.get("dnsPolicy")
    if dp not in DNS_POLICIES:
        causes.append(m.not_supported_cause(f"{fld}.dnsPolicy", dp or "", DNS_POLICIES))
    tgp = spec.get("terminationGracePeriodSeconds")
    if isinstance(tgp, int) and tgp < 0:
        causes.append(m.invalid_cause(f"{fld}.terminationGracePeriodSeconds", tgp,
                                      "must be greater than or equal to 0"))
    return causes
