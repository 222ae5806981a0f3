"""`GenericStrategy`: a kind served with the generic rules only (names, generation, an initial
status), the base of the kinds that add a few rules of their own (quotas, limit ranges, storage and
cluster configuration kinds, PodSecurityPolicy)."""

from __future__ import annotations

from typing import Any

from ..resources import ServedResource
from ..shapes import Obj
from . import meta as m
from .base import KindStrategy


class GenericStrategy(KindStrategy):
    """A kind with optional generation (bumped by any change outside metadata/status) and
    optional initial status."""

    def __init__(self, generation: bool = False, status: Any = None, name_fn: m.NameValidator | None = None) -> None:
        self.has_generation = generation
        self._status = status
        if name_fn is not None:
            self.name_fn = name_fn

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        import copy

        return copy.deepcopy(self._status)
