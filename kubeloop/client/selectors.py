"""Label and field selectors: parsing, matching, canonical text and subset checks.

The grammar, validation rules and error messages follow kube-apiserver
(k8s.io/apimachinery labels.Parse and fields.ParseSelector) so that the
emulator can answer a bad selector the way a real server does, and so that a
selector evaluated locally (in the cache) selects exactly what the server would.

``implies`` / ``is_subset_of`` answer "does everything this selector matches
also match that one?" conservatively: ``True`` is a proof, ``False`` may just
mean "could not prove it". The shared cache relies on this to serve a narrower
scope from a broader informer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubeloop.client.validation import is_label_value, is_qualified_name

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "escape_field_value",
]


class SelectorError(ValueError):
    """A selector that cannot be parsed or is invalid (the server answers 400 BadRequest)."""


# --------------------------------------------------------------------------------------------
# Validation of label keys and values (the rules are in `kubeloop.client.validation`)
# --------------------------------------------------------------------------------------------


def _invalid(value: str | list[str], detail: str) -> str:
    """A field.Invalid error as the server prints it (with no field path)."""
    if isinstance(value, str):
        shown = f'"{value}"'
    else:
        shown = "[]string{" + ", ".join(f'"{v}"' for v in value) + "}"
    return f"<nil>: Invalid value: {shown}: {detail}"


def _validate_key(key: str) -> None:
    errs = is_qualified_name(key)
    if errs:
        raise SelectorError(_invalid(key, "; ".join(errs)))


_INT64_RE: Final = re.compile(r"[+-]?[0-9]+")


def _parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64), or None where it fails."""
    if not _INT64_RE.fullmatch(text):
        return None
    n = int(text)
    if -(2**63) <= n < 2**63:
        return n
    return None


# --------------------------------------------------------------------------------------------
# Label requirements
# --------------------------------------------------------------------------------------------

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
        have, want = _parse_int64(v), _parse_int64(self.values[0])
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
            errs.append(_invalid(key, "; ".join(kerrs)))
        if operator == "==":
            operator = EQUALS
        if operator in (IN, NOT_IN):
            if not raw:
                errs.append(_invalid(raw, "for 'in', 'notin' operators, values set can't be empty"))
        elif operator in (EQUALS, NOT_EQUALS):
            if len(raw) != 1:
                errs.append(_invalid(raw, "exact-match compatibility requires one single value"))
        elif operator in (EXISTS, DOES_NOT_EXIST):
            if raw:
                errs.append(_invalid(raw, "values set must be empty for exists and does not exist"))
        elif operator in (GREATER_THAN, LESS_THAN):
            if len(raw) != 1:
                errs.append(_invalid(raw, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for v in raw:
                if _parse_int64(v) is None:
                    errs.append(_invalid(v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        else:
            errs.append(
                f'<nil>: Unsupported value: "{operator}": supported values: '
                '"in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"'
            )
        for v in vals:
            verrs = is_label_value(v)
            if verrs:
                errs.append(_invalid(v, "; ".join(verrs)))
        if errs:
            raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
        return cls(key, operator, tuple(vals))


# --------------------------------------------------------------------------------------------
# Label selector lexer and parser (a faithful port of the server's state machine)
# --------------------------------------------------------------------------------------------

_T_ERROR, _T_EOS, _T_CPAR, _T_COMMA, _T_NOTEXIST, _T_DEQ, _T_EQ = range(7)
_T_GT, _T_ID, _T_IN, _T_LT, _T_NEQ, _T_NOTIN, _T_OPAR = range(7, 14)
_STR2TOK: Final = {
    ")": _T_CPAR, ",": _T_COMMA, "!": _T_NOTEXIST, "==": _T_DEQ, "=": _T_EQ, ">": _T_GT,
    "in": _T_IN, "<": _T_LT, "!=": _T_NEQ, "notin": _T_NOTIN, "(": _T_OPAR,
}
_SPECIAL: Final = frozenset("=!(),><")
_WHITESPACE: Final = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[int, str]]:
    """Tokenize like the server's lexer (longest special-symbol match, keywords in/notin)."""
    out: list[tuple[int, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n or text[pos] == "\0":
            out.append((_T_EOS, ""))
            return out
        ch = text[pos]
        if ch in _SPECIAL:
            buf = ""
            last: tuple[int, str] | None = None
            while pos < n and text[pos] in _SPECIAL:
                buf += text[pos]
                tok = _STR2TOK.get(buf)
                if tok is not None:
                    last = (tok, buf)
                    pos += 1
                elif last is not None:
                    break
                else:
                    pos += 1
            if last is None:
                out.append((_T_ERROR, f"error expected: keyword found '{buf}'"))
                return out
            out.append(last)
        else:
            start = pos
            while pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
                if text[pos] == "\0":
                    break
                pos += 1
            lit = text[start:pos]
            if pos < n and text[pos] == "\0":
                pos += 1  # the server's reader consumes the NUL that ends an identifier
            tok = _STR2TOK.get(lit)
            out.append((tok if tok in (_T_IN, _T_NOTIN) else _T_ID, lit))


class _Parser:
    __slots__ = ("pos", "toks")

    def __init__(self, text: str) -> None:
        self.toks = _lex(text)
        self.pos = 0

    def _peek(self, values: bool) -> tuple[int, str]:
        tok, lit = self.toks[min(self.pos, len(self.toks) - 1)]
        if values and tok in (_T_IN, _T_NOTIN):
            tok = _T_ID
        return tok, lit

    def _take(self, values: bool) -> tuple[int, str]:
        item = self._peek(values)
        if self.pos < len(self.toks) - 1:
            self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self._peek(True)
            if tok in (_T_ID, _T_NOTEXIST):
                try:
                    reqs.append(self._requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                t, lit2 = self._take(True)
                if t == _T_EOS:
                    return reqs
                if t == _T_COMMA:
                    t2, l2 = self._peek(True)
                    if t2 not in (_T_ID, _T_NOTEXIST):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _T_EOS:
                return reqs
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> Requirement:
        op: str | None = None
        tok, lit = self._take(True)
        if tok == _T_NOTEXIST:
            op = DOES_NOT_EXIST
            tok, lit = self._take(True)
        if tok != _T_ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        _validate_key(lit)
        key = lit
        if self._peek(True)[0] in (_T_EOS, _T_COMMA) and op is None:
            op = EXISTS
        if op is not None:
            return Requirement.new(key, op, ())
        tok, lit = self._take(False)
        ops = {_T_IN: IN, _T_EQ: EQUALS, _T_DEQ: EQUALS, _T_GT: GREATER_THAN, _T_LT: LESS_THAN,
               _T_NOTIN: NOT_IN, _T_NEQ: NOT_EQUALS}
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        op = ops[tok]
        values = self._values() if op in (IN, NOT_IN) else self._exact_value()
        return Requirement.new(key, op, values)

    def _values(self) -> list[str]:
        tok, lit = self._take(True)
        if tok != _T_OPAR:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._peek(True)
        if tok in (_T_ID, _T_COMMA):
            vals = self._identifiers()
            if self._take(True)[0] != _T_CPAR:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return vals
        if tok == _T_CPAR:
            self._take(True)
            return [""]
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifiers(self) -> list[str]:
        vals: set[str] = set()
        while True:
            tok, lit = self._take(True)
            if tok == _T_ID:
                vals.add(lit)
                t2, l2 = self._peek(True)
                if t2 == _T_COMMA:
                    continue
                if t2 == _T_CPAR:
                    return sorted(vals)
                raise SelectorError(f"found '{l2}', expected: ',' or ')'")
            if tok == _T_COMMA:
                if not vals:
                    vals.add("")
                t2, _ = self._peek(True)
                if t2 == _T_CPAR:
                    vals.add("")
                    return sorted(vals)
                if t2 == _T_COMMA:
                    self._take(True)
                    vals.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> list[str]:
        tok, _ = self._peek(True)
        if tok in (_T_EOS, _T_COMMA):
            return [""]
        tok, lit = self._take(True)
        if tok == _T_ID:
            return [lit]
        raise SelectorError(f"found '{lit}', expected: identifier")


# --------------------------------------------------------------------------------------------
# Per-key value sets, for the conservative subset check
# --------------------------------------------------------------------------------------------


class _KeyDomain:
    """The label states one key may take under a conjunction of requirements.

    A state is "absent" or a present string value. Present values are either a finite set
    (``finite``) or "every string except ``excluded`` that passes the numeric bounds".
    """

    __slots__ = ("absent", "excluded", "finite", "hi", "lo", "reqs")

    def __init__(self, reqs: list[Requirement]) -> None:
        self.reqs = reqs
        self.absent = all(r.operator in (NOT_EQUALS, NOT_IN, DOES_NOT_EXIST) for r in reqs)
        self.finite: set[str] | None = None
        self.excluded: set[str] = set()
        self.lo: int | None = None  # exclusive lower bound (from gt)
        self.hi: int | None = None  # exclusive upper bound (from lt)
        present_possible = True
        for r in reqs:
            if r.operator in (EQUALS, IN):
                s = set(r.values)
                self.finite = s if self.finite is None else self.finite & s
            elif r.operator in (NOT_EQUALS, NOT_IN):
                self.excluded |= set(r.values)
            elif r.operator == DOES_NOT_EXIST:
                present_possible = False
            elif r.operator == GREATER_THAN:
                n = _parse_int64(r.values[0]) if r.values else None
                if n is None:
                    present_possible = False
                else:
                    self.lo = n if self.lo is None else max(self.lo, n)
            elif r.operator == LESS_THAN:
                n = _parse_int64(r.values[0]) if r.values else None
                if n is None:
                    present_possible = False
                else:
                    self.hi = n if self.hi is None else min(self.hi, n)
        if not present_possible:
            self.finite = set()
        elif self.finite is not None:
            # exact: keep only the finite values that satisfy every requirement on the key
            self.finite = {v for v in self.finite if all(r.matches({r.key: v}) for r in reqs)}

    def empty(self) -> bool:
        return not self.absent and self.finite is not None and not self.finite

    def within(self, r: Requirement) -> bool:
        """True only if every state allowed here satisfies ``r`` (conservative)."""
        if self.absent and not r.matches({}):
            return False
        if self.finite is not None:
            return all(r.matches({r.key: v}) for v in self.finite)
        numeric = self.lo is not None or self.hi is not None
        op = r.operator
        if op == EXISTS:
            return True  # present values exist; absent handled above
        if op == DOES_NOT_EXIST:
            return False
        if op in (NOT_EQUALS, NOT_IN):
            return all(
                v in self.excluded or (numeric and not self._numeric_ok(v)) for v in r.values
            )
        if op == GREATER_THAN and self.lo is not None and r.values:
            n = _parse_int64(r.values[0])
            return n is not None and self.lo >= n
        if op == LESS_THAN and self.hi is not None and r.values:
            n = _parse_int64(r.values[0])
            return n is not None and self.hi <= n
        return False

    def _numeric_ok(self, v: str) -> bool:
        n = _parse_int64(v)
        if n is None:
            return False
        return (self.lo is None or n > self.lo) and (self.hi is None or n < self.hi)


# --------------------------------------------------------------------------------------------
# LabelSelector
# --------------------------------------------------------------------------------------------


class LabelSelector:
    """A parsed label selector: a conjunction of :class:`Requirement` sorted by key.

    The empty selector matches everything. Equality is by canonical requirements, so
    ``LabelSelector.parse(str(sel)) == sel``.
    """

    __slots__ = ("_by_key", "_text", "requirements")

    requirements: tuple[Requirement, ...]

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
        return cls(_Parser(text).parse())

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

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether an object with these labels is selected."""
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    @property
    def empty(self) -> bool:
        """True for the selector that matches everything."""
        return not self.requirements

    def _keys(self) -> dict[str, list[Requirement]]:
        if self._by_key is None:
            by: dict[str, list[Requirement]] = {}
            for r in self.requirements:
                by.setdefault(r.key, []).append(r)
            self._by_key = by
        return self._by_key

    def implies(self, broader: LabelSelector | str) -> bool:
        """True only if every label set this selector matches is matched by ``broader``.

        Conservative: ``False`` may mean "not provable". Never a false ``True``.
        """
        if isinstance(broader, str):
            broader = LabelSelector.parse(broader)
        mine = self._keys()
        domains = {k: _KeyDomain(rs) for k, rs in mine.items()}
        if any(d.empty() for d in domains.values()):
            return True  # matches nothing at all
        for r in broader.requirements:
            d = domains.get(r.key)
            if d is None:
                # the key is unconstrained here: absent and any value are possible
                return False
            if not d.within(r):
                return False
        return True

    is_subset_of = implies

    def __str__(self) -> str:
        if self._text is None:
            self._text = ",".join(str(r) for r in self.requirements)
        return self._text

    def __repr__(self) -> str:
        return f"LabelSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


# --------------------------------------------------------------------------------------------
# Field selectors
# --------------------------------------------------------------------------------------------


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


class FieldSelector:
    """A parsed field selector: a conjunction of :class:`FieldRequirement`."""

    __slots__ = ("requirements",)

    requirements: tuple[FieldRequirement, ...]

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

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object whose selectable fields are ``fields`` is selected."""
        for r in self.requirements:
            if not r.matches(fields):
                return False
        return True

    @property
    def empty(self) -> bool:
        """True for the selector that matches everything."""
        return not self.requirements

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

    def implies(self, broader: FieldSelector | str) -> bool:
        """True only if every object this selector matches is matched by ``broader``."""
        if isinstance(broader, str):
            broader = FieldSelector.parse(broader)
        pinned: dict[str, set[str]] = {}
        excluded: dict[str, set[str]] = {}
        for r in self.requirements:
            (pinned if r.operator == "=" else excluded).setdefault(r.field, set()).add(r.value)
        for f, vals in pinned.items():
            if len(vals) > 1 or vals & excluded.get(f, set()):
                return True  # contradictory: matches nothing
        for r in broader.requirements:
            p = pinned.get(r.field)
            if r.operator == "=":
                if p is None or r.value not in p:
                    return False
            elif p is not None:
                if r.value in p:
                    return False
            elif r.value not in excluded.get(r.field, set()):
                return False
        return True

    is_subset_of = implies

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)
