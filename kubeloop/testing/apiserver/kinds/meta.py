"""ObjectMeta rules shared by every kind: names, labels, annotations, finalizers, owner references.

The messages and `details.causes` reasons/fields are the ones kube-apiserver 1.24 produces
(apimachinery `validation` and `IsDNS1123Subdomain`/`IsQualifiedName`), because clients and the
conformance checker compare them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kubeloop.meta import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)

from .. import gostruct
from ..errors import cause, invalid
from ..shapes import Cause, Obj, copy_json

if TYPE_CHECKING:
    from ..resources import ServedResource

NameValidator = Callable[[str, bool], list[str]]

# -- value rendering as Go prints it in field errors -------------------------------------------


def go_repr(value: Any) -> str:
    """Render a value the way `field.Invalid` prints it (`%#v`-ish): quoted strings, Go maps/slices."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return '"null"'  # field.Error shows a nil value as the string "null", quoted like any string
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        inner = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
        return "map[string]string{" + inner + "}"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
    return json.dumps(value, sort_keys=True)


# How encoding/json names a JSON value in an UnmarshalTypeError.
GO_JSON_TYPES = {"null": "null", "bool": "bool", "int": "number", "float": "number", "string": "string",
                 "array": "array", "object": "object"}


# -- field error causes (field.ErrorList entries) ---------------------------------------------


def invalid_cause(fld: str, value: Any, detail: str) -> Cause:
    return cause("FieldValueInvalid", f"Invalid value: {go_repr(value)}: {detail}", fld)


def invalid_cause_raw(fld: str, shown: str, detail: str) -> Cause:
    """Invalid with an already rendered value (e.g. `""` when the real server prints an empty value)."""
    return cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", fld)


def invalid_typed(fld: str, go: str, value: Any, detail: str) -> Cause:
    """`field.Invalid` of a value whose Go type (`gostruct.py` vocabulary) decides how it prints."""
    return cause("FieldValueInvalid", f"Invalid value: {gostruct.field_value(go, value)}: {detail}", fld)


def not_supported_typed(fld: str, go: str, value: Any, valid: Iterable[str]) -> Cause:
    """`field.NotSupported` of a typed value (the valid values in the order the source lists them)."""
    quoted = ", ".join(gostruct.quote(v) for v in valid)
    return cause("FieldValueNotSupported",
                 f"Unsupported value: {gostruct.field_value(go, value)}: supported values: {quoted}", fld)


def cause_raw(reason: str, fld: str, message: str) -> Cause:
    """A cause whose message is already rendered (e.g. a Go struct printed with `%#v`)."""
    return cause(reason, message, fld)


def required_cause(fld: str, detail: str = "") -> Cause:
    return cause("FieldValueRequired", "Required value" + (f": {detail}" if detail else ""), fld)


def forbidden_cause(fld: str, detail: str) -> Cause:
    return cause("FieldValueForbidden", f"Forbidden: {detail}", fld)


def not_supported_cause(fld: str, value: Any, valid: Iterable[str]) -> Cause:
    quoted = ", ".join(json.dumps(v) for v in valid)
    return cause("FieldValueNotSupported", f"Unsupported value: {go_repr(value)}: supported values: {quoted}", fld)


def too_long_cause(fld: str, limit: int) -> Cause:
    return cause("FieldValueTooLong", f"Too long: must have at most {limit} bytes", fld)


def duplicate_cause(fld: str, value: Any) -> Cause:
    return cause("FieldValueDuplicate", f"Duplicate value: {go_repr(value)}", fld)


def type_invalid_cause(fld: str, value: Any, detail: str) -> Cause:
    return cause("FieldValueTypeInvalid", f"Invalid value: {go_repr(value)}: {detail}", fld)


def cause_type_invalid(fld: str, shown_type: str, detail: str) -> Cause:
    """kube-openapi's type error: the value shown is the JSON type name (`"string"`)."""
    return cause("FieldValueTypeInvalid", f"Invalid value: {json.dumps(shown_type)}: {detail}", fld)


def cause_too_long(fld: str, detail: str) -> Cause:
    return cause("FieldValueTooLong", f"Too long: {detail}", fld)


def cause_too_many(fld: str, actual: int, limit: int) -> Cause:
    return cause("FieldValueTooMany", f"Too many: {actual}: must have at most {limit} items", fld)


def raise_invalid(info: ServedResource, obj: Obj, causes: list[Cause], group: str | None = None) -> None:
    """422 Invalid when there are causes; `group` overrides the group shown (errors name the
    internal kind's group)."""
    if causes:
        name = (obj.get("metadata") or {}).get("name") or None
        raise invalid(info.kind, name, causes, info.group if group is None else group)


def immutable_causes(fld: str, new: Any, old: Any) -> list[Cause]:
    """`ValidateImmutableField`."""
    if new == old:
        return []
    return [invalid_cause(fld, new, "field is immutable")]


# -- names (the rules themselves are in `kubeloop.meta`, shared with the selectors) ----

def _mask_trailing_dash(name: str) -> str:
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """`NameIsDNSSubdomain` (most kinds)."""
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1123_subdomain(name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """`NameIsDNSLabel` (Namespaces)."""
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1123_label(name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """`NameIsDNS1035Label` (Services)."""
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1035_label(name)


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """`path.ValidatePathSegmentName`: what every kind's name must satisfy to be addressable."""
    errs: list[str] = []
    if not prefix and name in (".", ".."):
        errs.append(f"may not be '{name}'")
    for bad in ("/", "%"):
        if bad in name:
            errs.append(f"may not contain '{bad}'")
    return errs


_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")


def is_valid_port_name(value: str) -> list[str]:
    """`validation.IsValidPortName`: an IANA_SVC_NAME."""
    msgs = []
    if len(value) > 15:
        msgs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(value):
        msgs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", value):
        msgs.append("must contain at least one letter (a-z)")
    if "--" in value:
        msgs.append("must not contain consecutive hyphens")
    if value and (value[0] == "-" or value[-1] == "-"):
        msgs.append("must not begin or end with a hyphen")
    return msgs


# -- intstr.IntOrString values (apps and policy validation) ----------------------------------------

INTSTR = "k8s.io/apimachinery/pkg/util/intstr.IntOrString"
_PERCENT = re.compile(r"^[0-9]+%$")
PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' "
               "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")


def percent_value(value: Any) -> int | None:
    """`getPercentValue`: the number of a valid percent string, None for anything else."""
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return None


def int_or_percent_value(value: Any) -> int:
    """`getIntOrPercentValue`: a percent's number, else `IntValue()` (a string's `Atoi`, 0 if none)."""
    pct = percent_value(value)
    if pct is not None:
        return pct
    if isinstance(value, str):
        return int(value) if re.fullmatch(r"[+-]?[0-9]+", value) else 0
    return int(value or 0)


def validate_positive_int_or_percent(value: Any, fld: str) -> list[Cause]:
    """`ValidatePositiveIntOrPercent`."""
    if isinstance(value, str):
        return [] if _PERCENT.match(value) else [invalid_typed(fld, INTSTR, value, PERCENT_MSG)]
    number = int(value or 0)
    return [invalid_cause(fld, number, "must be greater than or equal to 0")] if number < 0 else []


def not_more_than_100_percent(value: Any, fld: str) -> list[Cause]:
    """`IsNotMoreThan100Percent`."""
    pct = percent_value(value)
    return [invalid_typed(fld, INTSTR, value, "must not be greater than 100%")] if pct is not None and pct > 100 else []


# -- ObjectMeta validation --------------------------------------------------------------------

STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


@lru_cache(maxsize=4096)
def _key_errors(key: str) -> tuple[str, ...]:
    """`is_qualified_name` of a label or annotation key: every write validates the object's keys
    again, nearly always the same ones."""
    return tuple(is_qualified_name(key))


@lru_cache(maxsize=4096)
def _label_value_errors(value: str) -> tuple[str, ...]:
    return tuple(is_label_value(value))


def validate_labels(labels: Any, fld: str) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(labels, dict):
        return causes
    for k, v in labels.items():
        for msg in _key_errors(k):
            causes.append(invalid_cause(fld, k, msg))
        for msg in _label_value_errors(v if isinstance(v, str) else str(v)):
            causes.append(invalid_cause(fld, v, msg))
    return causes


SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_selector(selector: Any, fld: str) -> list[Cause]:
    """metav1 `ValidateLabelSelector` (a nil selector is valid)."""
    if not isinstance(selector, dict):
        return []
    causes = validate_labels(selector.get("matchLabels"), f"{fld}.matchLabels")
    for i, req in enumerate(selector.get("matchExpressions") or []):
        req = req if isinstance(req, dict) else {}
        path = f"{fld}.matchExpressions[{i}]"
        op, values = req.get("operator") or "", req.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                causes.append(required_cause(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                causes.append(forbidden_cause(f"{path}.values",
                                              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            causes.append(invalid_cause(f"{path}.operator", op, "not a valid selector operator"))
        key = req.get("key") or ""
        causes += [invalid_cause(f"{path}.key", key, msg) for msg in _key_errors(key)]
    return causes


def label_selector_parses(selector: Any) -> bool:
    """Whether `metav1.LabelSelectorAsSelector` succeeds (its requirements are well formed)."""
    if not isinstance(selector, dict):
        return True
    for k, v in (selector.get("matchLabels") or {}).items():
        if _key_errors(k) or _label_value_errors(v if isinstance(v, str) else str(v)):
            return False
    for req in selector.get("matchExpressions") or []:
        req = req if isinstance(req, dict) else {}
        op, values = req.get("operator") or "", req.get("values") or []
        if op not in SELECTOR_OPERATORS or (op in ("In", "NotIn")) != bool(values) or _key_errors(req.get("key") or ""):
            return False
        if any(_label_value_errors(str(v)) for v in values):
            return False
    return True


_CONDITION_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
CONDITION_REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric "
    "characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or "
    "'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is "
    "'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')")


def validate_conditions(conditions: Any, fld: str) -> list[Cause]:
    """metav1 `ValidateConditions` (`[]metav1.Condition`)."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(conditions if isinstance(conditions, list) else []):
        c = c if isinstance(c, dict) else {}
        path = f"{fld}[{i}]"
        ctype = c.get("type") or ""
        if ctype in seen:
            causes.append(duplicate_cause(f"{path}.type", ctype))
        seen.add(ctype)
        causes += [invalid_cause(f"{path}.type", ctype, msg) for msg in _key_errors(ctype)]
        if c.get("status") not in ("False", "True", "Unknown"):
            causes.append(not_supported_cause(f"{path}.status", c.get("status") or "", ("False", "True", "Unknown")))
        observed = int(c.get("observedGeneration") or 0)
        if observed < 0:
            causes.append(invalid_cause(f"{path}.observedGeneration", observed, "must be greater than or equal to zero"))
        if not c.get("lastTransitionTime"):
            causes.append(required_cause(f"{path}.lastTransitionTime", "must be set"))
        reason = c.get("reason") or ""
        if not reason:
            causes.append(required_cause(f"{path}.reason", "must be set"))
        else:
            if not _CONDITION_REASON.match(reason):
                causes.append(invalid_cause(f"{path}.reason", reason, CONDITION_REASON_MSG))
            if len(reason) > 1024:
                causes.append(too_long_cause(f"{path}.reason", 1024))
        if len(c.get("message") or "") > 32 * 1024:
            causes.append(too_long_cause(f"{path}.message", 32 * 1024))
    return causes


def validate_annotations(annotations: Any, fld: str) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(annotations, dict):
        return causes
    total = 0
    for k, v in annotations.items():
        for msg in _key_errors(k.lower()):
            causes.append(invalid_cause(fld, k, msg))
        total += len(k) + len(v if isinstance(v, str) else str(v))
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long_cause(fld, TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def validate_finalizers(finalizers: Any, fld: str) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(finalizers, list):
        return causes
    for f in finalizers:  # apimachinery's ValidateFinalizerName names the list, not the item
        for msg in is_qualified_name(f):
            causes.append(invalid_cause(fld, f, msg))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        causes.append(invalid_cause(fld, finalizers,
                                    "finalizers \"orphan\" and \"foregroundDeletion\" cannot be both set"))
    return causes


def validate_kube_finalizers(finalizers: Any, fld: str) -> list[Cause]:
    """core's `validateKubeFinalizerName`, run on built-in kinds after the generic rules: a name
    without a `/` must be one of the standard finalizers."""
    if not isinstance(finalizers, list):
        return []
    return [invalid_cause(f"{fld}[{i}]", f, "name is neither a standard finalizer name nor is it fully qualified")
            for i, f in enumerate(finalizers)
            if isinstance(f, str) and "/" not in f and f not in STANDARD_FINALIZERS]


_OWNER_REFERENCES_GO = "[]k8s.io/apimachinery/pkg/apis/meta/v1.OwnerReference"
_OWNER_REFERENCE_GO = "k8s.io/apimachinery/pkg/apis/meta/v1.OwnerReference"


def _group_version(api_version: str) -> tuple[str, str] | None:
    """`schema.ParseGroupVersion` (None when it fails: more than one slash)."""
    if not api_version or api_version == "/":
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def validate_owner_references(refs: Any, fld: str) -> list[Cause]:
    """apimachinery's `ValidateOwnerReferences`."""
    causes: list[Cause] = []
    if not isinstance(refs, list):
        return causes
    controller = ""
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
        gv = _group_version(api_version)
        if gv is None or not gv[1]:
            causes.append(invalid_cause(f"{fld}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            causes.append(invalid_cause(f"{fld}.kind", kind, "kind must not be empty"))
        if not ref.get("name"):
            causes.append(invalid_cause(f"{fld}.name", ref.get("name") or "", "name must not be empty"))
        if not ref.get("uid"):
            causes.append(invalid_cause(f"{fld}.uid", ref.get("uid") or "", "uid must not be empty"))
        if gv == ("", "v1") and kind == "Event":
            causes.append(invalid_typed(fld, _OWNER_REFERENCE_GO, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            if controller:
                causes.append(invalid_typed(fld, _OWNER_REFERENCES_GO, refs, "Only one reference can have Controller "
                                            f"set to true. Found \"true\" in references for {controller} and "
                                            f"{ref.get('name') or ''}"))
            else:
                controller = ref.get("name") or ""
    return causes


def _validate_names(meta: Obj, fld: str, name_fn: NameValidator, generated_ok: bool) -> list[Cause]:
    """generateName and name per `name_fn`; `generated_ok`: a generateName alone is enough (the
    generic check runs before the name is generated)."""
    gen = meta.get("generateName") or ""
    name = meta.get("name") or ""
    causes = [invalid_cause(f"{fld}.generateName", gen, msg) for msg in name_fn(gen, True)] if gen else []
    if name:
        causes += [invalid_cause(f"{fld}.name", name, msg) for msg in name_fn(name, False)]
    elif not (gen and generated_ok):
        causes.append(required_cause(f"{fld}.name", "name or generateName is required"))
    return causes


def _validate_meta_lists(meta: Obj, fld: str, kube: bool) -> list[Cause]:
    """The checks create and update share: labels, annotations, owner references, finalizers."""
    causes = validate_labels(meta.get("labels"), f"{fld}.labels")
    causes += validate_annotations(meta.get("annotations"), f"{fld}.annotations")
    causes += validate_owner_references(meta.get("ownerReferences"), f"{fld}.ownerReferences")
    causes += validate_finalizers(meta.get("finalizers"), f"{fld}.finalizers")
    if kube:
        causes += validate_kube_finalizers(meta.get("finalizers"), f"{fld}.finalizers")
    return causes


def validate_item_name(name: str, fld: str, seen: set[str], name_fn: Callable[[str], list[str]]) -> list[Cause]:
    """The `name` of one entry of a list keyed by name (containers, CRD versions): required, valid
    per `name_fn`, unique among `seen` (which this extends)."""
    if not name:
        return [required_cause(fld)]
    causes = [invalid_cause(fld, name, msg) for msg in name_fn(name)]
    if name in seen:
        causes.append(duplicate_cause(fld, name))
    seen.add(name)
    return causes


def validate_object_meta(meta: Obj, namespaced: bool, name_fn: NameValidator = name_is_dns_subdomain,
                         fld: str = "metadata", kube: bool = True) -> list[Cause]:
    """`ValidateObjectMeta` for a new object (after generateName produced a name); `kube`: core's
    version for built-in kinds, which adds `validate_kube_finalizers` (False: apimachinery's
    generic one, which `rest.BeforeCreate/BeforeUpdate` and custom resources run)."""
    causes = _validate_names(meta, fld, name_fn, generated_ok=False)
    ns = meta.get("namespace") or ""
    if namespaced:
        if not ns:
            causes.append(required_cause(f"{fld}.namespace"))
        else:
            for msg in is_dns1123_label(ns):
                causes.append(invalid_cause(f"{fld}.namespace", ns, msg))
    elif ns:
        causes.append(forbidden_cause(f"{fld}.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(invalid_cause(f"{fld}.generation", generation, "must be greater than or equal to 0"))
    return causes + _validate_meta_lists(meta, fld, kube)


def validate_path_segment_meta(meta: Obj, fld: str = "metadata") -> list[Cause]:
    """The generic name check every kind gets after its own validation passed (`BeforeCreate`)."""
    return _validate_names(meta, fld, validate_path_segment_name, generated_ok=True)


def validate_no_new_finalizers(new: Any, old: Any, fld: str) -> list[Cause]:
    new_set = [f for f in (new or []) if f not in (old or [])]
    if not new_set:
        return []
    return [forbidden_cause(fld, "no new finalizers can be added if the object is being deleted, "
                            f"found new finalizers {go_repr(new_set)}")]


def validate_object_meta_update(new: Obj, old: Obj, fld: str = "metadata", kube: bool = True) -> list[Cause]:
    """`ValidateObjectMetaUpdate` (resourceVersion presence is the registry's business); `kube`:
    core's version for built-in kinds (see `validate_object_meta`)."""
    causes: list[Cause] = []
    if old.get("deletionTimestamp"):
        causes += validate_no_new_finalizers(new.get("finalizers"), old.get("finalizers"), f"{fld}.finalizers")
    new_gen, old_gen = new.get("generation") or 0, old.get("generation") or 0
    if isinstance(new_gen, int) and isinstance(old_gen, int) and new_gen < old_gen:
        causes.append(invalid_cause(f"{fld}.generation", new_gen, "must not be decremented"))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                "deletionGracePeriodSeconds"):
        causes += immutable_causes(f"{fld}.{key}", new.get(key), old.get(key))
    return causes + _validate_meta_lists(new, fld, kube)


def carry_system_fields(new: Obj, old: Obj) -> None:
    """What `BeforeUpdate` does before validation: a write cannot change uid (when absent),
    creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds or generation."""
    nm = new.setdefault("metadata", {})
    om = old.get("metadata") or {}
    if not nm.get("uid") and om.get("uid"):
        nm["uid"] = om["uid"]
    if om.get("creationTimestamp"):
        nm["creationTimestamp"] = om["creationTimestamp"]
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        if om.get(key) is not None:
            nm[key] = om[key]
    if "generation" in om:
        nm["generation"] = om["generation"]
    else:
        nm.pop("generation", None)


def keep_status(info: ServedResource, new: Obj, old: Obj) -> None:
    """A write to the main resource cannot change `status` when the kind has a status subresource."""
    if not info.has_status:
        return
    if "status" in old:
        new["status"] = copy_json(old["status"])
    else:
        new.pop("status", None)
