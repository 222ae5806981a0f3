"""The built-in resources the emulator serves, with kube-apiserver 1.24's discovery data."""

from __future__ import annotations

import base64
import hashlib

from ..resources import DEFAULT_VERBS, ServedResource, Strategy
from .apps import DaemonSetStrategy, DeploymentStrategy, ReplicaSetStrategy, StatefulSetStrategy
from .autoscaling import HorizontalPodAutoscalerStrategy
from .batch import CronJobStrategy, JobStrategy
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
from .networking import IngressStrategy, NetworkPolicyStrategy
from .policy import PodDisruptionBudgetStrategy
from .rbac import RoleBindingStrategy, RoleStrategy
from .service import ServiceStrategy

NO_DELETECOLLECTION = tuple(v for v in DEFAULT_VERBS if v != "deletecollection")


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """`discovery.StorageVersionHash`: base64 of the first 8 bytes of sha256("group/version/kind")."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _info(group: str, version: str, resource: str, kind: str, namespaced: bool, strategy: Strategy, *,
          short: tuple[str, ...] = (), categories: tuple[str, ...] = (), sub: tuple[str, ...] = (),
          verbs: tuple[str, ...] = DEFAULT_VERBS, storage: str = "", hash_gvk: tuple[str, str, str] | None = None,
          create_on_update: bool = False, return_deleted: bool = False) -> ServedResource:
    hg, hv, hk = hash_gvk or (group, version, kind)
    return ServedResource(group, version, resource, kind, namespaced, short_names=short, categories=categories,
                        verbs=verbs, subresources=frozenset(sub), storage=storage, strategy=strategy,
                        storage_version_hash=storage_version_hash(hg, hv, hk),
                        allow_create_on_update=create_on_update, return_deleted_object=return_deleted)


def builtin_resources() -> list[ServedResource]:
    """Fresh ResourceInfos (and strategies) for every built-in kind."""
    events_storage = "/events"
    return [
        _info("", "v1", "namespaces", "Namespace", False, NamespaceStrategy(), short=("ns",),
              sub=("status", "finalize"), verbs=NO_DELETECOLLECTION),
        _info("", "v1", "configmaps", "ConfigMap", True, ConfigMapStrategy(), short=("cm",)),
        _info("", "v1", "secrets", "Secret", True, SecretStrategy()),
        _info("", "v1", "services", "Service", True, ServiceStrategy(), short=("svc",), categories=("all",),
              sub=("status",), create_on_update=True, return_deleted=True),
        _info("", "v1", "pods", "Pod", True, PodStrategy(), short=("po",), categories=("all",), sub=("status",)),
        _info("", "v1", "events", "Event", True, CoreEventStrategy(), short=("ev",), storage=events_storage,
              create_on_update=True),
        _info("", "v1", "serviceaccounts", "ServiceAccount", True, ServiceAccountStrategy(), short=("sa",),
              return_deleted=True),
        _info("", "v1", "endpoints", "Endpoints", True, EndpointsStrategy(), short=("ep",), create_on_update=True),
        _info("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, PersistentVolumeClaimStrategy(),
              short=("pvc",), sub=("status",)),
        _info("", "v1", "nodes", "Node", False, NodeStrategy(), short=("no",), sub=("status",)),
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
    ]


def _generic_resources() -> list[ServedResource]:
    """Kinds served with generic rules only (see `extra.py`)."""
    rbac_group = "rbac.authorization.k8s.io"
    return [
        _info("", "v1", "persistentvolumes", "PersistentVolume", False, GenericStrategy(status={"phase": "Pending"}),
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
              short=("netpol",)),
        _info("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True,
              PodDisruptionBudgetStrategy(),
              short=("pdb",), sub=("status",)),
        _info("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True,
              HorizontalPodAutoscalerStrategy(), short=("hpa",),
              categories=("all",), sub=("status",), hash_gvk=("autoscaling", "v1", "HorizontalPodAutoscaler")),
        _info("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, GenericStrategy(), short=("sc",)),
        _info("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, EndpointSliceStrategy()),
    ]


#: the order kube-apiserver 1.24 lists its groups in `/apis` (CRD groups follow)
GROUP_ORDER = ("apps", "events.k8s.io", "autoscaling", "batch", "networking.k8s.io", "policy",
               "rbac.authorization.k8s.io", "storage.k8s.io", "apiextensions.k8s.io", "coordination.k8s.io",
               "discovery.k8s.io")
