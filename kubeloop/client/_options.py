"""`ListOptions`: what a LIST or WATCH selects, as one value.

The same options (namespace, label and field selectors, metadata only, resourceVersion, page size)
used to be repeated as keyword arguments in every list and watch signature and forwarded one by one
from each to the next. Now one frozen value flows; the methods users call keep the same keywords
as a convenience (`ListKeywords`, merged into the value by `ListOptions.merged`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypedDict

from kubeloop.meta import FieldSelectorLike, LabelSelectorLike

__all__ = ["ListKeywords", "ListOptions"]


class ListKeywords(TypedDict, total=False):
    """The `ListOptions` fields as keyword arguments (the convenience form of the client's methods)."""

    namespace: str | None
    label_selector: LabelSelectorLike | None
    field_selector: FieldSelectorLike | None
    metadata_only: bool
    limit: int | None
    resource_version: str | None
    resource_version_match: str | None


@dataclass(frozen=True, slots=True)
class ListOptions:
    """What a LIST or WATCH selects and from which version.

    - ``namespace``: None means the client's default namespace; ``ALL_NAMESPACES`` (``""``) every
      namespace (ignored for cluster-scoped resources).
    - ``label_selector`` / ``field_selector``: text, a ``{key: value}`` mapping or a parsed selector.
    - ``metadata_only``: ask for ``PartialObjectMetadata`` (names, labels, owners; no spec/status).
    - ``limit``: page size of a LIST (None or 0: everything at once); a WATCH ignores it.
    - ``resource_version`` / ``resource_version_match``: as the API defines them.
    """

    namespace: str | None = None
    label_selector: LabelSelectorLike | None = None
    field_selector: FieldSelectorLike | None = None
    metadata_only: bool = False
    limit: int | None = 500
    resource_version: str | None = None
    resource_version_match: str | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and (not isinstance(self.limit, int) or self.limit < 0):
            raise ValueError(f"ListOptions.limit must be a non-negative int or None, not {self.limit!r}")
        for name in ("namespace", "resource_version", "resource_version_match"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"ListOptions.{name} must be a str or None, not {type(value).__name__}")

    @classmethod
    def merged(cls, options: ListOptions | None, keywords: ListKeywords) -> ListOptions:
        """``options`` (default: all defaults) with the keywords given on top: the one place where a
        method's convenience keywords become the value."""
        base = options if options is not None else _DEFAULT
        unknown = set(keywords) - _FIELDS
        if unknown:
            raise TypeError(f"unexpected list option(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(base, **keywords) if keywords else base


_DEFAULT = ListOptions()
_FIELDS = frozenset(f.name for f in dataclasses.fields(ListOptions))
