"""The one conversion from what users pass as a selector (text, a label map, a parsed selector).

Every API that takes a selector accepts ``str | Mapping[str, str] | LabelSelector`` (or the
field equivalents) and goes through here, so the rules are the same everywhere: ``None`` is
"everything", a mapping means "each key equals its value", text is parsed once and cached
(the same few selector strings are passed over and over by readers on hot paths).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import lru_cache
from typing import Any, TypeVar, cast

from kubeloop.meta._fields import FieldSelector
from kubeloop.meta._labels import LabelSelector
from kubeloop.meta._selector import Selector

__all__ = ["FieldSelectorLike", "LabelSelectorLike", "as_field_selector", "as_label_selector"]

LabelSelectorLike = LabelSelector | str | Mapping[str, str]
FieldSelectorLike = FieldSelector | str | Mapping[str, str]

S = TypeVar("S", bound=Selector[Any])


@lru_cache(maxsize=512)
def _parsed(cls: Hashable, text: str) -> Selector[Any]:
    """The parse of ``text`` by selector class ``cls``, cached: the same few strings recur."""
    return cast(type[Selector[Any]], cls).parse(text)


def _coerce(cls: type[S], selector: S | str | Mapping[str, str] | None) -> S:
    if isinstance(selector, cls):
        return selector
    if selector is None or isinstance(selector, str):
        return cast(S, _parsed(cast(Hashable, cls), selector or ""))
    return cls.from_mapping(cast(Mapping[str, str], selector))


def as_label_selector(selector: LabelSelectorLike | None) -> LabelSelector:
    """``selector`` as a parsed :class:`LabelSelector`; raises :class:`SelectorError` if invalid."""
    return _coerce(LabelSelector, selector)


def as_field_selector(selector: FieldSelectorLike | None) -> FieldSelector:
    """``selector`` as a parsed :class:`FieldSelector`; raises :class:`SelectorError` if invalid."""
    return _coerce(FieldSelector, selector)
