"""The syntax errors of Go's `encoding/json` (its scanner's state machine), which kube-apiserver's
messages quote: `invalid character 'o' in literal null (expecting 'u')`, `unexpected end of JSON
input`. Only the first error counts, as in Go."""

from __future__ import annotations

from collections.abc import Callable

_SPACE = b" \t\r\n"
_DIGITS = b"0123456789"
_OBJECT_KEY, _OBJECT_VALUE, _ARRAY_VALUE = range(3)


class GoJSONSyntaxError(ValueError):
    """The message Go's `json.SyntaxError` carries."""


def _quote_char(c: int) -> str:
    """`quoteChar`."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    ch = chr(c)
    if ch == "\\":
        return "'\\\\'"
    if ch.isprintable() and c < 0x80:
        return f"'{ch}'"
    return "'" + {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}.get(c, f"\\x{c:02x}" if c < 0x20 or c >= 0x80 else ch) + "'"


State = Callable[[int], None]


class _Scanner:
    """Go's `scanner`, byte by byte."""

    def __init__(self) -> None:
        self.stack: list[int] = []
        self.step: State = self.begin_value
        self.done = False

    def error(self, c: int, context: str) -> None:
        raise GoJSONSyntaxError(f"invalid character {_quote_char(c)} {context}")

    # -- values ----------------------------------------------------------------------------------
    def begin_value(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("{"):
            self.stack.append(_OBJECT_KEY)
            self.step = self.begin_string_or_empty
        elif c == ord("["):
            self.stack.append(_ARRAY_VALUE)
            self.step = self.begin_value_or_empty
        elif c == ord('"'):
            self.step = self.in_string
        elif c == ord("-"):
            self.step = self.neg
        elif c == ord("0"):
            self.step = self.zero
        elif ord("1") <= c <= ord("9"):
            self.step = self.one
        elif c in b"tfn":
            word = {ord("t"): "true", ord("f"): "false", ord("n"): "null"}[c]
            self.step = self.literal(word, 1)
        else:
            self.error(c, "looking for beginning of value")

    def begin_value_or_empty(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("]"):
            self.end_value(c)
            return
        self.begin_value(c)

    def begin_string_or_empty(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("}"):
            self.stack[-1] = _OBJECT_VALUE
            self.end_value(c)
            return
        self.begin_string(c)

    def begin_string(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord('"'):
            self.step = self.in_string
            return
        self.error(c, "looking for beginning of object key string")

    def end_value(self, c: int) -> None:
        if not self.stack:
            self.step = self.end_top
            self.done = True
            self.end_top(c)
            return
        if c in _SPACE:
            self.step = self.end_value
            return
        top = self.stack[-1]
        if top == _OBJECT_KEY:
            if c == ord(":"):
                self.stack[-1] = _OBJECT_VALUE
                self.step = self.begin_value
                return
            self.error(c, "after object key")
        elif top == _OBJECT_VALUE:
            if c == ord(","):
                self.stack[-1] = _OBJECT_KEY
                self.step = self.begin_string
                return
            if c == ord("}"):
                self.stack.pop()
                self._value_ended()
                return
            self.error(c, "after object key:value pair")
        else:
            if c == ord(","):
                self.step = self.begin_value
                return
            if c == ord("]"):
                self.stack.pop()
                self._value_ended()
                return
            self.error(c, "after array element")

    def _value_ended(self) -> None:
        """A value is complete: the next byte ends its container, or the input."""
        self.step = self.end_value
        if not self.stack:
            self.done = True
            self.step = self.end_top

    def end_top(self, c: int) -> None:
        if c not in _SPACE:
            self.error(c, "after top-level value")

    # -- strings ---------------------------------------------------------------------------------
    def in_string(self, c: int) -> None:
        if c == ord('"'):
            self._value_ended()
        elif c == ord("\\"):
            self.step = self.in_string_escape
        elif c < 0x20:
            self.error(c, "in string literal")

    def in_string_escape(self, c: int) -> None:
        if c in b'bfnrt\\/"':
            self.step = self.in_string
        elif c == ord("u"):
            self.step = self.in_unicode(0)
        else:
            self.error(c, "in string escape code")

    def in_unicode(self, n: int) -> State:
        def step(c: int) -> None:
            if c in b"0123456789abcdefABCDEF":
                self.step = self.in_string if n == 3 else self.in_unicode(n + 1)
            else:
                self.error(c, "in \\u hexadecimal character escape")
        return step

    # -- numbers and literals ----------------------------------------------------------------------
    def _number_end(self, c: int) -> None:
        self._value_ended()
        self.step(c)

    def neg(self, c: int) -> None:
        if c == ord("0"):
            self.step = self.zero
        elif ord("1") <= c <= ord("9"):
            self.step = self.one
        else:
            self.error(c, "in numeric literal")

    def one(self, c: int) -> None:
        if c in _DIGITS:
            return
        self.zero(c)

    def zero(self, c: int) -> None:
        if c == ord("."):
            self.step = self.dot
        elif c in b"eE":
            self.step = self.exp
        else:
            self._number_end(c)

    def dot(self, c: int) -> None:
        if c in _DIGITS:
            self.step = self.dot0
        else:
            self.error(c, "after decimal point in numeric literal")

    def dot0(self, c: int) -> None:
        if c in _DIGITS:
            return
        if c in b"eE":
            self.step = self.exp
        else:
            self._number_end(c)

    def exp(self, c: int) -> None:
        if c in b"+-":
            self.step = self.exp_sign
            return
        self.exp_sign(c)

    def exp_sign(self, c: int) -> None:
        if c in _DIGITS:
            self.step = self.exp0
        else:
            self.error(c, "in exponent of numeric literal")

    def exp0(self, c: int) -> None:
        if c not in _DIGITS:
            self._number_end(c)

    def literal(self, word: str, i: int) -> State:
        def step(c: int) -> None:
            if c != ord(word[i]):
                self.error(c, f"in literal {word} (expecting {_quote_char(ord(word[i]))})")
            if i + 1 == len(word):
                self._value_ended()
            else:
                self.step = self.literal(word, i + 1)
        return step


def syntax_error(data: bytes) -> str | None:
    """The error `json.Unmarshal` reports for `data` (None: valid JSON)."""
    scanner = _Scanner()
    try:
        for c in data:
            scanner.step(c)
        if not scanner.done:
            scanner.step(ord(" "))  # Go's `eof`: a space ends a number, or is the error
    except GoJSONSyntaxError as e:
        return str(e)
    return None if scanner.done else "unexpected end of JSON input"
