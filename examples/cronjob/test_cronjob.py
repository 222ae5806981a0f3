"""The CronJob controller in virtual time: a week of an hourly schedule runs in about a second.

The test plays the kubelet (it marks each hour's Job finished: no Pod runs), and starts the `VirtualClock` at the real time now (its default): the API server stamps
``creationTimestamp`` with its own, real clock, and the schedule counts from it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio

from kubeloop import Client, Manager, TerminalError
from kubeloop.resources import crd, parse_time
from kubeloop.testing import VirtualClock, eventually, install_crd

from .controller import JOB, SCHEDULED_AT, CronJob, make_controller, runs
from .schedule import Schedule, ScheduleError

# parallelism 0: no Pod starts (there is no kubelet on the emulator); the test says how each Job ends
TEMPLATE = {"spec": {"parallelism": 0, "backoffLimit": 0, "template": {"spec": {
    "restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox:1.36", "command": ["true"]}]}}}}


@pytest_asyncio.fixture
async def clock(client: Client) -> VirtualClock:
    await install_crd(client, crd(CronJob))
    return VirtualClock()


@pytest_asyncio.fixture
async def manager(client: Client, clock: VirtualClock) -> AsyncIterator[Manager]:
    manager = Manager(client, clock=clock)
    manager.add(make_controller())
    async with manager:
        yield manager


async def create(client: Client, ns: str, **spec: Any) -> datetime:
    """A CronJob ``backup`` with an hourly schedule; returns its creationTimestamp."""
    cron = CronJob(metadata={"name": "backup", "namespace": ns},
                   spec={"schedule": "0 * * * *", "job_template": TEMPLATE, **spec})
    created = await client.create(cron.to_object())
    return parse_time(created["metadata"]["creationTimestamp"])


async def jobs(client: Client, ns: str) -> list[dict[str, Any]]:
    return [j for j in await client.list(JOB, namespace=ns) if j["metadata"]["name"].startswith("backup-")]


async def finish(client: Client, namespace: str, job: str, outcome: str = "Complete") -> None:
    """What the kubelet and the Job controller do when the Job's Pod exits (NotFound: no such Job)."""
    status = {"conditions": [{"type": outcome, "status": "True"}], "succeeded" if outcome == "Complete" else "failed": 1}
    await client.patch_status(JOB, job, {"status": status}, namespace=namespace)


def slots(after: datetime, until: datetime) -> list[datetime]:
    """The hourly runs in (after, until]."""
    out, t = [], Schedule("@hourly").next_after(after)
    while t <= until:
        out.append(t)
        t += timedelta(hours=1)
    return out


def name(slot: datetime) -> str:
    return f"backup-{int(slot.timestamp())}"


async def test_a_week_of_an_hourly_schedule(client: Client, namespace: str, clock: VirtualClock,
                                            manager: Manager) -> None:
    """Each hour's Job starts on the hour (`finish` gets NotFound otherwise) and no other (it would stay
    active); the history keeps the 3 newest successes and the newest failure."""
    created = await create(client, namespace, concurrency_policy="Forbid", successful_jobs_history_limit=3,
                           failed_jobs_history_limit=1)
    end = clock.wall() + timedelta(days=7)
    ran: list[tuple[str, str]] = []  # (Job, how it ended)

    def caught_up() -> bool:  # the CronJob's status shows the last Job, ended (read from the controller's cache)
        cron = manager.controllers[0].primary_store().get("backup", namespace)
        status = (cron or {}).get("status") or {}
        last = name(parse_time(status["lastScheduleTime"])) if status.get("lastScheduleTime") else None
        return cron is not None and last == (ran[-1][0] if ran else None) and not status.get("active")

    wall, cpu = time.perf_counter(), time.process_time()
    for hour in slots(clock.wall(), end):
        # time moves on once the controller has seen what the test wrote (watch events take real time)
        await eventually(caught_up, interval=0.001, what="the controller to see the Job end")
        await clock.run_until(hour, manager)
        if hour > created:  # the hour's Job runs and ends; every 24th fails
            outcome = "Failed" if len(ran) % 24 == 23 else "Complete"
            await finish(client, namespace, name(hour), outcome)
            ran.append((name(hour), outcome))
    await clock.run_until(end, manager)
    took, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"\na week of an hourly schedule: {len(ran)} Jobs in {took:.2f} s of wall time ({cpu:.2f} s of CPU, "
          "the emulator's included)")
    assert len(ran) >= 167

    kept = sorted([j for j, how in ran if how == "Complete"][-3:] + [j for j, how in ran if how == "Failed"][-1:])

    async def history_limited() -> bool:
        return sorted(j["metadata"]["name"] for j in await jobs(client, namespace)
                      if not j["metadata"].get("deletionTimestamp")) == kept

    await eventually(history_limited, what="the history limits")
    status = (await client.get(CronJob.resource(), "backup", namespace=namespace))["status"]
    assert name(parse_time(status["lastScheduleTime"])) == ran[-1][0]
    # not a speed target: about 1.4 s (printed above) on an idle machine, 4-6.5 s on 2 cores shared with
    # other busy processes. The bound only catches a wait in real time: a week is 604800 s, and even a
    # 0.1 s real wait per scheduled hour would add 17 s
    assert took < 20.0, f"a week of schedule took {took:.2f}s"


async def test_concurrency_policies(client: Client, namespace: str, clock: VirtualClock, manager: Manager) -> None:
    """Jobs that never finish: Allow piles them up, Forbid waits, Replace swaps the old one out."""
    for policy in ("Allow", "Forbid", "Replace"):
        cron = CronJob(metadata={"name": f"backup-{policy.lower()}", "namespace": namespace},
                       spec={"schedule": "@hourly", "job_template": TEMPLATE, "concurrency_policy": policy})
        await client.create(cron.to_object())
    await clock.run_for(timedelta(hours=3), manager)

    async def active(policy: str) -> list[str]:
        return sorted(j["metadata"]["name"] for j in await client.list(JOB, namespace=namespace)
                      if j["metadata"]["name"].startswith(f"backup-{policy}-")
                      and not j["metadata"].get("deletionTimestamp"))

    assert len(await active("allow")) == 3
    assert len(await active("forbid")) == 1

    async def replaced() -> bool:
        return len(await active("replace")) == 1
    await eventually(replaced, what="one Job under Replace")
    [job] = await active("replace")
    last_run = Schedule("@hourly").next_after(clock.wall() - timedelta(hours=1))
    assert job == f"backup-replace-{int(last_run.timestamp())}"  # the newest run's Job


async def test_suspend_and_starting_deadline(client: Client, namespace: str, clock: VirtualClock,
                                             manager: Manager) -> None:
    created = await create(client, namespace, suspend=True, starting_deadline_seconds=600)
    first = Schedule("@hourly").next_after(created)
    await clock.run_until(first + timedelta(hours=2, minutes=30), manager)
    assert await jobs(client, namespace) == []  # suspended: nothing runs
    # resumed at half past: the missed runs are older than the 10 minute deadline, so none starts now
    await client.patch(CronJob.resource(), "backup", {"spec": {"suspend": False}}, namespace=namespace)

    def resumed() -> bool:
        cron = manager.controllers[0].primary_store().get("backup", namespace)
        return cron is not None and cron["spec"]["suspend"] is False

    await eventually(resumed, what="the controller to see the change")
    await manager.idle()
    assert await jobs(client, namespace) == []
    await clock.run_until(first + timedelta(hours=3), manager)  # the next run is on time
    [job] = await jobs(client, namespace)
    assert parse_time(job["metadata"]["annotations"][SCHEDULED_AT]) == first + timedelta(hours=3)


# ---------------------------------------------------------------------- the cron line


@pytest.mark.parametrize(("line", "after", "expected"), [
    ("0 * * * *", "2026-01-01T10:30:00Z", "2026-01-01T11:00:00Z"),
    ("@hourly", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"),  # strictly after
    ("*/15 9-17 * * mon-fri", "2026-01-02T17:50:00Z", "2026-01-05T09:00:00Z"),  # Friday evening -> Monday
    ("30 2 1 * *", "2026-01-31T00:00:00Z", "2026-02-01T02:30:00Z"),
    ("0 0 29 feb *", "2026-01-01T00:00:00Z", "2028-02-29T00:00:00Z"),
    ("0 0 13 * 5", "2026-02-01T00:00:00Z", "2026-02-06T00:00:00Z"),  # both days restricted: either matches
    ("5/20 * * * ?", "2026-01-01T00:50:00Z", "2026-01-01T01:05:00Z"),
    ("@weekly", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"),
])
def test_schedule_next_after(line: str, after: str, expected: str) -> None:
    assert Schedule(line).next_after(parse_time(after)) == parse_time(expected)


@pytest.mark.parametrize("line", ["", "* * * *", "60 * * * *", "* * * * 7", "*/0 * * * *", "5-1 * * * *",
                                  "x * * * *", "0 0 30 feb *"])
def test_a_bad_schedule_is_a_clear_error(line: str) -> None:
    with pytest.raises(ScheduleError):
        Schedule(line).next_after(parse_time("2026-01-01T00:00:00Z"))


def test_a_bad_schedule_or_a_long_outage_is_not_retried() -> None:
    now = parse_time("2026-01-01T00:00:00Z")
    cron = CronJob(metadata={"name": "x", "creationTimestamp": "2025-01-01T00:00:00Z"},
                   spec={"schedule": "61 * * * *", "job_template": TEMPLATE})
    with pytest.raises(TerminalError, match="not in 0-59"):
        runs(cron, None, now)
    cron = cron.model_copy(update={"spec": cron.spec.model_copy(update={"schedule": "@hourly"})})
    with pytest.raises(TerminalError, match="missed runs"):  # a year of hours since the creation
        runs(cron, None, now)
