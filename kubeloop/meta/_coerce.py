"""The one conversion from what users pass as a selector (text, a label map, a parsed selector).

Every API that takes a selector accepts ``str | Mapping[str, str] | LabelSelector`` (or the
field equivalents) and goes through here, so the rules are the same everywhere: ``None`` is
"everything", a mapping means "each key equals its value", text is parsed once and cached
(the same few selector strings are passed over and over by readers on hot paths).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from kubeloop.meta._fields import FieldSelector
from kubeloop.meta._labels import LabelSelector

__all__ = ["FieldSelectorLike", "LabelSelectorLike", "as_field_selector", "as_label_selector"]

LabelSelectorLike = LabelSelector | str | Mapping[str, str]
FieldSelectorLike = FieldSelector | str | Mapping[str, str]

_EMPTY_LABELS = LabelSelector()
_EMPTY_FIELDS = FieldSelector()


@lru_cache(maxsize=256)
def _parse_labels(text: str) -> LabelSelector:
    return LabelSelector.parse(text)


@lru_cache(maxsize=256)
def _parse_fields(text: str) -> FieldSelector:
    return FieldSelector.parse(text)


def as_label_selector(selector: LabelSelectorLike | None) -> LabelSelector:
    """``selector`` as a parsed :class:`LabelSelector`; raises :class:`SelectorError` if invalid."""
    if selector is None:
        return _EMPTY_LABELS
    if isinstance(selector, LabelSelector):
        return selector
    if isinstance(selector, str):
        return _parse_labels(selector)
    return LabelSelector.from_labels(selector)


def as_field_selector(selector: FieldSelectorLike | None) -> FieldSelector:
    """``selector`` as a parsed :class:`FieldSelector`; raises :class:`SelectorError` if invalid."""
    if selector is None:
        return _EMPTY_FIELDS
    if isinstance(selector, FieldSelector):
        return selector
    if isinstance(selector, str):
        return _parse_fields(selector)
    return FieldSelector.from_fields(selector)
