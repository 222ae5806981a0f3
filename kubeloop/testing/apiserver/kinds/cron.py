"""CronJob schedules as kube-apiserver 1.24 checks them: `cron.ParseStandard` of robfig/cron v3
(five fields or a descriptor, an optional `TZ=`/`CRON_TZ=` prefix), with its error texts, which
the 422 quotes."""

from __future__ import annotations

import re
import zoneinfo

#: (minimum, maximum, names) of each field
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, {name: i + 1 for i, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}),
    (0, 6, {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}),
)
_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9,
                   "h": 3600 * 10**9}
_GO_QUOTE = str.maketrans({'"': '\\"', "\\": "\\\\"})


class CronError(ValueError):
    """The parser's error text."""


def time_zone_error(name: str) -> str | None:
    """`time.LoadLocation`'s error for a zone name, None when the zone exists."""
    if name in ("", "UTC", "Local"):
        return None
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {name}"
    return None


def parse_standard(spec: str) -> None:
    """Raise `CronError` when robfig/cron's `ParseStandard` would refuse `spec`."""
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space, eq = spec.find(" "), spec.find("=")
        zone = spec[eq + 1:space] if space >= 0 else spec[eq + 1:]
        problem = time_zone_error(zone)
        if problem:
            raise CronError(f"provided bad location {zone}: {problem}")
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        _descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, bounds in zip(fields, _BOUNDS, strict=True):
        for expr in (part for part in text.split(",") if part):
            _range(expr, bounds)


def _descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith("@every "):
        try:
            _parse_duration(spec[len("@every "):])
        except CronError as e:
            raise CronError(f"failed to parse duration {spec}: {e}") from None
        return
    raise CronError(f"unrecognized descriptor: {spec}")


def _range(expr: str, bounds: tuple[int, int, dict[str, int]]) -> None:
    low, high, names = bounds
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:
            end = high
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < low:
        raise CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")


def _int_or_name(expr: str, names: dict[str, int]) -> int:
    if expr.lower() in names:
        return names[expr.lower()]
    return _int(expr)


def _int(expr: str) -> int:
    """`mustParseInt`: `strconv.Atoi`, then no negatives."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr.translate(_GO_QUOTE)}": '
                        "invalid syntax")
    num = int(expr)
    if not -(2**63) <= num < 2**63:
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr.translate(_GO_QUOTE)}": '
                        "value out of range")
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _parse_duration(text: str) -> int:
    """`time.ParseDuration` (its errors), in nanoseconds."""
    quoted = '"' + text.translate(_GO_QUOTE) + '"'
    s = text
    sign = 1
    if s[:1] in ("-", "+"):
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise CronError(f"time: invalid duration {quoted}")
    total = 0
    while s:
        m = re.match(r"([0-9]*)(\.[0-9]*)?", s)
        assert m is not None
        whole, frac = m.group(1), m.group(2) or ""
        if not whole and len(frac) <= 1:
            raise CronError(f"time: invalid duration {quoted}")
        s = s[m.end():]
        u = re.match(r"[^0-9.]*", s)
        assert u is not None
        unit = u.group(0)
        if not unit:
            raise CronError(f"time: missing unit in duration {quoted}")
        if unit not in _DURATION_UNITS:
            shown = '"' + unit.translate(_GO_QUOTE) + '"'
            raise CronError(f"time: unknown unit {shown} in duration {quoted}")
        s = s[u.end():]
        scale = _DURATION_UNITS[unit]
        total += int(whole or 0) * scale + (int(float("0" + frac) * scale) if frac else 0)
    return sign * total
