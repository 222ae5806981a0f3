"""One object of every built-in kind kube-apiserver 1.24 stores, and a few it must refuse.

`record_surface.py` creates them on a real 1.24 control plane and records what it answered
(`data/surface-1.24.json`); `test_surface_*.py` replay the same requests against the emulator.
`{ns}` is the scenario's namespace and `{sfx}` a suffix that keeps cluster-scoped names unique.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

POD_SPEC: Obj = {"containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}]}
POD_TEMPLATE: Obj = {"metadata": {"labels": {"app": "s"}}, "spec": POD_SPEC}
SELECTOR: Obj = {"matchLabels": {"app": "s"}}
CSR_REQUEST = (  # a PEM CertificateSigningRequest for CN=sfc-user, O=sfc-group
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIaE1JR0pBZ0VBTUNjeEVUQVBCZ05WQkFNTUNITm1ZeTExYzJWeU1S"
    "SXdFQVlEVlFRS0RBbHpabU10WjNKdgpkWEF3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVNLUUc4T1lVUDJ2R3U2aW9D"
    "dXQ0M3R6OVlQCk9uRXVvMjh1NjE0eWdkdXRnZ1Y1SmNQNklBdFNreW1iZ3ZCNkFwbUhTdjBOaEs0TzRLdkVEQSswd2ZCQ29BQXcKQ2dZ"
    "SUtvWkl6ajBFQXdJRFJ3QXdSQUlnSDR4R2Y1UjZIV21PempmeFhKbFlQTDg2TS82dnRCSXR1ZXRncW1pUQpaQ3NDSUNWdXVoQ0tUL2xw"
    "dEFUdGQwL0RGWENaN2o0ckhqLzUzWjBoQWxLa2wxRlkKLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==")


def _meta(name: str, **extra: Any) -> Obj:
    return {"name": name, **extra}


#: (resource path under /api or /apis, with {ns}; body) for a valid object of every stored kind
SAMPLES: list[tuple[str, Obj]] = [
    # core/v1
    ("/api/v1/namespaces/{ns}/configmaps", {"metadata": _meta("cm"), "data": {"a": "1", "b": "2"}}),
    ("/api/v1/namespaces/{ns}/endpoints", {"metadata": _meta("ep"), "subsets": [
        {"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80, "name": "http"}]}]}),
    ("/api/v1/namespaces/{ns}/events", {"metadata": _meta("ev"), "involvedObject": {
        "kind": "Pod", "name": "p", "namespace": "{ns}"}, "reason": "Started", "message": "started",
        "type": "Normal", "count": 3, "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:05:00Z", "source": {"component": "kubelet", "host": "n1"}}),
    ("/api/v1/namespaces/{ns}/limitranges", {"metadata": _meta("lr"), "spec": {"limits": [
        {"type": "PersistentVolumeClaim", "max": {"storage": "2Gi"}}]}}),
    ("/api/v1/namespaces", {"metadata": _meta("sfc-ns-{sfx}")}),
    ("/api/v1/nodes", {"metadata": _meta("sfc-node-{sfx}", labels={"node-role.kubernetes.io/worker": ""}),
                       "spec": {"podCIDR": "10.244.0.0/24", "unschedulable": True}}),
    ("/api/v1/namespaces/{ns}/persistentvolumeclaims", {"metadata": _meta("pvc"), "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": "manual"}}),
    ("/api/v1/persistentvolumes", {"metadata": _meta("sfc-pv-{sfx}"), "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/pv"},
        "storageClassName": "manual", "persistentVolumeReclaimPolicy": "Retain"}}),
    ("/api/v1/namespaces/{ns}/pods", {"metadata": _meta("pod", labels={"app": "alone"}), "spec": POD_SPEC}),
    ("/api/v1/namespaces/{ns}/podtemplates", {"metadata": _meta("pt"), "template": POD_TEMPLATE}),
    ("/api/v1/namespaces/{ns}/replicationcontrollers", {"metadata": _meta("rc"), "spec": {
        "replicas": 0, "selector": {"app": "s"}, "template": POD_TEMPLATE}}),
    ("/api/v1/namespaces/{ns}/resourcequotas", {"metadata": _meta("rq"), "spec": {"hard": {
        "persistentvolumeclaims": "5", "requests.storage": "10Gi"}}}),
    ("/api/v1/namespaces/{ns}/secrets", {"metadata": _meta("sec"), "stringData": {"a": "b"},
                                         "data": {"c": "ZA=="}}),
    ("/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": _meta("sa")}),
    ("/api/v1/namespaces/{ns}/services", {"metadata": _meta("svc"), "spec": {
        "selector": {"app": "s"}, "ports": [{"port": 80, "targetPort": 8080, "name": "http"}],
        "clusterIP": "None"}}),
    # apps/v1
    ("/apis/apps/v1/namespaces/{ns}/controllerrevisions", {"metadata": _meta("cr"), "revision": 2,
                                                           "data": {"spec": {"x": 1}}}),
    ("/apis/apps/v1/namespaces/{ns}/daemonsets", {"metadata": _meta("ds"), "spec": {
        "selector": SELECTOR, "template": POD_TEMPLATE}}),
    ("/apis/apps/v1/namespaces/{ns}/deployments", {"metadata": _meta("dep"), "spec": {
        "replicas": 0, "selector": SELECTOR, "template": POD_TEMPLATE}}),
    ("/apis/apps/v1/namespaces/{ns}/replicasets", {"metadata": _meta("rs"), "spec": {
        "replicas": 0, "selector": SELECTOR, "template": POD_TEMPLATE}}),
    ("/apis/apps/v1/namespaces/{ns}/statefulsets", {"metadata": _meta("sts"), "spec": {
        "replicas": 0, "serviceName": "svc", "selector": SELECTOR, "template": POD_TEMPLATE}}),
    # events.k8s.io
    ("/apis/events.k8s.io/v1/namespaces/{ns}/events", {"metadata": _meta("ev1"), "eventTime":
        "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/c", "reportingInstance": "c-1",
        "action": "Sync", "reason": "Synced", "type": "Normal", "regarding": {"kind": "Pod", "name": "p",
                                                                              "namespace": "{ns}"}}),
    ("/apis/events.k8s.io/v1beta1/namespaces/{ns}/events", {"metadata": _meta("ev1b"), "eventTime":
        "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/c", "reportingInstance": "c-1",
        "action": "Sync", "reason": "Synced", "type": "Warning", "regarding": {"kind": "Pod", "name": "p",
                                                                               "namespace": "{ns}"}}),
    # autoscaling
    ("/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers", {"metadata": _meta("hpa1"), "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "dep"}, "maxReplicas": 5,
        "targetCPUUtilizationPercentage": 70}}),
    ("/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers", {"metadata": _meta("hpa2"), "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "dep"}, "minReplicas": 2,
        "maxReplicas": 5, "metrics": [{"type": "Resource", "resource": {"name": "memory", "target": {
            "type": "AverageValue", "averageValue": "100Mi"}}}]}}),
    ("/apis/autoscaling/v2beta1/namespaces/{ns}/horizontalpodautoscalers", {"metadata": _meta("hpa2b1"), "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "dep"}, "maxReplicas": 4,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 50}}]}}),
    ("/apis/autoscaling/v2beta2/namespaces/{ns}/horizontalpodautoscalers", {"metadata": _meta("hpa2b2"), "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "dep"}, "maxReplicas": 3,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 60}}}]}}),
    # batch
    ("/apis/batch/v1/namespaces/{ns}/jobs", {"metadata": _meta("job"), "spec": {"suspend": True, "template": {
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}}),
    ("/apis/batch/v1/namespaces/{ns}/cronjobs", {"metadata": _meta("cj"), "spec": {
        "schedule": "*/5 * * * *", "suspend": True, "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}}),
    ("/apis/batch/v1beta1/namespaces/{ns}/cronjobs", {"metadata": _meta("cjb"), "spec": {
        "schedule": "@hourly", "suspend": True, "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}}}}),
    # certificates
    ("/apis/certificates.k8s.io/v1/certificatesigningrequests", {"metadata": _meta("sfc-csr-{sfx}"), "spec": {
        "request": CSR_REQUEST, "signerName": "example.com/signer", "usages": ["client auth"],
        "expirationSeconds": 3600}}),
    # networking
    ("/apis/networking.k8s.io/v1/ingressclasses", {"metadata": _meta("sfc-ic-{sfx}"), "spec": {
        "controller": "example.com/ingress"}}),
    ("/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses", {"metadata": _meta("ing"), "spec": {
        "ingressClassName": "sfc", "rules": [{"host": "a.example.com", "http": {"paths": [{
            "path": "/", "pathType": "Prefix", "backend": {"service": {"name": "svc", "port": {"number": 80}}}}]}}],
        "tls": [{"hosts": ["a.example.com"], "secretName": "sec"}]}}),
    ("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies", {"metadata": _meta("np"), "spec": {
        "podSelector": SELECTOR, "ingress": [{"from": [{"podSelector": {}}], "ports": [{"port": 80}]}]}}),
    # policy
    ("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", {"metadata": _meta("pdb"), "spec": {
        "minAvailable": 1, "selector": SELECTOR}}),
    ("/apis/policy/v1beta1/namespaces/{ns}/poddisruptionbudgets", {"metadata": _meta("pdbb"), "spec": {
        "maxUnavailable": "50%", "selector": {"matchLabels": {"app": "t"}}}}),
    ("/apis/policy/v1beta1/podsecuritypolicies", {"metadata": _meta("sfc-psp-{sfx}"), "spec": {
        "seLinux": {"rule": "RunAsAny"}, "runAsUser": {"rule": "MustRunAsNonRoot"},
        "supplementalGroups": {"rule": "RunAsAny"}, "fsGroup": {"rule": "RunAsAny"}, "volumes": ["configMap"],
        "privileged": False}}),
    # rbac
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles", {"metadata": _meta("sfc-cr-{sfx}"), "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}),
    ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {"metadata": _meta("sfc-crb-{sfx}"), "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "sfc-cr-{sfx}"}, "subjects": [
        {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
        {"kind": "ServiceAccount", "name": "sa", "namespace": "{ns}"}]}),
    ("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", {"metadata": _meta("role"), "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]}),
    ("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", {"metadata": _meta("rb"), "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "role"}, "subjects": [
        {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]}),
    # storage
    ("/apis/storage.k8s.io/v1/csidrivers", {"metadata": _meta("sfc-csi-{sfx}.example.com"), "spec": {}}),
    ("/apis/storage.k8s.io/v1/csinodes", {"metadata": _meta("sfc-csinode-{sfx}"), "spec": {"drivers": [
        {"name": "csi.example.com", "nodeID": "n1", "allocatable": {"count": 5}}]}}),
    ("/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities", {"metadata": _meta("csc"),
                                                                      "storageClassName": "manual",
                                                                      "capacity": "10Gi"}),
    ("/apis/storage.k8s.io/v1beta1/namespaces/{ns}/csistoragecapacities", {"metadata": _meta("cscb"),
                                                                           "storageClassName": "fast"}),
    ("/apis/storage.k8s.io/v1/storageclasses", {"metadata": _meta("sfc-sc-{sfx}"),
                                                "provisioner": "example.com/p"}),
    ("/apis/storage.k8s.io/v1/volumeattachments", {"metadata": _meta("sfc-va-{sfx}"), "spec": {
        "attacher": "csi.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}}}),
    # admissionregistration
    ("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {"metadata": _meta("sfc-mwc-{sfx}"),
        "webhooks": [{"name": "m.example.com", "clientConfig": {"url": "https://example.com/mutate"},
                      "admissionReviewVersions": ["v1"], "sideEffects": "None", "rules": [{
                          "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                          "resources": ["configmaps"]}], "namespaceSelector": {"matchLabels": {"sfc": "{sfx}"}}}]}),
    ("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {"metadata": _meta("sfc-vwc-{sfx}"),
        "webhooks": [{"name": "v.example.com", "clientConfig": {"service": {"namespace": "{ns}", "name": "svc"}},
                      "admissionReviewVersions": ["v1", "v1beta1"], "sideEffects": "NoneOnDryRun",
                      "objectSelector": {"matchLabels": {"sfc": "{sfx}"}}}]}),
    # apiregistration
    ("/apis/apiregistration.k8s.io/v1/apiservices", {"metadata": _meta("v1.sfcagg{sfx}.example.com"), "spec": {
        "group": "sfcagg{sfx}.example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 15,
        "service": {"namespace": "{ns}", "name": "svc", "port": 443}, "insecureSkipTLSVerify": True}}),
    # scheduling, coordination, node, discovery
    ("/apis/scheduling.k8s.io/v1/priorityclasses", {"metadata": _meta("sfc-pc-{sfx}"), "value": 1000,
                                                    "description": "sample"}),
    ("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", {"metadata": _meta("lease"), "spec": {
        "holderIdentity": "me", "leaseDurationSeconds": 15}}),
    ("/apis/node.k8s.io/v1/runtimeclasses", {"metadata": _meta("sfc-rtc-{sfx}"), "handler": "runc",
                                             "overhead": {"podFixed": {"cpu": "100m"}}}),
    ("/apis/node.k8s.io/v1beta1/runtimeclasses", {"metadata": _meta("sfc-rtcb-{sfx}"), "handler": "kata"}),
    ("/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", {"metadata": _meta("eps"), "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}, "nodeName": "n1",
                       "zone": "z1"}], "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}),
    ("/apis/discovery.k8s.io/v1beta1/namespaces/{ns}/endpointslices", {"metadata": _meta("epsb"),
        "addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.4"], "conditions": {"ready": False},
                                              "topology": {"kubernetes.io/hostname": "n2",
                                                           "topology.kubernetes.io/zone": "z2"}}],
        "ports": [{"port": 443}]}),
    # flowcontrol
    ("/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations", {
        "metadata": _meta("sfc-plc-{sfx}"), "spec": {"type": "Limited", "limited": {
            "assuredConcurrencyShares": 5, "limitResponse": {"type": "Reject"}}}}),
    ("/apis/flowcontrol.apiserver.k8s.io/v1beta1/prioritylevelconfigurations", {
        "metadata": _meta("sfc-plcb-{sfx}"), "spec": {"type": "Limited", "limited": {
            "assuredConcurrencyShares": 5, "limitResponse": {"type": "Queue", "queuing": {"queues": 16}}}}}),
    ("/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas", {"metadata": _meta("sfc-fs-{sfx}"), "spec": {
        "priorityLevelConfiguration": {"name": "sfc-plc-{sfx}"}, "matchingPrecedence": 9000,
        "distinguisherMethod": {"type": "ByUser"}, "rules": [{"subjects": [{"kind": "User", "user": {
            "name": "sfc-user"}}], "resourceRules": [{"verbs": ["get"], "apiGroups": [""],
                                                     "resources": ["configmaps"], "namespaces": ["*"]}]}]}}),
    ("/apis/flowcontrol.apiserver.k8s.io/v1beta1/flowschemas", {"metadata": _meta("sfc-fsb-{sfx}"), "spec": {
        "priorityLevelConfiguration": {"name": "sfc-plcb-{sfx}"}}}),
]

#: (resource path, body) that 1.24 refuses (each shows a kind's own validation)
INVALID: list[tuple[str, Obj]] = [
    ("/api/v1/namespaces/{ns}/replicationcontrollers", {"metadata": _meta("rc-bad"), "spec": {
        "replicas": -1, "selector": {"app": "x"}, "template": POD_TEMPLATE}}),
    ("/apis/apps/v1/namespaces/{ns}/controllerrevisions", {"metadata": _meta("cr-bad"), "revision": -1}),
    ("/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers", {"metadata": _meta("hpa-bad"), "spec": {
        "scaleTargetRef": {"kind": "Deployment"}, "minReplicas": 0, "maxReplicas": 0}}),
    ("/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers", {"metadata": _meta("hpa-bad2"), "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 2, "metrics": [
            {"type": "Resource"}]}}),
    ("/apis/batch/v1beta1/namespaces/{ns}/cronjobs", {"metadata": _meta("cj-bad"), "spec": {
        "schedule": "not a schedule", "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}}}}),
    ("/apis/certificates.k8s.io/v1/certificatesigningrequests", {"metadata": _meta("sfc-csr-bad-{sfx}"),
                                                                  "spec": {"request": "", "usages": []}}),
    ("/apis/networking.k8s.io/v1/ingressclasses", {"metadata": _meta("sfc-ic-bad-{sfx}"), "spec": {
        "controller": "Not_A/valid"}}),
    ("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", {"metadata": _meta("pdb-bad"), "spec": {
        "minAvailable": 1, "maxUnavailable": 1}}),
    ("/apis/policy/v1beta1/podsecuritypolicies", {"metadata": _meta("sfc-psp-bad-{sfx}"), "spec": {}}),
    ("/apis/storage.k8s.io/v1/csidrivers", {"metadata": _meta("sfc-csi-bad-{sfx}"), "spec": {
        "fsGroupPolicy": "Sometimes"}}),
    ("/apis/storage.k8s.io/v1/volumeattachments", {"metadata": _meta("sfc-va-bad-{sfx}"), "spec": {}}),
    ("/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities", {"metadata": _meta("csc-bad")}),
    ("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
        "metadata": _meta("sfc-vwc-bad-{sfx}"), "webhooks": [{"name": "nodots", "clientConfig": {},
                                                              "sideEffects": "Some"}]}),
    ("/apis/apiregistration.k8s.io/v1/apiservices", {"metadata": _meta("sfc-apiservice-bad-{sfx}"), "spec": {
        "group": "x.example.com", "version": "v1"}}),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", {"metadata": _meta("system-sfc-{sfx}"), "value": 2000000001}),
    ("/apis/node.k8s.io/v1/runtimeclasses", {"metadata": _meta("sfc-rtc-bad-{sfx}"), "handler": "Bad_Handler"}),
    ("/apis/discovery.k8s.io/v1beta1/namespaces/{ns}/endpointslices", {"metadata": _meta("eps-bad"),
                                                                      "addressType": "IPv5", "endpoints": []}),
    ("/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas", {"metadata": _meta("sfc-fs-bad-{sfx}"), "spec": {
        "priorityLevelConfiguration": {"name": ""}, "matchingPrecedence": 20000}}),
    ("/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations", {
        "metadata": _meta("sfc-plc-bad-{sfx}"), "spec": {"type": "Limited"}}),
    ("/apis/events.k8s.io/v1beta1/namespaces/{ns}/events", {"metadata": _meta("ev-bad"), "type": "Normal"}),
]
