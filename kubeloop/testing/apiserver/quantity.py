"""`resource.Quantity` as kube-apiserver 1.24 decodes and writes it (`1.5` -> `1500m`, `1024Mi` ->
`1Gi`, `0.5Gi` -> `512Mi`), following apimachinery's `ParseQuantity` and `CanonicalizeBytes`.

A quantity is parsed to an exact value (a fraction) and a format: `DecimalSI` (`m`, `k`, `M`, ...),
`BinarySI` (`Ki`, `Mi`, ...) or `DecimalExponent` (`e3`). A string already in canonical form is
kept exactly as written (the parser's fast path); otherwise the value is written in its format's
canonical form: no fractional digits, the largest suffix that keeps the number whole. Values finer
than a nano-unit are rounded up (away from zero), as the real parser does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_SUFFIX = {v: k for k, v in _DEC.items()}
_BIN_SUFFIX = {0: "", **{v: k for k, v in _BIN.items()}}
_MAX_INT64 = 2**63 - 1
_SCAN = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)\Z")


class QuantityError(ValueError):
    """Not a quantity (the decoder's error text)."""


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    format: str  # DecimalSI | BinarySI | DecimalExponent
    text: str = ""  # the input, when it was already canonical

    def __str__(self) -> str:
        return self.text or canonical(self.value, self.format)

    @property
    def milli_value(self) -> int:
        """`MilliValue()`: the value in thousandths, rounded up."""
        m = self.value * 1000
        return -((-m.numerator) // m.denominator)


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix (`quantitySuffixer.interpret`)."""
    if suffix in _DEC:
        return 10, _DEC[suffix], "DecimalSI"
    if suffix in _BIN:
        return 2, _BIN[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            return 10, int(suffix[1:]), "DecimalExponent"
        except ValueError:
            pass
    raise QuantityError("unable to parse quantity's suffix")


def parse(text: str) -> Quantity:
    """`resource.ParseQuantity`."""
    if not text:
        raise QuantityError(FORMAT_ERROR)
    if text == "0":
        return Quantity(Fraction(0), "DecimalSI", "0")
    m = _SCAN.match(text)
    if m is None:
        raise QuantityError(FORMAT_ERROR)
    sign, _zeros, num, denom, suffix = m.groups()
    denom = denom or ""
    num = num or "0"
    base, exponent, fmt = _interpret(suffix)
    positive = sign != "-"
    digits = num + denom
    value = Fraction(int(digits or "0"), 10 ** len(denom))
    value *= Fraction(10) ** exponent if base == 10 else 2**exponent
    if not positive:
        value = -value
    # the fast path keeps a string that is already canonical (int64 arithmetic, scale >= nano)
    if fmt == "BinarySI":
        fast = exponent >= 0 and not denom and 15 - len(num) - int(exponent * 3 / 10) - 1 >= 0
        if fast and exponent % 10 == 0 and int(digits) & 7 != 0:
            return Quantity(value, fmt, text)
    else:
        scale = exponent - len(denom)
        fast = 18 - len(num) - len(denom) >= 0 and scale >= -9
        if fast and scale % 3 == 0 and not digits.endswith("000") and digits[:1] != "0":
            return Quantity(value, fmt, text)
    # the slow path: round away from zero to nano units, cap binary values, small binary ones are decimal
    scaled = abs(value) * 10**9
    if scaled.denominator != 1:
        scaled = Fraction(-((-scaled.numerator) // scaled.denominator))
        value = (scaled / 10**9) * (1 if value >= 0 else -1)
    if fmt == "BinarySI" and abs(value) > _MAX_INT64:
        value = Fraction(_MAX_INT64) * (1 if value >= 0 else -1)
    if fmt == "BinarySI" and 0 < abs(value) < 1:
        fmt = "DecimalSI"
    return Quantity(value, fmt)


def canonical(value: Fraction, fmt: str) -> str:
    """`CanonicalizeBytes`: the canonical text of a value in a format."""
    if value == 0:
        return "0"
    if fmt == "BinarySI":
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = "DecimalSI"
    if fmt == "BinarySI":
        amount, exp = int(value), 0
        while amount % 1024 == 0 and exp < 60:
            amount //= 1024
            exp += 10
        return f"{amount}{_BIN_SUFFIX[exp]}"
    # base 10: an integer mantissa, factors of ten moved into the exponent, the exponent a multiple of 3
    exp = 0
    v = value
    while v.denominator != 1:
        v *= 10
        exp -= 1
    mantissa = int(v)
    while mantissa % 10 == 0:
        mantissa //= 10
        exp += 1
    while exp % 3 != 0:
        mantissa *= 10
        exp -= 1
    if fmt == "DecimalExponent":
        return f"{mantissa}" + (f"e{exp}" if exp else "")
    # an exponent beyond the SI suffixes has no suffix at all (the real formatter finds none)
    return f"{mantissa}{_DEC_SUFFIX.get(exp, '')}"


def normalize(value: object) -> str:
    """A decoded JSON quantity (a string or a number) as the server writes it back; raises
    `QuantityError` for what the decoder refuses."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise QuantityError(FORMAT_ERROR)
    text = value.strip() if isinstance(value, str) else _number_text(value)
    return str(parse(text))


def _number_text(n: int | float) -> str:
    """The JSON text of a number the client sent (Go parses the raw bytes; Python kept the value)."""
    if isinstance(n, int):
        return str(n)
    if n.is_integer() and abs(n) < 1e16:
        return str(int(n))
    return repr(n)
