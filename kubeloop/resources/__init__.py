"""Typed custom resources (models -> CRDs) and the helpers operators need: status conditions,
Kubernetes time formats, object references (owner references are `kubeloop.meta`'s).

The helpers are plain functions with no dependency. The typed layer (`CustomResource`, `crd`, ...)
needs pydantic (`pip install 'kubeloop[resources]'`) and is imported only when first used, so
`import kubeloop` and the helpers stay as fast as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kubeloop.meta import (
    IncompleteObjectError,
    TimeFormatError,
    format_micro_time,
    format_time,
    now,
    object_reference,
    parse_time,
)

from ._conditions import (
    ConditionError,
    find_condition,
    is_condition_false,
    is_condition_true,
    remove_condition,
    set_condition,
)
from ._structural import SchemaError, check_structural, structural_problems

if TYPE_CHECKING:
    from ._crd import crd, crd_yaml
    from ._model import (
        Atomic,
        Condition,
        CustomResource,
        IntOrString,
        ListMap,
        ListSet,
        MicroTime,
        Model,
        ObjectMeta,
        PreserveUnknownFields,
        PrinterColumn,
        ResourceInfo,
        ResourceValidationError,
        Scale,
        Time,
        resource_info,
    )
    from ._versions import CONVERSION_ANNOTATION, ConversionError, Spoke, Versions

#: names of the typed layer, imported on first use (they need pydantic)
_LAZY = {
    "crd": "._crd", "crd_yaml": "._crd",
    **{name: "._versions" for name in ("CONVERSION_ANNOTATION", "ConversionError", "Spoke", "Versions")},
    **{name: "._model" for name in (
        "Atomic", "Condition", "CustomResource", "IntOrString", "ListMap", "ListSet", "MicroTime", "Model",
        "ObjectMeta", "PreserveUnknownFields", "PrinterColumn", "ResourceInfo", "ResourceValidationError", "Scale",
        "Time", "resource_info",
    )},
}

__all__ = [
    "CONVERSION_ANNOTATION",
    "Atomic",
    "Condition",
    "ConditionError",
    "ConversionError",
    "CustomResource",
    "IncompleteObjectError",
    "IntOrString",
    "ListMap",
    "ListSet",
    "MicroTime",
    "Model",
    "ObjectMeta",
    "PreserveUnknownFields",
    "PrinterColumn",
    "ResourceInfo",
    "ResourceValidationError",
    "Scale",
    "SchemaError",
    "Spoke",
    "Time",
    "TimeFormatError",
    "Versions",
    "check_structural",
    "crd",
    "crd_yaml",
    "find_condition",
    "format_micro_time",
    "format_time",
    "is_condition_false",
    "is_condition_true",
    "now",
    "object_reference",
    "parse_time",
    "remove_condition",
    "resource_info",
    "set_condition",
    "structural_problems",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kubeloop.resources' has no attribute {name!r}")
    try:
        mod = importlib.import_module(module, __name__)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] in ("pydantic", "pydantic_core"):
            raise ImportError(f"kubeloop.resources.{name} needs pydantic 2: pip install 'kubeloop[resources]'") from e
        raise
    value = getattr(mod, name)
    globals()[name] = value
    return value
