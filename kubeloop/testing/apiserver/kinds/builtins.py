"""The built-in resources the emulator serves, with kube-apiserver 1.24's discovery data."""

from __future__ import annotations

import base64
import hashlib

from ..resources import DEFAULT_VERBS, ServedResource, Strategy, Subresource
from .admission import WebhookConfigurationStrategy
from .apps import DaemonSetStrategy, DeploymentStrategy, ReplicaSetStrategy, StatefulSetStrategy
from .autoscaling import HorizontalPodAutoscalerStrategy
from .batch import CronJobStrategy, JobStrategy
from .certificates import CertificateSigningRequestStrategy
from .clusterconfig import (
    APIServiceStrategy,
    FlowSchemaStrategy,
    PriorityClassStrategy,
    PriorityLevelConfigurationStrategy,
    RuntimeClassStrategy,
)
from .coordination import LeaseStrategy
from .core import (
    ConfigMapStrategy,
    EndpointsStrategy,
    NamespaceStrategy,
    NodeStrategy,
    PersistentVolumeClaimStrategy,
    PodStrategy,
    PodTemplateStrategy,
    SecretStrategy,
    ServiceAccountStrategy,
)
from .crd import CustomResourceDefinitionStrategy
from .discovery import EndpointSliceStrategy
from .events import CoreEventStrategy, NewEventStrategy
from .extra import GenericStrategy
from .networking import IngressClassStrategy, IngressStrategy, NetworkPolicyStrategy
from .policy import PodDisruptionBudgetStrategy, PodSecurityPolicyStrategy
from .rbac import RoleBindingStrategy, RoleStrategy
from .replication import ControllerRevisionStrategy, ReplicationControllerStrategy
from .service import ServiceStrategy
from .storage import (
    CSIDriverStrategy,
    CSINodeStrategy,
    CSIStorageCapacityStrategy,
    PersistentVolumeStrategy,
    StorageClassStrategy,
    VolumeAttachmentStrategy,
)
from .versions import more_versions

NO_DELETECOLLECTION = tuple(v for v in DEFAULT_VERBS if v != "deletecollection")


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """`discovery.StorageVersionHash`: base64 of the first 8 bytes of sha256("group/version/kind")."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _info(group: str, version: str, resource: str, kind: str, namespaced: bool, strategy: Strategy, *,
          short: tuple[str, ...] = (), categories: tuple[str, ...] = (), sub: tuple[str, ...] = (),
          verbs: tuple[str, ...] = DEFAULT_VERBS, storage: str = "", hash_gvk: tuple[str, str, str] | None = None,
          create_on_update: bool = False, return_deleted: bool = False,
          specs: tuple[tuple[str, Subresource], ...] = ()) -> ServedResource:
    hg, hv, hk = hash_gvk or (group, version, kind)
    stored = {"create", "list"} <= set(verbs)  # resources answered, not stored, have no storage version
    return ServedResource(group, version, resource, kind, namespaced, short_names=short, categories=categories,
                        verbs=verbs, subresources=frozenset(sub) | {name for name, _ in specs},
                        subresource_specs=specs, storage=storage, strategy=strategy,
                        storage_version_hash=storage_version_hash(hg, hv, hk) if stored else "",
                        allow_create_on_update=create_on_update, return_deleted_object=return_deleted)


#: what discovery says of the subresources that are not `status`-like
PROXY = ("create", "delete", "get", "patch", "update")
POD_SUBRESOURCES = (
    ("attach", Subresource(("create", "get"), "PodAttachOptions")),
    ("binding", Subresource(("create",), "Binding")),
    ("ephemeralcontainers", Subresource()),
    ("eviction", Subresource(("create",), "Eviction", "policy", "v1")),
    ("exec", Subresource(("create", "get"), "PodExecOptions")),
    ("log", Subresource(("get",))),
    ("portforward", Subresource(("create", "get"), "PodPortForwardOptions")),
    ("proxy", Subresource(PROXY, "PodProxyOptions")),
)


def builtin_resources() -> list[ServedResource]:
    """Fresh ResourceInfos (and strategies) for every built-in kind, in every version 1.24 serves."""
    return more_versions(_builtin_resources())


def _builtin_resources() -> list[ServedResource]:
    events_storage = "/events"
    return [
        _info("", "v1", "namespaces", "Namespace", False, NamespaceStrategy(), short=("ns",),
              sub=("status", "finalize"), verbs=NO_DELETECOLLECTION),
        _info("", "v1", "configmaps", "ConfigMap", True, ConfigMapStrategy(), short=("cm",)),
        _info("", "v1", "secrets", "Secret", True, SecretStrategy()),
        _info("", "v1", "services", "Service", True, ServiceStrategy(), short=("svc",), categories=("all",),
              sub=("status",), create_on_update=True, return_deleted=True,
              specs=(("proxy", Subresource(PROXY, "ServiceProxyOptions")),)),
        _info("", "v1", "pods", "Pod", True, PodStrategy(), short=("po",), categories=("all",), sub=("status",),
              specs=POD_SUBRESOURCES),
        _info("", "v1", "events", "Event", True, CoreEventStrategy(), short=("ev",), storage=events_storage,
              create_on_update=True),
        _info("", "v1", "serviceaccounts", "ServiceAccount", True, ServiceAccountStrategy(), short=("sa",),
              return_deleted=True, specs=(("token", Subresource(("create",), "TokenRequest", "authentication.k8s.io",
                                                                  "v1")),)),
        _info("", "v1", "endpoints", "Endpoints", True, EndpointsStrategy(), short=("ep",), create_on_update=True),
        _info("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, PersistentVolumeClaimStrategy(),
              short=("pvc",), sub=("status",)),
        _info("", "v1", "nodes", "Node", False, NodeStrategy(), short=("no",), sub=("status",),
              specs=(("proxy", Subresource(PROXY, "NodeProxyOptions")),)),
        _info("", "v1", "podtemplates", "PodTemplate", True, PodTemplateStrategy()),
        _info("apps", "v1", "deployments", "Deployment", True, DeploymentStrategy(), short=("deploy",),
              categories=("all",), sub=("status", "scale")),
        _info("apps", "v1", "statefulsets", "StatefulSet", True, StatefulSetStrategy(), short=("sts",),
              categories=("all",), sub=("status", "scale")),
        _info("apps", "v1", "replicasets", "ReplicaSet", True, ReplicaSetStrategy(), short=("rs",),
              categories=("all",), sub=("status", "scale")),
        _info("apps", "v1", "daemonsets", "DaemonSet", True, DaemonSetStrategy(), short=("ds",),
              categories=("all",), sub=("status",)),
        _info("batch", "v1", "jobs", "Job", True, JobStrategy(), categories=("all",), sub=("status",)),
        _info("batch", "v1", "cronjobs", "CronJob", True, CronJobStrategy(), short=("cj",), categories=("all",),
              sub=("status",)),
        _info("coordination.k8s.io", "v1", "leases", "Lease", True, LeaseStrategy(), create_on_update=True),
        _info("events.k8s.io", "v1", "events", "Event", True, NewEventStrategy(), short=("ev",),
              storage=events_storage, hash_gvk=("", "v1", "Event"), create_on_update=True),
        _info("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
              CustomResourceDefinitionStrategy(), short=("crd", "crds"), categories=("api-extensions",),
              sub=("status",), hash_gvk=("apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition")),
        *_generic_resources(),
        *_more_resources(),
    ]


def _generic_resources() -> list[ServedResource]:
    """Storage, quotas, RBAC, networking, policy, autoscaling and discovery kinds."""
    rbac_group = "rbac.authorization.k8s.io"
    return [
        _info("", "v1", "persistentvolumes", "PersistentVolume", False, PersistentVolumeStrategy(),
              short=("pv",), sub=("status",)),
        _info("", "v1", "resourcequotas", "ResourceQuota", True, GenericStrategy(status={}), short=("quota",),
              sub=("status",)),
        _info("", "v1", "limitranges", "LimitRange", True, GenericStrategy(), short=("limits",),
              create_on_update=True),
        _info(rbac_group, "v1", "roles", "Role", True, RoleStrategy()),
        _info(rbac_group, "v1", "rolebindings", "RoleBinding", True, RoleBindingStrategy()),
        _info(rbac_group, "v1", "clusterroles", "ClusterRole", False, RoleStrategy()),
        _info(rbac_group, "v1", "clusterrolebindings", "ClusterRoleBinding", False, RoleBindingStrategy()),
        _info("networking.k8s.io", "v1", "ingresses", "Ingress", True, IngressStrategy(), short=("ing",),
              sub=("status",)),
        _info("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, NetworkPolicyStrategy(),
              short=("netpol",), sub=("status",)),
        _info("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, PodDisruptionBudgetStrategy(),
              short=("pdb",), sub=("status",), hash_gvk=("policy", "v1beta1", "PodDisruptionBudget")),
        _info("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True,
              HorizontalPodAutoscalerStrategy(), short=("hpa",),
              categories=("all",), sub=("status",), hash_gvk=("autoscaling", "v1", "HorizontalPodAutoscaler")),
        _info("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, StorageClassStrategy(), short=("sc",)),
        _info("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, EndpointSliceStrategy(),
              hash_gvk=("discovery.k8s.io", "v1beta1", "EndpointSlice")),
    ]


def _more_resources() -> list[ServedResource]:
    """The rest of 1.24's resources: those answered rather than stored (reviews, bindings, component
    statuses: see `actions.py`) and the kinds of `admission`, `certificates`, `clusterconfig`,
    `networking`, `policy`, `replication` and `storage`."""
    create = ("create",)
    authz = "authorization.k8s.io"
    extensions = ("api-extensions",)
    admission = "admissionregistration.k8s.io"
    flow = "flowcontrol.apiserver.k8s.io"
    return [
        _info("", "v1", "bindings", "Binding", True, Strategy(), verbs=create),
        _info("", "v1", "componentstatuses", "ComponentStatus", False, Strategy(), short=("cs",),
              verbs=("get", "list")),
        _info("", "v1", "replicationcontrollers", "ReplicationController", True, ReplicationControllerStrategy(),
              short=("rc",), categories=("all",), sub=("status", "scale")),
        _info("apps", "v1", "controllerrevisions", "ControllerRevision", True, ControllerRevisionStrategy()),
        _info("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, Strategy(), verbs=create),
        _info(authz, "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True, Strategy(), verbs=create),
        _info(authz, "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False, Strategy(), verbs=create),
        _info(authz, "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False, Strategy(), verbs=create),
        _info(authz, "v1", "subjectaccessreviews", "SubjectAccessReview", False, Strategy(), verbs=create),
        _info("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", False,
              CertificateSigningRequestStrategy(), short=("csr",), sub=("status", "approval")),
        _info("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, IngressClassStrategy()),
        _info("policy", "v1beta1", "podsecuritypolicies", "PodSecurityPolicy", False, PodSecurityPolicyStrategy(),
              short=("psp",)),
        _info("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, CSIDriverStrategy()),
        _info("storage.k8s.io", "v1", "csinodes", "CSINode", False, CSINodeStrategy()),
        _info("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True, CSIStorageCapacityStrategy(),
              hash_gvk=("storage.k8s.io", "v1beta1", "CSIStorageCapacity")),
        _info("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, VolumeAttachmentStrategy(),
              sub=("status",)),
        _info(admission, "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False,
              WebhookConfigurationStrategy(mutating=True), categories=extensions),
        _info(admission, "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False,
              WebhookConfigurationStrategy(mutating=False), categories=extensions),
        _info("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, APIServiceStrategy(),
              categories=extensions, sub=("status",)),
        _info("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, PriorityClassStrategy(),
              short=("pc",)),
        _info("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False, RuntimeClassStrategy()),
        _info(flow, "v1beta2", "flowschemas", "FlowSchema", False, FlowSchemaStrategy(), sub=("status",),
              hash_gvk=(flow, "v1beta1", "FlowSchema")),
        _info(flow, "v1beta2", "prioritylevelconfigurations", "PriorityLevelConfiguration", False,
              PriorityLevelConfigurationStrategy(), sub=("status",),
              hash_gvk=(flow, "v1beta1", "PriorityLevelConfiguration")),
    ]


#: the groups kube-apiserver 1.24 serves, in the order `/apis` lists them (CRD groups follow), each
#: with its versions in the order the group lists them (the first is the preferred one)
GROUP_VERSIONS: dict[str, tuple[str, ...]] = {
    "apiregistration.k8s.io": ("v1",), "apps": ("v1",), "events.k8s.io": ("v1", "v1beta1"),
    "authentication.k8s.io": ("v1",), "authorization.k8s.io": ("v1",),
    "autoscaling": ("v2", "v1", "v2beta1", "v2beta2"), "batch": ("v1", "v1beta1"), "certificates.k8s.io": ("v1",),
    "networking.k8s.io": ("v1",), "policy": ("v1", "v1beta1"), "rbac.authorization.k8s.io": ("v1",),
    "storage.k8s.io": ("v1", "v1beta1"), "admissionregistration.k8s.io": ("v1",), "apiextensions.k8s.io": ("v1",),
    "scheduling.k8s.io": ("v1",), "coordination.k8s.io": ("v1",), "node.k8s.io": ("v1", "v1beta1"),
    "discovery.k8s.io": ("v1", "v1beta1"), "flowcontrol.apiserver.k8s.io": ("v1beta2", "v1beta1"),
}
