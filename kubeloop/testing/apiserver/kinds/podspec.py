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


RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


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
            for j, port in enumerate(c.get("ports") or []):
                cp = (port or {}).get("containerPort")
                if not isinstance(cp, int) or not 0 < cp < 65536:
                    causes.append(m.invalid_cause(f"{path}.ports[{j}].containerPort", cp or 0,
                                                  "must be between 1 and 65535, inclusive"))
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
