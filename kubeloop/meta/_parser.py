"""The label selector lexer and parser: a faithful port of the server's state machine.

Kept apart from :mod:`._labels` because it is the one part that must track Go's
``labels.Parse`` token by token (its error texts are asserted against a real server).
"""

from __future__ import annotations

from typing import Final

from kubeloop.meta import _requirement as req
from kubeloop.meta._errors import SelectorError
from kubeloop.meta._requirement import Requirement

__all__ = ["parse_requirements"]

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
            op = req.DOES_NOT_EXIST
            tok, lit = self._take(True)
        if tok != _T_ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        req.validate_key(lit)
        key = lit
        if self._peek(True)[0] in (_T_EOS, _T_COMMA) and op is None:
            op = req.EXISTS
        if op is not None:
            return Requirement.new(key, op, ())
        tok, lit = self._take(False)
        ops = {_T_IN: req.IN, _T_EQ: req.EQUALS, _T_DEQ: req.EQUALS, _T_GT: req.GREATER_THAN, _T_LT: req.LESS_THAN,
               _T_NOTIN: req.NOT_IN, _T_NEQ: req.NOT_EQUALS}
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        op = ops[tok]
        values = self._values() if op in (req.IN, req.NOT_IN) else self._exact_value()
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


def parse_requirements(text: str) -> list[Requirement]:
    """Parse the ``labelSelector`` query syntax; raises :class:`SelectorError` with the server's text."""
    return _Parser(text).parse()
