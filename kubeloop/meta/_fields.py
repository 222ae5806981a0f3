"""Field selectors: ``field=value`` / ``field!=value`` terms with ``\\`` escapes (fields.ParseSelector)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubeloop.meta._errors import SelectorError
from kubeloop.meta._selector import Selector
from kubeloop.meta._subset import fields_imply

__all__ = ["FieldRequirement", "FieldSelector", "escape_field_value"]


def escape_field_value(value: str) -> str:
    r"""Escape ``\``, ``,`` and ``=`` in a field selector value."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(s: str) -> str:
    if not any(c in s for c in "\\,="):
        return s
    out: list[str] = []
    in_slash = False
    for c in s:
        if in_slash:
            if c in "\\,=":
                out.append(c)
            else:
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            in_slash = False
            continue
        if c == "\\":
            in_slash = True
        elif c in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    if not text:
        return []
    terms: list[str] = []
    start, in_slash = 0, False
    for i, c in enumerate(text):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """``field`` ``=`` / ``!=`` ``value`` (``==`` is read as ``=``)."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        """A missing field reads as the empty string, as on the server."""
        have = fields.get(self.field, "")
        return (have == self.value) if self.operator == "=" else (have != self.value)

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_field_value(self.value)}"


class FieldSelector(Selector[FieldRequirement]):
    """A parsed field selector: a conjunction of :class:`FieldRequirement`."""

    __slots__ = ()

    def __init__(self, requirements: Iterable[FieldRequirement] = ()) -> None:
        self.requirements = tuple(sorted(set(requirements), key=lambda r: (r.field, r.operator, r.value)))

    @classmethod
    def parse(cls, text: str | None) -> FieldSelector:
        """Parse the ``fieldSelector`` query syntax (with ``\\`` escapes); raises SelectorError."""
        if text is None:
            return cls()
        reqs: list[FieldRequirement] = []
        for part in sorted(_split_terms(text)):
            if part == "":
                continue
            split = _split_term(part)
            if split is None:
                raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
            lhs, op, rhs = split
            reqs.append(FieldRequirement(lhs, "=" if op == "==" else op, _unescape_field_value(rhs)))
        return cls(reqs)

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> FieldSelector:
        """The selector requiring every one of these fields to have exactly this value."""
        return cls(FieldRequirement(k, "=", v) for k, v in fields.items())

    from_mapping = from_fields

    @property
    def fields(self) -> frozenset[str]:
        """The field names this selector reads (for a server's supported-field check)."""
        return frozenset(r.field for r in self.requirements)

    def require_fields(self, supported: Iterable[str]) -> None:
        """Raise SelectorError, worded as the server does, if a field is not selectable.

        With only ``metadata.name``/``metadata.namespace`` supported (most kinds) the message
        is the generic one; kinds with their own field labels (such as Pods) use theirs.
        """
        allowed = tuple(supported)
        for r in self.requirements:
            if r.field in allowed:
                continue
            if set(allowed) <= {"metadata.name", "metadata.namespace"}:
                raise SelectorError(
                    f'"{r.field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
                )
            raise SelectorError(f"field label not supported: {r.field}")

    def equals_value(self, field: str) -> str | None:
        """The value this selector pins ``field`` to with ``=``, if any (e.g. metadata.namespace)."""
        for r in self.requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def _implies(self, broader: FieldSelector) -> bool:
        return fields_imply(self.requirements, broader.requirements)
