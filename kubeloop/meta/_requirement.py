"""Label requirements: one ``key operator values`` term, validated as labels.NewRequirement does.

The operators, the int64 parsing and the field.Invalid message format follow
k8s.io/apimachinery so that a requirement rejected here carries the server's exact text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from kubeloop.meta._errors import SelectorError
from kubeloop.meta._validation import is_label_value, is_qualified_name

__all__ = [
    "DOES_NOT_EXIST",
    "EQUALS",
    "EXISTS",
    "GREATER_THAN",
    "IN",
    "LESS_THAN",
    "NOT_EQUALS",
    "NOT_IN",
    "Requirement",
    "invalid",
    "parse_int64",
    "validate_key",
]


def invalid(value: str | list[str], detail: str) -> str:
    """A field.Invalid error as the server prints it (with no field path)."""
    if isinstance(value, str):
        shown = f'"{value}"'
    else:
        shown = "[]string{" + ", ".join(f'"{v}"' for v in value) + "}"
    return f"<nil>: Invalid value: {shown}: {detail}"


def validate_key(key: str) -> None:
    """Raise the server's error for a label key that is not a qualified name."""
    errs = is_qualified_name(key)
    if errs:
        raise SelectorError(invalid(key, "; ".join(errs)))


_INT64_RE: Final = re.compile(r"[+-]?[0-9]+")


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64), or None where it fails."""
    if not _INT64_RE.fullmatch(text):
        return None
    n = int(text)
    if -(2**63) <= n < 2**63:
        return n
    return None


IN: Final = "in"
NOT_IN: Final = "notin"
EQUALS: Final = "="
NOT_EQUALS: Final = "!="
EXISTS: Final = "exists"
DOES_NOT_EXIST: Final = "!"
GREATER_THAN: Final = "gt"
LESS_THAN: Final = "lt"
_OPERATORS: Final = frozenset({IN, NOT_IN, EQUALS, NOT_EQUALS, EXISTS, DOES_NOT_EXIST, GREATER_THAN, LESS_THAN})


@dataclass(frozen=True, slots=True)
class Requirement:
    """One label requirement: ``key``, an operator and a sorted tuple of values.

    Operators: ``"="`` (also written ``==``), ``"!="``, ``"in"``, ``"notin"``, ``"exists"``,
    ``"!"`` (does not exist), ``"gt"``, ``"lt"`` (the server's ``>`` / ``<``).
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this requirement (kube-apiserver semantics)."""
        op = self.operator
        if op == EQUALS or op == IN:
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == NOT_EQUALS or op == NOT_IN:
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        v = labels.get(self.key)
        if v is None or len(self.values) != 1:
            return False
        have, want = parse_int64(v), parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op == GREATER_THAN else have < want

    def __str__(self) -> str:
        op, key = self.operator, self.key
        if op == EXISTS:
            return key
        if op == DOES_NOT_EXIST:
            return "!" + key
        if op in (IN, NOT_IN):
            return f"{key} {op} ({','.join(self.values)})"
        sym = {EQUALS: "=", NOT_EQUALS: "!=", GREATER_THAN: ">", LESS_THAN: "<"}[op]
        return f"{key}{sym}{self.values[0] if self.values else ''}"

    @classmethod
    def new(cls, key: str, operator: str, values: Iterable[str] = ()) -> Requirement:
        """Build a validated requirement (labels.NewRequirement's checks and messages)."""
        raw = list(values)
        bad = [v for v in raw if not isinstance(v, str)]
        if bad or not isinstance(key, str):
            what = key if not isinstance(key, str) else bad[0]
            raise SelectorError(f"<nil>: Invalid value: {what!r}: label keys and values must be strings")
        vals = sorted(set(raw))
        errs: list[str] = []
        kerrs = is_qualified_name(key)
        if kerrs:
            errs.append(invalid(key, "; ".join(kerrs)))
        if operator == "==":
            operator = EQUALS
        if operator in (IN, NOT_IN):
            if not raw:
                errs.append(invalid(raw, "for 'in', 'notin' operators, values set can't be empty"))
        elif operator in (EQUALS, NOT_EQUALS):
            if len(raw) != 1:
                errs.append(invalid(raw, "exact-match compatibility requires one single value"))
        elif operator in (EXISTS, DOES_NOT_EXIST):
            if raw:
                errs.append(invalid(raw, "values set must be empty for exists and does not exist"))
        elif operator in (GREATER_THAN, LESS_THAN):
            if len(raw) != 1:
                errs.append(invalid(raw, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for v in raw:
                if parse_int64(v) is None:
                    errs.append(invalid(v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        else:
            errs.append(
                f'<nil>: Unsupported value: "{operator}": supported values: '
                '"in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"'
            )
        for v in vals:
            verrs = is_label_value(v)
            if verrs:
                errs.append(invalid(v, "; ".join(verrs)))
        if errs:
            raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
        return cls(key, operator, tuple(vals))


# --------------------------------------------------------------------------------------------
# Label selector lexer and parser (a faithful port of the server's state machine)
