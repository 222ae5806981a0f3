"""Label selectors: the parsed, canonical, hashable form used by the client, cache and emulator."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubeloop.meta._errors import SelectorError
from kubeloop.meta._parser import parse_requirements
from kubeloop.meta._requirement import DOES_NOT_EXIST, EQUALS, EXISTS, IN, NOT_IN, Requirement
from kubeloop.meta._selector import Selector
from kubeloop.meta._subset import labels_imply

__all__ = ["LabelSelector"]


class LabelSelector(Selector[Requirement]):
    """A parsed label selector: a conjunction of :class:`Requirement` sorted by key.

    The empty selector matches everything. Equality is by canonical requirements, so
    ``LabelSelector.parse(str(sel)) == sel``.
    """

    __slots__ = ("_by_key", "_text")

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        reqs = sorted(set(requirements), key=lambda r: (r.key, r.operator, r.values))
        self.requirements = tuple(reqs)
        self._text: str | None = None
        self._by_key: dict[str, list[Requirement]] | None = None

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        """Parse the ``labelSelector`` query syntax; raises :class:`SelectorError`."""
        if text is None:
            return cls()
        return cls(parse_requirements(text))

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> LabelSelector:
        """Build from a metav1.LabelSelector (``matchLabels`` and ``matchExpressions``)."""
        reqs: list[Requirement] = []
        for k, v in (spec.get("matchLabels") or {}).items():
            reqs.append(Requirement.new(k, EQUALS, [v]))
        ops = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
        for expr in spec.get("matchExpressions") or ():
            op = ops.get(expr.get("operator"))
            if op is None:
                raise SelectorError(f'"{expr.get("operator")}" is not a valid label selector operator')
            reqs.append(Requirement.new(expr.get("key", ""), op, list(expr.get("values") or ())))
        return cls(reqs)

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> LabelSelector:
        """The selector matching exactly the objects that carry all these labels."""
        return cls(Requirement.new(k, EQUALS, [v]) for k, v in labels.items())

    from_mapping = from_labels

    def _keys(self) -> dict[str, list[Requirement]]:
        if self._by_key is None:
            by: dict[str, list[Requirement]] = {}
            for r in self.requirements:
                by.setdefault(r.key, []).append(r)
            self._by_key = by
        return self._by_key

    def _implies(self, broader: LabelSelector) -> bool:
        return labels_imply(self._keys(), broader.requirements)

    def __str__(self) -> str:
        if self._text is None:
            self._text = ",".join(str(r) for r in self.requirements)
        return self._text
