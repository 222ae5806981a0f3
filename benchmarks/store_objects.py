"""Realistic Pods and ConfigMaps for the store benchmark (deterministic, seeded).

Pods are ~4 KiB of JSON with managedFields, labels, annotations, ownerReferences and a
status with conditions; ConfigMaps ~1.4 KiB with small text config files as data.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

_APPS = ["checkout", "payments", "catalog", "search", "frontend", "auth", "cart", "inventory", "mailer",
         "recommend", "shipping", "reviews", "gateway", "billing", "ledger", "profile"]
_TIERS = ["web", "api", "worker", "cache"]
_ENVS = ["prod", "staging", "dev"]


def _ts(r: random.Random) -> str:
    return f"2026-11-{r.randint(1, 21):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z"


def _uid(r: random.Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def make_pod(i: int, seed: int = 1) -> dict[str, Any]:
    """One Pod of a Deployment's ReplicaSet (~4 KiB JSON with managedFields)."""
    r = random.Random(seed * 1_000_003 + i)
    rs = i // 20  # 20 replicas per ReplicaSet: same owner, same labels
    app = _APPS[rs % len(_APPS)]
    rs_hash = _hex(random.Random(rs), 10)
    tier = _TIERS[rs % len(_TIERS)]
    ns = f"team-{rs % 8}"
    name = f"{app}-{rs_hash}-{_hex(r, 5)}"
    node = f"node-{r.randint(1, 40):03d}"
    ip = f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"
    created = _ts(r)
    image = f"registry.example.com/{app}:{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)}"
    labels = {"app": app, "pod-template-hash": rs_hash, "tier": tier, "env": _ENVS[rs % 3]}
    fields_spec = {
        "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}},
                       "f:ownerReferences": {".": {}, f'k:{{"uid":"{_uid(r)}"}}': {}}},
        "f:spec": {"f:containers": {f'k:{{"name":"{app}"}}': {
            ".": {}, "f:env": {".": {}, 'k:{"name":"LOG_LEVEL"}': {".": {}, "f:name": {}, "f:value": {}}},
            "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
            "f:ports": {".": {}, 'k:{"containerPort":8080,"protocol":"TCP"}': {
                ".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}}},
            "f:resources": {".": {}, "f:limits": {".": {}, "f:memory": {}},
                            "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
            "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
            "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
            "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}},
    }
    fields_status = {"f:status": {"f:conditions": {
        f'k:{{"type":"{t}"}}': {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {},
                                "f:type": {}} for t in ("ContainersReady", "Initialized", "Ready")},
        "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {},
        "f:podIPs": {".": {}, f'k:{{"ip":"{ip}"}}': {".": {}, "f:ip": {}}}, "f:startTime": {}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{app}-{rs_hash}-",
            "namespace": ns,
            "uid": _uid(r),
            "resourceVersion": str(100000 + i),
            "creationTimestamp": created,
            "labels": labels,
            "annotations": {"kubectl.kubernetes.io/restartedAt": created,
                            "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-{rs_hash}",
                                 "uid": str(uuid.UUID(int=random.Random(rs + 7).getrandbits(128), version=4)),
                                 "controller": True, "blockOwnerDeletion": True}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                 "time": created, "fieldsType": "FieldsV1", "fieldsV1": fields_spec},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": created,
                 "fieldsType": "FieldsV1", "fieldsV1": fields_status, "subresource": "status"},
            ],
        },
        "spec": {
            "containers": [{
                "name": app,
                "image": image,
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": r.choice(["info", "debug", "warn"])}],
                "resources": {"limits": {"memory": f"{r.choice([256, 512, 1024])}Mi"},
                              "requests": {"cpu": f"{r.choice([100, 250, 500])}m",
                                           "memory": f"{r.choice([128, 256])}Mi"}},
                "volumeMounts": [{"name": f"kube-api-access-{_hex(r, 5)}", "readOnly": True,
                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "nodeName": node,
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300},
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": _ts(r)}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"192.168.{r.randint(0, 3)}.{r.randint(1, 254)}",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": created,
            "containerStatuses": [{
                "name": app, "state": {"running": {"startedAt": _ts(r)}}, "lastState": {},
                "ready": True, "restartCount": r.choice([0, 0, 0, 1, 2]), "image": image,
                "imageID": f"registry.example.com/{app}@sha256:{_hex(r, 64)}",
                "containerID": f"containerd://{_hex(r, 64)}", "started": True,
            }],
            "qosClass": "Burstable",
        },
    }


_CONF_TEMPLATES = [
    "server {{\n    listen {port};\n    server_name {host};\n    location / {{\n        proxy_pass http://{app}:{port};\n"
    "        proxy_read_timeout {t}s;\n    }}\n    client_max_body_size {mb}m;\n}}\n",
    "# {app} settings\nlog.level={level}\nhttp.port={port}\ndb.url=postgres://{app}-db.{ns}.svc:5432/{app}\n"
    "db.pool.size={pool}\ncache.ttl.seconds={t}\nfeature.{feat}.enabled=true\n",
    "[{app}]\nhost = {host}\nport = {port}\nworkers = {pool}\ntimeout = {t}\nlevel = {level}\n",
]


def make_configmap(i: int, seed: int = 1) -> dict[str, Any]:
    """One ConfigMap (~1.4 KiB JSON with managedFields) holding small config files."""
    r = random.Random(seed * 7_000_003 + i)
    app = _APPS[i % len(_APPS)]
    ns = f"team-{i % 8}"
    created = _ts(r)
    vals = {"app": app, "ns": ns, "port": r.choice([80, 8080, 9000, 3000]), "host": f"{app}.example.com",
            "t": r.randint(5, 120), "mb": r.choice([1, 8, 16, 64]), "level": r.choice(["info", "debug"]),
            "pool": r.randint(2, 32), "feat": r.choice(["search", "beta", "audit", "v2"])}
    data = {
        f"{app}.conf": _CONF_TEMPLATES[i % 3].format(**vals),
        "settings.properties": _CONF_TEMPLATES[1].format(**vals),
        "logging.yaml": (
            f"version: 1\nroot:\n  level: {vals['level'].upper()}\n  handlers: [console]\n"
            f"handlers:\n  console:\n    class: logging.StreamHandler\n    formatter: json\n"
            f"formatters:\n  json:\n    format: '%(asctime)s %(levelname)s {app} %(message)s'\n"
            f"loggers:\n  {app}.db:\n    level: WARNING\n  {app}.http:\n    level: {vals['level'].upper()}\n"
            f"  {app}.{vals['feat']}:\n    level: INFO\n"
        ),
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{app}-config-{i}",
            "namespace": ns,
            "uid": _uid(r),
            "resourceVersion": str(200000 + i),
            "creationTimestamp": created,
            "labels": {"app": app, "env": _ENVS[i % 3]},
            "annotations": {"meta.helm.sh/release-name": f"{app}-{_ENVS[i % 3]}", "meta.helm.sh/release-namespace": ns},
            "managedFields": [{
                "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
                "time": created, "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, **{f"f:{k}": {} for k in data}},
                             "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:env": {}}}},
            }],
        },
        "data": data,
    }


def drop_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """The default informer transform."""
    obj.get("metadata", {}).pop("managedFields", None)
    return obj
