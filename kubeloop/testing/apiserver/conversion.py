"""CRD conversion through a webhook (`spec.conversion.strategy: Webhook`), as kube-apiserver does it.

Objects are stored in the storage version they were written in; serving one in another version
(on read, list, watch, and for the old object of a write), and storing one written in another
version, sends a ConversionReview to the CRD's webhook. One review carries every object of a list
that needs converting (as apiextensions-apiserver's `webhookConverter`); objects already in the
desired version are not sent. The answer is checked as the real server checks it (the review's
uid, the count, each object's apiVersion, kind, name, namespace and uid) and the converted
object keeps the original's metadata except its labels and annotations. Any failure is a 500
`conversion webhook for <gvk> failed: <reason>`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from .errors import StatusError
from .resources import ServedResource
from .shapes import Obj, copy_json
from .storage import VersionedStore
from .webhookcall import CallError, WebhookCaller

__all__ = ["CRDConversion"]

CRD_BUCKET = "apiextensions.k8s.io/customresourcedefinitions"
#: a conversion webhook has no timeoutSeconds: the API server's client default
CONVERSION_TIMEOUT = 30.0


def _gvk(api_version: str, kind: str) -> str:
    """Go's `GroupVersionKind.String()`: `group/version, Kind=Kind`."""
    return f"{api_version}, Kind={kind}"


class CRDConversion:
    """Converts custom resources whose CRD says `conversion: Webhook`; counts its calls (tests)."""

    def __init__(self, store: VersionedStore, caller: WebhookCaller) -> None:
        self.store = store
        self.caller = caller
        #: ConversionReviews sent, per CRD name (what a test can assert on)
        self.calls: dict[str, int] = {}

    def webhook(self, info: ServedResource) -> Mapping[str, Any] | None:
        """The CRD's `conversion.webhook` when it converts through one, else None."""
        if not info.crd_name:
            return None
        bucket = self.store.buckets.get(CRD_BUCKET)
        crd = bucket.objects.get(("", info.crd_name)) if bucket is not None else None
        if crd is None:
            return None
        conversion = (crd.obj.get("spec") or {}).get("conversion") or {}
        if conversion.get("strategy") != "Webhook":
            return None
        webhook = conversion.get("webhook")
        return webhook if isinstance(webhook, Mapping) else {}

    def needed(self, info: ServedResource, objects: list[Obj], api_version: str) -> bool:
        """Whether serving `objects` as `api_version` calls the webhook."""
        return any(o.get("apiVersion") != api_version for o in objects) and self.webhook(info) is not None

    async def convert(self, info: ServedResource, objects: list[Obj], api_version: str) -> list[Obj]:
        """`objects` (dicts, not changed) as `api_version`: new dicts for those converted, in one review."""
        todo = [i for i, o in enumerate(objects) if o.get("apiVersion") != api_version]
        webhook = self.webhook(info) if todo else None
        if webhook is None:
            return [o if o.get("apiVersion") == api_version else dict(o, apiVersion=api_version) for o in objects]
        first = objects[todo[0]]
        source = _gvk(str(first.get("apiVersion") or ""), info.kind)
        if "v1" not in (webhook.get("conversionReviewVersions") or ["v1"]):
            raise StatusError(500, "", f"conversion webhook for {source} failed: no supported "
                                                    "conversion review versions")
        uid = str(uuid.uuid4())
        review = {"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
                  "request": {"uid": uid, "desiredAPIVersion": api_version,
                              "objects": [objects[i] for i in todo]}, "response": {"uid": "", "convertedObjects": None,
                                                                                   "result": {"metadata": {}}}}
        self.calls[info.crd_name] = self.calls.get(info.crd_name, 0) + 1
        try:
            answer = await self.caller.post(webhook.get("clientConfig") or {}, review, CONVERSION_TIMEOUT)
            converted = _converted(answer, uid)
        except CallError as e:
            raise StatusError(500, "", f"conversion webhook for {source} failed: {e}") from None
        if len(converted) != len(todo):
            raise StatusError(500, "", f"conversion webhook for {source} returned {len(converted)} "
                                                    f"objects, expected {len(todo)}")
        out = list(objects)
        for n, (i, new) in enumerate(zip(todo, converted, strict=True)):
            out[i] = _checked(objects[i], new, api_version, source, n, len(todo) > 1)
        return out


def _converted(answer: Any, uid: str) -> list[Any]:
    if not isinstance(answer, dict) or answer.get("kind") != "ConversionReview" \
            or answer.get("apiVersion") != "apiextensions.k8s.io/v1":
        got = f"{(answer or {}).get('apiVersion', '')}, Kind={(answer or {}).get('kind', '')}" \
            if isinstance(answer, dict) else "?"
        raise CallError(f"expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise CallError("no response provided")
    if response.get("uid") != uid:
        raise CallError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise CallError(str(result["message"]))
        raise CallError(f"response.result.status was '{result.get('status', '')}', not 'Success'")
    return list(response.get("convertedObjects") or [])


def _checked(original: Obj, converted: Any, api_version: str, source: str, index: int, list_kind: bool) -> Obj:
    """`validateConvertedObject` + `restoreObjectMeta`: the original's metadata with the converted
    object's labels and annotations."""
    where = f"returned invalid converted object at index {index}" if list_kind else \
        f"returned invalid object at index {index}"
    if not isinstance(converted, dict):
        raise StatusError(500, "", f"conversion webhook for {source} {where}: not an object")
    if converted.get("apiVersion") != api_version:
        raise StatusError(500, "", f"conversion webhook for {source} {where}: invalid groupVersion "
                                                f"(expected {api_version}, received {converted.get('apiVersion')})")
    if converted.get("kind") != original.get("kind"):
        raise StatusError(500, "", f"conversion webhook for {source} {where}: invalid kind (expected "
                                                f"{original.get('kind')}, received {converted.get('kind')})")
    om, cm = original.get("metadata") or {}, converted.get("metadata")
    if not isinstance(cm, dict):
        raise StatusError(500, "", f"conversion webhook for {source} returned invalid metadata: missing "
                                                "metadata in converted object")
    for key in ("name", "namespace", "uid"):
        if (om.get(key) or "") != (cm.get(key) or ""):
            raise StatusError(500, "", f"conversion webhook for {source} {where}: must have the same "
                                                    f"{key}: {om.get(key) or ''} != {cm.get(key) or ''}")
    out = dict(converted)
    meta = copy_json(om)
    for key in ("labels", "annotations"):
        value = cm.get(key)
        if value is None:
            meta.pop(key, None)
        elif not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise StatusError(500, "", f"conversion webhook for {source} returned invalid metadata: "
                                                    f"metadata.{key} must be a map of strings")
        else:
            meta[key] = dict(value)
    out["metadata"] = meta
    return out
