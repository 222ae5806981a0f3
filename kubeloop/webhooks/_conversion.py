"""The conversion webhook: a ConversionReview answered with `Versions.convert`, object by object.

The API server sends every object of one request that is not in the desired version (a whole LIST
page at once) and accepts the answer only whole: one object that cannot be converted fails the
request, with the message naming it. Converting is CPU work in Python; a long list is converted
in slices with a yield to the event loop between them, so admission requests served by the same
process are not held up behind it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from kubeloop.resources import Versions

__all__ = ["Converter"]

log = logging.getLogger("kubeloop.webhooks")

#: objects converted between two yields to the event loop
SLICE = 64


class Converter:
    """Every multi-version resource one server converts, by (group, kind)."""

    def __init__(self, versions: Iterable[Versions] = ()) -> None:
        self._by_kind: dict[tuple[str, str], Versions] = {}
        for v in versions:
            self.add(v)

    def add(self, versions: Versions) -> None:
        key = (versions.info.group, versions.info.kind)
        if key in self._by_kind and self._by_kind[key] is not versions:
            raise ValueError(f"{versions.info.group}/{versions.info.kind} already has conversions")
        self._by_kind[key] = versions

    @property
    def resources(self) -> tuple[Versions, ...]:
        return tuple(self._by_kind.values())

    def __bool__(self) -> bool:
        return bool(self._by_kind)

    async def convert(self, objects: list[Any], desired: str) -> list[dict[str, Any]]:
        """`objects` converted to apiVersion `desired`; `ConversionError`/`ValueError` on the first failure."""
        from kubeloop.resources import ConversionError

        out: list[dict[str, Any]] = []
        for i, obj in enumerate(objects):
            if i and i % SLICE == 0:
                await asyncio.sleep(0)
            if not isinstance(obj, Mapping):
                raise ConversionError(f"object {i} is not a JSON object")
            group = str(obj.get("apiVersion") or "").rpartition("/")[0]
            versions = self._by_kind.get((group, str(obj.get("kind") or "")))
            if versions is None:
                raise ConversionError(f"this server converts {sorted(f'{g}/{k}' for g, k in self._by_kind)}, "
                                      f"not {obj.get('apiVersion')}/{obj.get('kind')}")
            out.append(versions.convert(obj, desired))
        return out

    async def review(self, request: Mapping[str, Any]) -> bytes:
        """The ConversionReview v1 answer to `request` (failures are answered, never raised)."""
        uid = str(request.get("uid") or "")
        desired = str(request.get("desiredAPIVersion") or "")
        objects = request.get("objects") or []
        try:
            if not isinstance(objects, list):
                raise ValueError("request.objects must be a list")
            converted = await self.convert(objects, desired)
            response: dict[str, Any] = {"uid": uid, "convertedObjects": converted, "result": {"status": "Success"}}
        except ValueError as e:  # ConversionError is a ValueError
            log.warning("conversion to %s failed: %s", desired, e)
            response = {"uid": uid, "convertedObjects": [], "result": {"status": "Failure", "message": str(e)}}
        return orjson.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                             "response": response})
