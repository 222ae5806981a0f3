"""`KindStrategy`: the template every built-in kind's strategy fills in.

It follows kube-apiserver's `rest.BeforeCreate` / `rest.BeforeUpdate` order so that kinds only
state what differs: a schema (decoding), defaults, initial status, their own validation and what
counts as a generation-bumping change.
"""

from __future__ import annotations

from typing import Any

from .. import apiwarnings
from ..govalues import TYPED, equal
from ..resources import ServedResource, Strategy
from ..shapes import Cause, Obj, copy_json
from . import meta as m
from .generated import fill_internal, storage_round_trip
from .schema import Struct, decode_object


def without(obj: Obj, *keys: str) -> Obj:
    return {k: v for k, v in obj.items() if k not in keys}


class KindStrategy(Strategy):
    """A built-in kind: schema-driven decoding, defaults, status and generation rules."""

    #: the kind's struct description; None keeps the body as sent
    schema: Struct | None = None
    #: the name rule (`NameIsDNSSubdomain` unless the kind says otherwise)
    name_fn: m.NameValidator = staticmethod(m.name_is_dns_subdomain)
    #: whether the kind validates ObjectMeta (core/v1 Events do not)
    validates_meta: bool = True
    #: annotation changes bump generation too (Deployment)
    annotations_bump_generation: bool = False
    #: the kind's `ValidateXUpdate` runs `ValidateX` on the new object, ObjectMeta included (core's
    #: Service, ServiceAccount, ConfigMap, Secret), so metadata errors are listed once more
    update_validates_new: bool = False
    #: a `/status` write cannot change labels (apps workloads)
    status_keeps_labels: bool = False
    #: the group 422 errors name when it differs from the served group (events.k8s.io Events are
    #: validated as the internal core Event, so their errors carry no group)
    error_group: str | None = None
    #: where the kind's pod template is (`("spec", "template")`): its warnings are sent on create and
    #: on a spec change (apiwarnings.py)
    pod_template_path: tuple[str, ...] | None = None

    # -- hooks for kinds --------------------------------------------------------------------------
    def default(self, info: ServedResource, obj: Obj) -> None:
        """Scheme defaults, applied on every decode (create, update, patch results)."""

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        """The status a new object starts with when the kind has a status subresource; None = absent."""
        return None

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        """Kind-specific create preparation (after decoding and status reset)."""

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """Kind-specific update preparation (before the generation check)."""

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """Validation of a new object; the default checks ObjectMeta only."""
        if not self.validates_meta:
            return []
        return m.validate_object_meta(obj.get("metadata") or {}, info.namespaced, self.name_fn)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """The kind's `ValidateUpdate`: by default ObjectMeta update rules plus new-object rules
        (with the whole `validate` when the kind's `ValidateXUpdate` calls `ValidateX`)."""
        if not self.validates_meta:
            return []
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        if self.update_validates_new:
            causes += self.validate(info, new)
        return causes + self.validate_spec(info, new)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """The non-metadata part of `validate` (reused on update)."""
        return []

    def warnings_on_create(self, info: ServedResource, obj: Obj) -> list[str]:
        """The strategy's `WarningsOnCreate`: by default those of its pod template."""
        return self._template_warnings(obj)

    def warnings_on_update(self, info: ServedResource, new: Obj, old: Obj) -> list[str]:
        """The strategy's `WarningsOnUpdate`: by default the pod template's, when the spec changed."""
        nm, om = new.get("metadata") or {}, old.get("metadata") or {}
        if nm.get("generation") == om.get("generation"):
            return []
        return self._template_warnings(new)

    def _template_warnings(self, obj: Obj) -> list[str]:
        if self.pod_template_path is None:
            return []
        template: Any = obj
        for part in self.pod_template_path:
            template = template.get(part) if isinstance(template, dict) else None
        return apiwarnings.template_warnings(".".join(self.pod_template_path), template)

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        """The part of the object whose change bumps generation."""
        return without(obj, "metadata", "status", "apiVersion", "kind")

    # -- Strategy hooks -------------------------------------------------------------------------
    def typed(self, info: ServedResource) -> Struct | None:
        """The Go struct the kind decodes into: generated from the recorded OpenAPI document
        (`generated.py`), or the kind's own `schema` for a kind the document does not have."""
        from .generated import kind_struct

        return kind_struct(info.group, info.version, info.kind) or self.schema

    def decode(self, info: ServedResource, obj: Obj) -> None:
        schema = self.typed(info)
        if schema is not None:
            decode_object(schema, obj, info.kind, info.version)
        obj.setdefault("metadata", {})
        self.default(info, obj)
        fill_internal(info.group, info.version, info.kind, obj)

    def prepare_for_create(self, info: ServedResource, obj: Obj) -> None:
        meta = obj["metadata"]  # deletionTimestamp & co. are already cleared by the registry (BeforeCreate)
        if info.has_status:
            obj.pop("status", None)
            status = self.initial_status(info, obj)
            if status is not None:
                obj["status"] = status
        if self.has_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        self.prepare_create(info, obj)

    def validate_create(self, info: ServedResource, obj: Obj) -> None:
        m.raise_invalid(info, obj, self.validate(info, obj) + self.validate_spec(info, obj), self.error_group)
        if not self.validates_meta:
            # rest.BeforeCreate: generic ObjectMeta checks with the path-segment name rule, for every kind
            m.raise_invalid(info, obj, m.validate_object_meta(obj.get("metadata") or {}, info.namespaced,
                                                            m.validate_path_segment_name, kube=False), self.error_group)
        apiwarnings.add(*self.warnings_on_create(info, obj))  # rest.BeforeCreate, once validation passed
        self.canonicalize(info, obj)

    def prepare_for_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        m.carry_system_fields(new, old)
        m.keep_status(info, new, old)
        self.prepare_update(info, new, old)
        if self.has_generation:
            nm, om = new["metadata"], old.get("metadata") or {}
            # apiequality.Semantic.DeepEqual on the typed objects (govalues.TYPED)
            changed = not equal(self.spec_of(info, new), self.spec_of(info, old), TYPED)
            if self.annotations_bump_generation and not equal(nm.get("annotations"), om.get("annotations"), TYPED):
                changed = True
            if changed:
                nm["generation"] = int(om.get("generation") or 0) + 1

    def validate_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        # rest.BeforeUpdate's validateCommonFields (generic ObjectMeta rules, then the generic update
        # rules), for every kind, then the kind's own, which mostly repeat them: an invalid label is
        # reported 3-4 times
        nm, om = new.get("metadata") or {}, old.get("metadata") or {}
        causes = m.validate_object_meta(nm, info.namespaced, m.validate_path_segment_name, kube=False)
        causes += m.validate_object_meta_update(nm, om, kube=False)
        m.raise_invalid(info, new, causes + self.validate_update_causes(info, new, old), self.error_group)
        apiwarnings.add(*self.warnings_on_update(info, new, old))  # rest.BeforeUpdate, once validation passed
        self.canonicalize(info, new)

    def prepare_for_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        m.carry_system_fields(new, old)
        status = new.get("status")
        for key in list(new):
            if key not in ("metadata", "status", "apiVersion", "kind"):
                del new[key]
        for key, value in old.items():
            if key not in ("metadata", "status", "apiVersion", "kind"):
                new[key] = copy_json(value)
        if status is None:
            new.pop("status", None)
        if self.status_keeps_labels:
            labels = (old.get("metadata") or {}).get("labels")
            if labels is None:
                new["metadata"].pop("labels", None)
            else:
                new["metadata"]["labels"] = copy_json(labels)

    def validate_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        causes: list[Cause] = []
        if self.validates_meta:
            # twice, as on the real server: rest.BeforeUpdate's check and the kind's ValidateStatusUpdate
            causes += 2 * m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        m.raise_invalid(info, new, causes + self.validate_status(info, new), self.error_group)
        self.canonicalize(info, new)

    def canonicalize(self, info: ServedResource, obj: Obj) -> None:
        """What the object looks like once stored and read back (`generated.storage_round_trip`),
        the last step of every write."""
        schema = self.typed(info)
        if schema is not None:
            storage_round_trip(schema, obj)

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return []
