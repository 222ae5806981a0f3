"""A 5-field cron schedule (`minute hour day-of-month month day-of-week`), as Kubernetes' CronJob reads it.

Why not a library: croniter, the usual choice, was retired by its maintainer in 2024, and a CronJob
needs only "the next run after t"; this is that, in about 60 lines. It follows robfig/cron's
standard parser, which kube-controller-manager uses: ``*`` (or ``?``), numbers, ``a-b`` ranges,
``/step``, ``,`` lists, month and weekday names (``jan``, ``mon``), the ``@hourly``/``@daily``/
``@weekly``/``@monthly``/``@yearly`` macros, and the day rule: when both day fields are restricted
a day matching either runs (``0 0 1 * mon``: the 1st and every Monday). Times are UTC.
"""

from __future__ import annotations

from datetime import datetime, timedelta

_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
_NAMES = ({}, {}, {},
          {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)},
          {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())})
_MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
           "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


class ScheduleError(ValueError):
    """A schedule that is not a valid 5-field cron line."""


def _field(text: str, i: int) -> frozenset[int]:
    lo, hi = _RANGES[i]

    def number(s: str) -> int:
        value = _NAMES[i].get(s.lower()) if not s.isdigit() else int(s)
        if value is None or not lo <= value <= hi:
            raise ScheduleError(f"{s!r} is not in {lo}-{hi}")
        return value

    out: set[int] = set()
    for part in text.split(","):
        span, _, step = part.partition("/")
        if span in ("*", "?"):
            first, last = lo, hi
        elif "-" in span:
            first, last = (number(s) for s in span.split("-", 1))
        else:
            first = last = number(span)
            if step:
                last = hi  # "5/15": from 5, every 15
        if (step and not step.isdigit()) or step == "0" or first > last:
            raise ScheduleError(f"bad range or step {part!r}")
        out.update(range(first, last + 1, int(step or 1)))
    return frozenset(out)


class Schedule:
    """A parsed cron line; `next_after(t)` is its first run strictly after ``t``."""

    def __init__(self, line: str) -> None:
        fields = _MACROS.get(line.strip(), line).split()
        if len(fields) != 5:
            raise ScheduleError(f"{line!r}: expected 5 fields (minute hour day-of-month month day-of-week)")
        try:
            self.minutes, self.hours, self.days, self.months, self.weekdays = (
                _field(f, i) for i, f in enumerate(fields))
        except ScheduleError as exc:
            raise ScheduleError(f"{line!r}: {exc}") from None
        self._any_day = fields[2][0] in "*?" or fields[4][0] in "*?"  # then both must match, else either

    def _day_ok(self, t: datetime) -> bool:
        dom, dow = t.day in self.days, (t.weekday() + 1) % 7 in self.weekdays
        return dom and dow if self._any_day else dom or dow

    def next_after(self, t: datetime) -> datetime:
        """The first run strictly after ``t`` (aware); `ScheduleError` if there is none within 5 years."""
        t = t.replace(second=0, microsecond=0) + timedelta(minutes=1)
        end = t + timedelta(days=5 * 366)
        while t < end:
            if t.month not in self.months:
                t = (t.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
            elif not self._day_ok(t):
                t = t.replace(hour=0, minute=0) + timedelta(days=1)
            elif t.hour not in self.hours:
                t = t.replace(minute=0) + timedelta(hours=1)
            elif t.minute not in self.minutes:
                later = [m for m in self.minutes if m > t.minute]
                t = t.replace(minute=min(later)) if later else t.replace(minute=0) + timedelta(hours=1)
            else:
                return t
        raise ScheduleError("the schedule never runs (e.g. February 30th)")
