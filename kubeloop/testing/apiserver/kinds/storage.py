"""Storage kinds: storage.k8s.io's StorageClass, CSIDriver, CSINode, CSIStorageCapacity and
VolumeAttachment, and core's PersistentVolume.

Defaults and validation follow 1.24's `pkg/apis/storage` (v1 defaults, `ValidateCSIDriver` & co.):
the rules a driver's manifests or a test's fixtures meet, not the ones only the kubelet acts on.
"""

from __future__ import annotations

from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .extra import GenericStrategy

FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Ephemeral", "Persistent")


def _subdomain_causes(fld: str, value: Any) -> list[Cause]:
    text = value if isinstance(value, str) else ""
    return [m.invalid_cause(fld, text, msg) for msg in m.name_is_dns_subdomain(text, False)]


class CSIDriverStrategy(GenericStrategy):
    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("attachRequired", True)
        spec.setdefault("podInfoOnMount", False)
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]
        spec.setdefault("storageCapacity", False)
        spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
        spec.setdefault("requiresRepublish", False)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        policy = spec.get("fsGroupPolicy")
        if policy is not None and policy not in FS_GROUP_POLICIES:
            causes.append(m.not_supported_cause("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
        for i, mode in enumerate(spec.get("volumeLifecycleModes") or []):
            if mode not in LIFECYCLE_MODES:
                causes.append(m.not_supported_cause(f"spec.volumeLifecycleModes[{i}]", mode, LIFECYCLE_MODES))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = super().validate_update_causes(info, new, old)
        for key in ("attachRequired", "podInfoOnMount"):
            causes += m.immutable_causes(f"spec.{key}", (new.get("spec") or {}).get(key),
                                         (old.get("spec") or {}).get(key))
        return causes


class CSINodeStrategy(GenericStrategy):
    def default(self, info: ServedResource, obj: Obj) -> None:
        for driver in (obj.get("spec") or {}).get("drivers") or []:
            if isinstance(driver, dict):
                driver.setdefault("topologyKeys", None)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        seen: set[str] = set()
        for i, driver in enumerate((obj.get("spec") or {}).get("drivers") or []):
            driver = driver if isinstance(driver, dict) else {}
            fld = f"spec.drivers[{i}]"
            name = driver.get("name") or ""
            if not name:
                causes.append(m.required_cause(f"{fld}.name"))
            elif name in seen:
                causes.append(m.duplicate_cause(f"{fld}.name", name))
            seen.add(name)
            if not driver.get("nodeID"):
                causes.append(m.required_cause(f"{fld}.nodeID"))
            count = (driver.get("allocatable") or {}).get("count")
            if isinstance(count, int) and count < 0:
                causes.append(m.invalid_cause(f"{fld}.allocatable.count", count,
                                              "must be greater than or equal to 0"))
        return causes


class CSIStorageCapacityStrategy(GenericStrategy):
    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        # reported twice, as `ValidateCSIStorageCapacity` checks the class name with two helpers
        return 2 * _subdomain_causes("storageClassName", obj.get("storageClassName"))


class VolumeAttachmentStrategy(GenericStrategy):
    def __init__(self) -> None:
        super().__init__(status={"attached": False})

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        attacher = spec.get("attacher") or ""
        if not attacher:
            causes.append(m.required_cause("spec.attacher"))
        source = spec.get("source") or {}
        if (source.get("persistentVolumeName") is None) == (source.get("inlineVolumeSpec") is None):
            causes.append(m.required_cause("spec.source", "must specify exactly one of inlineVolumeSpec and "
                                                          "persistentVolumeName"))
        causes += _subdomain_causes("spec.nodeName", spec.get("nodeName"))
        # ValidateVolumeAttachmentV1: the attacher is a CSI driver name
        if not attacher:
            causes.append(m.required_cause("spec.attacher"))
        causes += _subdomain_causes("spec.attacher", attacher)
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        if new.get("spec") != old.get("spec"):
            causes.append(m.invalid_cause_raw("spec", "storage.VolumeAttachmentSpec{...}", "field is immutable"))
        return causes


class StorageClassStrategy(GenericStrategy):
    def default(self, info: ServedResource, obj: Obj) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")


class PersistentVolumeStrategy(GenericStrategy):
    def __init__(self) -> None:
        super().__init__(status={"phase": "Pending"})

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        host_path = spec.get("hostPath")
        if isinstance(host_path, dict):
            host_path.setdefault("type", "")

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if "kubernetes.io/pv-protection" not in finalizers:  # the StorageObjectInUseProtection admission plugin
            finalizers.append("kubernetes.io/pv-protection")
