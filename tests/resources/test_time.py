"""Kubernetes time formats: Time (whole seconds, Z) and MicroTime (six fractional digits, Z)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.resources import TimeFormatError, format_micro_time, format_time, now, parse_time

aware = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                     timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)),
                                                timezone(timedelta(hours=-8))]))


@given(aware)
def test_time_round_trip_truncates_to_seconds(dt: datetime) -> None:
    text = format_time(dt)
    assert len(text) == 20 and text.endswith("Z")
    assert parse_time(text) == dt.replace(microsecond=0)
    assert format_time(parse_time(text)) == text


@given(aware)
def test_micro_time_round_trip_is_exact(dt: datetime) -> None:
    text = format_micro_time(dt)
    assert len(text) == 27 and text[19] == "." and text.endswith("Z")
    assert parse_time(text) == dt
    assert format_micro_time(parse_time(text)) == text


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1)),
       st.integers(min_value=0, max_value=999), st.sampled_from(["Z", "+00:00", "-07:00", "+14:00"]))
def test_parse_accepts_what_go_writes(naive: datetime, nanos: int, zone: str) -> None:
    frac = f".{naive.microsecond:06d}{nanos:03d}"
    text = naive.strftime("%Y-%m-%dT%H:%M:%S") + frac + zone
    parsed = parse_time(text)
    offset = timedelta() if zone == "Z" else timedelta(hours=int(zone[1:3]), minutes=int(zone[4:])) * (
        -1 if zone[0] == "-" else 1)
    assert parsed == naive.replace(tzinfo=timezone(offset))  # nanoseconds truncated, never rounded up
    assert parsed.tzinfo == UTC


def test_formats() -> None:
    dt = datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=UTC)
    assert format_time(dt) == "2026-03-04T05:06:07Z"
    assert format_micro_time(dt) == "2026-03-04T05:06:07.000890Z"
    assert format_time(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01T00:00:00Z"
    assert format_time(datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=2)))) == "2025-12-31T23:00:00Z"
    assert parse_time("2026-03-04t05:06:07z") == datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert now().tzinfo == UTC


@pytest.mark.parametrize("bad", ["", "2026-03-04", "2026-03-04 05:06:07Z", "2026-03-04T05:06:07",
                                 "2026-13-04T05:06:07Z", "2026-02-30T05:06:07Z", "2026-03-04T05:06:07.Z",
                                 "2026-03-04T05:06:07+25:00", "2026-03-04T05:06:07.1234567890Z"])
def test_parse_rejects_non_rfc3339(bad: str) -> None:
    with pytest.raises(TimeFormatError, match="RFC 3339"):
        parse_time(bad)


def test_naive_datetimes_and_wrong_types_are_rejected() -> None:
    with pytest.raises(TimeFormatError, match="naive datetime"):
        format_time(datetime(2026, 1, 1))
    with pytest.raises(TimeFormatError, match="expected a datetime"):
        format_micro_time("2026-01-01T00:00:00Z")  # type: ignore[arg-type]
    with pytest.raises(TimeFormatError, match="expected an RFC 3339 string"):
        parse_time(1700000000)  # type: ignore[arg-type]
