"""Kubernetes time formats: `metav1.Time` (RFC 3339, whole seconds, `Z`) and `metav1.MicroTime`
(RFC 3339 with exactly six fractional digits, `Z`).

The API server writes and compares these as strings, so a controller that formats them differently
(an offset instead of `Z`, Python's `isoformat()` dropping `.000000`) makes spurious writes or
fails validation. Imports nothing of kubeloop, so any layer may use it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

__all__ = ["TimeFormatError", "format_micro_time", "format_time", "now", "parse_time"]


class TimeFormatError(ValueError):
    """A string is not an RFC 3339 timestamp, or a datetime has no time zone."""


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z"
)


def now() -> datetime:
    """The current time, timezone-aware in UTC (what the formatters expect)."""
    return datetime.now(UTC)


def _utc(dt: datetime) -> datetime:
    if not isinstance(dt, datetime):
        raise TimeFormatError(f"expected a datetime, got {type(dt).__name__}")
    if dt.tzinfo is None or dt.utcoffset() is None:
        # a naive datetime is ambiguous: local time or UTC? Kubernetes times are instants.
        raise TimeFormatError(f"naive datetime {dt.isoformat()!r}: give it a time zone (e.g. tzinfo=UTC)")
    return dt.astimezone(UTC)


def format_time(dt: datetime) -> str:
    """`metav1.Time`: `2006-01-02T15:04:05Z`, in UTC, truncated to whole seconds as the API server does."""
    u = _utc(dt)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def format_micro_time(dt: datetime) -> str:
    """`metav1.MicroTime`: `2006-01-02T15:04:05.000000Z`, always six fractional digits, in UTC."""
    u = _utc(dt)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}.{u.microsecond:06d}Z"


def parse_time(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (`Time` or `MicroTime`, `Z` or a numeric offset) into an aware UTC datetime.

    Fractional seconds beyond microseconds (Go allows nanoseconds) are truncated, not rounded, so a
    parsed time never lies after the instant it names.
    """
    if not isinstance(value, str):
        raise TimeFormatError(f"expected an RFC 3339 string, got {type(value).__name__}")
    m = _RFC3339.match(value)
    if m is None:
        raise TimeFormatError(f"not an RFC 3339 timestamp: {value!r} (expected e.g. '2006-01-02T15:04:05Z')")
    year, month, day, hour, minute, second, frac, _z, sign, oh, om = m.groups()
    micro = int((frac or "").ljust(6, "0")[:6])
    tz = UTC
    if sign is not None:
        if int(oh) > 23 or int(om) > 59:
            raise TimeFormatError(f"not an RFC 3339 timestamp: {value!r} (offset out of range)")
        offset = timedelta(hours=int(oh), minutes=int(om))
        tz = timezone(-offset if sign == "-" else offset)
    try:
        dt = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=tz)
        return dt.astimezone(UTC)
    except (ValueError, OverflowError) as e:
        raise TimeFormatError(f"not a valid RFC 3339 timestamp: {value!r} ({e})") from None
