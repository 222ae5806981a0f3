"""Server-side printing: `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (what `kubectl get` asks for).

Each built-in resource gets kube-apiserver 1.24's columns (`tablecolumns.py`) and cells computed as
its printers compute them (`pkg/printers/internalversion/printers.go`, always "wide": the client
hides the priority-1 columns); custom resources get their CRD version's `additionalPrinterColumns`
(JSONPath), or Name and Age; any other resource the default Name and Created At. Each row carries
the object as asked by `includeObject` (`Metadata` by default, `Object`, or `None`).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from typing import Any

from . import errors
from .shapes import Obj
from .tablecolumns import COLUMNS

Cells = list[Any]
META_NAME = ("Name must be unique within a namespace. Is required when creating resources, although some resources "
             "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
             "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
             "http://kubernetes.io/docs/user-guide/identifiers#names")
META_CREATED = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
                "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
                "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
                "Null for lists. More info: "
                "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
INCLUDE_OBJECT = ("Metadata", "Object", "None", "")


# ---- time -------------------------------------------------------------------------------------------

def human_duration(seconds: float) -> str:
    """apimachinery's `duration.HumanDuration`."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _parse(ts: Any) -> datetime.datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def since(ts: Any) -> str:
    """`translateTimestampSince`: the age of a timestamp, `<unknown>` when unset."""
    when = _parse(ts)
    if when is None:
        return "<unknown>"
    return human_duration((datetime.datetime.now(datetime.UTC) - when).total_seconds())


def between(start: Any, end: Any) -> str:
    a, b = _parse(start), _parse(end)
    return human_duration((b - a).total_seconds()) if a and b else ""


# ---- shared formatting -------------------------------------------------------------------------------

def _get(obj: Any, *path: str, default: Any = None) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(key)
    return default if obj is None else obj


def format_labels(labels: Any) -> str:
    """`labels.FormatLabels`: `k=v` sorted, `<none>` when empty."""
    if not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def format_selector(selector: Any) -> str:
    """`metav1.FormatLabelSelector`."""
    if selector is None:
        return "<none>"
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key", ""), req.get("operator", ""), req.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def containers_cells(containers: Any) -> tuple[str, str]:
    """`layoutContainerCells`: names and images, comma separated."""
    cs = [c for c in containers or [] if isinstance(c, dict)]
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _more(items: list[str], count: int, limit: int, empty: str) -> str:
    text = ",".join(items[:limit])
    if count > limit:
        return f"{text} + {count - limit} more..."
    return text or empty


def _access_modes(modes: Any) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    return ",".join(short[m] for m in ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
                    if m in (modes or []))


def _bool_ptr(value: Any) -> str:
    return "<unset>" if value is None else ("True" if value else "False")


# ---- printers (one per built-in kind) ------------------------------------------------------------------

def _pod(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    restarts, ready, total = 0, 0, len(spec.get("containers") or [])
    initializing = False
    inits = status.get("initContainerStatuses") or []
    for i, c in enumerate(inits):
        restarts += int(c.get("restartCount") or 0)
        state = c.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode") == 0:
            continue
        if term is not None:
            reason = "Init:" + (term.get("reason") or (f"Signal:{term['signal']}" if term.get("signal") else
                                                       f"ExitCode:{term.get('exitCode', 0)}"))
        elif wait is not None and wait.get("reason") and wait.get("reason") != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break
    if not initializing:
        restarts, running = 0, False
        for c in reversed(status.get("containerStatuses") or []):
            restarts += int(c.get("restartCount") or 0)
            state = c.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif (state.get("terminated") or {}).get("reason"):
                reason = state["terminated"]["reason"]
            elif state.get("terminated") is not None:
                term = state["terminated"]
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}"
            elif c.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:
            ready_condition = any(x.get("type") == "Ready" and x.get("status") == "True"
                                  for x in status.get("conditions") or [])
            reason = "Running" if ready_condition else "NotReady"
    if o["metadata"].get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips and isinstance(ips[0], dict) else "") or "<none>"
    gates = spec.get("readinessGates") or []
    gate_text = "<none>"
    if gates:
        conditions = {x.get("type"): x.get("status") for x in status.get("conditions") or []}
        gate_text = f"{sum(1 for g in gates if conditions.get(g.get('conditionType')) == 'True')}/{len(gates)}"
    return [o["metadata"]["name"], f"{ready}/{total}", reason, str(restarts), since(o["metadata"].get(
        "creationTimestamp")), ip, spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>",
        gate_text]


def _pod_conditions(o: Obj) -> list[Obj] | None:
    phase = (o.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


def _node(o: Obj) -> Cells:
    status, spec, labels = o.get("status") or {}, o.get("spec") or {}, o["metadata"].get("labels") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    states = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = {k[len("node-role.kubernetes.io/"):] for k in labels if k.startswith("node-role.kubernetes.io/")
             and len(k) > len("node-role.kubernetes.io/")}
    if labels.get("kubernetes.io/role"):
        roles.add(labels["kubernetes.io/role"])
    info = status.get("nodeInfo") or {}

    def address(kind: str) -> str:
        return next((a.get("address") for a in status.get("addresses") or [] if a.get("type") == kind), "<none>")

    return [o["metadata"]["name"], ",".join(states), ",".join(sorted(roles)) or "<none>",
            since(o["metadata"].get("creationTimestamp")), info.get("kubeletVersion", ""), address("InternalIP"),
            address("ExternalIP"), info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


def _event(o: Obj) -> Cells:
    first = since(o.get("firstTimestamp")) if o.get("firstTimestamp") else since(o.get("eventTime"))
    last = since(o.get("lastTimestamp")) if o.get("lastTimestamp") else first
    count = o.get("count") or 0
    if o.get("series"):
        last = since(o["series"].get("lastObservedTime"))
        count = o["series"].get("count") or 0
    elif count == 0:
        count = 1
    inv = o.get("involvedObject") or {}
    target = f"{str(inv.get('kind', '')).lower()}/{inv['name']}" if inv.get("name") else str(inv.get("kind", "")).lower()
    source = o.get("source") or {}
    component = source.get("component") or o.get("reportingComponent") or ""
    instance = source.get("host") or o.get("reportingInstance") or ""
    return [last, o.get("type", ""), o.get("reason", ""), target, inv.get("fieldPath", ""),
            component + (", " + instance if instance else ""), str(o.get("message", "")).strip(), first, count,
            o["metadata"]["name"]]


def _new_event(o: Obj) -> Cells:
    """events.k8s.io Events print as the core Event they are stored as."""
    from .kinds.events import new_to_core

    return _event(new_to_core(dict(o)))


def _service(o: Obj) -> Cells:
    spec = o.get("spec") or {}
    kind = spec.get("type") or ""
    external = spec.get("externalIPs") or []
    if kind in ("ClusterIP", "NodePort"):
        ext = ",".join(external) or "<none>"
    elif kind == "LoadBalancer":
        lb = sorted({i.get("ip") or i.get("hostname") for i in _get(o, "status", "loadBalancer", "ingress",
                                                                     default=[]) if i.get("ip") or i.get("hostname")})
        ext = ",".join([*lb, *external]) or "<pending>"
    elif kind == "ExternalName":
        ext = spec.get("externalName", "")
    else:
        ext = "<unknown>"
    ports = ",".join(f"{p.get('port')}:{p['nodePort']}/{p.get('protocol', '')}" if p.get("nodePort") else
                     f"{p.get('port')}/{p.get('protocol', '')}" for p in spec.get("ports") or [])
    ips = spec.get("clusterIPs") or []
    return [o["metadata"]["name"], kind, ips[0] if ips else "<none>", ext, ports or "<none>",
            since(o["metadata"].get("creationTimestamp")), format_labels(spec.get("selector"))]


def _endpoints(o: Obj) -> Cells:
    subsets = o.get("subsets") or []
    items: list[str] = []
    count = 0
    for ss in subsets:
        addresses = [a.get("ip", "") for a in ss.get("addresses") or []]
        if not ss.get("ports"):
            items += addresses
            count += len(addresses)
        else:
            for p in ss["ports"]:
                for ip in addresses:
                    items.append(f"[{ip}]:{p.get('port')}" if ":" in ip else f"{ip}:{p.get('port')}")
                    count += 1
    text = "<none>" if not subsets else _more(items, count, 3, "")
    return [o["metadata"]["name"], text, since(o["metadata"].get("creationTimestamp"))]


def _endpoint_slice(o: Obj) -> Cells:
    ports = [str(p["port"]) if p.get("port") is not None else (p.get("name") or "*") for p in o.get("ports") or []]
    addresses = [a for e in o.get("endpoints") or [] for a in e.get("addresses") or []]
    return [o["metadata"]["name"], o.get("addressType", ""), _more(ports, len(ports), 3, "<unset>"),
            _more(addresses, len(addresses), 3, "<unset>"), since(o["metadata"].get("creationTimestamp"))]


def _pv(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else status.get("phase", "")
    sc = spec.get("storageClassName") or (o["metadata"].get("annotations") or {}).get(
        "volume.beta.kubernetes.io/storage-class", "")
    return [o["metadata"]["name"], str((spec.get("capacity") or {}).get("storage", "0")),
            _access_modes(spec.get("accessModes")), spec.get("persistentVolumeReclaimPolicy", ""), phase, claim, sc,
            status.get("reason", ""), since(o["metadata"].get("creationTimestamp")), spec.get("volumeMode") or "<unset>"]


def _pvc(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else status.get("phase", "")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = _access_modes(status.get("accessModes"))
        capacity = str((status.get("capacity") or {}).get("storage", "0"))
    sc = spec.get("storageClassName")
    if sc is None:
        sc = (o["metadata"].get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class", "")
    return [o["metadata"]["name"], phase, spec.get("volumeName", ""), capacity, modes, sc,
            since(o["metadata"].get("creationTimestamp")), spec.get("volumeMode") or "<unset>"]


def _workload_wide(o: Obj, selector: str) -> Cells:
    names, images = containers_cells(_get(o, "spec", "template", "spec", "containers"))
    return [names, images, selector]


def _replicated(o: Obj, selector: str) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], int(spec.get("replicas") or 0), int(status.get("replicas") or 0),
            int(status.get("readyReplicas") or 0), since(o["metadata"].get("creationTimestamp")),
            *_workload_wide(o, selector)]


def _deployment(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}",
            int(status.get("updatedReplicas") or 0), int(status.get("availableReplicas") or 0),
            since(o["metadata"].get("creationTimestamp")), *_workload_wide(o, format_selector(spec.get("selector")))]


def _statefulset(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = containers_cells(_get(o, "spec", "template", "spec", "containers"))
    return [o["metadata"]["name"], f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}",
            since(o["metadata"].get("creationTimestamp")), names, images]


def _daemonset(o: Obj) -> Cells:
    status = o.get("status") or {}
    return [o["metadata"]["name"], *(int(status.get(k) or 0) for k in (
        "desiredNumberScheduled", "currentNumberScheduled", "numberReady", "updatedNumberScheduled",
        "numberAvailable")), format_labels(_get(o, "spec", "template", "spec", "nodeSelector")),
        since(o["metadata"].get("creationTimestamp")), *_workload_wide(o, format_selector(
            _get(o, "spec", "selector")))]


def _job(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    succeeded = int(status.get("succeeded") or 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif int(spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    duration = ""
    if status.get("startTime"):
        duration = between(status["startTime"], status.get("completionTime")) if status.get("completionTime") \
            else since(status["startTime"])
    return [o["metadata"]["name"], completions, duration, since(o["metadata"].get("creationTimestamp")),
            *_workload_wide(o, format_selector(spec.get("selector")))]


def _cronjob(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    template = _get(spec, "jobTemplate", "spec") or {}
    names, images = containers_cells(_get(template, "template", "spec", "containers"))
    last = since(status["lastScheduleTime"]) if status.get("lastScheduleTime") else "<none>"
    return [o["metadata"]["name"], spec.get("schedule", ""), _bool_ptr(spec.get("suspend")),
            len(status.get("active") or []), last, since(o["metadata"].get("creationTimestamp")), names, images,
            format_selector(template.get("selector"))]


def _hpa_metric(spec: Obj, status: Obj | None) -> str:
    kind = spec.get("type")
    field = {"External": "external", "Pods": "pods", "Object": "object", "Resource": "resource",
             "ContainerResource": "containerResource"}.get(str(kind))
    if field is None:
        return "<unknown type>"
    target = _get(spec, field, "target") or {}
    current = _get(status, field, "current") if status and status.get(field) is not None else None
    if kind in ("External", "Object") and target.get("averageValue") is not None:
        cur = str(current["averageValue"]) if current and current.get("averageValue") is not None else "<unknown>"
        return f"{cur}/{target['averageValue']} (avg)"
    if kind in ("External", "Object"):
        return f"{current.get('value', '0') if current is not None else '<unknown>'}/{target.get('value', '0')}"
    if kind == "Pods":
        return f"{current.get('averageValue', '0') if current is not None else '<unknown>'}/" \
               f"{target.get('averageValue', '0')}"
    if target.get("averageValue") is not None:
        return f"{current.get('averageValue', '0') if current is not None else '<unknown>'}/{target['averageValue']}"
    cur = f"{current['averageUtilization']}%" if current and current.get("averageUtilization") is not None \
        else "<unknown>"
    want = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
    return f"{cur}/{want}"


def _hpa(o: Obj) -> Cells:
    """Printed from the stored (v2) form, as kube-apiserver prints the internal one."""
    from .kinds.autoscaling import to_v2

    v2 = to_v2(o, str(o.get("apiVersion", "autoscaling/v2")).rsplit("/", 1)[-1])
    spec, status = v2.get("spec") or {}, v2.get("status") or {}
    specs, statuses = spec.get("metrics") or [], status.get("currentMetrics") or []
    if not specs:
        metrics = "<none>"
    else:
        items = [_hpa_metric(s, statuses[i] if i < len(statuses) else None) for i, s in enumerate(specs)]
        metrics = ", ".join(items[:2]) + (f" + {len(items) - 2} more..." if len(items) > 2 else "")
    ref = spec.get("scaleTargetRef") or {}
    min_pods = "<unset>" if spec.get("minReplicas") is None else str(spec["minReplicas"])
    return [o["metadata"]["name"], f"{ref.get('kind', '')}/{ref.get('name', '')}", metrics, min_pods,
            int(spec.get("maxReplicas") or 0), int(status.get("currentReplicas") or 0),
            since(o["metadata"].get("creationTimestamp"))]


def _ingress(o: Obj) -> Cells:
    spec = o.get("spec") or {}
    rules = spec.get("rules") or []
    hosts = [r.get("host") for r in rules[:3] if r.get("host")]
    host_text = ",".join(hosts) or "*"
    if len(rules) > 3:
        host_text = f"{host_text} + {len(rules) - 3} more..."
    lb = sorted({i.get("ip") or i.get("hostname") for i in _get(o, "status", "loadBalancer", "ingress", default=[])
                 if i.get("ip") or i.get("hostname")})
    return [o["metadata"]["name"], spec.get("ingressClassName") or "<none>", host_text, ",".join(lb),
            "80, 443" if spec.get("tls") else "80", since(o["metadata"].get("creationTimestamp"))]


def _ingress_class(o: Obj) -> Cells:
    params = _get(o, "spec", "parameters")
    text = "<none>"
    if params:
        text = params.get("kind", "") + ("." + params["apiGroup"] if params.get("apiGroup") else "") + "/" + \
            params.get("name", "")
    return [o["metadata"]["name"], _get(o, "spec", "controller", default=""), text,
            since(o["metadata"].get("creationTimestamp"))]


def _pdb(o: Obj) -> Cells:
    spec = o.get("spec") or {}
    return [o["metadata"]["name"], str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
            str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
            int(_get(o, "status", "disruptionsAllowed", default=0)), since(o["metadata"].get("creationTimestamp"))]


def _psp(o: Obj) -> Cells:
    spec = o.get("spec") or {}
    return [o["metadata"]["name"], "true" if spec.get("privileged") else "false",
            ",".join(spec.get("allowedCapabilities") or []), _get(spec, "seLinux", "rule", default=""),
            _get(spec, "runAsUser", "rule", default=""), _get(spec, "fsGroup", "rule", default=""),
            _get(spec, "supplementalGroups", "rule", default=""), bool(spec.get("readOnlyRootFilesystem")),
            ",".join(spec.get("volumes") or [])]


def _binding(o: Obj) -> Cells:
    ref = o.get("roleRef") or {}
    users, groups, sas = [], [], []
    for s in o.get("subjects") or []:
        if s.get("kind") == "User":
            users.append(s.get("name", ""))
        elif s.get("kind") == "Group":
            groups.append(s.get("name", ""))
        elif s.get("kind") == "ServiceAccount":
            sas.append(f"{s.get('namespace', '')}/{s.get('name', '')}")
    return [o["metadata"]["name"], f"{ref.get('kind', '')}/{ref.get('name', '')}",
            since(o["metadata"].get("creationTimestamp")), ", ".join(users), ", ".join(groups), ", ".join(sas)]


def _csr(o: Obj) -> Cells:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    kinds = {c.get("type") for c in status.get("conditions") or []}
    text = "Denied" if "Denied" in kinds else ("Approved" if "Approved" in kinds else "Pending")
    if "Failed" in kinds:
        text += ",Failed"
    if status.get("certificate"):
        text += ",Issued"
    seconds = spec.get("expirationSeconds")
    return [o["metadata"]["name"], since(o["metadata"].get("creationTimestamp")), spec.get("signerName") or "<none>",
            spec.get("username", ""), human_duration(seconds) if seconds is not None else "<none>", text]


def _resource_quota(o: Obj) -> Cells:
    hard, used = _get(o, "status", "hard", default={}), _get(o, "status", "used", default={})
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        (limits if name.split(".")[0] == "limits" and "." in name else requests).append(
            f"{name}: {used.get(name, '0')}/{hard[name]}")
    return [o["metadata"]["name"], since(o["metadata"].get("creationTimestamp")), ", ".join(requests),
            ", ".join(limits)]


def _storage_class(o: Obj) -> Cells:
    default = (o["metadata"].get("annotations") or {})
    is_default = "true" in (default.get("storageclass.kubernetes.io/is-default-class"),
                            default.get("storageclass.beta.kubernetes.io/is-default-class"))
    return [o["metadata"]["name"] + (" (default)" if is_default else ""), o.get("provisioner", ""),
            o.get("reclaimPolicy") or "Delete", o.get("volumeBindingMode") or "Immediate",
            bool(o.get("allowVolumeExpansion")), since(o["metadata"].get("creationTimestamp"))]


def _controller_revision(o: Obj) -> Cells:
    ref = next((r for r in o["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
    owner = "<none>"
    if ref is not None:
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        owner = f"{str(ref.get('kind', '')).lower()}{'.' + group if group else ''}/{ref.get('name', '')}"
    return [o["metadata"]["name"], owner, int(o.get("revision") or 0), since(o["metadata"].get("creationTimestamp"))]


def _csi_driver(o: Obj) -> Cells:
    spec = o.get("spec") or {}
    requests = spec.get("tokenRequests")
    return [o["metadata"]["name"], spec.get("attachRequired", True), bool(spec.get("podInfoOnMount")),
            bool(spec.get("storageCapacity")),
            "<unset>" if requests is None else ",".join(r.get("audience", "") for r in requests),
            bool(spec.get("requiresRepublish")), ",".join(spec.get("volumeLifecycleModes") or []) or "<none>",
            since(o["metadata"].get("creationTimestamp"))]


def _apiservice(o: Obj) -> Cells:
    service = _get(o, "spec", "service")
    where = f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "Local"
    available = next((c for c in _get(o, "status", "conditions", default=[]) if c.get("type") == "Available"), None)
    state = "Unknown"
    if available is not None:
        state = available.get("status", "")
        if state != "True" and available.get("reason"):
            state = f"{state} ({available['reason']})"
    return [o["metadata"]["name"], where, state, since(o["metadata"].get("creationTimestamp"))]


def _flow_schema(o: Obj) -> Cells:
    spec = o.get("spec") or {}
    dangling = next((c.get("status") for c in _get(o, "status", "conditions", default=[])
                     if c.get("type") == "Dangling"), "?")
    return [o["metadata"]["name"], _get(spec, "priorityLevelConfiguration", "name", default=""),
            int(spec.get("matchingPrecedence") or 0), _get(spec, "distinguisherMethod", "type", default="<none>"),
            since(o["metadata"].get("creationTimestamp")), dangling]


def _priority_level(o: Obj) -> Cells:
    limited = _get(o, "spec", "limited")
    queuing = _get(limited, "limitResponse", "queuing") if limited else None
    values: list[Any] = ["<none>"] * 4
    if limited is not None:
        values[0] = limited.get("assuredConcurrencyShares", 0)
        if queuing is not None:
            values[1:] = [queuing.get("queues", 0), queuing.get("handSize", 0), queuing.get("queueLengthLimit", 0)]
    return [o["metadata"]["name"], _get(o, "spec", "type", default=""), *values,
            since(o["metadata"].get("creationTimestamp"))]


def _component_status(o: Obj) -> Cells:
    healthy = next((c for c in o.get("conditions") or [] if c.get("type") == "Healthy"), None)
    if healthy is None:
        return [o["metadata"]["name"], "Unknown", "", ""]
    return [o["metadata"]["name"], "Healthy" if healthy.get("status") == "True" else "Unhealthy",
            healthy.get("message", ""), healthy.get("error", "")]


def _age(o: Obj) -> str:
    return since(o["metadata"].get("creationTimestamp"))


PRINTERS: dict[tuple[str, str], Callable[[Obj], Cells]] = {
    ("", "pods"): _pod,
    ("", "podtemplates"): lambda o: [o["metadata"]["name"], *containers_cells(_get(o, "template", "spec",
                                                                                    "containers")),
                                     format_labels(_get(o, "template", "metadata", "labels"))],
    ("", "replicationcontrollers"): lambda o: _replicated(o, format_labels(_get(o, "spec", "selector"))),
    ("apps", "replicasets"): lambda o: _replicated(o, format_selector(_get(o, "spec", "selector"))),
    ("apps", "daemonsets"): _daemonset,
    ("apps", "deployments"): _deployment,
    ("apps", "statefulsets"): _statefulset,
    ("apps", "controllerrevisions"): _controller_revision,
    ("batch", "jobs"): _job,
    ("batch", "cronjobs"): _cronjob,
    ("", "services"): _service,
    ("networking.k8s.io", "ingresses"): _ingress,
    ("networking.k8s.io", "ingressclasses"): _ingress_class,
    ("networking.k8s.io", "networkpolicies"): lambda o: [o["metadata"]["name"], format_selector(
        _get(o, "spec", "podSelector", default={})), _age(o)],
    ("", "endpoints"): _endpoints,
    ("discovery.k8s.io", "endpointslices"): _endpoint_slice,
    ("", "nodes"): _node,
    ("", "events"): _event,
    ("events.k8s.io", "events"): _new_event,
    ("", "namespaces"): lambda o: [o["metadata"]["name"], _get(o, "status", "phase", default=""), _age(o)],
    ("", "secrets"): lambda o: [o["metadata"]["name"], o.get("type", ""), len(o.get("data") or {}), _age(o)],
    ("", "serviceaccounts"): lambda o: [o["metadata"]["name"], len(o.get("secrets") or []), _age(o)],
    ("", "persistentvolumes"): _pv,
    ("", "persistentvolumeclaims"): _pvc,
    ("", "componentstatuses"): _component_status,
    ("", "configmaps"): lambda o: [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                                   _age(o)],
    ("", "resourcequotas"): _resource_quota,
    ("autoscaling", "horizontalpodautoscalers"): _hpa,
    ("policy", "poddisruptionbudgets"): _pdb,
    ("policy", "podsecuritypolicies"): _psp,
    ("rbac.authorization.k8s.io", "rolebindings"): _binding,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): _binding,
    ("certificates.k8s.io", "certificatesigningrequests"): _csr,
    ("coordination.k8s.io", "leases"): lambda o: [o["metadata"]["name"], _get(o, "spec", "holderIdentity",
                                                                              default=""), _age(o)],
    ("storage.k8s.io", "storageclasses"): _storage_class,
    ("storage.k8s.io", "csinodes"): lambda o: [o["metadata"]["name"], len(_get(o, "spec", "drivers", default=[])),
                                               _age(o)],
    ("storage.k8s.io", "csidrivers"): _csi_driver,
    ("storage.k8s.io", "volumeattachments"): lambda o: [
        o["metadata"]["name"], _get(o, "spec", "attacher", default=""),
        _get(o, "spec", "source", "persistentVolumeName", default=""), _get(o, "spec", "nodeName", default=""),
        bool(_get(o, "status", "attached")), _age(o)],
    ("scheduling.k8s.io", "priorityclasses"): lambda o: [o["metadata"]["name"], int(o.get("value") or 0),
                                                         bool(o.get("globalDefault")), _age(o)],
    ("node.k8s.io", "runtimeclasses"): lambda o: [o["metadata"]["name"], o.get("handler", ""), _age(o)],
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): lambda o: [
        o["metadata"]["name"], len(o.get("webhooks") or []), _age(o)],
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): lambda o: [
        o["metadata"]["name"], len(o.get("webhooks") or []), _age(o)],
    ("apiregistration.k8s.io", "apiservices"): _apiservice,
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): _flow_schema,
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): _priority_level,
}


# ---- custom resources ------------------------------------------------------------------------------------

_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\*)\]")


def json_path(obj: Any, path: str) -> list[Any]:
    """The values a CRD printer column's JSONPath (`.a.b[0].c`, `[*]`) selects in `obj`."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    values = [obj]
    pos = 0
    while pos < len(text):
        mt = _SEGMENT.match(text, pos)
        if mt is None:
            return []
        pos = mt.end()
        nxt: list[Any] = []
        for v in values:
            if mt.group(1) is not None:
                if isinstance(v, dict) and mt.group(1) in v:
                    nxt.append(v[mt.group(1)])
            elif isinstance(v, list):
                if mt.group(2) == "*":
                    nxt.extend(v)
                elif int(mt.group(2)) < len(v):
                    nxt.append(v[int(mt.group(2))])
        values = nxt
    return values


def _custom_cell(kind: str, value: Any) -> Any:
    """`cellForJSONValue` (and JSONPath's printing for string columns)."""
    if value is None:
        return None
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        return json.dumps(value, separators=(",", ":"))
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return since(value) if _parse(value) else "<invalid>"
    return None


def custom_columns(crd: Obj | None, version: str) -> list[Obj]:
    """A CRD version's printer columns (Name first; Age when it declares none)."""
    declared: list[Obj] = []
    for v in _get(crd, "spec", "versions", default=[]):
        if v.get("name") == version:
            declared = list(v.get("additionalPrinterColumns") or [])
    if not declared:
        declared = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                     "description": META_CREATED}]
    return declared


# ---- the Table -------------------------------------------------------------------------------------------

def include_object(query: Any) -> str:
    value = query.get("includeObject", "")
    if value not in INCLUDE_OBJECT:
        raise errors.bad_request(f"Unable to convert to Table as requested: includeObject: Invalid value: "
                                 f"{json.dumps(value)}: must be 'Metadata', 'Object', 'None', or empty")
    return str(value or "Metadata")


def table(group: str, resource: str, objects: list[Obj], meta: Obj, include: str, table_version: str,
          crd: Obj | None = None, version: str = "") -> Obj:
    """The Table of `objects` (each as the client's version shows it)."""
    printer: Callable[[Obj], Cells]
    if crd is not None:
        declared = custom_columns(crd, version)
        columns = [{"name": "Name", "type": "string", "format": "name", "description": META_NAME, "priority": 0}] + [
            {"name": c.get("name", ""), "type": c.get("type", ""), "format": c.get("format", ""),
             "description": c.get("description") or
             f"Custom resource definition column (in JSONPath format): {c.get('jsonPath', '')}",
             "priority": int(c.get("priority") or 0)} for c in declared]

        def custom_printer(o: Obj) -> Cells:
            cells: Cells = [o["metadata"]["name"]]
            for c in declared:
                found = json_path(o, str(c.get("jsonPath", "")))
                cells.append(_custom_cell(str(c.get("type", "")), found[0]) if found else None)
            return cells
        printer = custom_printer
    elif (group, resource) in COLUMNS:
        columns = [{"name": n, "type": t, "format": f, "description": d, "priority": p}
                   for n, t, f, d, p in COLUMNS[(group, resource)]]
        printer = PRINTERS[(group, resource)]
    else:
        columns = [{"name": "Name", "type": "string", "format": "name", "description": META_NAME, "priority": 0},
                   {"name": "Created At", "type": "date", "format": "", "description": META_CREATED, "priority": 0}]

        def default_printer(o: Obj) -> Cells:
            return [o["metadata"]["name"], o["metadata"].get("creationTimestamp")]
        printer = default_printer
    if (group, resource) == ("flowcontrol.apiserver.k8s.io", "flowschemas") and len(objects) > 1:
        # printFlowSchemaList: in matching order (precedence, then name)
        objects = sorted(objects, key=lambda o: (int(_get(o, "spec", "matchingPrecedence", default=0)),
                                                 o["metadata"]["name"]))
    rows = []
    for o in objects:
        row: Obj = {"cells": printer(o)}
        if (group, resource) == ("", "pods") and crd is None and (conditions := _pod_conditions(o)):
            row["conditions"] = conditions
        if include == "Object":
            row["object"] = o
        elif include == "Metadata":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{table_version}",
                             "metadata": o["metadata"]}
        else:
            row["object"] = None
        rows.append(row)
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{table_version}", "metadata": meta,
            "columnDefinitions": columns, "rows": rows}
